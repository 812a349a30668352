"""Every text has a limit (issue 12, items 2 and 10; docs/threats.md cases 35 and 40): checked at
import and in every form, the message naming the place and the limit, nothing written and what
was typed kept; the bundle's error list capped.

Over HTTP, through the host's pages and the judge's item page, as a browser sends them.
"""

import dataclasses
import html
import json

import pytest
from django.conf import settings as django_settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from content.limits import TextLimits
from judging.models import AuditEvent, PreregAmendment, Run, Session, TruthCorrection, Verdict
from judging.services import bundle_limits
from tests.test_settings import manage, printed_setting
from tests.worlds import (
    a_session,
    bundle_bytes,
    client_as,
    codes,
    invite_and_join,
    is_saved_reply,
    make_bundle,
)

MB = 1_000_000


def url(name, **kwargs):
    return reverse(f"host:{name}", kwargs=kwargs)


def upload(raw: bytes):
    return SimpleUploadedFile("bundle.json", raw, content_type="application/json")


@pytest.fixture
def alice(host):
    return client_as(host)


def body(response) -> str:
    return response.content.decode()


# --- At import ------------------------------------------------------------------------------------

@pytest.mark.django_db
def test_megabytes_of_finding_text_review_reason_or_task_are_refused_at_the_upload(alice):
    """Issue 12: a 6 MB finding text or review reason and an 8 MB task imported fine, and the
    judge's item page came back at 166 MB."""
    bundle = make_bundle()
    bundle["findings"][0]["text"] = "x" * (6 * MB)
    bundle["reviews"][1]["reason"] = "\u200b" * (6 * MB)
    bundle["run"]["task"] = "t" * (8 * MB)
    events = AuditEvent.objects.count()
    response = alice.post(url("run_import"), {"bundle": upload(bundle_bytes(bundle))})
    assert response.status_code == 400
    page = body(response)
    for line in ["run.task: 8000000 characters exceeds the limit of 100000 characters",
                 "reviews[1].reason: 6000000 characters exceeds the limit of 20000 characters",
                 "findings[0].text: 6000000 characters exceeds the limit of 20000 characters"]:
        assert f"<li>{html.escape(line)}</li>" in page
    assert len(response.content) < 100_000  # the refusal quotes none of it
    assert Run.objects.count() == 0 and AuditEvent.objects.count() == events


@pytest.mark.django_db
def test_names_ids_notes_and_requests_have_limits_the_settings_change(alice, settings):
    settings.BLINDJUDGE_MAX_NAME_CHARS = 10
    settings.BLINDJUDGE_MAX_ID_CHARS = 4
    settings.BLINDJUDGE_MAX_NOTE_CHARS = 5
    settings.BLINDJUDGE_MAX_REVIEW_REQUEST_BYTES = 50
    bundle = make_bundle()
    bundle["run"]["name"] = "a run name of many words"
    bundle["builders"][0]["family"] = "OpenAI" * 2
    bundle["copies"][0]["id"] = "copy-1"
    bundle["copies"][0]["cluster"] = "cluster"
    bundle["copies"][1]["defect"] = "subtracts"
    bundle["reviews"][0]["authorship_guess"] = "gpt-4o-2024-08-06"
    bundle["reviews"][1]["request"] = json.dumps({"candidate_text": "x" * 60})
    response = alice.post(url("run_import"), {"bundle": upload(bundle_bytes(bundle))})
    assert response.status_code == 400
    page = html.unescape(body(response))
    for line in ["run.name: 24 characters exceeds the limit of 10 characters",
                 "builders[0].model: 17 characters exceeds the limit of 10 characters",
                 "builders[0].family: 12 characters exceeds the limit of 10 characters",
                 "copies[0].id: 6 characters exceeds the limit of 4 characters",
                 "copies[0].cluster: 7 characters exceeds the limit of 4 characters",
                 "copies[1].defect: 9 characters exceeds the limit of 5 characters",
                 "reviews[0].authorship_guess: 17 characters exceeds the limit of 10 characters",
                 "reviews[1].request: 82 bytes exceeds the limit of 50 bytes"]:
        assert line in page, line
    assert Run.objects.count() == 0


