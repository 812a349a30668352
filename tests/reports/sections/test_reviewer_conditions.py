"""reports.sections.reviewer_conditions on hand-made records: per reviewer, condition and truth
class the flag rate (Wilson, scipy) with abstentions under each rule; each other condition against
the default on the same copies: discordant counts by hand, McNemar's exact p (scipy's binomial
test), the difference, and its cluster-bootstrap interval against a loop over the same draws."""

import pytest

from reports import stats
from reports.sections.reviewer_conditions import ABSTAIN_RULES, discrimination, reviewer_conditions
from tests.reports.sections.arrays import (
    a_run,
    a_session,
    builder,
    bundle,
    copy,
    mcnemar_p,
    report_data,
    review,
    reviewer,
    task,
    wilson,
)

pytestmark = pytest.mark.pure

B = builder("b1", "gpt-4o", "OpenAI")


def world(rule, tasks=2, session=None):
    t1, t2 = task("t1"), task("t2")
    t2 = t2 if tasks == 2 else t1
    d1, g1 = copy("d1", t1, B, "seeded_defect"), copy("g1", t1, B, "known_good")
    d2, g2, u = copy("d2", t2, B, "tests_fail"), copy("g2", t2, B, "tests_pass"), copy("u", t2, B, "unknown")
    r1, r2, r3 = reviewer("r1", "qwen", "Alibaba"), reviewer("r2", "llama", "Meta"), reviewer("r3", "x", "X")
    reviews = [
        review(r1, d1, "fail"), review(r1, d2, "fail"), review(r1, g1, "pass"), review(r1, g2, "fail"),
        review(r1, u, "fail"),
        review(r1, d1, "pass", condition="told_pass"), review(r1, d2, "fail", condition="told_pass"),
        review(r1, g1, "abstain", condition="told_pass", seal="failed"),  # counted all the same
        review(r1, g2, "pass", condition="told_pass"), review(r1, u, "pass", condition="told_pass"),
        review(r2, d1, "fail"),
        review(r3, d1, "pass", condition="told_pass"),  # no default review at all
    ]
    return report_data(bundle(tasks=[t1, t2] if tasks == 2 else [t1], builders=[B],
                              copies=[d1, g1, d2, g2, u], reviewers=[r1, r2, r3], reviews=reviews,
                              run=a_run(abstain_scoring=rule)), session=session or a_session())


def cell(n, flagged, no_verdict):
    rate = wilson(flagged, n)
    return pytest.approx({"n": n, "flagged": flagged, "rate": rate["rate"], "low": rate["low"],
                          "high": rate["high"], "no_verdict": no_verdict})


def test_each_condition_s_flag_rate_by_class_abstaining_as_not_flagged():
    section = reviewer_conditions(world("not_flagged"))
    assert (section["default_condition"], section["abstain_scoring"], section["abstain_rule"]) == (
        "clean", "not_flagged", ABSTAIN_RULES["not_flagged"])
    r1, r2, r3 = section["reviewers"]
    assert [(c["condition"], c["default"], c["reviews"], c["abstained"]) for c in r1["conditions"]] == [
        ("clean", True, 5, 0), ("told_pass", False, 5, 1)]
    # clean: d1 d2 flagged (2/2); g1 passed, g2 flagged (1/2); u of unknown truth counts nowhere.
    assert r1["conditions"][0]["by_class"] == {"defective": cell(2, 2, 0), "good": cell(2, 1, 0)}
    # told_pass: d2 flagged (1/2); g1 abstained (not flagged, in n), g2 passed (0/2).
    assert r1["conditions"][1]["by_class"] == {"defective": cell(2, 1, 0), "good": cell(2, 0, 1)}
    # r2 has the default condition only, r3 another only: nothing to compare.
    assert (r2["comparisons"], r3["comparisons"]) == ([], [])
    assert [c["condition"] for c in r3["conditions"]] == ["told_pass"]


def test_told_pass_against_clean_on_the_same_copies_by_hand():
    defective, good = reviewer_conditions(world("not_flagged"))["reviewers"][0]["comparisons"]
    # Defective d1 (t1): flagged under clean only (−1); d2 (t2): flagged under both (0). Two
    # tasks, fewer than 20 units: Newcombe's interval of the paired table (flagged under both,
    # under the condition only, under the default only, under neither), not a bootstrap.
    _, low, high = stats.newcombe_paired_interval(1, 0, 1, 0)
    assert defective == {
        "condition": "told_pass", "against": "clean", "truth_class": "defective", "pairs": 2,
        "dropped_abstentions": 0, "only_default": 1, "only_condition": 0, "difference": -1 / 2,
        "p_value": pytest.approx(mcnemar_p(1, 0)),
        "interval": {"low": pytest.approx(low), "high": pytest.approx(high),
                     "method": "Newcombe hybrid score", "units": 2}}
    # Good g1 (t1): passed, then abstained, not flagged (0); g2 (t2): flagged under clean only.
    _, low, high = stats.newcombe_paired_interval(0, 0, 1, 1)
    assert (good["pairs"], good["only_default"], good["only_condition"]) == (2, 1, 0)
    assert good["difference"] == -1 / 2
    assert good["interval"] == {"low": pytest.approx(low), "high": pytest.approx(high),
                                "method": "Newcombe hybrid score", "units": 2}


