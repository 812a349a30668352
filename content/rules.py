"""Preregistered decision rules: parsed and validated when a session opens, never at report time.

A preregistration may end with a fenced block tagged `rules` holding a JSON list of rules:
`{"name": "herding", "metric": "delta_fleiss_kappa", "op": ">=", "threshold": 0.1,
  "and": {"metric": "delta_recall", "op": "<=", "threshold": 0.0}}` (`and` optional).
The block may instead hold an object `{"alpha": 0.01, "primary_comparison": {...}, "rules": [...]}`
(every key optional) that also names the significance level the report reads its tests at (above
0, at most 0.2; 0.05 when not named) and the primary builder comparison:
`{"source": "judges_phase1" | "judges_phase2" | "truth" | "reviewer", "group": …, "reviewer": …}`.

A condition (a rule, or its `and`) names one metric. The pooled metrics (METRICS' first nine) take
no selectors; the others name what they measure with selectors beside "metric" (SELECTORS):
- reviewer_recall, reviewer_tnr: "reviewer" (bundle id or model), optional "condition" (default:
  the run's default condition);
- condition_delta_flag_rate, condition_mcnemar_p: "reviewer", "condition" (not the default one),
  "truth_class" (defective | good);
- self_preference_delta: "reviewer", "truth_class";
- builder_pass_rate: "builder", optional "source" (default: the primary comparison's), with
  "group" (judges_phase1/2: invited | guest | self_blinded_host, default invited) or "reviewer"
  (source reviewer) as the source needs;
- builder_difference, builder_difference_p_holm: "builders": [a, b] (a − b), optional "source",
  "group", "reviewer" as for builder_pass_rate.

Validation has two steps, both naming each problem by place (`rules[1].reviewer: no reviewer "r9"
in this run; reviewers: r1, r2`): the grammar (always), and, given a RunContext, the run (its
reviewers, their conditions, its builders, its default condition exist as named). The rules are
returned exactly as written; only the primary comparison is stored resolved (a reviewer by id).
Pure: no Django.
"""

import json
import math
import re
from dataclasses import dataclass

POOLED_METRICS = (
    "delta_fleiss_kappa", "delta_recall", "delta_tnr",
    "recall_phase1", "tnr_phase1", "recall_phase2", "tnr_phase2",
    "shift_towards_truth", "shift_away_from_truth",
)
_BUILDER_SOURCE = ("source", "group", "reviewer")
# metric -> (selectors it needs, selectors it may have), in the order they are checked.
SELECTORS = {
    "reviewer_recall": (("reviewer",), ("condition",)),
    "reviewer_tnr": (("reviewer",), ("condition",)),
    "condition_delta_flag_rate": (("reviewer", "condition", "truth_class"), ()),
    "condition_mcnemar_p": (("reviewer", "condition", "truth_class"), ()),
    "self_preference_delta": (("reviewer", "truth_class"), ()),
    "builder_pass_rate": (("builder",), _BUILDER_SOURCE),
    "builder_difference": (("builders",), _BUILDER_SOURCE),
    "builder_difference_p_holm": (("builders",), _BUILDER_SOURCE),
}
METRICS = POOLED_METRICS + tuple(SELECTORS)
OPERATORS = (">=", ">", "<=", "<", "==", "!=")
TRUTH_CLASSES = ("defective", "good")
SOURCES = ("judges_phase1", "judges_phase2", "truth", "reviewer")
JUDGE_SOURCES = ("judges_phase1", "judges_phase2")
JUDGE_GROUPS = ("invited", "guest", "self_blinded_host")
DEFAULT_GROUP = "invited"
# The primary builder comparison when the preregistration names none.
DEFAULT_PRIMARY = {"source": "judges_phase1", "group": DEFAULT_GROUP}
# The object form of the block; "alpha" is the significance level every test of the report is
# read at (the builders' ranking, a reviewer's discrimination), 0.05 when not named.
OBJECT_FIELDS = ("alpha", "primary_comparison", "rules")
DEFAULT_ALPHA = 0.05
MAX_ALPHA = 0.2
_ALL_SELECTORS = frozenset(s for need, may in SELECTORS.values() for s in need + may)

