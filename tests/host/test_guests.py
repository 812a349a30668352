"""Guests (issue 12, items 12 and 13; docs/threats.md case 40): successful joins limited per
client address in the store every server process shares, a default cap on new sessions shown on
the guests page, and removing a guest offers to rotate the code in the same step.

Over HTTP, as browsers send it: each join from a fresh browser, the address as the server sees it.
"""

import html
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.urls import reverse

from accounts.enums import AdmittedAs, JudgeStatus
from accounts.models import Judge
from judging.services import GUEST_JOINS_REFUSAL, guest_join, guests_configure, session_create
from tests.worlds import a_session, client_as, invite_and_join

ROOT = Path(__file__).resolve().parents[2]  # the repository
ONCE_VALUE = re.compile(r'id="once-value"[^>]*value="([^"]+)"')


def url(name, **kwargs):
    return reverse(f"host:{name}", kwargs=kwargs)


@pytest.fixture
def alice(host):
    return client_as(host)


def join(code: str, address: str, name: str = "Walk-in"):
    """A fresh browser at `address` joining on the guest page."""
    return Client(REMOTE_ADDR=address).post("/guest/", {"code": code, "name": name})


def allow_guests(session) -> str:
    return guests_configure(session=session, actor="test", allow=True).guest_code


# --- Item 12: joins per address -------------------------------------------------------------------

@pytest.mark.django_db
def test_many_guest_joins_from_one_address_get_a_clear_refusal_after_the_limit(settings, run):
    """One client created 200 guest judges in 21 s; now 30 an hour from one address (default)."""
    assert settings.BLINDJUDGE_GUEST_JOINS == 30
    session = a_session(run, "open", guest_cap=None)
    code = allow_guests(session)
    for i in range(30):
        assert join(code, "203.0.113.5", f"Guest {i}").status_code == 302, i
    refused = join(code, "203.0.113.5", "One too many")
    assert refused.status_code == 429
    assert html.unescape(refused.content.decode()).count(
        GUEST_JOINS_REFUSAL.format(minutes=60)) == 1
    # It says nothing about the code: a wrong one gets the same answer from that address.
    assert join("AAAA-AAAA-AAAA-A", "203.0.113.5").status_code == 429
    assert Judge.objects.filter(session=session, admitted_as=AdmittedAs.GUEST).count() == 30
    # Another address still joins; the limit counts every session together.
    assert join(code, "203.0.113.6", "Neighbour").status_code == 302
    other = a_session(run, "open")
    assert join(allow_guests(other), "203.0.113.5").status_code == 429


JOINS_ELSEWHERE = """
from judging.services import guest_join
for i in range(3):
    guest_join(code={code!r}, display_name=f"Guest {{i}}", client_address="203.0.113.9")
print("done")
"""


@pytest.mark.django_db(transaction=True)
def test_joins_made_through_another_server_process_count_here(settings, open_session):
    settings.BLINDJUDGE_GUEST_JOINS = 3
    code = allow_guests(open_session)
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "blindjudge.settings_test",
           "BLINDJUDGE_TEST_DATABASE_NAME": connection.settings_dict["NAME"],
           "BLINDJUDGE_GUEST_JOINS": "3"}
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", JOINS_ELSEWHERE.format(code=code)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("done")
    assert join(code, "203.0.113.9").status_code == 429
    assert join(code, "203.0.113.10").status_code == 302


# --- Item 12: the default cap ---------------------------------------------------------------------

@pytest.mark.django_db
def test_new_sessions_get_a_default_guest_cap_shown_on_the_guests_page(alice, run, settings):
    assert settings.BLINDJUDGE_DEFAULT_GUEST_CAP == 50
    form = alice.get(url("run", run_id=run.pk)).content.decode()
    assert re.search(r'name="guest_cap" value="50"', form)
    created = alice.post(url("session_create", run_id=run.pk), {
        "kind": "copies", "reviewer_display": "letters", "guests_allowed": "on",
        "guest_cap": "50"}, follow=True)
    session = created.context["session"]
    assert session.guest_cap == 50
    # The services and the command line start from the same default; None is asked for.
    assert session_create(run=run, kind="copies", actor="test").session.guest_cap == 50
    assert session_create(run=run, kind="copies", actor="test",
                          guest_cap=None).session.guest_cap is None
    page = html.unescape(alice.get(url("guests", session_id=session.pk)).content.decode())
    assert "at most 50 guests (new sessions start at 50)" in page
    assert "0 of at most 50" in page
    assert ("at most 30 guests join from one network address in an hour (across all sessions)"
            in page)
    settings.BLINDJUDGE_DEFAULT_GUEST_CAP = 0
    assert session_create(run=run, kind="copies", actor="test").session.guest_cap is None


