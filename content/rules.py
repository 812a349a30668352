"""Preregistered decision rules: parsed and validated when a session opens, never at report time.

A preregistration may end with a fenced block tagged `rules` holding a JSON list of rules:
`{"name": "herding", "metric": "delta_fleiss_kappa", "op": ">=", "threshold": 0.1,
  "and": {"metric": "delta_recall", "op": "<=", "threshold": 0.0}}` (`and` optional).
The block may instead hold an object `{"alpha": 0.01, "primary_comparison": {...}, "rules": [...]}`
(every key optional) that also names the significance level the report reads its tests at (above
0, at most 0.2; 0.05 when not named) and the primary builder comparison:
`{"source": "judges_phase1" | "judges_phase2" | "truth" | "reviewer", "group": …, "reviewer": …}`.

A condition (a rule, or its `and`) names one metric. The pooled metrics (POOLED_METRICS, and in a
pairs session PAIRS_METRICS instead) take no selectors; the others name what they measure with
selectors beside "metric" (SELECTORS):
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

Beside the decision rules, the list may hold rules that act (ACTIONS), each {"name", "action",
"when"}, "when" naming what it acts on, each selector a comparison written as text (">=0.5"):
- exclude_tasks: {"flag_share": ">=0.5", "severity": ">=2", "flag": "tests_unfair"} (severity and
  flag optional): a task is left out where that share of the judges who saw it flagged it in
  phase 1 (tasks_excluded); only where the session collects task flags;
- exclude_judge: one judge metric (JUDGE_METRICS) over each judge's own phase-1 work, e.g.
  {"name": "missed the seeded defects", "action": "exclude_judge",
   "when": {"judge_recall_controls": "<0.5"}, "screening_share": 0.33}:
  judge_recall_controls and judge_tnr_controls (a share, 0 to 1) read only the screening controls:
  the share `screening_share` (above 0, below 1; required with them, refused without) of the
  session's seeded_defect and of its known_good copies, drawn at opening with a committed seed
  (content.draws.screening_items), never the controls every reported score is computed on; every
  rule naming a share names the same one (one draw serves them all). judge_fast_answers (a share)
  takes "seconds" too, a comparison "<3" or "<=3" with a positive number: the share of the judge's
  answers whose page-measured time (Verdict.seconds_spent) is below it; judge_median_seconds (0 or
  more) is the median of those times. Given the session's controls (`controls`), a control-based
  metric is refused where the session has no control of its class, or where the share would leave
  none for the reported scores.

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
from fractions import Fraction

POOLED_METRICS = (
    "delta_fleiss_kappa", "delta_recall", "delta_tnr",
    "recall_phase1", "tnr_phase1", "recall_phase2", "tnr_phase2",
    "shift_towards_truth", "shift_away_from_truth",
)
# A pairs session's pooled metrics (issue 31), on the main group's phase-1 (or 2) preferences
# (reports.sections.pairs): pairwise and decisive accuracy against truth, and position bias (the
# mean over judges of their left share among left/right answers, minus 0.5). A pairs session
# names these, never the per-copy ones above, which it does not measure.
PAIRS_METRICS = (
    "pairwise_accuracy_phase1", "pairwise_accuracy_phase2", "decisive_accuracy_phase1",
    "decisive_accuracy_phase2", "position_bias",
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
METRICS = POOLED_METRICS + PAIRS_METRICS + tuple(SELECTORS)
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
                task_flags: bool | None = None, controls: dict | None = None,
                kind: str | None = None) -> RulesBlock:
    """The decision rules in a preregistration's `rules` block and the primary builder comparison
    it names (no rules and None when there is no block), and its rules that act, apart.

    `task_flags`: whether the session collects judges' task flags (an exclude_tasks rule acts on
    them and is refused where they are not collected); None checks the grammar only.
    `controls`: the session's controls by truth ({"seeded_defect": n, "known_good": n}): a
    control-based exclude_judge metric is refused where its class has none, or where the share
    leaves none to report on; None checks the grammar only.
    `kind`: the session's ("pairs", "copies", …): a pairs session's rules name PAIRS_METRICS and
    no per-copy pooled metric or judge exclusion, every other session's the reverse; None checks
    the grammar only.

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
            _check_action(rule, f"rules[{index}]", errors, task_flags=task_flags,
                          controls=controls)
            actions.append(rule)
        else:
            _check_condition(rule, f"rules[{index}]", errors, named=True, run=run)
            if kind is not None:
                _check_kind(rule, kind, f"rules[{index}]", errors)
            decisions.append(rule)
        name = rule.get("name") if isinstance(rule, dict) else None
        if isinstance(name, str) and name in seen:
            errors.append(f'rules[{index}].name: duplicate rule name "{name}"')
        seen.add(name)
    _check_one_share(rules, errors)
    if errors:
        raise RulesError(errors)
    return RulesBlock(rules=decisions, primary_comparison=primary, alpha=alpha,
                      actions=tuple(actions))