@pytest.mark.django_db
def test_the_error_list_on_the_import_page_stops_after_100(alice):
    """Item 10: a million unknown keys gave a 50 MB error page; now 100 lines and a count."""
    bundle = make_bundle()
    bundle["run"].update({f"extra{i:05d}": i for i in range(20_000)})
    response = alice.post(url("run_import"), {"bundle": upload(bundle_bytes(bundle))})
    assert response.status_code == 400
    page = html.unescape(body(response))
    assert page.count('run: unknown field "extra') == 100
    assert 'run: unknown field "extra00099"' in page and "extra00100" not in page
    assert "…and 19,900 more problems; only the first 100 are listed" in page
    assert len(response.content) < 60_000
    assert Run.objects.count() == 0


@pytest.mark.django_db
def test_the_cap_on_listed_errors_is_a_setting(alice, settings):
    settings.BLINDJUDGE_MAX_BUNDLE_ERRORS = 3
    bundle = make_bundle()
    bundle["run"].update({f"extra{i}": i for i in range(5)})
    page = html.unescape(body(alice.post(url("run_import"), {"bundle": upload(bundle_bytes(bundle))})))
    assert page.count('run: unknown field "extra') == 3
    assert "…and 2 more problems; only the first 3 are listed" in page


# --- In every host form ---------------------------------------------------------------------------

@pytest.mark.django_db
def test_the_session_forms_hold_rubric_and_preregistration_to_their_limits(alice, run, settings):
    settings.BLINDJUDGE_MAX_RUBRIC_CHARS = 20
    settings.BLINDJUDGE_MAX_PREREG_CHARS = 30
    response = alice.post(url("session_create", run_id=run.pk), {
        "kind": "copies", "rubric": "r" * 21, "preregistration": "p" * 31,
        "reviewer_display": "letters"})
    assert response.status_code == 400
    page = body(response)
    assert "Rubric: at most 20 characters (this has 21); nothing was saved." in page
    assert "Preregistration: at most 30 characters (this has 31); nothing was saved." in page
    assert "r" * 21 + "</textarea>" in page and "p" * 31 + "</textarea>" in page  # kept
    assert 'maxlength' not in page.split('name="rubric"')[0].rsplit("<textarea", 1)[-1]
    assert Session.objects.count() == 0

    draft = a_session(run, "draft", rubric="short")
    edit = alice.post(url("session_edit", session_id=draft.pk), {
        "draft-rubric": "r" * 21, "draft-reviewer_display": "letters"})
    assert edit.status_code == 400
    assert "Rubric: at most 20 characters (this has 21)" in body(edit)
    draft.refresh_from_db()
    assert draft.rubric == "short"


@pytest.mark.django_db
def test_a_megabyte_rubric_is_refused_by_default(alice, run):
    response = alice.post(url("session_create", run_id=run.pk), {
        "kind": "copies", "rubric": "r" * MB, "reviewer_display": "letters"})
    assert response.status_code == 400
    assert "Rubric: at most 20,000 characters (this has 1000000)" in body(response)
    assert Session.objects.count() == 0


@pytest.mark.django_db
def test_amendments_and_truth_notes_have_limits(alice, run, open_session, settings):
    settings.BLINDJUDGE_MAX_PREREG_CHARS = 10
    settings.BLINDJUDGE_MAX_NOTE_CHARS = 8
    amend = alice.post(url("prereg_amend", session_id=open_session.pk), {"amend-text": "a" * 11})
    assert amend.status_code == 400
    assert "Amendment: at most 10 characters (this has 11)" in body(amend)
    assert PreregAmendment.objects.count() == 0
    copy = run.copies.get(bundle_id="c6")
    truth = alice.post(url("copy_truth", run_id=run.pk, position=copy.position),
                       {"truth": "seeded_defect", "note": "n" * 9})
    assert truth.status_code == 400
    assert "Why the label is corrected: at most 8 characters (this has 9)" in body(truth)
    assert TruthCorrection.objects.count() == 0


