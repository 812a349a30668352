"""The "reviewer_conditions" section: each model reviewer's conditions against the run's default
one, on the same copies, within each truth class (issue 14, item 2).

Per reviewer, condition and truth class: the reviews, how many were flagged (verdict fail) and
how many gave no verdict, the flag rate with its Wilson interval. For a reviewer with more than
one condition, each other condition against the default on the copies reviewed under both: the
two discordant counts, McNemar's exact two-sided p, the difference in flag rate and a bootstrap
interval over the run's resampling units (clusters, or tasks; data.bundle.unit_of_copy).

Abstentions are scored by the run's abstain_scoring (reports.scoring.scored_verdict): under
not_flagged an abstention is a reply that flagged nothing and counts in n (seed 000's own rule: a
reply with no verdict counts as not flagged); under excluded it is left out of n, and a pair with
an abstention on either side is dropped (counted in dropped_abstentions).

Every review of the reviewer counts here, whatever its seal and whoever built the copy: the
comparison is within one reviewer and one copy, and a condition's very point may be a prior
verdict carried in the request (seed 000's anchored conditions), which a seal check sets apart.
Truth is the current one (after corrections)."""

from collections import defaultdict

from scipy.stats import fisher_exact

from content.scoring import rate, scored_verdict
from content.truth import truth_class
from reports import stats
from reports.loading import ReportData
from reports.sections.common import alpha_of
from reports.sections.pooled import BOOTSTRAP_SEED, RESAMPLES

CLASSES = ("defective", "good")
NEWCOMBE = "Newcombe hybrid score"

ABSTAIN_RULES = {
    "not_flagged": "an abstention (a reply with no verdict) counts as not flagged: it stays in n "
                   "as a reply that flagged nothing, and a pair with an abstention on either side "
                   "is kept",
    "excluded": "an abstention (a reply with no verdict) is left out: n counts verdicts only, and "
                "a pair with an abstention on either side is dropped (dropped_abstentions)",
}


def resampling(data: ReportData, what: str, primitive: str) -> dict:
    """The resampling block of a section whose intervals resample the run's units: `what` says
    what is recomputed on each resample, `primitive` which reports.stats function does it."""
    by = data.bundle.resampling_by
    units = {"cluster": "clusters (a copy without a cluster is its task's own unit)",
             "task": "tasks", None: "nothing"}[by]
    if by is None:
        method = ("no bootstrap: the run has one task and no clusters, so there is no unit to "
                  "resample but single copies, which are not independent; the interval the "
                  "figure names takes them as independent, and says so")
    else:
        method = (f"cluster bootstrap over {units}: each of {RESAMPLES} resamples draws, with "
                  f"replacement, as many units as the figure's copies fall in "
                  f"(numpy.random.default_rng({BOOTSTRAP_SEED}), units numbered in order of first "
                  f"appearance, copies in import order), every copy of a drawn unit with it; "
                  f"{what}; the interval is the 2.5th and 97.5th percentiles of the resampled "
                  f"values (numpy.quantile, linear); given only where the figure's copies fall in "
                  f"{stats.MIN_BOOTSTRAP_UNITS} units or more, else the interval the figure "
                  f"names (docs/statistics.md; reports.stats.{primitive})")
    return {"by": by, "resamples": RESAMPLES, "seed": BOOTSTRAP_SEED, "method": method}


