"""The pooled figures per group of judges (phase_shift.pooled): pooled effects of the phase shift
with bootstrap intervals over judges and items, agreement and order effects, on current truth.

The decision rules are evaluated on the main group's entry (reports.scoring.MAIN_GROUP), so
`pooled_by_group` is computed once and handed to both sections.
"""

import numpy as np

from reports import stats
from reports.loading import CLASS_CODES, ReportData
from reports.scoring import GROUPS
from reports.sections.agreement import agreement
from reports.sections.common import estimate
from reports.sections.order_effects import order_effects

RESAMPLES = 2000
BOOTSTRAP_SEED = 0  # fixed, so building the report twice gives the same intervals

# The pooled figures are ratios of sums of these eight judges × items indicator matrices, per
# truth class c (defective, good), over the paired verdicts (both phases locked, known truth):
# n_c (a pair on an item of class c), r1_c (right in phase 1), r2_c (right in phase 2),
# both_c (right in both). towards = r2 - both, away = r1 - both.
_SUMS = ("n_d", "r1_d", "r2_d", "both_d", "n_g", "r1_g", "r2_g", "both_g")


def pooled_by_group(data: ReportData) -> dict:
    """group -> its pooled entry, for each group that has judges, in GROUPS order."""
    bundle, items = data.bundle, data.items
    says, paired, right = data.verdicts.says, data.verdicts.paired, data.verdicts.right
    thirds = data.assignments.thirds
    # Each item's resampling unit: its copy's (a finding's copy's), the run's frozen unit
    # (issue 28 item 1: tasks, or declared clusters); with one task and no clusters, one unit.
    item_units = [bundle.unit_of_copy.get(
        item.copy_id if item.copy_id else bundle.finding_by_pk[item.finding_id].copy_id, "run")
        for item in items.rows]
    current_class = items.classes["current"]
    defective_items = current_class == CLASS_CODES["defective"]
    good_items = current_class == CLASS_CODES["good"]
    known = current_class >= 0
    group_array = np.asarray(data.judges.groups)
    pooled = {}
    for group in GROUPS:
        members = (np.flatnonzero(group_array == group) if data.judges.rows
                   else np.array([], dtype=np.int64))
        if members.size == 0:
            continue
        entry = {"judges_in_group": int(members.size)}
        paired_g = paired[members]
        r1 = right[("current", 1)][members]
        r2 = right[("current", 2)][members]
        if paired_g[:, known].any():
            entry.update(_pooled(paired_g & known[None, :], r1, r2, defective_items, good_items,
                                 item_units, bundle.resampling_by))
        else:
            entry.update({"judges": 0, "items": 0, "paired_verdicts": {"defective": 0, "good": 0},
                          "discordant": None, "effects": None, "resampling": None})
        raters = members[paired[members].any(axis=1)]
        if raters.size >= 2:
            mask = paired[raters]
            entry["agreement"] = agreement(np.where(mask, says[1][raters], -1),
                                           np.where(mask, says[2][raters], -1))
        else:
            entry["agreement"] = None
        entry["order_effects"] = order_effects(
            {p: says[p][members] for p in (1, 2)},
            {p: right[("current", p)][members] for p in (1, 2)}, known, thirds[members])
        pooled[group] = entry
    return pooled


