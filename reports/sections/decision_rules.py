"""The "decision_rules" section: the preregistered rules, each rule set (the protocol's, then each
amendment's that changed them) evaluated exactly as written on the main group's pooled figures
and, for a rule naming a reviewer, a condition or a builder (content.rules.SELECTORS), on the
sections built before this one:

- reviewer_recall, reviewer_tnr: scores.reviewers[reviewer].groups.main.current.{recall,tnr}.rate
  under the default condition, other_conditions.reviewers[reviewer, condition] likewise for
  another condition;
- condition_delta_flag_rate, condition_mcnemar_p: reviewer_conditions.reviewers[reviewer]
  .comparisons[condition, truth_class].difference / .p_value;
- self_preference_delta: self_preference.reviewers[reviewer].by_class[truth_class]
  .difference.value;
- builder_pass_rate: builders_compared.builders[builder] .truth.pass_rate, .judges[group][phase],
  or .reviewers[reviewer].pass_rate, by the source (default the protocol's primary comparison);
- builder_difference, builder_difference_p_holm: builders_compared.differences[source, group,
  reviewer, builders].difference.value / .p_holm; named [b, a] where the section holds [a, b],
  the difference is negated (the p-value is the same test's).

A reviewer or builder named by model resolves to its bundle id. A section or entry the report
lacks (or a value it could not compute) makes the value null: the rule is "not computable", never
an error here: the rules were checked against the run when the session opened.
"""

from numbers import Real

from content.rules import (
    DEFAULT_GROUP,
    DEFAULT_PRIMARY,
    JUDGE_SOURCES,
    PAIRS_METRICS,
    SELECTORS,
    RunBuilder,
    RunContext,
    RunReviewer,
)
from reports import stats
from reports.loading import ReportData
from reports.scoring import MAIN_GROUP

# Every pooled metric a rule may name; a metric the report could not compute is None and never holds.
RULE_METRICS = (
    "delta_fleiss_kappa", "delta_recall", "delta_tnr", "recall_phase1", "tnr_phase1",
    "recall_phase2", "tnr_phase2", "shift_towards_truth", "shift_away_from_truth",
)
EVALUATED_ON = f"the pooled figures of the {MAIN_GROUP} group, current truth"
EVALUATED_ON_SELECTORS = (
    "; rules naming a reviewer, a condition or a builder on the figures of the sections that "
    "measure them (scores and other_conditions: the main group, current truth; "
    "reviewer_conditions, self_preference, builders_compared)")


def decision_rules(data: ReportData, pooled: dict, sections: dict) -> dict:
    """The section, from the pooled figures and the sections built before it (`sections`: the
    report's keys so far; absent ones make the rules naming them not computable)."""
    values = rule_values(pooled, sections.get("pairs"))
    session, amendments = data.session, data.amendments
    protocol = session.protocol or {}
    rule_sets = [("protocol", None, protocol.get("decision_rules", []))]
    rule_sets += [(f"amendment {n}", a, a.decision_rules)
                  for n, a in enumerate(amendments, 1) if a.decision_rules is not None]
    selecting = any(_has_selectors(rule) for _, _, rules in rule_sets for rule in rules)
    figures = None
    if selecting:
        figures = Figures(sections, run_context(data),
                          protocol.get("primary_comparison") or DEFAULT_PRIMARY)
    evaluated = []
    for n, (source, amendment, rules) in enumerate(rule_sets):
        evaluated.append({
            "source": source, "in_force": n == len(rule_sets) - 1,
            "before_first_verdict": None if amendment is None else amendment.before_first_verdict,
            "rules": evaluate_rules(rules, values, figures),
        })
    return {
        # Said only where a rule reads more, so reports of pooled rules stay as they were.
        "evaluated_on": EVALUATED_ON + (EVALUATED_ON_SELECTORS if selecting else ""),
        "rule_sets": evaluated,
    }


def _has_selectors(rule: dict) -> bool:
    return rule["metric"] in SELECTORS or rule.get("and", {}).get("metric") in SELECTORS


