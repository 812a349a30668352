"""reports.sections.pooled on hand-made data: per group of judges (only the groups present, in
the report's order) the pooled effects of the phase shift and their discordant counts worked out
by hand; their intervals by the rule of docs/statistics.md (a two-way bootstrap over judges and
the run's units from 10 judges, the units alone with fewer, none under 20 units) against
independent loops over the same draws; agreement among two or more raters and order effects by
third."""

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
    # One task and no clusters: the run is one unit, so no interval, and why.
    assert invited["resampling"] == {
        "by": None, "units": 1, "judges": 2, "conditional_on_judges": True, "method": None,
        "no_interval": "1 unit (one task and no clusters: the run is one unit), fewer than 20: a "
                       "bootstrap over so few is too narrow, and no other interval fits verdicts "
                       "pooled over judges"}
    assert all(e["low"] is None and e["high"] is None for e in invited["effects"].values())


def big_world(n_judges: int, n_tasks: int = 24, clusters: int | None = None):
    """n_tasks tasks, each with a defective and a good copy (in that order), optionally in
    `clusters` clusters (task t in cluster t mod clusters); every judge answers every item in
    both phases, at random (seeded): returns the data and each judge's right / wrong matrices."""
    rng = np.random.default_rng(5)
    tasks = [task(f"t{t}") for t in range(n_tasks)]
    copies = []
    for t, tk in enumerate(tasks):
        cluster = f"k{t % clusters}" if clusters else ""
        copies += [copy(f"{tk.bundle_id}-d", tk, B, "seeded_defect", cluster=cluster),
                   copy(f"{tk.bundle_id}-g", tk, B, "known_good", cluster=cluster)]
    defective = np.array([c.truth == "seeded_defect" for c in copies])
    says = {phase: rng.random((n_judges, len(copies))) < 0.5 for phase in (1, 2)}  # True: fail
    grid = {phase: ["".join("F" if x else "P" for x in row) for row in says[phase]]
            for phase in (1, 2)}
    right = {phase: (says[phase] == defective[None, :]).astype(float) for phase in (1, 2)}
    data = report_data(bundle(tasks=tasks, builders=[B], copies=copies),
                       items=[item(c) for c in copies],
                       judges=[judge(f"J{j}") for j in range(n_judges)], grid=grid)
    return data, right, defective


def weighted_metrics(right, defective, weights):
    """The pooled metrics with each (judge, item) verdict counted weights[j, i] times."""
    d, g = weights[:, defective], weights[:, ~defective]
    r1d, r2d, r1g, r2g = (right[p][:, m] for p, m in ((1, defective), (2, defective),
                                                      (1, ~defective), (2, ~defective)))
    return metrics(d.sum(), (d * r1d).sum(), (d * r2d).sum(), (d * r1d * r2d).sum(),
                   g.sum(), (g * r1g).sum(), (g * r2g).sum(), (g * r1g * r2g).sum())


def test_the_two_way_bootstrap_against_a_loop_over_judges_and_tasks_drawn():
    # Ten judges and 24 tasks: judges and tasks drawn independently (judges first, then tasks,
    # from one default_rng(0), 2,000 resamples), an item counted as often as its judge times its
    # task was drawn.
    data, right, defective = big_world(10)
    invited = pooled_by_group(data)["invited"]
    assert invited["resampling"] == {"by": "task", "units": 24, "judges": 10,
                                     "conditional_on_judges": False,
                                     "method": "two-way bootstrap", "no_interval": None}
    rng = np.random.default_rng(0)
    judge_draws = rng.integers(0, 10, size=(2000, 10))
    task_draws = rng.integers(0, 24, size=(2000, 24))
    task_of_item = np.repeat(np.arange(24), 2)
    drawn = [weighted_metrics(right, defective, np.outer(np.bincount(j, minlength=10),
                                                         np.bincount(t, minlength=24)[task_of_item]))
             for j, t in zip(judge_draws, task_draws, strict=True)]
    for name, estimate in invited["effects"].items():
        low, high = percentile_95([m[name] for m in drawn])
        assert (estimate["low"], estimate["high"]) == pytest.approx((low, high), abs=1e-12), name


def test_fewer_than_ten_judges_are_held_fixed_and_whole_clusters_drawn():
    # Three judges, 24 tasks in 20 clusters: the clusters drawn (default_rng(0)), the judges
    # each counted once; conditional on these judges.
    data, right, defective = big_world(3, clusters=20)
    invited = pooled_by_group(data)["invited"]
    assert invited["resampling"] == {"by": "cluster", "units": 20, "judges": 3,
                                     "conditional_on_judges": True, "method": "bootstrap",
                                     "no_interval": None}
    cluster_of_item = np.repeat(np.arange(24) % 20, 2)  # k0..k19 first appear in that order
    drawn = [weighted_metrics(right, defective,
                              np.outer(np.ones(3), np.bincount(draw, minlength=20)[cluster_of_item]))
             for draw in cluster_draws(20)]
    for name, estimate in invited["effects"].items():
        low, high = percentile_95([m[name] for m in drawn])
        assert (estimate["low"], estimate["high"]) == pytest.approx((low, high), abs=1e-12), name
    # The same judges over 12 clusters: fewer than 20 units, no interval.
    data, _, _ = big_world(3, clusters=12)
    invited = pooled_by_group(data)["invited"]
    assert invited["resampling"]["units"] == 12
    assert invited["resampling"]["no_interval"].startswith("12 units (declared clusters), fewer")
    assert all(e["low"] is None for e in invited["effects"].values())


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
    assert guest["effects"]["recall_phase1"] == {"value": 1.0, "low": None, "high": None}
    assert guest["effects"]["delta_recall"] == {"value": -1.0, "low": None, "high": None}
    assert guest["effects"]["tnr_phase1"] == NONE
    assert guest["effects"]["shift_away_from_truth"]["value"] == 1.0
    assert pooled["removed"] == {
        "judges_in_group": 1, "judges": 0, "items": 0, "paired_verdicts": {"defective": 0, "good": 0},
        "discordant": None, "effects": None, "resampling": None, "agreement": None,
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
