"""Decision rules naming a reviewer, a condition or a builder (issue 14 item 6): the grammar, the
object form naming the primary builder comparison, and validation against the run (its reviewers
and their conditions, its builders, its default condition). Pure: the run is a RunContext."""

import hashlib
import hmac
import json

import pytest

from content.draws import order_key, screening_items
from content.rules import (
    DEFAULT_PRIMARY,
    METRICS,
    RulesError,
    RunBuilder,
    RunContext,
    RunReviewer,
    comparison,
    parse_block,
    parse_rules,
    screening_count,
    tasks_excluded,
)

# No database, no socket, no process: run once (tests/support/pure.py).
pytestmark = pytest.mark.pure

RUN = RunContext(
    default_condition="clean",
    reviewers=(
        RunReviewer("r1", "qwen3-1.7b", "Alibaba", ("clean", "told_pass")),
        RunReviewer("r2", "gpt-4o-mini", "OpenAI", ("clean",)),
        RunReviewer("r3", "mistral-large", "Mistral", ("told_pass",)),
    ),
    builders=(
        RunBuilder("b1", "gpt-4o-2024-08-06", "OpenAI"),
        RunBuilder("b2", "claude-3-5-sonnet-20241022", "Anthropic"),
        RunBuilder("b3", "gemini-1.5-pro", "Google"),
    ),
)


def text_of(block) -> str:
    body = block if isinstance(block, str) else json.dumps(block)
    return f"Prereg.\n```rules\n{body}\n```\n"


def rule(metric, **selectors) -> dict:
    return {"name": "x", "metric": metric, "op": ">=", "threshold": 0.1, **selectors}


def refused(block, run=RUN) -> list[str]:
    with pytest.raises(RulesError) as error:
        parse_block(text_of(block), run)
    return error.value.errors


VALID = [
    rule("reviewer_recall", reviewer="r1"),
    rule("reviewer_recall", reviewer="qwen3-1.7b", condition="told_pass"),
    rule("reviewer_tnr", reviewer="r2", condition="clean"),
    rule("condition_delta_flag_rate", reviewer="r1", condition="told_pass", truth_class="defective"),
    rule("condition_mcnemar_p", reviewer="qwen3-1.7b", condition="told_pass", truth_class="good"),
    rule("self_preference_delta", reviewer="r2", truth_class="good"),
    rule("builder_pass_rate", builder="b1"),
    rule("builder_pass_rate", builder="gemini-1.5-pro", source="truth"),
    rule("builder_pass_rate", builder="b2", source="judges_phase2", group="guest"),
    rule("builder_pass_rate", builder="b2", source="reviewer", reviewer="r1"),
    rule("builder_difference", builders=["b1", "b2"]),
    rule("builder_difference", builders=["b3", "gpt-4o-2024-08-06"], source="judges_phase1",
         group="self_blinded_host"),
    rule("builder_difference_p_holm", builders=["b2", "b1"], source="reviewer",
         reviewer="gpt-4o-mini"),
    {"name": "both", "metric": "delta_recall", "op": "<", "threshold": 0,
     "and": {"metric": "reviewer_tnr", "reviewer": "r1", "op": "<", "threshold": 0.5}},
]


@pytest.mark.parametrize("written", VALID, ids=[r["metric"] for r in VALID])
def test_every_metric_with_its_selectors_parses_as_written(written):
    block = parse_block(text_of([written]), RUN)
    assert block.rules == [written] and block.primary_comparison is None
    # The rules are kept exactly as written (a model stays a model); the run only validates.
    assert parse_rules(text_of([written]), RUN) == [written]


def test_the_new_metrics_are_known_after_the_pooled_ones():
    assert METRICS[:9] == (
        "delta_fleiss_kappa", "delta_recall", "delta_tnr", "recall_phase1", "tnr_phase1",
        "recall_phase2", "tnr_phase2", "shift_towards_truth", "shift_away_from_truth")
    # A pairs session's pooled metrics next (issue 31), then the ones with selectors.
    assert METRICS[9:14] == (
        "pairwise_accuracy_phase1", "pairwise_accuracy_phase2", "decisive_accuracy_phase1",
        "decisive_accuracy_phase2", "position_bias")
    assert METRICS[14:] == (
        "reviewer_recall", "reviewer_tnr", "condition_delta_flag_rate", "condition_mcnemar_p",
        "self_preference_delta", "builder_pass_rate", "builder_difference",
        "builder_difference_p_holm")