def run_context(data: ReportData) -> RunContext:
    """The run as content.rules names it, to resolve a reviewer or builder named by model."""
    bundle = data.bundle
    conditions: dict[int, set[str]] = {}
    for review in bundle.reviews:
        conditions.setdefault(review.reviewer_id, set()).add(review.condition)
    return RunContext(
        default_condition=bundle.run.default_condition,
        reviewers=tuple(RunReviewer(r.bundle_id, r.model, r.family,
                                    tuple(sorted(conditions.get(r.pk, ()))))
                        for r in bundle.reviewers),
        builders=tuple(RunBuilder(b.bundle_id, b.model, b.family) for b in bundle.builders),
    )


def rule_values(pooled: dict, pairs: dict | None = None) -> dict:
    """metric -> the main group's value of it (pooled effects, the change in agreement; in a
    pairs session, its pairs section's figures), or None."""
    if pairs is not None:
        return pairs_rule_values(pairs)
    main = pooled.get(MAIN_GROUP) or {}
    values = dict.fromkeys(RULE_METRICS)
    for name, estimate in (main.get("effects") or {}).items():
        values[name] = estimate["value"]
    if main.get("agreement"):
        values["delta_fleiss_kappa"] = main["agreement"]["delta_fleiss_kappa"]
    return values


def pairs_rule_values(pairs: dict) -> dict:
    """A pairs session's pooled metrics (content.rules.PAIRS_METRICS) from its section: the main
    group's pairwise and decisive accuracy per phase, and its position bias (the mean of its
    judges' phase-1 left shares, minus 0.5), or None where not computable."""
    values = dict.fromkeys(PAIRS_METRICS)
    main = next((g for g in pairs["groups"] if g["group"] == MAIN_GROUP), None)
    if main is None:
        return values
    for phase in (1, 2):
        values[f"pairwise_accuracy_phase{phase}"] = main[f"phase{phase}"]["accuracy"]["rate"]
        values[f"decisive_accuracy_phase{phase}"] = \
            main[f"phase{phase}"]["decisive_accuracy"]["rate"]
    # The mean of the judges' left shares, as the section's test across judges takes it.
    mean = main["phase1"]["position_bias"]["mean_share"]
    values["position_bias"] = None if mean is None else mean - 0.5
    return values


# --- Reading a metric from the sections ------------------------------------------------------------

def _at(value, *path):
    """value[path[0]][path[1]]…, or None where a key is missing or a level is not a dict."""
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _find(entries, **match):
    """The first dict in `entries` whose fields equal `match`, or None."""
    if not isinstance(entries, list):
        return None
    for entry in entries:
        if isinstance(entry, dict) and all(entry.get(k) == v for k, v in match.items()):
            return entry
    return None


def _number(value) -> float | None:
    """A finite number, read from a number, a rate ({"rate": …}) or an estimate ({"value": …})."""
    if isinstance(value, dict):
        value = value.get("rate", value.get("value"))
    if isinstance(value, bool) or not isinstance(value, Real) or value != value:
        return None
    return value


