"""The "model_reviewers" section, and how model reviews are grouped for scoring.

A model review counts in the main group unless its seal failed (the request sent was not the
exact, hashed one), its request carried a verdict besides the copy (seal verdict_in_content: keys
sealed, verdict in content, found at import by content.content_verdicts), or it reviewed a copy of
its own family's builder; those are scored apart (scores.reviewers). Only reviews under the run's
default condition are scored here (the others are listed apart: scores.other_conditions). Pairs
are made of (reviewer, condition) cells and scored on main reviews only; every pair is kept and
labelled, and the ones a host asked for (two different models under the same condition) are marked
shown_by_default. Seals are counted per builder of the copy reviewed (seals_by_builder), every
condition. Authorship guesses measure how far blinding holds for models: accuracy against chance,
per reviewer and over all."""

from collections import defaultdict
from itertools import combinations

import numpy as np

from content.scoring import rate, scored_verdict
from content.truth import truth_class
from reports.groups import SEAL_GROUPS, SEALS
from reports.loading import Bundle, ReportData


def is_same_family(review, bundle: Bundle) -> bool:
    """The review is of a copy whose builder is of the reviewer's own family."""
    builder = bundle.builder_by_pk[bundle.copy_by_pk[review.copy_id].builder_id]
    return builder.family.casefold() == bundle.reviewer_by_pk[review.reviewer_id].family.casefold()


def review_group(review, bundle: Bundle) -> str:
    """seal_failed, verdict_in_content, same_family or main (see the module docstring): a seal
    that failed or a verdict in the request's content puts a review apart whatever the family."""
    group = SEAL_GROUPS.get(review.seal)
    if group is not None:
        return group
    return "same_family" if is_same_family(review, bundle) else "main"


def seal_counts(reviews) -> dict:
    """How many of the reviews' seals came out each way, every outcome listed."""
    counts = dict.fromkeys(SEALS, 0)
    for review in reviews:
        counts[review.seal] += 1
    return counts


def seals_by_builder(bundle: Bundle) -> list[dict]:
    """Per builder (import order), the seals of every review of its copies, every condition,
    then per condition (the default first, then by name): whether the requests that reviewed a
    builder's copies were sealed, carried a verdict, failed or were not given."""
    by_builder = {b.pk: [] for b in bundle.builders}
    for review in bundle.reviews:
        by_builder[bundle.copy_by_pk[review.copy_id].builder_id].append(review)
    default = bundle.run.default_condition
    rows = []
    for builder in bundle.builders:
        reviews = by_builder[builder.pk]
        conditions = sorted({r.condition for r in reviews}, key=lambda c: (c != default, c))
        rows.append({
            "builder": builder.bundle_id, **seal_counts(reviews),
            "by_condition": [
                {"condition": c, **seal_counts(r for r in reviews if r.condition == c)}
                for c in conditions],
        })
    return rows


def model_reviewers(data: ReportData) -> dict:
    bundle = data.bundle
    main_reviews = [r for r in bundle.reviews if review_group(r, bundle) == "main"]
    return {
        "condition": bundle.run.default_condition,
        "pairs": reviewer_pairs(reviewer_cells(bundle.reviewers, bundle.reviews,
                                               bundle.run.default_condition),
                                main_reviews, bundle.copy_by_pk, bundle.run.abstain_scoring),
        "authorship": authorship(bundle),
        "seals_by_builder": seals_by_builder(bundle),
    }


def reviewer_cells(reviewers, reviews, default_condition: str) -> list[tuple]:
    """(reviewer, condition) for each reviewer in import order: the default condition first
    (always, as every reviewer was paired before conditions existed), then each other condition it
    has a review under, sorted."""
    others = defaultdict(set)
    for review in reviews:
        if review.condition != default_condition:
            others[review.reviewer_id].add(review.condition)
    return [(reviewer, condition) for reviewer in reviewers
            for condition in [default_condition, *sorted(others[reviewer.pk])]]


