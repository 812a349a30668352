"""The revealed report, downloaded by its host in each format (reports/render.py)."""

from django.http import HttpResponse

from blindjudge.errors import NotFound
from host.views.common import for_host_session
from reports.html import REPORT_CSP
from reports.render import REPORT_FORMATS, render_report


@for_host_session
def report_download(request, session, fmt):
    if fmt not in REPORT_FORMATS:
        raise NotFound(f"no report format {fmt!r}")
    from reports.build import build_report  # noqa: PLC0415 - numpy loads only in a process that serves the host

    body = render_report(build_report(session), fmt)  # Conflict (409) before the reveal
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
