"""Session lifecycle and runs as services: create, redactions, open, amend, close, reopen,
reveal, truth corrections."""

import pytest

from blindjudge.errors import Conflict, Invalid, NotFound
from content.canonical import canonical_sha256, sha256_hex
from judging.models import AuditEvent, Session, TruthCorrection
from judging.selectors.host import run_for_host, session_for_host
from judging.services import (
    guests_configure,
    prereg_amend,
    redactions_accept,
    redactions_withdraw,
    session_close,
    session_create,
    session_open,
    session_reopen,
    session_reveal,
    session_update_draft,
    truth_correct,
)
from tests.support.verdicts import verdict_record
from tests.worlds import a_run, make_bundle

RULES = """Predictions first.

```rules
[{"name": "herding", "metric": "delta_fleiss_kappa", "op": ">=", "threshold": 0.1,
  "and": {"metric": "delta_recall", "op": "<=", "threshold": 0.0}}]
```
"""


def test_a_draft_has_one_item_per_copy_and_a_random_url_id(run):
    created = session_create(run=run, kind="copies", actor="test")
    session = created.session
    assert session.state == "draft"
    assert sorted(session.items.values_list("key", flat=True)) == [f"c{i}" for i in range(1, 7)]
    assert len(session.url_id) == 22 and not session.url_id.isdigit()
    assert created.guest_code is None
    other = session_create(run=run, kind="copies", actor="test").session
    assert other.url_id != session.url_id and other.allocation_seed != session.allocation_seed


def test_a_findings_session_has_one_item_per_finding(run):
    session = session_create(run=run, kind="findings", actor="test").session
    assert sorted(session.items.values_list("key", flat=True)) == ["f1", "f2"]


@pytest.mark.parametrize("kwargs, message", [
    ({"kind": "votes"}, 'kind "votes" is not one of copies, findings'),
    ({"kind": "copies", "items_per_judge": 0}, "items per judge: 0 is outside 1..6"),
    ({"kind": "copies", "items_per_judge": 7}, "items per judge: 7 is outside 1..6"),
    ({"kind": "copies", "guest_cap": 0}, "guest cap: must be between 1 and 100000"),
    ({"kind": "copies", "draw_seed": "xyz"}, "draw seed: expected 64 hexadecimal characters"),
    ({"kind": "copies", "reviewer_display": "names"},
     'reviewer "r2" shares a model or family with a builder'),
    ({"kind": "copies", "preregistration": '```rules\n[{"name": "x", "metric": "vibes", '
      '"op": ">=", "threshold": 1}]\n```\n'}, 'rules[0].metric: unknown metric "vibes"'),
])
def test_session_create_refusals(run, kwargs, message):
    with pytest.raises(Invalid) as error:
        session_create(run=run, actor="test", **kwargs)
    assert message in error.value.message
    assert not Session.objects.exists()


@pytest.mark.parametrize("setting, value", [
    ("items_per_judge", 0), ("items_per_judge", 7), ("items_per_judge", True),
    ("items_per_judge", "3"), ("reviewer_display", "names"), ("reviewer_display", "emoji"),
    ("preregistration", '```rules\n[{"name": "x", "metric": "vibes", "op": ">=", "threshold": 1}]\n```\n'),
    ("rubric", "x" * 200_001), ("preregistration", "nul \x00 here"),
])
def test_creating_and_editing_a_draft_refuse_a_setting_with_the_same_message(run, setting, value):
    """The draft's settings are checked in one place: creating a session with a bad value and
    editing a draft to it give one message, and neither writes anything."""
    with pytest.raises(Invalid) as created:
        session_create(run=run, kind="copies", actor="test", **{setting: value})
    draft = session_create(run=run, kind="copies", actor="test").session
    with pytest.raises(Invalid) as edited:
        session_update_draft(session=draft, actor="test", **{setting: value})
    assert edited.value.message == created.value.message
    draft.refresh_from_db()
    assert getattr(draft, setting) != value
    assert Session.objects.count() == 1


def test_reviewer_names_are_allowed_where_no_reviewer_names_a_builder(host):
    bundle = make_bundle()
    bundle["reviewers"][1] = {"id": "r2", "model": "mistral-large", "family": "Mistral"}
    run = a_run(host, bundle)
    session = session_create(run=run, kind="copies", actor="test",
                             reviewer_display="names").session
    assert session.reviewer_display == "names"


