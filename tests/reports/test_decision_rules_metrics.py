"""Decision rules naming a reviewer, a condition or a builder, evaluated on the sections built
before them (issue 14 item 6): every metric read from hand-made section dicts in the shapes
/tmp/issue14/DESIGN.md fixes (fired, not fired, not computable when its section or entry is
absent), then through a revealed run/2 session, where the scores sections exist and the
builders/conditions/self-preference sections may not yet (not computable, never a crash)."""

import copy
import html
import json

import pytest

from content.rules import RunBuilder, RunContext, RunReviewer
from content.scoring import rate
from judging.services import phase_lock, session_create, session_open
from reports.build import build_report
from reports.export import to_json
from reports.html import to_html
from reports.sections.decision_rules import Figures, evaluate_rules
from tests.reports.test_report import SCHEMA_PATH, schema_errors
from tests.reports.test_report_run2 import run2_bundle
from tests.support.verdicts import verdict_record
from tests.worlds import a_run, advance, invite_and_join

# No database, no socket, no process: run once (tests/support/pure.py).
pytestmark = pytest.mark.pure

RUN = RunContext(
    default_condition="clean",
    reviewers=(RunReviewer("r1", "qwen3-1.7b", "Alibaba", ("clean", "told_pass")),
               RunReviewer("r2", "gpt-4o-mini", "OpenAI", ("clean",))),
    builders=(RunBuilder("b1", "gpt-4o-2024-08-06", "OpenAI"),
              RunBuilder("b2", "claude-3-5-sonnet-20241022", "Anthropic")),
)


def estimate(value, low, high):
    return {"value": value, "low": low, "high": high}


def scored(recall, tnr):
    return {"main": {"current": {"recall": recall, "tnr": tnr, "unknown_truth": 0}}}


# The sections a report builds before its decision rules, in the shapes the branches share.
SECTIONS = {
    "scores": {"reviewers": [
        {"reviewer": "r1", "groups": scored(rate(1, 4), rate(3, 4))},
        {"reviewer": "r2", "groups": {"same_family": scored(rate(1, 1), rate(1, 1))["main"]}},
    ]},
    "other_conditions": {"default_condition": "clean", "reviewers": [
        {"reviewer": "r1", "condition": "told_pass", "groups": scored(rate(0, 4), rate(4, 4))},
    ]},
    "reviewer_conditions": {"default_condition": "clean", "reviewers": [
        {"reviewer": "r1", "comparisons": [
            {"condition": "told_pass", "against": "clean", "truth_class": "defective",
             "pairs": 24, "only_default": 23, "only_condition": 1, "difference": -22 / 24,
             "p_value": 2.98e-6, "interval": {"low": -1.0, "high": -0.8}},
            {"condition": "told_pass", "against": "clean", "truth_class": "good",
             "pairs": 27, "only_default": 17, "only_condition": 10, "difference": -7 / 27,
             "p_value": 0.248, "interval": None},
        ]},
        {"reviewer": "r2", "comparisons": []},
    ]},
    "self_preference": {"condition": "clean", "reviewers": [
        {"reviewer": "r2", "by_class": {
            "good": {"own": rate(3, 3), "others": rate(1, 3),
                     "difference": estimate(2 / 3, 0.2, 1.0), "tasks": 3}}},
    ]},
    "builders_compared": {
        "compared": True,
        "builders": [
            {"builder": "b1", "truth": {"tests_pass": 3, "tests_fail": 1, "unknown": 0,
                                        "pass_rate": rate(3, 4)},
             "judges": {"invited": {"1": rate(6, 8), "2": rate(7, 8)}, "guest": {"1": rate(1, 2)}},
             "reviewers": [{"reviewer": "r1", "pass_rate": rate(2, 4)}]},
            {"builder": "b2", "truth": {"tests_pass": 1, "tests_fail": 3, "unknown": 0,
                                        "pass_rate": rate(1, 4)},
             "judges": {"invited": {"1": rate(2, 8), "2": rate(3, 8)}},
             "reviewers": [{"reviewer": "r1", "pass_rate": rate(1, 4)}]},
        ],
        "differences": [
            {"source": "judges_phase1", "group": "invited", "reviewer": None,
             "builders": ["b1", "b2"], "tasks": 4, "difference": estimate(0.5, 0.25, 0.75),
             "p_value": 0.0125, "p_holm": 0.025},
            {"source": "truth", "group": None, "reviewer": None, "builders": ["b1", "b2"],
             "tasks": 4, "difference": estimate(0.5, 0.0, 1.0), "p_value": 0.25, "p_holm": 0.5},
            {"source": "reviewer", "group": None, "reviewer": "r1", "builders": ["b1", "b2"],
             "tasks": 4, "difference": estimate(0.25, -0.25, 0.75), "p_value": 0.5, "p_holm": 1.0},
        ],
    },
}


