"""reports.sections.builders.builders_compared on hand-made data: per builder the truth, judges'
(per group and phase, removed judges never) and reviewers' pass rates on its copies in scope, the
controls apart; between the builders, the paired difference by task with its sign-flip p worked
out by hand and its bootstrap interval against a loop over the same draws; the ranking and the
reasons nothing is compared.

The pure helpers (paired_difference, task_units, sign_flip_p, holm_adjust) are tested against
hand vectors and scipy in tests/reports/test_builders.py, beside the end-to-end tests."""

from dataclasses import replace

import numpy as np
import pytest
from scipy.stats import binomtest

from reports import stats
from reports.sections.builders import (
    FINDINGS_REASON,
    NO_JUDGES_REASON,
    builders_compared,
    paired_difference,
)
from tests.reports.sections.arrays import (
    a_run,
    a_session,
    builder,
    bundle,
    copy,
    finding,
    item,
    judge,
    report_data,
    review,
    reviewer,
    task,
    wilson,
)

pytestmark = pytest.mark.pure

B1, B2 = builder("b1", "gpt-4o", "OpenAI"), builder("b2", "claude", "Anthropic")


def world(rule="not_flagged", session=None):
    t1, t2, t3 = task("t1"), task("t2"), task("t3")
    copies = [copy("t1-b1", t1, B1, "tests_pass"), copy("t1-b2", t1, B2, "tests_fail"),
              copy("t2-b1", t2, B1, "tests_pass"), copy("t2-b2", t2, B2, "tests_pass"),
              copy("t3-b1", t3, B1, "unknown"), copy("t3-b2", t3, B2, "tests_fail"),
              copy("t1-b1-ctl", t1, B1, "known_good"), copy("t2-b2-ctl", t2, B2, "seeded_defect")]
    c = {x.bundle_id: x for x in copies}
    r1, r2 = reviewer("r1", "qwen", "Alibaba"), reviewer("r2", "gpt-4o-mini", "OpenAI")
    reviews = [
        review(r1, c["t1-b1"], "pass"), review(r1, c["t1-b2"], "fail"), review(r1, c["t2-b1"], "pass"),
        review(r1, c["t2-b2"], "abstain"), review(r1, c["t3-b1"], "fail"), review(r1, c["t3-b2"], "fail"),
        review(r1, c["t1-b1-ctl"], "pass"),  # a control: never counted
        review(r1, c["t1-b2"], "pass", condition="told_pass"),  # not the default condition
        review(r2, c["t1-b1"], "pass", seal="failed"),  # left out
        review(r2, c["t2-b1"], "pass"), review(r2, c["t1-b2"], "pass"),
    ]
    judges = [judge("J1"), judge("J2"), judge("G1", admitted_as="guest"),
              judge("R1", status="removed")]
    # Items in copy order: t1-b1 t1-b2 t2-b1 t2-b2 t3-b1 t3-b2 and the two controls.
    grid = {1: ["PFPPFFPF", "PPPF.F..", "P.......", "PPPPPPPP"],
            2: ["PPPPPPPP", "........", "........", "........"]}
    return report_data(bundle(tasks=[t1, t2, t3], builders=[B1, B2], copies=copies, reviewers=[r1, r2],
                              reviews=reviews, run=a_run(abstain_scoring=rule)),
                       items=[item(x) for x in copies], judges=judges, grid=grid,
                       session=session or a_session())


def approx(value):
    return pytest.approx(value, abs=1e-12)


def test_each_builder_s_rates_by_hand_controls_apart():
    section = builders_compared(world())
    assert (section["compared"], section["not_compared"], section["human_not_compared"]) == (True, None, None)
    assert section["controls"] == [{"builder": "b1", "known_good": 1, "seeded_defect": 0},
                                   {"builder": "b2", "known_good": 0, "seeded_defect": 1}]
    b1, b2 = section["builders"]
    assert (b1["copies"], b1["tasks"], b2["copies"], b2["tasks"]) == (3, 3, 3, 3)
    # Truth: b1 tests_pass twice and unknown once (not scored): 2/2; b2 one of three.
    assert b1["truth"] == {"tests_pass": 2, "tests_fail": 0, "unknown": 1, "pass_rate": approx(wilson(2, 2))}
    assert b2["truth"] == {"tests_pass": 1, "tests_fail": 2, "unknown": 0, "pass_rate": approx(wilson(1, 3))}
    # Invited, phase 1, b1's copies: J1 P P F, J2 P P .: 4/5; b2's: J1 F P F, J2 P F F: 2/6.
    # Phase 2: J1 passed all three of each. The guest passed t1-b1 only. The removed judge never
    # counts, and the controls' verdicts neither.
    assert list(b1["judges"]) == ["invited", "guest"]
    assert b1["judges"]["invited"] == {"1": approx(wilson(4, 5)), "2": approx(wilson(3, 3))}
    assert b2["judges"]["invited"] == {"1": approx(wilson(2, 6)), "2": approx(wilson(3, 3))}
    assert b1["judges"]["guest"] == {"1": approx(wilson(1, 1)), "2": wilson(0, 0)}
    assert b2["judges"]["guest"] == {"1": wilson(0, 0), "2": wilson(0, 0)}
    # Reviewers, default condition: r1 passed t1-b1 t2-b1 of b1's three, and of b2's the
    # abstention on t2-b2 (a pass). r2's failed seal on t1-b1 is left out; r2 is of b1's family.
    assert b1["reviewers"] == [
        {"reviewer": "r1", "pass_rate": approx(wilson(2, 3)), "same_family": False, "left_out": 0},
        {"reviewer": "r2", "pass_rate": approx(wilson(1, 1)), "same_family": True, "left_out": 1}]
    assert b2["reviewers"] == [
        {"reviewer": "r1", "pass_rate": approx(wilson(1, 3)), "same_family": False, "left_out": 0},
        {"reviewer": "r2", "pass_rate": approx(wilson(1, 1)), "same_family": False, "left_out": 0}]