# Refusals of the grammar itself: no run needed (and the same with one).
@pytest.mark.parametrize("written, errors", [
    (rule("reviewer_recall"), ["rules[0].reviewer: metric reviewer_recall needs a reviewer"]),
    (rule("reviewer_tnr", reviewer=""),
     ["rules[0].reviewer: expected a reviewer's bundle id or model (a non-empty string)"]),
    (rule("reviewer_recall", reviewer=["r1"]),
     ["rules[0].reviewer: expected a reviewer's bundle id or model (a non-empty string)"]),
    (rule("reviewer_recall", reviewer="r1", condition=3),
     ["rules[0].condition: expected a condition's name (a non-empty string)"]),
    (rule("reviewer_recall", reviewer="r1", truth_class="good"),
     ['rules[0].truth_class: metric reviewer_recall takes no truth_class; '
      'it takes: reviewer, condition']),
    (rule("delta_recall", reviewer="r1"),
     ["rules[0].reviewer: metric delta_recall takes no selectors"]),
    (rule("condition_delta_flag_rate", reviewer="r1"),
     ["rules[0].condition: metric condition_delta_flag_rate needs a condition",
      "rules[0].truth_class: metric condition_delta_flag_rate needs a truth_class"]),
    (rule("condition_mcnemar_p", reviewer="r1", condition="told_pass", truth_class="bad"),
     ['rules[0].truth_class: unknown truth class "bad"; known: defective, good']),
    (rule("self_preference_delta", truth_class="good", condition="told_pass"),
     ["rules[0].condition: metric self_preference_delta takes no condition; "
      "it takes: reviewer, truth_class",
      "rules[0].reviewer: metric self_preference_delta needs a reviewer"]),
    (rule("builder_pass_rate"), ["rules[0].builder: metric builder_pass_rate needs a builder"]),
    (rule("builder_pass_rate", builder="b1", source="vibes"),
     ['rules[0].source: unknown source "vibes"; known: judges_phase1, judges_phase2, truth, '
      'reviewer']),
    (rule("builder_pass_rate", builder="b1", source="judges_phase1", group="removed"),
     ['rules[0].group: unknown group "removed"; known: invited, guest, self_blinded_host']),
    (rule("builder_pass_rate", builder="b1", group="guest"),
     ['rules[0].group: name the source it belongs to ("source": "judges_phase1" or '
      '"judges_phase2")']),
    (rule("builder_pass_rate", builder="b1", reviewer="r1"),
     ['rules[0].reviewer: name the source it belongs to ("source": "reviewer")']),
    (rule("builder_pass_rate", builder="b1", source="truth", group="invited", reviewer="r1"),
     ['rules[0].group: source "truth" takes no group (only judges_phase1 and judges_phase2 do)',
      'rules[0].reviewer: source "truth" takes no reviewer (only source "reviewer" does)']),
    (rule("builder_pass_rate", builder="b1", source="reviewer"),
     ['rules[0].reviewer: source "reviewer" needs a reviewer']),
    (rule("builder_difference", builder="b1"),
     ["rules[0].builder: metric builder_difference takes no builder; "
      "it takes: builders, source, group, reviewer",
      "rules[0].builders: metric builder_difference needs builders"]),
    (rule("builder_difference", builders="b1"),
     ["rules[0].builders: expected two different builders, [a, b] (the difference is a - b)"]),
    (rule("builder_difference_p_holm", builders=["b1", "b1"]),
     ["rules[0].builders: expected two different builders, [a, b] (the difference is a - b)"]),
    (rule("builder_difference_p_holm", builders=["b1", "b2", "b3"]),
     ["rules[0].builders: expected two different builders, [a, b] (the difference is a - b)"]),
    (rule("reviewer_recall", reviewer="r1", colour="red"), ['rules[0]: unknown field "colour"']),
    ({"name": "a", "metric": "delta_recall", "op": ">", "threshold": 0,
      "and": {"metric": "reviewer_tnr", "op": "<", "threshold": 1, "builder": "b1"}},
     ["rules[0].and.builder: metric reviewer_tnr takes no builder; it takes: reviewer, condition",
      "rules[0].and.reviewer: metric reviewer_tnr needs a reviewer"]),
    ({"name": "a", "metric": "delta_recall", "op": ">", "threshold": 0,
      "and": {"metric": "delta_tnr", "op": "<", "threshold": 1, "name": "b"}},
     ['rules[0].and: unknown field "name"']),
])
def test_the_grammar_refuses_every_problem_by_place(written, errors):
    assert refused([written], run=None) == errors
    assert refused([written]) == errors


