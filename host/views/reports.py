"""The revealed report, downloaded by its host in each format.
"""

from django.http import HttpResponse

from blindjudge.errors import NotFound
from host.views.common import for_host_session

# format in the URL -> (file name extension, content type)
REPORT_FORMATS = {
    "json": ("json", "application/json"),
    "csv": ("csv", "text/csv; charset=utf-8"),
    "anon": ("anon.json", "application/json"),
    "html": ("html", "text/html; charset=utf-8"),
}


@for_host_session
def report_download(request, session, fmt):
    if fmt not in REPORT_FORMATS:
        raise NotFound(f"no report format {fmt!r}")
    from reports.build import build_report  # noqa: PLC0415 - reports and numpy load only in a process that serves the host
    from reports.export import anonymise, to_csv, to_json  # noqa: PLC0415 - reports and numpy load only in a process that serves the host
    from reports.html import REPORT_CSP, to_html  # noqa: PLC0415 - reports and numpy load only in a process that serves the host

    report = build_report(session)  # Conflict (409) before the reveal
    if fmt == "csv":
        body = to_csv(report).encode("utf-8")
    elif fmt == "html":
        body = to_html(report).encode("utf-8")
    else:
        body = to_json(anonymise(report) if fmt == "anon" else report)
    extension, content_type = REPORT_FORMATS[fmt]
    response = HttpResponse(body, content_type=content_type)
    # Only the numeric id and a fixed extension: nothing from the run (its name is the host's
    # free text) reaches the header.
    # The HTML report opens in the browser (saving keeps the name); the others download.
    disposition = "inline" if fmt == "html" else "attachment"
    response["Content-Disposition"] = (
        f'{disposition}; filename="blindjudge-session-{int(session.pk)}-report.{extension}"'
    )
    if fmt == "html":
        # The page's own policy (its one style block by hash, nothing else), set before the
        # CSP middleware, which then leaves it alone.
        response["Content-Security-Policy"] = REPORT_CSP
        response["Referrer-Policy"] = "no-referrer"
    response["Cache-Control"] = "no-store"
    return response
