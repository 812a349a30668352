"""Statistics for the revealed report: pure functions over numbers and numpy arrays.

Nothing here touches Django or the database, so the functions are tested without either. scipy is
imported lazily, inside the functions that need a distribution, so that importing this module stays
cheap; ``tests/reports/test_stats.py`` asserts that importing it does not load scipy. The processes
that serve pages never import it (the report is built in a builder process, reports/offprocess.py):
what they compute, a scorecard's Wilson interval and the planner's sample size, is in
content/stdlib_stats.py, with the standard library only, and re-exported here.

Turning querysets into the arrays these functions take belongs in reports/loading.py, not here.
"""

from __future__ import annotations

import functools
import math
import numbers
import operator
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

# The statistics a serving process computes too, in the standard library only (no numpy, no
# scipy): re-exported here with the rest.
from content.stdlib_stats import check_probability as _check_probability
from content.stdlib_stats import paired_sample_plan, paired_sample_size, wilson_bounds

__all__ = [
    "RULE_OPERATORS",
    "bootstrap_judges_items",
    "cluster_bootstrap",
    "cluster_weights",
    "judges_items_weights",
    "resampled_sums",
    "clustered_ratio",
    "clustered_ratio_difference",
    "clustered_ratios",
    "cohens_kappa",
    "evaluate_rule",
    "fleiss_kappa",
    "holm_adjust",
    "judges_clusters_weights",
    "krippendorff_alpha",
    "mcnemar_exact",
    "MIN_BOOTSTRAP_UNITS",
    "MIN_JUDGES_RESAMPLED",
    "newcombe_independent_interval",
    "newcombe_paired_interval",
    "paired_sample_plan",
    "paired_sample_size",
    "sign_flip_p",
    "percentile_interval",
    "stratified_rate",
    "stratified_rate_withheld",
    "wilson_interval",
]


# --- validation helpers -------------------------------------------------------------------------


def _check_count(name: str, value: Any) -> int:
    """Return ``value`` as an int if it is a non-negative integer (bool refused), else raise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    value = int(value)
    if value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value}")
    return value


@functools.lru_cache(maxsize=16)
def _two_sided_z(confidence: float) -> float:
    """z_{1-(1-confidence)/2}, the standard normal quantile for a two-sided interval.

    Cached: a report asks for the same quantile for every one of its hundreds of intervals."""
    from scipy.stats import norm  # noqa: PLC0415 - lazy: keep scipy out of processes that never compute a report

    return float(norm.ppf(1.0 - (1.0 - confidence) / 2.0))


# --- proportions ---------------------------------------------------------------------------------


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion k/n.

    With p = k/n and z = z_{1-α/2} (α = 1 - confidence, from ``scipy.stats.norm.ppf``)::

        centre    = (p + z²/(2n)) / (1 + z²/n)
        halfwidth = z / (1 + z²/n) · √( p(1-p)/n + z²/(4n²) )
        interval  = (centre - halfwidth, centre + halfwidth)

    Source: E. B. Wilson (1927), "Probable inference, the law of succession, and statistical
    inference", JASA 22:209-212; R. G. Newcombe (1998), "Two-sided confidence intervals for the
    single proportion: comparison of seven methods", Statistics in Medicine 17:857-872, method 3
    (score interval without continuity correction).

    The bounds are clipped to [0, 1] against rounding, and are exactly 0 when k = 0 and exactly 1
    when k = n, as the closed form gives.

    Raises ValueError unless 0 <= successes <= n are integers, n >= 1 (with no trials there is no
    proportion to bound: the caller reports "no items", not an interval) and 0 < confidence < 1.
    """
    successes = _check_count("successes", successes)
    n = _check_count("n", n)
    if successes > n:
        raise ValueError(f"successes must be at most n, got successes={successes} > n={n}")
    confidence = _check_probability("confidence", confidence)
    if n == 0:
        raise ValueError("wilson_interval needs n >= 1: with no trials there is no proportion")
    # The formula is content.stdlib_stats', which the judges' scorecards use without numpy/scipy.
    return wilson_bounds(successes, n, _two_sided_z(confidence))


# --- paired comparisons --------------------------------------------------------------------------


def mcnemar_exact(b: int, c: int) -> float:
    """Exact two-sided McNemar test on the discordant counts b and c of a paired design.

    Under the null hypothesis each of the b + c discordant pairs goes either way with probability
    one half, so min(b, c) ~ Binomial(b + c, 1/2) and::

        P = min(1, 2 · Σ_{i=0}^{min(b,c)} C(b+c, i) / 2^(b+c))

    (the doubled lower tail, via ``scipy.stats.binom.cdf``). b = c = 0 gives 1.0: no discordant
    pair, no evidence. The result is symmetric in b and c and lies in (0, 1], except that it
    underflows to 0.0 once the tail is below the smallest double (about 1e-323, e.g. 1075 to 0).

    Source: Q. McNemar (1947), "Note on the sampling error of the difference between correlated
    proportions or percentages", Psychometrika 12:153-157; exact (binomial) form as in
    A. Agresti (2013), Categorical Data Analysis, 3rd ed., §11.1.

    Raises ValueError unless b and c are non-negative integers.
    """
    b = _check_count("b", b)
    c = _check_count("c", c)
    n = b + c
    if n == 0:
        return 1.0
    from scipy.stats import binom  # noqa: PLC0415 - lazy: see the module docstring

    return float(min(1.0, 2.0 * binom.cdf(min(b, c), n, 0.5)))


# --- small-sample intervals for a difference of proportions -------------------------------------

# Below this many resampling units a percentile bootstrap interval is not given: with few units it
# is too narrow (it cannot reach beyond the spread of the few values drawn) and moves in coarse
# steps. tests/reports/test_interval_coverage.py measures it: on paired binary data the percentile
# bootstrap covers about 93-94 % at 20 units and closer to 95 % above, against about 90 % at 10 and
# under 85 % at 5; docs/statistics.md gives the figures. Below it, the report gives Newcombe's
# score intervals (valid at any size) where the design is one binary outcome per unit.
MIN_BOOTSTRAP_UNITS = 20
# Below this many judges, human intervals hold the judges fixed (they resample tasks or items
# only) and say so: "conditional on these judges". A bootstrap over a handful of judges does not
# estimate the spread between judges; it only makes the interval erratic.
MIN_JUDGES_RESAMPLED = 10


def _phi_paired(both: int, first_only: int, second_only: int, neither: int) -> float:
    """Newcombe's (1998) estimate of the correlation of the two paired proportions, with his
    correction: (AD − BC − N/2)/√… when AD − BC > N/2, 0 when 0 ≤ AD − BC ≤ N/2, (AD − BC)/√…
    below; 0 when a margin is empty."""
    n = both + first_only + second_only + neither
    margins = ((both + first_only), (second_only + neither), (both + second_only),
               (first_only + neither))
    if 0 in margins:
        return 0.0
    product = math.sqrt(math.prod(float(m) for m in margins))
    cross = both * neither - first_only * second_only
    if cross > n / 2:
        return (cross - n / 2) / product
    if cross >= 0:
        return 0.0
    return cross / product


