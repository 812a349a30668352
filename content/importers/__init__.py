"""Importers: evaluation output as hosts have it (SWE-bench, inspect-ai, JSONL/CSV tables) turned
into a `blindjudge.run/2` bundle. Pure: no Django, no database, no network.

Each importer reads named byte strings (`Source`), checks everything it reads before returning,
and either returns an `Imported` (the bundle as a dict, ready for `json.dumps` and the bundle
validator, and a summary) or raises `ConversionError` listing every problem as
`file:line: field: message`. The product then validates the bundle whole (content/bundle.py)
and imports it (judging.services.run_import), so an importer never writes anything.
`conversion.py` takes a host's request (format, files, options) to the right importer; the
product runs it in a child process (judging/importing.py).
"""
