"""Adjudication (issue 29 item 1): the run's unknown truth decided once, blind, in one phase, by
one adjudicator outside the matrix (not a judge of the same items, not the host), checked both
ways by GitHub id; answers with "cannot tell" and a reason each, locked once."""

import json

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from blindjudge.errors import Conflict, Invalid
from judging.enums import SessionKind, SessionState
from judging.models import CopyRender, Item, Verdict
from judging.selectors.judge import judge_item, judge_phase
from judging.services import (
    InsideMatrix,
    guests_configure,
    host_github_link,
    host_join,
    invitation_create,
    item_save,
    judge_github_link,
    phase_lock,
    session_create,
)
from tests.worlds import (
    a_github_attempt,
    a_github_judge,
    a_run,
    a_session,
    advance,
    client_as,
    codes,
    invite_and_join,
    make_bundle,
)


def unknown_bundle():
    """make_bundle() with a third finding of unknown truth on c6 (itself of unknown truth) and
    f2 made unknown: two findings and one copy the tests could not settle."""
    bundle = make_bundle()
    bundle["findings"][1]["truth"] = "unknown"
    bundle["findings"].append({"id": "f3", "copy": "c6", "text": "never returns on overflow",
                               "raised_by": ["r1"], "proposed_verdict": "refuted",
                               "truth": "unknown"})
    return bundle


@pytest.fixture
def unknown_run(host):
    return a_run(host, unknown_bundle())


def adjudication(run, state=SessionState.OPEN, **options):
    return a_session(run, state, kind=SessionKind.ADJUDICATION, **options)


def keys(session):
    return sorted(Item.objects.filter(session=session).values_list("key", flat=True))


def test_an_adjudication_holds_the_unknown_findings_and_what_the_host_adds(unknown_run):
    assert keys(adjudication(unknown_run, SessionState.DRAFT)) == ["finding:f2", "finding:f3"]
    with_copies = adjudication(unknown_run, SessionState.DRAFT, unknown_copies=True)
    assert keys(with_copies) == ["copy:c6", "finding:f2", "finding:f3"]
    named = adjudication(unknown_run, SessionState.DRAFT, adjudicate_findings=("f1",),
                         adjudicate_copies=("c1",))
    assert keys(named) == ["copy:c1", "finding:f1", "finding:f2", "finding:f3"]
    # A finding keeps its copy: the adjudicator reads the finding beside the copy it is about.
    f3 = Item.objects.get(session=named, key="finding:f3")
    assert f3.copy.bundle_id == "c6" and f3.finding.bundle_id == "f3"


def test_an_adjudication_is_refused_what_it_cannot_have(unknown_run, run):
    with pytest.raises(Invalid, match="nothing to adjudicate"):
        session_create(run=run, kind=SessionKind.ADJUDICATION, actor="test")
    with pytest.raises(Invalid, match="no finding or copy f9, c9"):
        session_create(run=unknown_run, kind=SessionKind.ADJUDICATION, actor="test",
                       adjudicate_findings=("f9",), adjudicate_copies=("c9",))
    for setting, words in (({"guests_allowed": True}, "no guests"),
                           ({"items_per_judge": 1}, "items per judge"),
                           ({"scorecards": True}, "scorecards"),
                           ({"mark_disagreement": True}, "marking disagreements"),
                           ({"preregistration": "```rules\n[]\n```"}, "no decision rules")):
        with pytest.raises(Invalid, match=words):
            session_create(run=unknown_run, kind=SessionKind.ADJUDICATION, actor="test", **setting)
    with pytest.raises(Invalid, match="only an adjudication"):
        session_create(run=unknown_run, kind=SessionKind.COPIES, actor="test", unknown_copies=True)