def condition(metric, **selectors):
    return {"metric": metric, **selectors}


# (condition, the section it reads, its value by hand, the selectors the report shows)
CASES = [
    (condition("reviewer_recall", reviewer="r1"), "scores", 0.25,
     {"reviewer": "r1", "condition": "clean"}),
    (condition("reviewer_tnr", reviewer="qwen3-1.7b", condition="clean"), "scores", 0.75,
     {"reviewer": "r1", "condition": "clean"}),
    (condition("reviewer_recall", reviewer="r1", condition="told_pass"), "other_conditions", 0.0,
     {"reviewer": "r1", "condition": "told_pass"}),
    (condition("reviewer_tnr", reviewer="r1", condition="told_pass"), "other_conditions", 1.0,
     {"reviewer": "r1", "condition": "told_pass"}),
    (condition("condition_delta_flag_rate", reviewer="qwen3-1.7b", condition="told_pass",
               truth_class="defective"), "reviewer_conditions", -22 / 24,
     {"reviewer": "r1", "condition": "told_pass", "truth_class": "defective"}),
    (condition("condition_mcnemar_p", reviewer="r1", condition="told_pass", truth_class="good"),
     "reviewer_conditions", 0.248,
     {"reviewer": "r1", "condition": "told_pass", "truth_class": "good"}),
    (condition("self_preference_delta", reviewer="gpt-4o-mini", truth_class="good"),
     "self_preference", 2 / 3, {"reviewer": "r2", "truth_class": "good"}),
    (condition("builder_pass_rate", builder="b1"), "builders_compared", 0.75,
     {"builder": "b1", "source": "judges_phase1", "group": "invited"}),
    (condition("builder_pass_rate", builder="gpt-4o-2024-08-06", source="judges_phase2"),
     "builders_compared", 7 / 8, {"builder": "b1", "source": "judges_phase2", "group": "invited"}),
    (condition("builder_pass_rate", builder="b1", source="judges_phase1", group="guest"),
     "builders_compared", 0.5, {"builder": "b1", "source": "judges_phase1", "group": "guest"}),
    (condition("builder_pass_rate", builder="b2", source="truth"), "builders_compared", 0.25,
     {"builder": "b2", "source": "truth"}),
    (condition("builder_pass_rate", builder="b2", source="reviewer", reviewer="qwen3-1.7b"),
     "builders_compared", 0.25, {"builder": "b2", "source": "reviewer", "reviewer": "r1"}),
    (condition("builder_difference", builders=["b1", "b2"]), "builders_compared", 0.5,
     {"builders": ["b1", "b2"], "source": "judges_phase1", "group": "invited"}),
    # Named the other way round: b2 − b1, the same test.
    (condition("builder_difference", builders=["claude-3-5-sonnet-20241022", "b1"]),
     "builders_compared", -0.5,
     {"builders": ["b2", "b1"], "source": "judges_phase1", "group": "invited"}),
    (condition("builder_difference_p_holm", builders=["b2", "b1"]), "builders_compared", 0.025,
     {"builders": ["b2", "b1"], "source": "judges_phase1", "group": "invited"}),
    (condition("builder_difference", builders=["b1", "b2"], source="truth"), "builders_compared",
     0.5, {"builders": ["b1", "b2"], "source": "truth"}),
    (condition("builder_difference_p_holm", builders=["b1", "b2"], source="reviewer",
               reviewer="r1"), "builders_compared", 1.0,
     {"builders": ["b1", "b2"], "source": "reviewer", "reviewer": "r1"}),
]
IDS = [f"{c['metric']}-{n}" for n, (c, *_rest) in enumerate(CASES)]
DEFAULT_PRIMARY = {"source": "judges_phase1", "group": "invited"}


def evaluated(written, sections, primary=DEFAULT_PRIMARY, op=">=", threshold=0.0):
    rule = {"name": "r", **written, "op": op, "threshold": threshold}
    [result] = evaluate_rules([rule], {}, Figures(sections, RUN, primary))
    return result