def test_abstentions_excluded_are_left_out_of_the_reviewers_rates():
    b1, b2 = builders_compared(world("excluded"))["builders"]
    assert b2["reviewers"][0] == {"reviewer": "r1", "pass_rate": approx(wilson(0, 2)),
                                  "same_family": False, "left_out": 1}


def difference(section, source, group=None, reviewer=None):
    [entry] = [d for d in section["differences"]
               if (d["source"], d["group"], d["reviewer"]) == (source, group, reviewer)]
    return entry


def test_the_differences_paired_by_task_by_hand():
    section = builders_compared(world())
    assert [(d["source"], d["group"], d["reviewer"]) for d in section["differences"]] == [
        ("truth", None, None), ("judges_phase1", "invited", None), ("judges_phase1", "guest", None),
        ("judges_phase2", "invited", None), ("judges_phase2", "guest", None),
        ("reviewer", None, "r1"), ("reviewer", None, "r2")]
    # Truth: paired t1, t2 (b1's t3 is of unknown truth): 2/2 − 1/2. Per task d = 1, 0: every
    # sign assignment reaches |Σ| = 1, p = 1. Two builders, so Holm leaves p as it is.
    # One pass or fail per builder and task: Newcombe's interval of the paired table (both pass
    # t2, b1 only t1), at two tasks as at any number.
    truth = difference(section, "truth")
    _, low, high = stats.newcombe_paired_interval(1, 1, 0, 0)
    assert (truth["tasks"], truth["units"], truth["builders"]) == (2, 2, ["b1", "b2"])
    assert truth["pass_rates"] == [approx(wilson(2, 2)), approx(wilson(1, 2))]
    assert truth["difference"] == approx({"value": 1 / 2, "low": low, "high": high})
    assert (truth["p_value"], truth["p_holm"]) == (1.0, 1.0)
    assert (truth["interval"], truth["resampled"], truth["primary"]) == (
        "Newcombe hybrid score", None, False)
    # Invited, phase 1, all three tasks paired: 4/5 − 2/6. Per task d: t1 2/2 − 1/2, t2 2/2 − 1/2,
    # t3 0/1 − 0/2: (1/2, 1/2, 0); |Σ| = 1 is reached by ++ and −− with either sign of 0: p = 4/8.
    invited = difference(section, "judges_phase1", "invited")
    k_b1 = [[1, 1, 0], [1, 1, 0]]
    n_b1 = [[1, 1, 1], [1, 1, 0]]
    k_b2 = [[0, 1, 0], [1, 0, 0]]
    n_b2 = [[1, 1, 1], [1, 1, 1]]
    assert sum(map(sum, k_b1)) / sum(map(sum, n_b1)) == 4 / 5
    assert sum(map(sum, k_b2)) / sum(map(sum, n_b2)) == 2 / 6
    # Two judges' verdicts on three tasks: no interval is valid at that size, and it says why.
    assert invited["difference"] == approx({"value": 4 / 5 - 2 / 6, "low": None, "high": None})
    assert (invited["tasks"], invited["p_value"], invited["primary"], invited["resampled"]) == (
        3, pytest.approx(1 / 2), True, None)
    assert (invited["judges"], invited["conditional_on_judges"]) == (2, True)
    assert invited["no_interval"].startswith("3 tasks, fewer than 20, and more than one label")
    # The guest judged nothing of b2's: no task paired, nothing to say.
    guest = difference(section, "judges_phase1", "guest")
    assert (guest["tasks"], guest["difference"], guest["p_value"], guest["p_holm"]) == (
        0, {"value": None, "low": None, "high": None}, None, None)
    # Phase 2: everything passed on both sides: 0, with no sign to flip (p = 1).
    phase2 = difference(section, "judges_phase2", "invited")
    assert (phase2["difference"]["value"], phase2["p_value"]) == (0.0, 1.0)
    # r1: per task (t1, t2, t3) b1 1, 1, 0 of 1 each; b2 0, 1, 0: 2/3 − 1/3, d = (1, 0, 0), p = 1.
    r1 = difference(section, "reviewer", reviewer="r1")
    _, low, high = stats.newcombe_paired_interval(1, 1, 0, 1)
    assert r1["difference"] == approx({"value": 1 / 3, "low": low, "high": high})
    # r2 scored b1 on t2 only and b2 on t1 only: no task in common.
    assert difference(section, "reviewer", reviewer="r2")["tasks"] == 0


