"""reports.sections.pooled on hand-made data: per group of judges (only the groups present, in
the report's order) the pooled effects of the phase shift and their discordant counts worked out
by hand, the two-way bootstrap intervals and the cluster-resampled ones against independent loops
over the same draws, agreement among two or more raters and order effects by third."""

import numpy as np
import pytest

from reports.sections.pooled import pooled_by_group
from tests.reports.sections.arrays import (
    builder,
    bundle,
    cluster_draws,
    copy,
    item,
    judge,
    percentile_95,
    report_data,
    task,
    wilson,
)

pytestmark = pytest.mark.pure

T = task("t1")
B = builder("b1", "gpt-4o", "OpenAI")
NONE = {"value": None, "low": None, "high": None}
# Items d1 d2 (defective), g1 g2 (good), u1 (unknown truth), in this order.
GRID = {1: ["FPPFF", "PPPP.", "F....", "....."],
        2: ["FFPPP", "FPPP.", "P....", "....."]}


def world(clusters=("", "", "", "", "")):
    copies = [copy(name, T, B, truth, cluster=cluster) for name, truth, cluster in zip(
        ("d1", "d2", "g1", "g2", "u1"),
        ("seeded_defect", "tests_fail", "known_good", "tests_pass", "unknown"), clusters, strict=True)]
    judges = [judge("J1"), judge("J2"), judge("G1", admitted_as="guest"),
              judge("R1", status="removed", locked=(False, False))]
    return report_data(bundle(tasks=[T], builders=[B], copies=copies),
                       items=[item(c) for c in copies], judges=judges, grid=GRID)


# The two invited judges' paired verdicts of known truth, right (1) or wrong (0), by hand:
#            d1  d2  g1  g2
# J1 phase 1  1   0   1   0      phase 2  1   1   1   1
# J2 phase 1  0   0   1   1      phase 2  1   0   1   1
RIGHT1 = np.array([[1, 0, 1, 0], [0, 0, 1, 1]])
RIGHT2 = np.array([[1, 1, 1, 1], [1, 0, 1, 1]])
DEFECTIVE = np.array([True, True, False, False])


def metrics(n_d, r1_d, r2_d, both_d, n_g, r1_g, r2_g, both_g):
    def ratio(a, b):
        return a / b if b else float("nan")
    return {"recall_phase1": ratio(r1_d, n_d), "recall_phase2": ratio(r2_d, n_d),
            "delta_recall": ratio(r2_d - r1_d, n_d), "tnr_phase1": ratio(r1_g, n_g),
            "tnr_phase2": ratio(r2_g, n_g), "delta_tnr": ratio(r2_g - r1_g, n_g),
            "shift_towards_truth": ratio(r2_d - both_d + r2_g - both_g, n_d + n_g),
            "shift_away_from_truth": ratio(r1_d - both_d + r1_g - both_g, n_d + n_g)}


def metrics_of(judge_weights, item_weights):
    """The pooled metrics over judges and items counted as often as their weights say."""
    w = np.outer(judge_weights, item_weights)
    d, g = w[:, DEFECTIVE], w[:, ~DEFECTIVE]
    r1d, r2d = RIGHT1[:, DEFECTIVE], RIGHT2[:, DEFECTIVE]
    r1g, r2g = RIGHT1[:, ~DEFECTIVE], RIGHT2[:, ~DEFECTIVE]
    return metrics(d.sum(), (d * r1d).sum(), (d * r2d).sum(), (d * r1d * r2d).sum(),
                   g.sum(), (g * r1g).sum(), (g * r2g).sum(), (g * r1g * r2g).sum())


def test_the_invited_group_s_pooled_effects_by_hand():
    invited = pooled_by_group(world())["invited"]
    assert (invited["judges_in_group"], invited["judges"], invited["items"]) == (2, 2, 4)
    assert invited["paired_verdicts"] == {"defective": 4, "good": 4}
    # Defective: right in phase 1 once (J1 d1), in phase 2 three times, both once: towards 2,
    # away 0. Good: phase 1 three, phase 2 four, both three: towards 1 (J1 g2), away 0.
    assert invited["discordant"] == {"defective": {"towards_truth": 2, "away_from_truth": 0},
                                     "good": {"towards_truth": 1, "away_from_truth": 0}}
    values = {name: e["value"] for name, e in invited["effects"].items()}
    assert values == pytest.approx({
        "recall_phase1": 1 / 4, "recall_phase2": 3 / 4, "delta_recall": 2 / 4,
        "tnr_phase1": 3 / 4, "tnr_phase2": 4 / 4, "delta_tnr": 1 / 4,
        "shift_towards_truth": 3 / 8, "shift_away_from_truth": 0.0})
    assert invited["cluster_resampled"] is None  # no copy names a cluster


