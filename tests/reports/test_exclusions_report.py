"""A preregistered exclude_tasks rule, end to end through the services (issue 29 item 4): the
rule frozen with the protocol, judges' phase-1 flags locked, the report stating the results again
without the tasks the rule excludes, each judge scored with their own flags left out."""

import json

import pytest

from judging.services import phase_lock, session_create, session_open, task_flag_record
from reports.build import build_report
from reports.export import to_jsonl
from reports.headline import headline
from reports.html import to_html
from tests.reports.test_builders import THREE, difference, exported, matrix_bundle, rate, schema_errors
from tests.reports.test_report import SCHEMA_PATH
from tests.support.verdicts import verdict_record
from tests.worlds import a_run, advance, invite_and_join

RULE = {"name": "drop unclear tasks", "action": "exclude_tasks",
        "when": {"flag_share": ">0.5", "severity": ">=2"}}


def revealed(host, flags_by_judge: dict, decision_rules=()):
    """THREE's run (b1 passes t1..t7, b2 none, b3 t1..t3), three invited judges answering every
    copy as its truth in phase 1, each flagging the tasks given (task -> severity), locked."""
    prereg = ("Named before any verdict.\n\n```rules\n" + json.dumps([RULE, *decision_rules])
              + "\n```\n")
    run = a_run(host, matrix_bundle(THREE, builders=("b1", "b2", "b3"), reviewers=()))
    session = session_create(run=run, kind="copies", actor="t", rubric="Does it work?",
                             preregistration=prereg, task_flags=True).session
    session = session_open(session=session, actor="t")
    for n in range(3):
        judge = invite_and_join(session, name=f"Judge {n}").judge
        codes = dict(judge.assignments.values_list("item__key", "code"))
        for key, code in codes.items():
            verdict_record(judge=judge, code=code, phase=1,
                           value={"tests_pass": "pass", "tests_fail": "fail"}[THREE[key]])
        for task, severity in flags_by_judge.get(n, {}).items():
            task_flag_record(judge=judge, code=codes[f"{task}-b1"], phase=1, kind="tests_unfair",
                             severity=severity, reason=f"Judge {n}: the tests of {task} are off")
        phase_lock(judge=judge, phase=1)
    return advance(session, "revealed")


