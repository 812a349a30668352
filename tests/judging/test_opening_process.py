"""Opening outside the serving process, with a deadline per text and the host shown progress
(issue 25 item 1 and "Also"): the host's Open button starts a process of its own
(judging/opening.py) and answers at once; the session page follows the rendering; a refusal or a
killed process is said on the page, and opening again works; every text's rendering has a
deadline past which it is shown as plain text, and the deadline stops even a regular expression
that backtracks (shown on one before its silence counts)."""

import os
import re
import signal
import threading
import time

import pytest
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone

from judging import renders
from judging.enums import SessionState
from judging.models import CopyRender, SessionRender
from judging.services import session_open
from tests.worlds import (
    a_host,
    a_run,
    a_session,
    client_as,
    make_bundle,
    opened_from_page,
    opening_children,
)


def overview(session) -> str:
    return reverse("host:session", kwargs={"session_id": session.pk})


def open_url(session) -> str:
    return reverse("host:session_open", kwargs={"session_id": session.pk})


def progress_url(session) -> str:
    return reverse("host:session_opening", kwargs={"session_id": session.pk})


# --- The deadline ---------------------------------------------------------------------------------

def test_the_deadline_stops_a_backtracking_regular_expression_and_puts_back_the_timer_it_found():
    """The detector first: `re` backtracking on 2^40 paths never returns by itself, and the
    deadline interrupts it. Then an enclosing timer (as a test runner's) still fires after."""
    fired = []
    previous = signal.signal(signal.SIGALRM, lambda *_: fired.append(True))
    try:
        signal.setitimer(signal.ITIMER_REAL, 5.0)
        started = time.monotonic()
        with pytest.raises(renders.RenderDeadline, match="took longer than 0.2 s"):
            with renders.deadline(0.2):
                re.match(r"(a+)+$", "a" * 40 + "b")
        assert time.monotonic() - started < 4
        remaining, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 0 < remaining <= 5.0  # the enclosing timer runs on
        with renders.deadline(0.2):
            pass  # a block within its deadline raises nothing
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert signal.getsignal(signal.SIGALRM) is previous and not fired


def test_outside_the_main_thread_there_is_no_deadline_rather_than_an_error():
    outcome = []

    def render():
        with renders.deadline(0.01):
            time.sleep(0.05)
        outcome.append("rendered")

    thread = threading.Thread(target=render)
    thread.start()
    thread.join()
    assert outcome == ["rendered"]


@pytest.mark.django_db
def test_a_copy_past_its_deadline_is_opened_as_plain_text_with_a_note_and_the_rest_as_usual(host):
    bundle = make_bundle()
    bundle["copies"][0]["format"] = "markdown"
    bundle["copies"][0]["content"] = "# Heading\n\n```python\ndef add(a, b):\n    return a + b\n```\n"
    session = a_session(a_run(host, bundle), "draft")
    with override_settings(BLINDJUDGE_RENDER_SECONDS=1e-6):  # every text is past its deadline
        opened = session_open(session=session, actor="test")
    assert opened.state == SessionState.OPEN
    frames = {r.copy.bundle_id: r.frame for r in CopyRender.objects.filter(session=session)}
    slow = frames[bundle["copies"][0]["id"]]
    assert renders.TOO_SLOW_NOTE in slow
    assert "<h1>" not in slow.split("</h1>", 1)[1]  # the heading is a row of text, not rendered
    assert "# Heading" in slow and "def add(a, b):" in slow
    # With the default deadline the same copy is rendered as markdown.
    again = a_session(a_run(host, bundle), "draft")
    session_open(session=again, actor="test")
    rendered = CopyRender.objects.get(session=again, copy__bundle_id=bundle["copies"][0]["id"]).frame
    assert renders.TOO_SLOW_NOTE not in rendered and "Heading</h1>" in rendered


# --- From the host's page -------------------------------------------------------------------------

def a_large_draft(host, copies=40):
    bundle = make_bundle(copies=[
        {"id": f"c{n}", "builder": f"b{1 + n % 2}", "format": "text",
         "content": f"def add(a, b):\n    return a + b  # {n}\n" * 200, "truth": "known_good"}
        for n in range(copies)], reviews=[], findings=[])
    return a_session(a_run(host, bundle), "draft")