@pytest.mark.parametrize("written, section, value, selectors", CASES, ids=IDS)
def test_every_metric_is_read_from_its_section(written, section, value, selectors):
    fired = evaluated(written, SECTIONS, op="==", threshold=value)
    [checked] = fired["conditions"]
    assert checked == {"metric": written["metric"], "selectors": selectors, "op": "==",
                       "threshold": value, "value": pytest.approx(value), "holds": True}
    assert (fired["fired"], fired["outcome"]) == (True, "fired")
    assert fired["rule"] == {"name": "r", **written, "op": "==", "threshold": value}

    not_fired = evaluated(written, SECTIONS, op=">", threshold=value)
    assert (not_fired["fired"], not_fired["outcome"]) == (False, "not fired")

    # Before the branch building that section merges (or when a report lacks it): never a crash.
    absent = {k: v for k, v in SECTIONS.items() if k != section}
    missing = evaluated(written, absent, op="==", threshold=value)
    assert (missing["conditions"][0]["value"], missing["outcome"]) == (None, "not computable")
    assert missing["conditions"][0]["selectors"] == selectors


@pytest.mark.parametrize("written", [
    condition("reviewer_recall", reviewer="r2"),  # every review of r2 is same-family: no main group
    condition("reviewer_tnr", reviewer="r2", condition="told_pass"),
    condition("condition_delta_flag_rate", reviewer="r2", condition="told_pass",
              truth_class="good"),
    condition("condition_mcnemar_p", reviewer="r1", condition="told_fail", truth_class="good"),
    condition("self_preference_delta", reviewer="r2", truth_class="defective"),
    condition("self_preference_delta", reviewer="r1", truth_class="good"),
    condition("builder_pass_rate", builder="b2", source="judges_phase1", group="guest"),
    condition("builder_pass_rate", builder="b2", source="reviewer", reviewer="r2"),
    condition("builder_pass_rate", builder="b3"),
    condition("builder_difference", builders=["b1", "b2"], source="judges_phase2"),
    condition("builder_difference_p_holm", builders=["b1", "b2"], source="reviewer",
              reviewer="r2"),
    condition("reviewer_recall", reviewer="r9"),  # refused at opening; here only not computable
])
def test_an_absent_entry_is_not_computable(written):
    result = evaluated(written, SECTIONS)
    assert (result["conditions"][0]["value"], result["fired"], result["outcome"]) == (
        None, False, "not computable")


def test_broken_shapes_are_not_computable_either():
    broken = copy.deepcopy(SECTIONS)
    broken["builders_compared"] = {"compared": False, "not_compared": "one builder",
                                   "builders": [], "differences": []}
    broken["scores"] = {"reviewers": [{"reviewer": "r1", "groups": None}]}
    broken["other_conditions"] = {"reviewers": [{"reviewer": "r1", "condition": "told_pass",
                                                 "groups": {"main": {"current": {
                                                     "recall": {"rate": None}, "tnr": "x"}}}}]}
    broken["reviewer_conditions"] = {"reviewers": [{"reviewer": "r1", "comparisons": [
        {"condition": "told_pass", "truth_class": "good", "difference": None, "p_value": None}]}]}
    broken["self_preference"] = {"reviewers": [{"reviewer": "r2", "by_class": {"good": {
        "difference": {"value": None, "low": None, "high": None}}}}]}
    for written, *_ in CASES:
        result = evaluated(written, broken)
        assert result["outcome"] == "not computable", written


def test_builder_metrics_follow_the_preregistered_primary_comparison():
    written = condition("builder_pass_rate", builder="b1")
    assert evaluated(written, SECTIONS, primary={"source": "truth"})["conditions"][0][
        "value"] == 0.75
    result = evaluated(condition("builder_difference", builders=["b1", "b2"]), SECTIONS,
                       primary={"source": "reviewer", "reviewer": "r1"})
    assert result["conditions"][0]["value"] == 0.25
    assert result["conditions"][0]["selectors"] == {
        "builders": ["b1", "b2"], "source": "reviewer", "reviewer": "r1"}


def test_a_rule_with_an_and_reads_both_and_pooled_metrics_show_no_selectors():
    rule = {"name": "suppressed and herded", "metric": "condition_delta_flag_rate",
            "reviewer": "r1", "condition": "told_pass", "truth_class": "defective", "op": "<=",
            "threshold": -0.2, "and": {"metric": "delta_recall", "op": "<", "threshold": 0}}
    [result] = evaluate_rules([rule], {"delta_recall": -0.1}, Figures(SECTIONS, RUN,
                                                                       DEFAULT_PRIMARY))
    assert result["outcome"] == "fired"
    assert result["conditions"][1] == {"metric": "delta_recall", "op": "<", "threshold": 0,
                                       "value": -0.1, "holds": True}
    # Without figures (every rule pooled, as before): the pooled rule alone, byte for byte.
    [alone] = evaluate_rules([rule["and"] | {"name": "x"}], {"delta_recall": -0.1})
    assert alone["conditions"] == [{"metric": "delta_recall", "op": "<", "threshold": 0,
                                    "value": -0.1, "holds": True}]