@pytest.mark.django_db
def test_the_report_states_the_results_again_without_the_tasks_the_rule_excludes(host):
    # t1: flagged by judges 0 and 1 (2 of 3 > 0.5): out; without judge 0 or judge 1, 1 of 2:
    # in. t2: judge 2 alone, and at severity 1 (not counted): in.
    session = revealed(host, {0: {"t1": 3}, 1: {"t1": 2}, 2: {"t2": 1}})
    assert session.protocol["actions"] == [RULE]
    assert session.protocol["task_flags"] is True
    report = build_report(session)
    section = report["preregistered_exclusions"]
    assert (section["stated"], section["rules"], section["excluded_tasks"]) == (True, [RULE], ["t1"])
    # The builders again on t2..t7: b1 passes all six, b2 none, b3 t2 and t3.
    again = section["builders_compared"]
    rates = {b["builder"]: b["truth"]["pass_rate"] for b in again["builders"]}
    assert rates == {"b1": rate(6, 6), "b2": rate(0, 6), "b3": rate(2, 6)}
    assert difference(again, "truth", ("b1", "b2"))["tasks"] == 6
    # Beside the full comparison, which keeps every task.
    full = {b["builder"]: b["truth"]["pass_rate"] for b in report["builders_compared"]["builders"]}
    assert full["b3"] == rate(3, 7)
    # Leave-one-out: judges 0 and 1 each made the exclusion only with the other, so each is
    # scored on every task (as in scores.judges); judge 2 without t1.
    by_judge = {j["judge"]: j for j in section["judges"]}
    scores = {j["judge"]: j for j in report["scores"]["judges"]}
    pseudonyms = [j["judge"] for j in report["scores"]["judges"]]
    assert [by_judge[p]["excluded_tasks"] for p in pseudonyms] == [[], [], ["t1"]]
    for p in pseudonyms[:2]:
        assert by_judge[p]["phases"] == scores[p]["phases"]
    # Judge 2 answered every copy as its truth. On t2..t7 the defective copies are b2's six and
    # b3's t4..t7 (10), the good ones b1's six and b3's t2, t3 (8): all caught, all passed.
    third = by_judge[pseudonyms[2]]["phases"]["1"]["current"]
    assert (third["recall"]["k"], third["recall"]["n"], third["tnr"]["k"], third["tnr"]["n"]) == (
        10, 10, 8, 8)
    # The CSV and JSON Lines rows of t1's copies (every judge's) are the ones left out.
    rows = [json.loads(line) for line in to_jsonl(report).decode("utf-8").splitlines()]
    assert len(rows) == 3 * 21
    assert {r["copy"] for r in rows if r["excluded"]} == {"t1-b1", "t1-b2", "t1-b3"}
    assert all(r["excluded"] is (r["task"] == "t1") for r in rows)
    assert schema_errors(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")), exported(report)) == []
    page = to_html(report)
    assert "Without the preregistered exclusions" in page
    assert "Left out: t1." in page


@pytest.mark.django_db
def test_a_rule_nothing_meets_excludes_nothing_and_says_so(host):
    report = build_report(revealed(host, {2: {"t2": 3}}))  # 1 of 3: in
    section = report["preregistered_exclusions"]
    assert (section["stated"], section["excluded_tasks"]) == (True, [])
    assert section["builders_compared"]["builders"] == report["builders_compared"]["builders"]
    assert "Left out: no task." in to_html(report)


# b3 passes t1..t3 of seven tasks: 3/7 with every task, 2/6 without t1.
B3_PASSES = {"name": "b3 passes often", "metric": "builder_pass_rate", "builder": "b3",
             "source": "truth", "op": ">=", "threshold": 0.4}


@pytest.mark.django_db
def test_decision_rules_are_evaluated_on_the_primary_results_too(host):
    """Where preregistered exclusions make the primary results, the decision rules are evaluated
    on them as well as on everyone's: a rule that holds on every task may not without t1."""
    report = build_report(revealed(host, {0: {"t1": 3}, 1: {"t1": 2}}, [B3_PASSES]))
    everyone = report["decision_rules"]["rule_sets"][-1]["rules"][0]
    primary = report["preregistered_exclusions"]["decision_rules"]["rule_sets"][-1]["rules"][0]
    assert (everyone["outcome"], primary["outcome"]) == ("fired", "not fired")
    assert everyone["conditions"][0]["value"] == pytest.approx(3 / 7, abs=1e-12)
    assert primary["conditions"][0]["value"] == pytest.approx(2 / 6, abs=1e-12)
    assert schema_errors(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")), exported(report)) == []
    # The headline states the primary evaluation, and says everyone's is below.
    rules = next(e for e in headline(report) if e["key"] == "rules")
    assert rules["sentences"][0] == (
        "On the primary results, with every preregistered exclusion together (everyone's "
        "evaluation is in the section below):")
    assert rules["sentences"][1].startswith("“b3 passes often” did not fire (builder_pass_rate")
    assert "preregistered_exclusions.decision_rules.rule_sets[in_force].rules" in rules["figures"]
    page = to_html(report)
    assert "Decision rules on these results" in page
    # Without exclusions the section evaluates nothing again.
    plain = build_report(revealed(host, {2: {"t2": 1}}, [B3_PASSES]))
    assert plain["preregistered_exclusions"]["excluded_tasks"] == []
    assert plain["preregistered_exclusions"]["decision_rules"]["rule_sets"][-1]["rules"][0][
        "outcome"] == "fired"
