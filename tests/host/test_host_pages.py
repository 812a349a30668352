"""The host's pages over HTTP: who may reach them, what each action changes, what is shown once,
and what is never shown (verdict values before the reveal).

Personas (conftest): `host` (alice) owns the run; `other_host` (bob) must see nothing of it;
a signed-in account that is not a host; anonymous. Every URL comes from the resolver
(`host.urls.urlpatterns`), so a new page cannot be left out of the permission matrix.
Negative tests plant data that could leak before asserting its absence.
"""

import csv
import html
import io
import json
import re

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from accounts.enums import AdmittedAs, JudgeStatus
from accounts.guards import JUDGE_SESSION_KEY, judge_binding
from accounts.models import Credential, Invitation, Judge
from blindjudge.errors import Refused
from host import urls as host_urls
from judging.enums import SessionState
from judging.models import AuditEvent, Copy, PreregAmendment, Run, Session, TruthCorrection
from judging.selectors.judge import judge_by_resume_token
from judging.services import guest_join, join_token_exchange, phase_lock, truth_correct
from reports.export import FLAG_COLUMNS, neutralise_cell
from reports.html import REPORT_CSP
from reports.render import REPORT_FORMATS
from tests.support.verdicts import verdict_record
from tests.worlds import (
    BAD,
    a_run,
    a_session,
    advance,
    bundle_bytes,
    client_as,
    invite_and_join,
    make_bundle,
    opened_from_page,
)

HOSTILE_NAME = '../../etc/passwd"; rm -rf /\r\nX-Injected: 1'
CANARY_REASON = "CANARY-REASON-1234"
NO_SUCH = re.compile(r"\bno (run|session) \d+\b")
ONCE_VALUE = re.compile(r'id="once-value"[^>]*value="([^"]+)"')


def url(name, **kwargs):
    return reverse(f"host:{name}", kwargs=kwargs)


def once_value(response) -> str | None:
    found = ONCE_VALUE.search(response.content.decode())
    return html.unescape(found.group(1)) if found else None


def page(response) -> str:
    return response.content.decode()


@pytest.fixture
def alice(host):
    """alice's browser, signed in."""
    return client_as(host)


def judge_everything(judge, value="fail", reason=CANARY_REASON, lock=True):
    """Give a verdict on every item of `judge` in phase 1 (and lock it if asked)."""
    for assignment in judge.assignments.all():
        verdict_record(judge=judge, code=assignment.code, phase=1, value=value,
                       reason=f"{reason} {assignment.code}")
    if lock:
        phase_lock(judge=judge, phase=1)


@pytest.fixture
def full_session(host):
    """A revealed session on a run with a hostile name, with a judge whose verdicts are in, a
    truth correction and an invitation: everything a host page or report could leak."""
    bundle = make_bundle(run={"name": HOSTILE_NAME, "task": "Write add(a, b)."})
    run = a_run(host, bundle)
    session = a_session(run, "open", guests_allowed=True)
    judge = invite_and_join(session, name="Leaky Judge").judge
    judge_everything(judge)
    truth_correct(run=run, item="c6", truth="known_good", note="checked by hand", actor="test")
    return advance(session, "revealed")


def every_pattern():
    return [pattern for pattern in host_urls.urlpatterns]


def kwargs_for(pattern, *, session, judge_number=1):
    values = {"run_id": session.run_id, "session_id": session.pk, "position": 0,
              "number": judge_number, "fmt": "json",
              "invitation_id": session.invitations.order_by("pk").values_list("pk", flat=True).first() or 1}
    return {name: values[name] for name in pattern.pattern.converters}


def object_patterns():
    return [p for p in every_pattern() if {"run_id", "session_id"} & set(p.pattern.converters)]


def test_every_url_is_covered_by_the_matrix():
    """Every host URL either names one of the host's objects (and is walked with ids) or is one
    of the two pages without an object: the runs list and the import."""
    objectless = {p.name for p in every_pattern()} - {p.name for p in object_patterns()}
    assert objectless == {"runs", "run_import"}
    assert len(every_pattern()) >= 26


# --- Permission matrix --------------------------------------------------------------------------

@pytest.mark.django_db
def test_anonymous_visitors_are_sent_to_sign_in_from_every_host_url(anonymous, full_session):
    events = AuditEvent.objects.count()
    for pattern in every_pattern():
        path = url(pattern.name, **kwargs_for(pattern, session=full_session))
        for method in (anonymous.get, anonymous.post):
            response = method(path)
            assert response.status_code == 302, path
            assert response["Location"] == f"{settings.LOGIN_URL}?next={path}", path
    assert AuditEvent.objects.count() == events
    assert Run.objects.get().name == HOSTILE_NAME


@pytest.mark.django_db
def test_a_signed_in_non_host_gets_not_found_everywhere(client, full_session):
    someone = get_user_model().objects.create_user("mallory", password="x" * 20)
    client.force_login(someone)
    events = AuditEvent.objects.count()
    for pattern in every_pattern():
        path = url(pattern.name, **kwargs_for(pattern, session=full_session))
        for method in (client.get, client.post):
            response = method(path)
            assert response.status_code == 404, path
            assert "Leaky Judge" not in page(response)
            assert "gpt-4o" not in page(response)
    assert AuditEvent.objects.count() == events


