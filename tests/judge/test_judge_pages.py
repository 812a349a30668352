"""The judge's pages over HTTP (test client): joining, both phases, locks, the copy frame's
headers, the scorecard."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from content.rendering import FRAME_STYLE_HASH
from judging.enums import SessionState
from judging.models import Finding, Verdict
from judging.selectors.judge import judge_item
from judging.services import guests_configure, invitation_create
from tests.worlds import a_session, advance, answer_all, codes, invite_and_join, is_saved_reply


def join_by_link(client, session, name="Ada"):
    token = invitation_create(session=session, actor="test", name=name).join_token
    page = client.get(f"/join/{token}")
    assert page.status_code == 200 and b"Join the session" in page.content
    # strict-origin: what the page fetches carries the site's origin as Referer, never its URL
    # (the token); not no-referrer: under it Chromium sends `Origin: null` with the page's own
    # form, which CSRF protection refuses. (Its CSP lets it fetch nothing from elsewhere.)
    assert page["Referrer-Policy"] == "strict-origin"
    response = client.post(f"/join/{token}")
    assert response.status_code == 302
    assert response["Location"] == f"/s/{session.url_id}/welcome/"
    return token


def codes_of(client, session):
    page = client.get(f"/s/{session.url_id}/")
    return re.findall(rf'<li><a href="/s/{session.url_id}/i/([A-Z0-9]+)/"', page.content.decode())


@pytest.fixture
def joined(client, open_session):
    join_by_link(client, open_session)
    return client


@pytest.fixture
def scorecard_session(run):
    """An open session whose host chose, in the draft, to show judges their scorecards."""
    return a_session(run, "open", rubric="Is add() right?", scorecards=True)


def test_joining_scrubs_the_token_rotates_the_session_and_shows_the_resume_link_once(
        client, open_session):
    client.get("/")
    before = client.session.session_key
    token = join_by_link(client, open_session)
    assert client.session.session_key != before
    welcome = client.get(f"/s/{open_session.url_id}/welcome/")
    body = welcome.content.decode()
    assert token not in body
    assert "/resume/" in body and open_session.protocol_sha256 in body
    again = client.get(f"/s/{open_session.url_id}/welcome/").content.decode()
    assert "/resume/" not in again and open_session.protocol_sha256 in again
    # The join link is single-use; the refusal, whose URL still holds the token, sends only the
    # site's origin as Referer. Opened again in the browser it admitted, it says so.
    again = client.post(f"/join/{token}")
    assert again.status_code == 200 and "You already joined" in again.content.decode()
    # Opened again (GET) in that browser, it says so before anything is pressed (issue 24 item 6:
    # it showed a normal "Join" page); anywhere else it looks like any link, used or not.
    opened = client.get(f"/join/{token}").content.decode()
    assert "You already joined" in opened and "Join the session" not in opened
    assert f'href="/s/{open_session.url_id}/"' in opened
    elsewhere = Client().get(f"/join/{token}").content.decode()
    assert "Join the session" in elsewhere and "You already joined" not in elsewhere
    assert again["Referrer-Policy"] == "strict-origin"
    assert token not in again.content.decode()
    refused = Client().post(f"/join/{token}")
    assert refused.status_code == 403
    assert refused["Referrer-Policy"] == "strict-origin"
    assert token not in refused.content.decode()


def test_the_front_page_lists_the_sessions_judged_here_and_is_never_stored(joined, open_session):
    # Issue 25: `/` sent no Cache-Control while it lists the session ids this browser judges in.
    front = joined.get("/")
    assert f'href="/s/{open_session.url_id}/"' in front.content.decode()
    assert "no-store" in front["Cache-Control"] and "private" in front["Cache-Control"]
    assert "no-store" in Client().get("/")["Cache-Control"]


def test_phase_one_then_lock_then_phase_two(joined, open_session):
    url_id = open_session.url_id
    codes = codes_of(joined, open_session)
    assert len(codes) == 6
    first = joined.get(f"/s/{url_id}/i/{codes[0]}/")
    assert first.status_code == 200
    assert b"Item 1 of 6" in first.content
    assert b"What the model reviewers said" not in first.content
    for index, code in enumerate(codes):
        response = joined.post(f"/s/{url_id}/i/{code}/", {"verdict": "fail", "phase": "1", "reason": "r",
                                                           "seconds_spent": "4.5", "go": "next"})
        expected = (f"/s/{url_id}/i/{codes[index + 1]}/" if index + 1 < len(codes)
                    else f"/s/{url_id}/")
        assert response["Location"] == expected
    assert Verdict.objects.filter(phase=1, value="fail", seconds_spent=4.5).count() == 6
    assert joined.post(f"/s/{url_id}/lock/", {}).status_code == 400  # confirmation required
    assert joined.post(f"/s/{url_id}/lock/", {"confirm": "yes", "phase": "1"}).status_code == 302
    assert Verdict.objects.filter(phase=1, locked=True).count() == 6
    # Case 24 at the door: a phase-1 verdict after the lock is a 409 and changes nothing.
    phase2 = joined.get(f"/s/{url_id}/i/{codes[0]}/")
    assert b"What the model reviewers said" in phase2.content
    assert b"Keep my phase-1 verdict" in phase2.content
    response = joined.post(f"/s/{url_id}/i/{codes[0]}/", {"verdict": "keep", "phase": "2", "go": "stay"})
    assert response.status_code == 302
    assert Verdict.objects.get(phase=2, assignment__code=codes[0]).value == "fail"


def test_autosave_answers_json(joined, open_session):
    code = codes_of(joined, open_session)[0]
    url = f"/s/{open_session.url_id}/i/{code}/"
    ok = joined.post(url, {"verdict": "pass", "phase": "1"}, HTTP_ACCEPT="application/json")
    assert is_saved_reply(ok.json())
    bad = joined.post(url, {"verdict": "maybe", "phase": "1"}, HTTP_ACCEPT="application/json")
    assert bad.status_code == 400 and "is not one of pass, fail" in bad.json()["message"]


def test_the_copy_frame_is_sandboxed_by_its_headers(joined, open_session):
    code = codes_of(joined, open_session)[0]
    frame = joined.get(f"/s/{open_session.url_id}/i/{code}/frame")
    assert frame.status_code == 200
    directives = {d.strip().split(" ")[0]: d.strip() for d in frame["Content-Security-Policy"].split(";")}
    assert directives["sandbox"] == "sandbox"
    assert directives["default-src"] == "default-src 'none'"
    assert directives["style-src"] == f"style-src '{FRAME_STYLE_HASH}'"
    assert directives["frame-ancestors"] == "frame-ancestors 'self'"
    assert frame["X-Content-Type-Options"] == "nosniff"
    assert frame["Referrer-Policy"] == "no-referrer"
    assert "no-store" in frame["Cache-Control"]
    assert frame["X-Frame-Options"] == "SAMEORIGIN"
    page = joined.get(f"/s/{open_session.url_id}/i/{code}/")
    assert b"<iframe class=\"copy-frame\" sandbox src=" in page.content


def test_guests_join_on_the_guest_page_with_one_refusal_for_everything(client, open_session):
    code = guests_configure(session=open_session, actor="test", allow=True).guest_code
    wrong = client.post("/guest/", {"code": "AAAA-AAAA-AAAA-A", "name": "Guesser"})
    assert wrong.status_code == 403
    assert b"That guest code was not accepted." in wrong.content
    assert b"AAAA-AAAA-AAAA-A" in wrong.content  # what was typed is kept
    right = client.post("/guest/", {"code": code.lower(), "name": "Guest"})
    assert right["Location"] == f"/s/{open_session.url_id}/welcome/"


def test_resume_links_work_on_another_device(client, open_session):
    join_by_link(client, open_session)
    link = re.search(r'value="http://[^"]+(/resume/[^"]+)"',
                     client.get(f"/s/{open_session.url_id}/welcome/").content.decode()).group(1)
    other = Client()
    assert other.get(link)["Referrer-Policy"] == "strict-origin"
    assert other.post(link)["Location"] == f"/s/{open_session.url_id}/"
    assert other.get(f"/s/{open_session.url_id}/").status_code == 200


def test_after_the_reveal_only_the_scorecard_remains(client, scorecard_session):
    join_by_link(client, scorecard_session)
    joined = client
    url_id = scorecard_session.url_id
    codes = codes_of(joined, scorecard_session)
    for code in codes:
        joined.post(f"/s/{url_id}/i/{code}/", {"verdict": "fail", "phase": "1"})
    joined.post(f"/s/{url_id}/lock/", {"confirm": "yes", "phase": "1"})
    advance(scorecard_session, "revealed", actor="t")
    assert joined.get(f"/s/{url_id}/i/{codes[0]}/").status_code == 404
    assert joined.get(f"/s/{url_id}/i/{codes[0]}/frame").status_code == 404
    assert joined.get(f"/s/{url_id}/")["Location"] == reverse("judge_scorecard", args=[url_id])
    card = joined.get(f"/s/{url_id}/scorecard/").content.decode()
    # The known answers in words, never the stored values.
    assert "Has a seeded defect" in card and "Defects caught" in card
    assert "seeded_defect" not in card and "known_good" not in card


def test_nobody_signs_up_by_themselves(client, db):
    # allauth's sign-up page is not even mounted (tests/test_accounts_urls.py).
    assert client.get("/accounts/signup/").status_code == 404
    assert client.post("/accounts/signup/", {"username": "mallory", "password1": "x" * 20,
                                             "password2": "x" * 20}).status_code == 404

    assert not get_user_model().objects.filter(username="mallory").exists()


def test_after_the_reveal_a_resume_link_opens_the_scorecard_on_a_new_device(client, scorecard_session):
    join_by_link(client, scorecard_session)
    link = re.search(r'value="http://[^"]+(/resume/[^"]+)"',
                     client.get(f"/s/{scorecard_session.url_id}/welcome/").content.decode()).group(1)
    for code in codes_of(client, scorecard_session):
        client.post(f"/s/{scorecard_session.url_id}/i/{code}/", {"verdict": "pass", "phase": "1"})
    client.post(f"/s/{scorecard_session.url_id}/lock/", {"confirm": "yes", "phase": "1"})
    advance(scorecard_session, "revealed", actor="t")
    device = Client()
    home = device.post(link)
    assert home["Location"] == f"/s/{scorecard_session.url_id}/"
    assert device.get(home["Location"])["Location"] == f"/s/{scorecard_session.url_id}/scorecard/"
    card = device.get(f"/s/{scorecard_session.url_id}/scorecard/").content.decode()
    assert card.count("<tr><td>") == 6 and "Good (no defect known)" in card


@pytest.mark.django_db
def test_a_findings_item_in_phase_2_reads_no_truth_or_bundle_id_of_the_finding(run):
    """The judge selectors list their columns: a finding's phase-2 page reads its proposed verdict
    and who raised it, never the finding's row (which holds its truth and bundle id)."""
    session = a_session(run, SessionState.OPEN, kind="findings")
    judge = invite_and_join(session, "Finn").judge
    answer_all(judge, value="real", lock=True)
    judge.refresh_from_db()
    finding_table = connection.ops.quote_name(Finding._meta.db_table)
    with CaptureQueriesContext(connection) as queries:
        item = judge_item(judge, codes(judge)[0])
    assert item.proposed_verdict == "confirmed" and item.raised_by
    read = [q["sql"] for q in queries if f"FROM {finding_table}" in q["sql"]]
    assert read, "the finding's text and proposed verdict are read from its table"
    for sql in read:
        for column in ("truth", "bundle_id", "defect"):
            assert connection.ops.quote_name(column) not in sql, sql