def newcombe_paired_interval(both: int, first_only: int, second_only: int, neither: int,
                             confidence: float = 0.95) -> tuple[float, float, float]:
    """Newcombe's hybrid score ("square-and-add") interval for the difference p1 − p2 of two
    paired proportions, from the paired 2×2 table: `both` units a success on both sides,
    `first_only` on the first only, `second_only` on the second only, `neither` on neither.

    With N the units, p1 = (both + first_only)/N, p2 = (both + second_only)/N, (l_i, u_i) their
    Wilson intervals (``wilson_interval``) and φ the corrected correlation (``_phi_paired``)::

        L = (p1 − p2) − √((p1 − l1)² − 2φ(p1 − l1)(u2 − p2) + (u2 − p2)²)
        U = (p1 − p2) + √((p2 − l2)² − 2φ(p2 − l2)(u1 − p1) + (u1 − p1)²)

    Valid at any N (coverage close to nominal from about ten pairs), unlike a bootstrap.
    Returns (p1 − p2, L, U).

    Source: R. G. Newcombe (1998), "Improved confidence intervals for the difference between
    binomial proportions based on paired data", Statistics in Medicine 17:2635-2650, method 10;
    recommended by M. W. Fagerland, S. Lydersen & P. Laake (2014), "Recommended tests and
    confidence intervals for paired binomial proportions", Statistics in Medicine 33:2850-2875.
    Test vector (theirs, Cavo et al. 2012): 59, 6, 16, 80 gives −0.0621 (−0.1186 to −0.0046).

    Raises ValueError unless the counts are non-negative integers with N ≥ 1.
    """
    counts = [_check_count(name, value) for name, value in
              (("both", both), ("first_only", first_only), ("second_only", second_only),
               ("neither", neither))]
    n = sum(counts)
    if n == 0:
        raise ValueError("newcombe_paired_interval needs at least one pair")
    both, first_only, second_only, neither = counts
    k1, k2 = both + first_only, both + second_only
    p1, p2 = k1 / n, k2 / n
    l1, u1 = wilson_interval(k1, n, confidence)
    l2, u2 = wilson_interval(k2, n, confidence)
    phi = _phi_paired(both, first_only, second_only, neither)
    # max(0, …) only against rounding: the forms are non-negative for |φ| ≤ 1.
    low = (p1 - p2) - math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2)
                                    + (u2 - p2) ** 2))
    high = (p1 - p2) + math.sqrt(max(0.0, (p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1)
                                     + (u1 - p1) ** 2))
    return (p1 - p2, max(-1.0, low), min(1.0, high))


def newcombe_independent_interval(k1: int, n1: int, k2: int, n2: int,
                                  confidence: float = 0.95) -> tuple[float, float, float]:
    """Newcombe's hybrid score interval for the difference k1/n1 − k2/n2 of two independent
    proportions: the paired form with φ = 0, each proportion's Wilson interval squared and added.

    Source: R. G. Newcombe (1998), "Interval estimation for the difference between independent
    proportions: comparison of eleven methods", Statistics in Medicine 17:873-890, method 10.
    Test vector (Fagerland, Lydersen & Laake 2017, Statistical Analysis of Contingency Tables,
    §4; Perondi et al. 2004): 7/34 − 1/34 gives 0.1765 (0.0189 to 0.3404).

    Raises ValueError unless 0 ≤ k ≤ n are integers with n ≥ 1 on both sides."""
    l1, u1 = wilson_interval(k1, n1, confidence)
    l2, u2 = wilson_interval(k2, n2, confidence)
    p1, p2 = k1 / n1, k2 / n2
    low = (p1 - p2) - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = (p1 - p2) + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return (p1 - p2, max(-1.0, low), min(1.0, high))


# --- agreement -----------------------------------------------------------------------------------


def cohens_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> float:
    """Cohen's kappa for two raters giving nominal labels (any hashable values) to the same items.

    With p_o the share of items on which the raters agree and p_e = Σ_c (n_{a,c}/N)(n_{b,c}/N) the
    agreement expected from each rater's own label frequencies::

        κ = (p_o - p_e) / (1 - p_e)

    Source: J. Cohen (1960), "A coefficient of agreement for nominal scales", Educational and
    Psychological Measurement 20:37-46.

    Convention when p_e == 1 (both raters gave every item the same single label, so κ is 0/0):
    returns 1.0 if p_o == 1 (always the case then: agreement is perfect) and NaN otherwise. The
    comparison is made on integer counts, so it is exact.

    Raises ValueError if the sequences differ in length or are empty.
    """
    a = list(a)
    b = list(b)
    if len(a) != len(b):
        raise ValueError(f"raters must label the same items: got {len(a)} and {len(b)} labels")
    n = len(a)
    if n == 0:
        raise ValueError("cohens_kappa needs at least one item")
    agreements = sum(1 for x, y in zip(a, b, strict=True) if x == y)
    counts_a = Counter(a)
    counts_b = Counter(b)
    chance = sum(counts_a[label] * counts_b[label] for label in counts_a)  # p_e · N²
    if chance == n * n:
        return 1.0 if agreements == n else math.nan
    p_o = agreements / n
    p_e = chance / (n * n)
    return (p_o - p_e) / (1.0 - p_e)


