"""The report builder process (reports/worker.py) and the download's side of it (reports/offprocess.py),
with real processes: the builder's protocol, a builder stalled past the timeout, a builder killed
mid-report, reuse, the idle limit and the limit on builders at once.

The downloads go through Django's test client (the synchronous reading of the pipe); the server's
asynchronous reading is what tests/e2e/test_report_download_server.py exercises. Each test is
transactional (`report_builders`): the builder reads the database from its own process."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.test import override_settings
from django.urls import reverse

from reports.build import build_report
from reports.offprocess import ReportFailed
from reports.render import render_report
from tests.worlds import (
    a_run,
    a_session,
    advance,
    answer_all,
    children_running,
    client_as,
    invite_and_join,
    make_bundle,
)

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
GENERATED_AT = re.compile(rb'"generated_at": "[^"]*"')
LONG_REASON = "The function returns the wrong value for negative inputs. " * 320  # ~19 KB


def revealed(host, **bundle):
    session = a_session(a_run(host, make_bundle(**bundle)), "open")
    answer_all(invite_and_join(session).judge, 1, "fail", lock=True)
    return advance(session, "revealed")


def report_url(session, fmt="json"):
    return reverse("host:report", kwargs={"session_id": session.pk, "fmt": fmt})


def unstamped(body: bytes) -> bytes:
    return GENERATED_AT.sub(b'"generated_at": "-"', body)


def builder_pids() -> list[int]:
    """The report builders this (test) process has started and not yet let go."""
    return children_running("reports.worker")


def gone(pid: int, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if pid not in builder_pids():
            return True
        time.sleep(0.05)
    return False


def test_the_builder_answers_requests_in_turn_and_refuses_with_a_status(host, report_builders):
    done = revealed(host)
    still_open = a_session(a_run(host), "open")
    builder = subprocess.Popen(
        [sys.executable, "-m", "reports.worker", "--idle", "30"], cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": settings.SETTINGS_MODULE},
        stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def ask(request) -> tuple[dict, bytes]:
        builder.stdin.write(json.dumps(request).encode() + b"\n")
        builder.stdin.flush()
        header = json.loads(builder.stdout.readline())
        return header, builder.stdout.read(header.get("bytes", 0))

    try:
        header, body = ask({"session": done.pk, "format": "json"})
        assert header["ok"] is True and header["bytes"] == len(body) and header["build_s"] > 0
        assert unstamped(body) == unstamped(render_report(build_report(done), "json"))
        header, body = ask({"session": done.pk, "format": "csv"})
        assert body == render_report(build_report(done), "csv")
        assert ask({"session": still_open.pk, "format": "json"}) == ({
            "ok": False, "status": 409, "code": "conflict",
            "message": f"session {still_open.pk} is open; the report exists after the reveal"}, b"")
        assert ask({"session": 987654, "format": "json"})[0]["status"] == 404
        for malformed in ({"session": done.pk, "format": "exe"}, {"session": str(done.pk)}, []):
            assert ask(malformed)[0] == {"ok": False, "status": 400, "code": "invalid",
                                         "message": "the report builder got a malformed request"}
        builder.stdin.write(b"not json\n")
        builder.stdin.flush()
        assert json.loads(builder.stdout.readline())["status"] == 400
        # Its input closed, the builder exits at once.
        builder.stdin.close()
        assert builder.wait(timeout=30) == 0
    finally:
        if builder.poll() is None:
            builder.kill()
            builder.wait()
    # Left idle, a builder exits by itself.
    idle = subprocess.Popen([sys.executable, "-m", "reports.worker", "--idle", "0.5"], cwd=ROOT,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert idle.wait(timeout=60) == 0
    idle.stdin.close()
    idle.stdout.close()


def test_a_builder_is_reused_and_an_idle_limit_of_zero_starts_one_per_report(host, report_builders):
    session = revealed(host)
    alice = client_as(host)
    first = alice.get(report_url(session)).getvalue()
    (reused,) = builder_pids()
    assert unstamped(alice.get(report_url(session)).getvalue()) == unstamped(first)
    assert builder_pids() == [reused]
    with override_settings(BLINDJUDGE_REPORT_BUILDER_IDLE=0):
        response = alice.get(report_url(session, "csv"))
        assert response.status_code == 200
        assert gone(reused)  # the pooled builder was let go, not reused
        (fresh,) = builder_pids()
        response.getvalue()
        assert gone(fresh)  # and the fresh one went at the report's last byte


def test_a_builder_stalled_past_the_timeout_is_stopped_and_the_next_download_starts_another(
        host, report_builders):
    session = revealed(host)
    alice = client_as(host)
    expected = unstamped(alice.get(report_url(session)).getvalue())
    (stalled,) = builder_pids()
    os.kill(stalled, signal.SIGSTOP)
    with override_settings(BLINDJUDGE_REPORT_BUILD_TIMEOUT=1):
        started = time.monotonic()
        response = alice.get(report_url(session))
        assert time.monotonic() - started < 10
    assert response.status_code == 504
    assert "took longer than 1 s to build and was stopped" in response.content.decode()
    assert "Content-Disposition" not in response
    assert gone(stalled)  # killed, stopped or not
    response = alice.get(report_url(session))
    assert response.status_code == 200 and unstamped(response.getvalue()) == expected


def test_a_builder_killed_mid_report_ends_the_download_with_an_error_never_a_short_file(
        host, report_builders):
    session = revealed(host, reviews=[
        {"reviewer": reviewer, "copy": copy, "verdict": "fail", "reason": LONG_REASON}
        for reviewer in ("r1", "r2") for copy in ("c1", "c2", "c3", "c4", "c5", "c6")])
    alice = client_as(host)
    response = alice.get(report_url(session))
    size = int(response["Content-Length"])
    assert size > 4 * 64 * 1024  # well past what the pipe holds
    chunks = iter(response.streaming_content)
    received = len(next(chunks))
    (builder,) = builder_pids()
    os.kill(builder, signal.SIGKILL)
    with pytest.raises(ReportFailed, match="the report builder stopped mid-report"):
        for chunk in chunks:
            received += len(chunk)
    assert received < size
    assert gone(builder)
    # The next download gets a new builder and the whole report.
    response = alice.get(report_url(session))
    assert len(response.getvalue()) == int(response["Content-Length"]) == size


@override_settings(BLINDJUDGE_REPORT_BUILDERS=1, BLINDJUDGE_REPORT_BUILD_TIMEOUT=1)
def test_with_every_builder_busy_a_download_waits_then_is_told_so(host, report_builders):
    session = revealed(host)
    alice = client_as(host)
    with override_settings(BLINDJUDGE_REPORT_BUILD_TIMEOUT=60):
        holding = alice.get(report_url(session))  # its builder is busy until it is read
    waited = alice.get(report_url(session, "csv"))
    assert waited.status_code == 503
    assert "every report builder stayed busy" in waited.content.decode()
    holding.getvalue()
    with override_settings(BLINDJUDGE_REPORT_BUILD_TIMEOUT=60):
        response = alice.get(report_url(session, "csv"))
    assert response.status_code == 200 and response.getvalue()
    assert len(builder_pids()) == 1


@override_settings(BLINDJUDGE_REPORT_BUILDER_PRESTART=True)
def test_a_revealed_sessions_page_starts_the_builder_its_download_then_uses(host, report_builders):
    session = revealed(host)
    alice = client_as(host)
    page = reverse("host:session", kwargs={"session_id": session.pk})
    assert alice.get(page).status_code == 200
    (started,) = builder_pids()
    assert alice.get(page).status_code == 200  # one is idle: no second
    response = alice.get(report_url(session))
    assert response.status_code == 200 and json.loads(response.getvalue())["session"]["id"] == session.pk
    assert builder_pids() == [started]
    # Before the reveal the page starts none.
    report_builders.stop_all()
    assert gone(started)
    still_open = a_session(a_run(host), "open")
    assert alice.get(reverse("host:session", kwargs={"session_id": still_open.pk})).status_code == 200
    assert builder_pids() == []