@pytest.mark.django_db
def test_another_host_gets_the_same_not_found_as_for_ids_that_do_not_exist(
        full_session, other_host):
    client = client_as(other_host)
    leaks = ["Leaky Judge", "gpt-4o-2024-08-06", "claude-3-5-sonnet", "checked by hand",
             CANARY_REASON, "etc/passwd", "subtracts"]
    state_before = (AuditEvent.objects.count(), Credential.objects.count(),
                    Judge.objects.filter(status=JudgeStatus.ACTIVE).count())
    missing = Session.objects.order_by("-pk").first().pk + 1000
    for pattern in object_patterns():
        path = url(pattern.name, **kwargs_for(pattern, session=full_session))
        ghost = path.replace(f"/{full_session.pk}/", f"/{missing}/").replace(
            f"/runs/{full_session.run_id}/", f"/runs/{missing}/")
        assert ghost != path
        for method in ("get", "post"):
            response = getattr(client, method)(path)
            nonexistent = getattr(client, method)(ghost)
            assert response.status_code == 404, (method, path)
            assert nonexistent.status_code == 404, (method, ghost)
            body = page(response)
            for leak in leaks:
                assert leak not in body, (path, leak)
            # The same page, apart from the id in the message ("no session 7").
            assert NO_SUCH.sub(r"no \1 N", body) == NO_SUCH.sub(r"no \1 N", page(nonexistent))
            assert "Content-Disposition" not in response
    assert state_before == (AuditEvent.objects.count(), Credential.objects.count(),
                            Judge.objects.filter(status=JudgeStatus.ACTIVE).count())
    # The object-free pages show bob only his own runs.
    runs = client.get(url("runs"))
    assert runs.status_code == 200
    assert "etc/passwd" not in page(runs) and "You have no runs yet" in page(runs)


# --- Runs and import ----------------------------------------------------------------------------

def upload(raw: bytes, name="bundle.json"):
    return SimpleUploadedFile(name, raw, content_type="application/json")


@pytest.mark.django_db
def test_importing_a_good_bundle_lists_the_run(alice, host):
    response = alice.post(url("run_import"), {"bundle": upload(bundle_bytes())})
    run = Run.objects.get()
    assert response.status_code == 303
    assert response["Location"] == url("run", run_id=run.pk)
    assert run.host == host and run.copies.count() == 6
    # The run's id is whatever the database gave it (replacing it in the page turned "6 copies"
    # into "1 copies" when an earlier test in the worker left the sequence at 6).
    assert f"Run {run.pk} imported: 6 copies, 2 findings." in page(alice.get(response["Location"]))
    listed = alice.get(url("runs"))
    assert "add() across three models" in page(listed)
    assert url("run", run_id=run.pk) in page(listed)


@pytest.mark.django_db
def test_a_bad_bundle_shows_every_error_and_writes_nothing(alice):
    bundle = make_bundle()
    bundle["copies"][2]["builder"] = "b9"
    bundle["copies"][3]["truth"] = "maybe"
    bundle["reviews"][0]["copy"] = "c99"
    events = AuditEvent.objects.count()
    response = alice.post(url("run_import"), {"bundle": upload(bundle_bytes(bundle))})
    assert response.status_code == 400
    body = page(response)
    for error in ['copies[2].builder: unknown builder "b9"',
                  'copies[3].truth: "maybe" is not one of',
                  'reviews[0].copy: unknown copy "c99"']:
        assert f"<li>{html.escape(error)}" in body
    assert "Nothing was changed" in body
    assert Run.objects.count() == 0 and Copy.objects.count() == 0
    assert AuditEvent.objects.count() == events

    malformed = alice.post(url("run_import"), {"bundle": upload(b"{bad")})
    assert malformed.status_code == 400
    assert "bundle: malformed JSON at line 1 column 2" in page(malformed)
    missing = alice.post(url("run_import"), {})
    assert missing.status_code == 400 and "This field is required" in page(missing)
    assert Run.objects.count() == 0


@pytest.mark.django_db
def test_an_oversize_upload_is_refused_unread(alice, settings):
    settings.BLINDJUDGE_MAX_BUNDLE_BYTES = 100
    response = alice.post(url("run_import"), {"bundle": upload(bundle_bytes())})
    assert response.status_code == 400
    assert "bytes exceeds the limit of 100 bytes" in page(response)
    assert Run.objects.count() == 0


@pytest.mark.django_db
def test_the_run_page_shows_builders_copies_reviews_and_findings(alice, run):
    body = page(alice.get(url("run", run_id=run.pk)))
    for text in ["gpt-4o-2024-08-06", "Anthropic", "subtracts", "seeded_defect", "qwen3-1.7b",
                 "uses minus", "false_alarm", "absent", run.bundle_sha256]:
        assert text in body


@pytest.mark.django_db
def test_run_and_judges_lists_take_a_constant_number_of_queries(alice, host, open_session):
    def queries(path):
        with CaptureQueriesContext(connection) as captured:
            assert alice.get(path).status_code == 200
        return len(captured)

    one = queries(url("runs"))
    for _ in range(2):
        a_session(a_run(host), "draft")
    assert queries(url("runs")) == one

    invite_and_join(open_session, "First")
    one = queries(url("judges", session_id=open_session.pk))
    invite_and_join(open_session, "Second")
    invite_and_join(open_session, "Third")
    assert queries(url("judges", session_id=open_session.pk)) == one


# --- Sessions: create, edit, open ---------------------------------------------------------------

