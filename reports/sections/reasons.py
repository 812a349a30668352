"""The "reasons" section (issue 30 item 3): a reasons session's audit of the model reviewers'
reasons, per reviewer. Null for every other kind of session.

Each judge's answer on one review is one audit. Per reviewer and phase (phase 1, given before
the copy's truth was shown, is the primary measure; phase 2 shows whether knowing the answer
changes what people call grounded):
- grounded among its correct verdicts: audits of its reviews whose verdict was right (scored as
  the run's abstain_scoring says) answered grounded, over all audits of those reviews;
- grounded among its wrong verdicts: the same over its reviews whose verdict was wrong;
- right for the right reasons: audits of reviews that were right and answered grounded, over all
  its audits (a review whose verdict cannot be scored, on a copy of unknown truth, counts in the
  denominator only: it was not shown to be right);
- the four answers counted.
Each rate is k/n with its Wilson interval, and beside it a percentile bootstrap over the reviews
audited (several judges' audits of one review are not independent: the review is the unit),
given only where the audits lie in 20 reviews or more (docs/statistics.md). Where the sample was
stratified, these are rates over the reviews sampled, not over the reviewer's whole output: the
sample's strata and the seed it was drawn with are published so anyone can draw it again.
Agreement among the judges on each review's answer (Krippendorff's alpha, nominal) is reported,
never used to decide.
"""

import numpy as np

from content.scoring import rate, scored_verdict
from content.truth import audit_stratum, is_correct
from judging.enums import SessionKind
from reports import stats
from reports.loading import ReportData
from reports.sections.common import estimate, finite
from reports.sections.pooled import BOOTSTRAP_SEED, RESAMPLES

ANSWERS = ("grounded", "partly", "not_grounded", "no_claim")
AGREEMENT_LABEL = "reported, never used to decide"

DEFINITIONS = {
    "audits": "one judge's answer on one review, locked, in the phase",
    "grounded_when_correct": "audits answered grounded among the audits of the reviewer's "
                             "reviews whose verdict was right",
    "grounded_when_wrong": "audits answered grounded among the audits of its reviews whose "
                           "verdict was wrong",
    "right_for_right_reasons": "audits of reviews that were right and answered grounded, over "
                               "all its audits (an unscored verdict counts in the denominator)",
    "interval": "Wilson score interval, 95%, taking audits as independent",
    "resampled": "percentile interval, 95%, from 2,000 bootstrap resamples (seed 0) of the "
                 "reviews audited (the unit: several judges' audits of one review are not "
                 "independent); null bounds where the audits lie in fewer than 20 reviews",
    "primary": "phase 1: given before the copy's truth was shown",
    "sample": "how the reviews were drawn: every review, or per stratum (reviewer × right, wrong "
              "or unscored verdict × truth class) at most per_stratum, with the published seed; "
              "the rates above are over the reviews sampled",
    "whole_output": "stratified samples only: the reviewer's rates over all its default-"
                    "condition reviews, by the stratified estimator (each stratum's rate weighted "
                    "by its share of the reviewer's reviews; a review grounded where most of its "
                    "audits say so) with a bootstrap within strata, not Wilson (docs/statistics"
                    ".md); withheld says why a figure or its interval is not given",
    "agreement": "Krippendorff's alpha (nominal) over the four answers, among the judges on the "
                 "reviews they audited: " + AGREEMENT_LABEL,
    "auditors": "whether each auditor was outside the matrix (judging no unrevealed session on "
                "the run, and no judge of one auditing): checked where they signed in with "
                "GitHub (their id was checked both ways at joining), declared, not checked where "
                "they joined by link",
}


def reasons(data: ReportData) -> dict | None:
    session = data.session
    if session.kind != SessionKind.REASONS:
        return None
    bundle = data.bundle
    reviews = {r.pk: r for r in bundle.reviews}
    rule = bundle.run.abstain_scoring
    item_review = [reviews[item.review_id] for item in data.items.rows]
    correctness = []
    for review in item_review:
        scored = scored_verdict(review.verdict, rule)
        correctness.append(None if scored is None else
                           is_correct(scored, bundle.copy_by_pk[review.copy_id].truth))
    v = data.verdicts
    answers = {1: [], 2: []}  # (judge row, item column, answer) of every locked audit
    for k in range(len(v.value)):
        if v.locked[k]:
            answers[v.phase[k]].append((int(v.judge[k]), int(v.item[k]), v.value[k]))
    reviewers = []
    for reviewer in bundle.reviewers:
        columns = [i for i, r in enumerate(item_review) if r.reviewer_id == reviewer.pk]
        if not columns:
            continue
        entry = {"reviewer": reviewer.bundle_id, "reviews_audited": len(columns), "phases": {}}
        stratified = (session.reasons_sample or {}).get("by") == "stratified"
        for phase in (1, 2):
            mine = [(i, value) for _, i, value in answers[phase] if i in set(columns)]
            entry["phases"][str(phase)] = _rates(mine, correctness, data.items.keys)
            if stratified:
                entry["phases"][str(phase)]["whole_output"] = _whole_output(
                    reviewer, mine, item_review, bundle)
        reviewers.append(entry)
    sample = dict(session.reasons_sample or {"by": "all"})
    if sample.get("by") == "stratified":
        sample["seed"] = session.reasons_seed  # committed by its hash in the frozen protocol
    auditors = [{"judge": judge.pseudonym, "identified_by": judge.identified_by,
                 "outside_the_matrix": "checked" if judge.github_id is not None
                 else "declared, not checked"} for judge in data.judges.rows]
    return {"definitions": dict(DEFINITIONS), "sample": sample, "reviewers": reviewers,
            "auditors": auditors,
            "agreement": {"label": AGREEMENT_LABEL,
                          **{f"phase{p}": _agreement(answers[p], len(data.judges.rows),
                                                     len(item_review)) for p in (1, 2)}}}