# --- Through a revealed session ------------------------------------------------------------------

RULES = [
    {"name": "r1 catches", "metric": "reviewer_recall", "reviewer": "qwen3-1.7b", "op": ">=",
     "threshold": 0.3},
    {"name": "told pass passes", "metric": "reviewer_tnr", "reviewer": "r1",
     "condition": "told_pass", "op": "==", "threshold": 1},
    {"name": "suppression", "metric": "condition_delta_flag_rate", "reviewer": "r1",
     "condition": "told_pass", "truth_class": "defective", "op": "<", "threshold": 0},
    {"name": "b1 better", "metric": "builder_difference", "builders": ["b1", "b2"], "op": ">",
     "threshold": 0, "and": {"metric": "builder_difference_p_holm", "builders": ["b1", "b2"],
                             "op": "<", "threshold": 0.05}},
    {"name": "herding", "metric": "delta_recall", "op": "<", "threshold": 0},
]


@pytest.fixture
def report(host):
    run = a_run(host, run2_bundle("not_flagged"))
    text = ("Our predictions.\n\n```rules\n"
            + json.dumps({"primary_comparison": {"source": "truth"}, "rules": RULES})
            + "\n```\n")
    session = session_create(run=run, kind="copies", actor="test", preregistration=text).session
    session = session_open(session=session, actor="test")
    judge = invite_and_join(session, name="Ada").judge
    for key, code in judge.assignments.values_list("item__key", "code"):
        verdict_record(judge=judge, code=code, phase=1, value="fail" if key in ("c2", "c5") else "pass")
    phase_lock(judge=judge, phase=1)
    return build_report(advance(session, "revealed"))


@pytest.mark.pure(False)  # it reads the database
def test_a_revealed_report_evaluates_the_rules_on_its_sections(report):
    assert report["protocol"]["frozen"]["primary_comparison"] == {"source": "truth"}
    [rule_set] = report["decision_rules"]["rule_sets"]
    rules = {r["name"]: r for r in rule_set["rules"]}
    # By hand (tests/reports/test_report_run2.py): r1 clean catches c2 of c2 c3 c5 (c3, c5
    # abstained: not flagged); told_pass passes c1 and c4 and abstains on c6 (not flagged): 3/3.
    [recall] = rules["r1 catches"]["conditions"]
    assert (recall["value"], recall["selectors"]) == (pytest.approx(1 / 3),
                                                      {"reviewer": "r1", "condition": "clean"})
    assert rules["r1 catches"]["outcome"] == "fired"
    [tnr] = rules["told pass passes"]["conditions"]
    assert (tnr["value"], rules["told pass passes"]["outcome"]) == (1.0, "fired")
    # The sections other branches of issue 14 build: read when present, else not computable.
    [delta] = rules["suppression"]["conditions"]
    if "reviewer_conditions" not in report:
        assert (delta["value"], rules["suppression"]["outcome"]) == (None, "not computable")
    difference, p_holm = rules["b1 better"]["conditions"]
    assert difference["selectors"] == {"builders": ["b1", "b2"], "source": "truth"}
    if "builders_compared" not in report:
        assert (difference["value"], p_holm["value"]) == (None, None)
    assert "selectors" not in rules["herding"]["conditions"][0]
    assert "reviewer, a condition or a builder" in report["decision_rules"]["evaluated_on"]


@pytest.mark.pure(False)  # it reads the database
def test_the_report_with_selectors_meets_the_schema_and_shows_them(report):
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    data = json.loads(to_json(report))
    assert schema_errors(schema, data) == []
    # The schema knows each metric's selectors: one on a pooled metric, or one missing, is refused.
    herding = data["protocol"]["frozen"]["decision_rules"][4]
    herding["reviewer"] = "r1"
    del data["protocol"]["frozen"]["decision_rules"][0]["reviewer"]
    assert len(schema_errors(schema, data)) == 2
    page = html.unescape(to_html(report))
    assert "reviewer_tnr (reviewer r1, condition told_pass) == 1" in page
    assert "builder_difference (builders b1 − b2, source truth) > 0" in page