def test_an_unknown_metric_lists_every_known_one_and_its_selectors_are_not_judged():
    errors = refused([rule("accuracy", reviewer="r1", builders=3)])
    assert errors == [f'rules[0].metric: unknown metric "accuracy"; known: {", ".join(METRICS)}']
    assert refused([rule("accuracy", colour="red")]) == [
        'rules[0]: unknown field "colour"',
        f'rules[0].metric: unknown metric "accuracy"; known: {", ".join(METRICS)}']


# Refusals against the run.
@pytest.mark.parametrize("written, errors", [
    (rule("reviewer_recall", reviewer="r9"),
     ['rules[0].reviewer: no reviewer "r9" in this run; reviewers: r1, r2, r3']),
    (rule("builder_pass_rate", builder="b1", source="reviewer", reviewer="gpt-5"),
     ['rules[0].reviewer: no reviewer "gpt-5" in this run; reviewers: r1, r2, r3']),
    (rule("reviewer_tnr", reviewer="r1", condition="told_fail"),
     ['rules[0].condition: reviewer r1 has no reviews under condition "told_fail"; '
      'its conditions: clean, told_pass']),
    (rule("reviewer_tnr", reviewer="r3"),
     ['rules[0].reviewer: reviewer r3 has no reviews under the default condition "clean"; '
      'its conditions: told_pass']),
    (rule("condition_delta_flag_rate", reviewer="r1", condition="clean", truth_class="good"),
     ['rules[0].condition: "clean" is the run\'s default condition, which every other condition '
      'is compared against; name another']),
    (rule("condition_mcnemar_p", reviewer="r2", condition="told_pass", truth_class="good"),
     ['rules[0].condition: reviewer r2 has no reviews under condition "told_pass"; '
      'its conditions: clean']),
    (rule("condition_mcnemar_p", reviewer="r3", condition="told_pass", truth_class="good"),
     ['rules[0].reviewer: reviewer r3 has no reviews under the default condition "clean"; '
      'its conditions: told_pass']),
    (rule("self_preference_delta", reviewer="r1", truth_class="good"),
     ['rules[0].reviewer: reviewer r1\'s family "Alibaba" built no copy in this run; '
      'self-preference is measured only for a reviewer whose family also built copies']),
    (rule("builder_pass_rate", builder="b9"),
     ['rules[0].builder: no builder "b9" in this run; builders: b1, b2, b3']),
    (rule("builder_difference", builders=["b1", "gpt-4o"]),
     ['rules[0].builders[1]: no builder "gpt-4o" in this run; builders: b1, b2, b3']),
    (rule("builder_difference", builders=["b1", "gpt-4o-2024-08-06"]),
     ['rules[0].builders: "b1" and "gpt-4o-2024-08-06" are the same builder (b1)']),
])
def test_the_run_refuses_what_it_does_not_hold(written, errors):
    assert refused([written]) == errors
    # Without the run the same rule is well formed.
    assert parse_rules(text_of([written])) == [written]