def fleiss_kappa(counts: Any) -> float:
    """Fleiss' kappa for a fixed number of raters per subject, nominal categories.

    ``counts`` is a subjects × categories matrix: counts[i][j] = n_ij, how many raters put subject
    i in category j. Every row must sum to the same n >= 2 (raters need not be the same people).
    With N subjects::

        P_i  = (Σ_j n_ij² - n) / (n(n - 1))          agreement on subject i
        P̄    = (1/N) Σ_i P_i
        p_j  = (1/(N n)) Σ_i n_ij                     share of all ratings in category j
        P̄_e  = Σ_j p_j²
        κ    = (P̄ - P̄_e) / (1 - P̄_e)

    Source: J. L. Fleiss (1971), "Measuring nominal scale agreement among many raters",
    Psychological Bulletin 76:378-382.

    Convention when P̄_e == 1 (every rating in one category, κ is 0/0): as ``cohens_kappa``,
    1.0 if P̄ == 1 (always so then) and NaN otherwise; decided on integer counts, so exactly.

    Raises ValueError for a matrix that is not 2-D, is empty, holds negative or non-integer counts,
    or whose rows do not all sum to the same n >= 2.
    """
    try:
        matrix = np.asarray(counts, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"counts must be a subjects × categories matrix of counts: {exc}") from exc
    if matrix.ndim != 2 or matrix.shape[0] == 0 or matrix.shape[1] == 0:
        raise ValueError(
            f"counts must be a non-empty subjects × categories matrix, got shape {matrix.shape}"
        )
    if not np.all(np.isfinite(matrix)) or np.any(matrix < 0) or np.any(matrix != np.round(matrix)):
        raise ValueError("counts must hold non-negative whole numbers")
    matrix = matrix.astype(np.int64)
    raters = matrix.sum(axis=1)
    if np.any(raters != raters[0]):
        raise ValueError(
            "fleiss_kappa needs the same number of raters for every subject; row sums are "
            f"{sorted(set(raters.tolist()))}"
        )
    n = int(raters[0])
    if n < 2:
        raise ValueError(f"fleiss_kappa needs at least 2 raters per subject, got {n}")
    subjects = matrix.shape[0]
    column_totals = matrix.sum(axis=0)
    # Integer test for P̄_e == 1: Σ_j (Σ_i n_ij)² == (N n)².
    if int((column_totals**2).sum()) == (subjects * n) ** 2:
        agreement_pairs = int((matrix**2).sum()) - subjects * n
        return 1.0 if agreement_pairs == subjects * n * (n - 1) else math.nan
    p_i = ((matrix**2).sum(axis=1) - n) / (n * (n - 1))
    p_bar = float(p_i.mean())
    p_j = column_totals / (subjects * n)
    p_e = float((p_j**2).sum())
    return (p_bar - p_e) / (1.0 - p_e)


def krippendorff_alpha(data: Any) -> float:
    """Krippendorff's alpha for nominal data, any number of coders, missing values allowed.

    ``data`` is a coders × units array of codes (floats; NaN marks a missing value). Units with
    fewer than two values are not pairable and are dropped. From the coincidence matrix
    o_ck = Σ_u (number of c-k pairs of values in unit u) / (m_u - 1), with n_c = Σ_k o_ck and
    n = Σ_c n_c the number of pairable values::

        α = 1 - D_o / D_e = 1 - (n - 1) · (Σ_{c≠k} o_ck) / (Σ_{c≠k} n_c n_k)
          = 1 - (n - 1) · (n - Σ_c o_cc) / (n² - Σ_c n_c²)                    (nominal metric)

    Source: K. Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", Annenberg
    School for Communication, University of Pennsylvania, section C ("nominal data, any number of
    observers, missing data"; its worked example gives α = 0.743).

    Conventions: if no unit is pairable, returns NaN. If every pairable value is the same code
    (D_e = 0, α is 0/0), returns 1.0 as ``cohens_kappa`` and ``fleiss_kappa`` do.

    Raises ValueError for an array that is not 2-D or holds infinite values.
    """
    try:
        values = np.asarray(data, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"data must be a coders × units array of numeric codes: {exc}") from exc
    if values.ndim != 2:
        raise ValueError(f"data must be a 2-D coders × units array, got shape {values.shape}")
    if np.any(np.isinf(values)):
        raise ValueError("data must hold finite codes, with NaN for missing values")
    present = ~np.isnan(values)
    codes, coded = np.unique(values[present], return_inverse=True)
    if codes.size == 0:
        return math.nan
    # counts[u, c]: how many coders gave unit u code c (a units × codes table, in one bincount).
    units = np.nonzero(present)[1]
    counts = np.bincount(units * codes.size + coded.ravel(),
                         minlength=values.shape[1] * codes.size).reshape(values.shape[1], codes.size)
    m_u = counts.sum(axis=1)
    pairable = m_u >= 2
    if not pairable.any():
        return math.nan
    counts = counts[pairable].astype(np.float64)
    m_u = m_u[pairable].astype(np.float64)
    # o_cc = Σ_u n_uc (n_uc - 1) / (m_u - 1); n_c = Σ_u n_uc over pairable units.
    agreeing = float((counts * (counts - 1) / (m_u - 1)[:, None]).sum())
    n_c = counts.sum(axis=0)
    n = float(n_c.sum())
    if np.count_nonzero(n_c) == 1:
        return 1.0
    return 1.0 - (n - 1.0) * (n - agreeing) / (n * n - float((n_c**2).sum()))


# --- resampling ----------------------------------------------------------------------------------


def _percentile_interval(estimates: list[float], confidence: float) -> tuple[float, float]:
    values = np.asarray(estimates, dtype=float)
    finite = values[~np.isnan(values)]
    if finite.size == 0:
        return (math.nan, math.nan)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(finite, [tail, 1.0 - tail])
    return (float(low), float(high))


def _check_resampling(resamples: Any, seed: Any, confidence: Any) -> tuple[int, int, float]:
    resamples = _check_count("resamples", resamples)
    if resamples < 1:
        raise ValueError("resamples must be at least 1")
    seed = _check_count("seed", seed)
    confidence = _check_probability("confidence", confidence)
    return resamples, seed, confidence


def cluster_bootstrap(
    statistic: Callable[[list[Any]], float],
    clusters: Sequence[Any],
    *,
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float, float]:
    """Cluster (block) bootstrap with a percentile interval.

    ``clusters`` is a sequence of cluster payloads, each whatever ``statistic`` accepts a list of
    (e.g. the verdicts on all implementations of one function). Each of ``resamples`` draws takes
    len(clusters) clusters with replacement, uniformly, from ``numpy.random.default_rng(seed)``
    (all resamples drawn at once, one row each), and evaluates
    ``statistic(list_of_drawn_clusters)``. Resampling whole clusters keeps the dependence inside a
    cluster, so the interval is not narrowed by treating correlated items as independent.

    Returns (statistic on the original clusters, low, high) where low and high are the
    (1-confidence)/2 and (1+confidence)/2 quantiles of the resampled statistics (``numpy.quantile``,
    linear interpolation): the percentile interval.

    Degenerate resamples (e.g. no defective item drawn, so a recall is undefined) may return NaN;
    those are dropped and the interval is taken over the rest. If every resample is NaN the bounds
    are NaN. The number dropped is not reported; a statistic that is often NaN deserves a look.

    Source: B. Efron & R. J. Tibshirani (1993), An Introduction to the Bootstrap, ch. 13
    (percentile interval); A. C. Davison & D. V. Hinkley (1997), Bootstrap Methods and their
    Application, §3.8 (resampling clusters / hierarchical data).

    Raises ValueError for no clusters, resamples < 1, a negative seed or confidence outside (0, 1).
    """
    resamples, seed, confidence = _check_resampling(resamples, seed, confidence)
    clusters = list(clusters)
    if not clusters:
        raise ValueError("cluster_bootstrap needs at least one cluster")
    point = float(statistic(list(clusters)))
    rng = np.random.default_rng(seed)
    size = len(clusters)
    draws = rng.integers(0, size, size=(resamples, size))  # one row per resample
    estimates = [float(statistic([clusters[i] for i in drawn])) for drawn in draws]
    low, high = _percentile_interval(estimates, confidence)
    return (point, low, high)


