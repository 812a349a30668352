"""Preregistered decision rules: parsed and validated when a session opens, never at report time.

A preregistration may end with a fenced block tagged `rules` holding a JSON list of rules:
`{"name": "herding", "metric": "delta_fleiss_kappa", "op": ">=", "threshold": 0.1,
  "and": {"metric": "delta_recall", "op": "<=", "threshold": 0.0}}` (`and` optional).
Pure: no Django.
"""

import json
import math
import re

METRICS = (
    "delta_fleiss_kappa", "delta_recall", "delta_tnr",
    "recall_phase1", "tnr_phase1", "recall_phase2", "tnr_phase2",
    "shift_towards_truth", "shift_away_from_truth",
)
OPERATORS = (">=", ">", "<=", "<", "==", "!=")

_RULES_BLOCK = re.compile(r"^```rules[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


class RulesError(ValueError):
    def __init__(self, errors: list[str]):
        super().__init__("\n".join(errors))
        self.errors = errors


def _check_condition(condition, place: str, errors: list[str], *, named: bool):
    if not isinstance(condition, dict):
        errors.append(f"{place}: expected an object")
        return
    allowed = {"metric", "op", "threshold"} | ({"name", "and"} if named else set())
    for key in sorted(set(condition) - allowed):
        errors.append(f'{place}: unknown field "{key}"')
    if named:
        name = condition.get("name")
        if not isinstance(name, str) or not name.strip():
            errors.append(f"{place}.name: a rule needs a non-empty name")
    metric = condition.get("metric")
    if metric not in METRICS:
        errors.append(
            f'{place}.metric: unknown metric {json.dumps(metric)}; known: {", ".join(METRICS)}'
        )
    op = condition.get("op")
    if op not in OPERATORS:
        errors.append(
            f'{place}.op: unknown operator {json.dumps(op)}; known: {" ".join(OPERATORS)}'
        )
    threshold = condition.get("threshold")
    if (isinstance(threshold, bool) or not isinstance(threshold, (int, float))
            or not math.isfinite(threshold)):
        errors.append(f"{place}.threshold: expected a finite number")
    if named and "and" in condition:
        _check_condition(condition["and"], f"{place}.and", errors, named=False)


def parse_rules(preregistration: str) -> list[dict]:
    """The decision rules in a preregistration's `rules` block ([] when there is none).

    Raises RulesError naming each problem (`rules[1].metric: unknown metric "x"; known: …`).
    """
    blocks = _RULES_BLOCK.findall(preregistration.replace("\r\n", "\n"))
    if not blocks:
        return []
    if len(blocks) > 1:
        raise RulesError(["preregistration: more than one rules block; keep them in one list"])
    try:
        rules = json.loads(blocks[0])
    except json.JSONDecodeError as error:
        raise RulesError(
            [f"rules: malformed JSON at line {error.lineno} column {error.colno}: {error.msg}"]
        ) from None
    if not isinstance(rules, list):
        raise RulesError(["rules: expected a JSON list of rules"])
    errors: list[str] = []
    seen = set()
    for index, rule in enumerate(rules):
        _check_condition(rule, f"rules[{index}]", errors, named=True)
        name = rule.get("name") if isinstance(rule, dict) else None
        if isinstance(name, str) and name in seen:
            errors.append(f'rules[{index}].name: duplicate rule name "{name}"')
        seen.add(name)
    if errors:
        raise RulesError(errors)
    return rules