class Figures:
    """What selector-bearing metrics are read from: the sections built before the rules, the run
    (to resolve names), the primary builder comparison."""

    def __init__(self, sections: dict, run: RunContext, primary: dict):
        self.sections, self.run, self.primary = sections, run, primary

    def _reviewer(self, name):
        return self.run.reviewer_id(name) or name

    def _builder(self, name):
        return self.run.builder_id(name) or name

    def _source(self, condition: dict) -> dict:
        if "source" not in condition:
            return dict(self.primary)
        source = {"source": condition["source"]}
        if condition["source"] in JUDGE_SOURCES:
            source["group"] = condition.get("group", DEFAULT_GROUP)
        if condition["source"] == "reviewer":
            source["reviewer"] = self._reviewer(condition["reviewer"])
        return source

    def value(self, condition: dict) -> tuple[float | None, dict]:
        """The condition's value (None: not computable) and its selectors, resolved."""
        metric, sections = condition["metric"], self.sections
        if metric in ("reviewer_recall", "reviewer_tnr"):
            reviewer = self._reviewer(condition["reviewer"])
            chosen = condition.get("condition", self.run.default_condition)
            selectors = {"reviewer": reviewer, "condition": chosen}
            if chosen == self.run.default_condition:
                entry = _find(_at(sections, "scores", "reviewers"), reviewer=reviewer)
            else:
                entry = _find(_at(sections, "other_conditions", "reviewers"), reviewer=reviewer,
                              condition=chosen)
            kind = "recall" if metric == "reviewer_recall" else "tnr"
            return _number(_at(entry, "groups", "main", "current", kind)), selectors
        if metric in ("condition_delta_flag_rate", "condition_mcnemar_p"):
            selectors = {"reviewer": self._reviewer(condition["reviewer"]),
                         "condition": condition["condition"],
                         "truth_class": condition["truth_class"]}
            entry = _find(_at(sections, "reviewer_conditions", "reviewers"),
                          reviewer=selectors["reviewer"])
            comparison = _find(_at(entry, "comparisons"), condition=selectors["condition"],
                               truth_class=selectors["truth_class"])
            field = "difference" if metric == "condition_delta_flag_rate" else "p_value"
            return _number(_at(comparison, field)), selectors
        if metric == "self_preference_delta":
            selectors = {"reviewer": self._reviewer(condition["reviewer"]),
                         "truth_class": condition["truth_class"]}
            entry = _find(_at(sections, "self_preference", "reviewers"),
                          reviewer=selectors["reviewer"])
            return _number(_at(entry, "by_class", selectors["truth_class"], "difference")), selectors
        if metric == "builder_pass_rate":
            builder = self._builder(condition["builder"])
            source = self._source(condition)
            selectors = {"builder": builder, **source}
            entry = _find(_at(sections, "builders_compared", "builders"), builder=builder)
            if source["source"] == "truth":
                rate = _at(entry, "truth", "pass_rate")
            elif source["source"] == "reviewer":
                rate = _at(_find(_at(entry, "reviewers"), reviewer=source.get("reviewer")),
                           "pass_rate")
            else:
                phase = source["source"].removeprefix("judges_phase")
                rate = _at(entry, "judges", source.get("group", DEFAULT_GROUP), phase)
            return _number(rate), selectors
        if metric in ("builder_difference", "builder_difference_p_holm"):
            a, b = (self._builder(name) for name in condition["builders"])
            source = self._source(condition)
            selectors = {"builders": [a, b], **source}
            differences = _at(sections, "builders_compared", "differences")
            match = {"source": source["source"], "group": source.get("group"),
                     "reviewer": source.get("reviewer")}
            entry, sign = _find(differences, builders=[a, b], **match), 1
            if entry is None:
                entry, sign = _find(differences, builders=[b, a], **match), -1
            if metric == "builder_difference_p_holm":
                return _number(_at(entry, "p_holm")), selectors
            value = _number(_at(entry, "difference"))
            if value is None or sign > 0:
                return value, selectors
            return 0.0 - value, selectors  # b − a (0.0 - keeps a zero unsigned)
        raise ValueError(f"metric {metric!r} takes no selectors")


def evaluate_rules(rules: list[dict], values: dict, figures: Figures | None = None) -> list[dict]:
    """Each rule exactly as written: its value(s), whether each condition holds, whether it fired.

    A pooled metric's value comes from `values`; a metric with selectors from `figures` (None
    when no rule has one), and its condition shows its selectors, resolved. A rule fires when its
    condition holds and, if it has one, its `and` condition holds too. A value that could not be
    computed never holds (reports.stats.evaluate_rule); the outcome then says so instead of
    "not fired"."""
    evaluated = []
    for rule in rules:
        conditions = [rule] + ([rule["and"]] if "and" in rule else [])
        checked = []
        for condition in conditions:
            entry = {"metric": condition["metric"]}
            if condition["metric"] in SELECTORS:
                value, entry["selectors"] = (figures.value(condition) if figures is not None
                                             else (None, {}))
            else:
                value = values.get(condition["metric"])
            entry.update({
                "op": condition["op"], "threshold": condition["threshold"], "value": value,
                "holds": stats.evaluate_rule(value, condition["op"], condition["threshold"]),
            })
            checked.append(entry)
        fired = all(c["holds"] for c in checked)
        missing = any(c["value"] is None for c in checked)
        evaluated.append({
            "name": rule["name"], "rule": rule, "conditions": checked, "fired": fired,
            "outcome": "fired" if fired else ("not computable" if missing else "not fired"),
        })
    return evaluated