@pytest.mark.django_db
def test_the_cap_refuses_the_guest_past_it(run, settings):
    settings.BLINDJUDGE_DEFAULT_GUEST_CAP = 2
    session = a_session(run, "open")
    code = allow_guests(session)
    assert [join(code, f"198.51.100.{i}").status_code for i in range(3)] == [302, 302, 403]


# --- Item 13: removing a guest --------------------------------------------------------------------

@pytest.mark.django_db
def test_removing_a_guest_says_they_can_join_again_and_rotates_the_code_in_one_click(
        alice, open_session):
    code = allow_guests(open_session)
    guest = guest_join(code=code, display_name="Unwanted", client_address="192.0.2.50").judge
    path = url("judge_remove", session_id=open_session.pk, number=guest.number)
    page = html.unescape(alice.get(path).content.decode())
    assert (f"{guest.pseudonym} joined with the guest code. Unless you rotate it, they can join "
            "again with it at once, as a new guest.") in page
    assert 'name="rotate" value="yes">Remove and rotate the guest code</button>' in page
    assert "Remove only, keep the guest code</button>" in page

    removed = alice.post(path, {"confirm": "on", "rotate": "yes"})
    assert removed.status_code == 303
    assert removed["Location"] == url("guests", session_id=open_session.pk)
    shown = alice.get(removed["Location"])
    new_code = html.unescape(ONCE_VALUE.search(shown.content.decode()).group(1))
    assert "the guest code rotated: the old code stopped working" in shown.content.decode()
    guest.refresh_from_db()
    assert guest.status == JudgeStatus.REMOVED
    assert join(code, "192.0.2.50", "Unwanted again").status_code == 403  # the old code is dead
    assert join(new_code, "192.0.2.51", "Wanted").status_code == 302


@pytest.mark.django_db
def test_removing_a_guest_without_rotating_leaves_the_code_working_as_the_page_says(
        alice, open_session):
    code = allow_guests(open_session)
    guest = guest_join(code=code, display_name="Unwanted", client_address="192.0.2.60").judge
    path = url("judge_remove", session_id=open_session.pk, number=guest.number)
    assert alice.post(path, {"confirm": "on"})["Location"] == url("judges",
                                                                    session_id=open_session.pk)
    assert join(code, "192.0.2.60", "Unwanted again").status_code == 302  # as the page warned


@pytest.mark.django_db
def test_removing_a_guest_when_guests_are_no_longer_allowed_says_no_code_works(
        alice, open_session):
    code = allow_guests(open_session)
    guest = guest_join(code=code, display_name="Unwanted", client_address="192.0.2.70").judge
    guests_configure(session=open_session, actor="test", allow=False)
    page = html.unescape(alice.get(url("judge_remove", session_id=open_session.pk,
                                       number=guest.number)).content.decode())
    assert "Guests are not allowed now, so no code works" in page
    assert 'name="rotate"' not in page


@pytest.mark.django_db
def test_removing_an_invited_judge_offers_no_rotation(alice, open_session):
    judge = invite_and_join(open_session).judge
    page = alice.get(url("judge_remove", session_id=open_session.pk,
                         number=judge.number)).content.decode()
    assert 'name="rotate"' not in page and "guest code" not in page


def judge_command(*args) -> dict:
    out = io.StringIO()
    call_command("judge", *args, "--json", stdout=out, stderr=io.StringIO())
    return json.loads(out.getvalue())


@pytest.mark.django_db
def test_the_command_line_says_so_too_and_rotates_in_the_same_step(open_session):
    code = allow_guests(open_session)
    first = guest_join(code=code, display_name="One", client_address="192.0.2.80").judge
    second = guest_join(code=code, display_name="Two", client_address="192.0.2.81").judge
    sid = str(open_session.pk)
    kept = judge_command(sid, first.pseudonym, "--remove")
    assert kept["note"].startswith(f"{first.pseudonym} joined with the guest code, which still "
                                   "admits them")
    rotated = judge_command(sid, second.pseudonym, "--remove", "--rotate-guest-code")
    assert rotated["status"] == "removed" and rotated["guest_code"] != code
    assert join(code, "192.0.2.82").status_code == 403
    assert join(rotated["guest_code"], "192.0.2.83").status_code == 302