def bootstrap_judges_items(
    statistic: Callable[[np.ndarray, np.ndarray], float],
    judge_ids: Sequence[Any],
    item_ids: Sequence[Any],
    *,
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float, float]:
    """Two-way bootstrap over judges AND items, for pooled effects (e.g. the phase shift).

    Each resample draws len(judge_ids) judges with replacement and, independently, len(item_ids)
    items with replacement (both from one ``numpy.random.default_rng(seed)``: every resample's
    judges first, as one resamples × judges array, then every resample's items), and
    evaluates ``statistic(judge_sample, item_sample)``. Both samples are numpy arrays of the given
    ids (``np.asarray(ids)[drawn]``), duplicates included; pass ``range(n)`` as ids to receive
    integer positions for indexing a judges × items matrix (``matrix[np.ix_(j, i)]``). A pooled
    effect varies with both who judged and what was judged, so resampling only one of the two
    understates its uncertainty; this resamples both, independently (a two-way random-effects
    bootstrap, which is somewhat conservative).

    Returns (statistic on all judges and all items, low, high), a percentile interval; NaN
    statistics from degenerate resamples are dropped as in ``cluster_bootstrap``, and if every
    resample is NaN the bounds are NaN.

    Source: P. McCullagh (2000), "Resampling and exchangeable arrays", Bernoulli 6:285-301;
    A. B. Owen (2007), "The pigeonhole bootstrap", Annals of Applied Statistics 1:386-411
    (independent resampling of rows and columns of a crossed design).

    Raises ValueError for no judges or no items, resamples < 1, a negative seed or confidence
    outside (0, 1).
    """
    resamples, seed, confidence = _check_resampling(resamples, seed, confidence)
    judges = np.asarray(judge_ids)
    items = np.asarray(item_ids)
    if judges.ndim != 1 or judges.size == 0:
        raise ValueError("bootstrap_judges_items needs a non-empty 1-D sequence of judge ids")
    if items.ndim != 1 or items.size == 0:
        raise ValueError("bootstrap_judges_items needs a non-empty 1-D sequence of item ids")
    point = float(statistic(judges.copy(), items.copy()))
    judge_draws, item_draws = _two_way_draws(judges.size, items.size, resamples, seed)
    estimates = [float(statistic(judges[j], items[i]))
                 for j, i in zip(judge_draws, item_draws, strict=True)]
    low, high = _percentile_interval(estimates, confidence)
    return (point, low, high)