def reviewer_conditions(data: ReportData) -> dict:
    bundle = data.bundle
    default, rule = bundle.run.default_condition, bundle.run.abstain_scoring
    alpha, _ = alpha_of(data.session)
    reviews = defaultdict(lambda: defaultdict(dict))  # reviewer pk -> condition -> copy pk -> review
    for review in bundle.reviews:
        reviews[review.reviewer_id][review.condition][review.copy_id] = review
    classes = {c.pk: truth_class(c.truth) for c in bundle.copies}
    entries = []
    for reviewer in bundle.reviewers:
        mine = reviews[reviewer.pk]
        names = sorted(mine, key=lambda c: (c != default, c))
        conditions = [condition_entry(c, c == default, mine[c], classes, rule) for c in names]
        entries.append({
            "reviewer": reviewer.bundle_id, "model": reviewer.model, "family": reviewer.family,
            "conditions": conditions,
            "discrimination": discrimination(conditions[0] if conditions and conditions[0]["default"]
                                             else None, alpha),
            "comparisons": [] if len(names) < 2 else [
                comparison(c, default, cls, mine.get(default, {}), mine[c], classes, rule,
                           bundle.resampling_by, bundle.unit_of_copy)
                for c in names if c != default for cls in CLASSES],
        })
    return {
        "definitions": {
            "flagged": "a review whose verdict is fail (the reviewer flagged the copy)",
            "n": "reviews of copies of that truth class under that condition, scored by the "
                 "run's abstention rule (abstain_rule)",
            "rate": "flagged / n, with its Wilson 95% score interval (low, high); null when n is 0",
            "no_verdict": "reviews that gave no verdict (abstained), whatever the rule",
            "truth_class": "defective: seeded_defect, tests_fail; good: known_good, tests_pass; "
                           "current truth; copies of unknown truth are not counted",
            "pairs": "copies of that class the reviewer reviewed under both the default "
                     "condition and this one (under excluded: with a verdict in both)",
            "only_default": "pairs flagged under the default condition only",
            "only_condition": "pairs flagged under this condition only",
            "difference": "(only_condition − only_default) / pairs: the flag rate under this "
                          "condition minus under the default, on the same copies",
            "p_value": "McNemar's exact two-sided test on only_default and only_condition "
                       "(reports.stats.mcnemar_exact); null when there is no pair",
            "interval": "95% interval of the difference, of the kind named in its method. "
                        f"bootstrap, at {stats.MIN_BOOTSTRAP_UNITS} units or more: resampling the "
                        "run's units (see resampling); a percentile interval of the mean of (flag "
                        "under this condition − flag under the default) over the drawn pairs. "
                        f"Ours: numpy, seed {BOOTSTRAP_SEED}, {RESAMPLES} resamples; an author's "
                        "own bootstrap (seed 000's article: Python's random module, 4,000 "
                        "resamples of its 30 tasks) agrees with it to resampling noise, not to "
                        "the digit. Newcombe hybrid score, below that: Newcombe's (1998) interval "
                        "for paired proportions, valid at any number of pairs ('copies treated as "
                        "independent' where several copies share a unit). units: how many units "
                        "the pairs lie in",
            "scope": "every review of the reviewer, whatever its seal and the copy's builder: "
                     "the comparison is within one reviewer on the same copies",
            "discrimination": "whether the reviewer tells defective from good copies under the "
                              "default condition: its flag rate on defective copies against its "
                              "flag rate on good ones (false alarms), Fisher's exact test, "
                              "one-sided (greater), at the preregistered alpha or 0.05 (alpha); "
                              "a reviewer that does not has "
                              "condition shifts that say nothing about anchoring: it cannot do "
                              "the review in the first place; null without reviews of both "
                              "classes under the default condition",
        },
        "default_condition": default,
        "abstain_scoring": rule,
        "abstain_rule": ABSTAIN_RULES[rule],
        "resampling": resampling(data, "the difference is the mean, over the drawn pairs, of "
                                       "(flag under the condition − flag under the default)",
                                 "clustered_ratio"),
        "reviewers": entries,
    }