def test_truth_is_adjudicated_once(unknown_run):
    adjudication(unknown_run)
    second = adjudication(unknown_run, SessionState.DRAFT, adjudicate_findings=("f1",))
    with pytest.raises(Conflict, match="finding:f2 is adjudicated already"):
        advance(second, SessionState.OPEN)
    # Items no other adjudication holds may be adjudicated apart.
    apart = adjudication(unknown_run, SessionState.DRAFT, adjudicate_copies=("c1",))
    Item.objects.filter(session=apart).exclude(key="copy:c1").delete()
    assert advance(apart, SessionState.OPEN).state == SessionState.OPEN


def test_the_adjudicator_answers_each_kind_of_item_with_cannot_tell_in_one_phase(unknown_run):
    session = adjudication(unknown_run, unknown_copies=True)
    judge = invite_and_join(session).judge
    by_key = dict(judge.assignments.values_list("item__key", "code"))
    with pytest.raises(Invalid, match='"pass" is not one of real, false_alarm, cannot_tell'):
        item_save(judge=judge, code=by_key["finding:f2"], phase=1, value="pass")
    with pytest.raises(Invalid, match='"real" is not one of pass, fail, cannot_tell'):
        item_save(judge=judge, code=by_key["copy:c6"], phase=1, value="real")
    item_save(judge=judge, code=by_key["finding:f2"], phase=1, value="real", reason="r")
    item_save(judge=judge, code=by_key["finding:f3"], phase=1, value="cannot_tell")
    item_save(judge=judge, code=by_key["copy:c6"], phase=1, value="fail", reason="overflows")
    with pytest.raises(Conflict, match="1 of 3 items have no reason yet"):
        phase_lock(judge=judge, phase=1)
    item_save(judge=judge, code=by_key["finding:f3"], phase=1, value="cannot_tell",
              reason="the copy shown does not say what overflow does")
    with pytest.raises(Conflict, match="one phase"):
        item_save(judge=judge, code=by_key["finding:f3"], phase=2, value="real")
    phase_lock(judge=judge, phase=1)
    judge.refresh_from_db()
    assert judge_phase(judge) is None
    with pytest.raises(Conflict, match="one phase"):
        phase_lock(judge=judge, phase=2)
    with pytest.raises(Conflict, match="one phase"):
        item_save(judge=judge, code=by_key["finding:f2"], phase=1, value="false_alarm", reason="x")
    assert sorted(Verdict.objects.filter(assignment__judge=judge).values_list("value", "locked")) \
        == [("cannot_tell", True), ("fail", True), ("real", True)]


def test_an_adjudicator_never_sees_a_models_verdict(unknown_run):
    """Not in phase 1, not after the lock: the copies' reviews are not even rendered."""
    session = adjudication(unknown_run, unknown_copies=True, adjudicate_copies=("c1", "c2"))
    assert not any(CopyRender.objects.filter(session=session).values_list("reviews", flat=True))
    judge = invite_and_join(session).judge
    for code in codes(judge):
        item_save(judge=judge, code=code, phase=1, value="cannot_tell", reason="unclear")
    phase_lock(judge=judge, phase=1)
    judge.refresh_from_db()
    browser = client_as(judge)
    for code in codes(judge):
        view = judge_item(judge, code)
        assert view.phase == 1 and view.reviewer_rows == [] and view.proposed_verdict is None
        page = browser.get(reverse("judge_item", args=[session.url_id, code]))
        assert page.status_code == 200
        text = page.content.decode()
        assert "locked your answers" in text and "Reviewer A" not in text
        assert "model reviewers said" not in text and "Proposed verdict" not in text
    done = browser.get(reverse("judge_home", args=[session.url_id]))
    assert "You have locked your answers" in done.content.decode()


def test_an_adjudication_has_one_adjudicator(unknown_run):
    session = adjudication(unknown_run)
    first = invite_and_join(session, "Ada").judge
    with pytest.raises(Conflict, match=f"already has its adjudicator \\({first.pseudonym}\\)"):
        invite_and_join(session, "Grace")