_RULES_BLOCK = re.compile(r"^```rules[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


class RulesError(ValueError):
    def __init__(self, errors: list[str]):
        super().__init__("\n".join(errors))
        self.errors = errors


@dataclass(frozen=True)
class RunReviewer:
    id: str  # bundle id
    model: str
    family: str
    conditions: tuple[str, ...]  # the conditions it has reviews under


@dataclass(frozen=True)
class RunBuilder:
    id: str
    model: str
    family: str


@dataclass(frozen=True)
class RunContext:
    """What rules are validated against: the run's reviewers (with the conditions each has
    reviews under), its builders, its default condition."""
    default_condition: str
    reviewers: tuple[RunReviewer, ...]
    builders: tuple[RunBuilder, ...]

    def reviewer(self, name: str) -> tuple[RunReviewer | None, str | None]:
        """The reviewer a rule names (by bundle id, else by model), or None and why not."""
        return _named(name, self.reviewers, "reviewer")

    def builder(self, name: str) -> tuple[RunBuilder | None, str | None]:
        return _named(name, self.builders, "builder")

    def reviewer_id(self, name: str) -> str | None:
        return getattr(self.reviewer(name)[0], "id", None)

    def builder_id(self, name: str) -> str | None:
        return getattr(self.builder(name)[0], "id", None)


def _named(name, records, kind):
    for record in records:
        if record.id == name:
            return record, None
    matches = [r for r in records if r.model == name]
    if len(matches) == 1:
        return matches[0], None
    if matches:
        ids = ", ".join(r.id for r in matches)
        return None, f'"{name}" is the model of {kind}s {ids}; name one by its id'
    known = ", ".join(r.id for r in records) or "none"
    return None, f'no {kind} "{name}" in this run; {kind}s: {known}'


@dataclass(frozen=True)
class RulesBlock:
    rules: list[dict]
    primary_comparison: dict | None  # resolved; None when the preregistration names none
    alpha: float | None = None  # the report's significance level; None: the default, 0.05
    actions: tuple = ()  # rules that act (ACTIONS), as written, apart from the decision rules


def _is_name(value) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _check_source(where: dict, place: str, errors: list[str], *, source_required: bool):
    """A source with the group or reviewer it needs (a builder metric, the primary comparison)."""
    source = where.get("source")
    if "source" not in where:
        if source_required:
            errors.append(f"{place}.source: the primary comparison needs a source")
        if "group" in where:
            errors.append(f'{place}.group: name the source it belongs to ("source": '
                          f'"judges_phase1" or "judges_phase2")')
        if "reviewer" in where:
            errors.append(f'{place}.reviewer: name the source it belongs to ("source": "reviewer")')
        return
    if source not in SOURCES:
        errors.append(f'{place}.source: unknown source {json.dumps(source)}; known: '
                      f'{", ".join(SOURCES)}')
        return
    if "group" in where:
        if source not in JUDGE_SOURCES:
            errors.append(f'{place}.group: source "{source}" takes no group (only judges_phase1 '
                          f'and judges_phase2 do)')
        elif where["group"] not in JUDGE_GROUPS:
            errors.append(f'{place}.group: unknown group {json.dumps(where["group"])}; known: '
                          f'{", ".join(JUDGE_GROUPS)}')
    if source == "reviewer":
        if "reviewer" not in where:
            errors.append(f'{place}.reviewer: source "reviewer" needs a reviewer')
        elif not _is_name(where["reviewer"]):
            errors.append(f"{place}.reviewer: expected a reviewer's bundle id or model "
                          "(a non-empty string)")
    elif "reviewer" in where:
        errors.append(f'{place}.reviewer: source "{source}" takes no reviewer (only source '
                      f'"reviewer" does)')


def _check_selectors(condition: dict, metric: str, place: str, errors: list[str]):
    """The grammar of a known metric's selectors."""
    need, may = SELECTORS.get(metric, ((), ()))
    for key in sorted(_ALL_SELECTORS & set(condition) - set(need + may)):
        if need or may:
            errors.append(f"{place}.{key}: metric {metric} takes no {key}; it takes: "
                          f"{', '.join(need + may)}")
        else:
            errors.append(f"{place}.{key}: metric {metric} takes no selectors")
    for key in need:
        if key not in condition:
            article = "" if key == "builders" else "a "
            errors.append(f"{place}.{key}: metric {metric} needs {article}{key}")
    if "source" in may:
        _check_source(condition, place, errors, source_required=False)
    for key in ("reviewer", "condition", "truth_class", "builder", "builders"):
        if key not in condition or key not in need + may:
            continue
        value = condition[key]
        if key == "reviewer" and "source" in may:
            continue  # checked with its source
        if key == "reviewer" and not _is_name(value):
            errors.append(f"{place}.reviewer: expected a reviewer's bundle id or model "
                          "(a non-empty string)")
        elif key == "condition" and not _is_name(value):
            errors.append(f"{place}.condition: expected a condition's name (a non-empty string)")
        elif key == "truth_class" and value not in TRUTH_CLASSES:
            errors.append(f'{place}.truth_class: unknown truth class {json.dumps(value)}; known: '
                          f'{", ".join(TRUTH_CLASSES)}')
        elif key == "builder" and not _is_name(value):
            errors.append(f"{place}.builder: expected a builder's bundle id or model "
                          "(a non-empty string)")
        elif key == "builders" and not (isinstance(value, list) and len(value) == 2
                                        and all(_is_name(v) for v in value)
                                        and value[0] != value[1]):
            errors.append(f"{place}.builders: expected two different builders, [a, b] "
                          "(the difference is a - b)")


def _check_reviewer_in_run(name, condition, run: RunContext, place: str, errors: list[str], *,
                           condition_place: str | None):
    """The reviewer exists and has reviews under `condition` (None: the default condition)."""
    reviewer, why = run.reviewer(name)
    if reviewer is None:
        errors.append(f"{place}.reviewer: {why}")
        return None
    conditions = ", ".join(reviewer.conditions) or "none"
    if condition is not None and condition not in reviewer.conditions:
        errors.append(f'{condition_place}: reviewer {reviewer.id} has no reviews under condition '
                      f'"{condition}"; its conditions: {conditions}')
        return None
    if run.default_condition not in reviewer.conditions:
        errors.append(f"{place}.reviewer: reviewer {reviewer.id} has no reviews under the default "
                      f'condition "{run.default_condition}"; its conditions: {conditions}')
        return None
    return reviewer


def _check_in_run(condition: dict, metric: str, run: RunContext, place: str, errors: list[str]):
    """A well-formed condition's selectors against the run."""
    if metric in ("reviewer_recall", "reviewer_tnr"):
        chosen = condition.get("condition")
        _check_reviewer_in_run(condition["reviewer"], chosen, run, place, errors,
                               condition_place=f"{place}.condition")
    elif metric in ("condition_delta_flag_rate", "condition_mcnemar_p"):
        reviewer, why = run.reviewer(condition["reviewer"])
        if reviewer is None:
            errors.append(f"{place}.reviewer: {why}")
        elif condition["condition"] == run.default_condition:
            errors.append(f'{place}.condition: "{run.default_condition}" is the run\'s default '
                          "condition, which every other condition is compared against; "
                          "name another")
        else:
            _check_reviewer_in_run(condition["reviewer"], condition["condition"], run, place,
                                   errors, condition_place=f"{place}.condition")
    elif metric == "self_preference_delta":
        reviewer = _check_reviewer_in_run(condition["reviewer"], None, run, place, errors,
                                          condition_place=None)
        families = {b.family.casefold() for b in run.builders}
        if reviewer is not None and reviewer.family.casefold() not in families:
            errors.append(f'{place}.reviewer: reviewer {reviewer.id}\'s family "{reviewer.family}" '
                          "built no copy in this run; self-preference is measured only for a "
                          "reviewer whose family also built copies")
    elif metric == "builder_pass_rate":
        builder, why = run.builder(condition["builder"])
        if builder is None:
            errors.append(f"{place}.builder: {why}")
    elif metric in ("builder_difference", "builder_difference_p_holm"):
        found = []
        for n, name in enumerate(condition["builders"]):
            builder, why = run.builder(name)
            if builder is None:
                errors.append(f"{place}.builders[{n}]: {why}")
            found.append(builder)
        if all(found) and found[0] == found[1]:
            a, b = condition["builders"]
            errors.append(f'{place}.builders: "{a}" and "{b}" are the same builder ({found[0].id})')
    if condition.get("source") == "reviewer":
        _check_reviewer_in_run(condition["reviewer"], None, run, place, errors,
                               condition_place=None)


def _check_condition(condition, place: str, errors: list[str], *, named: bool,
                     run: RunContext | None):
    if not isinstance(condition, dict):
        errors.append(f"{place}: expected an object")
        return
    allowed = {"metric", "op", "threshold"} | ({"name", "and"} if named else set())
    for key in sorted(set(condition) - allowed - _ALL_SELECTORS):
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
    if metric in METRICS:
        selector_errors: list[str] = []
        _check_selectors(condition, metric, place, selector_errors)
        errors += selector_errors
        if run is not None and not selector_errors:
            _check_in_run(condition, metric, run, place, errors)
    if named and "and" in condition:
        _check_condition(condition["and"], f"{place}.and", errors, named=False, run=run)


def _checked_primary(primary, run: RunContext | None, errors: list[str]) -> dict | None:
    place = "primary_comparison"
    if not isinstance(primary, dict):
        errors.append(f"{place}: expected an object")
        return None
    count = len(errors)
    for key in sorted(set(primary) - {"source", "group", "reviewer"}):
        errors.append(f'{place}: unknown field "{key}"')
    _check_source(primary, place, errors, source_required=True)
    if len(errors) > count:
        return None
    source = primary["source"]
    resolved = {"source": source}
    if source in JUDGE_SOURCES:
        resolved["group"] = primary.get("group", DEFAULT_GROUP)
    if source == "reviewer":
        resolved["reviewer"] = primary["reviewer"]
        if run is not None:
            reviewer = _check_reviewer_in_run(primary["reviewer"], None, run, place, errors,
                                              condition_place=None)
            if reviewer is None:
                return None
            resolved["reviewer"] = reviewer.id
    return resolved


def has_rules_block(preregistration: str) -> bool:
    return bool(_RULES_BLOCK.search(preregistration.replace("\r\n", "\n")))


def parse_block(preregistration: str, run: RunContext | None = None, *,
                task_flags: bool | None = None) -> RulesBlock:
    """The decision rules in a preregistration's `rules` block and the primary builder comparison
    it names (no rules and None when there is no block), and its rules that act, apart.

    `task_flags`: whether the session collects judges' task flags (an exclude_tasks rule acts on
    them and is refused where they are not collected); None checks the grammar only.

    With `run`, every selector is checked against it too. Raises RulesError naming each problem
    (`rules[1].metric: unknown metric "x"; known: …`).
    """
    blocks = _RULES_BLOCK.findall(preregistration.replace("\r\n", "\n"))
    if not blocks:
        return RulesBlock(rules=[], primary_comparison=None)
    if len(blocks) > 1:
        raise RulesError(["preregistration: more than one rules block; keep them in one list"])
    try:
        parsed = json.loads(blocks[0])
    except json.JSONDecodeError as error:
        raise RulesError(
            [f"rules: malformed JSON at line {error.lineno} column {error.colno}: {error.msg}"]
        ) from None
    errors: list[str] = []
    primary = None
    rules = parsed
    alpha = None
    if isinstance(parsed, dict) and set(OBJECT_FIELDS) & set(parsed):
        for key in sorted(set(parsed) - set(OBJECT_FIELDS)):
            errors.append(f'rules: unknown field "{key}"; the object holds "alpha", '
                          '"primary_comparison" and "rules"')
        rules = parsed.get("rules", [])
        if "primary_comparison" in parsed:
            primary = _checked_primary(parsed["primary_comparison"], run, errors)
        if "alpha" in parsed:
            alpha = _checked_alpha(parsed["alpha"], errors)
    if not isinstance(rules, list):
        raise RulesError(errors + ["rules: expected a JSON list of rules"])
    seen = set()
    decisions, actions = [], []
    for index, rule in enumerate(rules):
        if isinstance(rule, dict) and "action" in rule:
            _check_action(rule, f"rules[{index}]", errors, task_flags=task_flags)
            actions.append(rule)
        else:
            _check_condition(rule, f"rules[{index}]", errors, named=True, run=run)
            decisions.append(rule)
        name = rule.get("name") if isinstance(rule, dict) else None
        if isinstance(name, str) and name in seen:
            errors.append(f'rules[{index}].name: duplicate rule name "{name}"')
        seen.add(name)
    if errors:
        raise RulesError(errors)
    return RulesBlock(rules=decisions, primary_comparison=primary, alpha=alpha,
                      actions=tuple(actions))


def _checked_alpha(value, errors: list[str]) -> float | None:
    """The preregistered significance level: a number above 0 and at most MAX_ALPHA."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        errors.append(f"alpha: expected a number such as 0.05, got {json.dumps(value)}")
        return None
    if not 0 < value <= MAX_ALPHA:
        errors.append(f"alpha: {value:g} is outside (0, {MAX_ALPHA:g}]: the significance level "
                      "is the chance of a false alarm the host accepts, e.g. 0.05 or 0.01")
        return None
    return float(value)


# --- Rules that act ----------------------------------------------------------------------------
#
# One grammar for every rule that changes what the report analyses, beside the decision rules
# (which only state whether a figure crossed a threshold): {"name", "action", "when"}, validated at
# opening with the rest of the block, never at report time. An action names what it acts on in
# "when", each selector a comparison written as text (">=0.5"). Only exclude_tasks is known yet:
# a task is excluded where the share of the judges who saw it that flagged it (with a flag of at
# least the severity named, and of the kind named, if any) satisfies flag_share.
FLAG_KINDS = ("underspecified", "tests_unfair", "other")
MAX_SEVERITY = 3
ACTIONS = {
    # action -> (selectors it needs, selectors it may have)
    "exclude_tasks": (("flag_share",), ("severity", "flag")),
}
_COMPARISON = re.compile(r"^\s*(>=|<=|==|!=|>|<)\s*(-?\d+(?:\.\d+)?)\s*$")


def comparison(text) -> tuple[str, float] | None:
    """(operator, number) of a comparison written as text, ">=0.5" -> (">=", 0.5); None if it
    is not one."""
    match = _COMPARISON.match(text) if isinstance(text, str) else None
    return (match.group(1), float(match.group(2))) if match else None


def _check_action(rule: dict, place: str, errors: list[str], *, task_flags: bool | None):
    for key in sorted(set(rule) - {"name", "action", "when"}):
        errors.append(f'{place}: unknown field "{key}" (a rule that acts holds "name", "action" '
                      'and "when")')
    name = rule.get("name")
    if not isinstance(name, str) or not name.strip():
        errors.append(f"{place}.name: a rule needs a non-empty name")
    action = rule.get("action")
    if action not in ACTIONS:
        errors.append(f'{place}.action: unknown action {json.dumps(action)}; known: '
                      f'{", ".join(ACTIONS)}')
        return
    when = rule.get("when")
    if not isinstance(when, dict):
        errors.append(f'{place}.when: expected an object naming what the action acts on '
                      f'(e.g. {{"flag_share": ">=0.5"}})')
        return
    need, may = ACTIONS[action]
    for key in sorted(set(when) - set(need) - set(may)):
        errors.append(f'{place}.when: unknown selector "{key}"; {action} takes '
                      f'{", ".join(need + may)}')
    for key in need:
        if key not in when:
            errors.append(f"{place}.when.{key}: {action} needs it")
    if "flag_share" in when:
        parsed = comparison(when["flag_share"])
        if parsed is None or not 0 <= parsed[1] <= 1:
            errors.append(f'{place}.when.flag_share: expected a comparison with a share from 0 '
                          f'to 1, such as ">=0.5"; got {json.dumps(when["flag_share"])}')
    if "severity" in when:
        parsed = comparison(when["severity"])
        if parsed is None or parsed[1] != int(parsed[1]) or not 0 <= parsed[1] <= MAX_SEVERITY:
            errors.append(f'{place}.when.severity: expected a comparison with a severity from 0 '
                          f'to {MAX_SEVERITY}, such as ">=2"; got {json.dumps(when["severity"])}')
    if "flag" in when and when["flag"] not in FLAG_KINDS:
        errors.append(f'{place}.when.flag: unknown flag {json.dumps(when["flag"])}; known: '
                      f'{", ".join(FLAG_KINDS)}')
    if action == "exclude_tasks" and task_flags is False:
        errors.append(f"{place}.action: exclude_tasks acts on the judges' task flags, and this "
                      "session does not collect them")


def tasks_excluded(rule: dict, flags, seen: dict, *, leave_out=None) -> set:
    """The tasks an exclude_tasks rule excludes.

    `flags`: (task, judge, kind, severity) of every locked flag; `seen`: task -> the judges who
    saw it (had an item of it). A task's share is the judges who flagged it with a flag the rule
    counts (severity and kind as it names them) over the judges who saw it. `leave_out`: a judge
    counted in neither (leave-one-out: when that judge is re-scored, no task is excluded only
    because of their own flags)."""
    when = rule["when"]
    share_op, share = comparison(when["flag_share"])
    severity = comparison(when["severity"]) if "severity" in when else None
    flagged: dict = {}
    for task, judge, kind, level in flags:
        if judge == leave_out or judge not in seen.get(task, ()):
            continue
        if "flag" in when and kind != when["flag"]:
            continue
        if severity is not None and not _holds(level, *severity):
            continue
        flagged.setdefault(task, set()).add(judge)
    excluded = set()
    for task, judges in seen.items():
        counted = {j for j in judges if j != leave_out}
        if counted and _holds(len(flagged.get(task, set())) / len(counted), share_op, share):
            excluded.add(task)
    return excluded


def _holds(value: float, op: str, threshold: float) -> bool:
    return {">=": value >= threshold, ">": value > threshold, "<=": value <= threshold,
            "<": value < threshold, "==": value == threshold, "!=": value != threshold}[op]


def parse_rules(preregistration: str, run: RunContext | None = None) -> list[dict]:
    """The decision rules of the preregistration's `rules` block ([] when there is none); see
    parse_block."""
    return parse_block(preregistration, run).rules
