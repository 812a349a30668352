"""The revealed report: built from the database once a session is revealed, never before.

`build_report(session)` returns one complete, JSON-serialisable dict whose shape is published in
`reports/schemas/report-1.schema.json`; CSV, HTML (reports/html.py) and the anonymised export are
views of that dict. Scores are per judge and per model reviewer, never a vote: recall on defective
items and the true-negative rate on good ones, k/n with Wilson 95% intervals, phase 1 and phase 2
apart. Then the phase shift (McNemar per judge and truth class; pooled effects with a bootstrap
over judges and items, never a pooled McNemar), agreement (reported, never used to decide), the
preregistered decision rules evaluated as written, model reviewers' pairs, authorship guesses and
seals, order effects, and the achieved sample beside the planned one.

Verdicts are held as judges × items matrices (numpy) so that a report of 200 judges × 500 items in
both phases builds in about two seconds (bench/report.py).
"""

import gc
import math
from collections import Counter, defaultdict
from functools import lru_cache
from itertools import combinations

import numpy as np
from django.utils import timezone

from blindjudge.errors import Conflict
from content.normalise import normalise
from content.truth import is_correct, truth_class
from judging.models import SessionKind, SessionState
from reports import stats
from reports.loading import load_report_data
from reports.scoring import GROUPS, MAIN_GROUP, judge_group, rate, score

REPORT_SCHEMA = "blindjudge.report/1"

AGREEMENT_LABEL = "reported, never used to decide"
RESAMPLES = 2000
BOOTSTRAP_SEED = 0  # fixed, so building the report twice gives the same intervals
THIRDS = ("first", "middle", "last")

BLINDING_STATEMENT = (
    "Judges saw each item under a random code, in an order drawn for them, rendered through one "
    "template with metadata (commit trailers, author headers) stripped and the host's accepted "
    "patterns redacted. Content itself was not otherwise changed: a model's style can still "
    "identify it. Judges were not asked to guess authors, so how far they stayed blind is "
    "unmeasured. Model reviewers' authorship guesses, where given, measure the leak for models."
)


def _iso(value):
    return value.isoformat() if value else None


@lru_cache(maxsize=4096)
def _mcnemar(towards: int, away: int) -> float:
    """McNemar's exact p, memoised: many judges share the same discordant counts."""
    return stats.mcnemar_exact(towards, away)


def _finite(value) -> float | None:
    """A float for the JSON, or None where it could not be computed (NaN)."""
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def _estimate(point, low=None, high=None) -> dict:
    return {"value": _finite(point), "low": _finite(low), "high": _finite(high)}


# --- pooled effects ------------------------------------------------------------------------------

# The pooled figures are ratios of sums of these eight judges × items indicator matrices, per
# truth class c (defective, good), over the paired verdicts (both phases locked, known truth):
# n_c (a pair on an item of class c), r1_c (right in phase 1), r2_c (right in phase 2),
# both_c (right in both). towards = r2 - both, away = r1 - both.
_SUMS = ("n_d", "r1_d", "r2_d", "both_d", "n_g", "r1_g", "r2_g", "both_g")


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


def _pooled(paired, right1, right2, defective, good, item_clusters) -> dict:
    """Pooled effects for one group of judges, with a two-way bootstrap over judges and items
    (and, where the bundle gives clusters, a cluster bootstrap over items)."""
    matrices = _indicator_matrices(paired, right1, right2, defective, good)
    point = _pooled_metrics({name: float(m.sum()) for name, m in zip(_SUMS, matrices, strict=True)})
    # Resample only what the pooled rates are made of: judges and items with a paired verdict.
    judges = np.flatnonzero(paired.any(axis=1))
    items = np.flatnonzero(paired.any(axis=0))
    sub = [np.ascontiguousarray(m[np.ix_(judges, items)], dtype=np.float64) for m in matrices]
    judge_weights, item_weights = stats.judges_items_weights(
        judges.size, items.size, resamples=RESAMPLES, seed=BOOTSTRAP_SEED)
    sums = stats.resampled_sums(sub, judge_weights, item_weights)
    resampled = _pooled_metrics(dict(zip(_SUMS, sums, strict=True)))
    effects = {}
    for name, value in point.items():
        low, high = stats.percentile_interval(resampled[name])
        effects[name] = _estimate(value, low, high)
    clustered = None
    labels = [item_clusters[i] for i in items]
    if any(label[0] == "cluster" for label in labels):
        weights = stats.cluster_weights(labels, resamples=RESAMPLES, seed=BOOTSTRAP_SEED)
        # Judges stay fixed here, so each matrix can be summed over judges first.
        column_sums = [m.sum(axis=0, keepdims=True) for m in sub]
        sums = stats.resampled_sums(column_sums, np.ones((RESAMPLES, 1)), weights)
        resampled = _pooled_metrics(dict(zip(_SUMS, sums, strict=True)))
        clustered = {"clusters": len(set(labels)), "effects": {}}
        for name, value in point.items():
            low, high = stats.percentile_interval(resampled[name])
            clustered["effects"][name] = _estimate(value, low, high)
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
        "cluster_resampled": clustered,
    }


