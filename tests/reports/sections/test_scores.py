"""reports.sections.scores on hand-made data: recall and true-negative rate per judge (each phase,
each truth version, drafts counted apart, unknown truth never scored) and per model reviewer (by
group: main, same family, seal failed, verdict in content; abstentions by the run's rule), the
reviews under other conditions apart, and the resampled intervals over the run's tasks — Wilson
intervals from scipy, the bootstrap bounds from an independent loop over the same draws."""

import numpy as np
import pytest

from reports.sections.scores import OTHER_CONDITIONS_LABEL, judge_scores, other_conditions, reviewer_scores
from tests.reports.sections.arrays import (
    a_run,
    builder,
    bundle,
    cluster_draws,
    copy,
    correction,
    item,
    judge,
    percentile_95,
    report_data,
    review,
    reviewer,
    task,
    wilson,
)

pytestmark = pytest.mark.pure

NONE = {"value": None, "low": None, "high": None}


def approx(value):
    return pytest.approx(value, abs=1e-12)


# --- Judges -----------------------------------------------------------------------------------------

def one_task_world():
    t = task("t1")
    b = builder("b1", "gpt-4o", "OpenAI")
    d1, d2 = copy("d1", t, b, "seeded_defect"), copy("d2", t, b, "tests_fail")
    g1 = copy("g1", t, b, "known_good")
    g2 = copy("g2", t, b, "tests_pass", imported_truth="tests_fail")  # corrected since import
    u1 = copy("u1", t, b, "unknown")
    copies = [d1, d2, g1, g2, u1]
    return report_data(
        bundle(tasks=[t], builders=[b], copies=copies,
               corrections=[correction(g2, "tests_fail", "tests_pass")]),
        items=[item(c) for c in copies], judges=[judge("J1"), judge("G1", admitted_as="guest")],
        grid={1: ["FPPPF", "FFP.p"], 2: ["FFPPP", "....."]})


def test_judges_recall_and_tnr_per_phase_and_truth_version_by_hand():
    j1, g1 = judge_scores(one_task_world())
    assert (j1["judge"], j1["group"], j1["unlocked_drafts"]) == ("J1", "invited", 0)
    assert (g1["judge"], g1["group"], g1["unlocked_drafts"]) == ("G1", "guest", 1)

    def figures(entry, phase, version):
        scored = entry["phases"][phase][version]
        return scored["recall"], scored["tnr"], scored["unknown_truth"], scored["resampled"]

    # J1, phase 1, items d1 d2 g1 g2 u1 = F P P P F. Current: caught d1 of d1, d2; passed g1, g2;
    # u1 unknown. Imported (g2 was tests_fail): caught d1 of d1, d2, g2; passed g1.
    assert figures(j1, "1", "current") == (approx(wilson(1, 2)), approx(wilson(2, 2)), 1, None)
    assert figures(j1, "1", "imported") == (approx(wilson(1, 3)), approx(wilson(1, 1)), 1, None)
    # Phase 2, F F P P P: current 2/2 and 2/2; imported 2/3 (g2 passed) and 1/1.
    assert figures(j1, "2", "current") == (approx(wilson(2, 2)), approx(wilson(2, 2)), 1, None)
    assert figures(j1, "2", "imported") == (approx(wilson(2, 3)), approx(wilson(1, 1)), 1, None)
    # The guest, phase 1 F F P . p: d1, d2 caught, g1 passed; the draft on u1 is not scored.
    assert figures(g1, "1", "current") == (approx(wilson(2, 2)), approx(wilson(1, 1)), 0, None)
    assert figures(g1, "1", "imported") == (approx(wilson(2, 2)), approx(wilson(1, 1)), 0, None)
    # Nothing in phase 2: nothing to score, every bound null.
    assert figures(g1, "2", "current") == (wilson(0, 0), wilson(0, 0), 0, None)


