"""reports.stats.stratified_rate: a reviewer's rate over its whole output from a stratified sample
(issue 30, reasons sessions: each stratum's audited reviews drawn from the reviewer's reviews in it).

The point is checked against the estimator computed by hand, on strata sampled at unequal fractions
where the pooled rate is far off; the interval against an independent computation (a plain loop
over resamples with the same draws) and by a coverage simulation drawing samples without
replacement from a finite population, as a session draws them; then the edge cases, each with the
reason the report prints.
"""

import math
from fractions import Fraction

import numpy as np
import pytest

from reports.stats import MIN_BOOTSTRAP_UNITS, stratified_rate, stratified_rate_withheld

# No database, no socket, no process: run once (tests/support/pure.py).
pytestmark = pytest.mark.pure

# One reviewer's 210 reviews in three strata, sampled at fractions 1/10, 1/4 and 2/3: the stratum
# with the highest rate is the smallest and the most sampled.
STRATA = [(3, 12, 120), (6, 15, 60), (19, 20, 30)]


# --- the point -----------------------------------------------------------------------------------


def test_the_point_weights_each_stratum_s_rate_by_its_share_of_the_reviews():
    # By hand: N = 210; 120/210 · 3/12 + 60/210 · 6/15 + 30/210 · 19/20
    #   = 4/7 · 1/4 + 2/7 · 2/5 + 1/7 · 19/20 = 20/140 + 16/140 + 19/140 = 55/140 = 11/28.
    assert (Fraction(120, 210) * Fraction(3, 12) + Fraction(60, 210) * Fraction(6, 15)
            + Fraction(30, 210) * Fraction(19, 20)) == Fraction(11, 28)
    point, low, high = stratified_rate(STRATA)
    assert point == pytest.approx(11 / 28, abs=1e-15)
    # The pooled rate, 28 of 47 sampled, is 0.596: it counts the oversampled third stratum (2/3 of
    # it audited, rate 0.95) as 20 of 47 units when it is 30 of 210 reviews. Weighting matters.
    pooled = (3 + 6 + 19) / (12 + 15 + 20)
    assert pooled == pytest.approx(0.5957, abs=1e-4)
    assert pooled - point > 0.2
    assert low < point < high


def test_with_equal_sampling_fractions_the_point_is_the_pooled_rate():
    strata = [(3, 10, 100), (8, 10, 100), (2, 5, 50)]
    assert stratified_rate(strata)[0] == pytest.approx(13 / 25, abs=1e-15)


# --- the interval --------------------------------------------------------------------------------


def reference_interval(strata, *, resamples, seed, confidence=0.95):
    """The percentile interval of stratified_rate, computed apart: every resample's stratified
    estimate from its resampled 0/1 outcomes, one resample at a time, then the linear quantile
    (Hyndman & Fan's 7th) by hand.

    Same draws as the function's documented ones: one generator, each stratum sampled in part
    drawing its (resamples × n_h) indices in the order given, a census stratum (n_h = N_h)
    drawing nothing; each resampled deviation scaled by Rao & Wu's √(n_h (1 − n_h/N_h)/(n_h − 1))."""
    rng = np.random.default_rng(seed)
    total = sum(population for _, _, population in strata)
    drawn = {}
    for h, (_, n, population) in enumerate(strata):
        if n < population:
            drawn[h] = rng.integers(0, n, size=(resamples, n))
    estimates = []
    for r in range(resamples):
        estimate = 0.0
        for h, (k, n, population) in enumerate(strata):
            rate = k / n
            if h in drawn:
                outcomes = np.array([1] * k + [0] * (n - k))
                resampled = outcomes[drawn[h][r]].mean()
                rate += math.sqrt(n * (1 - n / population) / (n - 1)) * (resampled - k / n)
            estimate += population / total * rate
        estimates.append(estimate)
    estimates.sort()

    def quantile(q):
        virtual = (resamples - 1) * q
        below = math.floor(virtual)
        if below >= resamples - 1:
            return estimates[-1]
        return estimates[below] + (virtual - below) * (estimates[below + 1] - estimates[below])

    tail = (1 - confidence) / 2
    return max(0.0, quantile(tail)), min(1.0, quantile(1 - tail))


@pytest.mark.parametrize("strata", [
    STRATA,
    # a stratum audited in full between two sampled in part: it draws nothing and adds no variance
    [(3, 12, 120), (7, 7, 7), (19, 20, 30)],
], ids=["three-sampled", "with-a-census-stratum"])
@pytest.mark.parametrize("seed", [0, 7])
def test_the_interval_is_the_bootstrap_computed_apart(strata, seed):
    point, low, high = stratified_rate(strata, resamples=500, seed=seed)
    ref_low, ref_high = reference_interval(strata, resamples=500, seed=seed)
    assert (low, high) == (pytest.approx(ref_low, abs=1e-12), pytest.approx(ref_high, abs=1e-12))
    assert low < point < high


