"""reports.sections.model_reviewers on hand-made records: the scoring group of a review (seal,
own family), reviewers' pairs over (reviewer, condition) cells counted by hand under both
abstention rules, authorship guesses against chance with scipy's one-sided binomial test, and the
seals per builder and condition."""

import pytest
from scipy.stats import binomtest

from reports.sections.model_reviewers import (
    above_chance,
    authorship,
    guess_matches,
    is_same_family,
    model_reviewers,
    review_group,
)
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

T = task("t1")
B1 = builder("b1", "gpt-4o-2024-08-06", "OpenAI")
B2 = builder("b2", "claude-3-5-sonnet-20241022", "Anthropic")
B3 = builder("b3", "gpt-4o-mini-2024-07-18", "OpenAI")


def pairs_world(rule):
    c1, c2 = copy("c1", T, B2, "seeded_defect"), copy("c2", T, B2, "tests_fail")
    c3, c4 = copy("c3", T, B2, "known_good"), copy("c4", T, B2, "tests_pass")
    c5 = copy("c5", T, B2, "unknown")
    r1, r2 = reviewer("r1", "qwen", "Alibaba"), reviewer("r2", "Qwen", "Alibaba")
    r3 = reviewer("r3", "llama", "Meta")
    reviews = [
        review(r1, c1, "fail"), review(r1, c2, "pass"), review(r1, c3, "pass"), review(r1, c4, "abstain"),
        review(r1, c5, "fail"),
        review(r1, c1, "pass", condition="told_pass"), review(r1, c2, "pass", condition="told_pass"),
        review(r1, c3, "pass", condition="told_pass"),
        review(r2, c1, "pass"), review(r2, c2, "fail"), review(r2, c3, "fail"), review(r2, c4, "pass"),
        review(r2, c5, "pass", seal="failed"),  # set apart: never in a pair
        review(r3, c3, "pass"), review(r3, c5, "fail", seal="absent"),
    ]
    return report_data(bundle(tasks=[T], builders=[B1, B2], copies=[c1, c2, c3, c4, c5],
                              reviewers=[r1, r2, r3], reviews=reviews, run=a_run(abstain_scoring=rule)))


def pair(a, b, same_model, copies, dropped, catch, tnr):
    return {"reviewers": [a[0], b[0]], "conditions": [a[1], b[1]], "same_model": same_model,
            "same_condition": a[1] == b[1], "shown_by_default": a[1] == b[1] and not same_model,
            "copies": copies, "dropped_abstentions": dropped,
            "catch_rate": pytest.approx(catch), "tnr": pytest.approx(tnr)}


R1, R1_TOLD, R2, R3 = ("r1", "clean"), ("r1", "told_pass"), ("r2", "clean"), ("r3", "clean")


def test_pairs_of_cells_by_hand_abstaining_as_not_flagged():
    section = model_reviewers(pairs_world("not_flagged"))
    assert section["condition"] == "clean"
    assert section["pairs"] == [
        # Common c1 c2 (caught by r1, by r2), c3 (failed by r2), c4 (neither failed: r1 abstained).
        # qwen and Qwen are one model: not shown by default.
        pair(R1, R1_TOLD, True, 3, 0, wilson(1, 2), wilson(1, 1)),
        pair(R1, R2, True, 4, 0, wilson(2, 2), wilson(1, 2)),
        # c3 and c5 (unknown truth: a common copy, in neither rate).
        pair(R1, R3, False, 2, 0, wilson(0, 0), wilson(1, 1)),
        pair(R1_TOLD, R2, True, 3, 0, wilson(1, 2), wilson(0, 1)),
        pair(R1_TOLD, R3, False, 1, 0, wilson(0, 0), wilson(1, 1)),
        pair(R2, R3, False, 1, 0, wilson(0, 0), wilson(0, 1)),
    ]


def test_pairs_drop_a_copy_abstained_on_under_excluded():
    pairs = model_reviewers(pairs_world("excluded"))["pairs"]
    # r1's abstention on c4 drops c4 from its pairs with r2; nothing else changes.
    assert pairs[1] == pair(R1, R2, True, 3, 1, wilson(2, 2), wilson(0, 1))
    assert pairs[0] == pair(R1, R1_TOLD, True, 3, 0, wilson(1, 2), wilson(1, 1))


def test_seals_per_builder_every_condition_default_first():
    rows = model_reviewers(pairs_world("not_flagged"))["seals_by_builder"]
    assert rows == [
        {"builder": "b1", "sealed": 0, "verdict_in_content": 0, "failed": 0, "absent": 0, "by_condition": []},
        {"builder": "b2", "sealed": 13, "verdict_in_content": 0, "failed": 1, "absent": 1, "by_condition": [
            {"condition": "clean", "sealed": 10, "verdict_in_content": 0, "failed": 1, "absent": 1},
            {"condition": "told_pass", "sealed": 3, "verdict_in_content": 0, "failed": 0, "absent": 0}]}]


