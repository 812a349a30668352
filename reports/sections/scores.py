"""The "scores" section: recall and true-negative rate per judge (each phase, each truth version)
and per model reviewer (by group of reviews: main, same family, seal failed). Never a vote."""

from collections import defaultdict

import numpy as np

from reports.loading import CLASS_CODES, ReportData
from reports.scoring import rate, score
from reports.sections.model_reviewers import review_group


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
    bundle, versions = data.bundle, data.items.versions
    reviews_by_reviewer = defaultdict(list)
    for review in bundle.reviews:
        reviews_by_reviewer[review.reviewer_id].append(review)
    entries = []
    for reviewer in bundle.reviewers:
        groups = defaultdict(list)
        seals = {"sealed": 0, "failed": 0, "absent": 0}
        for review in reviews_by_reviewer[reviewer.pk]:
            seals[review.seal] += 1
            groups[review_group(review, bundle)].append((review.verdict, bundle.copy_by_pk[review.copy_id]))
        entries.append({
            "reviewer": reviewer.bundle_id,
            "seals": seals,
            "groups": {
                group: {
                    version: score((verdict, c.imported_truth if version == "imported" else c.truth)
                                   for verdict, c in pairs)
                    for version in versions
                }
                for group, pairs in sorted(groups.items())
            },
        })
    return entries