def test_the_two_way_bootstrap_against_a_loop_over_judges_and_items_drawn():
    invited = pooled_by_group(world())["invited"]
    rng = np.random.default_rng(0)  # judges drawn first, then items, 2,000 resamples
    judge_draws = rng.integers(0, 2, size=(2000, 2))
    item_draws = rng.integers(0, 4, size=(2000, 4))
    drawn = [metrics_of(np.bincount(j, minlength=2), np.bincount(i, minlength=4))
             for j, i in zip(judge_draws, item_draws, strict=True)]
    for name, estimate in invited["effects"].items():
        low, high = percentile_95([m[name] for m in drawn])
        assert (estimate["low"], estimate["high"]) == pytest.approx((low, high), abs=1e-12), name


def test_clusters_of_copies_resample_whole_clusters_judges_fixed():
    # d1 and g1 in one cluster, d2 and g2 in another; u1 (no cluster) is its own item.
    invited = pooled_by_group(world(clusters=("k1", "k2", "k1", "k2", "")))["invited"]
    clustered = invited["cluster_resampled"]
    assert clustered["clusters"] == 2
    unit_of_item = np.array([0, 1, 0, 1])  # clusters numbered as they first appear: k1, k2
    drawn = [metrics_of(np.ones(2), np.bincount(draw, minlength=2)[unit_of_item])
             for draw in cluster_draws(2)]
    for name, estimate in clustered["effects"].items():
        low, high = percentile_95([m[name] for m in drawn])
        assert estimate["value"] == invited["effects"][name]["value"]
        assert (estimate["low"], estimate["high"]) == pytest.approx((low, high), abs=1e-12), name


def test_agreement_and_order_effects_of_the_group():
    invited = pooled_by_group(world())["invited"]
    # Agreement over the two judges' paired verdicts (u1: J1 alone, not a Fleiss subject).
    # Phase 1 (pass, fail) on d1 d2 g1 g2: (1,1) (2,0) (2,0) (1,1): P̄ = 1/2, P̄e = (6/8)² +
    # (2/8)² = 5/8, κ = −1/3. Phase 2: (0,2) (1,1) (2,0) (2,0): P̄ = 3/4, P̄e = (5/8)² + (3/8)²
    # = 17/32, κ = (24/32 − 17/32) / (15/32) = 7/15.
    agreement = invited["agreement"]
    assert (agreement["fleiss_items"], agreement["fleiss_raters_per_item"]) == (4, 2)
    assert agreement["phase1"]["fleiss_kappa"] == pytest.approx(-1 / 3)
    assert agreement["phase2"]["fleiss_kappa"] == pytest.approx(7 / 15)
    # Five items in order: d1 d2 the first third, g1 g2 the middle, u1 (unknown) the last.
    assert invited["order_effects"]["1"] == {"first": pytest.approx(wilson(1, 4)),
                                             "middle": pytest.approx(wilson(3, 4)),
                                             "last": wilson(0, 0)}
    assert invited["order_effects"]["2"] == {"first": pytest.approx(wilson(3, 4)),
                                             "middle": pytest.approx(wilson(4, 4)),
                                             "last": wilson(0, 0)}


def test_the_groups_present_apart_a_lone_judge_and_a_group_with_nothing_paired():
    pooled = pooled_by_group(world())
    assert list(pooled) == ["invited", "guest", "removed"]  # no host joined
    guest = pooled["guest"]
    # One judge, one pair (d1, right then wrong): no agreement; rates of good items not computable.
    assert (guest["judges"], guest["items"], guest["agreement"]) == (1, 1, None)
    assert guest["discordant"]["defective"] == {"towards_truth": 0, "away_from_truth": 1}
    assert guest["effects"]["recall_phase1"] == {"value": 1.0, "low": 1.0, "high": 1.0}
    assert guest["effects"]["delta_recall"] == {"value": -1.0, "low": -1.0, "high": -1.0}
    assert guest["effects"]["tnr_phase1"] == NONE
    assert guest["effects"]["shift_away_from_truth"]["value"] == 1.0
    assert pooled["removed"] == {
        "judges_in_group": 1, "judges": 0, "items": 0, "paired_verdicts": {"defective": 0, "good": 0},
        "discordant": None, "effects": None, "cluster_resampled": None, "agreement": None,
        "order_effects": {p: dict.fromkeys(("first", "middle", "last"), wilson(0, 0)) for p in ("1", "2")}}


def test_pairs_on_unknown_truth_only_pool_nothing():
    u = copy("u1", T, B, "unknown")
    data = report_data(bundle(tasks=[T], builders=[B], copies=[u]), items=[item(u)],
                       judges=[judge("J1"), judge("J2")], grid={1: ["F", "P"], 2: ["F", "F"]})
    invited = pooled_by_group(data)["invited"]
    assert (invited["judges"], invited["effects"], invited["discordant"]) == (0, None, None)
    # Agreement needs no truth: two raters on one item.
    assert invited["agreement"]["fleiss_items"] == 1


def test_no_judges_no_groups():
    assert pooled_by_group(report_data(bundle(tasks=[T], builders=[B], copies=[]))) == {}
