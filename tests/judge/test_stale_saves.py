"""A save names the phase its page was rendered for; a save for a phase the judge has locked since is
refused (issue 12 item 4; docs/threats.md case 36). A save's time has a ceiling. A save that fails
on the server answers the autosave in JSON (issue 12, "Also").

Over HTTP, through the real views, service and database. The two-tab and in-flight cases in a
real browser are in tests/e2e/test_stale_saves_in_chromium.py.
"""

import re

import pytest
from django.db import connection
from django.test import Client

from accounts.models import Judge
from blindjudge.errors import CSRF_MESSAGE, SERVER_ERROR_MESSAGE
from judging.models import Verdict
from judging.services.verdicts import (
    LOCK_PHASE_MISSING,
    MAX_SECONDS_SPENT,
    PHASE_1_LOCKED,
    PHASE_MISSING,
)
from tests.worlds import answer_all, client_as, codes, invite_and_join, is_saved_reply

JSON = {"HTTP_ACCEPT": "application/json"}


@pytest.fixture
def judge(open_session):
    return invite_and_join(open_session, "Ada").judge


def item_url(judge, code):
    return f"/s/{judge.session.url_id}/i/{code}/"


def rendered_phase(response) -> str:
    found = re.search(rb'<input type="hidden" name="phase" value="([^"]*)">', response.content)
    return found.group(1).decode()


def lock_form(response) -> dict:
    """What the review page's lock form sends: its hidden fields and its button."""
    form = re.search(rb'<form method="post">(.*?)</form>', response.content, re.S).group(1)
    fields = dict(re.findall(rb'<input type="hidden" name="([^"]+)" value="([^"]*)">', form))
    fields.update(re.findall(rb'<button type="submit" name="([^"]+)" value="([^"]*)"', form))
    return {name.decode(): value.decode() for name, value in fields.items()}


def verdict_rows(judge):
    return list(Verdict.objects.filter(assignment__judge=judge).order_by("pk").values())


@pytest.mark.django_db
def test_a_phase_1_save_after_the_phase_1_lock_is_refused_and_no_phase_2_verdict_is_made(judge):
    browser = client_as(judge)
    code = codes(judge)[0]
    # The stale tab: its page was rendered in phase 1, and says so.
    stale_page = browser.get(item_url(judge, code))
    assert rendered_phase(stale_page) == "1"
    answer_all(judge, 1, "pass", lock=True)  # another tab answers everything and locks phase 1
    before = verdict_rows(judge)

    form = browser.post(item_url(judge, code), {"verdict": "fail", "phase": "1", "reason": "stale",
                                                "seconds_spent": "30", "go": "next"})
    autosave = browser.post(item_url(judge, code), {"verdict": "fail", "phase": "1", "go": "stay"},
                            **JSON)

    # Refused with what happened; the form's answer is the item as it is now, in phase 2, with
    # nothing of the stale form carried over.
    assert form.status_code == 409
    assert PHASE_1_LOCKED.encode() in form.content
    assert rendered_phase(form) == "2" and b"Your phase-2 verdict" in form.content
    assert b"stale" not in form.content
    assert autosave.status_code == 409
    assert autosave.json() == {"saved": False, "error": "conflict", "message": PHASE_1_LOCKED}
    assert verdict_rows(judge) == before
    assert not Verdict.objects.filter(assignment__judge=judge, phase=2).exists()
    assert Judge.objects.get(pk=judge.pk).phase2_answered == 0
    # The page as it is now saves a phase-2 verdict.
    assert rendered_phase(browser.get(item_url(judge, code))) == "2"
    saved = browser.post(item_url(judge, code), {"verdict": "fail", "phase": "2", "go": "stay"}, **JSON)
    assert is_saved_reply(saved.json())
    assert Verdict.objects.get(assignment__judge=judge, phase=2).value == "fail"


@pytest.mark.django_db
def test_a_review_page_left_open_in_phase_1_locks_nothing_in_phase_2(judge):
    # Issue 25 low 5: the review form said `confirm=yes` only, and the view locked whatever phase
    # the judge was in, so a stale phase-1 review tab locked phase 2.
    browser = client_as(judge)
    review_url = f"/s/{judge.session.url_id}/lock/"
    answer_all(judge, 1, "pass")
    stale = lock_form(browser.get(review_url))
    assert stale["phase"] == "1" and stale["confirm"] == "yes"
    # Another tab locks phase 1, and the judge answers every item of phase 2 there.
    other_tab = client_as(judge)
    assert other_tab.post(review_url, lock_form(other_tab.get(review_url))).status_code == 302
    fresh = Judge.objects.get(pk=judge.pk)
    answer_all(fresh, 2, "fail")
    before = verdict_rows(judge)

    refused = browser.post(review_url, stale)  # the stale tab's button
    assert refused.status_code == 409
    assert b"phase 1 is already locked" in refused.content
    fresh.refresh_from_db()
    assert fresh.phase1_locked_at is not None and fresh.phase2_locked_at is None
    assert verdict_rows(judge) == before
    assert not Verdict.objects.filter(assignment__judge=judge, phase=2, locked=True).exists()
    # A lock that names no phase (or one it cannot read) locks nothing either.
    for data in ({"confirm": "yes"}, {"confirm": "yes", "phase": "two"}):
        unread = browser.post(review_url, data)
        assert unread.status_code == 400 and LOCK_PHASE_MISSING.encode() in unread.content
    assert Judge.objects.get(pk=judge.pk).phase2_locked_at is None
    # The review page as it is now locks phase 2.
    current = lock_form(browser.get(review_url))
    assert current["phase"] == "2"
    assert browser.post(review_url, current).status_code == 302
    assert Judge.objects.get(pk=judge.pk).phase2_locked_at is not None