@pytest.mark.django_db
def test_creating_a_session_from_the_run_page(alice, run):
    response = alice.post(url("session_create", run_id=run.pk), {
        "kind": "copies", "rubric": "Does add() add?", "preregistration": "",
        "items_per_judge": "4", "reviewer_display": "letters", "scorecards": "on",
    })
    session = Session.objects.get()
    assert response.status_code == 303
    assert response["Location"] == url("session", session_id=session.pk)
    assert (session.state, session.rubric, session.items_per_judge, session.scorecards) == \
        ("draft", "Does add() add?", 4, True)
    assert session.items.count() == 6


@pytest.mark.django_db
def test_a_refused_session_keeps_what_was_typed(alice, run):
    response = alice.post(url("session_create", run_id=run.pk), {
        "kind": "copies", "rubric": "My long careful rubric", "items_per_judge": "99",
        "reviewer_display": "letters",
    })
    assert response.status_code == 400
    body = page(response)
    assert "items per judge: 99 is outside 1..6" in body
    assert "My long careful rubric</textarea>" in body
    # Model names would name a builder here (reviewer r2 is of the OpenAI family).
    names = alice.post(url("session_create", run_id=run.pk), {
        "kind": "copies", "rubric": "kept", "reviewer_display": "names"})
    assert names.status_code == 400
    assert "model names would name a builder" in page(names)
    assert Session.objects.count() == 0


@pytest.mark.django_db
def test_creating_a_session_with_guests_shows_the_code_once(alice, run):
    response = alice.post(url("session_create", run_id=run.pk), {
        "kind": "copies", "reviewer_display": "letters", "guests_allowed": "on",
        "guest_cap": "5"}, follow=True)
    code = once_value(response)
    assert code and re.fullmatch(r"[A-Z0-9]{4}(-[A-Z0-9]{1,4})+", code)
    session = Session.objects.get()
    assert session.guests_allowed and session.guest_cap == 5
    assert code not in page(alice.get(url("session", session_id=session.pk)))


@pytest.mark.django_db
def test_editing_the_draft(alice, draft):
    prereg = 'We expect herding.\n\n```rules\n[{"name": "h", "metric": "delta_recall", ' \
             '"op": "<=", "threshold": 0}]\n```\n'
    response = alice.post(url("session_edit", session_id=draft.pk), {
        "draft-rubric": "A new rubric", "draft-preregistration": prereg,
        "draft-items_per_judge": "3", "draft-reviewer_display": "letters",
        "draft-advance_on_key": "on",  # ticked as the form shows it: the host left it as it was
    })
    assert response.status_code == 303
    draft.refresh_from_db()
    assert (draft.rubric, draft.items_per_judge, draft.scorecards) == ("A new rubric", 3, False)
    assert draft.preregistration.startswith("We expect herding.")
    event = AuditEvent.objects.filter(action="session.updated").get()
    assert set(event.details["fields"]) == {"rubric", "preregistration", "items_per_judge"}
    assert "A new rubric" not in json.dumps(event.details)

    bad = alice.post(url("session_edit", session_id=draft.pk), {
        "draft-rubric": "Typed and kept", "draft-reviewer_display": "letters",
        "draft-preregistration": '```rules\n[{"name": "x", "metric": "vibes", "op": ">", '
                                 '"threshold": 1}]\n```\n'})
    assert bad.status_code == 400
    assert "unknown metric" in page(bad) and "Typed and kept</textarea>" in page(bad)
    draft.refresh_from_db()
    assert draft.rubric == "A new rubric"


def test_opening_freezes_the_protocol_and_shows_its_hash(opening_processes, alice, draft):
    assert "not frozen yet" in page(alice.get(url("session", session_id=draft.pk)))
    response = alice.post(url("session_open", session_id=draft.pk))
    assert response.status_code == 303
    draft = opened_from_page(draft)
    assert draft.state == SessionState.OPEN and len(draft.protocol_sha256) == 64
    body = page(alice.get(url("session", session_id=draft.pk)))
    assert draft.protocol_sha256 in body
    assert 'name="draft-rubric"' not in body  # the draft editor is gone
    # Editing after opening is refused and changes nothing.
    refused = alice.post(url("session_edit", session_id=draft.pk), {
        "draft-rubric": "late change", "draft-reviewer_display": "letters"})
    assert refused.status_code == 409 and "cannot edit the draft" in page(refused)
    draft.refresh_from_db()
    assert draft.rubric == "Is add() right?"
    again = alice.post(url("session_open", session_id=draft.pk))
    assert again.status_code == 409 and "cannot open: session" in page(again)


# --- Blinding check and planner -----------------------------------------------------------------

@pytest.fixture
def leaky_draft(host):
    bundle = make_bundle()
    bundle["copies"][0]["content"] = "# Written by Claude for you\ndef add(a, b):\n    return a + b\n"
    return a_session(a_run(host, bundle), "draft")