def test_a_model_two_reviewers_share_must_be_named_by_id():
    run = RunContext(default_condition="clean", builders=RUN.builders, reviewers=(
        RunReviewer("r1", "qwen3-1.7b", "Alibaba", ("clean",)),
        RunReviewer("r2", "qwen3-1.7b", "Alibaba", ("clean",))))
    assert refused([rule("reviewer_recall", reviewer="qwen3-1.7b")], run) == [
        'rules[0].reviewer: "qwen3-1.7b" is the model of reviewers r1, r2; name one by its id']
    assert parse_rules(text_of([rule("reviewer_recall", reviewer="r2")]), run)


def test_an_id_wins_over_another_reviewers_model():
    run = RunContext(default_condition="clean", builders=RUN.builders, reviewers=(
        RunReviewer("m", "x", "Alibaba", ("clean",)),
        RunReviewer("r2", "m", "Alibaba", ("told",))))
    # "m" is r2's model but reviewer m's id: the id is meant, and it has clean reviews.
    assert parse_rules(text_of([rule("reviewer_recall", reviewer="m")]), run)
    assert run.reviewer_id("m") == "m" and run.reviewer_id("x") == "m"
    assert run.reviewer_id("nobody") is None and RUN.builder_id("gemini-1.5-pro") == "b3"


def test_several_problems_in_several_rules_are_all_named():
    assert refused([rule("reviewer_recall", reviewer="r9"), rule("builder_pass_rate", builder="b9")]) == [
        'rules[0].reviewer: no reviewer "r9" in this run; reviewers: r1, r2, r3',
        'rules[1].builder: no builder "b9" in this run; builders: b1, b2, b3',
        'rules[1].name: duplicate rule name "x"']


# The object form.
def test_the_object_form_names_the_primary_comparison():
    written = rule("builder_difference", builders=["b1", "b2"])
    block = parse_block(text_of({"primary_comparison": {"source": "truth"}, "rules": [written]}),
                        RUN)
    assert block.rules == [written] and block.primary_comparison == {"source": "truth"}
    block = parse_block(text_of({"primary_comparison": {"source": "judges_phase2"}}), RUN)
    assert block.rules == [] and block.primary_comparison == {
        "source": "judges_phase2", "group": "invited"}
    # A reviewer named by model is stored by its bundle id (the builders section reads ids).
    block = parse_block(text_of({"primary_comparison": {"source": "reviewer",
                                                        "reviewer": "gpt-4o-mini"}}), RUN)
    assert block.primary_comparison == {"source": "reviewer", "reviewer": "r2"}
    block = parse_block(text_of({"primary_comparison": {"source": "judges_phase1",
                                                        "group": "guest"}}), None)
    assert block.primary_comparison == {"source": "judges_phase1", "group": "guest"}
    assert DEFAULT_PRIMARY == {"source": "judges_phase1", "group": "invited"}


def test_the_object_form_names_the_significance_level():
    block = parse_block(text_of({"alpha": 0.01, "primary_comparison": {"source": "truth"}}), RUN)
    assert (block.alpha, block.primary_comparison, block.rules) == (0.01, {"source": "truth"}, [])
    assert parse_block(text_of({"alpha": 0.2}), RUN).alpha == 0.2  # the upper bound is allowed
    assert parse_block(text_of({"rules": []}), RUN).alpha is None  # unnamed: the report's 0.05
    assert parse_block(text_of([rule("delta_recall")]), RUN).alpha is None


def test_an_object_with_rules_only_is_the_list_and_the_list_has_no_primary():
    written = [rule("delta_recall")]
    assert parse_block(text_of({"rules": written}), RUN).rules == written
    block = parse_block(text_of(written), RUN)
    assert block.rules == written and block.primary_comparison is None
    assert parse_block("No block here.", RUN).rules == []
    assert parse_block("No block here.", RUN).primary_comparison is None


