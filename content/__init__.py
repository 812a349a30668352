"""The content pipeline, with no Django: what a bundle is, how text is normalised, blinded and
rendered, canonical form and hashes, the draws, commitments, decision rules and truth vocabulary.

Everything here is a pure function of its inputs, so it is tested without a database and can be
imported by any layer; it imports nothing of Django or of the project's apps (an import-linter
contract in pyproject.toml holds it to that).
"""