def test_without_a_correction_only_current_truth_is_scored():
    t = task("t1")
    b = builder("b1", "gpt-4o", "OpenAI")
    c = copy("d1", t, b, "seeded_defect")
    data = report_data(bundle(tasks=[t], builders=[b], copies=[c]), items=[item(c)],
                       judges=[judge("J1")], grid={1: ["F"], 2: ["P"]})
    [entry] = judge_scores(data)
    assert list(entry["phases"]["1"]) == list(entry["phases"]["2"]) == ["current"]
    assert entry["phases"]["2"]["current"]["recall"] == approx(wilson(0, 1))


def test_no_judges_no_scores():
    t = task("t1")
    data = report_data(bundle(tasks=[t, task("t2")], builders=[], copies=[]))
    assert judge_scores(data) == []


def three_task_world(repeat: int = 1):
    """Three tasks (five copies), or that pattern `repeat` times over 3 × repeat tasks."""
    tasks, copies = [], []
    b = builder("b1", "gpt-4o", "OpenAI")
    for r in range(repeat):
        t1, t2, t3 = (task(f"t{3 * r + n}") for n in (1, 2, 3))
        tasks += [t1, t2, t3]
        copies += [copy(f"{t1.bundle_id}-d", t1, b, "seeded_defect"),
                   copy(f"{t1.bundle_id}-g", t1, b, "known_good"),
                   copy(f"{t2.bundle_id}-d", t2, b, "tests_fail"),
                   copy(f"{t2.bundle_id}-g", t2, b, "tests_pass"),
                   copy(f"{t3.bundle_id}-d", t3, b, "seeded_defect")]
    return report_data(bundle(tasks=tasks, builders=[b], copies=copies),
                       items=[item(c) for c in copies], judges=[judge("J1"), judge("J2")],
                       grid={1: ["FPPFF" * repeat, "....F" * repeat]})


def loop_interval(numerator_by_task, denominator_by_task):
    """The percentile interval of Σ drawn numerators / Σ drawn denominators over the tasks drawn
    by default_rng(0), 2,000 times, resamples with nothing scored dropped."""
    ratios = []
    for draw in cluster_draws(len(numerator_by_task)):
        num = sum(numerator_by_task[u] for u in draw)
        den = sum(denominator_by_task[u] for u in draw)
        ratios.append(num / den if den else float("nan"))
    return percentile_95(ratios)


def test_judges_resampled_over_tasks_against_a_loop_over_the_draws():
    # The three-task pattern seven times: 21 tasks. J1, phase 1, in each: t1 d caught, g passed;
    # t2 d missed, g failed; t3 d caught. Per task recall 1/1, 0/1, 1/1; tnr 1/1, 0/1, nothing.
    j1, j2 = judge_scores(three_task_world(repeat=7))
    block = j1["phases"]["1"]["current"]["resampled"]
    recall_low, recall_high = loop_interval([1, 0, 1] * 7, [1, 1, 1] * 7)
    assert block == {"by": "task", "units": 21,
                     "recall": approx({"value": 2 / 3, "low": recall_low, "high": recall_high}),
                     # Its good copies lie in 14 tasks, fewer than 20: no bootstrap interval.
                     "tnr": approx({"value": 1 / 2, "low": None, "high": None})}
    assert block["recall"]["low"] < 2 / 3 < block["recall"]["high"]
    # J2 judged seven items in seven tasks: under 20 units, its rate alone; no tnr at all.
    assert j2["phases"]["1"]["current"]["resampled"] == {
        "by": "task", "units": 7, "recall": {"value": 1.0, "low": None, "high": None}, "tnr": NONE}
    # Over the three tasks alone, no rate has 20 units: none has a bootstrap interval.
    j1, j2 = judge_scores(three_task_world())
    block = j1["phases"]["1"]["current"]["resampled"]
    assert (block["units"], block["recall"]["low"], block["tnr"]["high"]) == (3, None, None)
    # Phase 2 is empty for both: a block of nulls, still over tasks.
    assert j1["phases"]["2"]["current"]["resampled"] == {"by": "task", "units": 0,
                                                         "recall": NONE, "tnr": NONE}


# --- Model reviewers ---------------------------------------------------------------------------------

