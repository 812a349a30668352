"""reports.sections.self_preference on hand-made records: for each reviewer whose family built
copies, its pass rate on its own family's copies against other families', per truth class
(Wilson, scipy), the difference with its cluster-bootstrap interval against a loop over the same
draws, the tasks each side covers, reviews set apart for their seal, and its authorship guesses."""

import pytest

from reports import stats
from reports.sections.self_preference import self_preference
from tests.reports.sections.arrays import (
    a_run,
    builder,
    bundle,
    copy,
    report_data,
    review,
    reviewer,
    task,
    wilson,
)

pytestmark = pytest.mark.pure

B1 = builder("b1", "gpt-4o-2024-08-06", "OpenAI")
B2 = builder("b2", "claude", "Anthropic")
B3 = builder("b3", "gemini", "Google")


def world(rule="not_flagged", resampling="auto"):
    t1, t2, t3 = task("t1"), task("t2"), task("t3")
    a1, o1 = copy("a1", t1, B1, "known_good"), copy("o1", t1, B2, "known_good")
    a2, o2 = copy("a2", t2, B1, "tests_pass"), copy("o2", t2, B3, "tests_pass")
    a2d = copy("a2d", t2, B1, "seeded_defect")
    o3, o3g = copy("o3", t3, B2, "seeded_defect"), copy("o3g", t3, B2, "known_good")
    o4 = copy("o4", t3, B3, "known_good")
    mine = reviewer("r1", "gpt-4o-mini", "openai")  # the family of b1, case-folded
    alien = reviewer("r2", "qwen", "Alibaba")  # no copy of its family: not listed
    idle = reviewer("r3", "gemini-flash", "Google")  # of b3's family, no review
    reviews = [
        review(mine, a1, "pass", guess="gpt-4o"), review(mine, o1, "fail"), review(mine, a2, "pass"),
        review(mine, o2, "pass"), review(mine, a2d, "pass"), review(mine, o3, "fail"),
        review(mine, o3g, "abstain"),
        review(mine, o4, "pass", seal="failed"),  # set apart
        review(mine, a1, "fail", condition="told_pass"),  # another condition: not here
        review(alien, a1, "pass"),
    ]
    return report_data(bundle(tasks=[t1, t2, t3], builders=[B1, B2, B3],
                              copies=[a1, o1, a2, o2, a2d, o3, o3g, o4], reviewers=[mine, alien, idle],
                              reviews=reviews, run=a_run(abstain_scoring=rule), resampling=resampling))


def test_own_family_against_others_by_class_abstaining_as_not_flagged():
    section = self_preference(world())
    assert (section["condition"], section["abstain_scoring"], section["resampling"]["by"]) == (
        "clean", "not_flagged", "task")
    mine, idle = section["reviewers"]
    assert (mine["reviewer"], mine["model"], mine["family"], mine["set_apart"]) == (
        "r1", "gpt-4o-mini", "openai", 1)
    good = mine["by_class"]["good"]
    # Own good copies a1 (t1), a2 (t2): both passed. Others o1 (t1, failed), o2 (t2), o3g (t3,
    # abstained: a pass): 2/3. Units in order t1, t2, t3.
    assert good["own"] == pytest.approx(wilson(2, 2)) and good["others"] == pytest.approx(wilson(2, 3))
    # Three tasks, fewer than 20 units: Newcombe's interval for independent proportions, not a
    # bootstrap (issue 28 item 3).
    _, low, high = stats.newcombe_independent_interval(2, 2, 2, 3)
    assert good["difference"] == pytest.approx({"value": 1 - 2 / 3, "low": low, "high": high})
    assert good["interval"] == "Newcombe hybrid score, copies treated as independent"
    assert (good["tasks"], good["tasks_with_both"]) == (3, 2)
    defective = mine["by_class"]["defective"]
    # Own a2d (t2) passed; others o3 (t3) failed: 1/1 against 0/1, no task in common.
    assert defective["own"] == pytest.approx(wilson(1, 1))
    assert defective["others"] == pytest.approx(wilson(0, 1))
    _, low, high = stats.newcombe_independent_interval(1, 1, 0, 1)
    assert defective["difference"] == pytest.approx({"value": 1.0, "low": low, "high": high})
    assert (defective["tasks"], defective["tasks_with_both"]) == (2, 0)
    # Its one guess named b1's model by a unique prefix: right on model and family; 3 models and 3
    # families, chance 1/3 each, one-sided p = P(X >= 1 of 1) = 1/3.
    assert mine["authorship"]["guesses"] == 1
    assert mine["authorship"]["model"] == pytest.approx({**wilson(1, 1), "chance": 1 / 3, "p_value": 1 / 3})
    # A reviewer of a building family that reviewed nothing: listed, with nothing to compare.
    assert idle["reviewer"] == "r3" and idle["authorship"] is None and idle["set_apart"] == 0
    assert idle["by_class"]["good"] == {"own": wilson(0, 0), "others": wilson(0, 0),
                                        "difference": {"value": None, "low": None, "high": None},
                                        "tasks": 0, "tasks_with_both": 0, "interval": None}


def test_abstentions_excluded_are_left_out_of_both_rates():
    good = self_preference(world("excluded"))["reviewers"][0]["by_class"]["good"]
    assert good["others"] == pytest.approx(wilson(1, 2))  # o3g left out
    assert good["difference"]["value"] == pytest.approx(1 - 1 / 2)
    assert good["tasks"] == 2


def test_without_units_to_resample_the_difference_has_newcombe_s_interval():
    section = self_preference(world(resampling=None))
    assert section["resampling"]["by"] is None
    good = section["reviewers"][0]["by_class"]["good"]
    _, low, high = stats.newcombe_independent_interval(2, 2, 2, 3)
    assert good["difference"] == pytest.approx({"value": 1 - 2 / 3, "low": low, "high": high})
    assert good["interval"] == "Newcombe hybrid score, copies treated as independent"


def test_no_reviewer_of_a_building_family():
    t = task("t1")
    c = copy("c1", t, B1, "known_good")
    r = reviewer("r2", "qwen", "Alibaba")
    data = report_data(bundle(tasks=[t], builders=[B1], copies=[c], reviewers=[r],
                              reviews=[review(r, c, "pass")]))
    assert self_preference(data)["reviewers"] == []