@pytest.mark.django_db
def test_the_blinding_check_shows_a_planted_match_and_accepts_a_pattern(alice, leaky_draft):
    path = url("blinding", session_id=leaky_draft.pk)
    body = page(alice.get(path))
    assert "# Written by Claude for you" in body  # the match's context
    assert "known product" in body
    assert "Every match (1)" in body
    assert 'value="Claude"' in body  # offered as a suggestion

    response = alice.post(url("redactions", session_id=leaky_draft.pk),
                          {"action": "accept", "accept-patterns": "Claude\nre:gpt-4o(-mini)?\n"})
    assert response.status_code == 303 and response["Location"] == path
    leaky_draft.refresh_from_db()
    assert leaky_draft.redaction_patterns == ["Claude", "re:gpt-4o(-mini)?"]
    body = page(alice.get(path))
    assert "<code>Claude</code>" in body
    assert "<code>c1</code> by builder <code>b1</code>: 1 match, 1 redaction</h4>" in body

    withdrawn = alice.post(url("redactions", session_id=leaky_draft.pk),
                           {"action": "withdraw", "pattern": "Claude"})
    assert withdrawn.status_code == 303
    leaky_draft.refresh_from_db()
    assert leaky_draft.redaction_patterns == ["re:gpt-4o(-mini)?"]

    suggested = alice.post(url("redactions", session_id=leaky_draft.pk),
                           {"action": "suggest", "pattern": "Claude"})
    assert suggested.status_code == 303
    leaky_draft.refresh_from_db()
    assert leaky_draft.redaction_patterns == ["re:gpt-4o(-mini)?", "Claude"]


@pytest.mark.django_db
def test_a_bad_pattern_is_shown_and_kept(alice, leaky_draft):
    response = alice.post(url("redactions", session_id=leaky_draft.pk),
                          {"action": "accept", "accept-patterns": "re:(unclosed"})
    assert response.status_code == 400
    assert "invalid regex" in page(response)
    assert "re:(unclosed</textarea>" in page(response)
    leaky_draft.refresh_from_db()
    assert leaky_draft.redaction_patterns == []


@pytest.mark.django_db
def test_redactions_are_frozen_once_open(alice, open_session):
    body = page(alice.get(url("blinding", session_id=open_session.pk)))
    assert "part of the frozen protocol" in body and 'name="accept-patterns"' not in body
    response = alice.post(url("redactions", session_id=open_session.pk),
                          {"action": "accept", "accept-patterns": "Claude"})
    assert response.status_code == 409 and "cannot change redactions" in page(response)


@pytest.mark.django_db
def test_the_planner_shows_n_with_the_formula(alice, draft):
    path = url("planner", session_id=draft.pk)
    body = page(alice.get(path, {"psi": "0.25", "delta": "0.15"}))
    assert "n = 85 paired verdicts" in body
    assert "√(ψ − δ²)" in body and "1.9600" in body and "0.8416" in body
    assert "n = 312" in page(alice.get(path, {"psi": "0.10", "delta": "0.05"}))
    impossible = alice.get(path, {"psi": "0.01", "delta": "0.15"})
    assert impossible.status_code == 400
    assert "psi must exceed delta squared" in page(impossible)
    assert 'value="0.01"' in page(impossible)  # the input is kept
    words = alice.get(path, {"psi": "a quarter", "delta": "0.15"})
    assert words.status_code == 400 and "Enter a number" in page(words)


# --- Amendments ---------------------------------------------------------------------------------

@pytest.mark.django_db
def test_amending_the_preregistration(alice, open_session, run):
    draft = a_session(run, "draft")
    response = alice.post(url("prereg_amend", session_id=open_session.pk),
                          {"amend-text": "We also look at order effects."})
    assert response.status_code == 303
    amendment = PreregAmendment.objects.get()
    assert amendment.before_first_verdict
    body = page(alice.get(url("session", session_id=open_session.pk)))
    assert "We also look at order effects." in body and "before the first verdict" in body
    refused = alice.post(url("prereg_amend", session_id=draft.pk), {"amend-text": "too early"})
    assert refused.status_code == 409 and "cannot amend: session" in page(refused)
    bad_rules = alice.post(url("prereg_amend", session_id=open_session.pk), {
        "amend-text": 'Kept text\n```rules\n[{"name": "x", "metric": "m", "op": ">", '
                      '"threshold": 1}]\n```\n'})
    assert bad_rules.status_code == 400
    assert "unknown metric" in page(bad_rules) and "Kept text" in page(bad_rules)
    assert PreregAmendment.objects.count() == 1


# --- Invitations --------------------------------------------------------------------------------

@pytest.mark.django_db
def test_inviting_by_name_shows_an_absolute_join_link_once(alice, open_session):
    response = alice.post(url("invite_name", session_id=open_session.pk),
                          {"invite-name": "Ada Lovelace"})
    assert response.status_code == 303
    shown = alice.get(response["Location"])
    link = once_value(shown)
    assert link.startswith(f"{settings.SITE_URL}/join/")
    assert "shown once" in page(shown) and shown["Cache-Control"] == "no-store"
    again = alice.get(url("invitations", session_id=open_session.pk))
    assert once_value(again) is None and link not in page(again)
    assert "Ada Lovelace" in page(again) and "link not used yet" in page(again)
    token = link.rsplit("/", 1)[1]
    assert not Credential.objects.filter(token_sha256=token).exists()  # stored hashed

    admission = join_token_exchange(token=token)
    assert admission.judge.display_name == "Ada Lovelace"
    assert f"joined as {admission.judge.pseudonym}" in page(
        alice.get(url("invitations", session_id=open_session.pk)))