@pytest.mark.django_db
@pytest.mark.parametrize("phase", [None, "", "3", "0", "1.0", "one", "2 ", "phase=1"])
def test_a_save_without_a_readable_phase_is_refused_with_a_message_and_keeps_the_form(judge, phase):
    browser = client_as(judge)
    code = codes(judge)[0]
    data = {"verdict": "fail", "reason": "kept on the page", "go": "stay"}
    if phase is not None:
        data["phase"] = phase
    form = browser.post(item_url(judge, code), data)
    autosave = browser.post(item_url(judge, code), data, **JSON)
    if phase == "2 ":  # surrounding blanks are forgiven; phase 2 before the lock is the 409 of case 25
        assert form.status_code == autosave.status_code == 409
    else:
        assert form.status_code == autosave.status_code == 400
        assert PHASE_MISSING.encode() in form.content
        assert b"kept on the page" in form.content  # bad input loses nothing
        assert autosave.json() == {"saved": False, "error": "invalid", "message": PHASE_MISSING}
    assert not Verdict.objects.exists()


@pytest.mark.django_db
def test_the_time_a_save_records_is_clamped_to_a_ceiling_and_the_verdict_is_kept(judge):
    browser = client_as(judge)
    first, second, third = codes(judge)[:3]
    for code, sent in ((first, "1000000"), (second, "1e308")):
        saved = browser.post(item_url(judge, code), {"verdict": "pass", "phase": "1",
                                                     "seconds_spent": sent, "go": "stay"}, **JSON)
        assert is_saved_reply(saved.json())
        stored = Verdict.objects.get(assignment__code=code, assignment__judge=judge)
        assert stored.seconds_spent == MAX_SECONDS_SPENT
    # An honest time is kept as sent; what is not a number of seconds is refused with a message.
    browser.post(item_url(judge, third), {"verdict": "pass", "phase": "1", "seconds_spent": "95.5"}, **JSON)
    assert Verdict.objects.get(assignment__code=third, assignment__judge=judge).seconds_spent == 95.5
    for garbage in ("-1", "nan", "inf", "soon"):
        refused = browser.post(item_url(judge, first), {"verdict": "fail", "phase": "1",
                                                        "seconds_spent": garbage}, **JSON)
        assert refused.status_code == 400 and refused.json()["message"].startswith("seconds spent:"), garbage
    assert Verdict.objects.get(assignment__code=first, assignment__judge=judge).value == "pass"


@pytest.fixture
def failing_verdict_inserts(db):
    """The database itself refuses to store a verdict (as a full disk or a broken replica would):
    a trigger, in this test's transaction only. No code of ours is replaced."""
    table = Verdict._meta.db_table
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("CREATE FUNCTION test_verdicts_fail() RETURNS trigger LANGUAGE plpgsql AS $$ "
                           "BEGIN RAISE EXCEPTION 'test: no space left' USING ERRCODE = 'disk_full'; END $$")
            cursor.execute(f"CREATE TRIGGER test_verdicts_fail BEFORE INSERT ON {table} "
                           "FOR EACH ROW EXECUTE FUNCTION test_verdicts_fail()")
        else:
            cursor.execute(f"CREATE TRIGGER test_verdicts_fail BEFORE INSERT ON {table} "
                           "BEGIN SELECT RAISE(ABORT, 'test: no space left'); END")
    yield
    with connection.cursor() as cursor:
        on_table = f" ON {table}" if connection.vendor == "postgresql" else ""
        cursor.execute(f"DROP TRIGGER test_verdicts_fail{on_table}")


@pytest.mark.django_db
def test_a_server_failure_answers_the_autosave_in_json_and_the_form_with_the_error_page(
        judge, failing_verdict_inserts):
    browser = client_as(judge, raise_request_exception=False)
    code = codes(judge)[0]
    data = {"verdict": "pass", "phase": "1", "go": "stay"}

    autosave = browser.post(item_url(judge, code), data, **JSON)
    form = browser.post(item_url(judge, code), data)
    missing = Client(raise_request_exception=False).get("/no/such/page", **JSON)

    assert autosave.status_code == 500
    assert autosave["Content-Type"] == "application/json"
    assert autosave.json() == {"error": "server_error", "message": SERVER_ERROR_MESSAGE}
    assert b"no space left" not in autosave.content and b"Traceback" not in autosave.content
    assert form.status_code == 500 and form["Content-Type"].startswith("text/html")
    assert b"Something went wrong on our side" in form.content
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"
    assert not Verdict.objects.exists()


@pytest.mark.django_db
def test_a_refused_csrf_token_answers_the_autosave_in_json_and_the_form_with_its_page(judge):
    browser = client_as(judge, enforce_csrf_checks=True)
    code = codes(judge)[0]
    autosave = browser.post(item_url(judge, code), {"verdict": "pass", "phase": "1"}, **JSON)
    form = browser.post(item_url(judge, code), {"verdict": "pass", "phase": "1"})
    assert autosave.status_code == form.status_code == 403
    assert autosave.json() == {"error": "csrf", "message": CSRF_MESSAGE}
    assert form["Content-Type"].startswith("text/html")
    assert not Verdict.objects.exists()