def reviewer_pairs(cells, main_reviews, copy_by_pk, abstain_scoring: str) -> list[dict]:
    """Each pair of (reviewer, condition) cells (`reviewer_cells`): its catch rate (a defective
    copy is caught when either failed it) beside its true-negative rate (a good copy passes only
    when neither failed it), over the copies both cells judged (main reviews: seal neither failed
    nor carrying a verdict in content, not their own family's copies). An abstention counts as not
    failing under the not_flagged rule; under excluded a copy either abstained on is dropped from
    the pair, and the number dropped is given.

    Every pair is kept, labelled: same_model (the two reviewers' model names, case-folded, are
    one), same_condition, and shown_by_default — different models under the same condition, the
    comparison a host runs reviewers side by side for; the others (one model under two conditions,
    or different models under different conditions) are in the JSON for whoever wants them."""
    # Each cell's scored verdicts as one code per copy (0 not reviewed, 1 not failed, 2 failed,
    # 3 left out: an abstention under excluded), so each pair is counted by array operations: at
    # 20 cells × 1,500 copies the per-copy loop over 190 pairs took most of a second.
    index = {pk: i for i, pk in enumerate(copy_by_pk)}
    classes = [truth_class(c.truth) for c in copy_by_pk.values()]
    defective = np.array([cls == "defective" for cls in classes], dtype=bool)
    good = np.array([cls == "good" for cls in classes], dtype=bool)
    codes = {}
    for review in main_reviews:
        cell = (review.reviewer_id, review.condition)
        if cell not in codes:
            codes[cell] = np.zeros(len(index), dtype=np.int8)
        verdict = scored_verdict(review.verdict, abstain_scoring)
        codes[cell][index[review.copy_id]] = 3 if verdict is None else 2 if verdict == "fail" else 1
    nothing = np.zeros(len(index), dtype=np.int8)
    pairs = []
    for (first, first_condition), (second, second_condition) in combinations(cells, 2):
        a = codes.get((first.pk, first_condition), nothing)
        b = codes.get((second.pk, second_condition), nothing)
        reviewed = (a > 0) & (b > 0)
        common = reviewed & (a != 3) & (b != 3)
        either_failed = (a == 2) | (b == 2)
        copies = int(np.count_nonzero(common))
        defective_common, good_common = common & defective, common & good
        caught = int(np.count_nonzero(defective_common & either_failed))
        passed = int(np.count_nonzero(good_common & ~either_failed))
        same_model = first.model.casefold() == second.model.casefold()
        same_condition = first_condition == second_condition
        pairs.append({"reviewers": [first.bundle_id, second.bundle_id],
                      "conditions": [first_condition, second_condition],
                      "same_model": same_model, "same_condition": same_condition,
                      "shown_by_default": same_condition and not same_model,
                      "copies": copies,
                      "dropped_abstentions": int(np.count_nonzero(reviewed)) - copies,
                      "catch_rate": rate(caught, int(np.count_nonzero(defective_common))),
                      "tnr": rate(passed, int(np.count_nonzero(good_common)))})
    return pairs


def guess_matches(guess: str, builders) -> tuple[str | None, str | None]:
    """(model, family) a reviewer's authorship guess names, or None where it names none.

    A guess names a builder's model when it equals it (case-folded) or is a prefix of exactly one
    builder's model ending at a "-" (gpt-4o names gpt-4o-2024-08-06 when it is the only one); it
    names a family through that model, or by equalling a family's name. Models, like families,
    are one model however their letters are cased (a bundle may spell one model two ways)."""
    folded = guess.strip().casefold()
    if not folded:
        return None, None
    exact = [b for b in builders if b.model.casefold() == folded]
    prefixed = [b for b in builders if b.model.casefold().startswith(folded + "-")]
    named = exact or (prefixed if len({b.model.casefold() for b in prefixed}) == 1 else [])
    if named:
        return named[0].model, named[0].family
    families = [b.family for b in builders if b.family.casefold() == folded]
    return None, (families[0] if families else None)


def authorship(bundle: Bundle) -> dict:
    """How often reviewers' authorship guesses named the builder's model and family, beside
    chance (1/k of k models or families); default-condition reviews only."""
    builders, reviewers = bundle.builders, bundle.reviewers
    models = {b.model.casefold() for b in builders}
    families = {b.family.casefold() for b in builders}
    chance_model = 1 / len(models) if models else None
    chance_family = 1 / len(families) if families else None
    by_reviewer = defaultdict(list)
    for review in bundle.default_reviews:
        if review.authorship_guess:
            builder = bundle.builder_by_pk[bundle.copy_by_pk[review.copy_id].builder_id]
            model, family = guess_matches(review.authorship_guess, builders)
            by_reviewer[review.reviewer_id].append(
                (model is not None and model.casefold() == builder.model.casefold(),
                 family is not None and
                 family.casefold() == builder.family.casefold()))

    def block(guesses):
        n = len(guesses)
        model_right = sum(1 for m, _ in guesses if m)
        family_right = sum(1 for _, f in guesses if f)
        return {
            "guesses": n,
            "model": {**rate(model_right, n), "chance": chance_model,
                      "p_value": above_chance(model_right, n, chance_model)},
            "family": {**rate(family_right, n), "chance": chance_family,
                       "p_value": above_chance(family_right, n, chance_family)},
        }

    return {
        "builders": len(models), "families": len(families),
        "reviewers": [{"reviewer": r.bundle_id, **block(by_reviewer[r.pk])}
                      for r in reviewers if by_reviewer[r.pk]],
        "all": block([g for r in reviewers for g in by_reviewer[r.pk]]),
        "note": "chance is 1/k (k builders' models, or k families); p_value: exact one-sided "
                "binomial test of accuracy above chance",
    }


def above_chance(k: int, n: int, chance: float | None) -> float | None:
    """Exact one-sided binomial p of k right of n above chance; None where there is no test."""
    if not n or chance is None or chance >= 1:
        return None
    from scipy.stats import binomtest  # noqa: PLC0415 - lazy: as in reports.stats, keeps scipy unloaded

    return float(binomtest(k, n, chance, alternative="greater").pvalue)