@pytest.mark.django_db
def test_listing_github_logins(alice, open_session):
    response = alice.post(url("invite_github", session_id=open_session.pk),
                          {"github-logins": "octocat, @hubot\noctocat"})
    assert response.status_code == 303
    assert sorted(Invitation.objects.values_list("github_login", flat=True)) == ["hubot", "octocat"]
    again = alice.post(url("invite_github", session_id=open_session.pk),
                       {"github-logins": "octocat monalisa"})
    assert again.status_code == 409
    assert "already listed" in page(again)
    assert "\noctocat</textarea>" in page(again)  # the refused login stays in the box
    assert "Listed: monalisa" in page(again)
    assert Invitation.objects.count() == 3


# --- Guests -------------------------------------------------------------------------------------

@pytest.mark.django_db
def test_allowing_guests_shows_a_working_code_once(alice, open_session):
    path = url("guests", session_id=open_session.pk)
    response = alice.post(path, {"action": "allow"})
    assert response.status_code == 303
    shown = alice.get(path)
    code = once_value(shown)
    assert "stored only as a hash" in page(shown)
    assert f"{settings.SITE_URL}/guest/" in page(shown)
    assert once_value(alice.get(path)) is None
    admission = guest_join(code=code, display_name="Walk-in", client_address="192.0.2.1")
    assert admission.judge.admitted_as == AdmittedAs.GUEST

    alice.post(path, {"action": "rotate"})
    rotated = once_value(alice.get(path))
    assert rotated and rotated != code
    with pytest.raises(Refused):
        guest_join(code=code, display_name="Late", client_address="192.0.2.2")

    assert alice.post(path, {"action": "cap", "cap-cap": "1"}).status_code == 303
    open_session.refresh_from_db()
    assert open_session.guest_cap == 1
    bad_cap = alice.post(path, {"action": "cap", "cap-cap": "0"})
    assert bad_cap.status_code == 400 and 'value="0"' in page(bad_cap)

    alice.post(path, {"action": "deny"})
    open_session.refresh_from_db()
    assert not open_session.guests_allowed
    with pytest.raises(Refused):
        guest_join(code=rotated, display_name="Denied", client_address="192.0.2.3")


# --- Judges and progress ------------------------------------------------------------------------

@pytest.mark.django_db
def test_progress_shows_counts_and_locks_and_never_verdict_values(alice, open_session):
    locked = invite_and_join(open_session, "Locked Judge").judge
    judge_everything(locked, value="fail")
    halfway = invite_and_join(open_session, "Halfway Judge").judge
    for assignment in halfway.assignments.all()[:2]:
        verdict_record(judge=halfway, code=assignment.code, phase=1, value="pass",
                       reason=CANARY_REASON)
    response = alice.get(url("judges", session_id=open_session.pk))
    body = page(response)
    # Locks on one line beside the counts, the times in the accessible text (issue 17).
    assert ">6 of 6 answered</td>" in body and ">2 of 6 answered</td>" in body
    assert "phase 1 locked 20" in body and "phase 1 not locked; phase 2 not locked" in body
    assert "1&nbsp;✓ 2&nbsp;·" in body and "1&nbsp;· 2&nbsp;·" in body
    assert "Locked Judge" in body and "Halfway Judge" in body
    assert CANARY_REASON not in body
    assert not re.search(r"\b(pass|fail)\b", body, re.IGNORECASE)
    for page_name in ("session", "judges", "invitations", "guests"):
        other = page(alice.get(url(page_name, session_id=open_session.pk)))
        assert CANARY_REASON not in other


@pytest.mark.django_db
def test_progress_of_a_findings_session_shows_no_verdict_values(alice, run):
    session = a_session(run, "open", kind="findings")
    judge = invite_and_join(session).judge
    judge_everything(judge, value="false_alarm")
    body = page(alice.get(url("judges", session_id=session.pk)))
    assert "2 of 2 answered" in body
    assert "false_alarm" not in body and "false alarm" not in body.lower()
    assert CANARY_REASON not in body


@pytest.mark.django_db
def test_reissuing_a_resume_link(alice, open_session):
    admission = invite_and_join(open_session)
    response = alice.post(url("judge_reissue", session_id=open_session.pk, number=1))
    assert response.status_code == 303
    link = once_value(alice.get(response["Location"]))
    assert link.startswith(f"{settings.SITE_URL}/resume/")
    assert judge_by_resume_token(link.rsplit("/", 1)[1]) == admission.judge
    with pytest.raises(Refused):
        judge_by_resume_token(admission.resume_token)


@pytest.mark.django_db
def test_removing_a_judge_needs_confirmation_and_stops_their_link(alice, open_session):
    admission = invite_and_join(open_session)
    path = url("judge_remove", session_id=open_session.pk, number=1)
    confirm = alice.get(path)
    assert "Remove judge J01 (Judge Dredd)?" in page(confirm)
    assert 'type="checkbox" name="confirm"' in page(confirm)
    unconfirmed = alice.post(path, {})
    assert unconfirmed.status_code == 400 and "Tick the box" in page(unconfirmed)
    assert judge_by_resume_token(admission.resume_token) == admission.judge
    response = alice.post(path, {"confirm": "on"})
    assert response.status_code == 303
    admission.judge.refresh_from_db()
    assert admission.judge.status == JudgeStatus.REMOVED
    with pytest.raises(Refused):
        judge_by_resume_token(admission.resume_token)
    body = page(alice.get(url("judges", session_id=open_session.pk)))
    assert "removed" in body and "judges/1/reissue" not in body