def reviewer_world(rule, tasks=1):
    ts = [task(f"t{n}") for n in range(1, tasks + 1)]
    b1, b2 = builder("b1", "gpt-4o", "OpenAI"), builder("b2", "claude", "Anthropic")
    c1 = copy("c1", ts[0], b1, "seeded_defect")
    c2 = copy("c2", ts[-1], b2, "known_good")
    c3 = copy("c3", ts[0], b2, "tests_fail")
    c4 = copy("c4", ts[-1], b1, "unknown")
    r1, r2 = reviewer("r1", "gpt-4o-mini", "openai"), reviewer("r2", "qwen", "Alibaba")
    reviews = [
        review(r1, c1, "fail"),  # its own family's copy (b1, OpenAI)
        review(r1, c2, "abstain"),
        review(r1, c3, "fail", seal="failed"),
        review(r1, c4, "pass"),  # own family, unknown truth
        review(r2, c1, "pass", seal="verdict_in_content"),
        review(r2, c2, "pass"),
        review(r2, c3, "abstain"),
        review(r2, c1, "fail", condition="told_pass"),
        review(r2, c2, "abstain", condition="told_pass"),
    ]
    return report_data(bundle(tasks=ts, builders=[b1, b2], copies=[c1, c2, c3, c4],
                              reviewers=[r1, r2], reviews=reviews,
                              run=a_run(abstain_scoring=rule)))


def scored(recall, tnr, unknown=0, resampled=None, *, no_verdict=(0, 0), without=None):
    """A score block as expected; `no_verdict`: (recall's, tnr's) replies with no verdict inside
    the rates; `without`: (recall, tnr) with them left out, for a reviewer past a tenth."""
    block = {"recall": approx(recall), "tnr": approx(tnr), "unknown_truth": unknown,
             "resampled": resampled}
    for key, held in zip(("recall", "tnr"), no_verdict, strict=True):
        if held:
            block[key] = approx({**recall, "no_verdict": held} if key == "recall"
                                else {**tnr, "no_verdict": held})
    if without is not None:
        block["without_abstentions"] = {"recall": approx(without[0]), "tnr": approx(without[1])}
    return {"current": block}


def test_reviewers_scored_by_group_abstaining_as_not_flagged():
    r1, r2 = reviewer_scores(reviewer_world("not_flagged"))
    assert {k: r1[k] for k in ("reviewer", "reviews", "abstained", "excluded",
                               "abstentions_by_condition", "seals")} == {
        "reviewer": "r1", "reviews": 4, "abstained": 1, "excluded": 0,
        "abstentions_by_condition": {"clean": 1},
        "seals": {"sealed": 3, "verdict_in_content": 0, "failed": 1, "absent": 0}}
    # main: the abstention on c2 counts as a pass, right on a good copy. same_family: c1 caught,
    # c4 of unknown truth counted apart. seal_failed: c3 caught, whatever the family.
    # r1 gave no verdict to 1 of its 4 reviews, past a tenth: where that reply sits (main), the
    # rates without it stand beside (issue 28 item 6).
    assert r1["groups"] == {"main": scored(wilson(0, 0), wilson(1, 1), no_verdict=(0, 1),
                                           without=(wilson(0, 0), wilson(0, 0))),
                            "same_family": scored(wilson(1, 1), wilson(0, 0), unknown=1),
                            "seal_failed": scored(wilson(1, 1), wilson(0, 0))}
    # r2 under the default condition only (its told_pass reviews are other_conditions'): c1 with a
    # verdict in the request's content set apart; main: c2 passed, c3's abstention a pass, missed.
    assert (r2["reviews"], r2["abstained"], r2["abstentions_by_condition"]) == (
        3, 1, {"clean": 1, "told_pass": 1})
    assert r2["groups"] == {"main": scored(wilson(0, 1), wilson(1, 1), no_verdict=(1, 0),
                                           without=(wilson(0, 0), wilson(1, 1))),
                            "verdict_in_content": scored(wilson(0, 1), wilson(0, 0))}


