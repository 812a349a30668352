"""The "self_preference" section: whether a model reviewer favours its own family's copies
(issue 14, item 3).

For each reviewer whose family (case-folded) also built copies: within each truth class, its pass
rate on its own family's copies against its pass rate on other families' copies, the difference
(own − others) with a bootstrap interval over the run's resampling units (clusters, or tasks),
and the counts; beside it the reviewer's authorship-guess accuracy where it guessed
(reports.sections.model_reviewers.authorship).

Reviews under the run's default condition only, abstentions by the run's rule (not_flagged: a
pass; excluded: left out). Reviews the report scores apart for their seal (review_group other
than main or same_family: a failed seal) are set apart here too and counted. Both rates pool all
tasks (not matched by task): when one family's copies fall on harder tasks, the difference holds
that too; tasks_with_both says how far the two sets share tasks."""

from collections import defaultdict

from content.scoring import rate, scored_verdict
from content.truth import truth_class
from reports import stats
from reports.loading import ReportData
from reports.sections.common import estimate
from reports.sections.model_reviewers import authorship, review_group
from reports.sections.pooled import BOOTSTRAP_SEED, RESAMPLES
from reports.sections.reviewer_conditions import CLASSES, resampling

SCORED_GROUPS = ("main", "same_family")


def self_preference(data: ReportData) -> dict:
    bundle = data.bundle
    rule = bundle.run.abstain_scoring
    built = {bundle.builder_by_pk[c.builder_id].family.casefold() for c in bundle.copies}
    guesses = {e["reviewer"]: e for e in authorship(bundle)["reviewers"]}
    reviews = defaultdict(list)
    for review in bundle.default_reviews:
        reviews[review.reviewer_id].append(review)
    entries = []
    for reviewer in bundle.reviewers:
        family = reviewer.family.casefold()
        if family not in built:
            continue
        kept = [r for r in reviews[reviewer.pk] if review_group(r, bundle) in SCORED_GROUPS]
        guessed = guesses.get(reviewer.bundle_id)
        entries.append({
            "reviewer": reviewer.bundle_id, "model": reviewer.model, "family": reviewer.family,
            "set_apart": len(reviews[reviewer.pk]) - len(kept),
            "by_class": {cls: by_class(data, kept, family, cls, rule) for cls in CLASSES},
            "authorship": None if guessed is None else {
                k: guessed[k] for k in ("guesses", "model", "family")},
        })
    return {
        "definitions": {
            "own": "pass rate (reviews scored pass / reviews scored) on copies built by the "
                   "reviewer's own family (families compared case-folded), with its Wilson 95% "
                   "interval",
            "others": "the same on copies built by every other family",
            "interval": "what the difference's interval is: a percentile bootstrap over the run's "
                        f"units at {stats.MIN_BOOTSTRAP_UNITS} or more, else Newcombe's (1998) "
                        "interval for two independent proportions, which takes the copies as "
                        "independent; null without both rates",
            "difference": "own − others, with its 95% interval (see interval); a bootstrap "
                          "resamples the run's units (see resampling), both rates recomputed on "
                          "each resample; null where either rate has no review",
            "tasks": "tasks with a scored review of that truth class, own or others'",
            "tasks_with_both": "tasks with both an own-family and an other-family copy of that "
                               "class reviewed: the rates pool all tasks, not matched by task",
            "set_apart": "default-condition reviews left out because the report scores them "
                         "apart for their seal (as in scores.reviewers)",
            "authorship": "the reviewer's authorship guesses (model_reviewers.authorship): "
                          "right on the builder's model, on its family; null without guesses",
            "truth_class": "defective: seeded_defect, tests_fail; good: known_good, tests_pass; "
                           "current truth",
        },
        "condition": bundle.run.default_condition,
        "abstain_scoring": rule,
        "resampling": resampling(data, "the difference of the two pass rates is recomputed on "
                                       "the drawn copies", "clustered_ratio_difference"),
        "reviewers": entries,
    }


def by_class(data: ReportData, reviews, family: str, cls: str, rule: str) -> dict:
    bundle = data.bundle
    rows = []  # (copy pk, own, passed, task pk), one per scored review of this class
    for review in reviews:
        copy = bundle.copy_by_pk[review.copy_id]
        verdict = scored_verdict(review.verdict, rule)
        if verdict is None or truth_class(copy.truth) != cls:
            continue
        own = bundle.builder_by_pk[copy.builder_id].family.casefold() == family
        rows.append((copy.pk, own, verdict == "pass", copy.task_id))
    rows.sort()  # import order: the bootstrap numbers units in order of first appearance
    own_rows = [r for r in rows if r[1]]
    other_rows = [r for r in rows if not r[1]]
    own_rate = rate(sum(r[2] for r in own_rows), len(own_rows))
    others_rate = rate(sum(r[2] for r in other_rows), len(other_rows))
    value = low = high = method = None
    if own_rows and other_rows:
        value = own_rate["rate"] - others_rate["rate"]
        labels = [bundle.unit_of_copy.get(r[0]) for r in rows]
        if bundle.resampling_by is not None and len(set(labels)) >= stats.MIN_BOOTSTRAP_UNITS:
            _, low, high = stats.clustered_ratio_difference(
                [int(r[1] and r[2]) for r in rows], [int(r[1]) for r in rows],
                [int(not r[1] and r[2]) for r in rows], [int(not r[1]) for r in rows], labels,
                resamples=RESAMPLES, seed=BOOTSTRAP_SEED)
            method = "bootstrap"
        else:
            # Too few units for a bootstrap (issue 28 item 3): Newcombe's interval for two
            # independent proportions, which takes the copies as independent, and says so.
            _, low, high = stats.newcombe_independent_interval(
                own_rate["k"], own_rate["n"], others_rate["k"], others_rate["n"])
            method = "Newcombe hybrid score, copies treated as independent"
    return {
        "own": own_rate, "others": others_rate, "difference": estimate(value, low, high),
        "interval": method,
        "tasks": len({r[3] for r in rows}),
        "tasks_with_both": len({r[3] for r in own_rows} & {r[3] for r in other_rows}),
    }