def _check_kind(rule, kind: str, place: str, errors: list[str]) -> None:
    """A pooled metric the session's kind measures: preferences in a pairs session, per-copy
    verdicts elsewhere."""
    if not isinstance(rule, dict):
        return
    for where, condition in ((place, rule), (f"{place}.and", rule.get("and"))):
        metric = condition.get("metric") if isinstance(condition, dict) else None
        if kind == "pairs" and metric in POOLED_METRICS:
            errors.append(f"{where}.metric: {metric} measures verdicts on single copies; a pairs "
                          f"session measures preferences: {', '.join(PAIRS_METRICS)}")
        elif kind != "pairs" and metric in PAIRS_METRICS:
            errors.append(f"{where}.metric: {metric} measures a pairs session's preferences; "
                          f"this is a {kind} session")


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
# "when", each selector a comparison written as text (">=0.5").
# exclude_tasks: a task is excluded where the share of the judges who saw it that flagged it (with
# a flag of at least the severity named, and of the kind named, if any) satisfies flag_share.
# exclude_judge: a judge is excluded where one metric of their own phase-1 work satisfies the
# comparison (JUDGE_METRICS); a control-based one reads only the screening controls, a share of the
# controls the rule names ("screening_share") drawn at opening.
FLAG_KINDS = ("underspecified", "tests_unfair", "other")
MAX_SEVERITY = 3
# exclude_judge's metrics -> the truth of the controls it reads (None: it reads no control).
JUDGE_METRICS = {
    "judge_recall_controls": "seeded_defect",  # screening seeded defects judged fail
    "judge_tnr_controls": "known_good",  # screening known-good copies judged pass
    "judge_fast_answers": None,  # share of answers faster than "seconds"
    "judge_median_seconds": None,  # median seconds per answer
}
CONTROL_TRUTHS = ("seeded_defect", "known_good")
ACTIONS = {
    # action -> (selectors it needs, selectors it may have)
    "exclude_tasks": (("flag_share",), ("severity", "flag")),
    "exclude_judge": ((), (*JUDGE_METRICS, "seconds")),
}
# Rule fields beside "name", "action" and "when", per action.
ACTION_FIELDS = {"exclude_tasks": (), "exclude_judge": ("screening_share",)}
_COMPARISON = re.compile(r"^\s*(>=|<=|==|!=|>|<)\s*(-?\d+(?:\.\d+)?)\s*$")


def comparison(text) -> tuple[str, float] | None:
    """(operator, number) of a comparison written as text, ">=0.5" -> (">=", 0.5); None if it
    is not one."""
    match = _COMPARISON.match(text) if isinstance(text, str) else None
    return (match.group(1), float(match.group(2))) if match else None


def judge_metric(rule: dict) -> str | None:
    """The one metric an exclude_judge rule's "when" names (None if it names none or several)."""
    named = [key for key in rule.get("when") or {} if key in JUDGE_METRICS]
    return named[0] if len(named) == 1 else None


def screening_share(actions) -> float | None:
    """The share of the controls drawn for screening: the one every exclude_judge rule with a
    control-based metric names (parse_block checks they name one), None where no rule needs one."""
    for rule in actions:
        if rule.get("action") == "exclude_judge" and "screening_share" in rule:
            return rule["screening_share"]
    return None


def screening_count(share: float, controls: int) -> int:
    """How many of `controls` controls of one truth are drawn for screening: the share of them,
    rounded up, the share read exactly as written (0.33 of 3 is 0.99, so 1; 0.3 of 10 is 3,
    not the float product's 3.0000000000000004)."""
    return math.ceil(Fraction(repr(float(share))) * controls)


def _check_action(rule: dict, place: str, errors: list[str], *, task_flags: bool | None,
                  controls: dict | None = None):
    action = rule.get("action")
    if not isinstance(action, str):
        action = json.dumps(action)  # named as written below, never looked up unhashable
    fields = ("name", "action", "when", *ACTION_FIELDS.get(action, ()))
    for key in sorted(set(rule) - set(fields)):
        if action == "exclude_judge":
            errors.append(f'{place}: unknown field "{key}" (an exclude_judge rule holds "name", '
                          '"action", "when" and, with a control-based metric, "screening_share")')
        else:
            errors.append(f'{place}: unknown field "{key}" (a rule that acts holds "name", '
                          '"action" and "when")')
    name = rule.get("name")
    if not isinstance(name, str) or not name.strip():
        errors.append(f"{place}.name: a rule needs a non-empty name")
    if action not in ACTIONS:
        errors.append(f'{place}.action: unknown action {json.dumps(rule.get("action"))}; known: '
                      f'{", ".join(ACTIONS)}')
        return
    when = rule.get("when")
    if not isinstance(when, dict):
        example = ('{"flag_share": ">=0.5"}' if action == "exclude_tasks"
                   else '{"judge_recall_controls": "<0.5"}')
        errors.append(f'{place}.when: expected an object naming what the action acts on '
                      f'(e.g. {example})')
        return
    need, may = ACTIONS[action]
    for key in sorted(set(when) - set(need) - set(may)):
        errors.append(f'{place}.when: unknown selector "{key}"; {action} takes '
                      f'{", ".join(need + may)}')
    for key in need:
        if key not in when:
            errors.append(f"{place}.when.{key}: {action} needs it")
    if action == "exclude_judge":
        _check_exclude_judge(rule, when, place, errors, controls)
        return
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


