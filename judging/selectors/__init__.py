"""Reads, by who may see them: `host` (a host's own runs and sessions), `judge` (what a judge may
see, and nothing else) and `live` (the host's dashboard rows).

Nothing is re-exported here, so that importing a judge selector never loads the host's: a
judge-facing module imports `judging.selectors.judge` and no other (an import-linter contract in
pyproject.toml holds it to that).
"""