def test_the_interval_depends_on_the_seed_and_is_reproduced_by_it():
    assert stratified_rate(STRATA, seed=3) == stratified_rate(STRATA, seed=3)
    assert stratified_rate(STRATA, seed=3)[1:] != stratified_rate(STRATA, seed=4)[1:]


def test_the_bootstrap_variance_is_the_stratified_estimator_s_with_the_finite_population_correction():
    # The resampled estimates' spread matches Cochran's variance of the stratified estimator,
    # Σ (N_h/N)² (1 − n_h/N_h) s_h²/n_h with s_h² = n_h p_h (1 − p_h)/(n_h − 1): the 95 % interval
    # is about ±1.96 of its square root wide. Without the correction (1 − n_h/N_h) the third
    # stratum, two thirds audited, would count three times its variance.
    total = sum(population for _, _, population in STRATA)
    variance = sum((population / total) ** 2 * (1 - n / population)
                   * (n * (k / n) * (1 - k / n) / (n - 1)) / n for k, n, population in STRATA)
    _, low, high = stratified_rate(STRATA, resamples=20000)
    assert (high - low) / (2 * 1.96 * math.sqrt(variance)) == pytest.approx(1.0, abs=0.06)


# How often the interval holds the rate over the whole output, for samples drawn as a session draws
# them (without replacement, a fixed number per stratum) at unequal fractions. With 600 simulated
# samples a coverage near 0.95 has a standard error of 0.0089; ±0.03 is over three.
# (successes, reviews) per stratum, and how many are sampled from each:
FRACTIONS_SMALL_WHERE_HEAVY = ([(30, 120), (40, 60), (27, 30)], [12, 15, 20])  # 1/10, 1/4, 2/3
FRACTIONS_LARGE_WHERE_HEAVY = ([(55, 100), (12, 40)], [60, 12])  # 3/5, 3/10
SIMULATED = 600
TOLERANCE = 0.03


def samples(design):
    population, sampled = design
    rng = np.random.default_rng(30)
    for _ in range(SIMULATED):
        yield [(int(rng.hypergeometric(s, reviews - s, n)), n, reviews)
               for (s, reviews), n in zip(population, sampled, strict=True)]


def coverage(design, interval) -> tuple[float, int]:
    """The share of the given intervals that hold the whole output's rate, and how many were
    given (NaN bounds: withheld)."""
    population, _ = design
    truth = sum(s for s, _ in population) / sum(reviews for _, reviews in population)
    held = given = 0
    for trial, strata in enumerate(samples(design)):
        low, high = interval(strata, trial)
        if math.isnan(low):
            continue
        given += 1
        held += low - 1e-12 <= truth <= high + 1e-12
    return held / given, given


def the_function(strata, seed):
    return stratified_rate(strata, resamples=1000, seed=seed)[1:]


def plain_resampling(strata, seed):
    """The same bootstrap without the rescaling: each stratum's outcomes resampled as if from an
    unbounded population (withheld as the function withholds)."""
    if stratified_rate_withheld(strata):
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    total = sum(population for _, _, population in strata)
    estimates = np.zeros(1000)
    for k, n, population in strata:
        estimates += population / total * np.count_nonzero(
            rng.integers(0, n, size=(1000, n)) < k, axis=1) / n
    low, high = np.quantile(estimates, [0.025, 0.975])
    return (float(low), float(high))


@pytest.mark.parametrize("design", [FRACTIONS_SMALL_WHERE_HEAVY, FRACTIONS_LARGE_WHERE_HEAVY],
                         ids=["small-fractions-where-heavy", "large-fractions-where-heavy"])
def test_the_interval_covers_the_whole_output_s_rate_at_unequal_sampling_fractions(design):
    # Measured: 0.944 of 568 given (32 samples had a stratum all alike), 0.943 of 598.
    held, given = coverage(design, the_function)
    assert given >= 0.9 * SIMULATED
    assert held == pytest.approx(0.95, abs=TOLERANCE)


def test_the_simulation_sees_plain_resampling_overcover_where_heavy_strata_are_mostly_audited():
    # The detector fires: without the finite-population rescaling the interval counts a stratum
    # three fifths audited as if drawn from an unbounded population, and holds the truth about 99 %
    # of the time instead of 95 % (too wide). Where the heavy strata are sampled at a tenth the two
    # agree (0.954 against 0.944): the rescaling matters as the fractions grow.
    held, _ = coverage(FRACTIONS_LARGE_WHERE_HEAVY, plain_resampling)
    assert held > 0.95 + TOLERANCE


