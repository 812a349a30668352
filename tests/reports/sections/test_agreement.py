"""reports.sections.agreement on hand-made raters × items matrices: Fleiss' kappa over the items
with the most common number of raters, Krippendorff's alpha (nominal) over every pairable item,
each worked out by hand below from their defining formulas, and their change between phases."""

import numpy as np
import pytest

from reports.sections.agreement import AGREEMENT_LABEL, agreement

pytestmark = pytest.mark.pure

# 3 raters × 4 items, -1 no verdict; item 3 has two raters, the others three.
PHASE1 = np.array([[1, 1, 0, 0],
                   [1, 0, 0, -1],
                   [1, 1, 0, 1]])
PHASE2 = np.array([[1, 1, 1, 0],
                   [1, 1, 0, -1],
                   [1, 1, 0, 1]])


def test_kappa_and_alpha_of_each_phase_by_hand():
    result = agreement(PHASE1, PHASE2)
    # Fleiss over items 0-2 (three raters each; item 3 has two). Phase 1, (pass, fail) per item:
    # (0, 3), (1, 2), (3, 0): P_i = 1, (1 + 4 - 3)/6 = 1/3, 1; P̄ = 7/9. Shares: pass 4/9, fail
    # 5/9; P̄e = 41/81; κ = (63/81 − 41/81) / (40/81) = 22/40.
    # Phase 2: (0, 3), (0, 3), (2, 1): P̄ = 7/9; pass 2/9, fail 7/9; P̄e = 53/81; κ = 10/28.
    assert result["fleiss_items"] == 3 and result["fleiss_raters_per_item"] == 3
    assert result["phase1"]["fleiss_kappa"] == pytest.approx(22 / 40)
    assert result["phase2"]["fleiss_kappa"] == pytest.approx(10 / 28)
    # Krippendorff over all four items (11 pairable values). Phase 1: agreeing pairs per unit,
    # Σ n_uc(n_uc − 1)/(m_u − 1): 3, 2/2, 3, 0 -> 7; n_pass 5, n_fail 6;
    # α = 1 − (11 − 1)(11 − 7) / (121 − 25 − 36) = 1 − 40/60 = 1/3.
    # Phase 2: 3, 3, 2/2, 0 -> 7; n_pass 3, n_fail 8; α = 1 − 40 / (121 − 9 − 64) = 1/6.
    assert result["phase1"]["krippendorff_alpha"] == pytest.approx(1 / 3)
    assert result["phase2"]["krippendorff_alpha"] == pytest.approx(1 / 6)
    assert result["delta_fleiss_kappa"] == pytest.approx(10 / 28 - 22 / 40)
    assert result["delta_krippendorff_alpha"] == pytest.approx(1 / 6 - 1 / 3)
    assert result["label"] == AGREEMENT_LABEL == "reported, never used to decide"


def test_unanimous_raters_agree_perfectly_and_do_not_change():
    says = np.array([[1, 1, 0], [1, 1, 0]])
    result = agreement(says, says)
    # Two raters agreeing on every item: P̄ = 1, so κ = 1 and α = 1 (no disagreement at all).
    assert result["phase1"] == result["phase2"] == {"fleiss_kappa": pytest.approx(1.0),
                                                    "krippendorff_alpha": pytest.approx(1.0)}
    assert result["delta_fleiss_kappa"] == 0 and result["delta_krippendorff_alpha"] == 0


def test_every_rating_in_one_category_is_perfect_agreement_by_convention():
    # P̄e = 1 makes κ 0/0 and D_e = 0 makes α 0/0: both are taken as 1 (every rating agrees).
    says = np.array([[0, 0], [0, 0], [0, 0]])
    result = agreement(says, says)
    assert result["phase1"] == {"fleiss_kappa": 1.0, "krippendorff_alpha": 1.0}


def test_no_item_with_two_raters_leaves_both_measures_null():
    # Each rater judged a different item: nothing pairable, no Fleiss subject.
    says = np.array([[1, -1], [-1, 0]])
    result = agreement(says, says)
    assert result["fleiss_items"] == 0 and result["fleiss_raters_per_item"] is None
    assert result["phase1"] == result["phase2"] == {"fleiss_kappa": None, "krippendorff_alpha": None}
    assert result["delta_fleiss_kappa"] is None and result["delta_krippendorff_alpha"] is None


def test_no_items():
    empty = np.zeros((2, 0), dtype=int)
    result = agreement(empty, empty)
    assert result["phase1"] == {"fleiss_kappa": None, "krippendorff_alpha": None}
    assert result["fleiss_items"] == 0 and result["delta_fleiss_kappa"] is None