@pytest.mark.parametrize("block, errors", [
    ({"primary_comparison": {"source": "judges"}, "rules": []},
     ['primary_comparison.source: unknown source "judges"; known: judges_phase1, judges_phase2, '
      'truth, reviewer']),
    ({"primary_comparison": {}}, ["primary_comparison.source: the primary comparison needs a source"]),
    ({"primary_comparison": "truth"}, ["primary_comparison: expected an object"]),
    ({"primary_comparison": {"source": "reviewer", "reviewer": "r9"}},
     ['primary_comparison.reviewer: no reviewer "r9" in this run; reviewers: r1, r2, r3']),
    ({"primary_comparison": {"source": "reviewer"}},
     ['primary_comparison.reviewer: source "reviewer" needs a reviewer']),
    ({"primary_comparison": {"source": "truth", "group": "invited", "builders": ["b1", "b2"]}},
     ['primary_comparison: unknown field "builders"',
      'primary_comparison.group: source "truth" takes no group (only judges_phase1 and '
      'judges_phase2 do)']),
    ({"primary_comparison": {"source": "truth"}, "rules": {"name": "a"}},
     ["rules: expected a JSON list of rules"]),
    ({"rules": [], "notes": "x"},
     ['rules: unknown field "notes"; the object holds "alpha", "primary_comparison" and "rules"']),
    ({"alpha": 0.5, "rules": []},
     ["alpha: 0.5 is outside (0, 0.2]: the significance level is the chance of a false alarm the "
      "host accepts, e.g. 0.05 or 0.01"]),
    ({"alpha": 0, "rules": []},
     ["alpha: 0 is outside (0, 0.2]: the significance level is the chance of a false alarm the "
      "host accepts, e.g. 0.05 or 0.01"]),
    ({"alpha": "0.05"}, ['alpha: expected a number such as 0.05, got "0.05"']),
    ({"alpha": True}, ["alpha: expected a number such as 0.05, got true"]),
    ({"name": "a"}, ["rules: expected a JSON list of rules"]),
    ('"herding"', ["rules: expected a JSON list of rules"]),
    ({"primary_comparison": {"source": "truth"},
      "rules": [rule("reviewer_recall", reviewer="r9")]},
     ['rules[0].reviewer: no reviewer "r9" in this run; reviewers: r1, r2, r3']),
])
def test_the_object_form_refuses_every_problem_by_place(block, errors):
    assert refused(block) == errors


# --- Rules that act (issue 29 item 4): one grammar, checked when written -------------------------

EXCLUDE = {"name": "drop unfair tasks", "action": "exclude_tasks",
           "when": {"flag_share": ">=0.5", "severity": ">=2"}}


def test_a_rule_that_acts_is_kept_apart_from_the_decision_rules():
    block = parse_block(text_of([rule("delta_recall"), EXCLUDE]), RUN)
    assert block.rules == [rule("delta_recall")]
    assert block.actions == (EXCLUDE,)
    assert parse_block(text_of({"rules": [EXCLUDE]}), RUN).actions == (EXCLUDE,)
    with_kind = {**EXCLUDE, "when": {"flag_share": "> 0.25", "flag": "tests_unfair"}}
    assert parse_block(text_of([with_kind]), RUN).actions == (with_kind,)


@pytest.mark.parametrize("written, errors", [
    ({**EXCLUDE, "action": "exclude_everything"},
     ['rules[0].action: unknown action "exclude_everything"; known: exclude_tasks, '
      'exclude_judge']),
    ({**EXCLUDE, "when": None},
     ['rules[0].when: expected an object naming what the action acts on (e.g. {"flag_share": '
      '">=0.5"})']),
    ({**EXCLUDE, "when": {"severity": ">=2"}}, ["rules[0].when.flag_share: exclude_tasks needs it"]),
    ({**EXCLUDE, "when": {"flag_share": "half"}},
     ['rules[0].when.flag_share: expected a comparison with a share from 0 to 1, such as ">=0.5"; '
      'got "half"']),
    ({**EXCLUDE, "when": {"flag_share": ">=1.5"}},
     ['rules[0].when.flag_share: expected a comparison with a share from 0 to 1, such as ">=0.5"; '
      'got ">=1.5"']),
    ({**EXCLUDE, "when": {"flag_share": ">=0.5", "severity": ">=4"}},
     ['rules[0].when.severity: expected a comparison with a severity from 0 to 3, such as ">=2"; '
      'got ">=4"']),
    ({**EXCLUDE, "when": {"flag_share": ">=0.5", "flag": "boring"}},
     ['rules[0].when.flag: unknown flag "boring"; known: underspecified, tests_unfair, other']),
    ({**EXCLUDE, "when": {"flag_share": ">=0.5", "judge": "J01"}},
     ['rules[0].when: unknown selector "judge"; exclude_tasks takes flag_share, severity, flag']),
    ({**EXCLUDE, "metric": "delta_recall"},
     ['rules[0]: unknown field "metric" (a rule that acts holds "name", "action" and "when")']),
    ({**EXCLUDE, "name": ""}, ["rules[0].name: a rule needs a non-empty name"]),
])
def test_a_rule_that_acts_is_refused_by_place(written, errors):
    assert refused([written]) == errors