@pytest.mark.django_db
def test_erasing_a_judges_identity(alice, open_session):
    invite_and_join(open_session, name="Erasable Person")
    path = url("judge_erase", session_id=open_session.pk, number=1)
    assert alice.post(path, {}).status_code == 400
    assert Judge.objects.get().display_name == "Erasable Person"
    assert alice.post(path, {"confirm": "on"}).status_code == 303
    judge = Judge.objects.get()
    assert judge.display_name == "" and judge.erased_at is not None
    assert judge.status == JudgeStatus.ACTIVE  # erasure keeps the judge and their verdicts
    for page_name in ("judges", "invitations"):
        assert "Erasable Person" not in page(alice.get(url(page_name, session_id=open_session.pk)))


@pytest.mark.django_db
def test_the_host_judges_their_own_session(alice, host, open_session):
    response = alice.post(url("host_join", session_id=open_session.pk))
    assert response.status_code == 303
    judge = Judge.objects.get(user=host.user)
    assert judge.admitted_as == AdmittedAs.HOST
    assert alice.session[JUDGE_SESSION_KEY.format(url_id=open_session.url_id)] == judge_binding(judge)
    shown = alice.get(response["Location"])
    body = page(shown)
    link = once_value(shown)
    assert judge_by_resume_token(link.rsplit("/", 1)[1]) == judge
    assert judge.commitment_sha256 in body and open_session.protocol_sha256 in body
    assert f'href="/s/{open_session.url_id}/"' in body
    # Still signed in as the host; the join button has become a link to the judging pages.
    later = page(alice.get(url("judges", session_id=open_session.pk)))
    assert "You judge this session as J01" in later and link not in later
    twice = alice.post(url("host_join", session_id=open_session.pk))
    assert twice.status_code == 409
    assert Judge.objects.filter(user=host.user).count() == 1


# --- Truth corrections --------------------------------------------------------------------------

@pytest.mark.django_db
def test_correcting_a_truth_label(alice, run):
    copy = run.copies.get(bundle_id="c6")
    path = url("copy_truth", run_id=run.pk, position=copy.position)
    assert "Correct the truth of copy <code>c6</code>" in page(alice.get(path))
    response = alice.post(path, {"truth": "seeded_defect", "note": "it subtracts"})
    assert response.status_code == 303
    copy.refresh_from_db()
    assert (copy.truth, copy.imported_truth) == ("seeded_defect", "unknown")
    correction = TruthCorrection.objects.get()
    assert (correction.old_truth, correction.new_truth) == ("unknown", "seeded_defect")
    run_page = page(alice.get(url("run", run_id=run.pk)))
    assert "it subtracts" in run_page and "(imported: unknown)" in run_page
    same = alice.post(path, {"truth": "seeded_defect", "note": "again, kept"})
    assert same.status_code == 409
    assert "already labelled seeded_defect" in page(same) and "again, kept</textarea>" in page(same)
    finding = run.findings.get(bundle_id="f2")
    finding_path = url("finding_truth", run_id=run.pk, position=finding.position)
    assert alice.post(finding_path, {"truth": "real", "note": "confirmed"}).status_code == 303
    finding.refresh_from_db()
    assert finding.truth == "real"
    wrong_enum = alice.post(finding_path, {"truth": "known_good", "note": "x"})
    assert wrong_enum.status_code == 400 and "Select a valid choice" in page(wrong_enum)
    assert alice.get(url("copy_truth", run_id=run.pk, position=99)).status_code == 404


# --- Close, reopen, reveal; reports -------------------------------------------------------------

@pytest.mark.django_db
def test_close_reopen_and_reveal_with_confirmation(alice, open_session):
    pk = open_session.pk

    def state():
        return Session.objects.get(pk=pk).state

    assert alice.post(url("session_close", session_id=pk)).status_code == 303
    assert state() == "closed"
    assert alice.post(url("session_reopen", session_id=pk)).status_code == 303
    assert state() == "open"
    early = alice.post(url("session_reveal", session_id=pk), {"confirm": "on"})
    assert early.status_code == 409 and "cannot reveal" in page(early)
    alice.post(url("session_close", session_id=pk))
    confirm = alice.get(url("session_reveal", session_id=pk))
    assert "cannot be undone" in page(confirm) and 'name="confirm"' in page(confirm)
    unconfirmed = alice.post(url("session_reveal", session_id=pk), {})
    assert unconfirmed.status_code == 400 and state() == "closed"
    assert alice.post(url("session_reveal", session_id=pk), {"confirm": "on"}).status_code == 303
    assert state() == "revealed"
    body = page(alice.get(url("session", session_id=pk)))
    assert url("report", session_id=pk, fmt="csv") in body
    assert "Reopen" not in body
    assert AuditEvent.objects.filter(session_id=pk, action="session.revealed").count() == 1