def judges_items_weights(
    n_judges: int, n_items: int, *, resamples: int = 2000, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """The draws of ``bootstrap_judges_items`` as multiplicities, for statistics that are sums.

    Returns (W, V): W[r, j] is how many times judge j was drawn in resample r, V[r, i] how many
    times item i was. The draws are exactly those ``bootstrap_judges_items(…, range(n_judges),
    range(n_items), resamples=resamples, seed=seed)`` makes (same generator, judges first), so a
    statistic that is a ratio of weighted sums over a judges × items matrix M,
    Σ_j Σ_i W[r, j] M[j, i] V[r, i], gives the same resampled values as evaluating it on the drawn
    ids — in one matrix product instead of a Python call per resample (``resampled_sums``).

    Raises ValueError for no judges or no items, resamples < 1 or a negative seed.
    """
    n_judges = _check_count("n_judges", n_judges)
    n_items = _check_count("n_items", n_items)
    if n_judges == 0 or n_items == 0:
        raise ValueError("judges_items_weights needs at least one judge and one item")
    resamples, seed, _ = _check_resampling(resamples, seed, 0.95)
    judge_draws, item_draws = _two_way_draws(n_judges, n_items, resamples, seed)
    return _multiplicities(judge_draws), _multiplicities(item_draws)


def _two_way_draws(n_judges: int, n_items: int, resamples: int, seed: int):
    rng = np.random.default_rng(seed)
    judge_draws = rng.integers(0, n_judges, size=(resamples, n_judges))
    item_draws = rng.integers(0, n_items, size=(resamples, n_items))
    return judge_draws, item_draws


def _multiplicities(draws: np.ndarray, size: int | None = None) -> np.ndarray:
    """counts[r, k] = how many times k occurs in draws[r] (a bincount per row, in one call)."""
    resamples, width = draws.shape
    size = width if size is None else size
    offsets = (np.arange(resamples) * size)[:, None]
    flat = np.bincount((draws + offsets).ravel(), minlength=resamples * size)
    return flat.reshape(resamples, size).astype(np.float64)


def cluster_weights(
    item_clusters: Sequence[Hashable], *, resamples: int = 2000, seed: int = 0
) -> np.ndarray:
    """Item multiplicities for a cluster bootstrap: V[r, i] = times item i's cluster was drawn.

    Each resample draws as many clusters as there are, with replacement, uniformly, from
    ``numpy.random.default_rng(seed)`` (as ``cluster_bootstrap`` does, clusters numbered in order of
    first appearance); every item of a drawn cluster comes
    with it. Use with ``resampled_sums`` and judge weights of one.

    Source: as ``cluster_bootstrap`` (Davison & Hinkley 1997, §3.8).

    Raises ValueError for no items, resamples < 1 or a negative seed.
    """
    labels = list(item_clusters)
    if not labels:
        raise ValueError("cluster_weights needs at least one item")
    resamples, seed, _ = _check_resampling(resamples, seed, 0.95)
    index, size = _cluster_index(labels)
    return _cluster_draws(size, resamples, seed)[:, index]


def _cluster_index(labels: list) -> tuple[np.ndarray, int]:
    """Each item's cluster number (clusters numbered in order of first appearance), and how many."""
    number: dict[Hashable, int] = {}
    index = np.asarray([number.setdefault(label, len(number)) for label in labels], dtype=np.int64)
    return index, len(number)


# At most this many cluster draws are held at once by clustered_ratios (8 bytes each, twice).
DRAW_BLOCK_VALUES = 4_000_000


def _sums_by_cluster(matrix: np.ndarray, index: np.ndarray, size: int) -> np.ndarray:
    """out[r, k] = Σ matrix[r, i] over the items i of cluster k (one bincount per row)."""
    out = np.zeros((matrix.shape[0], size))
    for row in range(matrix.shape[0]):
        out[row] = np.bincount(index, weights=matrix[row], minlength=size)
    return out


def _cluster_draws(size: int, resamples: int, seed: int) -> np.ndarray:
    """D[r, k] = how many times cluster k was drawn in resample r: ``size`` clusters drawn with
    replacement per resample, all from one ``numpy.random.default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    return _multiplicities(rng.integers(0, size, size=(resamples, size)))


def resampled_sums(
    matrices: Sequence[np.ndarray], judge_weights: np.ndarray, item_weights: np.ndarray
) -> np.ndarray:
    """S[m, r] = Σ_j Σ_i W[r, j] · M_m[j, i] · V[r, i] for each judges × items matrix M_m.

    With W and V from ``judges_items_weights`` (or ones and ``cluster_weights``), S[m, r] is the
    sum of M_m over resample r's drawn judges and items, duplicates counted; a pooled rate is then
    S[numerator] / S[denominator] per resample, and its percentile interval is
    ``percentile_interval``. One (R × J) · (J × I) product per matrix.
    """
    judge_weights = np.asarray(judge_weights, dtype=np.float64)
    item_weights = np.asarray(item_weights, dtype=np.float64)
    # Every partial sum is a whole number no larger than Σ W[r] · Σ V[r]; while that stays below
    # 2**24, single precision is exact and its matrix product twice as fast.
    bound = float(np.max(judge_weights.sum(axis=1))) * float(np.max(item_weights.sum(axis=1)))
    dtype = np.float32 if bound < 2**24 and all(_whole(m) for m in matrices) else np.float64
    judge_weights = np.asarray(judge_weights, dtype=dtype)
    item_weights = np.asarray(item_weights, dtype=dtype)
    sums = np.empty((len(matrices), judge_weights.shape[0]), dtype=np.float64)
    for m, matrix in enumerate(matrices):
        by_item = judge_weights @ np.asarray(matrix, dtype=dtype)  # R × I
        sums[m] = np.einsum("ri,ri->r", by_item, item_weights)
    return sums


def _whole(matrix) -> bool:
    """True for a 0/1 (boolean or whole-number) matrix, the indicators single precision holds."""
    matrix = np.asarray(matrix)
    return matrix.dtype == np.bool_ or bool(np.all((matrix == 0) | (matrix == 1)))


def percentile_interval(estimates: Any, confidence: float = 0.95) -> tuple[float, float]:
    """The (1-confidence)/2 and (1+confidence)/2 quantiles of resampled estimates, NaN dropped
    (the percentile interval of ``cluster_bootstrap`` and ``bootstrap_judges_items``)."""
    confidence = _check_probability("confidence", confidence)
    return _percentile_interval(list(np.asarray(estimates, dtype=float)), confidence)


def judges_clusters_weights(
    n_judges: int, item_clusters: Sequence[Hashable], *, resamples: int = 2000, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Two-way draws over judges and clusters of items (tasks, say), as multiplicities.

    Returns (W, V) for ``resampled_sums``: W[r, j] is how many times judge j was drawn in resample
    r, V[r, i] how many times item i's cluster was. Judges are drawn first (one resamples × judges
    array), then clusters (one resamples × clusters array), from one
    ``numpy.random.default_rng(seed)``; clusters are numbered in order of first appearance. The
    crossed design of ``bootstrap_judges_items`` with items resampled as whole clusters: a human
    pass rate on one builder's copies varies with who judged and with which tasks were drawn, and
    the copies of one task are not independent.

    Source: as ``bootstrap_judges_items`` (Owen 2007) and ``cluster_bootstrap`` (Davison &
    Hinkley 1997, §3.8).

    Raises ValueError for no judges, no items, resamples < 1 or a negative seed.
    """
    n_judges = _check_count("n_judges", n_judges)
    labels = list(item_clusters)
    if n_judges == 0 or not labels:
        raise ValueError("judges_clusters_weights needs at least one judge and one item")
    resamples, seed, _ = _check_resampling(resamples, seed, 0.95)
    number: dict[Hashable, int] = {}
    index = np.asarray([number.setdefault(label, len(number)) for label in labels])
    rng = np.random.default_rng(seed)
    judge_draws = rng.integers(0, n_judges, size=(resamples, n_judges))
    cluster_draws = rng.integers(0, len(number), size=(resamples, len(number)))
    return _multiplicities(judge_draws), _multiplicities(cluster_draws)[:, index]


def clustered_ratio(
    numerators: Any,
    denominators: Any,
    item_clusters: Sequence[Hashable],
    *,
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float, float]:
    """A ratio of sums over items, Σ numerators / Σ denominators, with a cluster-bootstrap interval.

    Each item i carries a numerator and a denominator (for a rate: 1 if flagged, and 1 if scored;
    for a paired difference of two 0/1 outcomes a_i, b_i: b_i − a_i and 1) and a cluster label (its
    task, say). Each resample draws as many clusters as there are, with replacement, from
    ``numpy.random.default_rng(seed)`` (``cluster_weights``), and takes the ratio of the drawn
    items' sums; the interval is the percentile interval of those ratios (resamples whose
    denominator is 0 are dropped, as NaN). Returns (ratio on all items, low, high); (NaN, NaN,
    NaN) when the denominators sum to 0.

    This is the resampling seed 000's article uses for its differences (all items of each drawn
    task, the mean of b − a over them); its own draws come from Python's ``random`` with 4,000
    resamples, so intervals agree to resampling noise, not to the digit.

    Source: Davison & Hinkley (1997), Bootstrap Methods and their Application, §3.8; Efron &
    Tibshirani (1993), ch. 13 (percentile interval).

    Raises ValueError for arrays of different lengths, no items, resamples < 1, a negative seed
    or confidence outside (0, 1).
    """
    numerators = np.asarray(numerators, dtype=np.float64)
    denominators = np.asarray(denominators, dtype=np.float64)
    labels = list(item_clusters)
    if not (numerators.ndim == denominators.ndim == 1
            and numerators.size == denominators.size == len(labels)):
        raise ValueError("numerators, denominators and item_clusters must be 1-D and of one length")
    if not labels:
        raise ValueError("clustered_ratio needs at least one item")
    if float(denominators.sum()) == 0:
        _check_resampling(resamples, seed, confidence)
        return (math.nan, math.nan, math.nan)
    # One bootstrap, written once: this is clustered_ratios' row of one.
    points, lows, highs, _ = clustered_ratios(numerators[None, :], denominators[None, :], labels,
                                              resamples=resamples, seed=seed,
                                              confidence=confidence)
    return (float(points[0]), float(lows[0]), float(highs[0]))


def sign_flip_p(differences: Any, *, resamples: int = 20000, seed: int = 0) -> float:
    """Two-sided paired permutation (sign-flip) test that the mean of paired differences is 0.

    ``differences`` holds one difference per pair unit (per task: builder A's rate minus builder
    B's on that task). Under the null hypothesis each difference is as likely to have either sign,
    so the p-value is the share of sign assignments whose |mean| is at least the observed |mean|
    (with a tolerance of 1e-12 × Σ|differences| for ties of floating-point sums). With at most 16 units
    every one of the 2^n assignments is enumerated (exact); beyond, ``resamples`` random
    assignments from ``numpy.random.default_rng(seed)`` are drawn and the p-value is
    (hits + 1) / (resamples + 1), which is never 0. No difference (n = 0), or all zero, gives 1.0.

    Source: R. A. Fisher (1935), The Design of Experiments, §21 (the randomisation test of paired
    differences); P. Good (2005), Permutation, Parametric and Bootstrap Tests of Hypotheses, 3rd
    ed., §3.1; the Monte Carlo p-value as in B. V. North, D. Curtis & P. C. Sham (2002), AJHG
    71:439-441.

    Raises ValueError for non-finite differences, resamples < 1 or a negative seed.
    """
    values = np.asarray(differences, dtype=np.float64).ravel()
    if not np.all(np.isfinite(values)):
        raise ValueError("differences must be finite numbers")
    resamples, seed, _ = _check_resampling(resamples, seed, 0.95)
    n = values.size
    observed = abs(float(values.sum()))
    # Ties of floating-point sums are judged against the scale of the values, not of the sum: a
    # sum that is exactly 0 may come out as 1e-16 ([-2/3, -1/3, 1/3, 2/3]), and a tolerance
    # relative to it would count the assignments that tie with it as falling short (p 0.75, not 1).
    tolerance = 1e-12 * float(np.abs(values).sum())
    if n == 0 or observed <= tolerance:
        return 1.0
    threshold = observed - tolerance
    if n <= 16:
        signs = 1.0 - 2.0 * ((np.arange(2 ** n)[:, None] >> np.arange(n)[None, :]) & 1)
        return float(np.mean(np.abs(signs @ values) >= threshold))
    rng = np.random.default_rng(seed)
    # The draws rng.choice([-1.0, 1.0], size) makes (it draws rng.integers(0, 2, size) and
    # indexes), without its indexing, which took most of a second at 500 units.
    signs = 2.0 * rng.integers(0, 2, size=(resamples, n)) - 1.0
    hits = int(np.count_nonzero(np.abs(signs @ values) >= threshold))
    return (hits + 1) / (resamples + 1)


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of a family of p-values, in the order given.

    Sort the m p-values ascending, p_(1) ≤ … ≤ p_(m); the adjusted value of p_(k) is
    max over j ≤ k of min(1, (m − j + 1) · p_(j)) (monotone, never above 1). Rejecting where the
    adjusted value is below α controls the family-wise error rate at α under any dependence.
    None (a test that could not be made) stays None and does not count in m.

    Source: S. Holm (1979), "A simple sequentially rejective multiple test procedure",
    Scandinavian Journal of Statistics 6:65-70.

    Raises ValueError for a value outside [0, 1].
    """
    values = list(p_values)
    present = [(p, i) for i, p in enumerate(values) if p is not None]
    for p, _ in present:
        if isinstance(p, bool) or not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:
            raise ValueError(f"p-values must lie in [0, 1], got {p!r}")
    m = len(present)
    adjusted: list[float | None] = [None] * len(values)
    running = 0.0
    for rank, (p, i) in enumerate(sorted(present)):
        running = max(running, min(1.0, (m - rank) * float(p)))
        adjusted[i] = running
    return adjusted


def clustered_ratio_difference(
    numerators_a: Any,
    denominators_a: Any,
    numerators_b: Any,
    denominators_b: Any,
    item_clusters: Sequence[Hashable],
    *,
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float, float]:
    """The difference of two ratios of sums over the same items, with a cluster-bootstrap interval.

    Each item i carries two numerators and two denominators (for two rates over disjoint sets
    of items: item i's 0/1 outcome and 1 in the set it belongs to, 0 and 0 in the other) and a
    cluster label (its task, say)::

        D = Σ_i numerators_a[i] / Σ_i denominators_a[i]  −  Σ_i numerators_b[i] / Σ_i denominators_b[i]

    Each resample draws as many clusters as there are, with replacement, exactly as
    ``clustered_ratio`` does (``cluster_weights``, ``numpy.random.default_rng(seed)``), every item
    of a drawn cluster with it, and recomputes D on the drawn items; both ratios are recomputed on
    the same draws, so a cluster holding items of both sets moves both together. A resample in
    which either denominator sums to 0 gives NaN and is dropped (as ``cluster_bootstrap`` drops
    degenerate resamples); the interval is the percentile interval of the rest. Returns (D on all
    items, low, high); (NaN, NaN, NaN) when either denominator sums to 0.

    Source: Davison & Hinkley (1997), Bootstrap Methods and their Application, §3.8 (resampling
    clusters); Efron & Tibshirani (1993), ch. 13 (percentile interval).

    Raises ValueError for arrays of different lengths, no items, resamples < 1, a negative seed
    or confidence outside (0, 1).
    """
    arrays = [np.asarray(a, dtype=np.float64)
              for a in (numerators_a, denominators_a, numerators_b, denominators_b)]
    labels = list(item_clusters)
    if not all(a.ndim == 1 and a.size == len(labels) for a in arrays):
        raise ValueError("numerators, denominators and item_clusters must be 1-D and of one length")
    if not labels:
        raise ValueError("clustered_ratio_difference needs at least one item")
    resamples, seed, confidence = _check_resampling(resamples, seed, confidence)
    num_a, den_a, num_b, den_b = arrays
    if float(den_a.sum()) == 0 or float(den_b.sum()) == 0:
        return (math.nan, math.nan, math.nan)
    point = float(num_a.sum()) / float(den_a.sum()) - float(num_b.sum()) / float(den_b.sum())
    weights = cluster_weights(labels, resamples=resamples, seed=seed)
    sums_a, sums_b = weights @ den_a, weights @ den_b
    with np.errstate(invalid="ignore", divide="ignore"):
        estimates = (weights @ num_a) / sums_a - (weights @ num_b) / sums_b
    estimates[(sums_a == 0) | (sums_b == 0)] = math.nan  # x/0 is inf, not NaN, for x ≠ 0
    low, high = _percentile_interval(list(estimates), confidence)
    return (point, low, high)


def clustered_ratios(
    numerators: Any,
    denominators: Any,
    item_clusters: Sequence[Hashable],
    *,
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``clustered_ratio`` for many rows at once, over the same items and the same draws.

    ``numerators`` and ``denominators`` are rows × items (one row per judge, say: 1 where the
    judge caught item i, and 1 where the judge scored it); ``item_clusters`` labels the items.
    Returns (points, lows, highs, units), arrays over rows: row r's (point, low, high) is
    ``clustered_ratio(numerators[r], denominators[r], item_clusters, resamples=…, seed=…,
    confidence=…)`` — the same draws (``cluster_weights``), the same percentile interval, NaN where
    the row's denominators sum to 0 — and units[r] is how many clusters hold a non-zero
    denominator of row r. Each row is summed per cluster first (Y = M · C, C the items × clusters
    indicator), then every resample at once: S = Y · Dᵀ with D[r, k] the times cluster k was drawn,
    so a report of 200 judges needs two matrix products, not 200 bootstraps.

    Every row is resampled over all the clusters the items span, those where it has nothing
    included: a row's share of clusters varies between resamples as a subpopulation's does in a
    survey (domain estimation; J. N. K. Rao & C. F. J. Wu (1988), "Resampling inference with
    complex survey data", JASA 83:231-241). Where a row covers every cluster this is exactly the
    bootstrap of that row alone.

    Source: as ``clustered_ratio`` (Davison & Hinkley 1997, §3.8; Efron & Tibshirani 1993, ch. 13).

    Raises ValueError unless both arrays are 2-D of one shape whose items match the labels, there
    is at least one item, resamples >= 1, seed >= 0 and 0 < confidence < 1.
    """
    numerators = np.asarray(numerators, dtype=np.float64)
    denominators = np.asarray(denominators, dtype=np.float64)
    labels = list(item_clusters)
    if not (numerators.ndim == 2 and numerators.shape == denominators.shape
            and numerators.shape[1] == len(labels)):
        raise ValueError("numerators and denominators must be rows × items arrays of one shape, "
                         "with one cluster label per item")
    if not labels:
        raise ValueError("clustered_ratios needs at least one item")
    resamples, seed, confidence = _check_resampling(resamples, seed, confidence)
    index, size = _cluster_index(labels)
    # Each row summed per cluster (rows × clusters), never through an items × clusters indicator:
    # at 80,000 items each its own cluster that was 51 GB (issue 25 item 8).
    num_k = _sums_by_cluster(numerators, index, size)
    den_k = _sums_by_cluster(denominators, index, size)
    totals = denominators.sum(axis=1)
    # rows × resamples: a report's 800 rows × 2,000 resamples are 13 MB an array
    ratios = np.empty((numerators.shape[0], resamples))
    drawn = np.empty_like(ratios)
    rng = np.random.default_rng(seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        points = np.where(totals == 0, np.nan, numerators.sum(axis=1) / totals)
        # The draws in blocks of resamples (the same stream as one call: each block continues
        # the generator), so the draws matrix is bounded whatever the number of clusters.
        block = max(1, min(resamples, DRAW_BLOCK_VALUES // size))
        for start in range(0, resamples, block):
            stop = min(resamples, start + block)
            draws = _multiplicities(rng.integers(0, size, size=(stop - start, size))).T
            ratios[:, start:stop] = num_k @ draws
            drawn[:, start:stop] = den_k @ draws
        np.divide(ratios, drawn, out=ratios)
        ratios[drawn == 0] = np.nan
    del drawn
    lows, highs = _row_percentile_intervals(ratios, confidence, overwrite=True)
    units = np.count_nonzero(den_k, axis=1)
    return points, lows, highs, units


def _row_percentile_intervals(values: np.ndarray, confidence: float, *,
                              overwrite: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """``_percentile_interval`` of each row of a 2-D array (NaN dropped per row), in one sort
    (in place with ``overwrite``).

    numpy.quantile's "linear" method (Hyndman & Fan's 7th) written out so that rows with NaN need
    no loop and no strided partition: the value at virtual index h = (n − 1)·q of the row's n sorted
    finite values, interpolated as numpy's _lerp does, so the bounds are numpy.quantile's own."""
    counts = np.count_nonzero(~np.isnan(values), axis=1)
    if overwrite:
        values.sort(axis=1)  # NaN sort last
        ordered = values
    else:
        ordered = np.sort(values, axis=1)
    rows = np.arange(values.shape[0])
    last = np.maximum(counts - 1, 0)
    tail = (1.0 - confidence) / 2.0
    bounds = []
    for q in (tail, 1.0 - tail):
        virtual = (counts - 1) * q
        previous = np.floor(virtual)
        top = virtual >= counts - 1
        below = np.where(top, last, np.maximum(previous, 0)).astype(np.intp)
        above = np.where(top, last, previous + 1).astype(np.intp)
        a, b = ordered[rows, below], ordered[rows, above]
        gamma = virtual - previous
        diff = b - a
        value = np.where(gamma >= 0.5, b - diff * (1 - gamma), a + diff * gamma)
        value = np.where(top, a, value)
        bounds.append(np.where(counts == 0, np.nan, value))
    return bounds[0], bounds[1]


# --- stratified samples --------------------------------------------------------------------------


def _check_strata(strata: Any) -> list[tuple[int, int, int]]:
    """The strata as (successes, sampled, population) triples of integers, 0 ≤ k ≤ n ≤ N, else raise."""
    rows = []
    for index, stratum in enumerate(strata):
        try:
            successes, sampled, population = stratum
        except (TypeError, ValueError):
            raise ValueError(f"stratum {index} must be (successes, sampled, population), "
                             f"got {stratum!r}") from None
        successes = _check_count(f"stratum {index}: successes", successes)
        sampled = _check_count(f"stratum {index}: sampled", sampled)
        population = _check_count(f"stratum {index}: population", population)
        if not successes <= sampled <= population:
            raise ValueError(f"stratum {index} needs successes <= sampled <= population, got "
                             f"{successes}, {sampled}, {population}")
        rows.append((successes, sampled, population))
    if not rows:
        raise ValueError("a stratified rate needs at least one stratum")
    return rows


def _numbered(indices: list[int]) -> str:
    return ("stratum " if len(indices) == 1 else "strata ") + ", ".join(map(str, indices))


def _stratified_withheld(rows: list[tuple[int, int, int]]) -> str | None:
    if sum(population for _, _, population in rows) == 0:
        return "no estimate: the strata hold no reviews"
    unsampled = [i for i, (_, n, population) in enumerate(rows) if population > 0 and n == 0]
    if unsampled:
        return (f"no estimate: {_numbered(unsampled)} holds reviews of which none was sampled, "
                "so the rate over the whole output cannot be estimated")
    resampled = [(i, k, n) for i, (k, n, population) in enumerate(rows) if 0 < n < population]
    single = [i for i, _, n in resampled if n < 2]
    if single:
        return (f"no interval: {_numbered(single)} has a single sampled review of several, "
                "so its variance cannot be estimated")
    alike = [i for i, k, n in resampled if k in (0, n)]
    if alike:
        return (f"no interval: the sampled outcomes of {_numbered(alike)} are all alike, so the "
                "bootstrap sees no variance there and its interval would be too narrow")
    units = sum(n for _, _, n in resampled)
    if 0 < units < MIN_BOOTSTRAP_UNITS:
        return (f"no interval: {units} sampled reviews in the strata not audited in full, "
                f"fewer than {MIN_BOOTSTRAP_UNITS}")
    return None


def stratified_rate_withheld(strata: Any) -> str | None:
    """Why ``stratified_rate`` gives no estimate or no interval for these strata, or None.

    The reason starts "no estimate: " when the point is NaN (no reviews; a stratum holding reviews
    of which none was sampled) and "no interval: " when only the interval is (a stratum with a
    single sampled review of several; a stratum whose sampled outcomes are all alike; fewer than
    ``MIN_BOOTSTRAP_UNITS`` sampled reviews in the strata not audited in full), naming the strata
    by their position: what the report prints instead of the figure. Raises as ``stratified_rate``.
    """
    return _stratified_withheld(_check_strata(strata))


def stratified_rate(
    strata: Sequence[tuple[int, int, int]],
    *,
    resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> tuple[float, float, float]:
    """A rate over a whole population sampled by strata, with a bootstrap interval within strata.

    Each stratum h gives (k_h, n_h, N_h): k_h successes among the n_h units sampled from its N_h
    (for a reasons audit: the reasons found grounded, the reviews audited, and the reviewer's
    reviews in that stratum). With N = Σ N_h, the stratified estimator of the rate over all N::

        p̂ = Σ_h (N_h / N) · k_h / n_h

    Each stratum's rate is weighted by its share of the population, so strata sampled at unequal
    fractions n_h / N_h count as they are, not as sampled: the pooled Σ k_h / Σ n_h estimates
    the whole population's rate only when every fraction is the same.

    The interval is a percentile bootstrap that resamples within strata, as the sample was drawn:
    each resample draws, in every stratum with 0 < n_h < N_h (in the order given), n_h units with
    replacement from its n_h sampled 0/1 outcomes, ``numpy.random.default_rng(seed)``'s
    ``integers(0, n_h, size=(resamples, n_h))``, an index below k_h a success (the outcomes
    listed successes first), so p*_h is the share of draws below k_h. The strata were sampled
    without replacement from finite populations, so each stratum's deviation is rescaled by
    Rao & Wu's factor for that (resampling n_h of n_h)::

        C_h = √( n_h (1 − n_h/N_h) / (n_h − 1) )
        p̂*  = p̂ + Σ_h (N_h / N) · C_h · (p*_h − k_h/n_h)

    whose bootstrap variance is Σ_h (N_h/N)² (1 − n_h/N_h) s_h² / n_h (s_h² the stratum's sample
    variance), the textbook unbiased variance of the stratified estimator; a stratum audited in
    full (n_h = N_h) is known exactly, adds no variance and draws nothing. The bounds are the
    (1 ∓ confidence)/2 quantiles of the resampled p̂* (``numpy.quantile``, linear), clipped to
    [0, 1] (C_h exceeds 1 when n_h/N_h < 1/n_h, so a resampled rate may pass 1 by a little).
    Wilson's interval is not used: it bounds one binomial proportion, not a weighted sum of them.

    Returns (p̂, low, high). ``stratified_rate_withheld`` gives the reason whenever any is NaN:
    - (NaN, NaN, NaN) when the strata hold no reviews (N = 0), and when a stratum holds reviews
      but none was sampled (N_h > 0, n_h = 0): the rate over the whole output is then not
      estimated. It is not renormalised over the sampled strata, which would be the rate of a
      different population passed off as the whole; a caller who wants that passes only those
      strata and says so. A stratum with N_h = 0 (and so n_h = 0) weighs nothing and is ignored.
    - (p̂, NaN, NaN) when the bootstrap cannot be honest: a stratum not audited in full has a
      single sampled unit (no variance can be estimated from one outcome) or outcomes all alike
      (k_h = 0 or k_h = n_h: every resample repeats them, so that stratum's uncertainty would be
      left out and the interval too narrow); or the strata not audited in full hold fewer than
      ``MIN_BOOTSTRAP_UNITS`` sampled units (docs/statistics.md).
    - (p̂, p̂, p̂) when every stratum is audited in full: the rate is then known, not estimated.

    Source: W. G. Cochran (1977), Sampling Techniques, 3rd ed., §§5.2-5.3 (the stratified
    estimator and its variance); J. N. K. Rao & C. F. J. Wu (1988), "Resampling inference with
    complex survey data", JASA 83:231-241 (the rescaling bootstrap within strata); Efron &
    Tibshirani (1993), ch. 13 (percentile interval). docs/statistics.md gives its measured coverage.

    Raises ValueError for no strata, a stratum that is not three integers with
    0 ≤ k_h ≤ n_h ≤ N_h, resamples < 1, a negative seed or confidence outside (0, 1).
    """
    rows = _check_strata(strata)
    resamples, seed, confidence = _check_resampling(resamples, seed, confidence)
    reason = _stratified_withheld(rows)
    if reason is not None and reason.startswith("no estimate"):
        return (math.nan, math.nan, math.nan)
    total = sum(population for _, _, population in rows)
    point = sum(population / total * (k / n) for k, n, population in rows if population > 0)
    if reason is not None:
        return (point, math.nan, math.nan)
    resampled = [(k, n, population) for k, n, population in rows if n < population]
    if not resampled:
        return (point, point, point)
    rng = np.random.default_rng(seed)
    estimates = np.full(resamples, point)
    for k, n, population in resampled:
        rates = np.count_nonzero(rng.integers(0, n, size=(resamples, n)) < k, axis=1) / n
        scale = math.sqrt(n * (1.0 - n / population) / (n - 1))
        estimates += population / total * scale * (rates - k / n)
    low, high = _percentile_interval(list(estimates), confidence)
    return (point, max(0.0, low), min(1.0, high))


# --- decision rules ------------------------------------------------------------------------------

RULE_OPERATORS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge,
    ">": operator.gt,
    "<=": operator.le,
    "<": operator.lt,
    "==": operator.eq,
    "!=": operator.ne,
}


def evaluate_rule(value: float, op: str, threshold: float) -> bool:
    """Whether ``value op threshold`` holds, for a preregistered decision rule.

    ``op`` is one of ``>=``, ``>``, ``<=``, ``<``, ``==``, ``!=`` (``RULE_OPERATORS``); the
    comparison is exact, with no tolerance. A value that could not be computed (NaN or None) never
    fires a rule, for every operator including ``!=``: a rule must not fire on missing data.

    Raises ValueError for an unknown operator or a threshold that is not a finite number.
    """
    try:
        compare = RULE_OPERATORS[op]
    except (KeyError, TypeError):
        allowed = ", ".join(RULE_OPERATORS)
        raise ValueError(f"unknown rule operator {op!r}; allowed: {allowed}") from None
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, numbers.Real)
        or not math.isfinite(threshold)
    ):
        raise ValueError(f"rule threshold must be a finite number, got {threshold!r}")
    if value is None:
        return False
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"rule value must be a number (or NaN/None when missing), got {value!r}")
    if math.isnan(value):
        return False
    return bool(compare(float(value), float(threshold)))
