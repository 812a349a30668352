"""Drafts keep everything (issue 16 item 7): a reason saved before any verdict, a revision per item
and phase that notices a save from another tab, and nothing of it counted as an answer. Also the
two session settings of the judging loop (issue 16 items 1 and 4): one key per decision (outside
the protocol) and the marking of disagreements (a treatment, frozen with the protocol)."""

import pytest

from accounts.models import Judge
from blindjudge.errors import Conflict, Invalid
from judging.models import AuditEvent, ItemDraft, Session, Verdict
from judging.selectors.judge import judge_item, judge_progress
from judging.services import (
    CHANGED_ELSEWHERE,
    ChangedElsewhere,
    item_save,
    phase_lock,
    session_open,
    session_update_draft,
)
from tests.support.verdicts import verdict_record
from tests.worlds import a_session, advance, answer_all, codes, invite_and_join


def answered(judge) -> tuple[int, int]:
    judge = Judge.objects.get(pk=judge.pk)
    return judge.phase1_answered, judge.phase2_answered


def test_a_reason_before_any_verdict_is_kept_as_a_draft_that_answers_nothing(invited_judge):
    code = codes(invited_judge)[0]
    saved = item_save(judge=invited_judge, code=code, phase=1, value="", reason="off by one?",
                      seconds_spent=9)
    assert saved.verdict is None and saved.revision == 1
    assert not Verdict.objects.exists()
    assert answered(invited_judge) == (0, 0)
    assert judge_progress(invited_judge, 1).answered == 0
    # The draft is what the item page shows again after a reload, time included.
    item = judge_item(invited_judge, code)
    assert (item.draft_reason, item.draft_seconds, item.revision, item.verdict) == (
        "off by one?", 9, 1, None)
    # The lock still wants a verdict on that item.
    with pytest.raises(Conflict, match="have no phase-1 verdict"):
        phase_lock(judge=invited_judge, phase=1)
    # The verdict takes the reason with it, and the time saved with the draft.
    saved = item_save(judge=invited_judge, code=code, phase=1, value="fail", reason="off by one",
                      seconds_spent=4, revision=1)
    assert saved.revision == 2 and saved.verdict.reason == "off by one"
    assert saved.verdict.seconds_spent == 9
    assert ItemDraft.objects.get(assignment__code=code, phase=1).reason == ""
    assert answered(invited_judge) == (1, 0)
    # A reason alone once a verdict exists changes the verdict's reason, keeping its value.
    saved = item_save(judge=invited_judge, code=code, phase=1, value="", reason="subtracts",
                      revision=2)
    row = Verdict.objects.get(assignment__code=code, assignment__judge=invited_judge, phase=1)
    assert (row.value, row.reason, saved.revision) == ("fail", "subtracts", 3)


def test_an_empty_save_of_nothing_stores_nothing(invited_judge):
    saved = item_save(judge=invited_judge, code=codes(invited_judge)[0], phase=1, value="")
    assert (saved.verdict, saved.revision) == (None, 0)
    assert not ItemDraft.objects.exists()


def test_verdict_record_still_wants_a_verdict(invited_judge):
    with pytest.raises(Invalid, match="verdict: choose one of pass, fail"):
        verdict_record(judge=invited_judge, code=codes(invited_judge)[0], phase=1, value="")
    assert not ItemDraft.objects.exists()


def test_phase_2_answers_an_item_only_after_an_explicit_choice(invited_judge):
    """Nothing is preselected in phase 2: a reason alone is a draft, "keep" must be chosen."""
    answer_all(invited_judge, 1, "fail", reason="mine", lock=True)
    invited_judge = Judge.objects.get(pk=invited_judge.pk)
    first, *rest = codes(invited_judge)
    item = judge_item(invited_judge, first)
    assert item.phase == 2 and item.verdict is None  # no verdict is chosen for the judge
    item_save(judge=invited_judge, code=first, phase=2, value="", reason="still think so")
    assert answered(invited_judge) == (len(rest) + 1, 0)
    assert not Verdict.objects.filter(phase=2).exists()
    with pytest.raises(Conflict, match=f"{len(rest) + 1} of {len(rest) + 1} items have no phase-2"):
        phase_lock(judge=invited_judge, phase=2)
    kept = item_save(judge=invited_judge, code=first, phase=2, value="keep", reason="still think so")
    assert (kept.verdict.value, kept.verdict.kept, kept.verdict.reason) == ("fail", True,
                                                                            "still think so")
    assert answered(invited_judge) == (len(rest) + 1, 1)


