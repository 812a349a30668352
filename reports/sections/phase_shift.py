"""The "phase_shift" section: how verdicts moved between phase 1 and phase 2.

Per judge and truth class, McNemar's exact test on the two discordant counts (never pooled across
judges); beside it the pooled figures per group (reports.sections.pooled), built once by the
caller because the decision rules read them too."""

from functools import lru_cache

import numpy as np

from reports import stats
from reports.loading import CLASS_CODES, ReportData
from reports.sections.agreement import AGREEMENT_LABEL
from reports.sections.pooled import RESAMPLES


@lru_cache(maxsize=4096)
def _mcnemar(towards: int, away: int) -> float:
    """McNemar's exact p, memoised: many judges share the same discordant counts."""
    return stats.mcnemar_exact(towards, away)


def phase_shift(data: ReportData, pooled: dict) -> dict:
    return {
        "definitions": {
            "pairs": "items the judge gave a locked verdict on in both phases, of known truth",
            "towards_truth": "wrong in phase 1, right in phase 2",
            "away_from_truth": "right in phase 1, wrong in phase 2",
            "p_value": "McNemar's exact two-sided test on the two discordant counts, per judge "
                       "and truth class; never pooled across judges",
            "pooled": "per group of judges, current truth: ratios over all paired verdicts; "
                      f"95% percentile intervals from {RESAMPLES} resamples (seed 0) of the "
                      "run's units (tasks, or declared clusters) and, with 10 judges or more, "
                      "of the judges too, drawn independently; with fewer, the judges are "
                      "held fixed (conditional on these judges); none over fewer than 20 "
                      "units (resampling says which, and why)",
            "agreement": "Fleiss' kappa (items with the most common number of raters) and "
                         "Krippendorff's alpha (nominal) among the group's judges who locked "
                         f"both phases, on the same items in each phase; {AGREEMENT_LABEL}",
            "order_effects": "accuracy (verdicts matching truth / scored verdicts) by the third "
                             "of the judge's drawn order the item fell in",
        },
        "judges": shift_judges(data),
        "pooled": pooled,
    }


def shift_judges(data: ReportData) -> list[dict]:
    """Each judge with a pair of known truth: per truth version and class, the pairs, right in
    each phase, the discordant counts and McNemar's p."""
    paired, right, versions = data.verdicts.paired, data.verdicts.right, data.items.versions
    # (version, class name) -> per judge: pairs, right in phase 1, in phase 2, towards, away
    shift_counts = {}
    for version in versions:
        r1, r2 = right[(version, 1)], right[(version, 2)]
        for name in ("defective", "good"):
            pairs_of = paired & (data.items.classes[version] == CLASS_CODES[name])[None, :]
            shift_counts[(version, name)] = (
                pairs_of.sum(axis=1), (pairs_of & r1).sum(axis=1), (pairs_of & r2).sum(axis=1),
                (pairs_of & ~r1 & r2).sum(axis=1), (pairs_of & r1 & ~r2).sum(axis=1))
    # A pair is of known truth: a judge whose paired items are all of unknown truth (in every
    # truth version) has none and is left out, as one without any pair is.
    known_pairs = sum((counts[0] for counts in shift_counts.values()), np.zeros(len(paired), int))
    entries = []
    for j, (judge, group) in enumerate(zip(data.judges.rows, data.judges.groups, strict=True)):
        if not known_pairs[j]:
            continue
        by_version = {}
        for version in versions:
            by_version[version] = {}
            for name in ("defective", "good"):
                n, right1, right2, towards, away = (int(a[j]) for a in shift_counts[(version, name)])
                by_version[version][name] = {
                    "pairs": n, "phase1_correct": right1, "phase2_correct": right2,
                    "towards_truth": towards, "away_from_truth": away,
                    "p_value": _mcnemar(towards, away),
                }
        entries.append({"judge": judge.pseudonym, "group": group, "versions": by_version})
    return entries