def test_the_host_cannot_adjudicate_by_account_or_by_their_github(unknown_run, host, standin):
    session = adjudication(unknown_run)
    with pytest.raises(InsideMatrix, match="host of the run cannot adjudicate"):
        host_join(session=session, host=host)
    host_github_link(host=host, github_id=4242, github_login="alice-gh")
    with pytest.raises(Invalid, match="host of the run cannot adjudicate"):
        invitation_create(session=session, actor="test", github_login="Alice-GH")
    # Listed by another login that is the host's account after all (logins change hands).
    done = a_github_attempt(session, standin, login="renamed", github_id=4242)
    assert done.status_code == 403
    assert "host of the run cannot adjudicate" in done.content.decode()
    assert not session.judges.exists()


def test_a_judge_of_the_same_items_cannot_adjudicate_nor_the_reverse(unknown_run, standin):
    judged = a_session(unknown_run, SessionState.OPEN, kind=SessionKind.FINDINGS)
    session = adjudication(unknown_run)
    a_github_judge(judged, standin, login="judy", github_id=7)
    # Listing the judge's login is refused at once; signing in with their id under another is
    # refused at joining.
    with pytest.raises(Invalid, match=f'"judy" judges findings session {judged.pk}'):
        invitation_create(session=session, actor="test", github_login="judy")
    done = a_github_attempt(session, standin, login="judy-renamed", github_id=7)
    assert done.status_code == 403
    assert f"You judge findings session {judged.pk} on this run" in done.content.decode()
    assert not session.judges.exists()

    # The reverse: the adjudicator (by GitHub) cannot then judge a session holding those items.
    adjudicator = a_github_judge(session, standin, login="ada", github_id=8)
    copies = a_session(unknown_run, SessionState.OPEN)
    with pytest.raises(Invalid, match='"ada" adjudicates items of this run'):
        invitation_create(session=copies, actor="test", github_login="ada")
    done = a_github_attempt(copies, standin, login="ada-elsewhere", github_id=8)
    assert done.status_code == 403
    assert f"adjudicate items of this run (adjudication session {session.pk})" in \
        done.content.decode()
    assert not copies.judges.exists() and adjudicator.session_id == session.pk


def test_a_token_judge_linking_github_is_checked_as_at_joining(unknown_run, standin):
    judged = a_session(unknown_run, SessionState.OPEN)
    a_github_judge(judged, standin, login="judy", github_id=7)
    session = adjudication(unknown_run)
    adjudicator = invite_and_join(session, "Ada").judge
    with pytest.raises(InsideMatrix, match=f"You judge copies session {judged.pk}"):
        judge_github_link(judge=adjudicator, github_id=7, github_login="judy")
    adjudicator.refresh_from_db()
    assert adjudicator.github_id is None


def test_sessions_sharing_no_copy_are_outside_each_others_matrix(host, standin):
    """The matrix is the items: a judge of a session on other copies of the run may adjudicate."""
    run = a_run(host, unknown_bundle())
    elsewhere = a_session(run, SessionState.DRAFT)
    Item.objects.filter(session=elsewhere).exclude(copy__bundle_id="c3").delete()
    elsewhere = advance(elsewhere, SessionState.OPEN)
    a_github_judge(elsewhere, standin, login="judy", github_id=7)
    session = adjudication(run)  # f2 on c1, f3 on c6
    assert a_github_judge(session, standin, login="judy", github_id=7).session_id == session.pk


def test_guests_stay_out_of_an_adjudication(unknown_run):
    session = adjudication(unknown_run)
    with pytest.raises(Invalid, match="no guests"):
        guests_configure(session=session, actor="test", allow=True)