def test_a_save_from_a_page_that_missed_another_save_is_refused_with_what_is_stored(invited_judge):
    code = codes(invited_judge)[0]
    # Tab A and tab B both show the item at revision 0; A saves first.
    assert item_save(judge=invited_judge, code=code, phase=1, value="pass", reason="A",
                     revision=0).revision == 1
    with pytest.raises(ChangedElsewhere) as refused:
        item_save(judge=invited_judge, code=code, phase=1, value="fail", reason="B", revision=0)
    assert refused.value.status == 409 and refused.value.code == "changed_elsewhere"
    assert refused.value.message == CHANGED_ELSEWHERE
    assert refused.value.current == {"verdict": "pass", "reason": "A", "revision": 1}
    row = Verdict.objects.get(assignment__code=code, assignment__judge=invited_judge)
    assert (row.value, row.reason) == ("pass", "A")
    # A reason alone from the stale tab is refused the same way.
    with pytest.raises(ChangedElsewhere):
        item_save(judge=invited_judge, code=code, phase=1, value="", reason="B", revision=0)
    # A replay of what is stored is no conflict, whatever revision it names.
    replay = item_save(judge=invited_judge, code=code, phase=1, value="pass", reason="A",
                       revision=0, seconds_spent=3)
    assert replay.verdict.pk == row.pk
    # "Keep mine": an explicit overwrite saves, and the revision moves on.
    mine = item_save(judge=invited_judge, code=code, phase=1, value="fail", reason="B",
                     revision=0, overwrite=True)
    assert (mine.verdict.value, mine.verdict.reason) == ("fail", "B")
    assert mine.revision > replay.revision
    # Without a revision (a caller that does not track one), the last save wins as before.
    item_save(judge=invited_judge, code=code, phase=1, value="pass", reason="C")
    assert Verdict.objects.get(pk=row.pk).value == "pass"


def test_a_draft_reason_changed_elsewhere_is_noticed_too(invited_judge):
    code = codes(invited_judge)[0]
    item_save(judge=invited_judge, code=code, phase=1, value="", reason="first tab", revision=0)
    with pytest.raises(ChangedElsewhere) as refused:
        item_save(judge=invited_judge, code=code, phase=1, value="", reason="second tab", revision=0)
    assert refused.value.current == {"verdict": "", "reason": "first tab", "revision": 1}


@pytest.mark.parametrize("revision", ["-1", "two", "1.5", -1, True])
def test_a_garbled_revision_is_refused_and_saves_nothing(invited_judge, revision):
    with pytest.raises(Invalid, match="revision: expected the number of the item's last save"):
        item_save(judge=invited_judge, code=codes(invited_judge)[0], phase=1, value="pass",
                  revision=revision)
    assert not Verdict.objects.exists() and not ItemDraft.objects.exists()


def test_drafts_are_not_audited_one_row_per_keystroke(invited_judge):
    """Verdict saves were never audited (the lock is); drafts follow them."""
    before = AuditEvent.objects.count()
    code = codes(invited_judge)[0]
    for typed in ("o", "of", "off", "off by one"):
        item_save(judge=invited_judge, code=code, phase=1, value="", reason=typed)
    assert AuditEvent.objects.count() == before


def test_the_judges_own_median_time_estimates_the_time_left(invited_judge):
    first, second, third, *rest = codes(invited_judge)
    verdict_record(judge=invited_judge, code=first, phase=1, value="pass", seconds_spent=10)
    assert judge_progress(invited_judge, 1).remaining_seconds is None  # one answer is no median
    verdict_record(judge=invited_judge, code=second, phase=1, value="pass", seconds_spent=30)
    verdict_record(judge=invited_judge, code=third, phase=1, value="pass", seconds_spent=20)
    progress = judge_progress(invited_judge, 1)
    assert (progress.answered, progress.total, progress.median_seconds) == (3, len(rest) + 3, 20)
    assert progress.remaining_seconds == 20 * len(rest)


