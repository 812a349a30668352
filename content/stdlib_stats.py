"""The statistics computed in the processes that serve pages, with the standard library only.

numpy and scipy never load in a process that serves judges and hosts (reports/offprocess.py builds
the report in a process of its own). Two pages still compute a little statistics there:

- a judge's scorecard (judging.selectors.judge.judge_scorecard) scores with content.scoring.rate,
  whose Wilson interval is `wilson_95`; reports.stats.wilson_interval computes its bounds with the
  same `wilson_bounds`, so the scorecard's intervals and the report's are the same floats;
- the host's sample-size planner (host/views/blinding.py) prints `paired_sample_plan`, whose
  normal quantiles come from statistics.NormalDist (within 1e-15 of scipy.stats.norm.ppf;
  tests/reports/test_stats.py compares them).

reports.stats re-exports all of these, for the report and for anyone reading the statistics there.
"""

import math
import numbers
from statistics import NormalDist

# z_{0.975}, the standard normal quantile of a two-sided 95% interval: exactly the float
# scipy.stats.norm.ppf(0.975) gives (tests/reports/test_stats.py checks it against scipy).
Z_95 = 1.959963984540054


def wilson_bounds(successes: int, n: int, z: float) -> tuple[float, float]:
    """The Wilson score interval of successes/n for the normal quantile z; the formula and its
    sources are reports.stats.wilson_interval's. The caller has checked 0 <= successes <= n,
    n >= 1, whole numbers. Bounds clipped to [0, 1], exactly 0 at k = 0 and 1 at k = n."""
    p = successes / n
    z2 = z * z
    denominator = 1.0 + z2 / n
    centre = (p + z2 / (2.0 * n)) / denominator
    halfwidth = (z / denominator) * math.sqrt(p * (1.0 - p) / n + z2 / (4.0 * n * n))
    low = 0.0 if successes == 0 else max(0.0, centre - halfwidth)
    high = 1.0 if successes == n else min(1.0, centre + halfwidth)
    return (low, high)


def wilson_95(successes: int, n: int) -> tuple[float, float]:
    """reports.stats.wilson_interval(successes, n) at 95%, without numpy or scipy. Raises
    ValueError unless 0 <= successes <= n are whole numbers (bool refused) and n >= 1."""
    for name, value in (("successes", successes), ("n", n)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    if successes > n:
        raise ValueError(f"successes must be at most n, got successes={successes} > n={n}")
    if n == 0:
        raise ValueError("wilson_95 needs n >= 1: with no trials there is no proportion")
    return wilson_bounds(int(successes), int(n), Z_95)


def check_probability(name: str, value) -> float:
    """Return ``value`` as a float if it lies strictly between 0 and 1, else raise ValueError."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number strictly between 0 and 1, got {value!r}")
    value = float(value)
    if not 0.0 < value < 1.0:  # also false for NaN
        raise ValueError(f"{name} must be strictly between 0 and 1, got {value}")
    return value


def paired_sample_size(psi: float, delta: float, alpha: float = 0.05, power: float = 0.80) -> int:
    """Number of pairs for McNemar's test to detect a difference delta with the given power.

    With ψ the expected share of discordant pairs (p10 + p01), δ the difference in proportions
    (p10 - p01), two-sided level α and power 1 - β::

        n = ( z_{1-α/2} · √ψ  +  z_{1-β} · √(ψ - δ²) )² / δ²

    rounded up to the next whole pair (z from ``statistics.NormalDist().inv_cdf``; a value within
    1e-9 of an integer is not pushed up by rounding noise). E.g. ψ = 0.25, δ = 0.15 gives 85;
    ψ = 0.10, δ = 0.05 gives 312.

    Source: R. J. Connor (1987), "Sample size for testing differences in proportions for the
    paired-sample design", Biometrics 43:207-211.

    Raises ValueError unless 0 < δ, δ² < ψ <= 1, 0 < alpha < 1 and 0 < power < 1.
    """
    return paired_sample_plan(psi, delta, alpha=alpha, power=power)["n"]


def paired_sample_plan(psi: float, delta: float, alpha: float = 0.05, power: float = 0.80) -> dict:
    """paired_sample_size with its working shown, as the host's planner prints it: the two z
    values and n before rounding up. Raises ValueError as paired_sample_size does."""
    for name, value in (("psi", psi), ("delta", delta)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
            raise ValueError(f"{name} must be a number, got {value!r}")
    psi = float(psi)
    delta = float(delta)
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be strictly between 0 and 1, got {delta}")
    if not 0.0 < psi <= 1.0:
        raise ValueError(f"psi (share of discordant pairs) must be in (0, 1], got {psi}")
    if not delta * delta < psi:
        raise ValueError(
            f"psi must exceed delta squared (the discordant share bounds the difference): "
            f"psi={psi}, delta²={delta * delta}"
        )
    alpha = check_probability("alpha", alpha)
    power = check_probability("power", power)
    normal = NormalDist()
    z_alpha, z_power = normal.inv_cdf(1.0 - alpha / 2.0), normal.inv_cdf(power)
    exact = (z_alpha * math.sqrt(psi) + z_power * math.sqrt(psi - delta * delta)) ** 2 / (delta * delta)
    return {"n": max(1, math.ceil(exact - 1e-9)), "psi": psi, "delta": delta, "alpha": alpha,
            "power": power, "z_alpha": z_alpha, "z_power": z_power, "exact": exact}
