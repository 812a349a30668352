"""reports.sections.order_effects on hand-made matrices: accuracy by the third of each judge's
drawn order, per phase, with Wilson intervals (scipy); unassigned items and unknown truth never
counted."""

import numpy as np
import pytest

from reports.sections.order_effects import order_effects
from tests.reports.sections.arrays import wilson

pytestmark = pytest.mark.pure


def matrices(says1, says2, truth):
    """The says and right matrices of two phases over items of `truth` (1, 0, -1 unknown)."""
    truth = np.array(truth)
    says = {1: np.array(says1), 2: np.array(says2)}
    right = {p: (says[p] >= 0) & ((says[p] == 1) == (truth == 1)[None, :]) for p in (1, 2)}
    return says, right, truth >= 0


def test_accuracy_by_third_of_the_drawn_order_by_hand():
    # Two judges, six items: defective, good, defective, good, unknown, good.
    says, right, known = matrices(
        [[1, 0, 0, 0, 1, -1], [1, 1, 1, 0, 0, 0]],
        [[1, 0, 1, 0, 1, 1], [0, 1, 1, 0, 0, 0]],
        [1, 0, 1, 0, -1, 0])
    # Judge 0 saw items 0,1 first, 2,3 in the middle, 4,5 last; judge 1 the reverse order.
    thirds = np.array([[0, 0, 1, 1, 2, 2], [2, 2, 1, 1, 0, 0]])
    result = order_effects(says, right, known, thirds)
    # Phase 1. First: j0 items 0 (right), 1 (right); j1 items 4 (unknown, not scored), 5 (right)
    # -> 3/3. Middle: j0 2 (wrong), 3 (right); j1 2 (right), 3 (right) -> 3/4. Last: j0 4
    # (unknown), 5 (no verdict); j1 0 (right), 1 (wrong) -> 1/2.
    assert result["1"] == {"first": pytest.approx(wilson(3, 3)), "middle": pytest.approx(wilson(3, 4)),
                           "last": pytest.approx(wilson(1, 2))}
    # Phase 2. First: j0 0, 1 right; j1 5 right -> 3/3. Middle: j0 2, 3 right; j1 2, 3 right -> 4/4.
    # Last: j0 5 (wrong: good judged fail); j1 0 (wrong), 1 (wrong) -> 0/3.
    assert result["2"] == {"first": pytest.approx(wilson(3, 3)), "middle": pytest.approx(wilson(4, 4)),
                           "last": pytest.approx(wilson(0, 3))}


def test_unassigned_items_and_an_empty_third_count_nothing():
    # One judge with two items of known truth, both in the first third; item 2 unassigned (-1)
    # though a verdict sits in its cell, which must not count in any third.
    says, right, known = matrices([[1, 0, 1]], [[-1, -1, -1]], [1, 1, 1])
    result = order_effects(says, right, known, np.array([[0, 0, -1]]))
    assert result["1"]["first"] == pytest.approx(wilson(1, 2))
    assert result["1"]["middle"] == result["1"]["last"] == wilson(0, 0)
    assert result["2"] == dict.fromkeys(("first", "middle", "last"), wilson(0, 0))


def test_no_judges():
    says, right, known = matrices(np.zeros((0, 2), dtype=int), np.zeros((0, 2), dtype=int), [1, 0])
    result = order_effects(says, right, known, np.zeros((0, 2), dtype=int))
    assert result == {p: dict.fromkeys(("first", "middle", "last"), wilson(0, 0)) for p in ("1", "2")}
