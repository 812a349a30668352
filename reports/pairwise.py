"""Statistics of a pairs session (issue 31): pure functions over records, numbers and numpy arrays.

A pairs session shows a judge two copies of one task by two builders, side by side, and asks which
is better: left, right, tie (both fine) or both bad. What the report needs from those answers:

- ``bradley_terry``: the builders' strengths on the log scale, fitted by Hunter's MM iterations
  with a weak prior (``PRIOR_GAMES``), ties as half a win each, normalised to mean 0;
- ``bradley_terry_bootstrap``: the same with percentile intervals over tasks (or tasks and judges,
  crossed), every pair of builders' difference with a sign-flip p, Holm across the pairs, and
  which pairs are apart, under the product's rule of when a bootstrap is allowed
  (docs/statistics.md: ``stats.MIN_BOOTSTRAP_UNITS``, ``stats.MIN_JUDGES_RESAMPLED``);
- ``position_bias``: the left share per judge and a test across judges with the judge as the unit;
- ``order_inconsistency``: how often a model reviewer shown one pair both ways prefers a different
  copy with the order;
- ``pairwise_accuracy``: the share of answers preferring the copy that is right by truth;
- ``style_fit``: one penalised logistic regression of "left preferred" on position, strength,
  length and correctness (LMArena's style control, with truth beside it).

Nothing here touches Django or the database; scipy is not needed. Turning querysets into the
records these functions take belongs in reports/loading.py. docs/statistics.md ("Pairs") defines
every quantity.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Sequence
from itertools import combinations
from typing import Any

import numpy as np

from content.scoring import rate
from content.stdlib_stats import check_probability
from reports import stats

__all__ = [
    "BT_MAX_ITERATIONS",
    "BT_TOLERANCE",
    "MIN_STYLE_ANSWERS",
    "PRIOR_GAMES",
    "STYLE_RIDGE",
    "VERDICTS",
    "bradley_terry",
    "bradley_terry_bootstrap",
    "order_inconsistency",
    "pairwise_accuracy",
    "phase_shift",
    "position_bias",
    "preference_records",
    "style_fit",
]

# The weak prior of the Bradley–Terry fit: each builder plays PRIOR_GAMES virtual games against a
# virtual builder of strength 0 (the log scale's origin), winning half of them. Without it a
# builder that never wins has strength −∞ (and one that never loses +∞), and the MM iterations
# never stop; with it every strength is finite. Two games (one won, one lost) weigh as much as two
# real comparisons: against a builder's tens or hundreds of comparisons a small pull to the middle.
# (Without a prior the maximum exists only under Ford's condition, that for every split of the
# builders in two some builder of each side beat one of the other: L. R. Ford Jr. (1957), "Solution
# of a ranking problem from binary comparisons", Amer. Math. Monthly 64:28-33.) In the likelihood
# it is the penalty Σ_i g/2·[log(1 + e^{θ_i}) + log(1 + e^{−θ_i})] on the log strengths θ_i, whose
# curvature (at least g/4 per builder near 0) also makes the maximum unique.
PRIOR_GAMES = 2.0
# The MM iterations stop when no log strength moves by more than this in one step (or after
# BT_MAX_ITERATIONS, which the fit reports as not converged).
BT_TOLERANCE = 1e-11
BT_MAX_ITERATIONS = 100_000

# The answers of a pairs session, in the side terms a judge sees; a model reviewer's are in the
# order it was shown them (first, second, tie, both_bad).
VERDICTS = ("left", "right", "tie", "both_bad")
ORDER_VERDICTS = ("first", "second", "tie", "both_bad")

# The style fit's ridge: λ/2·‖β‖² on every coefficient (the intercept included) added to the
# negative log-likelihood, so that separable data (a judge who always prefers the right copy)
# gives finite coefficients; at 1e-4 it moves a fit on 40 or more answers by far less than its
# standard error.
STYLE_RIDGE = 1e-4
# Fewer decisive answers than this and the style fit is refused: four coefficients need about ten
# answers each (the events-per-variable rule of thumb: P. Peduzzi et al. (1996), J Clin Epidemiol
# 49:1373-1379) before their Wald intervals mean anything.
MIN_STYLE_ANSWERS = 40
STYLE_TERMS = ("position", "strength", "length", "correct")


# --- validation helpers -------------------------------------------------------------------------


def _check_count(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)


def _check_prior(prior: Any) -> float:
    if isinstance(prior, bool) or not isinstance(prior, numbers.Real) or not prior > 0 \
            or not math.isfinite(prior):
        raise ValueError(f"prior (virtual games per builder) must be a positive number, got {prior!r}")
    return float(prior)


def _builder_index(builders: Sequence[Hashable]) -> dict:
    builders = list(builders)
    if len(builders) < 2:
        raise ValueError(f"a Bradley–Terry fit needs at least two builders, got {len(builders)}")
    index = {b: i for i, b in enumerate(builders)}
    if len(index) != len(builders):
        raise ValueError("builders must be distinct")
    return index


def _check_score(score: Any, where: str) -> float:
    if isinstance(score, bool) or not isinstance(score, numbers.Real) or score not in (0, 0.5, 1):
        raise ValueError(f"{where}: score_a must be 1 (a won), 0.5 (a tie) or 0 (b won), "
                         f"got {score!r}")
    return float(score)


def _check_pair(a: Any, b: Any, index: dict, where: str) -> tuple[int, int]:
    if a not in index or b not in index:
        unknown = a if a not in index else b
        raise ValueError(f"{where}: builder {unknown!r} is not among the builders")
    if a == b:
        raise ValueError(f"{where}: a builder compared with itself ({a!r})")
    return index[a], index[b]


# --- Bradley–Terry ------------------------------------------------------------------------------


def _mm(games: np.ndarray, scores: np.ndarray, prior: float, *, tolerance: float = BT_TOLERANCE,
        max_iterations: int = BT_MAX_ITERATIONS) -> tuple[np.ndarray, int, bool]:
    """Hunter's MM iterations, batched: games[r] is a K × K symmetric matrix of comparisons,
    scores[r] a length-K vector of each builder's wins (ties as halves). Returns (θ, R × K log
    strengths with the virtual opponent at 0, not yet normalised; iterations; converged).

    Each step, for every builder i at once (Hunter's step for Bradley–Terry, with the virtual
    opponent of strength 1 playing g games, half won, against each builder)::

        π_i ← (W_i + g/2) / ( Σ_j n_ij / (π_i + π_j)  +  g / (π_i + 1) )

    which never lowers the penalised likelihood; then every θ_i of a fit is shifted by the one
    constant that maximises the penalised likelihood along that direction (``_centre``). The
    comparisons' likelihood does not change with a common shift, only the prior's does, so alone
    the MM steps move the fit's location at the prior's pace (thousands of steps for a prior of 2
    games beside a few hundred comparisons); the shift settles it exactly each step. Both steps
    never lower the penalised likelihood, which is strictly concave in θ = log π, so the fixed
    point is its unique maximum."""
    pi = np.ones(scores.shape)
    numerator = scores + prior / 2.0
    iterations, converged = 0, False
    for iterations in range(1, max_iterations + 1):  # noqa: B007 - the count is returned
        denominator = np.einsum("rij,rij->ri", games, 1.0 / (pi[:, :, None] + pi[:, None, :])) \
            + prior / (pi + 1.0)
        theta = _centre(np.log(numerator / denominator))
        step = np.max(np.abs(theta - np.log(pi)))
        pi = np.exp(theta)
        if step < tolerance:
            converged = True
            break
    return np.log(pi), iterations, converged


def _centre(theta: np.ndarray) -> np.ndarray:
    """θ + c with c the shift that maximises the penalised likelihood along (1, …, 1): the root
    of Σ_i σ(θ_i + c) = K/2 (the prior's half-won virtual games), σ the logistic function, by
    Newton's method, each step held within ±1 (the sum is increasing in c, so the root is unique
    and the damped steps reach it). It does not depend on the number of virtual games, only on
    their being half won. Rows of θ (resamples) are shifted apart."""
    c = np.zeros((theta.shape[0], 1))
    half = theta.shape[1] / 2.0
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(theta + c)))
        slope = np.maximum((p * (1.0 - p)).sum(axis=1, keepdims=True), 1e-300)
        step = np.clip((p.sum(axis=1, keepdims=True) - half) / slope, -1.0, 1.0)
        c -= step
        if np.max(np.abs(step)) < 1e-15:
            break
    return theta + c


def _tally(records: Sequence, index: dict, *, extra: int = 0):
    """The records as (i, j, score of i) arrays, with the extra fields of each record kept."""
    rows = []
    for n, record in enumerate(records):
        try:
            a, b, score, *rest = record
        except (TypeError, ValueError):
            raise ValueError(f"record {n} must be (a, b, score_a{', unit, judge' if extra else ''}), "
                             f"got {record!r}") from None
        if len(rest) != extra:
            raise ValueError(f"record {n} must have {3 + extra} fields, got {len(rest) + 3}")
        where = f"record {n}"
        i, j = _check_pair(a, b, index, where)
        rows.append((i, j, _check_score(score, where), *rest))
    return rows


def _matrices(rows, k: int) -> tuple[np.ndarray, np.ndarray]:
    games = np.zeros((k, k))
    scores = np.zeros(k)
    for i, j, score, *_ in rows:
        games[i, j] += 1
        games[j, i] += 1
        scores[i] += score
        scores[j] += 1.0 - score
    return games, scores


def bradley_terry(records: Sequence[tuple[Hashable, Hashable, float]],
                  builders: Sequence[Hashable], *, prior: float = PRIOR_GAMES) -> dict:
    """The builders' Bradley–Terry strengths from side-by-side preferences.

    ``records`` are (a, b, score_a): builder a's copy compared with builder b's on one task by one
    judge, score_a 1 where a's was preferred, 0 where b's was, 0.5 for a tie (both fine): a tie is
    half a win for each (not a tie parameter as in Davidson's model), as Chatbot Arena's ranking
    counts ties. A ``both_bad``
    answer says nothing of which is better and is left out by the caller (and counted apart).

    The model: P(a preferred to b) = π_a / (π_a + π_b), θ = log π. Fitted by Hunter's MM
    iterations (``_mm``) to the maximum of the likelihood penalised by the weak prior
    (``PRIOR_GAMES``: each builder plays ``prior`` virtual games against a virtual builder of
    θ = 0, half of them won), so that a builder that never wins, or never loses, has a finite
    strength. The strengths are then shifted to mean 0 over the builders (only differences are
    identified by the comparisons; the prior fixes the scale's origin, the shift makes it the
    builders' average).

    Returns {"builders", "strengths" (θ in builder order, mean 0), "comparisons" (games per
    builder), "wins" (decisive wins), "ties", "losses", "score" (wins + ties/2), "prior_games",
    "iterations", "converged"}.

    Source: R. A. Bradley & M. E. Terry (1952), "Rank analysis of incomplete block designs I",
    Biometrika 39:324-345; D. R. Hunter (2004), "MM algorithms for generalized Bradley–Terry
    models", Annals of Statistics 32:384-406 (the MM step); W.-L. Chiang et al. (2024), "Chatbot
    Arena: an open platform for evaluating LLMs by human preference", ICML (ties, bootstrap
    intervals of the strengths).

    Raises ValueError for fewer than two builders, repeated builders, a record that is not
    (a, b, score_a) with a ≠ b among the builders and score_a in {1, 0.5, 0}, or a prior that is
    not a positive number.
    """
    index = _builder_index(builders)
    prior = _check_prior(prior)
    rows = _tally(records, index)
    k = len(index)
    games, scores = _matrices(rows, k)
    theta, iterations, converged = _mm(games[None], scores[None], prior)
    theta = theta[0] - theta[0].mean()
    wins, ties = np.zeros(k, dtype=int), np.zeros(k, dtype=int)
    for i, j, score, *_ in rows:
        if score == 0.5:
            ties[i] += 1
            ties[j] += 1
        else:
            wins[i if score == 1 else j] += 1
    comparisons = games.sum(axis=1).astype(int)
    return {
        "builders": list(builders),
        "strengths": [float(t) for t in theta],
        "comparisons": comparisons.tolist(),
        "wins": wins.tolist(),
        "ties": ties.tolist(),
        "losses": (comparisons - wins - ties).tolist(),
        "score": [float(s) for s in scores],
        "prior_games": prior,
        "iterations": iterations,
        "converged": converged,
    }


# Resamples are fitted this many at a time (their MM iterations run together, batched).
_BOOTSTRAP_BLOCK = 250


def bradley_terry_bootstrap(
    records: Sequence[tuple[Hashable, Hashable, float, Hashable, Hashable]],
    builders: Sequence[Hashable],
    *,
    prior: float = PRIOR_GAMES,
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
    alpha: float = 0.05,
    flips: int = 20000,
) -> dict:
    """``bradley_terry`` with intervals for every strength and every pairwise difference.

    ``records`` are (a, b, score_a, unit, judge): as ``bradley_terry``'s, with the resampling unit
    (the task, or its declared cluster: a judge who sees several pairs of one task sees them as
    one unit, so the task, not the pair, is resampled) and who judged (a judge id; a model
    reviewer's records name the reviewer, or None throughout).

    When a bootstrap is given, by the product's rule (docs/statistics.md, reports.stats):
    - fewer than ``stats.MIN_BOOTSTRAP_UNITS`` units: no interval at all (``no_interval`` says
      why); the p-values stand alone;
    - otherwise, with ``stats.MIN_JUDGES_RESAMPLED`` judges or more, a crossed two-way bootstrap:
      judges and units drawn independently (``stats.judges_clusters_weights``, Owen 2007), each
      record weighted by its judge's times drawn × its unit's times drawn;
    - with fewer judges (a model reviewer, a handful of people), units only
      (``stats.cluster_weights``), the judges held fixed: ``conditional_on_judges`` is then true
      where there are several judges, as the builders section says it.
    Every resample is refitted (``_mm``, ``resamples`` of them, ``seed``) and normalised to mean 0;
    the intervals are percentile intervals (``stats.percentile_interval``) of each strength and of
    each difference θ_a − θ_b over the resamples. A builder with no comparison in a resample is
    placed by the prior alone; its interval then shows it.

    The p-value of each pair (a, b) is a sign-flip test (``stats.sign_flip_p``: exact up to 16
    units, ``flips`` random flips beyond, with ``seed``) on their direct comparisons: for each
    unit, Σ (score_a − 1/2) over the records of a against b in it. Under "a and b equally
    strong" (θ_a = θ_b, so P(a preferred) = 1/2 in every direct comparison, the sides being drawn
    at random) each unit's sum is symmetric about 0, whatever the judges' position bias or the
    other builders; the test is valid at any number of units, where the bootstrap is not. It uses
    the direct comparisons only, not the indirect evidence the fit carries. Null where a and b
    never met. Holm's adjustment (``stats.holm_adjust``) runs across all pairs, as ``builders_compared`` does.

    A pair is ``apart`` where its Holm-adjusted p is below ``alpha`` and its interval excludes 0;
    where no interval is valid (fewer than 20 units) on the test alone, as the product's rule says
    (``apart_by`` names which).

    Returns the keys of ``bradley_terry`` and {"units", "judges", "resampled" ("units", "judges
    and units" or None), "conditional_on_judges", "no_interval" (the reason, or None),
    "resamples", "seed", "confidence", "alpha", "intervals" (per builder [low, high], or None),
    "bootstrap_converged" (whether every resample's fit converged; None without a bootstrap),
    "differences": one dict per pair (a before b in builder order) with "builders" [a, b],
    "difference" θ_a − θ_b, "low", "high", "direct" (comparisons of a against b), "direct_units",
    "p_value", "test" ("sign-flip"), "p_holm", "apart", "apart_by"}.

    Raises as ``bradley_terry``, and for a record without its unit and judge, resamples or flips
    < 1, a negative seed, or confidence or alpha outside (0, 1).
    """
    index = _builder_index(builders)
    prior = _check_prior(prior)
    resamples = _check_count("resamples", resamples)
    if resamples < 1:
        raise ValueError("resamples must be at least 1")
    seed = _check_count("seed", seed)
    if _check_count("flips", flips) < 1:
        raise ValueError("flips must be at least 1")
    confidence = check_probability("confidence", confidence)
    alpha = check_probability("alpha", alpha)
    rows = _tally(records, index, extra=2)
    result = bradley_terry([(builders[i], builders[j], s) for i, j, s, *_ in rows], builders,
                           prior=prior)
    k = len(index)
    unit_number: dict = {}
    judge_number: dict = {}
    for *_, unit, judge in rows:
        unit_number.setdefault(unit, len(unit_number))
        judge_number.setdefault(judge, len(judge_number))
    n_units, n_judges = len(unit_number), len(judge_number)
    two_way = n_judges >= stats.MIN_JUDGES_RESAMPLED
    result.update({
        "units": n_units, "judges": n_judges, "resampled": None,
        "conditional_on_judges": (not two_way) and n_judges > 1,
        "no_interval": None, "resamples": resamples, "seed": seed, "confidence": confidence,
        "alpha": alpha, "intervals": None, "bootstrap_converged": None,
    })
    pairs = list(combinations(range(k), 2))
    theta = np.asarray(result["strengths"])
    differences = [{"builders": [builders[a], builders[b]], "difference": float(theta[a] - theta[b]),
                    "low": None, "high": None} for a, b in pairs]
    _direct_tests(rows, pairs, differences, seed, flips)

    if n_units < stats.MIN_BOOTSTRAP_UNITS:
        result["no_interval"] = (
            f"{n_units} unit{'s' if n_units != 1 else ''}, fewer than {stats.MIN_BOOTSTRAP_UNITS}: "
            "a bootstrap over so few units is too narrow (docs/statistics.md); the sign-flip "
            "p-values stand alone")
    elif rows:
        result["resampled"] = "judges and units" if two_way else "units"
        draws, result["bootstrap_converged"] = _resampled_strengths(
            rows, k, unit_number, judge_number, two_way, prior, resamples=resamples, seed=seed)
        result["intervals"] = [list(stats.percentile_interval(draws[:, i], confidence))
                               for i in range(k)]
        for (a, b), entry in zip(pairs, differences, strict=True):
            entry["low"], entry["high"] = stats.percentile_interval(draws[:, a] - draws[:, b],
                                                                    confidence)
    for entry, adjusted in zip(differences, stats.holm_adjust([d["p_value"] for d in differences]),
                               strict=True):
        entry["p_holm"] = adjusted
        significant = adjusted is not None and adjusted < alpha
        if entry["low"] is None:
            entry["apart"], entry["apart_by"] = significant, "test alone"
        else:
            excludes = entry["low"] > 0 or entry["high"] < 0
            entry["apart"], entry["apart_by"] = significant and excludes, "test and interval"
    result["differences"] = differences
    return result


def _direct_tests(rows, pairs, differences, seed: int, flips: int) -> None:
    """Each pair's direct comparisons, per unit, and their sign-flip p (in place)."""
    per_pair: dict[tuple[int, int], dict] = {pair: {} for pair in pairs}
    for i, j, score, unit, _ in rows:
        a, b, s = (i, j, score) if i < j else (j, i, 1.0 - score)
        sums = per_pair[(a, b)]
        sums[unit] = sums.get(unit, 0.0) + (s - 0.5)
    counts: dict[tuple[int, int], int] = {}
    for i, j, *_ in rows:
        pair = (min(i, j), max(i, j))
        counts[pair] = counts.get(pair, 0) + 1
    for pair, entry in zip(pairs, differences, strict=True):
        sums = per_pair[pair]
        entry["direct"] = counts.get(pair, 0)
        entry["direct_units"] = len(sums)
        entry["p_value"] = (stats.sign_flip_p(list(sums.values()), resamples=flips, seed=seed)
                             if sums else None)
        entry["test"] = "sign-flip" if sums else None


def _resampled_strengths(rows, k: int, unit_number: dict, judge_number: dict, two_way: bool,
                         prior: float, *, resamples: int, seed: int) -> tuple[np.ndarray, bool]:
    """R × K normalised strengths, one row per resample, and whether every fit converged."""
    # Cells: one per (unit, judge, ordered builder pair), holding its games and a's score.
    cells: dict[tuple[int, int, int, int], list[float]] = {}
    for i, j, score, unit, judge in rows:
        a, b, s = (i, j, score) if i < j else (j, i, 1.0 - score)
        cell = cells.setdefault((unit_number[unit], judge_number[judge], a, b), [0.0, 0.0])
        cell[0] += 1.0
        cell[1] += s
    keys = list(cells)
    cell_units = np.asarray([key[0] for key in keys])
    cell_judges = np.asarray([key[1] for key in keys])
    cell_a = np.asarray([key[2] for key in keys])
    cell_b = np.asarray([key[3] for key in keys])
    cell_games = np.asarray([cells[key][0] for key in keys])
    cell_score = np.asarray([cells[key][1] for key in keys])
    units = list(range(len(unit_number)))
    if two_way:
        judge_w, unit_w = stats.judges_clusters_weights(len(judge_number), units,
                                                        resamples=resamples, seed=seed)
    else:
        unit_w = stats.cluster_weights(units, resamples=resamples, seed=seed)
        judge_w = np.ones((resamples, 1))
        cell_judges = np.zeros_like(cell_judges)
    # Each cell's games and a's score summed into the K × K games and the K wins of a resample,
    # through indicator matrices (cells × K² and cells × K).
    n_cells = len(keys)
    to_games = np.zeros((n_cells, k * k))
    to_games[np.arange(n_cells), cell_a * k + cell_b] = 1.0
    to_games[np.arange(n_cells), cell_b * k + cell_a] = 1.0
    to_a, to_b = np.eye(k)[cell_a], np.eye(k)[cell_b]
    out = np.empty((resamples, k))
    all_converged = True
    for start in range(0, resamples, _BOOTSTRAP_BLOCK):
        stop = min(resamples, start + _BOOTSTRAP_BLOCK)
        weight = judge_w[start:stop][:, cell_judges] * unit_w[start:stop][:, cell_units]
        games = ((weight * cell_games) @ to_games).reshape(stop - start, k, k)
        scores = (weight * cell_score) @ to_a + (weight * (cell_games - cell_score)) @ to_b
        theta, _, converged = _mm(games, scores, prior)
        all_converged = all_converged and converged
        out[start:stop] = theta - theta.mean(axis=1, keepdims=True)
    return out, all_converged


# --- answers to records -------------------------------------------------------------------------

# An answer's score for the builder shown left (or first): left and first win, right and second
# lose, a tie is half; both_bad is None (no preference, left out of the fit).
_SCORE_OF_ANSWER = {"left": 1.0, "first": 1.0, "right": 0.0, "second": 0.0, "tie": 0.5,
                    "both_bad": None}


def preference_records(rows: Sequence[tuple[Hashable, Hashable, str, Hashable, Hashable]]) -> dict:
    """Answers as ``bradley_terry_bootstrap``'s records, both_bad set apart.

    ``rows`` are (builder shown left, builder shown right, answer, unit, judge), the answer one of
    left, right, tie, both_bad (a judge's) or first, second, tie, both_bad (a model reviewer's, the
    builders then given in the order shown). Returns {"records": [(left builder, right builder,
    score of the left one, unit, judge)] for every answer but both_bad, "both_bad": how many were
    both_bad, "both_bad_by_pair": {(a, b) with a before b as first met: count}}.

    Raises ValueError for an answer outside both vocabularies or a row that is not five fields.
    """
    records, by_pair = [], {}
    for m, row in enumerate(rows):
        try:
            left, right, answer, unit, judge = row
        except (TypeError, ValueError):
            raise ValueError(f"row {m} must be (left builder, right builder, answer, unit, judge), "
                             f"got {row!r}") from None
        if answer not in _SCORE_OF_ANSWER:
            raise ValueError(f"row {m}: answer {answer!r} is not one of {tuple(_SCORE_OF_ANSWER)}")
        score = _SCORE_OF_ANSWER[answer]
        if score is None:
            key = (right, left) if (right, left) in by_pair else (left, right)
            by_pair[key] = by_pair.get(key, 0) + 1
        else:
            records.append((left, right, score, unit, judge))
    return {"records": records, "both_bad": sum(by_pair.values()), "both_bad_by_pair": by_pair}


# --- position bias ------------------------------------------------------------------------------


def position_bias(judges: Sequence[tuple[Hashable, int, int]], *, seed: int = 0,
                  flips: int = 20000, resamples: int = 2000, confidence: float = 0.95) -> dict:
    """Whether judges prefer the left copy, with the judge as the unit.

    ``judges`` are (judge, left, decisive): each judge's count of "left" answers and of left-or-
    right answers (ties and both_bad say nothing of a side and are left out). A judge with no
    decisive answer has no share and is counted in ``without_decisive``.

    Each judge's left share s_j = left_j / decisive_j. Across judges, the test of "the mean share
    is 1/2" is an exact sign-flip test on s_j − 1/2 (``stats.sign_flip_p``: every assignment up
    to 16 judges, ``flips`` random ones with ``seed`` beyond): under "no side is favoured"
    with sides drawn at random each judge's share is symmetric about 1/2, which is all the test
    needs. It is chosen over a one-sample t-test because shares are bounded and, with a few
    judges, far from normal; and over a pooled binomial because answers of one judge are not
    independent: a pooled test lets one judge who answers much, with a habit of their own, carry
    the whole group (each judge counts once here, however many answers they gave).

    The mean share's interval is a percentile bootstrap over the judges (``resamples`` draws,
    ``seed``), by the product's rule only from ``stats.MIN_BOOTSTRAP_UNITS`` judges with a share;
    below, none, and ``no_interval`` says why.

    Returns {"judges": [{"judge", "left", "decisive", "share"}], "n_judges" (with a share),
    "without_decisive", "mean_share" (the unweighted mean of the shares, the test's statistic;
    None with no judge), "low", "high" (its interval, or None), "no_interval", "p_value" (None
    with no judge), "test" ("sign-flip across judges"),
    "pooled" (Σ left / Σ decisive as a Wilson k/n, for reference), "pooled_p" (the exact binomial
    test of the pooled share, for reference only: it treats answers as independent)}.

    Raises ValueError for a row that is not (judge, left, decisive) with 0 ≤ left ≤ decisive whole
    numbers, or a judge named twice.
    """
    seed = _check_count("seed", seed)
    resamples = _check_count("resamples", resamples)
    if resamples < 1 or _check_count("flips", flips) < 1:
        raise ValueError("resamples and flips must be at least 1")
    confidence = check_probability("confidence", confidence)
    entries, seen = [], set()
    for n, row in enumerate(judges):
        try:
            judge, left, decisive = row
        except (TypeError, ValueError):
            raise ValueError(f"row {n} must be (judge, left, decisive), got {row!r}") from None
        left = _check_count(f"row {n}: left", left)
        decisive = _check_count(f"row {n}: decisive", decisive)
        if left > decisive:
            raise ValueError(f"row {n}: left ({left}) exceeds the decisive answers ({decisive})")
        if judge in seen:
            raise ValueError(f"judge {judge!r} is named twice")
        seen.add(judge)
        entries.append({"judge": judge, "left": left, "decisive": decisive,
                        "share": left / decisive if decisive else None})
    shares = [e["share"] for e in entries if e["share"] is not None]
    total_left = sum(e["left"] for e in entries)
    total = sum(e["decisive"] for e in entries)
    pooled_p = None
    if total:
        from scipy.stats import binomtest  # noqa: PLC0415 - lazy, as reports.stats does

        pooled_p = float(binomtest(total_left, total, 0.5).pvalue)
    low = high = None
    if len(shares) < stats.MIN_BOOTSTRAP_UNITS:
        no_interval = (f"{len(shares)} judge{'s' if len(shares) != 1 else ''} with a decisive "
                       f"answer, fewer than {stats.MIN_BOOTSTRAP_UNITS}: no interval "
                       "(docs/statistics.md); the sign-flip p stands alone")
    else:
        no_interval = None
        values = np.asarray(shares)
        drawn = np.random.default_rng(seed).integers(0, values.size, size=(resamples, values.size))
        low, high = stats.percentile_interval(values[drawn].mean(axis=1), confidence)
    return {
        "judges": entries,
        "n_judges": len(shares),
        "without_decisive": len(entries) - len(shares),
        "mean_share": float(np.mean(shares)) if shares else None,
        "low": low, "high": high, "no_interval": no_interval,
        "p_value": (stats.sign_flip_p([s - 0.5 for s in shares], resamples=flips, seed=seed)
                    if shares else None),
        "test": "sign-flip across judges",
        "pooled": rate(total_left, total),
        "pooled_p": pooled_p,
    }


# --- a reviewer shown both orders ---------------------------------------------------------------


def order_inconsistency(pairs: Sequence[tuple[str, str]]) -> dict:
    """How often a model reviewer's preferred copy changes with the order it was shown them in.

    ``pairs`` are (verdict in order 1, verdict in order 2) for one pair of copies X, Y shown first
    as X then Y, then as Y then X, each verdict one of first, second, tie, both_bad. The preferred
    copy is X for "first" in order 1 and for "second" in order 2. So (first, second) and
    (second, first) keep the preferred copy; (first, first) and (second, second) change it: the
    reviewer preferred whichever copy came first (or second), not a copy — *inconsistent*.
    (tie, tie) and (both_bad, both_bad) are consistent; a decisive verdict against a tie or
    both_bad, or tie against both_bad, is *partly* consistent, counted apart.

    Returns {"pairs" n, "inconsistent" (k/n with Wilson over all pairs), "inconsistent_decisive"
    (the same over the pairs decisive in both orders), "partly" (count), "consistent" (count),
    "first_in_both" (count of (first, first)), "second_in_both" (of (second, second)),
    "first_share" (first among the decisive verdicts of both orders, k/n with Wilson: the
    reviewer's own position bias on these pairs)}.

    Raises ValueError for a pair that is not two of the four verdicts.
    """
    counts = dict.fromkeys(("consistent", "partly", "first_in_both", "second_in_both"), 0)
    n = decisive_both = first = decisive = 0
    for m, pair in enumerate(pairs):
        try:
            one, two = pair
        except (TypeError, ValueError):
            raise ValueError(f"pair {m} must be (verdict in order 1, verdict in order 2), "
                             f"got {pair!r}") from None
        for verdict in (one, two):
            if verdict not in ORDER_VERDICTS:
                raise ValueError(f"pair {m}: verdict {verdict!r} is not one of {ORDER_VERDICTS}")
            if verdict in ("first", "second"):
                decisive += 1
                first += verdict == "first"
        n += 1
        both_decisive = one in ("first", "second") and two in ("first", "second")
        decisive_both += both_decisive
        if both_decisive:
            if one == two:
                counts["first_in_both" if one == "first" else "second_in_both"] += 1
            else:
                counts["consistent"] += 1
        elif one == two:
            counts["consistent"] += 1
        else:
            counts["partly"] += 1
    flipped = counts["first_in_both"] + counts["second_in_both"]
    return {"pairs": n, "inconsistent": rate(flipped, n),
            "inconsistent_decisive": rate(flipped, decisive_both), **counts,
            "first_share": rate(first, decisive)}


# --- accuracy against truth ---------------------------------------------------------------------


def pairwise_accuracy(answers: Sequence[tuple[str, str | None]]) -> dict:
    """How often answers prefer the copy that truth says is right.

    ``answers`` are (answer, right_side): the answer one of left, right, tie, both_bad; right_side
    the side of the copy whose truth is the better one (tests_pass against tests_fail, known_good
    against seeded_defect) as "left" or "right", or None where the two truths are equal (or either
    unknown: no side is right).

    Over the answers with a right side:
    - ``accuracy``: answers naming the right side / all of them; a tie or both_bad is counted as
      not right (a judge who will not choose has not found the better copy);
    - ``decisive_accuracy``: answers naming the right side / left-or-right answers;
    each a k/n with its Wilson 95 % interval (None where n is 0), with the ties and both_bad
    counted. Over the answers of equal truth, what they preferred: counts of each answer.

    Returns {"differing": n, "accuracy", "decisive_accuracy", "ties", "both_bad", "equal": {answer:
    count}, "equal_n"}. Raises ValueError for an answer or side outside the vocabulary.
    """
    right = decisive = n = ties = both_bad = 0
    equal = dict.fromkeys(VERDICTS, 0)
    for m, row in enumerate(answers):
        try:
            answer, side = row
        except (TypeError, ValueError):
            raise ValueError(f"answer {m} must be (answer, right_side), got {row!r}") from None
        if answer not in VERDICTS:
            raise ValueError(f"answer {m}: {answer!r} is not one of {VERDICTS}")
        if side is None:
            equal[answer] += 1
            continue
        if side not in ("left", "right"):
            raise ValueError(f"answer {m}: right_side must be left, right or None, got {side!r}")
        n += 1
        right += answer == side
        decisive += answer in ("left", "right")
        ties += answer == "tie"
        both_bad += answer == "both_bad"
    return {"differing": n, "accuracy": rate(right, n), "decisive_accuracy": rate(right, decisive),
            "ties": ties, "both_bad": both_bad, "equal": equal, "equal_n": sum(equal.values())}


def phase_shift(rows: Sequence[tuple[str, str, str]]) -> dict:
    """How many preferences moved towards the right copy, and away from it, between phase 1 (alone)
    and phase 2 (beside the model reviewers' verdicts).

    ``rows`` are (phase-1 answer, phase-2 answer, right_side) for one judge's (or one group's)
    pairs whose truths differ, right_side "left" or "right" as in ``pairwise_accuracy`` (rows with
    None are counted in ``equal`` and otherwise left out). An answer is correct where it names the
    right side; ties and both_bad are not. ``toward``: wrong in phase 1, correct in phase 2;
    ``away``: correct, then wrong. McNemar's exact test (``stats.mcnemar_exact``) on those two
    counts: the pairs are one judge's, each answered in both phases, the paired binary design.

    Returns {"pairs", "toward", "away", "correct_both", "wrong_both", "changed" (answers that
    changed at all, correctness kept or not), "equal", "phase1" and "phase2" (correct k/n with
    Wilson), "p_value", "test" ("McNemar exact")}. Raises ValueError outside the vocabulary.
    """
    counts = dict.fromkeys(("toward", "away", "correct_both", "wrong_both"), 0)
    n = changed = equal = 0
    for m, row in enumerate(rows):
        try:
            one, two, side = row
        except (TypeError, ValueError):
            raise ValueError(f"row {m} must be (phase-1 answer, phase-2 answer, right_side), "
                             f"got {row!r}") from None
        for answer in (one, two):
            if answer not in VERDICTS:
                raise ValueError(f"row {m}: {answer!r} is not one of {VERDICTS}")
        if side is None:
            equal += 1
            continue
        if side not in ("left", "right"):
            raise ValueError(f"row {m}: right_side must be left, right or None, got {side!r}")
        n += 1
        changed += one != two
        first, second = one == side, two == side
        key = {(False, True): "toward", (True, False): "away", (True, True): "correct_both",
               (False, False): "wrong_both"}[(first, second)]
        counts[key] += 1
    return {"pairs": n, **counts, "changed": changed, "equal": equal,
            "phase1": rate(counts["correct_both"] + counts["away"], n),
            "phase2": rate(counts["correct_both"] + counts["toward"], n),
            "p_value": stats.mcnemar_exact(counts["toward"], counts["away"]),
            "test": "McNemar exact"}


# --- style against truth ------------------------------------------------------------------------


def _irls(x: np.ndarray, y: np.ndarray, ridge: float, *, tolerance: float = 1e-12,
          max_iterations: int = 200) -> tuple[np.ndarray, np.ndarray, int, bool]:
    """Newton's method (IRLS) on the ridge-penalised logistic log-likelihood; returns (β, the
    penalised information matrix X'WX + λI at β, iterations, converged)."""
    beta = np.zeros(x.shape[1])
    penalty = ridge * np.eye(x.shape[1])
    for iteration in range(1, max_iterations + 1):
        p = 1.0 / (1.0 + np.exp(-(x @ beta)))
        gradient = x.T @ (y - p) - ridge * beta
        information = (x * (p * (1.0 - p))[:, None]).T @ x + penalty
        step = np.linalg.solve(information, gradient)
        beta = beta + step
        if np.max(np.abs(step)) < tolerance * (1.0 + np.max(np.abs(beta))):
            p = 1.0 / (1.0 + np.exp(-(x @ beta)))
            information = (x * (p * (1.0 - p))[:, None]).T @ x + penalty
            return beta, information, iteration, True
    return beta, information, max_iterations, False


def style_design(rows: Sequence[tuple]) -> tuple[np.ndarray, np.ndarray]:
    """The style fit's design matrix (n × 4: 1, strength difference, normalised length
    difference, correct) and outcome (1 where left was preferred), from ``style_fit``'s rows."""
    x, y = [], []
    for m, row in enumerate(rows):
        try:
            left_preferred, strength, length_left, length_right, correct = row
        except (TypeError, ValueError):
            raise ValueError(f"row {m} must be (left_preferred, strength_difference, length_left, "
                             f"length_right, correct), got {row!r}") from None
        if left_preferred not in (0, 1) or isinstance(left_preferred, float):
            raise ValueError(f"row {m}: left_preferred must be 1, 0, True or False, "
                             f"got {left_preferred!r}")
        if isinstance(strength, bool) or not isinstance(strength, numbers.Real) \
                or not math.isfinite(strength):
            raise ValueError(f"row {m}: strength_difference must be a finite number, got {strength!r}")
        length_left = _check_count(f"row {m}: length_left", length_left)
        length_right = _check_count(f"row {m}: length_right", length_right)
        if correct not in (-1, 0, 1) or isinstance(correct, (bool, float)):
            raise ValueError(f"row {m}: correct must be 1 (left right), -1 (right right) or 0, "
                             f"got {correct!r}")
        total = length_left + length_right
        x.append((1.0, float(strength), (length_left - length_right) / total if total else 0.0,
                  float(correct)))
        y.append(float(left_preferred))
    return np.asarray(x, dtype=float).reshape(-1, 4), np.asarray(y, dtype=float)


def style_fit(rows: Sequence[tuple], *, ridge: float = STYLE_RIDGE,
              minimum: int = MIN_STYLE_ANSWERS, confidence: float = 0.95) -> dict:
    """Does a judge prefer length (or the left side, or the stronger builder) over correctness?

    ``rows`` are the decisive (left or right) answers of one judge type, or one reviewer, each
    (left_preferred, strength_difference, length_left, length_right, correct): 1 where the left
    (or first-shown) copy was preferred; the Bradley–Terry strength of the left copy's builder
    minus the right's; each copy's length in characters; and 1 where the left copy is the right
    one by truth, −1 where the right copy is, 0 where their truths are equal (or unknown).

    One logistic regression of left_preferred on::

        logit P(left) = β_position + β_strength · Δθ + β_length · (ℓ_L − ℓ_R)/(ℓ_L + ℓ_R)
                        + β_correct · c

    β_position is the pull of the left side with everything else even; β_length the pull of the
    longer copy (LMArena's style control: the normalised difference, in characters, 0 where both
    are empty); β_correct the pull of the copy that is right. A judge who prefers length over
    correctness shows β_length large beside β_correct small. Fitted by Newton's method (IRLS) on
    the log-likelihood penalised by ``ridge``/2 · ‖β‖² (``STYLE_RIDGE``), so data that a
    coefficient separates perfectly still give a finite fit. Standard errors from the inverse of
    the penalised information matrix (X'WX + λI); Wald intervals β ± z·SE.

    A term whose column does not vary (every pair of equal truth; strength differences all one
    value, as with one builder pair in one order) is not estimable apart from the intercept: it is
    left out of the fit and reported as null, named in ``not_estimable``.

    Returns {"fitted": bool, "reason" (None when fitted; why not otherwise), "n", "left" (answers
    preferring left), "coefficients": {term: {"estimate", "se", "low", "high"} or None} for
    position, strength, length and correct, "not_estimable", "ridge", "iterations",
    "converged"}. Refused (fitted false, the reason said) with fewer than ``minimum`` rows, or
    when every answer is the same side (no fit describes that but a boundary).

    Source: LMArena's style control (T. Li, A. Angelopoulos, W.-L. Chiang (2024), "Does style
    matter? Disentangling style and substance in Chatbot Arena", lmsys.org blog), here with truth
    as a term of its own; A. Agresti (2013), Categorical Data Analysis, 3rd ed., §4.6 (IRLS) and
    §5.2 (Wald intervals); A. E. Hoerl & R. W. Kennard (1970) for the ridge.

    Raises ValueError for a malformed row, a negative ridge or minimum, or confidence outside (0, 1).
    """
    if isinstance(ridge, bool) or not isinstance(ridge, numbers.Real) or not ridge >= 0 \
            or not math.isfinite(ridge):
        raise ValueError(f"ridge must be a non-negative number, got {ridge!r}")
    minimum = _check_count("minimum", minimum)
    confidence = check_probability("confidence", confidence)
    x, y = style_design(rows)
    n, left = len(y), int(y.sum())
    result = {"fitted": False, "reason": None, "n": n, "left": left,
              "coefficients": dict.fromkeys(STYLE_TERMS), "not_estimable": [], "ridge": float(ridge),
              "iterations": 0, "converged": None}
    if n < minimum:
        result["reason"] = (f"{n} decisive answer{'s' if n != 1 else ''}, fewer than {minimum}: "
                            "too few to fit four coefficients")
        return result
    if left in (0, n):
        result["reason"] = f"every decisive answer chose the {'left' if left else 'right'} side"
        return result
    keep = [0] + [c for c in range(1, 4) if np.ptp(x[:, c]) > 0]
    result["not_estimable"] = [STYLE_TERMS[c] for c in range(1, 4) if c not in keep]
    beta, information, iterations, converged = _irls(x[:, keep], y, float(ridge))
    covariance = np.linalg.inv(information)
    # scipy's quantile, as every other interval of the report (NormalDist's differs by an ulp)
    z = stats._two_sided_z(confidence)
    for position, column in enumerate(keep):
        se = math.sqrt(max(0.0, float(covariance[position, position])))
        estimate = float(beta[position])
        result["coefficients"][STYLE_TERMS[column]] = {
            "estimate": estimate, "se": se, "low": estimate - z * se, "high": estimate + z * se}
    result.update(fitted=True, iterations=iterations, converged=converged)
    return result