# --- edge cases ----------------------------------------------------------------------------------


def test_strata_audited_in_full_give_the_rate_itself():
    point, low, high = stratified_rate([(3, 4, 4), (1, 6, 6)])
    assert point == low == high == pytest.approx(0.4, abs=1e-15)
    assert stratified_rate_withheld([(3, 4, 4), (1, 6, 6)]) is None


def test_a_stratum_holding_reviews_none_of_them_sampled_leaves_the_rate_undefined():
    strata = [(3, 12, 120), (0, 0, 60), (19, 20, 30)]
    point, low, high = stratified_rate(strata)
    assert math.isnan(point) and math.isnan(low) and math.isnan(high)
    assert stratified_rate_withheld(strata) == (
        "no estimate: stratum 1 holds reviews of which none was sampled, so the rate over the "
        "whole output cannot be estimated")


def test_no_reviews_at_all_leave_the_rate_undefined():
    assert all(math.isnan(x) for x in stratified_rate([(0, 0, 0), (0, 0, 0)]))
    assert stratified_rate_withheld([(0, 0, 0)]) == "no estimate: the strata hold no reviews"


def test_an_empty_stratum_weighs_nothing():
    assert stratified_rate(STRATA + [(0, 0, 0)]) == stratified_rate(STRATA)
    assert stratified_rate([(0, 0, 0)] + STRATA)[0] == stratified_rate(STRATA)[0]


def test_a_single_sampled_review_of_several_gives_the_point_and_no_interval():
    strata = [(3, 12, 120), (1, 1, 60), (19, 20, 30)]
    point, low, high = stratified_rate(strata)
    assert point == pytest.approx(120 / 210 * 3 / 12 + 60 / 210 + 30 / 210 * 19 / 20, abs=1e-15)
    assert math.isnan(low) and math.isnan(high)
    assert stratified_rate_withheld(strata).startswith("no interval: stratum 1 has a single")


@pytest.mark.parametrize("alike", [(0, 15, 60), (15, 15, 60)], ids=["none", "all"])
def test_a_stratum_whose_sample_is_all_alike_gives_the_point_and_no_interval(alike):
    # The bootstrap would repeat its 15 outcomes in every resample: that stratum's uncertainty
    # would be left out of the interval, so none is given.
    strata = [(3, 12, 120), alike, (19, 20, 30)]
    point, low, high = stratified_rate(strata)
    assert not math.isnan(point)
    assert math.isnan(low) and math.isnan(high)
    assert stratified_rate_withheld(strata) == (
        "no interval: the sampled outcomes of stratum 1 are all alike, so the bootstrap sees no "
        "variance there and its interval would be too narrow")


def test_a_stratum_all_alike_but_audited_in_full_is_known_and_withholds_nothing():
    strata = [(3, 12, 120), (15, 15, 15), (19, 20, 30)]
    point, low, high = stratified_rate(strata)
    assert low < point < high


def test_fewer_sampled_units_than_the_bootstrap_needs_give_no_interval():
    strata = [(3, 8, 120), (6, 11, 60), (20, 20, 20)]  # 19 units resampled; the census adds none
    assert 8 + 11 < MIN_BOOTSTRAP_UNITS
    point, low, high = stratified_rate(strata)
    assert not math.isnan(point) and math.isnan(low) and math.isnan(high)
    assert stratified_rate_withheld(strata) == (
        "no interval: 19 sampled reviews in the strata not audited in full, fewer than 20")
    assert not math.isnan(stratified_rate([(3, 9, 120), (6, 11, 60)])[1])


def test_the_bounds_stay_within_zero_and_one():
    # Sampling 20 of 1,000, the rescaling factor is above 1 (√(20 · 0.98 / 19) = 1.016): a
    # resample of 20 successes of 20 maps to 1.0008, and about a third of resamples are such.
    point, low, high = stratified_rate([(19, 20, 1000)])
    assert point == 0.95
    assert 0.0 <= low < point < high == 1.0


@pytest.mark.parametrize("strata", [
    [],
    [(3, 12)],
    [(3, 12, 120, 1)],
    [5],
    [(13, 12, 120)],
    [(3, 121, 120)],
    [(-1, 12, 120)],
    [(True, 12, 120)],
    [(3.0, 12, 120)],
])
def test_malformed_strata_are_refused(strata):
    with pytest.raises(ValueError):
        stratified_rate(strata)
    with pytest.raises(ValueError):
        stratified_rate_withheld(strata)


@pytest.mark.parametrize("options", [{"resamples": 0}, {"seed": -1}, {"confidence": 1.0}])
def test_bad_resampling_options_are_refused(options):
    with pytest.raises(ValueError):
        stratified_rate(STRATA, **options)
