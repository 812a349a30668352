"""reports.sections.phase_shift on hand-made data: per judge and truth class (each truth version)
the pairs, right in each phase, the discordant counts worked out by hand and McNemar's exact p
(scipy's binomial test); judges without a pair left out; the pooled figures passed through."""

import pytest

from reports.sections.phase_shift import phase_shift, shift_judges
from tests.reports.sections.arrays import (
    builder,
    bundle,
    copy,
    correction,
    item,
    judge,
    mcnemar_p,
    report_data,
    task,
)

pytestmark = pytest.mark.pure

T = task("t1")
B = builder("b1", "gpt-4o", "OpenAI")


def row(pairs, right1, right2, towards, away):
    return {"pairs": pairs, "phase1_correct": right1, "phase2_correct": right2,
            "towards_truth": towards, "away_from_truth": away,
            "p_value": pytest.approx(mcnemar_p(towards, away))}


def test_discordant_counts_and_mcnemar_per_judge_class_and_version_by_hand():
    d1, d2, d3 = (copy(f"d{n}", T, B, "seeded_defect") for n in (1, 2, 3))
    g1 = copy("g1", T, B, "known_good")
    g2 = copy("g2", T, B, "tests_pass", imported_truth="tests_fail")
    u1 = copy("u1", T, B, "unknown")
    copies = [d1, d2, d3, g1, g2, u1]
    data = report_data(
        bundle(tasks=[T], builders=[B], copies=copies,
               corrections=[correction(g2, "tests_fail", "tests_pass")]),
        items=[item(c) for c in copies],
        judges=[judge("J1"), judge("J2", locked=(True, False)), judge("G1", admitted_as="guest")],
        grid={1: ["PPFPFF", "FFFPPP", "F....."], 2: ["FFFPPF", "......", "P....."]})
    j1, g1_entry = shift_judges(data)  # J2 locked phase 1 only: no pair, not listed
    assert (j1["judge"], j1["group"]) == ("J1", "invited")
    assert (g1_entry["judge"], g1_entry["group"]) == ("G1", "guest")
    # J1 current: defective d1 d2 d3, phase 1 P P F (d3 right), phase 2 F F F (all right):
    # towards d1, d2; away none. Good g1 g2, phase 1 P F (g1 right), phase 2 P P: towards g2.
    # u1 (unknown truth) is paired and counts nowhere.
    assert j1["versions"]["current"] == {"defective": row(3, 1, 3, 2, 0), "good": row(2, 1, 2, 1, 0)}
    # Imported, g2 defective: defective d1 d2 d3 g2, phase 1 right d3, g2; phase 2 right d1 d2 d3:
    # towards d1, d2; away g2. Good g1 alone, right both times.
    assert j1["versions"]["imported"] == {"defective": row(4, 2, 3, 2, 1), "good": row(1, 1, 1, 0, 0)}
    # The guest moved away from truth on d1.
    assert g1_entry["versions"]["current"] == {"defective": row(1, 1, 0, 0, 1), "good": row(0, 0, 0, 0, 0)}
    assert g1_entry["versions"]["current"]["good"]["p_value"] == 1.0  # no discordant pair, no evidence


def test_a_judge_whose_only_pairs_are_of_unknown_truth_is_not_listed():
    """Pairs are of known truth (the definitions say so): a judge who paired only copies of unknown
    truth has none, and is left out as a judge without a pair is, not listed with zero counts."""
    d1, u1, u2 = copy("d1", T, B, "seeded_defect"), copy("u1", T, B, "unknown"), \
        copy("u2", T, B, "unknown")
    data = report_data(bundle(tasks=[T], builders=[B], copies=[d1, u1, u2]),
                       items=[item(c) for c in (d1, u1, u2)], judges=[judge("J1"), judge("J2")],
                       grid={1: ["PFF", ".PF"], 2: ["FFP", ".PP"]})
    [entry] = shift_judges(data)
    assert entry["judge"] == "J1"
    assert entry["versions"]["current"] == {"defective": row(1, 0, 1, 1, 0), "good": row(0, 0, 0, 0, 0)}


def test_mcnemar_on_seven_towards_and_one_away():
    copies = [copy(f"d{n}", T, B, "seeded_defect") for n in range(9)]
    # Item 0 right then wrong; items 1-7 wrong then right; item 8 right both times.
    data = report_data(bundle(tasks=[T], builders=[B], copies=copies),
                       items=[item(c) for c in copies], judges=[judge("J1")],
                       grid={1: ["FPPPPPPPF"], 2: ["PFFFFFFFF"]})
    [entry] = shift_judges(data)
    assert list(entry["versions"]) == ["current"]  # no correction: current truth only
    counted = entry["versions"]["current"]["defective"]
    assert (counted["towards_truth"], counted["away_from_truth"]) == (7, 1)
    # Two-sided exact: 2 · (C(8,0) + C(8,1)) / 2^8 = 18/256.
    assert counted["p_value"] == pytest.approx(18 / 256)


def test_no_judges_and_the_pooled_figures_as_given():
    data = report_data(bundle(tasks=[T], builders=[B], copies=[]))
    pooled = {"invited": {"judges_in_group": 3}}
    section = phase_shift(data, pooled)
    assert section["judges"] == [] and section["pooled"] is pooled
    assert set(section["definitions"]) == {"pairs", "towards_truth", "away_from_truth", "p_value",
                                           "pooled", "agreement", "order_effects"}