@pytest.mark.django_db(transaction=True)
def test_report_downloads(alice, full_session, report_builders):
    pk = full_session.pk
    expected = {
        "json": ("application/json", f"blindjudge-session-{pk}-report.json"),
        "csv": ("text/csv; charset=utf-8", f"blindjudge-session-{pk}-report.csv"),
        "anon": ("application/json", f"blindjudge-session-{pk}-report.anon.json"),
        "jsonl": ("application/jsonl", f"blindjudge-session-{pk}-report.jsonl"),
        "anon-jsonl": ("application/jsonl", f"blindjudge-session-{pk}-report.anon.jsonl"),
        "flags": ("text/csv; charset=utf-8", f"blindjudge-session-{pk}-report.flags.csv"),
    }
    bodies = {}
    for fmt, (content_type, filename) in expected.items():
        response = alice.get(url("report", session_id=pk, fmt=fmt))
        assert response.status_code == 200
        assert response["Content-Type"] == content_type
        assert response["Content-Disposition"] == f'attachment; filename="{filename}"'
        assert response["Cache-Control"] == "no-store"
        assert "passwd" not in response["Content-Disposition"]
        assert re.fullmatch(r"build;dur=\d+, build-cpu;dur=\d+", response["Server-Timing"])
        bodies[fmt] = response.getvalue().decode()  # streamed from the builder
        assert int(response["Content-Length"]) == len(bodies[fmt].encode())
    report = json.loads(bodies["json"])
    assert report["run"]["name"] == HOSTILE_NAME  # the name is in the report, never the header
    assert "Leaky Judge" in bodies["json"] and "Leaky Judge" not in bodies["anon"]
    assert json.loads(bodies["anon"])["anonymised"] is True
    assert "Leaky Judge" in bodies["jsonl"] and "Leaky Judge" not in bodies["anon-jsonl"]
    rows = [json.loads(line) for line in bodies["jsonl"].splitlines()]
    assert len(rows) == len(report["verdicts"]) + len(report["reviews"])
    assert bodies["flags"] == ",".join(FLAG_COLUMNS) + "\r\n"  # no flags collected: the header
    # Each format is offered on the session's page, the JSON Lines ones beside the others; the
    # task flags' CSV only where the session collects flags (this one does not).
    session_page = page(alice.get(url("session", session_id=pk)))
    assert not full_session.task_flags
    assert [fmt for fmt in REPORT_FORMATS
            if url("report", session_id=pk, fmt=fmt) not in session_page] == ["flags"]
    assert alice.get(url("report", session_id=pk, fmt="exe")).status_code == 404


@pytest.mark.django_db(transaction=True)
def test_the_html_report_opens_in_the_browser_under_its_own_policy(alice, full_session, report_builders):
    pk = full_session.pk
    response = alice.get(url("report", session_id=pk, fmt="html"))
    assert response.status_code == 200
    assert response["Content-Type"] == "text/html; charset=utf-8"
    assert response["Content-Disposition"] == f'inline; filename="blindjudge-session-{pk}-report.html"'
    # Its own policy, not the site's (which would refuse the page's hashed style block).
    assert response["Content-Security-Policy"] == REPORT_CSP
    assert response["Cache-Control"] == "no-store"
    assert response["Referrer-Policy"] == "no-referrer"
    body = response.getvalue().decode()
    assert body.startswith("<!DOCTYPE html>") and "Leaky Judge" in body
    assert HOSTILE_NAME not in body and "<script" not in body
    assert url("report", session_id=pk, fmt="html") in page(alice.get(url("session", session_id=pk)))


@pytest.mark.django_db(transaction=True)
def test_the_csv_download_neutralises_formulas(alice, host, report_builders):
    bundle = make_bundle(reviews=[
        {"reviewer": "r1", "copy": "c1", "verdict": "pass", "reason": "=HYPERLINK(\"x\")"},
        {"reviewer": "r1", "copy": "c2", "verdict": "fail", "reason": "@SUM(A1)"},
    ])
    session = a_session(a_run(host, bundle), "open")
    judge = invite_and_join(session).judge
    for assignment in judge.assignments.all():
        verdict_record(judge=judge, code=assignment.code, phase=1, value="fail",
                       reason="+1-2" if assignment.item.key == "c2" else "-cmd")
    phase_lock(judge=judge, phase=1)
    advance(session, "revealed")
    response = alice.get(url("report", session_id=session.pk, fmt="csv"))
    rows = list(csv.DictReader(io.StringIO(response.getvalue().decode())))
    reasons = {row["reason"] for row in rows}
    assert {"'=HYPERLINK(\"x\")", "'@SUM(A1)", "'+1-2", "'-cmd"} <= reasons
    assert not any(reason.startswith(("=", "+", "-", "@")) for reason in reasons)


# Issue 12: besides = + - @, tab and CR, a cell may start with whitespace a spreadsheet trims
# (space, no-break space, newline), a `;` or a full-width formula sign.
MORE_FORMULA_PREFIXES = (" ", "\u00a0", "\n", ";", "\uff1d", "\uff0b", "\uff0d", "\uff20",
                         "\u3000")


@pytest.mark.django_db(transaction=True)
def test_the_csv_download_neutralises_cells_starting_with_whitespace_semicolons_and_wide_signs(
        alice, host, report_builders):
    pairs = [(r, c) for r in ("r1", "r2") for c in ("c1", "c2", "c3", "c4", "c5", "c6")]
    reasons = {pair: prefix + "=1+2" for pair, prefix in zip(pairs, MORE_FORMULA_PREFIXES, strict=False)}
    bundle = make_bundle(reviews=[
        {"reviewer": r, "copy": c, "verdict": "pass", "reason": reason}
        for (r, c), reason in reasons.items()])
    session = a_session(a_run(host, bundle), "open")
    judge = invite_and_join(session).judge
    for assignment, prefix in zip(judge.assignments.order_by("position"), MORE_FORMULA_PREFIXES,
                                  strict=False):
        verdict_record(judge=judge, code=assignment.code, phase=1, value="fail",
                       reason=prefix + "SUM(A1)")
    phase_lock(judge=judge, phase=1)
    advance(session, "revealed")
    response = alice.get(url("report", session_id=session.pk, fmt="csv"))
    rows = list(csv.DictReader(io.StringIO(response.getvalue().decode(), newline="")))
    model = {(row["rater"], row["copy"]): row["reason"] for row in rows
             if row["rater_kind"] == "model"}
    assert model == {pair: "'" + reason for pair, reason in reasons.items()}
    human = sorted(row["reason"] for row in rows if row["rater_kind"] == "human")
    assert human == sorted("'" + prefix + "SUM(A1)" for prefix in MORE_FORMULA_PREFIXES[:6])