def test_names_are_unique_across_both_kinds_of_rule():
    assert refused([{**rule("delta_recall"), "name": "drop unfair tasks"}, EXCLUDE]) == [
        'rules[1].name: duplicate rule name "drop unfair tasks"']


def test_exclude_tasks_is_refused_where_the_session_collects_no_task_flags():
    with pytest.raises(RulesError) as error:
        parse_block(text_of([EXCLUDE]), RUN, task_flags=False)
    assert error.value.errors == [
        "rules[0].action: exclude_tasks acts on the judges' task flags, and this session does not "
        "collect them"]
    assert parse_block(text_of([EXCLUDE]), RUN, task_flags=True).actions == (EXCLUDE,)


def test_the_tasks_a_rule_excludes_by_share_severity_kind_and_leaving_one_out():
    # t1: seen by J1 J2 J3 J4; flagged by J1 (unfair, 3) and J2 (underspecified, 2): 2/4.
    # t2: seen by J1 J2; flagged by J1 (unfair, 1): 1/2, but below severity 2.
    # t3: seen by J3 J4; flagged by J3 (other, 3) and J4 (unfair, 2): 2/2.
    # A flag by a judge who did not see the task (J5 on t1) counts nowhere.
    seen = {"t1": {"J1", "J2", "J3", "J4"}, "t2": {"J1", "J2"}, "t3": {"J3", "J4"}}
    flags = [("t1", "J1", "tests_unfair", 3), ("t1", "J2", "underspecified", 2),
             ("t2", "J1", "tests_unfair", 1), ("t3", "J3", "other", 3),
             ("t3", "J4", "tests_unfair", 2), ("t1", "J5", "other", 3)]
    assert tasks_excluded(EXCLUDE, flags, seen) == {"t1", "t3"}
    no_severity = {**EXCLUDE, "when": {"flag_share": ">=0.5"}}
    assert tasks_excluded(no_severity, flags, seen) == {"t1", "t2", "t3"}
    unfair = {**EXCLUDE, "when": {"flag_share": ">=0.5", "flag": "tests_unfair"}}
    assert tasks_excluded(unfair, flags, seen) == {"t2", "t3"}  # t1: 1/4
    # Re-scoring J2: J2 is left out of t1 (1/3, stays) and t2 (0/1 at severity >= 2).
    assert tasks_excluded(EXCLUDE, flags, seen, leave_out="J2") == {"t3"}
    # Re-scoring J3: t3 is then 1/1 (J4's own flag), still out; t1 2/3.
    assert tasks_excluded(EXCLUDE, flags, seen, leave_out="J3") == {"t1", "t3"}
    assert comparison(">= 0.5") == (">=", 0.5) and comparison("half") is None


# --- exclude_judge (issue 30 item 5): a judge left out by their own phase-1 work -------------------

MISSED = {"name": "missed the seeded defects", "action": "exclude_judge",
          "when": {"judge_recall_controls": "<0.5"}, "screening_share": 0.33}
FAST = {"name": "too fast", "action": "exclude_judge",
        "when": {"judge_fast_answers": ">=0.5", "seconds": "<2"}}