def _agreement(says1, says2) -> dict:
    """Fleiss' kappa and Krippendorff's alpha among the same raters in each phase.

    Fleiss' kappa needs the same number of raters on every item: it is taken over the items
    rated by the most common number of raters (at least two), the same items in both phases."""
    result = {"label": AGREEMENT_LABEL}
    counts = [((s == 0).sum(axis=0), (s == 1).sum(axis=0)) for s in (says1, says2)]
    raters_per_item = counts[0][0] + counts[0][1]
    usable = raters_per_item[raters_per_item >= 2]
    modal = int(Counter(usable.tolist()).most_common(1)[0][0]) if usable.size else 0
    subjects = (raters_per_item == modal) if modal else np.zeros_like(raters_per_item, dtype=bool)
    for phase, (says, (passes, fails)) in enumerate(zip((says1, says2), counts, strict=True), 1):
        if subjects.any():
            matrix = np.stack([passes[subjects], fails[subjects]], axis=1)
            kappa = _finite(stats.fleiss_kappa(matrix))
        else:
            kappa = None
        codes = np.where(says >= 0, says, np.nan).astype(float)
        alpha = _finite(stats.krippendorff_alpha(codes)) if codes.size else None
        result[f"phase{phase}"] = {"fleiss_kappa": kappa, "krippendorff_alpha": alpha}
    result["fleiss_items"] = int(subjects.sum())
    result["fleiss_raters_per_item"] = modal or None

    def delta(key):
        a, b = result["phase1"][key], result["phase2"][key]
        return None if a is None or b is None else b - a

    result["delta_fleiss_kappa"] = delta("fleiss_kappa")
    result["delta_krippendorff_alpha"] = delta("krippendorff_alpha")
    return result


def _order_effects(says_by_phase, right_by_phase, known, thirds) -> dict:
    """Accuracy (share of scored verdicts that match truth) by third of the drawn order."""
    out = {}
    for phase in (1, 2):
        scored = (says_by_phase[phase] >= 0) & known[None, :]
        right = scored & right_by_phase[phase]
        out[str(phase)] = {
            name: rate(int((right & (thirds == t)).sum()), int((scored & (thirds == t)).sum()))
            for t, name in enumerate(THIRDS)
        }
    return out


# --- decision rules ------------------------------------------------------------------------------

def evaluate_rules(rules: list[dict], values: dict) -> list[dict]:
    """Each rule exactly as written: its value(s), whether each condition holds, whether it fired.

    A rule fires when its condition holds and, if it has one, its `and` condition holds too. A
    value that could not be computed never holds (reports.stats.evaluate_rule); the outcome then
    says so instead of "not fired"."""
    evaluated = []
    for rule in rules:
        conditions = [rule] + ([rule["and"]] if "and" in rule else [])
        checked = []
        for condition in conditions:
            value = values.get(condition["metric"])
            checked.append({
                "metric": condition["metric"], "op": condition["op"],
                "threshold": condition["threshold"], "value": value,
                "holds": stats.evaluate_rule(value, condition["op"], condition["threshold"]),
            })
        fired = all(c["holds"] for c in checked)
        missing = any(c["value"] is None for c in checked)
        evaluated.append({
            "name": rule["name"], "rule": rule, "conditions": checked, "fired": fired,
            "outcome": "fired" if fired else ("not computable" if missing else "not fired"),
        })
    return evaluated


# --- model reviewers -----------------------------------------------------------------------------