def test_the_open_button_answers_at_once_and_the_page_follows_the_opening_to_its_end(
        opening_processes, host):
    session = a_large_draft(host)
    browser = client_as(host)
    response = browser.post(open_url(session))
    assert response.status_code == 303 and response["Location"] == overview(session)
    # The request has returned, the opening's process has not got past starting Python yet:
    # the draft is claimed, and the page shows the rendering, not the Open button.
    assert opening_children()
    follow = browser.get(overview(session)).content.decode()
    assert "Opening session" in follow and 'id="opening"' in follow
    assert "host/opening." in follow  # the script that follows it
    assert "Open the session…" not in follow
    status = browser.get(progress_url(session))
    assert status.status_code == 200 and status["Cache-Control"] == "no-store"
    assert status.json()["running"] is True and status.json()["state"] == SessionState.DRAFT

    assert opened_from_page(session).state == SessionState.OPEN
    claim = SessionRender.objects.get(session=session)
    assert claim.to_render == 40 + 1 and claim.rendered == claim.to_render  # copies + the task
    assert claim.failure == "" and claim.opener == ""
    assert browser.get(progress_url(session)).json() == {
        "state": "open", "running": False, "stalled": False, "rendered": 0, "to_render": 0,
        "failure": ""}
    page = browser.get(overview(session)).content.decode()
    assert 'id="opening"' not in page and "Next: invite the judges" in page
    # The progress is the host's own: another host gets the same 404 as for no session.
    other = client_as(a_host("mallory"))
    assert other.get(progress_url(session)).status_code == 404
    assert browser.post(progress_url(session)).status_code == 405


def test_an_opening_process_killed_midway_is_said_on_the_page_and_opening_again_works(
        opening_processes, host):
    session = a_large_draft(host)
    browser = client_as(host)
    browser.post(open_url(session))
    [child] = opening_children()
    os.kill(child, signal.SIGKILL)
    assert opened_from_page(session).state == SessionState.DRAFT
    claim = SessionRender.objects.get(session=session)
    assert claim.opener == "" and f"status -{signal.SIGKILL}" in claim.failure
    page = browser.get(overview(session)).content.decode()
    assert 'id="opening-failure"' in page and "The last opening did not finish" in page
    assert "Open the session…" in page
    assert browser.get(progress_url(session)).json()["failure"] == claim.failure

    browser.post(open_url(session))
    assert opened_from_page(session).state == SessionState.OPEN
    assert SessionRender.objects.get(session=session).failure == ""


def test_a_second_opening_is_refused_at_once_and_a_refusal_found_by_the_process_is_on_the_page(
        opening_processes, host):
    """The page's claim refuses a second opening while the process runs. The process checks
    again what the page checked (the draft may change in between): here a pattern RE2 cannot run
    (one stored before RE2 ran them) reaches the draft, so the process is refused, and says why."""
    session = a_large_draft(host, copies=4)
    browser = client_as(host)
    browser.post(open_url(session))
    [child] = opening_children()
    os.kill(child, signal.SIGSTOP)  # held before it renders anything
    try:
        second = browser.post(open_url(session))
        assert second.status_code == 409 and "being opened already" in second.content.decode()
        type(session).objects.filter(pk=session.pk).update(redaction_patterns=["re:Ze(?=ta)"])
    finally:
        os.kill(child, signal.SIGCONT)
    assert opened_from_page(session).state == SessionState.DRAFT
    failure = SessionRender.objects.get(session=session).failure
    assert failure.startswith("cannot open: ") and "Withdraw that pattern" in failure
    page = browser.get(overview(session)).content.decode()
    assert "The last opening did not finish: cannot open: " in page


def test_an_opening_whose_process_left_no_word_is_said_stopped_once_its_lease_runs_out(host, db):
    session = a_session(a_run(host, make_bundle()), "draft")
    SessionRender.objects.create(session=session, opener="f" * 32, rendered=3, to_render=9,
                                 opener_seen_at=timezone.now() - timezone.timedelta(minutes=6))
    browser = client_as(host)
    progress = browser.get(progress_url(session)).json()
    assert progress["running"] is False and progress["stalled"] is True
    page = browser.get(overview(session)).content.decode()
    assert "The last opening stopped" in page and "Open the session…" in page
    SessionRender.objects.filter(session=session).update(opener_seen_at=timezone.now())
    assert browser.get(progress_url(session)).json()["running"] is True
    page = browser.get(overview(session)).content.decode()
    assert "3 of 9 texts rendered" in page and "Open the session…" not in page
