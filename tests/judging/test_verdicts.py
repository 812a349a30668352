"""The verdict state machine at the service level: docs/threats.md cases 24, 25, 27."""

import pytest

from blindjudge.errors import Conflict, Invalid, NotFound
from judging.models import Verdict
from judging.services import judge_remove, phase_lock, session_reopen
from tests.support.verdicts import verdict_record
from tests.worlds import answer_all, codes, invite_and_join


def test_a_verdict_is_saved_as_a_draft_and_can_change_before_the_lock(invited_judge):
    code = codes(invited_judge)[0]
    verdict_record(judge=invited_judge, code=code, phase=1, value="pass", reason="fine", seconds_spent=3)
    verdict_record(judge=invited_judge, code=code, phase=1, value="fail", reason="wrong", seconds_spent=7)
    row = Verdict.objects.get(assignment__judge=invited_judge, assignment__code=code, phase=1)
    assert (row.value, row.reason, row.seconds_spent, row.locked) == ("fail", "wrong", 7, False)


def test_a_replayed_verdict_is_idempotent(invited_judge):
    """Case 27: the same POST twice leaves one row, unchanged by the replay."""
    code = codes(invited_judge)[0]
    first = verdict_record(judge=invited_judge, code=code, phase=1, value="fail", seconds_spent=12)
    again = verdict_record(judge=invited_judge, code=code, phase=1, value="fail", seconds_spent=12)
    assert first.pk == again.pk
    assert Verdict.objects.filter(assignment__judge=invited_judge).count() == 1
    # A stale replay with a smaller running time cannot lower the recorded time.
    verdict_record(judge=invited_judge, code=code, phase=1, value="fail", seconds_spent=5)
    assert Verdict.objects.get(pk=first.pk).seconds_spent == 12


def test_values_outside_the_session_kind_are_refused(invited_judge):
    with pytest.raises(Invalid, match='verdict "real" is not one of pass, fail'):
        verdict_record(judge=invited_judge, code=codes(invited_judge)[0], phase=1, value="real")
    with pytest.raises(Invalid, match="phase: expected 1 or 2"):
        verdict_record(judge=invited_judge, code=codes(invited_judge)[0], phase=3, value="pass")
    assert not Verdict.objects.exists()


def test_another_judges_code_is_the_same_404_as_no_code(open_session, invited_judge):
    other = invite_and_join(open_session, name="Other").judge
    foreign = next(c for c in codes(other) if c not in codes(invited_judge))
    with pytest.raises(NotFound) as foreign_error:
        verdict_record(judge=invited_judge, code=foreign, phase=1, value="pass")
    with pytest.raises(NotFound) as missing_error:
        verdict_record(judge=invited_judge, code="ZZZZ", phase=1, value="pass")
    assert foreign_error.value.message == missing_error.value.message
    assert not Verdict.objects.exists()


def test_locking_needs_every_item_and_then_refuses_changes(invited_judge):
    """Case 24: after the phase-1 lock a verdict is refused with 409 and the row is unchanged."""
    first, *rest = codes(invited_judge)
    verdict_record(judge=invited_judge, code=first, phase=1, value="fail")
    with pytest.raises(Conflict, match=f"{len(rest)} of {len(rest) + 1} items have no phase-1"):
        phase_lock(judge=invited_judge, phase=1)
    answer_all(invited_judge, 1, "pass")
    phase_lock(judge=invited_judge, phase=1)
    assert Verdict.objects.filter(assignment__judge=invited_judge, phase=1, locked=True).count() == len(
        rest) + 1
    with pytest.raises(Conflict) as error:
        verdict_record(judge=invited_judge, code=first, phase=1, value="fail")
    assert error.value.status == 409
    assert Verdict.objects.get(assignment__code=first, assignment__judge=invited_judge,
                               phase=1).value == "pass"
    with pytest.raises(Conflict, match="already locked"):
        phase_lock(judge=invited_judge, phase=1)


def test_phase_two_is_refused_before_the_phase_one_lock(invited_judge):
    """Case 25."""
    with pytest.raises(Conflict, match="phase 2 opens after you lock phase 1"):
        verdict_record(judge=invited_judge, code=codes(invited_judge)[0], phase=2, value="pass")
    with pytest.raises(Conflict, match="phase 2 opens after you lock phase 1"):
        phase_lock(judge=invited_judge, phase=2)
    assert not Verdict.objects.filter(phase=2).exists()


def test_phase_two_keep_copies_the_phase_one_verdict_and_leaves_phase_one_alone(invited_judge):
    answer_all(invited_judge, 1, "fail")
    phase_lock(judge=invited_judge, phase=1)
    first, second, *rest = codes(invited_judge)
    kept = verdict_record(judge=invited_judge, code=first, phase=2, value="keep")
    changed = verdict_record(judge=invited_judge, code=second, phase=2, value="pass")
    assert (kept.value, kept.kept) == ("fail", True)
    assert (changed.value, changed.kept) == ("pass", False)
    for code in rest:
        verdict_record(judge=invited_judge, code=code, phase=2, value="keep")
    phase_lock(judge=invited_judge, phase=2)
    assert set(Verdict.objects.filter(assignment__judge=invited_judge, phase=1).values_list(
        "value", flat=True)) == {"fail"}
    with pytest.raises(Conflict, match="phase 2 is locked"):
        verdict_record(judge=invited_judge, code=first, phase=2, value="pass")


def test_a_closed_session_takes_no_verdicts_until_reopened(invited_judge, closed_session):
    with pytest.raises(Conflict, match="the session is closed"):
        verdict_record(judge=invited_judge, code=codes(invited_judge)[0], phase=1, value="pass")
    session_reopen(session=closed_session, actor="test")
    verdict_record(judge=invited_judge, code=codes(invited_judge)[0], phase=1, value="pass")
    assert Verdict.objects.count() == 1


def test_a_removed_judge_can_no_longer_record(invited_judge):
    judge_remove(judge=invited_judge, actor="test")
    with pytest.raises(NotFound):
        verdict_record(judge=invited_judge, code=codes(invited_judge)[0], phase=1, value="pass")
    with pytest.raises(NotFound):
        phase_lock(judge=invited_judge, phase=1)


def test_reasons_are_bounded(invited_judge):
    with pytest.raises(Invalid, match="reason: limited to"):
        verdict_record(judge=invited_judge, code=codes(invited_judge)[0], phase=1, value="pass",
                       reason="x" * 10_001)