def test_the_ranking_on_the_default_primary_comparison():
    section = builders_compared(world())
    assert section["primary"] == {"source": "judges_phase1", "group": "invited", "reviewer": None,
                                  "named_by": "default"}
    ranking = section["ranking"]
    invited = difference(section, "judges_phase1", "invited")["difference"]
    assert (ranking["order"], ranking["supported"]) == (["b1", "b2"], [])
    assert ranking["statements"] == [
        "The builders are not distinguished on the primary comparison, the invited judges' phase-1 "
        "pass rate.",
        "b1 and b2 not distinguished: difference +0.467 (no interval: 3 tasks, fewer than 20, and "
        "more than one label per task: no interval is valid at this size (a bootstrap over so few "
        "units is too narrow); the p-value's test is exact), Holm-adjusted p 0.500, 3 tasks, "
        "conditional on these 2 judges."]
    assert invited["low"] is None


def test_six_tasks_all_one_way_rank_the_builders_on_truth():
    tasks = [task(f"t{n}") for n in range(1, 7)]
    copies = [copy(f"{t.bundle_id}-{b.bundle_id}", t, b, "tests_pass" if b is B1 else "tests_fail")
              for t in tasks for b in (B1, B2)]
    protocol = {"primary_comparison": {"source": "truth"}}
    section = builders_compared(report_data(bundle(tasks=tasks, builders=[B1, B2], copies=copies),
                                            session=a_session(protocol=protocol)))
    # No judge: the human comparison is not made, the rest is.
    assert (section["compared"], section["human_not_compared"]) == (True, NO_JUDGES_REASON)
    assert section["primary"] == {"source": "truth", "group": None, "reviewer": None,
                                  "named_by": "preregistration"}
    truth = difference(section, "truth")
    # d = 1 on each of six tasks: only the two all-same-sign assignments of 2^6 reach |Σ| = 6.
    # A bootstrap would give [1, 1] (every resample 1 − 0); Newcombe's interval is honest about
    # six tasks.
    assert truth["p_value"] == pytest.approx(2 / 64)
    _, low, high = stats.newcombe_paired_interval(0, 6, 0, 0)
    assert truth["difference"] == approx({"value": 1.0, "low": low, "high": high})
    assert 0.4 < low < 1 == high  # 0.448: six tasks cannot say much more than "b1 is better"
    assert section["ranking"]["supported"] == [["b1", "b2"]]
    assert section["ranking"]["statements"] == [
        "Ranked on the primary comparison, the truth pass rate (the tests_pass share), only where "
        "the Holm-adjusted p is below 0.05 and the 95% interval, where one is valid, excludes 0.",
        f"b1 above b2: difference +1.000 [{low:+.3f}, +1.000], Holm-adjusted p 0.031, 6 tasks."]


def test_a_primary_comparison_that_cannot_be_made_states_no_ranking():
    protocol = {"primary_comparison": {"source": "judges_phase1", "group": "self_blinded_host"}}
    ranking = builders_compared(world(session=a_session(protocol=protocol)))["ranking"]
    assert ranking["order"] == [] and ranking["supported"] == []
    assert ranking["statements"] == [
        "The primary comparison, the host's (self-blinded) phase-1 pass rate, could not be made: no "
        "judge of the group 'self_blinded_host' joined. No ranking is stated."]


def test_a_reviewer_named_by_model_as_the_primary_comparison():
    protocol = {"primary_comparison": {"source": "reviewer", "reviewer": "qwen"}}
    section = builders_compared(world(session=a_session(protocol=protocol)))
    assert section["primary"] == {"source": "reviewer", "group": None, "reviewer": "r1",
                                  "named_by": "preregistration"}
    assert difference(section, "reviewer", reviewer="r1")["primary"] is True
    assert section["ranking"]["order"] == ["b1", "b2"]  # r1: 2/3 against 1/3


