"""The "decision_rules" section: the preregistered rules, each rule set (the protocol's, then each
amendment's that changed them) evaluated exactly as written on the main group's pooled figures."""

from reports import stats
from reports.loading import ReportData
from reports.scoring import MAIN_GROUP

# Every metric a rule may name; a metric the report could not compute is None and never holds.
RULE_METRICS = (
    "delta_fleiss_kappa", "delta_recall", "delta_tnr", "recall_phase1", "tnr_phase1",
    "recall_phase2", "tnr_phase2", "shift_towards_truth", "shift_away_from_truth",
)


def decision_rules(data: ReportData, pooled: dict) -> dict:
    values = rule_values(pooled)
    session, amendments = data.session, data.amendments
    rule_sets = [("protocol", None, (session.protocol or {}).get("decision_rules", []))]
    rule_sets += [(f"amendment {n}", a, a.decision_rules)
                  for n, a in enumerate(amendments, 1) if a.decision_rules is not None]
    evaluated = []
    for n, (source, amendment, rules) in enumerate(rule_sets):
        evaluated.append({
            "source": source, "in_force": n == len(rule_sets) - 1,
            "before_first_verdict": None if amendment is None else amendment.before_first_verdict,
            "rules": evaluate_rules(rules, values),
        })
    return {
        "evaluated_on": f"the pooled figures of the {MAIN_GROUP} group, current truth",
        "rule_sets": evaluated,
    }


def rule_values(pooled: dict) -> dict:
    """metric -> the main group's value of it (pooled effects, the change in agreement), or None."""
    main = pooled.get(MAIN_GROUP) or {}
    values = dict.fromkeys(RULE_METRICS)
    for name, estimate in (main.get("effects") or {}).items():
        values[name] = estimate["value"]
    if main.get("agreement"):
        values["delta_fleiss_kappa"] = main["agreement"]["delta_fleiss_kappa"]
    return values


def evaluate_rules(rules: list[dict], values: dict) -> list[dict]:
    """Each rule exactly as written: its value(s), whether each condition holds, whether it fired.

    A rule fires when its condition holds and, if it has one, its `and` condition holds too. A
    value that could not be computed never holds (reports.stats.evaluate_rule); the outcome then
    says so instead of "not fired"."""
    evaluated = []
    for rule in rules:
        conditions = [rule] + ([rule["and"]] if "and" in rule else [])
        checked = []
        for condition in conditions:
            value = values.get(condition["metric"])
            checked.append({
                "metric": condition["metric"], "op": condition["op"],
                "threshold": condition["threshold"], "value": value,
                "holds": stats.evaluate_rule(value, condition["op"], condition["threshold"]),
            })
        fired = all(c["holds"] for c in checked)
        missing = any(c["value"] is None for c in checked)
        evaluated.append({
            "name": rule["name"], "rule": rule, "conditions": checked, "fired": fired,
            "outcome": "fired" if fired else ("not computable" if missing else "not fired"),
        })
    return evaluated