def test_reviewers_scored_abstentions_excluded():
    r1, r2 = reviewer_scores(reviewer_world("excluded"))
    # r1's only main review was its abstention: left out, the main group is gone.
    assert (r1["excluded"], sorted(r1["groups"])) == (1, ["same_family", "seal_failed"])
    # r2's abstention on c3 is left out too: main keeps c2, passed.
    assert r2["excluded"] == 1
    assert r2["groups"] == {"main": scored(wilson(0, 0), wilson(1, 1)),
                            "verdict_in_content": scored(wilson(0, 1), wilson(0, 0))}


def test_reviewers_resampled_over_tasks():
    r1, r2 = reviewer_scores(reviewer_world("not_flagged", tasks=2))
    # r2's main group: c3 (t1, missed) and c2 (t2, passed): one unit each for recall and tnr,
    # so no bounds, over two units in all.
    assert r2["groups"]["main"]["current"]["resampled"] == {
        "by": "task", "units": 2, "recall": {"value": 0.0, "low": None, "high": None},
        "tnr": {"value": 1.0, "low": None, "high": None}}
    # r1's same_family group: c1 (t1) caught; c4 (t2) unknown truth is no unit of the rate.
    assert r1["groups"]["same_family"]["current"]["resampled"] == {
        "by": "task", "units": 1, "recall": {"value": 1.0, "low": None, "high": None}, "tnr": NONE}


def test_other_conditions_are_scored_apart():
    section = other_conditions(reviewer_world("not_flagged"))
    assert (section["label"], section["default_condition"], section["abstain_scoring"]) == (
        OTHER_CONDITIONS_LABEL, "clean", "not_flagged")
    assert section["reviewers"] == [{
        "reviewer": "r2", "condition": "told_pass", "reviews": 2, "flagged": 1, "abstained": 1,
        "excluded": 0,
        # c1 caught; c2's abstention a pass, right on a good copy (1 of 2 replies without a
        # verdict: the rates without it beside).
        "groups": {"main": scored(wilson(1, 1), wilson(1, 1), no_verdict=(0, 1),
                                  without=(wilson(1, 1), wilson(0, 0)))}}]
    excluded = other_conditions(reviewer_world("excluded"))["reviewers"][0]
    assert (excluded["excluded"], excluded["groups"]) == (1, {"main": scored(wilson(1, 1), wilson(0, 0))})


def test_no_reviewers():
    t = task("t1")
    data = report_data(bundle(tasks=[t], builders=[], copies=[]))
    assert reviewer_scores(data) == []
    assert other_conditions(data)["reviewers"] == []


def test_the_phase_matrices_are_what_the_grid_says():
    # A guard on the helper the tests above stand on: locked verdicts only, 1 fail, 0 pass.
    data = one_task_world()
    assert data.verdicts.says[1].tolist() == [[1, 0, 0, 0, 1], [1, 1, 0, -1, -1]]
    assert np.array_equal(data.verdicts.paired, [[True] * 5, [False] * 5])


def test_a_reviewer_is_scored_under_the_imported_truth_too_once_a_label_was_corrected():
    t = task("t1")
    b = builder("b1", "gpt-4o", "OpenAI")
    c1 = copy("c1", t, b, "tests_pass", imported_truth="tests_fail")
    c2 = copy("c2", t, b, "seeded_defect")
    r = reviewer("r1", "qwen", "Alibaba")
    data = report_data(bundle(tasks=[t], builders=[b], copies=[c1, c2], reviewers=[r],
                              reviews=[review(r, c1, "fail"), review(r, c2, "fail")],
                              corrections=[correction(c1, "tests_fail", "tests_pass")]))
    [entry] = reviewer_scores(data)
    # Current: c2 caught, c1 (now good) failed. Imported: c1 and c2 both defective, both caught.
    assert entry["groups"]["main"]["current"]["recall"] == approx(wilson(1, 1))
    assert entry["groups"]["main"]["current"]["tnr"] == approx(wilson(0, 1))
    assert entry["groups"]["main"]["imported"]["recall"] == approx(wilson(2, 2))
    assert entry["groups"]["main"]["imported"]["tnr"] == wilson(0, 0)
