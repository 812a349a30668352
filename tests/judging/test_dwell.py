"""The server's interval between a judge's answers (issue 30 item 4), at the service level.

Verdict.server_seconds is stamped by item_save on an answer save (the verdict created, or its
value or keep changed) as the time since the judge's previous answer save in the same phase, of
any of their items; saves of the reason or the time alone are no answer saves. The server's clock
is stood in for by a clock the test moves (judging.services.verdicts.answer_clock)."""

from datetime import UTC, datetime, timedelta
from unittest import mock

import pytest

from judging.models import Verdict
from judging.services import item_save, phase_lock
from tests.support.clock import pinned_answer_clock
from tests.support.verdicts import verdict_record
from tests.worlds import answer_all, codes

START = datetime(2026, 12, 5, 9, 0, tzinfo=UTC)


class Clock:
    """The server's time of the next answer save: START plus what the test has moved it on by."""

    def __init__(self):
        self.at = START

    def __call__(self):
        return self.at

    def move(self, seconds: float):
        self.at += timedelta(seconds=seconds)


@pytest.fixture
def clock():
    stand_in = Clock()
    with mock.patch("judging.services.verdicts.answer_clock", stand_in):
        yield stand_in


def stored(judge, code, phase=1) -> tuple:
    row = Verdict.objects.get(assignment__judge=judge, assignment__code=code, phase=phase)
    return row.answered_at, row.server_seconds


def test_the_first_answer_has_no_interval_and_each_next_one_the_time_since_the_last(
        invited_judge, clock):
    a, b, c, *_ = codes(invited_judge)
    verdict_record(judge=invited_judge, code=a, phase=1, value="pass", seconds_spent=40)
    clock.move(12.5)
    verdict_record(judge=invited_judge, code=b, phase=1, value="fail", seconds_spent=12)
    clock.move(0.4)
    verdict_record(judge=invited_judge, code=c, phase=1, value="pass", seconds_spent=0.3)
    assert stored(invited_judge, a) == (START, None)
    assert stored(invited_judge, b) == (START + timedelta(seconds=12.5), 12.5)
    assert stored(invited_judge, c) == (START + timedelta(seconds=12.9), pytest.approx(0.4))


def test_saves_of_the_reason_or_the_time_alone_are_no_answer_saves(invited_judge, clock):
    """Neither stamps the verdict nor counts as the judge's previous save: typing a reason (the
    page autosaves it with the answer unchanged) cannot cut the interval up."""
    a, b, *_ = codes(invited_judge)
    verdict_record(judge=invited_judge, code=a, phase=1, value="pass")
    clock.move(10)
    # The page's autosave of a reason: the same answer, a new reason, more time.
    verdict_record(judge=invited_judge, code=a, phase=1, value="pass", reason="typed", seconds_spent=9)
    clock.move(1)
    item_save(judge=invited_judge, code=a, phase=1, value="", reason="typed more", seconds_spent=10)
    assert stored(invited_judge, a) == (START, None)
    # A reason typed on the next item before its answer (kept as a draft) is none either.
    clock.move(2)
    item_save(judge=invited_judge, code=b, phase=1, value="", reason="first thoughts", seconds_spent=3)
    clock.move(3)
    verdict_record(judge=invited_judge, code=b, phase=1, value="fail", reason="first thoughts")
    assert stored(invited_judge, b) == (START + timedelta(seconds=16), 16.0)


def test_a_changed_answer_is_an_answer_save_measured_from_the_judges_last_one(invited_judge, clock):
    a, b, *_ = codes(invited_judge)
    verdict_record(judge=invited_judge, code=a, phase=1, value="pass")
    clock.move(20)
    verdict_record(judge=invited_judge, code=b, phase=1, value="pass")
    clock.move(0.5)
    verdict_record(judge=invited_judge, code=a, phase=1, value="fail")  # a second thought on a
    assert stored(invited_judge, a) == (START + timedelta(seconds=20.5), 0.5)
    clock.move(4)
    verdict_record(judge=invited_judge, code=a, phase=1, value="fail")  # a replay: nothing new
    assert stored(invited_judge, a) == (START + timedelta(seconds=20.5), 0.5)
    assert stored(invited_judge, b) == (START + timedelta(seconds=20), 20.0)


def test_each_phase_starts_anew_keep_is_an_answer_and_locked_verdicts_never_change(
        invited_judge, clock):
    a, b, *_ = codes(invited_judge)
    answer_all(invited_judge, 1, "pass")
    phase_lock(judge=invited_judge, phase=1)
    phase1 = list(Verdict.objects.filter(assignment__judge=invited_judge, phase=1).order_by("pk")
                  .values_list("pk", "answered_at", "server_seconds", "updated_at"))
    clock.move(300)
    verdict_record(judge=invited_judge, code=a, phase=2, value="keep")
    clock.move(7)
    verdict_record(judge=invited_judge, code=b, phase=2, value="fail")
    # The phase's first answer has no interval, however recent the last phase-1 answer.
    assert stored(invited_judge, a, phase=2) == (START + timedelta(seconds=300), None)
    assert stored(invited_judge, b, phase=2) == (START + timedelta(seconds=307), 7.0)
    assert list(Verdict.objects.filter(assignment__judge=invited_judge, phase=1).order_by("pk")
                .values_list("pk", "answered_at", "server_seconds", "updated_at")) == phase1


def test_a_clock_stepped_back_gives_no_negative_interval(invited_judge, clock):
    a, b, *_ = codes(invited_judge)
    verdict_record(judge=invited_judge, code=a, phase=1, value="pass")
    clock.move(-3)
    verdict_record(judge=invited_judge, code=b, phase=1, value="pass")
    assert stored(invited_judge, b)[1] == 0.0


def test_on_the_real_clock_the_intervals_are_the_gaps_between_the_stamps(invited_judge):
    own = codes(invited_judge)
    answer_all(invited_judge, 1, "pass")
    rows = list(Verdict.objects.filter(assignment__judge=invited_judge, phase=1)
                .order_by("answered_at").values_list("answered_at", "server_seconds"))
    assert len(rows) == len(own) and rows[0][1] is None
    for (before, _), (at, interval) in zip(rows, rows[1:], strict=False):
        assert interval == pytest.approx((at - before).total_seconds(), abs=1e-6) and interval >= 0


def test_the_tests_pinned_clock_steps_as_it_says(invited_judge):
    """tests/support/clock.py, which the report's byte-pinned tests build under."""
    with pinned_answer_clock(steps=(0.5, 4.0)):
        answer_all(invited_judge, 1, "pass")
    intervals = [s for _, s in Verdict.objects.filter(assignment__judge=invited_judge, phase=1)
                 .order_by("answered_at").values_list("answered_at", "server_seconds")]
    assert intervals == [None] + [(0.5, 4.0)[n % 2] for n in range(len(intervals) - 1)]