def discrimination(default_entry: dict | None, alpha: float) -> dict | None:
    """Whether a reviewer's default-condition flags tell defective copies from good ones: the
    one-sided exact test (Fisher's) of its flag rate on defective copies above its rate on good
    ones. "Before you measure anchoring, measure that the reviewer can do the review" (seed 000)."""
    if default_entry is None:
        return None
    defective, good = (default_entry["by_class"][cls] for cls in CLASSES)
    if not defective["n"] or not good["n"]:
        return None
    table = [[defective["flagged"], defective["n"] - defective["flagged"]],
             [good["flagged"], good["n"] - good["flagged"]]]
    p_value = float(fisher_exact(table, alternative="greater").pvalue)
    return {"recall": defective["rate"], "false_alarm_rate": good["rate"], "p_value": p_value,
            "alpha": alpha, "discriminates": p_value < alpha}


def condition_entry(condition, is_default, reviews: dict, classes: dict, rule: str) -> dict:
    by_class = {cls: {"n": 0, "flagged": 0, "no_verdict": 0} for cls in CLASSES}
    for copy_pk, review in reviews.items():
        cell = by_class.get(classes[copy_pk])
        if cell is None:
            continue
        cell["no_verdict"] += review.verdict == "abstain"
        verdict = scored_verdict(review.verdict, rule)
        if verdict is not None:
            cell["n"] += 1
            cell["flagged"] += verdict == "fail"
    for cell in by_class.values():
        flag_rate = rate(cell["flagged"], cell["n"])
        cell.update(rate=flag_rate["rate"], low=flag_rate["low"], high=flag_rate["high"])
    return {
        "condition": condition, "default": is_default, "reviews": len(reviews),
        "abstained": sum(1 for r in reviews.values() if r.verdict == "abstain"),
        "by_class": {cls: {k: by_class[cls][k] for k in ("n", "flagged", "rate", "low", "high",
                                                         "no_verdict")} for cls in CLASSES},
    }


def comparison(condition, default, cls, under_default: dict, under_condition: dict, classes,
               rule, resampling_by, unit_of_copy) -> dict:
    values, flags, labels, dropped = [], [], [], 0
    for copy_pk in sorted(under_default.keys() & under_condition.keys()):  # import order
        if classes[copy_pk] != cls:
            continue
        first = scored_verdict(under_default[copy_pk].verdict, rule)
        second = scored_verdict(under_condition[copy_pk].verdict, rule)
        if first is None or second is None:
            dropped += 1
            continue
        values.append((second == "fail") - (first == "fail"))
        flags.append(second == "fail")
        if resampling_by is not None:
            labels.append(unit_of_copy[copy_pk])
    pairs = len(values)
    only_default, only_condition = values.count(-1), values.count(1)
    interval = None
    # Without tasks or clusters to resample (one task), the copies of that task are one unit.
    units = len(set(labels)) if resampling_by is not None else min(pairs, 1)
    if units >= stats.MIN_BOOTSTRAP_UNITS:
        _, low, high = stats.clustered_ratio(values, [1] * pairs, labels,
                                             resamples=RESAMPLES, seed=BOOTSTRAP_SEED)
        interval = {"low": low, "high": high, "method": "bootstrap", "units": units}
    elif pairs:
        # Too few units for a bootstrap (issue 28 item 3): Newcombe's interval of the paired
        # table, valid at any number of pairs; where the copies share units (several copies of a
        # task) it takes them as independent, and says so.
        flagged_both = sum(1 for v, f in zip(values, flags, strict=True) if v == 0 and f)
        neither = pairs - only_default - only_condition - flagged_both
        _, low, high = stats.newcombe_paired_interval(flagged_both, only_condition,
                                                      only_default, neither)
        method = NEWCOMBE if units >= pairs else NEWCOMBE + ", copies treated as independent"
        interval = {"low": low, "high": high, "method": method, "units": units}
    return {
        "condition": condition, "against": default, "truth_class": cls,
        "pairs": pairs, "dropped_abstentions": dropped,
        "only_default": only_default, "only_condition": only_condition,
        "difference": (only_condition - only_default) / pairs if pairs else None,
        "p_value": stats.mcnemar_exact(only_default, only_condition) if pairs else None,
        "interval": interval,
    }