def _guess_matches(guess: str, builders) -> tuple[str | None, str | None]:
    """(model, family) a reviewer's authorship guess names, or None where it names none.

    A guess names a builder's model when it equals it (case-folded) or is a prefix of exactly one
    builder's model ending at a "-" (gpt-4o names gpt-4o-2024-08-06 when it is the only one); it
    names a family through that model, or by equalling a family's name."""
    folded = guess.strip().casefold()
    if not folded:
        return None, None
    exact = [b for b in builders if b.model.casefold() == folded]
    prefixed = [b for b in builders if b.model.casefold().startswith(folded + "-")]
    named = exact or (prefixed if len({b.model for b in prefixed}) == 1 else [])
    if named:
        return named[0].model, named[0].family
    families = [b.family for b in builders if b.family.casefold() == folded]
    return None, (families[0] if families else None)


def _authorship(reviews, reviewers, builders, copy_by_pk, builder_by_pk) -> dict:
    models = {b.model for b in builders}
    families = {b.family.casefold() for b in builders}
    chance_model = 1 / len(models) if models else None
    chance_family = 1 / len(families) if families else None
    by_reviewer = defaultdict(list)
    for review in reviews:
        if review.authorship_guess:
            builder = builder_by_pk[copy_by_pk[review.copy_id].builder_id]
            model, family = _guess_matches(review.authorship_guess, builders)
            by_reviewer[review.reviewer_id].append(
                (model == builder.model, family is not None and
                 family.casefold() == builder.family.casefold()))

    def block(guesses):
        n = len(guesses)
        model_right = sum(1 for m, _ in guesses if m)
        family_right = sum(1 for _, f in guesses if f)
        return {
            "guesses": n,
            "model": {**rate(model_right, n), "chance": chance_model,
                      "p_value": _above_chance(model_right, n, chance_model)},
            "family": {**rate(family_right, n), "chance": chance_family,
                       "p_value": _above_chance(family_right, n, chance_family)},
        }

    return {
        "builders": len(models), "families": len(families),
        "reviewers": [{"reviewer": r.bundle_id, **block(by_reviewer[r.pk])}
                      for r in reviewers if by_reviewer[r.pk]],
        "all": block([g for r in reviewers for g in by_reviewer[r.pk]]),
        "note": "chance is 1/k (k builders' models, or k families); p_value: exact one-sided "
                "binomial test of accuracy above chance",
    }


def _above_chance(k: int, n: int, chance: float | None) -> float | None:
    if not n or chance is None or chance >= 1:
        return None
    from scipy.stats import binomtest  # lazy, as in reports.stats

    return float(binomtest(k, n, chance, alternative="greater").pvalue)


def _reviewer_pairs(reviewers, main_reviews, copy_by_pk) -> list[dict]:
    """Each pair's catch rate (a defective copy is caught when either reviewer failed it) beside
    the pair's true-negative rate (a good copy passes only when neither failed it), over the
    copies both reviewed (main reviews: seal not failed, not their own family's copies)."""
    verdicts = defaultdict(dict)
    for review in main_reviews:
        verdicts[review.reviewer_id][review.copy_id] = review.verdict
    pairs = []
    for first, second in combinations(reviewers, 2):
        common = verdicts[first.pk].keys() & verdicts[second.pk].keys()
        caught = defective = passed = good = 0
        for copy_pk in common:
            cls = truth_class(copy_by_pk[copy_pk].truth)
            either_failed = "fail" in (verdicts[first.pk][copy_pk], verdicts[second.pk][copy_pk])
            if cls == "defective":
                defective += 1
                caught += either_failed
            elif cls == "good":
                good += 1
                passed += not either_failed
        pairs.append({"reviewers": [first.bundle_id, second.bundle_id], "copies": len(common),
                      "catch_rate": rate(caught, defective), "tnr": rate(passed, good)})
    return pairs


# --- the report ----------------------------------------------------------------------------------