MEDIAN = {"name": "median too short", "action": "exclude_judge",
          "when": {"judge_median_seconds": "<4"}}
CONTROLS = {"seeded_defect": 6, "known_good": 3}


def test_exclude_judge_sits_beside_exclude_tasks_in_one_grammar():
    tnr = {**MISSED, "name": "passed nothing good", "when": {"judge_tnr_controls": "<=0.25"}}
    block = parse_block(text_of([rule("delta_recall"), MISSED, tnr, FAST, MEDIAN, EXCLUDE]), RUN,
                        task_flags=True, controls=CONTROLS)
    assert block.rules == [rule("delta_recall")]
    assert block.actions == (MISSED, tnr, FAST, MEDIAN, EXCLUDE)
    # Without controls given, the grammar alone; metrics reading no control need none.
    assert parse_block(text_of([MISSED]), RUN).actions == (MISSED,)
    assert parse_block(text_of([FAST, MEDIAN]), RUN, controls={}).actions == (FAST, MEDIAN)


@pytest.mark.parametrize("written, errors", [
    ({**MISSED, "when": {"judge_recall": "<0.5"}},
     ['rules[0].when: unknown selector "judge_recall"; exclude_judge takes judge_recall_controls, '
      'judge_tnr_controls, judge_fast_answers, judge_median_seconds, seconds',
      "rules[0].when: name one metric of the judge's own phase-1 work, one of "
      "judge_recall_controls, judge_tnr_controls, judge_fast_answers, judge_median_seconds"]),
    ({**MISSED, "when": {"judge_recall_controls": "<0.5", "judge_tnr_controls": "<0.5"}},
     ["rules[0].when: name one metric of the judge's own phase-1 work, one of "
      "judge_recall_controls, judge_tnr_controls, judge_fast_answers, judge_median_seconds; it "
      "names 2: judge_recall_controls, judge_tnr_controls"]),
    ({**MISSED, "when": {"judge_recall_controls": "below half"}},
     ['rules[0].when.judge_recall_controls: expected a comparison with a share from 0 to 1, such '
      'as "<0.5"; got "below half"']),
    ({**MISSED, "when": {"judge_recall_controls": "<1.5"}},
     ['rules[0].when.judge_recall_controls: expected a comparison with a share from 0 to 1, such '
      'as "<0.5"; got "<1.5"']),
    ({**MEDIAN, "when": {"judge_median_seconds": "<-1"}},
     ['rules[0].when.judge_median_seconds: expected a comparison with a number of seconds, 0 or '
      'more, such as "<5"; got "<-1"']),
    ({**FAST, "when": {"judge_fast_answers": ">=0.5"}},
     ['rules[0].when.seconds: judge_fast_answers needs it: the time an answer is fast below, '
      'such as "<3"']),
    ({**FAST, "when": {"judge_fast_answers": ">=0.5", "seconds": ">30"}},
     ['rules[0].when.seconds: expected "<" or "<=" and a positive number of seconds, such as '
      '"<3"; got ">30"']),
    ({**FAST, "when": {"judge_fast_answers": ">=0.5", "seconds": 2}},
     ['rules[0].when.seconds: expected "<" or "<=" and a positive number of seconds, such as '
      '"<3"; got 2']),
    ({**MEDIAN, "when": {"judge_median_seconds": "<4", "seconds": "<2"}},
     ["rules[0].when.seconds: only judge_fast_answers takes seconds"]),
    ({k: v for k, v in MISSED.items() if k != "screening_share"},
     ["rules[0].screening_share: judge_recall_controls reads the controls, and only a screening "
      "share of them, drawn at opening (the rest are what every score is reported on); name it, "
      "such as 0.33"]),
    ({**MISSED, "screening_share": 1},
     ["rules[0].screening_share: expected a share above 0 and below 1, such as 0.33; got 1"]),
    ({**MISSED, "screening_share": 0},
     ["rules[0].screening_share: expected a share above 0 and below 1, such as 0.33; got 0"]),
    ({**MISSED, "screening_share": True},
     ["rules[0].screening_share: expected a share above 0 and below 1, such as 0.33; got true"]),
    ({**FAST, "screening_share": 0.5},
     ["rules[0].screening_share: judge_fast_answers reads no control, so nothing is drawn for "
      "screening; leave it out"]),
    ({**MISSED, "when": None},
     ['rules[0].when: expected an object naming what the action acts on (e.g. '
      '{"judge_recall_controls": "<0.5"})']),
    ({**MISSED, "phase": 2},
     ['rules[0]: unknown field "phase" (an exclude_judge rule holds "name", "action", "when" and, '
      'with a control-based metric, "screening_share")']),
    ({**EXCLUDE, "screening_share": 0.5},
     ['rules[0]: unknown field "screening_share" (a rule that acts holds "name", "action" and '
      '"when")']),
])
def test_exclude_judge_is_refused_by_place_when_written(written, errors):
    assert refused([written]) == errors


