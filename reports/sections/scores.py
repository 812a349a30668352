"""The "scores" section: recall and true-negative rate per judge (each phase, each truth version)
and per model reviewer (by group of reviews: main, same family, seal failed, verdict in
content), and the
"other_conditions" section. Never a vote.

A model reviewer is scored on its reviews under the run's default condition only; an abstention
is scored by the run's abstain_scoring (reports.scoring.scored_verdict: not_flagged counts it as a
pass, excluded leaves it out). Reviews under other conditions (the reviewer told a prior verdict,
say) are scored apart in other_conditions, never pooled with the default condition's.

Beside each Wilson interval, which takes items as independent, every score carries "resampled":
the same two rates with a percentile interval from a bootstrap over the run's clusters of copies
(or its tasks), data.bundle.resampling_by's units, since copies of one task are not independent.
All judges are resampled over one set of draws of the session's items' units, all reviewers over
one set of the run's copies' units (reports.stats.clustered_ratios: a matrix product, not a
bootstrap per judge); null where the run has one task and no clusters."""

from collections import defaultdict

import numpy as np

from content.scoring import rate, score, scored_verdict
from content.truth import is_correct, truth_class
from reports import stats
from reports.loading import CLASS_CODES, ReportData
from reports.sections.common import estimate
from reports.sections.dwell import DWELL_DEFINITION, judge_dwell
from reports.sections.model_reviewers import review_group, seal_counts
from reports.sections.pooled import BOOTSTRAP_SEED, RESAMPLES

RESAMPLED_DEFINITION = (
    "percentile interval, 95%, from 2,000 bootstrap resamples (seed 0) of the run's clusters of "
    "copies (a copy without a cluster is its task's own unit), or of its tasks where no copy names "
    "a cluster: copies of one task or cluster are not independent, as the Wilson interval takes "
    "them to be. All judges are resampled over one set of draws of the units the session's items "
    "span, all reviewers over one set of the units of the run's copies; a score's items are part "
    "of those units, and a resample counts them as often as their unit was drawn (domain "
    "estimation). The point is the Wilson rate's k/n; the bounds are null where the rate's items "
    "lie in fewer than 20 units: with fewer a percentile bootstrap interval is too narrow and "
    "moves in coarse steps (docs/statistics.md), so the Wilson interval stands alone, taking the "
    "items as independent; resampled is null where the run has one task and no clusters"
)


def scores(data: ReportData) -> dict:
    definitions = {
        "recall": "share of defective items (seeded_defect, tests_fail; findings: real) "
                  "judged fail (findings: real)",
        "tnr": "share of good items (known_good, tests_pass; findings: false_alarm) "
               "judged pass (findings: false_alarm)",
        "interval": "Wilson score interval, 95%; null when there is no item to score",
        "scored": "locked verdicts only; unknown truth never scored",
        "truth_versions": "current = after corrections; imported = as the bundle gave "
                          "it (present only when a label was corrected)",
        "resampled": RESAMPLED_DEFINITION,
        "no_verdict": "a model reviewer's rate only: how many of its n are replies with no "
                      "verdict, scored as the run's abstain_scoring declares (not_flagged: a "
                      "pass, so inside tnr's k and outside recall's)",
        "without_abstentions": "a model reviewer that gave no verdict to more than a tenth of its "
                               "reviews, under not_flagged: the same rates with those replies "
                               "left out, beside the declared ones",
        "dwell": DWELL_DEFINITION,
    }
    # Each judge's time per item beside their scores (issue 30 item 4); here, not in
    # judge_scores, which the exclusions and the adjudicated scoring call again on part of the data.
    judges = [{**entry, "dwell": dwell}
              for entry, dwell in zip(judge_scores(data), judge_dwell(data), strict=True)]
    return {"definitions": definitions, "judges": judges, "reviewers": reviewer_scores(data)}