def _pooled_metrics(s: dict) -> dict:
    """Every pooled metric from the eight sums (arrays over resamples, or plain numbers)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        pairs = s["n_d"] + s["n_g"]
        towards = (s["r2_d"] - s["both_d"]) + (s["r2_g"] - s["both_g"])
        away = (s["r1_d"] - s["both_d"]) + (s["r1_g"] - s["both_g"])
        return {
            "recall_phase1": np.divide(s["r1_d"], s["n_d"]),
            "recall_phase2": np.divide(s["r2_d"], s["n_d"]),
            "delta_recall": np.divide(s["r2_d"] - s["r1_d"], s["n_d"]),
            "tnr_phase1": np.divide(s["r1_g"], s["n_g"]),
            "tnr_phase2": np.divide(s["r2_g"], s["n_g"]),
            "delta_tnr": np.divide(s["r2_g"] - s["r1_g"], s["n_g"]),
            "shift_towards_truth": np.divide(towards, pairs),
            "shift_away_from_truth": np.divide(away, pairs),
        }


def _indicator_matrices(paired, right1, right2, defective, good) -> list[np.ndarray]:
    matrices = []
    for cls in (defective, good):
        n = paired & cls[None, :]
        r1 = n & right1
        r2 = n & right2
        matrices += [n, r1, r2, r1 & right2]
    return matrices


def _pooled(paired, right1, right2, defective, good, item_units, by) -> dict:
    """Pooled effects for one group of judges, each with its 95% interval (issue 28 item 3):
    a crossed two-way bootstrap over judges and the run's units (tasks, or declared clusters)
    where there are 10 judges or more (Owen 2007); over the units alone, the judges held fixed,
    with fewer (conditional on these judges); none over fewer than 20 units, and why."""
    matrices = _indicator_matrices(paired, right1, right2, defective, good)
    point = _pooled_metrics({name: float(m.sum()) for name, m in zip(_SUMS, matrices, strict=True)})
    # Resample only what the pooled rates are made of: judges and items with a paired verdict.
    judges = np.flatnonzero(paired.any(axis=1))
    items = np.flatnonzero(paired.any(axis=0))
    labels = [item_units[i] for i in items]
    units = len(set(labels))
    conditional = judges.size < stats.MIN_JUDGES_RESAMPLED
    resampling = {"by": by, "units": units, "judges": int(judges.size),
                  "conditional_on_judges": conditional, "method": None, "no_interval": None}
    effects = {name: estimate(value) for name, value in point.items()}
    if units < stats.MIN_BOOTSTRAP_UNITS:
        resampling["no_interval"] = (
            f"{units} unit{'s' if units != 1 else ''} ({_UNIT_WORDS[by]}), fewer than "
            f"{stats.MIN_BOOTSTRAP_UNITS}: a bootstrap over so few is too narrow, and no other "
            "interval fits verdicts pooled over judges")
    else:
        sub = [np.ascontiguousarray(m[np.ix_(judges, items)], dtype=np.float64) for m in matrices]
        if conditional:
            # Judges held fixed: each matrix summed over them first.
            weights = stats.cluster_weights(labels, resamples=RESAMPLES, seed=BOOTSTRAP_SEED)
            column_sums = [m.sum(axis=0, keepdims=True) for m in sub]
            sums = stats.resampled_sums(column_sums, np.ones((RESAMPLES, 1)), weights)
            resampling["method"] = "bootstrap"
        else:
            judge_weights, unit_weights = stats.judges_clusters_weights(
                judges.size, labels, resamples=RESAMPLES, seed=BOOTSTRAP_SEED)
            sums = stats.resampled_sums(sub, judge_weights, unit_weights)
            resampling["method"] = "two-way bootstrap"
        resampled = _pooled_metrics(dict(zip(_SUMS, sums, strict=True)))
        for name, value in point.items():
            low, high = stats.percentile_interval(resampled[name])
            effects[name] = estimate(value, low, high)
    counts = {name: int(m.sum()) for name, m in zip(_SUMS, matrices, strict=True)}
    return {
        "judges": int(judges.size), "items": int(items.size),
        "paired_verdicts": {"defective": counts["n_d"], "good": counts["n_g"]},
        "discordant": {
            cls: {"towards_truth": counts[f"r2_{c}"] - counts[f"both_{c}"],
                  "away_from_truth": counts[f"r1_{c}"] - counts[f"both_{c}"]}
            for cls, c in (("defective", "d"), ("good", "g"))
        },
        "effects": effects,
        "resampling": resampling,
    }


_UNIT_WORDS = {"task": "tasks", "cluster": "declared clusters",
               None: "one task and no clusters: the run is one unit"}
