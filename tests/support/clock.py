"""A pinned clock for answer saves: the server's intervals between a judge's answers
(Verdict.server_seconds) are wall-clock time, and a test that pins a report's bytes, or compares
two builds, pins them too.

    with pinned_answer_clock():
        session, _ = build_revealed(host, ...)

Each answer save is stamped STEPS later than the one before, cycling (under, then over, one
second), from a fixed start: the intervals replay however fast the machine runs the test."""

import itertools
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from unittest import mock

START = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
STEPS = (0.5, 4.0, 0.25, 30.0)


def stepping(start=START, steps=STEPS):
    """A callable giving start, then start plus each step in turn, cycling."""
    times = itertools.accumulate(itertools.cycle(steps), lambda at, step: at + timedelta(seconds=step),
                                 initial=start)
    return lambda: next(times)


@contextmanager
def pinned_answer_clock(start=START, steps=STEPS):
    with mock.patch("judging.services.verdicts.answer_clock", stepping(start, steps)):
        yield