def build_report(session) -> dict:
    """The complete report of a revealed session (see the module docstring); Conflict before.

    Builds hundreds of thousands of small dicts and no reference cycles: the cyclic garbage
    collector, which would rescan them all over and over as they are made, is paused meanwhile."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _build_report(session)
    finally:
        if collecting:
            gc.enable()


def _build_report(session) -> dict:
    if session.state != SessionState.REVEALED:
        raise Conflict(f"session {session.pk} is {session.state}; the report exists after the reveal")
    data = load_report_data(session)
    bundle, v = data.bundle, data.verdicts
    run = bundle.run
    builders, builder_by_pk = bundle.builders, bundle.builder_by_pk
    copies, copy_by_pk = bundle.copies, bundle.copy_by_pk
    reviewers, reviewer_by_pk = bundle.reviewers, bundle.reviewer_by_pk
    findings, corrections = bundle.findings, bundle.corrections
    judges, judge_index = data.judges.rows, data.judges.index
    groups, pseudonyms = data.judges.groups, data.judges.pseudonyms
    items, item_keys = data.items.rows, data.items.keys
    truth_versions, classes = data.items.versions, data.items.classes
    n_judges, n_items = len(judges), len(items)
    assignments, thirds = data.assignments.rows, data.assignments.thirds
    says, paired, right = v.says, v.paired, v.right
    current_truth = data.items.truths["current"]
    current_class = classes["current"]
    drafts = np.bincount(v.judge[~v.locked], minlength=n_judges)
    v_class = current_class[v.item]
    correct = [None if unknown else right_
               for unknown, right_ in zip((v_class < 0).tolist(),
                                          (v.says_defective == (v_class == 1)).tolist(), strict=True)]
    at, phase_col, value_col, kept_col = v.assignment, v.phase, v.value, v.kept
    reason_col, seconds_col, created_col, updated_col = v.reason, v.seconds_spent, v.created_at, v.updated_at
    judge_list, item_list, locked_list = v.judge.tolist(), v.item.tolist(), v.locked.tolist()
    verdict_rows = [
        {"judge": pseudonyms[judge_list[k]], "item": item_keys[item_list[k]],
         "code": at[k][3], "position": at[k][4], "phase": phase_col[k], "value": value_col[k],
         "kept": bool(kept_col[k]), "reason": reason_col[k], "seconds_spent": seconds_col[k],
         "locked": locked_list[k], "created_at": created_col[k], "updated_at": updated_col[k],
         "truth": current_truth[item_list[k]], "correct": correct[k]}
        for k in v.sort
    ]

    # --- per judge: recall and true-negative rate, per phase and truth version ---
    per_judge = {}
    for version in truth_versions:
        cls = classes[version]
        defective, good, unknown = cls == 1, cls == 0, cls < 0
        for phase in (1, 2):
            says_p = says[phase]
            has = says_p >= 0
            per_judge[(version, phase)] = (
                ((says_p == 1) & defective).sum(axis=1), (has & defective).sum(axis=1),
                ((says_p == 0) & good).sum(axis=1), (has & good).sum(axis=1),
                (has & unknown).sum(axis=1),
            )
    judge_scores = []
    for j, judge in enumerate(judges):
        entry = {"judge": judge.pseudonym, "group": groups[j], "phases": {},
                 "unlocked_drafts": int(drafts[j])}
        for phase in (1, 2):
            entry["phases"][str(phase)] = {}
            for version in truth_versions:
                caught, defective_n, passed, good_n, unknown_n = per_judge[(version, phase)]
                entry["phases"][str(phase)][version] = {
                    "recall": rate(int(caught[j]), int(defective_n[j])),
                    "tnr": rate(int(passed[j]), int(good_n[j])),
                    "unknown_truth": int(unknown_n[j]),
                }
        judge_scores.append(entry)

    # --- the phase shift, per judge and truth class: McNemar on correctness ---
    shift_counts = {}
    for version in truth_versions:
        r1, r2 = right[(version, 1)], right[(version, 2)]
        for name, code in (("defective", 1), ("good", 0)):
            pairs_of = paired & (classes[version] == code)[None, :]
            shift_counts[(version, name)] = (
                pairs_of.sum(axis=1), (pairs_of & r1).sum(axis=1), (pairs_of & r2).sum(axis=1),
                (pairs_of & ~r1 & r2).sum(axis=1), (pairs_of & r1 & ~r2).sum(axis=1))
    shift_judges = []
    for j, judge in enumerate(judges):
        if not paired[j].any():
            continue
        versions = {}
        for version in truth_versions:
            versions[version] = {}
            for name in ("defective", "good"):
                n, right1, right2, towards, away = (int(a[j]) for a in shift_counts[(version, name)])
                versions[version][name] = {
                    "pairs": n, "phase1_correct": right1, "phase2_correct": right2,
                    "towards_truth": towards, "away_from_truth": away,
                    "p_value": _mcnemar(towards, away),
                }
        shift_judges.append({"judge": judge.pseudonym, "group": groups[j], "versions": versions})

    # --- pooled effects, agreement and order effects, per group (current truth) ---
    item_clusters = [
        ("cluster", copy_by_pk[item.copy_id].cluster) if copy_by_pk[item.copy_id].cluster
        else ("item", item.key) for item in items
    ]
    defective_items = current_class == 1
    good_items = current_class == 0
    known = current_class >= 0
    group_array = np.asarray(groups)
    pooled = {}
    for group in GROUPS:
        members = np.flatnonzero(group_array == group) if n_judges else np.array([], dtype=np.int64)
        if members.size == 0:
            continue
        entry = {"judges_in_group": int(members.size)}
        paired_g = paired[members]
        r1 = right[("current", 1)][members]
        r2 = right[("current", 2)][members]
        if paired_g[:, known].any():
            entry.update(_pooled(paired_g & known[None, :], r1, r2, defective_items, good_items,
                                 item_clusters))
        else:
            entry.update({"judges": 0, "items": 0, "paired_verdicts": {"defective": 0, "good": 0},
                          "discordant": None, "effects": None, "cluster_resampled": None})
        raters = members[paired[members].any(axis=1)]
        if raters.size >= 2:
            mask = paired[raters]
            entry["agreement"] = _agreement(np.where(mask, says[1][raters], -1),
                                            np.where(mask, says[2][raters], -1))
        else:
            entry["agreement"] = None
        entry["order_effects"] = _order_effects(
            {p: says[p][members] for p in (1, 2)},
            {p: right[("current", p)][members] for p in (1, 2)}, known, thirds[members])
        pooled[group] = entry

    main = pooled.get(MAIN_GROUP) or {}
    rule_values = {name: None for name in (
        "delta_fleiss_kappa", "delta_recall", "delta_tnr", "recall_phase1", "tnr_phase1",
        "recall_phase2", "tnr_phase2", "shift_towards_truth", "shift_away_from_truth")}
    for name, estimate in (main.get("effects") or {}).items():
        rule_values[name] = estimate["value"]
    if main.get("agreement"):
        rule_values["delta_fleiss_kappa"] = main["agreement"]["delta_fleiss_kappa"]

    amendments = data.amendments
    rule_sets = [("protocol", None, (session.protocol or {}).get("decision_rules", []))]
    rule_sets += [(f"amendment {n}", a, a.decision_rules)
                  for n, a in enumerate(amendments, 1) if a.decision_rules is not None]
    decisions = []
    for n, (source, amendment, rules) in enumerate(rule_sets):
        decisions.append({
            "source": source, "in_force": n == len(rule_sets) - 1,
            "before_first_verdict": None if amendment is None else amendment.before_first_verdict,
            "rules": evaluate_rules(rules, rule_values),
        })

    # --- model reviewers ---
    reviews = bundle.reviews
    reviews_by_reviewer = defaultdict(list)
    for review in reviews:
        reviews_by_reviewer[review.reviewer_id].append(review)
    reviewer_scores = []
    main_reviews = []
    for reviewer in reviewers:
        buckets = defaultdict(list)
        seals = {"sealed": 0, "failed": 0, "absent": 0}
        for review in reviews_by_reviewer[reviewer.pk]:
            seals[review.seal] += 1
            copy = copy_by_pk[review.copy_id]
            builder = builder_by_pk[copy.builder_id]
            if review.seal == "failed":
                bucket = "seal_failed"
            elif builder.family.casefold() == reviewer.family.casefold():
                bucket = "same_family"
            else:
                bucket = "main"
                main_reviews.append(review)
            buckets[bucket].append((review.verdict, copy))
        reviewer_scores.append({
            "reviewer": reviewer.bundle_id,
            "seals": seals,
            "groups": {
                bucket: {
                    version: score((verdict, c.imported_truth if version == "imported" else c.truth)
                                   for verdict, c in pairs)
                    for version in truth_versions
                }
                for bucket, pairs in sorted(buckets.items())
            },
        })

    redactions = defaultdict(int)
    for item in items:
        copy = copy_by_pk[item.copy_id]
        text = bundle.finding_by_pk[item.finding_id].text if item.finding_id else copy.content
        redactions[builder_by_pk[copy.builder_id].bundle_id] += normalise(
            text, copy.format if not item.finding_id else "text", session.redaction_patterns
        ).redactions
    for builder in builders:
        redactions.setdefault(builder.bundle_id, 0)

    by_group_and_identity = {g: Counter() for g in GROUPS if g in groups}
    for judge, group in zip(judges, groups, strict=True):
        by_group_and_identity[group][judge.identified_by] += 1

    invitations = data.invitations
    planned_per_judge = session.items_per_judge or n_items
    sample = {
        "planned": {
            "items": n_items, "items_per_judge": planned_per_judge, "judges_invited": invitations,
            "verdicts_per_phase": invitations * planned_per_judge,
        },
        "achieved": {
            "judges_joined": n_judges,
            "judges_locked_phase1": sum(1 for j in judges if j.phase1_locked_at),
            "judges_locked_both": sum(1 for j in judges if j.phase1_locked_at and j.phase2_locked_at),
            "locked_verdicts": {"1": int((says[1] >= 0).sum()), "2": int((says[2] >= 0).sum())},
            "paired_verdicts": {
                "defective": int((paired & defective_items[None, :]).sum()),
                "good": int((paired & good_items[None, :]).sum()),
                "unknown": int((paired & ~known[None, :]).sum()),
            },
            "judges_by_group": {g: groups.count(g) for g in GROUPS if g in groups},
            "judges_by_group_and_identity": {
                g: dict(identities) for g, identities in by_group_and_identity.items()
            },
        },
        "note": "planned: what the frozen protocol and the invitations fix (guests are not "
                "planned; a guest cap is a ceiling); a power calculation the host made belongs in "
                "the preregistration text",
    }

    # item pk -> (key, copy id, builder id) as the mapping shows them
    mapped = {item.pk: (item.key, copy_by_pk[item.copy_id].bundle_id,
                        builder_by_pk[copy_by_pk[item.copy_id].builder_id].bundle_id)
              for item in items}
    return {
        "schema": REPORT_SCHEMA,
        "generated_at": _iso(timezone.now()),
        "anonymised": False,
        "protocol": {
            "frozen": session.protocol, "sha256": session.protocol_sha256,
            "frozen_at": _iso(session.opened_at),
            "decision_rules_in_force": session.decision_rules,
            "amendments": [
                {"text": a.text, "text_sha256": a.text_sha256, "amended_at": _iso(a.amended_at),
                 "before_first_verdict": a.before_first_verdict,
                 "decision_rules": a.decision_rules}
                for a in amendments
            ],
        },
        "sample": sample,
        "redactions_per_builder": dict(sorted(redactions.items())),
        "blinding_statement": BLINDING_STATEMENT,
        "run": {
            "id": run.pk, "name": run.name, "task": run.task, "format": run.format,
            "request_keys": run.request_keys, "bundle_sha256": run.bundle_sha256,
            "manifest": run.manifest, "manifest_sha256": run.manifest_sha256,
            "imported_at": _iso(run.imported_at),
        },
        "session": {
            "id": session.pk, "url_id": session.url_id, "kind": session.kind,
            "state": session.state, "created_at": _iso(session.created_at),
            "opened_at": _iso(session.opened_at), "closed_at": _iso(session.closed_at),
            "revealed_at": _iso(session.revealed_at), "items_per_judge": session.items_per_judge,
            "items": n_items, "guests_allowed": session.guests_allowed,
            "guest_cap": session.guest_cap, "reviewer_display": session.reviewer_display,
            "scorecards": session.scorecards, "draw_seed": session.draw_seed or None,
            "allocation_seed": session.allocation_seed,
        },
        "builders": [{"id": b.bundle_id, "model": b.model, "family": b.family} for b in builders],
        "copies": [
            {"id": c.bundle_id, "builder": builder_by_pk[c.builder_id].bundle_id,
             "format": c.format, "content_sha256": c.content_sha256, "truth": c.truth,
             "imported_truth": c.imported_truth, "defect": c.defect, "cluster": c.cluster or None}
            for c in copies
        ],
        "reviewers": [{"id": r.bundle_id, "model": r.model, "family": r.family}
                      for r in reviewers],
        "reviews": [
            {"reviewer": reviewer_by_pk[r.reviewer_id].bundle_id,
             "copy": copy_by_pk[r.copy_id].bundle_id, "verdict": r.verdict, "reason": r.reason,
             "authorship_guess": r.authorship_guess or None, "seal": r.seal,
             "seal_reason": r.seal_reason or None, "request_sha256": r.request_sha256 or None,
             "truth": copy_by_pk[r.copy_id].truth,
             "correct": is_correct(r.verdict, copy_by_pk[r.copy_id].truth),
             "same_family": builder_by_pk[copy_by_pk[r.copy_id].builder_id].family.casefold()
             == reviewer_by_pk[r.reviewer_id].family.casefold()}
            for r in reviews
        ],
        "findings": [
            {"id": f.bundle_id, "copy": copy_by_pk[f.copy_id].bundle_id, "text": f.text,
             "raised_by": bundle.raised_by[f.pk],
             "proposed_verdict": f.proposed_verdict, "truth": f.truth,
             "imported_truth": f.imported_truth}
            for f in findings
        ],
        "truth_corrections": [
            {"item": (c.copy or c.finding).bundle_id, "old_truth": c.old_truth,
             "new_truth": c.new_truth, "note": c.note, "corrected_at": _iso(c.corrected_at)}
            for c in corrections
        ],
        "judges": [
            {"pseudonym": j.pseudonym, "name": j.github_login or j.display_name or None,
             "display_name": j.display_name or None, "github_login": j.github_login or None,
             "admitted_as": j.admitted_as, "identified_by": j.identified_by,
             "group": judge_group(j), "status": j.status, "erased": j.erased_at is not None,
             "joined_at": _iso(j.joined_at), "removed_at": _iso(j.removed_at),
             "phase1_locked_at": _iso(j.phase1_locked_at),
             "phase2_locked_at": _iso(j.phase2_locked_at),
             "commitment": {"sha256": j.commitment_sha256, "salt": j.commitment_salt,
                            "order_seed": j.order_seed}}
            for j in judges
        ],
        "assignments": [
            {"judge": pseudonyms[judge_index[judge_pk]], "position": position, "code": code,
             "item": mapped[item_pk][0], "copy": mapped[item_pk][1], "builder": mapped[item_pk][2],
             "order_key": order_key}
            for _, judge_pk, item_pk, code, position, order_key in assignments
        ],
        "verdicts": verdict_rows,
        "scores": {
            "definitions": {
                "recall": "share of defective items (seeded_defect, tests_fail; findings: real) "
                          "judged fail (findings: real)",
                "tnr": "share of good items (known_good, tests_pass; findings: false_alarm) "
                       "judged pass (findings: false_alarm)",
                "interval": "Wilson score interval, 95%; null when there is no item to score",
                "scored": "locked verdicts only; unknown truth never scored",
                "truth_versions": "current = after corrections; imported = as the bundle gave "
                                  "it (present only when a label was corrected)",
            },
            "judges": judge_scores,
            "reviewers": reviewer_scores,
        },
        "phase_shift": {
            "definitions": {
                "pairs": "items the judge gave a locked verdict on in both phases, of known truth",
                "towards_truth": "wrong in phase 1, right in phase 2",
                "away_from_truth": "right in phase 1, wrong in phase 2",
                "p_value": "McNemar's exact two-sided test on the two discordant counts, per judge "
                           "and truth class; never pooled across judges",
                "pooled": "per group of judges, current truth: ratios over all paired verdicts; "
                          f"95% percentile intervals from {RESAMPLES} resamples of judges and "
                          "items, drawn independently (seed 0); cluster_resampled: the same "
                          "effects resampling the bundle's clusters of copies, judges fixed",
                "agreement": "Fleiss' kappa (items with the most common number of raters) and "
                             "Krippendorff's alpha (nominal) among the group's judges who locked "
                             f"both phases, on the same items in each phase; {AGREEMENT_LABEL}",
                "order_effects": "accuracy (verdicts matching truth / scored verdicts) by the third "
                                 "of the judge's drawn order the item fell in",
            },
            "judges": shift_judges,
            "pooled": pooled,
        },
        "decision_rules": {
            "evaluated_on": f"the pooled figures of the {MAIN_GROUP} group, current truth",
            "rule_sets": decisions,
        },
        "model_reviewers": {
            "pairs": _reviewer_pairs(reviewers, main_reviews, copy_by_pk),
            "authorship": _authorship(reviews, reviewers, builders, copy_by_pk, builder_by_pk),
        },
        "session_kind_note": (
            "items are findings; a verdict of real on a real finding is a catch"
            if session.kind == SessionKind.FINDINGS else
            "items are copies; a verdict of fail on a defective copy is a catch"
        ),
    }