def test_the_group_of_a_review():
    c1 = copy("c1", T, B1, "seeded_defect")
    mine, other = reviewer("r1", "gpt-4o-mini", "openai"), reviewer("r2", "qwen", "Alibaba")
    b = bundle(tasks=[T], builders=[B1], copies=[c1], reviewers=[mine, other])
    assert is_same_family(review(mine, c1, "fail"), b)  # OpenAI and openai, case-folded
    assert not is_same_family(review(other, c1, "fail"), b)
    assert review_group(review(mine, c1, "fail"), b) == "same_family"
    assert review_group(review(other, c1, "fail"), b) == "main"
    assert review_group(review(other, c1, "fail", seal="absent"), b) == "main"
    # A seal that failed or a verdict in the request's content sets a review apart, own family or not.
    assert review_group(review(mine, c1, "fail", seal="failed"), b) == "seal_failed"
    assert review_group(review(other, c1, "fail", seal="verdict_in_content"), b) == "verdict_in_content"


def test_a_guess_names_a_model_exactly_or_by_a_unique_prefix_or_a_family():
    builders = [B1, B2, B3]
    assert guess_matches(" GPT-4o-2024-08-06 ", builders) == ("gpt-4o-2024-08-06", "OpenAI")
    assert guess_matches("claude", builders) == ("claude-3-5-sonnet-20241022", "Anthropic")
    # gpt-4o prefixes two models: it names neither, nor a family.
    assert guess_matches("gpt-4o", builders) == (None, None)
    assert guess_matches("openai", builders) == (None, "OpenAI")
    assert guess_matches("  ", builders) == (None, None)
    assert guess_matches("mistral", builders) == (None, None)


def test_authorship_guesses_against_chance():
    c1, c2, c3 = (copy(f"c{n}", T, b, "known_good") for n, b in ((1, B1), (2, B2), (3, B3)))
    r1, r2, r3 = reviewer("r1", "qwen", "Alibaba"), reviewer("r2", "llama", "Meta"), reviewer("r3", "x", "X")
    reviews = [review(r1, c1, "pass", guess="gpt-4o-2024-08-06"),  # model and family right
               review(r1, c2, "pass", guess="openai"),  # both wrong
               review(r1, c3, "pass", guess="gpt-4o"),  # names nothing: both wrong
               review(r1, c1, "pass", guess="gpt-4o-2024-08-06", condition="told_pass"),  # not counted
               review(r2, c2, "pass", guess="anthropic"),  # family right
               review(r3, c3, "pass")]  # no guess
    section = authorship(bundle(tasks=[T], builders=[B1, B2, B3], copies=[c1, c2, c3],
                                reviewers=[r1, r2, r3], reviews=reviews))
    # Three models (chance 1/3), two families (chance 1/2). P(X >= k), X ~ Binomial(n, chance).
    assert (section["builders"], section["families"]) == (3, 2)

    def check(entry, n, model_k, family_k, model_p, family_p):
        assert entry["guesses"] == n
        assert entry["model"] == pytest.approx({**wilson(model_k, n), "chance": 1 / 3, "p_value": model_p})
        assert entry["family"] == pytest.approx({**wilson(family_k, n), "chance": 1 / 2, "p_value": family_p})

    assert [e["reviewer"] for e in section["reviewers"]] == ["r1", "r2"]  # r3 guessed nothing
    check(section["reviewers"][0], 3, 1, 1, 1 - (2 / 3) ** 3, 7 / 8)
    check(section["reviewers"][1], 1, 0, 1, 1.0, 1 / 2)
    check(section["all"], 4, 1, 2, 1 - (2 / 3) ** 4, 11 / 16)


def test_no_guess_and_no_test_where_chance_is_certain():
    c1 = copy("c1", T, B1, "known_good")
    section = authorship(bundle(tasks=[T], builders=[B1], copies=[c1]))
    assert section["reviewers"] == [] and section["all"]["guesses"] == 0
    assert section["all"]["model"] == {**wilson(0, 0), "chance": 1.0, "p_value": None}
    assert above_chance(0, 0, 0.5) is None and above_chance(2, 3, None) is None
    assert above_chance(3, 3, 1.0) is None
    assert above_chance(3, 4, 0.25) == pytest.approx(binomtest(3, 4, 0.25, alternative="greater").pvalue)
    empty = authorship(bundle(tasks=[], builders=[], copies=[]))
    assert empty["builders"] == 0
    assert empty["all"]["model"]["chance"] is None and empty["all"]["family"]["chance"] is None


def test_models_differing_only_in_case_are_one_model_to_the_guesses():
    """A bundle that spells one model two ways (two runs' builders, "GPT-4o-…" and "gpt-4o-…"):
    one model of two (chance 1/2, not 1/3), and a guess names it whichever way each is spelt."""
    shouting = builder("b4", "GPT-4o-2024-08-06", "OpenAI")
    c1, c2, c4 = copy("c1", T, B1, "known_good"), copy("c2", T, B2, "known_good"), \
        copy("c4", T, shouting, "known_good")
    r1 = reviewer("r1", "qwen", "Alibaba")
    reviews = [review(r1, c4, "pass", guess="gpt-4o-2024-08-06"),  # model right
               review(r1, c1, "pass", guess="GPT-4O"),  # a unique prefix of one model: right
               review(r1, c2, "pass", guess="gpt-4o-2024-08-06")]  # wrong
    section = authorship(bundle(tasks=[T], builders=[B1, B2, shouting], copies=[c1, c2, c4],
                                reviewers=[r1], reviews=reviews))
    assert (section["builders"], section["families"]) == (2, 2)
    assert section["all"]["model"] == pytest.approx(
        {**wilson(2, 3), "chance": 1 / 2, "p_value": 1 / 2})
    assert guess_matches("GPT-4o", [B1, shouting]) == ("gpt-4o-2024-08-06", "OpenAI")