def judge_scores(data: ReportData) -> list[dict]:
    v, versions = data.verdicts, data.items.versions
    says = v.says
    drafts = np.bincount(v.judge[~v.locked], minlength=len(data.judges.rows))
    # (version, phase) -> per judge: caught, defective, passed, good, unknown truth
    per_judge = {}
    for version in versions:
        cls = data.items.classes[version]
        defective, good, unknown = cls == CLASS_CODES["defective"], cls == CLASS_CODES["good"], cls < 0
        for phase in (1, 2):
            says_p = says[phase]
            has = says_p >= 0
            per_judge[(version, phase)] = (
                ((says_p == 1) & defective).sum(axis=1), (has & defective).sum(axis=1),
                ((says_p == 0) & good).sum(axis=1), (has & good).sum(axis=1),
                (has & unknown).sum(axis=1),
            )
    resampled = judges_resampled(data)
    entries = []
    for j, (judge, group) in enumerate(zip(data.judges.rows, data.judges.groups, strict=True)):
        entry = {"judge": judge.pseudonym, "group": group, "phases": {},
                 "unlocked_drafts": int(drafts[j])}
        for phase in (1, 2):
            entry["phases"][str(phase)] = {}
            for version in versions:
                caught, defective_n, passed, good_n, unknown_n = per_judge[(version, phase)]
                entry["phases"][str(phase)][version] = {
                    "recall": rate(int(caught[j]), int(defective_n[j])),
                    "tnr": rate(int(passed[j]), int(good_n[j])),
                    "unknown_truth": int(unknown_n[j]),
                    "resampled": resampled[(version, phase)](j) if resampled else None,
                }
        entries.append(entry)
    return entries


def reviewer_scores(data: ReportData) -> list[dict]:
    """Per reviewer, its default-condition reviews scored by group (main, same family, seal
    failed, verdict in content), abstentions by the run's rule; beside them how many abstentions
    it gave under each condition (other conditions are scored apart, in other_conditions)."""
    bundle, versions = data.bundle, data.items.versions
    rule = bundle.run.abstain_scoring
    reviews_by_reviewer = defaultdict(list)
    for review in bundle.default_reviews:
        reviews_by_reviewer[review.reviewer_id].append(review)
    abstentions = defaultdict(lambda: defaultdict(int))
    for review in bundle.reviews:
        abstentions[review.reviewer_id][review.condition] += review.verdict == "abstain"
    groups = grouped_scores([reviews_by_reviewer[r.pk] for r in bundle.reviewers], bundle,
                            versions, rule)
    entries = []
    for reviewer, scored in zip(bundle.reviewers, groups, strict=True):
        mine = reviews_by_reviewer[reviewer.pk]
        entries.append({
            "reviewer": reviewer.bundle_id,
            "seals": seal_counts(mine),
            "reviews": len(mine),
            "abstained": sum(1 for r in mine if r.verdict == "abstain"),
            "excluded": sum(1 for r in mine if scored_verdict(r.verdict, rule) is None),
            "abstentions_by_condition": dict(sorted(abstentions[reviewer.pk].items())),
            "groups": scored,
        })
    return entries


