"""The revealed report, downloaded by its host in each format (reports/render.py).

Built off this process (reports/offprocess.py): a builder process makes the report and this view
passes its bytes on as they come, so numpy and scipy never load into a process that serves judges.
The guards come first, here: the host's own session (404), a format that exists (404), the reveal
(409); only then is a builder asked. A build that fails is an error page, never part of a file.
"""

from django.core.handlers.asgi import ASGIRequest
from django.http import StreamingHttpResponse

from blindjudge.errors import NotFound
from host.views.common import for_host_session
from reports.html import REPORT_CSP
from reports.offprocess import start_report
from reports.render import REPORT_FORMATS, require_revealed


@for_host_session
def report_download(request, session, fmt):
    if fmt not in REPORT_FORMATS:
        raise NotFound(f"no report format {fmt!r}")
    require_revealed(session)  # Conflict (409) before the reveal
    # Waits, in this request's thread, until the builder has the whole report (or refused).
    stream = start_report(session.pk, fmt)
    extension, content_type = REPORT_FORMATS[fmt]
    # Under ASGI (every server this project runs) the pipe is read by the event loop when it is
    # readable; Django's test client reads it synchronously.
    content = stream.async_chunks() if isinstance(request, ASGIRequest) else stream.chunks()
    response = StreamingHttpResponse(content, content_type=content_type)
    # The exact size: a download cut short (the builder died mid-report) is seen as incomplete.
    response["Content-Length"] = str(stream.size)
    # How long the builder took (wall and CPU, milliseconds): for the host's browser tools and
    # bench/report_download.py.
    response["Server-Timing"] = (f"build;dur={stream.build_s * 1000:.0f}, "
                                 f"build-cpu;dur={stream.build_cpu_s * 1000:.0f}")
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