# --- The two settings -------------------------------------------------------------------------------

def test_one_key_per_decision_is_on_by_default_and_a_draft_setting_outside_the_protocol(run):
    draft = a_session(run)
    assert draft.advance_on_key is True and draft.mark_disagreement is False
    session_update_draft(session=draft, actor="host:alice", advance_on_key=False)
    event = AuditEvent.objects.filter(action="session.updated").latest("pk")
    assert event.details == {"fields": ["advance_on_key"]} and event.actor == "host:alice"
    opened = session_open(session=Session.objects.get(pk=draft.pk), actor="t")
    assert opened.advance_on_key is False
    assert "advance_on_key" not in opened.protocol
    with pytest.raises(Conflict):
        session_update_draft(session=opened, actor="t", advance_on_key=True)


def test_marking_disagreements_is_frozen_with_the_protocol(run):
    plain = a_session(run, "open")
    marked = a_session(run, "open", mark_disagreement=True)
    # Only when set, as by_task: absent means unmarked, so every protocol frozen before (and its
    # hash: tests/judging/test_session_rules.py pins some) stays as it was.
    assert "mark_disagreement" not in plain.protocol
    assert marked.protocol["mark_disagreement"] is True
    with pytest.raises(Conflict, match="edit the draft"):
        session_update_draft(session=marked, actor="t", mark_disagreement=False)
    assert Session.objects.get(pk=marked.pk).mark_disagreement is True
    # Set in the draft, it is in the protocol the opening freezes.
    draft = a_session(run)
    session_update_draft(session=draft, actor="t", mark_disagreement=True)
    assert advance(Session.objects.get(pk=draft.pk), "open").protocol["mark_disagreement"] is True


def _code_of_copy(judge, bundle_id: str) -> str:
    return judge.assignments.get(item__copy__bundle_id=bundle_id).code


@pytest.mark.parametrize("mark", [False, True])
def test_reviewer_rows_that_disagree_are_marked_only_when_the_session_marks_them(run, mark):
    session = a_session(run, "open", mark_disagreement=mark)
    judge = invite_and_join(session, "Ada").judge
    answer_all(judge, 1, "pass", lock=True)
    judge = Judge.objects.get(pk=judge.pk)
    rows = judge_item(judge, _code_of_copy(judge, "c1")).reviewer_rows  # r1 pass, r2 fail
    assert [(r.verdict, r.verdict_label) for r in rows] == [("pass", "Pass"), ("fail", "Fail")]
    assert [r.disagrees for r in rows] == [False, mark]


@pytest.mark.parametrize("mark", [False, True])
def test_a_findings_proposed_verdict_is_in_the_choices_words_and_marked_only_when_asked(run, mark):
    session = a_session(run, "open", kind="findings", mark_disagreement=mark)
    judge = invite_and_join(session, "Finn").judge
    answer_all(judge, 1, "false_alarm", lock=True)
    judge = Judge.objects.get(pk=judge.pk)
    item = judge_item(judge, codes(judge)[0])
    assert (item.proposed_verdict, item.proposed_verdict_label) == ("confirmed", "Real")
    assert item.proposed_disagrees is mark


def test_the_report_reads_verdicts_only_never_a_draft_reason(run):
    """A reason saved before any verdict is the judge's scratch work: the report (and with it every
    export) is the same byte for byte with or without it."""
    from reports.build import build_report  # noqa: PLC0415 - numpy stays out of the other tests
    from reports.export import to_json  # noqa: PLC0415
    from tests.reports.test_report_golden import pinned  # noqa: PLC0415

    session = a_session(run, "open")
    judge = invite_and_join(session, "Ada").judge
    first, second, *rest = codes(judge)
    verdict_record(judge=judge, code=first, phase=1, value="fail", reason="subtracts")
    item_save(judge=judge, code=second, phase=1, value="", reason="DRAFT-CANARY", seconds_spent=5)
    session = advance(Session.objects.get(pk=session.pk), "revealed")
    with_draft = pinned(to_json(build_report(session)).decode("utf-8"), session)
    assert "DRAFT-CANARY" not in with_draft and "subtracts" in with_draft
    ItemDraft.objects.all().delete()
    assert pinned(to_json(build_report(session)).decode("utf-8"), session) == with_draft