def _stratum(review, bundle) -> tuple[str, str]:
    """(right, wrong or unscored; truth class) of a review, as its sample drew it
    (judging.services.reasons.stratum_of, with the copy's current truth)."""
    return audit_stratum(scored_verdict(review.verdict, bundle.run.abstain_scoring),
                         bundle.copy_by_pk[review.copy_id].truth)


def _whole_output(reviewer, audits: list[tuple[int, str]], item_review: list, bundle) -> dict:
    """The reviewer's rates over all its default-condition reviews, from a stratified sample:
    the stratified estimator (reports.stats.stratified_rate, each stratum's rate weighted by its
    share of the reviewer's reviews, the interval from a bootstrap within strata). A review counts
    as grounded where most of its audits say so (a tie does not); each review is one unit."""
    population: dict = {}
    for review in bundle.default_reviews:
        if review.reviewer_id == reviewer.pk:
            label = _stratum(review, bundle)
            population[label] = population.get(label, 0) + 1
    votes: dict = {}
    for i, value in audits:
        votes.setdefault(i, []).append(value == "grounded")
    by_label: dict = {label: [0, 0] for label in population}  # grounded reviews, audited reviews
    for i, said in votes.items():
        counts = by_label[_stratum(item_review[i], bundle)]
        counts[0] += 2 * sum(said) > len(said)
        counts[1] += 1
    labels = sorted(population)
    strata = [{"correctness": c, "truth_class": t, "reviews": population[(c, t)],
               "audited": by_label[(c, t)][1], "grounded": by_label[(c, t)][0]}
              for c, t in labels]
    grounded = [(by_label[label][0], by_label[label][1], population[label]) for label in labels]
    right = [(k if label[0] == "correct" else 0, n, big)
             for label, (k, n, big) in zip(labels, grounded, strict=True)]
    result = {"strata": strata}
    for name, rows in (("grounded", grounded), ("right_for_right_reasons", right)):
        withheld = stats.stratified_rate_withheld(rows) if rows else "no estimate: no reviews"
        point, low, high = (stats.stratified_rate(rows, resamples=RESAMPLES, seed=BOOTSTRAP_SEED)
                            if rows else (float("nan"),) * 3)
        result[name] = {**estimate(point, low, high), "withheld": withheld}
    return result


def _rates(audits: list[tuple[int, str]], correctness: list, keys: list[str]) -> dict:
    """The reviewer's rates over its audits in one phase: (item column, answer) each."""
    grounded = [value == "grounded" for _, value in audits]
    right = [correctness[i] is True for i, _ in audits]
    wrong = [correctness[i] is False for i, _ in audits]
    rows = {
        "grounded_when_correct": ([g and r for g, r in zip(grounded, right, strict=True)], right),
        "grounded_when_wrong": ([g and w for g, w in zip(grounded, wrong, strict=True)], wrong),
        "right_for_right_reasons": ([g and r for g, r in zip(grounded, right, strict=True)],
                                    [True] * len(audits)),
    }
    units = [keys[i] for i, _ in audits]
    result = {"audits": len(audits),
              "answers": {a: sum(1 for _, value in audits if value == a) for a in ANSWERS}}
    resampled = _resampled([row for row in rows.values()], units)
    for (name, (hits, base)), extra in zip(rows.items(), resampled, strict=True):
        result[name] = {**rate(sum(hits), sum(base)), "resampled": extra}
    return result


def _resampled(rows: list, units: list[str]) -> list:
    """Per (hits, base) row over the same audits, the bootstrap over reviews: estimate with
    bounds only where the base lies in MIN_BOOTSTRAP_UNITS reviews or more."""
    if not units:
        return [None] * len(rows)
    numerators = np.array([[float(h) for h in hits] for hits, _ in rows])
    denominators = np.array([[float(b) for b in base] for _, base in rows])
    points, lows, highs, held = stats.clustered_ratios(
        numerators, denominators, units, resamples=RESAMPLES, seed=BOOTSTRAP_SEED)
    return [{"reviews": int(held[r]),
             **(estimate(points[r], lows[r], highs[r]) if held[r] >= stats.MIN_BOOTSTRAP_UNITS
                else estimate(points[r]))}
            for r in range(len(rows))]


def _agreement(audits: list[tuple[int, int, str]], judges: int, items: int) -> dict:
    """Krippendorff's alpha over the answers (nominal), judges × reviews; null when no review
    has two audits."""
    codes = np.full((max(judges, 1), max(items, 1)), np.nan)
    for j, i, value in audits:
        codes[j, i] = ANSWERS.index(value) if value in ANSWERS else np.nan
    pairable = int((np.sum(~np.isnan(codes), axis=0) >= 2).sum())
    alpha = finite(stats.krippendorff_alpha(codes)) if pairable else None
    return {"krippendorff_alpha": alpha, "reviews_with_two_audits_or_more": pairable}