@pytest.mark.parametrize("prefix", ["=", "+", "-", "@", "\t", "\r", *MORE_FORMULA_PREFIXES])
def test_each_formula_prefix_is_neutralised(prefix):
    assert neutralise_cell(prefix + "cmd") == "'" + prefix + "cmd"
    assert neutralise_cell("cmd" + prefix) == "cmd" + prefix  # only a leading one counts
    assert neutralise_cell(12.5) == 12.5 and neutralise_cell("") == ""


@pytest.mark.django_db
def test_no_report_before_the_reveal(alice, open_session):
    judge = invite_and_join(open_session).judge
    judge_everything(judge)
    for fmt in REPORT_FORMATS:
        response = alice.get(url("report", session_id=open_session.pk, fmt=fmt))
        assert response.status_code == 409
        assert "Content-Disposition" not in response
        assert "the report exists after the reveal" in page(response)
        assert CANARY_REASON not in page(response)
    assert url("report", session_id=open_session.pk, fmt="json") not in page(
        alice.get(url("session", session_id=open_session.pk)))


# --- Cross-cutting ------------------------------------------------------------------------------

def test_a_forged_cross_site_post_is_refused(opening_processes, host, draft):
    """docs/threats.md case 28: a POST without the CSRF token changes nothing."""
    forger = client_as(host, enforce_csrf_checks=True)
    for name in ("session_open", "session_edit"):
        response = forger.post(url(name, session_id=draft.pk), {"draft-rubric": "forged"})
        assert response.status_code == 403
    draft.refresh_from_db()
    assert draft.state == "draft" and draft.rubric == "Is add() right?"
    # With the token from the page, the same POST goes through.
    forger.get(url("session", session_id=draft.pk))
    token = forger.cookies[settings.CSRF_COOKIE_NAME].value
    response = forger.post(url("session_open", session_id=draft.pk),
                           {"csrfmiddlewaretoken": token})
    assert response.status_code == 303
    assert opened_from_page(draft).state == "open"


@pytest.mark.django_db
def test_host_pages_have_the_nav_no_inline_script_or_style_and_no_store(alice, open_session):
    invite_and_join(open_session)
    for name, kwargs in [("runs", {}), ("run", {"run_id": open_session.run_id}),
                         ("session", {"session_id": open_session.pk}),
                         ("blinding", {"session_id": open_session.pk}),
                         ("planner", {"session_id": open_session.pk}),
                         ("invitations", {"session_id": open_session.pk}),
                         ("guests", {"session_id": open_session.pk}),
                         ("judges", {"session_id": open_session.pk}),
                         ("judge_remove", {"session_id": open_session.pk, "number": 1})]:
        response = alice.get(url(name, **kwargs))
        body = page(response)
        assert response.status_code == 200 and response["Cache-Control"] == "no-store"
        assert f'action="{reverse("account_logout")}"' in body and 'href="/host/"' in body
        assert not re.search(r"<script(?![^>]*\bsrc=)", body), name
        assert not re.search(r"<style|\sstyle=|\son[a-z]+=", body), name
        # Every visible control has a label (its id is some label's `for`).
        labels = set(re.findall(r'<label[^>]*\bfor="([^"]+)"', body))
        for control in re.findall(r"<(?:input|select|textarea)\b[^>]*>", body):
            if 'type="hidden"' in control:
                continue
            control_id = re.search(r'\bid="([^"]+)"', control)
            assert control_id and control_id.group(1) in labels, (name, control)


@pytest.mark.django_db
def test_a_shown_once_value_never_travels_in_a_cookie(alice, open_session):
    response = alice.post(url("invite_name", session_id=open_session.pk),
                          {"invite-name": "Cookie Monster"})
    link = once_value(alice.get(response["Location"]))
    token = link.rsplit("/", 1)[1]
    for morsel in list(response.cookies.values()):
        assert token not in morsel.value


@pytest.mark.django_db
def test_a_bad_copy_in_an_uploaded_bundle_names_the_copy(alice):
    bundle = make_bundle()
    bundle["copies"][1]["content"] = BAD + "\x00"
    response = alice.post(url("run_import"), {"bundle": upload(bundle_bytes(bundle))})
    assert response.status_code == 400
    assert "copies[1].content" in page(response)
    assert Run.objects.count() == 0


@pytest.mark.django_db
def test_signing_out_from_the_host_nav(alice):
    assert alice.get(url("runs")).status_code == 200
    assert alice.post(reverse("account_logout")).status_code == 302
    response = alice.get(url("runs"))
    assert response.status_code == 302 and response["Location"].startswith(settings.LOGIN_URL)