def test_abstentions_excluded_leave_n_and_drop_the_pair():
    section = reviewer_conditions(world("excluded"))
    r1 = section["reviewers"][0]
    assert section["abstain_rule"] == ABSTAIN_RULES["excluded"]
    assert r1["conditions"][1]["by_class"]["good"] == cell(1, 0, 1)
    good = r1["comparisons"][1]
    # g1 dropped; g2 alone, in one task: Newcombe's (wide) interval of one pair.
    assert (good["pairs"], good["dropped_abstentions"], good["only_default"]) == (1, 1, 1)
    assert good["difference"] == -1.0
    assert good["p_value"] == pytest.approx(mcnemar_p(1, 0))
    _, low, high = stats.newcombe_paired_interval(0, 0, 1, 0)
    assert good["interval"] == {"low": pytest.approx(low), "high": pytest.approx(high),
                                "method": "Newcombe hybrid score", "units": 1}


def test_one_task_and_no_clusters_has_newcombe_s_interval_on_copies_taken_as_independent():
    section = reviewer_conditions(world("not_flagged", tasks=1))
    assert section["resampling"]["by"] is None
    assert section["resampling"]["method"].startswith("no bootstrap")
    defective, good = section["reviewers"][0]["comparisons"]
    _, low, high = stats.newcombe_paired_interval(1, 0, 1, 0)
    assert defective["interval"] == {"low": pytest.approx(low), "high": pytest.approx(high),
                                     "method": "Newcombe hybrid score, copies treated as independent",
                                     "units": 1}
    assert good["interval"]["method"] == "Newcombe hybrid score, copies treated as independent"
    # The figures themselves do not depend on the resampling.
    assert section["reviewers"][0]["comparisons"][0]["difference"] == -1 / 2


def test_no_common_copy_no_pair():
    t = task("t1")
    d1, d2 = copy("d1", t, B, "seeded_defect"), copy("d2", t, B, "seeded_defect")
    r = reviewer("r1", "qwen", "Alibaba")
    data = report_data(bundle(tasks=[t], builders=[B], copies=[d1, d2], reviewers=[r],
                              reviews=[review(r, d1, "fail"), review(r, d2, "pass", condition="told_pass")]))
    defective, good = reviewer_conditions(data)["reviewers"][0]["comparisons"]
    assert (defective["pairs"], defective["difference"], defective["p_value"], defective["interval"]) == (
        0, None, None, None)
    assert good["pairs"] == 0


def test_no_reviewers():
    t = task("t1")
    assert reviewer_conditions(report_data(bundle(tasks=[t], builders=[B], copies=[])))["reviewers"] == []


def test_discrimination_is_read_at_the_preregistered_alpha():
    from scipy.stats import fisher_exact  # noqa: PLC0415 - the check's own computation

    # 6 of 10 defective copies flagged against 1 of 10 good ones: one-sided p = 0.029, so the
    # reviewer discriminates at 0.05 and does not at a preregistered 0.01.
    entry = {"by_class": {"defective": {"n": 10, "flagged": 6, "rate": 0.6},
                          "good": {"n": 10, "flagged": 1, "rate": 0.1}}}
    p_value = fisher_exact([[6, 4], [1, 9]], alternative="greater").pvalue
    assert 0.01 < p_value < 0.05
    assert discrimination(entry, 0.05) == {"recall": 0.6, "false_alarm_rate": 0.1,
                                           "p_value": pytest.approx(p_value), "alpha": 0.05,
                                           "discriminates": True}
    assert discrimination(entry, 0.01)["discriminates"] is False
    # Through the section: the session's frozen protocol names the level.
    section = reviewer_conditions(world("not_flagged", session=a_session(protocol={"alpha": 0.01})))
    assert {r["discrimination"]["alpha"] for r in section["reviewers"] if r["discrimination"]} == {0.01}
    section = reviewer_conditions(world("not_flagged"))
    assert {r["discrimination"]["alpha"] for r in section["reviewers"] if r["discrimination"]} == {0.05}