_CONTROL_WORDS = {"seeded_defect": "seeded-defect", "known_good": "known-good"}


def _check_exclude_judge(rule: dict, when: dict, place: str, errors: list[str],
                         controls: dict | None):
    named = [key for key in when if key in JUDGE_METRICS]
    if len(named) != 1:
        errors.append(f"{place}.when: name one metric of the judge's own phase-1 work, "
                      f"one of {', '.join(JUDGE_METRICS)}"
                      + (f"; it names {len(named)}: {', '.join(named)}" if named else ""))
        return
    metric = named[0]
    parsed = comparison(when[metric])
    if metric == "judge_median_seconds":
        if parsed is None or parsed[1] < 0:
            errors.append(f'{place}.when.{metric}: expected a comparison with a number of seconds, '
                          f'0 or more, such as "<5"; got {json.dumps(when[metric])}')
    elif parsed is None or not 0 <= parsed[1] <= 1:
        errors.append(f'{place}.when.{metric}: expected a comparison with a share from 0 to 1, '
                      f'such as "<0.5"; got {json.dumps(when[metric])}')
    if metric == "judge_fast_answers":
        seconds = comparison(when["seconds"]) if "seconds" in when else None
        if "seconds" not in when:
            errors.append(f'{place}.when.seconds: judge_fast_answers needs it: the time an answer '
                          'is fast below, such as "<3"')
        elif seconds is None or seconds[0] not in ("<", "<=") or seconds[1] <= 0:
            errors.append(f'{place}.when.seconds: expected "<" or "<=" and a positive number of '
                          f'seconds, such as "<3"; got {json.dumps(when["seconds"])}')
    elif "seconds" in when:
        errors.append(f"{place}.when.seconds: only judge_fast_answers takes seconds")
    truth = JUDGE_METRICS[metric]
    if truth is None:
        if "screening_share" in rule:
            errors.append(f"{place}.screening_share: {metric} reads no control, so nothing is "
                          "drawn for screening; leave it out")
        return
    if "screening_share" not in rule:
        errors.append(f"{place}.screening_share: {metric} reads the controls, and only a "
                      "screening share of them, drawn at opening (the rest are what every score "
                      "is reported on); name it, such as 0.33")
        return
    share = rule["screening_share"]
    if (isinstance(share, bool) or not isinstance(share, (int, float)) or not math.isfinite(share)
            or not 0 < share < 1):
        errors.append(f"{place}.screening_share: expected a share above 0 and below 1, such as "
                      f"0.33; got {json.dumps(share)}")
        return
    if controls is None:
        return
    count = controls.get(truth, 0)
    words = _CONTROL_WORDS[truth]
    if count == 0:
        errors.append(f"{place}.when.{metric}: it reads the {words} controls (copies of truth "
                      f"{truth}), and this session has none")
    elif count - screening_count(share, count) < 1:
        errors.append(f"{place}.screening_share: {share:g} of the session's {count} {words} "
                      f"control{'s' if count != 1 else ''} leaves none for the reported scores; "
                      "name a smaller share or add controls")


def _check_one_share(rules, errors: list[str]):
    """Every exclude_judge rule naming a screening share names the same one: one draw serves them."""
    first = None
    for index, rule in enumerate(rules if isinstance(rules, list) else []):
        if not (isinstance(rule, dict) and rule.get("action") == "exclude_judge"
                and "screening_share" in rule):
            continue
        if first is None:
            first = (index, rule["screening_share"])
        elif rule["screening_share"] != first[1]:
            errors.append(f"rules[{index}].screening_share: {json.dumps(rule['screening_share'])} "
                          f"differs from rules[{first[0]}]'s {json.dumps(first[1])}; one screening "
                          "draw serves every rule, so name one share")


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


def judge_excluded(rule: dict, value: float | None) -> bool:
    """Whether an exclude_judge rule excludes a judge whose figure for its metric is `value`;
    never where the figure could not be computed (None: no screening control, no answer)."""
    return value is not None and _holds(value, *comparison(rule["when"][judge_metric(rule)]))


def is_fast(rule: dict, seconds: float) -> bool:
    """Whether an answer of `seconds` counts as fast under a judge_fast_answers rule."""
    return _holds(seconds, *comparison(rule["when"]["seconds"]))


def _holds(value: float, op: str, threshold: float) -> bool:
    return {">=": value >= threshold, ">": value > threshold, "<=": value <= threshold,
            "<": value < threshold, "==": value == threshold, "!=": value != threshold}[op]


def parse_rules(preregistration: str, run: RunContext | None = None) -> list[dict]:
    """The decision rules of the preregistration's `rules` block ([] when there is none); see
    parse_block."""
    return parse_block(preregistration, run).rules