def test_a_findings_session_compares_builders_under_truth_and_reviewers_only():
    copies = world().bundle
    f = finding("f1", copies.copies[0], "real")
    with_finding = replace(copies, findings=[f], finding_by_pk={f.pk: f})
    findings_data = report_data(with_finding, items=[item(copies.copies[0], finding_=f)],
                                judges=[judge("J1")], grid={1: ["F"]}, session=a_session(kind="findings"))
    section = builders_compared(findings_data)
    assert (section["compared"], section["human_not_compared"]) == (True, FINDINGS_REASON)
    assert [b["judges"] for b in section["builders"]] == [{}, {}]
    assert {d["source"] for d in section["differences"]} == {"truth", "reviewer"}


@pytest.mark.parametrize("case, reason", [
    ("one builder", "one builder"),
    ("controls only", "fewer than two builders have copies in scope"),
    ("one task", "one task and no judges"),
])
def test_nothing_compared(case, reason):
    t1 = task("t1")
    if case == "one builder":
        b = bundle(tasks=[t1, task("t2")], builders=[B1], copies=[copy("a", t1, B1, "tests_pass")])
    elif case == "controls only":
        b = bundle(tasks=[t1], builders=[B1, B2],
                   copies=[copy("a", t1, B1, "tests_pass"), copy("b", t1, B2, "known_good")])
    else:
        b = bundle(tasks=[t1], builders=[B1, B2],
                   copies=[copy("a", t1, B1, "tests_pass"), copy("b", t1, B2, "tests_fail")])
    section = builders_compared(report_data(b))
    assert (section["compared"], section["not_compared"], section["differences"]) == (False, reason, [])
    assert section["ranking"]["statements"] == [f"Not compared: {reason}."]


# --- exact paired tests (issue 28 item 2) --------------------------------------------------------------

def one_label_per_task(a_only: int, b_only: int, both: int, neither: int):
    """Truth of two builders over the same tasks, one pass or fail each: a passes alone on
    a_only tasks, b alone on b_only, both on both, neither on neither."""
    a = [1] * a_only + [0] * b_only + [1] * both + [0] * neither
    b = [0] * a_only + [1] * b_only + [1] * both + [0] * neither
    ones = [1] * len(a)
    return np.array(a), np.array(ones), np.array(b), np.array(ones)


def test_a_paired_binary_comparison_is_mcnemar_exact_at_any_number_of_tasks():
    """The issue's real case: o4-mini 121/136, gpt-3.5-turbo 80/136 on the same samples, split 45
    to 4. A sign-flip over 136 tasks drawn 20,000 times cannot go below about 1/20,001; McNemar's
    exact test on the 49 discordant tasks is about 8 × 10⁻¹⁰."""
    ka, na, kb, nb = one_label_per_task(45, 4, 76, 11)
    assert (ka.sum(), kb.sum(), len(ka)) == (121, 80, 136)
    result = paired_difference(ka, na, kb, nb, list(range(136)))
    expected = binomtest(4, 49, 0.5).pvalue
    assert 7e-10 < expected < 9e-10
    assert result["test"] == "McNemar exact" and result["discordant"] == [45, 4]
    assert result["p_value"] == pytest.approx(expected, rel=1e-9)
    assert result["mcnemar_p"] == result["p_value"]
    assert result["smallest_p"] == 2.0 ** -48
    assert result["value"] == pytest.approx((121 - 80) / 136)
    # Two discordant tasks at most: the smallest p they could give is 0.5, said beside it.
    small = paired_difference(*one_label_per_task(2, 0, 3, 1), list(range(6)))
    assert small["p_value"] == pytest.approx(binomtest(0, 2, 0.5).pvalue) == pytest.approx(0.5)
    assert small["smallest_p"] == 0.5


def test_with_declared_clusters_the_cluster_sign_flip_is_the_p_and_mcnemar_stands_beside_it():
    ka, na, kb, nb = one_label_per_task(10, 2, 6, 2)
    clusters = ["astropy", "django"] * 10
    result = paired_difference(ka, na, kb, nb, clusters)
    assert result["test"] == "cluster sign-flip" and result["units"] == 2
    # Each cluster sums to +4 (five tasks a alone, one b alone): of the four sign assignments,
    # +8 and −8 are as extreme as the observed +8, so p = 2/4, whatever McNemar says.
    assert result["p_value"] == pytest.approx(0.5)
    assert result["mcnemar_p"] == pytest.approx(binomtest(2, 12, 0.5).pvalue)


def test_several_verdicts_per_task_keep_the_sign_flip():
    ka, na, kb, nb = (np.array([2, 1, 2]), np.array([2, 2, 2]), np.array([1, 0, 1]),
                      np.array([2, 2, 2]))
    result = paired_difference(ka, na, kb, nb, [0, 1, 2])
    assert result["test"] == "sign-flip" and result["discordant"] is None
    assert result["mcnemar_p"] is None and result["smallest_p"] is None