def test_one_screening_share_serves_every_rule():
    tnr = {**MISSED, "name": "passed nothing good", "when": {"judge_tnr_controls": "<0.5"},
           "screening_share": 0.5}
    assert refused([MISSED, FAST, tnr]) == [
        "rules[2].screening_share: 0.5 differs from rules[0]'s 0.33; one screening draw serves "
        "every rule, so name one share"]


def controls_refused(block, controls) -> list[str]:
    with pytest.raises(RulesError) as error:
        parse_block(text_of(block), RUN, controls=controls)
    return error.value.errors


def test_a_control_based_metric_is_refused_where_the_session_has_no_such_control():
    tnr = {**MISSED, "name": "passed nothing good", "when": {"judge_tnr_controls": "<0.5"}}
    assert controls_refused([MISSED, tnr], {}) == [
        "rules[0].when.judge_recall_controls: it reads the seeded-defect controls (copies of truth "
        "seeded_defect), and this session has none",
        "rules[1].when.judge_tnr_controls: it reads the known-good controls (copies of truth "
        "known_good), and this session has none"]
    assert controls_refused([tnr], {"seeded_defect": 4, "known_good": 0}) == [
        "rules[0].when.judge_tnr_controls: it reads the known-good controls (copies of truth "
        "known_good), and this session has none"]
    # A share that leaves nothing to report on: 0.33 of 1 is drawn whole.
    assert controls_refused([MISSED], {"seeded_defect": 1, "known_good": 5}) == [
        "rules[0].screening_share: 0.33 of the session's 1 seeded-defect control leaves none for "
        "the reported scores; name a smaller share or add controls"]
    assert parse_block(text_of([MISSED]), RUN, controls={"seeded_defect": 2}).actions == (MISSED,)


@pytest.mark.parametrize("share, n, drawn", [(0.33, 3, 1), (0.33, 30, 10), (0.3, 10, 3),
                                             (0.5, 7, 4), (0.1, 1, 1), (0.25, 8, 2)])
def test_the_screening_count_is_the_share_as_written_rounded_up(share, n, drawn):
    assert screening_count(share, n) == drawn


def test_the_screening_draw_is_the_seed_s_order_within_each_control_truth():
    seed = "ab" * 32
    controls = {f"d{n}": "seeded_defect" for n in range(6)} | {f"g{n}": "known_good"
                                                                for n in range(3)}
    drawn = screening_items(seed, lambda n: screening_count(0.5, n), controls)
    # Written out here: HMAC-SHA256(seed, key) ascending, the first half (rounded up) of each.
    def hmac_of(key):
        return hmac.new(bytes.fromhex(seed), key.encode(), hashlib.sha256).hexdigest()

    defects = sorted((k for k in controls if k[0] == "d"), key=hmac_of)[:3]
    good = sorted((k for k in controls if k[0] == "g"), key=hmac_of)[:2]
    assert drawn == set(defects) | set(good)
    assert all(order_key(seed, k) == hmac_of(k) for k in controls)
    # Another seed, another draw (with these keys); no seed reads anything but item keys.
    assert screening_items("cd" * 32, lambda n: screening_count(0.5, n), controls) != drawn