def test_the_host_preview_of_an_adjudication_has_one_phase(unknown_run, host):
    session = adjudication(unknown_run, SessionState.DRAFT, unknown_copies=True)
    browser = client_as(host)
    start = browser.get(reverse("preview_start", kwargs={"session_id": session.pk}))
    assert start.status_code == 302
    seed = start["Location"].rstrip("/").split("/")[-3]
    home = browser.get(reverse("preview_home", kwargs={"session_id": session.pk, "seed": seed,
                                                       "phase": 1}))
    assert home.status_code == 200 and "Show phase 2" not in home.content.decode()
    assert browser.get(reverse("preview_home", kwargs={"session_id": session.pk, "seed": seed,
                                                       "phase": 2})).status_code == 404


def test_the_host_sees_the_adjudicator_by_pseudonym_only(unknown_run, host, standin):
    session = adjudication(unknown_run)
    a_github_judge(session, standin, login="ada-lovelace", github_id=8)
    page = client_as(host).get(reverse("host:judges", args=[session.pk]))
    assert page.status_code == 200
    text = page.content.decode()
    assert "J01" in text and "ada-lovelace" not in text
    named = a_session(unknown_run, SessionState.OPEN)
    invite_and_join(named, "Grace Hopper")
    assert "Grace Hopper" in client_as(host).get(
        reverse("host:judges", args=[named.pk])).content.decode()


def test_the_hosts_pages_show_the_answers_beside_the_truth_once_revealed(unknown_run, host):
    copies = a_session(unknown_run, SessionState.OPEN)
    session = adjudication(unknown_run, unknown_copies=True)
    judge = invite_and_join(session).judge
    answers = {"finding:f2": "real", "finding:f3": "cannot_tell", "copy:c6": "fail"}
    for code, key in judge.assignments.values_list("code", "item__key"):
        item_save(judge=judge, code=code, phase=1, value=answers[key], reason="because")
    phase_lock(judge=judge, phase=1)
    browser = client_as(host)
    run_page = reverse("host:run", args=[unknown_run.pk])
    # Before the reveal the host sees no answer, as with any verdict.
    assert "adjudicated real" not in browser.get(run_page).content.decode()
    page = browser.get(reverse("host:session", args=[session.pk])).content.decode()
    assert "An adjudication has no report of its own" in page and f"session {copies.pk}" in page
    session = advance(session, SessionState.REVEALED)
    text = browser.get(run_page).content.decode()
    assert "adjudicated real (" in text and f"J01, session {session.pk})" in text
    assert "adjudicated fail (" in text and "cannot tell (" in text
    page = browser.get(reverse("host:session", args=[session.pk])).content.decode()
    assert "Full report (JSON)" not in page
    other = browser.get(reverse("host:session", args=[copies.pk])).content.decode()
    assert f"session {session.pk}</a> (revealed) decides items of this session" in other


def test_the_command_line_creates_an_adjudication(unknown_run, capsys):
    call_command("create_session", str(unknown_run.pk), "--kind", "adjudication",
                 "--unknown-copies", "--finding", "f1", "--copy", "c1", "--json")
    created = json.loads(capsys.readouterr().out)
    assert created["items"] == 5  # f2, f3 (unknown), c6 (unknown), f1 and c1 (named)
    with pytest.raises(CommandError, match="no guests"):
        call_command("create_session", str(unknown_run.pk), "--kind", "adjudication", "--guests")


def test_the_new_session_form_folds_the_adjudication_settings_and_opens_them_on_a_refusal(
        unknown_run, host):
    browser = client_as(host)
    page = browser.get(reverse("host:run", args=[unknown_run.pk])).content.decode()
    assert '<details class="folded-fields">' in page  # folded: the common settings come first
    refused = browser.post(reverse("host:session_create", args=[unknown_run.pk]), {
        "kind": "adjudication", "adjudicate_findings": "f9", "reviewer_display": "letters",
        "verdict_min_shown_ms": "300"})
    text = refused.content.decode()
    assert refused.status_code == 400 and "has no finding or copy f9" in text
    assert '<details class="folded-fields" open>' in text and 'value="f9"' in text