def grouped_scores(review_lists, bundle, versions, rule) -> list[dict]:
    """For each list of reviews (one reviewer's, under one condition): group -> truth version ->
    recall and true-negative rate, each review scored as `scored_verdict` says (excluded
    abstentions left out), with each its interval resampled over the units of the run's copies —
    every list in one resampling, over the same draws."""
    grouped, abstained = [], []  # abstained mirrors grouped: whether each scored review gave none
    for reviews in review_lists:
        groups, gave_none = defaultdict(list), defaultdict(list)
        for review in reviews:
            verdict = scored_verdict(review.verdict, rule)
            if verdict is not None:
                group = review_group(review, bundle)
                groups[group].append((verdict, bundle.copy_by_pk[review.copy_id]))
                gave_none[group].append(review.verdict == "abstain")
        grouped.append(dict(sorted(groups.items())))
        abstained.append(gave_none)
    # A reviewer that gave no verdict to more than a tenth of its reviews is scored a second
    # time with those left out, beside its rates as the run declares them (issue 28 item 6).
    many_abstentions = [rule == "not_flagged"
                        and 10 * sum(r.verdict == "abstain" for r in reviews) > len(reviews)
                        for reviews in review_lists]
    keys = [(n, group, version) for n, groups in enumerate(grouped) for group in groups
            for version in versions]
    resampled = reviews_resampled([grouped[n][group] for n, group, _ in keys],
                                  [version for *_, version in keys], bundle)
    scored = [defaultdict(dict) for _ in grouped]
    for (n, group, version), extra in zip(keys, resampled, strict=True):
        pairs = [(verdict, c.imported_truth if version == "imported" else c.truth)
                 for verdict, c in grouped[n][group]]
        block = {**score(pairs), "resampled": extra}
        # How many replies without a verdict each rate holds, scored as the run declares (said
        # where there are any).
        for key, cls in (("recall", "defective"), ("tnr", "good")):
            held = sum(1 for (_, truth), none in zip(pairs, abstained[n][group], strict=True)
                       if none and truth_class(truth) == cls)
            if held:
                block[key] = {**block[key], "no_verdict": held}
        if many_abstentions[n] and any(abstained[n][group]):
            without = score(pair for pair, none in zip(pairs, abstained[n][group], strict=True)
                            if not none)
            block["without_abstentions"] = {"recall": without["recall"], "tnr": without["tnr"]}
        scored[n][group][version] = block
    return [dict(entry) for entry in scored]


def _resampled(by: str, units: int, recall: tuple, tnr: tuple) -> dict:
    """The "resampled" block of a score from (point, low, high, units holding the rate's items)
    of each rate; an interval over fewer than MIN_BOOTSTRAP_UNITS units is too narrow to give
    (issue 28 item 3) and is left out: the Wilson interval beside it stands alone."""
    def rate_estimate(point, low, high, held):
        return estimate(point, low, high) if held >= stats.MIN_BOOTSTRAP_UNITS else estimate(point)
    return {"by": by, "units": int(units), "recall": rate_estimate(*recall),
            "tnr": rate_estimate(*tnr)}


def _units_held(scored: np.ndarray, labels: list) -> np.ndarray:
    """Per row of a rows × items indicator, how many distinct units its items lie in."""
    number: dict = {}
    index = np.fromiter((number.setdefault(label, len(number)) for label in labels),
                        dtype=np.int64, count=len(labels))
    by_unit = np.zeros((len(labels), len(number)))
    by_unit[np.arange(len(labels)), index] = 1.0
    return np.count_nonzero(scored.astype(np.float64) @ by_unit, axis=1)


def judges_resampled(data: ReportData) -> dict | None:
    """(truth version, phase) -> judge row -> the judge's "resampled" block; None where the run
    has nothing to resample by. One clustered_ratios call for every judge, phase and version:
    each row is one judge's indicator over the session's items (1 where it caught / passed an
    item, and 1 where it scored one), the units those of each item's copy (a finding's copy)."""
    bundle, items = data.bundle, data.items
    if bundle.resampling_by is None or not data.judges.rows or not items.rows:
        return None
    labels = [bundle.unit_of_copy[item.copy_id if item.copy_id
                                  else bundle.finding_by_pk[item.finding_id].copy_id]
              for item in items.rows]
    combos = [(version, phase) for version in items.versions for phase in (1, 2)]
    numerators, denominators, scored = [], [], []
    for version, phase in combos:
        cls = items.classes[version]
        defective = (cls == CLASS_CODES["defective"])[None, :]
        good = (cls == CLASS_CODES["good"])[None, :]
        says = data.verdicts.says[phase]
        has = says >= 0
        numerators += [(says == 1) & defective, (says == 0) & good]
        denominators += [has & defective, has & good]
        scored.append(has & (defective | good))
    points, lows, highs, held = stats.clustered_ratios(
        np.concatenate(numerators), np.concatenate(denominators), labels,
        resamples=RESAMPLES, seed=BOOTSTRAP_SEED)
    units = _units_held(np.concatenate(scored), labels)
    n = len(data.judges.rows)
    by = bundle.resampling_by

    def block(c: int):
        def of_judge(j: int) -> dict:
            recall, tnr = 2 * c * n + j, (2 * c + 1) * n + j
            return _resampled(by, units[c * n + j],
                              (points[recall], lows[recall], highs[recall], held[recall]),
                              (points[tnr], lows[tnr], highs[tnr], held[tnr]))
        return of_judge

    return {combo: block(c) for c, combo in enumerate(combos)}


