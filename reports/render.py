"""A built report in each of its file forms, for the host's download and the export_report command.

`REPORT_FORMATS` is the one table of formats (the name in the download URL and the command's
--format -> the file name's extension and the content type to serve it with); `render_report`
makes a format's bytes. The forms themselves are made in reports/export.py (JSON, CSV, JSON Lines,
the anonymised report) and reports/html.py (the standalone page, whose REPORT_CSP the download sends
as a header). `require_revealed` is the one check that a report may exist. Nothing here builds a
report or imports numpy, so a view module may import this at start-up.
"""

from blindjudge.errors import Conflict
from judging.enums import SessionState
from reports.export import anonymise, to_csv, to_flags_csv, to_json, to_jsonl
from reports.html import to_html

# format -> (file name extension, content type); the host's session page offers them in this order
REPORT_FORMATS = {
    "json": ("json", "application/json"),
    "csv": ("csv", "text/csv; charset=utf-8"),
    "jsonl": ("jsonl", "application/jsonl"),
    "anon": ("anon.json", "application/json"),
    "anon-jsonl": ("anon.jsonl", "application/jsonl"),
    "html": ("html", "text/html; charset=utf-8"),
    "flags": ("flags.csv", "text/csv; charset=utf-8"),
}


def require_revealed(session):
    """Conflict (409) unless the session is revealed: its report exists after the reveal only."""
    if session.state != SessionState.REVEALED:
        raise Conflict(f"session {session.pk} is {session.state}; the report exists after the reveal")


def render_report(report: dict, fmt: str) -> bytes:
    """The report (reports.build.build_report) as the bytes of format `fmt`, UTF-8 text.

    anon is the JSON of reports.export.anonymise(report), anon-jsonl its JSON Lines: judges known
    by pseudonym only; flags the task flags' CSV (pseudonyms only).
    Raises ValueError for a format not in REPORT_FORMATS."""
    if fmt == "json":
        return to_json(report)
    if fmt == "anon":
        return to_json(anonymise(report))
    if fmt == "csv":
        return to_csv(report).encode("utf-8")
    if fmt == "jsonl":
        return to_jsonl(report)
    if fmt == "anon-jsonl":
        return to_jsonl(anonymise(report))
    if fmt == "html":
        return to_html(report).encode("utf-8")
    if fmt == "flags":
        return to_flags_csv(report).encode("utf-8")
    raise ValueError(f"no report format {fmt!r}")
