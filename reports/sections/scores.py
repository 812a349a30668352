"""The "scores" section: recall and true-negative rate per judge (each phase, each truth version)
and per model reviewer (by group of reviews: main, same family, seal failed, verdict in
content), and the
"other_conditions" section. Never a vote.

A model reviewer is scored on its reviews under the run's default condition only; an abstention
is scored by the run's abstain_scoring (reports.scoring.scored_verdict: not_flagged counts it as a
pass, excluded leaves it out). Reviews under other conditions (the reviewer told a prior verdict,
say) are scored apart in other_conditions, never pooled with the default condition's."""

from collections import defaultdict

import numpy as np

from reports.loading import CLASS_CODES, ReportData
from reports.scoring import rate, score, scored_verdict
from reports.sections.model_reviewers import review_group, seal_counts


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
    }
    return {"definitions": definitions, "judges": judge_scores(data), "reviewers": reviewer_scores(data)}


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
    entries = []
    for reviewer in bundle.reviewers:
        mine = reviews_by_reviewer[reviewer.pk]
        entries.append({
            "reviewer": reviewer.bundle_id,
            "seals": seal_counts(mine),
            "reviews": len(mine),
            "abstained": sum(1 for r in mine if r.verdict == "abstain"),
            "excluded": sum(1 for r in mine if scored_verdict(r.verdict, rule) is None),
            "abstentions_by_condition": dict(sorted(abstentions[reviewer.pk].items())),
            "groups": grouped_scores(mine, bundle, versions, rule),
        })
    return entries


def grouped_scores(reviews, bundle, versions, rule) -> dict:
    """group -> truth version -> recall and true-negative rate of these reviews (one reviewer's,
    under one condition), each scored as `scored_verdict` says; excluded abstentions left out."""
    groups = defaultdict(list)
    for review in reviews:
        verdict = scored_verdict(review.verdict, rule)
        if verdict is not None:
            groups[review_group(review, bundle)].append((verdict, bundle.copy_by_pk[review.copy_id]))
    return {
        group: {
            version: score((verdict, c.imported_truth if version == "imported" else c.truth)
                           for verdict, c in pairs)
            for version in versions
        }
        for group, pairs in sorted(groups.items())
    }


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
    entries = []
    for (reviewer_pk, condition), reviews in sorted(by_pair.items(),
                                                    key=lambda kv: (order[kv[0][0]], kv[0][1])):
        entries.append({
            "reviewer": bundle.reviewer_by_pk[reviewer_pk].bundle_id,
            "condition": condition,
            "reviews": len(reviews),
            "flagged": sum(1 for r in reviews if r.verdict == "fail"),
            "abstained": sum(1 for r in reviews if r.verdict == "abstain"),
            "excluded": sum(1 for r in reviews if scored_verdict(r.verdict, rule) is None),
            "groups": grouped_scores(reviews, bundle, versions, rule),
        })
    return {
        "label": OTHER_CONDITIONS_LABEL,
        "default_condition": bundle.run.default_condition,
        "abstain_scoring": rule,
        "reviewers": entries,
    }