def reviews_resampled(pair_lists: list, versions: list, bundle) -> list:
    """For each list of (verdict, copy) pairs scored against its truth version, the "resampled"
    block; all in one clustered_ratios call over the run's copies (in import order), so every
    reviewer, group and condition is resampled over the same draws of the same units."""
    if bundle.resampling_by is None or not pair_lists:
        return [None] * len(pair_lists)
    column = {c.pk: n for n, c in enumerate(bundle.copies)}
    labels = [bundle.unit_of_copy[c.pk] for c in bundle.copies]
    shape = (len(pair_lists), len(labels))
    caught, defective, passed, good = (np.zeros(shape) for _ in range(4))
    for row, (pairs, version) in enumerate(zip(pair_lists, versions, strict=True)):
        for verdict, copy in pairs:
            truth = copy.imported_truth if version == "imported" else copy.truth
            cls = truth_class(truth)
            col = column[copy.pk]
            if cls == "defective":
                defective[row, col] += 1
                caught[row, col] += is_correct(verdict, truth)
            elif cls == "good":
                good[row, col] += 1
                passed[row, col] += is_correct(verdict, truth)
    points, lows, highs, held = stats.clustered_ratios(
        np.concatenate([caught, passed]), np.concatenate([defective, good]), labels,
        resamples=RESAMPLES, seed=BOOTSTRAP_SEED)
    units = _units_held((defective + good) > 0, labels)
    rows = len(pair_lists)
    return [_resampled(bundle.resampling_by, units[r],
                       (points[r], lows[r], highs[r], held[r]),
                       (points[rows + r], lows[rows + r], highs[rows + r], held[rows + r]))
            for r in range(rows)]


OTHER_CONDITIONS_LABEL = ("reviews under conditions other than the default one: scored here "
                          "apart, never pooled with the default condition's scores")


def other_conditions(data: ReportData) -> dict:
    """Per reviewer and condition other than the default: how many reviews, how many flagged
    (fail), how many abstained, and the same per-truth-class rates as the main table, by group.
    No comparison test between conditions here: listed apart only."""
    bundle, versions = data.bundle, data.items.versions
    rule = bundle.run.abstain_scoring
    by_pair = defaultdict(list)
    for review in bundle.other_reviews:
        by_pair[(review.reviewer_id, review.condition)].append(review)
    order = {r.pk: n for n, r in enumerate(bundle.reviewers)}
    cells = sorted(by_pair.items(), key=lambda kv: (order[kv[0][0]], kv[0][1]))
    groups = grouped_scores([reviews for _, reviews in cells], bundle, versions, rule)
    entries = []
    for ((reviewer_pk, condition), reviews), scored in zip(cells, groups, strict=True):
        entries.append({
            "reviewer": bundle.reviewer_by_pk[reviewer_pk].bundle_id,
            "condition": condition,
            "reviews": len(reviews),
            "flagged": sum(1 for r in reviews if r.verdict == "fail"),
            "abstained": sum(1 for r in reviews if r.verdict == "abstain"),
            "excluded": sum(1 for r in reviews if scored_verdict(r.verdict, rule) is None),
            "groups": scored,
        })
    return {
        "label": OTHER_CONDITIONS_LABEL,
        "default_condition": bundle.run.default_condition,
        "abstain_scoring": rule,
        "reviewers": entries,
    }