def test_redactions_are_accepted_only_in_draft_and_validated(draft):
    redactions_accept(session=draft, patterns=["OpenAI", "re:gpt-4o\\S*", "OpenAI"], actor="t")
    draft.refresh_from_db()
    assert draft.redaction_patterns == ["OpenAI", "re:gpt-4o\\S*"]
    with pytest.raises(Invalid):
        redactions_accept(session=draft, patterns=["re:("], actor="t")
    redactions_withdraw(session=draft, patterns=["OpenAI"], actor="t")
    draft.refresh_from_db()
    assert draft.redaction_patterns == ["re:gpt-4o\\S*"]
    session_open(session=draft, actor="t")
    with pytest.raises(Conflict, match="session .* is open"):
        redactions_accept(session=draft, patterns=["Claude"], actor="t")


def test_opening_freezes_a_canonical_protocol_without_truth_or_builders(run):
    session = session_create(run=run, kind="copies", actor="t", rubric="Rubric\r\nline",
                             preregistration=RULES).session
    session = session_open(session=session, actor="t")
    assert session.state == "open" and session.opened_at
    assert session.protocol_sha256 == canonical_sha256(session.protocol)
    assert session.protocol["rubric"] == "Rubric\nline"
    assert session.decision_rules[0]["name"] == "herding"
    frozen = str(session.protocol)
    for secret in ("gpt-4o", "OpenAI", "known_good", "seeded_defect", "subtracts", "builder"):
        assert secret not in frozen
    # Bundle ids of builders ("b1") could occur by chance inside hex seeds; check the fields.
    assert {key for item in session.protocol["items"] for key in item} == {"key", "task", "copy_sha256"}
    task = run.tasks.get()
    assert session.protocol["tasks"] == [{"key": task.bundle_id, "title": task.title, "format": task.format,
                                          "statement_sha256": sha256_hex(task.statement.encode())}]
    assert AuditEvent.objects.filter(action="session.opened",
                                     details__protocol_sha256=session.protocol_sha256).exists()
    with pytest.raises(Conflict, match="cannot open: session .* is open"):
        session_open(session=session, actor="t")


def test_amendments_are_dated_and_marked_before_or_after_the_first_verdict(open_session, invited_judge):
    before = prereg_amend(session=open_session, text="Clarify: ties count as pass.", actor="t")
    assert before.before_first_verdict is True
    verdict_record(judge=invited_judge, code=invited_judge.assignments.first().code, phase=1, value="pass")
    after = prereg_amend(session=open_session, text=RULES, actor="t")
    assert after.before_first_verdict is False and after.decision_rules
    open_session.refresh_from_db()
    assert open_session.decision_rules == after.decision_rules
    with pytest.raises(Invalid, match="unknown operator"):
        prereg_amend(session=open_session, actor="t", text='```rules\n[{"name": "x", "metric": '
                     '"delta_recall", "op": "=>", "threshold": 0}]\n```\n')
    # The frozen protocol never changes.
    assert open_session.protocol["preregistration"] == ""


def test_amending_a_draft_or_a_revealed_session_is_refused(draft):
    with pytest.raises(Conflict, match="cannot amend"):
        prereg_amend(session=draft, text="x", actor="t")


def test_the_state_machine(open_session):
    with pytest.raises(Conflict, match="cannot reveal: session .* is open"):
        session_reveal(session=open_session, actor="t")
    with pytest.raises(Conflict, match="cannot reopen"):
        session_reopen(session=open_session, actor="t")
    session_close(session=open_session, actor="t")
    session_reopen(session=open_session, actor="t")
    session_close(session=open_session, actor="t")
    revealed = session_reveal(session=open_session, actor="t")
    assert revealed.state == "revealed" and revealed.revealed_at
    for transition in (session_reopen, session_close, session_reveal, session_open):
        with pytest.raises(Conflict):
            transition(session=revealed, actor="t")
    actions = list(AuditEvent.objects.filter(session=revealed, action__startswith="session.")
                   .values_list("action", flat=True))
    assert actions == ["session.created", "session.opened", "session.closed",
                       "session.reopened", "session.closed", "session.revealed"]


def test_truth_corrections_keep_both_versions(run):
    correction = truth_correct(run=run, item="c6", truth="seeded_defect", note="tests found it",
                               actor="t")
    copy = run.copies.get(bundle_id="c6")
    assert (copy.imported_truth, copy.truth) == ("unknown", "seeded_defect")
    assert (correction.old_truth, correction.new_truth) == ("unknown", "seeded_defect")
    truth_correct(run=run, item="f2", truth="real", note="on a second look", actor="t")
    assert run.findings.get(bundle_id="f2").imported_truth == "false_alarm"
    assert TruthCorrection.objects.count() == 2
    with pytest.raises(Invalid, match='truth "real" is not one of'):
        truth_correct(run=run, item="c1", truth="real", note="x", actor="t")
    with pytest.raises(NotFound, match='no copy or finding "c99"'):
        truth_correct(run=run, item="c99", truth="known_good", note="x", actor="t")
    with pytest.raises(Invalid, match="say why"):
        truth_correct(run=run, item="c1", truth="seeded_defect", note="  ", actor="t")
    with pytest.raises(Conflict, match="already labelled"):
        truth_correct(run=run, item="c1", truth="known_good", note="x", actor="t")


