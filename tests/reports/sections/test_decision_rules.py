"""reports.sections.decision_rules.decision_rules on hand-made data: each rule set (the
protocol's, then each amendment that changed the rules) evaluated as written on the main group's
pooled figures (fired, not fired, not computable), the last one in force; a rule naming a reviewer
by model resolved through the run's records.

Reading each selector-bearing metric from its section (Figures, evaluate_rules) is tested on
hand-made section dicts in tests/reports/test_decision_rules_metrics.py; this module covers what
the section builder adds around them."""

from types import SimpleNamespace

import pytest

from content.scoring import rate
from reports.sections.decision_rules import EVALUATED_ON, EVALUATED_ON_SELECTORS, decision_rules, rule_values
from tests.reports.sections.arrays import a_session, bundle, report_data, reviewer

pytestmark = pytest.mark.pure


def estimate(value):
    return {"value": value, "low": None, "high": None}


POOLED = {
    "invited": {"effects": {"delta_recall": estimate(0.25), "shift_away_from_truth": estimate(0.125),
                            "tnr_phase2": estimate(None)},
                "agreement": {"delta_fleiss_kappa": -0.1}},
    "guest": {"effects": {"delta_recall": estimate(0.9)}, "agreement": None},
}
RECALL_UP = {"name": "recall up", "metric": "delta_recall", "op": ">=", "threshold": 0.2}
RECALL_UP_MORE = {**RECALL_UP, "threshold": 0.3}
KAPPA_DOWN = {"name": "kappa down", "metric": "delta_fleiss_kappa", "op": "<", "threshold": 0}
TNR = {"name": "tnr", "metric": "tnr_phase2", "op": ">", "threshold": 0.5}
BOTH = {"name": "up and not away", "metric": "delta_recall", "op": ">", "threshold": 0.2,
        "and": {"metric": "shift_away_from_truth", "op": "<=", "threshold": 0.1}}


def amendment(rules, before=True):
    return SimpleNamespace(decision_rules=rules, before_first_verdict=before)


def data_of(protocol, amendments=(), reviewers=()):
    return report_data(bundle(tasks=[], builders=[], copies=[], reviewers=list(reviewers)),
                       session=a_session(protocol=protocol), amendments=amendments)


def outcomes(rule_set):
    return [(r["name"], r["fired"], r["outcome"], [c["value"] for c in r["conditions"]])
            for r in rule_set["rules"]]


def test_the_protocol_s_rules_on_the_main_group_s_figures():
    section = decision_rules(data_of({"decision_rules": [RECALL_UP, KAPPA_DOWN, TNR, BOTH]}), POOLED, {})
    assert section["evaluated_on"] == EVALUATED_ON
    [protocol_set] = section["rule_sets"]
    assert (protocol_set["source"], protocol_set["in_force"], protocol_set["before_first_verdict"]) == (
        "protocol", True, None)
    # The invited group's figures, never the guests' (whose delta_recall is 0.9).
    assert outcomes(protocol_set) == [
        ("recall up", True, "fired", [0.25]),
        ("kappa down", True, "fired", [-0.1]),
        ("tnr", False, "not computable", [None]),
        # 0.25 > 0.2 holds, but 0.125 <= 0.1 does not.
        ("up and not away", False, "not fired", [0.25, 0.125]),
    ]
    assert protocol_set["rules"][3]["conditions"][1] == {
        "metric": "shift_away_from_truth", "op": "<=", "threshold": 0.1, "value": 0.125, "holds": False}


def test_each_amendment_that_changed_the_rules_is_a_rule_set_the_last_in_force():
    amendments = [amendment(None), amendment([RECALL_UP_MORE], before=False)]
    section = decision_rules(data_of({"decision_rules": [RECALL_UP]}, amendments), POOLED, {})
    assert [(s["source"], s["in_force"], s["before_first_verdict"]) for s in section["rule_sets"]] == [
        ("protocol", False, None), ("amendment 2", True, False)]  # numbered among all amendments
    assert outcomes(section["rule_sets"][1]) == [("recall up", False, "not fired", [0.25])]


def test_without_a_main_group_every_pooled_rule_is_not_computable():
    section = decision_rules(data_of({"decision_rules": [RECALL_UP, KAPPA_DOWN]}),
                             {"guest": POOLED["guest"]}, {})
    assert outcomes(section["rule_sets"][0]) == [("recall up", False, "not computable", [None]),
                                                 ("kappa down", False, "not computable", [None])]
    assert rule_values({}) == dict.fromkeys(rule_values(POOLED))
    # A main group without agreement (one rater) leaves delta_fleiss_kappa null.
    assert rule_values({"invited": {"effects": None, "agreement": None}})["delta_fleiss_kappa"] is None


def test_no_rules():
    section = decision_rules(data_of({}), POOLED, {})
    assert section == {"evaluated_on": EVALUATED_ON,
                       "rule_sets": [{"source": "protocol", "in_force": True,
                                      "before_first_verdict": None, "rules": []}]}


def test_a_reviewer_named_by_model_is_resolved_through_the_run_s_records():
    r1 = reviewer("r1", "qwen3-1.7b", "Alibaba")
    rule = {"name": "reviewer catches", "metric": "reviewer_recall", "reviewer": "qwen3-1.7b",
            "op": ">=", "threshold": 0.5}
    sections = {"scores": {"reviewers": [
        {"reviewer": "r1", "groups": {"main": {"current": {"recall": rate(3, 4), "tnr": rate(1, 2)}}}}]}}
    section = decision_rules(data_of({"decision_rules": [rule]}, reviewers=[r1]), POOLED, sections)
    assert section["evaluated_on"] == EVALUATED_ON + EVALUATED_ON_SELECTORS
    [evaluated] = section["rule_sets"][0]["rules"]
    assert evaluated["conditions"][0]["selectors"] == {"reviewer": "r1", "condition": "clean"}
    assert (evaluated["conditions"][0]["value"], evaluated["outcome"]) == (0.75, "fired")