@pytest.mark.django_db
def test_redaction_patterns_have_a_limit_each_and_in_number(alice, draft, settings):
    settings.BLINDJUDGE_MAX_PATTERN_CHARS = 12
    response = alice.post(url("redactions", session_id=draft.pk),
                          {"accept-patterns": "OpenAI\n" + "x" * 13})
    assert response.status_code == 400
    assert "Pattern 2: at most 12 characters (this has 13)." in body(response)
    many = alice.post(url("redactions", session_id=draft.pk),
                      {"accept-patterns": "\n".join(f"p{i}" for i in range(201))})
    assert many.status_code == 400 and "At most 200 patterns at a time (this has 201)." in body(many)
    # A suggested pattern comes as one POST field: the service holds it to the same limit.
    suggested = alice.post(url("redactions", session_id=draft.pk),
                           {"action": "suggest", "pattern": "y" * 13})
    assert suggested.status_code == 400 and "pattern: limited to 12 characters" in body(suggested)
    withdrawn = alice.post(url("redactions", session_id=draft.pk),
                           {"action": "withdraw", "pattern": "z" * 100_000})
    assert withdrawn.status_code == 400
    assert "pattern: limited to 12 characters (this one has 100,000)" in body(withdrawn)
    assert "z" * 100 not in body(withdrawn)  # not quoted back
    draft.refresh_from_db()
    assert draft.redaction_patterns == []


@pytest.mark.django_db
def test_invitation_names_and_github_logins_have_limits(alice, open_session, settings):
    settings.BLINDJUDGE_MAX_DISPLAY_NAME_CHARS = 10
    named = alice.post(url("invite_name", session_id=open_session.pk), {"invite-name": "N" * 11})
    assert named.status_code == 400
    assert "Invitee&#x27;s name: at most 10 characters (this has 11)" in body(named)
    logins = alice.post(url("invite_github", session_id=open_session.pk),
                        {"github-logins": "octocat " + "x" * 40 + " -bad-"})
    assert logins.status_code == 400
    assert ("Not a GitHub login (1 to 39 letters, digits or single hyphens): "
            f"&quot;{'x' * 40}&quot;, &quot;-bad-&quot;.") in body(logins)
    assert open_session.invitations.count() == 0


# --- The judge's reason ----------------------------------------------------------------------------

@pytest.mark.django_db
def test_the_judges_reason_has_the_configured_limit(open_session, settings):
    settings.BLINDJUDGE_MAX_VERDICT_REASON_CHARS = 50
    judge = invite_and_join(open_session).judge
    browser = client_as(judge)
    path = reverse("judge_item", kwargs={"url_id": open_session.url_id, "code": codes(judge)[0]})
    saved = browser.post(path, {"verdict": "pass", "reason": "r" * 51, "phase": 1},
                        HTTP_ACCEPT="application/json")
    assert saved.status_code == 400
    assert saved.json() == {"saved": False, "error": "invalid",
                            "message": "reason: limited to 50 characters (this one has 51)"}
    form = browser.post(path, {"verdict": "pass", "reason": "r" * 51, "phase": 1, "go": "stay"})
    assert form.status_code == 400
    assert "reason: limited to 50 characters (this one has 51)" in body(form)
    assert "r" * 51 + "</textarea>" in body(form)  # what was typed is kept
    # The page states the limit in force and never lets the browser cut a paste short silently.
    page = body(browser.get(path))
    assert "up to 50 characters" in page
    assert "maxlength" not in page.split('id="reason"')[1].split(">")[0]
    assert Verdict.objects.count() == 0
    assert is_saved_reply(browser.post(path, {"verdict": "pass", "reason": "r" * 50, "phase": 1},
                                       HTTP_ACCEPT="application/json").json())


# --- The settings ----------------------------------------------------------------------------------

def test_the_bundle_limits_defaults_are_the_settings_defaults():
    assert dataclasses.asdict(bundle_limits()) == dataclasses.asdict(TextLimits())
    assert django_settings.BLINDJUDGE_MAX_VERDICT_REASON_CHARS == 10_000


def test_each_limit_comes_from_the_environment_and_bad_values_fail_loudly(tmp_path):
    assert printed_setting(
        "settings.BLINDJUDGE_MAX_TASK_CHARS, settings.BLINDJUDGE_MAX_REVIEW_REQUEST_BYTES",
        {"BLINDJUDGE_MAX_TASK_CHARS": "5000", "BLINDJUDGE_MAX_REVIEW_REQUEST_BYTES": "1024"},
        tmp_path) == "5000 1024"
    for env, message in [
            ({"BLINDJUDGE_MAX_FINDING_CHARS": "0"}, "BLINDJUDGE_MAX_FINDING_CHARS='0': must be at least 1"),
            ({"BLINDJUDGE_MAX_ID_CHARS": "201"},
             "BLINDJUDGE_MAX_ID_CHARS=201: at most 200 (the database column's size)")]:
        result = manage("check", env=env, tmp_path=tmp_path)
        assert result.returncode != 0 and message in result.stderr