def test_a_host_reaches_only_their_own_runs_and_sessions(draft, run, other_host, host):
    """Case 14: another host's ids are the same NotFound as ids that do not exist."""
    assert session_for_host(host=host, session_id=draft.pk) == draft
    assert run_for_host(host=host, run_id=run.pk) == run
    for session_id in (draft.pk, 999999, "x"):
        with pytest.raises(NotFound):
            session_for_host(host=other_host, session_id=session_id)
    with pytest.raises(NotFound):
        run_for_host(host=other_host, run_id=run.pk)


def test_text_no_database_can_store_is_refused_with_a_clear_message(run, open_session, invited_judge):
    """NUL and lone surrogates: PostgreSQL stores neither; a clear 400 on every database."""
    with pytest.raises(Invalid, match="rubric: contains a NUL character at character 1"):
        session_create(run=run, kind="copies", actor="t", rubric="a\x00b")
    with pytest.raises(Invalid, match="preregistration: contains a lone surrogate"):
        session_create(run=run, kind="copies", actor="t", preregistration="a\ud800")
    with pytest.raises(Invalid, match="amendment: contains a NUL"):
        prereg_amend(session=open_session, text="a\x00b", actor="t")
    with pytest.raises(Invalid, match="note: contains a NUL"):
        truth_correct(run=run, item="c1", truth="seeded_defect", note="a\x00b", actor="t")
    with pytest.raises(Invalid, match="reason: contains a NUL"):
        verdict_record(judge=invited_judge, code=invited_judge.assignments.first().code, phase=1,
                       value="pass", reason="a\x00b")
    draft = session_create(run=run, kind="copies", actor="t").session
    with pytest.raises(Invalid, match="pattern: contains a NUL"):
        redactions_accept(session=draft, patterns=["ab\x00c"], actor="t")


def test_guest_caps_are_bounded(run, open_session):
    with pytest.raises(Invalid, match="guest cap: must be between 1 and 100000"):
        session_create(run=run, kind="copies", actor="t", guest_cap=2**31)
    with pytest.raises(Invalid, match="guest cap: must be between 1 and 100000"):
        guests_configure(session=open_session, actor="t", cap=2**31)


# --- session_update_draft (the service behind the host's draft editor) --------------------------

def test_update_draft_changes_only_given_fields(draft):
    session_update_draft(session=draft, actor="test", scorecards=True)
    draft.refresh_from_db()
    assert draft.scorecards and draft.rubric == "Is add() right?"
    session_update_draft(session=draft, actor="test", items_per_judge=None)
    assert AuditEvent.objects.filter(action="session.updated").count() == 1  # no-op not logged


def test_update_draft_validates_like_session_create(draft):
    with pytest.raises(Invalid, match="items per judge: 0 is outside 1..6"):
        session_update_draft(session=draft, actor="test", items_per_judge=0)
    with pytest.raises(Invalid, match="model names would name a builder"):
        session_update_draft(session=draft, actor="test", reviewer_display="names")
    with pytest.raises(Invalid, match="reviewer display"):
        session_update_draft(session=draft, actor="test", reviewer_display="emoji")
    with pytest.raises(Invalid, match="NUL"):
        session_update_draft(session=draft, actor="test", rubric="a\x00b")
    with pytest.raises(Invalid, match="unknown operator"):
        session_update_draft(session=draft, actor="test", rubric="fine", preregistration=(
            '```rules\n[{"name": "x", "metric": "delta_recall", "op": "~", "threshold": 1}]\n```'))
    draft.refresh_from_db()
    assert draft.rubric == "Is add() right?"  # nothing written when any field is refused
    with pytest.raises(Invalid, match="whole number"):
        session_update_draft(session=draft, actor="test", items_per_judge="3")


def test_update_draft_is_refused_once_open(open_session):
    with pytest.raises(Conflict, match="cannot edit the draft"):
        session_update_draft(session=open_session, actor="test", rubric="changed")
    open_session.refresh_from_db()
    assert open_session.rubric == "Is add() right?"
