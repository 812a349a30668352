"""The host's report download from a real server process (Uvicorn, as ./bj start runs it): built
by a builder process beside it (reports/offprocess.py), streamed through it, the same bytes as
`manage.py export_report` writes, and numpy and scipy never loaded into the server.

Whether a library is loaded is read from the process's memory map (/proc/<pid>/maps): numpy and
scipy load compiled extension modules, which every import maps. The same check on the builder,
which does load them, is the positive control. A failing build is made real by a broken numeric
stack on the server's PYTHONPATH (tests/support/broken_numeric: a numpy and a scipy that refuse
to import): the server, which needs neither, serves on; the builder cannot start.
"""

import io
import re
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.core.management import call_command

from reports.html import REPORT_CSP
from reports.render import REPORT_FORMATS
from tests.reports.test_report import build_revealed
from tests.worlds import host_cookie

pytestmark = pytest.mark.django_db(transaction=True)

BROKEN_NUMERIC = Path(__file__).resolve().parents[1] / "support" / "broken_numeric"
GENERATED_AT = re.compile(rb'"generated_at": "[^"]*"')
ISO_TIME = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?")
ROUNDS = 3  # every format downloaded this many times before the server's memory map is read


def download(server, path: str, cookie: str):
    """(status, headers, body) of a GET with the host's cookie; errors are answers too."""
    # S310: the URL is our own server's http:// address.
    request = urllib.request.Request(server.url(path), headers={"Cookie": cookie})  # noqa: S310
    try:
        with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


def exported(session, fmt: str) -> bytes:
    """What `manage.py export_report SESSION --format FMT -o -` writes on standard output."""
    out = io.StringIO()
    call_command("export_report", str(session.pk), "--format", fmt, "-o", "-", stdout=out)
    return out.getvalue().encode("utf-8")


def same_report(downloaded: bytes, export: bytes, fmt: str) -> bool:
    """Byte for byte, but for the moment each build stamps on its report (generated_at)."""
    if fmt == "html":  # the page prints the stamp among the session's own times
        return ISO_TIME.sub(b"<time>", downloaded) == ISO_TIME.sub(b"<time>", export)
    stamp = GENERATED_AT.search(export)
    if stamp is None:  # the CSV carries no stamp: identical as they are
        return downloaded == export
    return GENERATED_AT.sub(lambda _: stamp.group(0), downloaded, count=1) == export


def mapped_libraries(pid: int) -> set[str]:
    """Which of numpy and scipy have files mapped into process `pid`."""
    maps = Path(f"/proc/{pid}/maps").read_text()
    return {name for name in ("numpy", "scipy") if re.search(rf"/{name}(\.libs)?/", maps)}


def builders_of(pid: int) -> list[int]:
    """The report builders process `pid` has started and not yet let go."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:  # a thread (or a child) may end while we read
            found += [int(child) for child in (task / "children").read_text().split()
                      if b"reports.worker" in Path(f"/proc/{child}/cmdline").read_bytes()]
        except FileNotFoundError:
            continue
    return found


def test_the_servers_download_is_export_reports_file_and_numpy_and_scipy_never_load_in_it(
        e2e_server, host):
    session, _ = build_revealed(host)
    cookie = host_cookie(host)
    path = f"/host/sessions/{session.pk}/report/"
    server_pid = e2e_server.process.pid
    assert mapped_libraries(server_pid) == set()

    for _ in range(ROUNDS):
        for fmt, (extension, content_type) in REPORT_FORMATS.items():
            status, headers, body = download(e2e_server, path + fmt, cookie)
            assert status == 200, body[:500]
            assert headers["Content-Type"] == content_type
            assert int(headers["Content-Length"]) == len(body)
            disposition = "inline" if fmt == "html" else "attachment"
            assert headers["Content-Disposition"] == (
                f'{disposition}; filename="blindjudge-session-{session.pk}-report.{extension}"')
            assert headers["Cache-Control"] == "no-store"
            if fmt == "html":
                assert headers["Content-Security-Policy"] == REPORT_CSP
                assert headers["Referrer-Policy"] == "no-referrer"
            assert same_report(body, exported(session, fmt), fmt), fmt

    # Twelve reports later, the server has loaded neither library; its builder (the positive
    # control: the check sees them where they are) has both, and is the one builder, reused.
    assert mapped_libraries(server_pid) == set()
    builders = builders_of(server_pid)
    assert len(builders) == 1
    assert mapped_libraries(builders[0]) == {"numpy", "scipy"}
    # A refusal comes from the guards, before any builder: another format, no reveal.
    status, headers, _ = download(e2e_server, path + "exe", cookie)
    assert status == 404 and "Content-Disposition" not in headers


@pytest.mark.server_env(PYTHONPATH=str(BROKEN_NUMERIC))
def test_a_build_that_fails_is_a_clear_error_and_no_file(e2e_server, host):
    session, _ = build_revealed(host)
    cookie = host_cookie(host)
    # The server itself serves on the broken numeric stack: it never imports it.
    assert download(e2e_server, "/host/", cookie)[0] == 200
    for fmt in ("json", "html"):
        started = time.monotonic()
        status, headers, body = download(e2e_server, f"/host/sessions/{session.pk}/report/{fmt}",
                                         cookie)
        assert time.monotonic() - started < 30
        assert status == 502
        assert "Content-Disposition" not in headers
        assert headers["Content-Type"].startswith("text/html")
        page = body.decode()
        assert "the report builder stopped before the report was built (exit status 1)" in page
        assert '"generated_at"' not in page and "Preregistration" not in page
    # The builder's own error is in the server's log, and no builder is left running.
    assert "broken_numeric: numpy refuses to import" in e2e_server.stderr() or \
        "broken_numeric: scipy refuses to import" in e2e_server.stderr()
    assert builders_of(e2e_server.process.pid) == []
    assert download(e2e_server, "/guest/", "")[0] == 200
