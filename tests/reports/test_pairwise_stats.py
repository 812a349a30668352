"""Tests for reports.pairwise, the statistics of a pairs session (issue 31): pure functions, no
database.

Every figure is checked against an independent computation written out here: the Bradley–Terry
fit against scipy.optimize on the penalised likelihood (the product fits by MM iterations), the
sign-flip p by enumerating every flip, the style fit against scipy.optimize on its likelihood, and
the counts (position bias, inconsistency, accuracy) by hand on small made-up data.
"""

import itertools
import math

import numpy as np
import pytest
import scipy.optimize
import scipy.special
import scipy.stats

from reports import pairwise, stats
from reports.pairwise import (
    PRIOR_GAMES,
    bradley_terry,
    bradley_terry_bootstrap,
    order_inconsistency,
    pairwise_accuracy,
    phase_shift,
    position_bias,
    preference_records,
    style_fit,
)

# No database, no socket, no process: run once (tests/support/pure.py).
pytestmark = pytest.mark.pure


# --- an independent Bradley–Terry fit ----------------------------------------------------------


def independent_fit(records, builders, prior_games):
    """The penalised maximum-likelihood strengths by scipy.optimize (Newton with the exact Hessian),
    written from the model, not from the product's code: P(a over b) = σ(θ_a − θ_b), a tie half a
    win each; each builder plays `prior_games` virtual games against an opponent of θ = 0, half
    won. Returns θ shifted to mean 0."""
    k = len(builders)
    at = {b: i for i, b in enumerate(builders)}
    a = np.array([at[r[0]] for r in records], dtype=int)
    b = np.array([at[r[1]] for r in records], dtype=int)
    s = np.array([r[2] for r in records], dtype=float)

    def objective(theta):
        d = theta[a] - theta[b]
        # −log-likelihood of the comparisons: s·log σ(d) + (1 − s)·log σ(−d)
        nll = -np.sum(s * -np.logaddexp(0, -d) + (1 - s) * -np.logaddexp(0, d))
        # the prior: g/2 wins and g/2 losses against θ = 0
        nll += prior_games / 2 * np.sum(np.logaddexp(0, -theta) + np.logaddexp(0, theta))
        p = scipy.special.expit(d)
        grad = np.zeros(k)
        np.add.at(grad, a, -(s - p))
        np.add.at(grad, b, s - p)
        grad += prior_games / 2 * (scipy.special.expit(theta) - scipy.special.expit(-theta))
        w = p * (1 - p)
        hess = np.zeros((k, k))
        np.add.at(hess, (a, a), w)
        np.add.at(hess, (b, b), w)
        np.add.at(hess, (a, b), -w)
        np.add.at(hess, (b, a), -w)
        q = scipy.special.expit(theta)
        hess[np.diag_indices(k)] += prior_games * q * (1 - q)
        return nll, grad, hess

    fit = scipy.optimize.minimize(lambda t: objective(t)[0], np.zeros(k),
                                  jac=lambda t: objective(t)[1], hess=lambda t: objective(t)[2],
                                  method="trust-exact", options={"gtol": 1e-10})
    # the smallest curvature is at least the prior's, g·σ(θ)(1 − σ(θ)): a gradient this small puts
    # θ within about 1e-8 of the maximum, whatever scipy says of its last step
    assert np.max(np.abs(objective(fit.x)[1])) < 1e-9, fit.message
    return fit.x - fit.x.mean()


def simulate(rng, theta, tasks, judges, *, tie_share=0.0, pairs=None):
    """Every pair of builders (or `pairs`) on every task, judged by each judge once."""
    names = [f"b{i}" for i in range(len(theta))]
    records = []
    for t in range(tasks):
        for i, j in pairs or itertools.combinations(range(len(theta)), 2):
            for judge in range(judges):
                if rng.random() < tie_share:
                    score = 0.5
                else:
                    score = 1.0 if rng.random() < scipy.special.expit(theta[i] - theta[j]) else 0.0
                records.append((names[i], names[j], score, f"t{t}", f"j{judge}"))
    return records, names


def test_mm_agrees_with_an_independent_penalised_fit():
    rng = np.random.default_rng(31)
    theta = np.array([1.2, 0.4, 0.0, -0.3, -1.5])
    records, names = simulate(rng, theta, 12, 2, tie_share=0.15)
    # an unbalanced design: drop a third of the comparisons at random
    records = [r[:3] for r in records if rng.random() > 1 / 3]
    fit = bradley_terry(records, names)
    assert fit["converged"]
    assert np.max(np.abs(np.asarray(fit["strengths"]) - independent_fit(records, names,
                                                                       PRIOR_GAMES))) < 1e-6
    assert abs(sum(fit["strengths"])) < 1e-12
    # another prior, the same agreement: the prior is the one written out above, at any weight
    light = bradley_terry(records, names, prior=0.25)
    assert np.max(np.abs(np.asarray(light["strengths"]) - independent_fit(records, names,
                                                                         0.25))) < 1e-6
    # and the prior matters: a lighter one spreads the strengths
    assert np.ptp(light["strengths"]) > np.ptp(fit["strengths"])


def test_the_fit_does_not_depend_on_how_records_or_builders_are_written():
    rng = np.random.default_rng(6)
    records, names = simulate(rng, np.array([0.6, 0.1, -0.7]), 8, 1, tie_share=0.2)
    records = [r[:3] for r in records]
    fit = bradley_terry(records, names)
    flipped = bradley_terry([(b, a, 1 - s) for a, b, s in records], names)
    assert flipped["strengths"] == pytest.approx(fit["strengths"], abs=1e-10)
    reordered = bradley_terry(records[::-1], names[::-1])
    assert reordered["strengths"][::-1] == pytest.approx(fit["strengths"], abs=1e-10)
    assert reordered["comparisons"][::-1] == fit["comparisons"]


def test_counts_per_builder():
    records = [("A", "B", 1), ("A", "B", 0.5), ("B", "C", 0), ("C", "A", 1), ("A", "C", 0.5)]
    fit = bradley_terry(records, ["A", "B", "C"])
    assert fit["comparisons"] == [4, 3, 3]
    assert fit["wins"] == [1, 0, 2]
    assert fit["ties"] == [2, 1, 1]
    assert fit["losses"] == [1, 2, 0]
    assert fit["score"] == [2.0, 0.5, 2.5]


def test_a_builder_that_never_wins_stays_finite():
    records = [("A", "B", 1)] * 5 + [("A", "C", 1)] * 6 + [("B", "C", 1)] * 7 + [("A", "B", 0)] * 2
    fit = bradley_terry(records, ["A", "B", "C"])
    assert fit["converged"]
    assert all(math.isfinite(s) for s in fit["strengths"])
    assert fit["strengths"][0] > fit["strengths"][1] > fit["strengths"][2]
    assert fit["wins"][2] == 0
    independent = independent_fit(records, ["A", "B", "C"], PRIOR_GAMES)
    assert np.max(np.abs(np.asarray(fit["strengths"]) - independent)) < 1e-6
    # the weaker the prior, the further the never-winner sinks, still finite
    assert bradley_terry(records, ["A", "B", "C"], prior=0.1)["strengths"][2] < fit["strengths"][2]


def test_ties_count_half_a_win_each():
    """Two ties between A and B weigh as one win each way: the same fit."""
    base = [("A", "C", 1), ("B", "C", 1), ("C", "A", 1), ("A", "C", 1)]
    with_ties = bradley_terry(base + [("A", "B", 0.5), ("B", "A", 0.5)], ["A", "B", "C"])
    with_split = bradley_terry(base + [("A", "B", 1), ("A", "B", 0)], ["A", "B", "C"])
    assert with_ties["strengths"] == pytest.approx(with_split["strengths"], abs=1e-10)
    assert with_ties["ties"] == [2, 2, 0]
    assert with_split["ties"] == [0, 0, 0]
    # a tie is not nothing: the two games pull A and B together, against the fit without them
    alone = bradley_terry(base, ["A", "B", "C"])
    gap = abs(alone["strengths"][0] - alone["strengths"][1])
    assert abs(with_ties["strengths"][0] - with_ties["strengths"][1]) < gap - 1e-3


def test_records_are_checked():
    with pytest.raises(ValueError, match="at least two builders"):
        bradley_terry([], ["A"])
    with pytest.raises(ValueError, match="distinct"):
        bradley_terry([], ["A", "A"])
    with pytest.raises(ValueError, match="not among the builders"):
        bradley_terry([("A", "Z", 1)], ["A", "B"])
    with pytest.raises(ValueError, match="compared with itself"):
        bradley_terry([("A", "A", 1)], ["A", "B"])
    with pytest.raises(ValueError, match="score_a must be"):
        bradley_terry([("A", "B", 0.7)], ["A", "B"])
    with pytest.raises(ValueError, match="score_a must be"):
        bradley_terry([("A", "B", True)], ["A", "B"])
    with pytest.raises(ValueError, match="prior"):
        bradley_terry([], ["A", "B"], prior=0)
    with pytest.raises(ValueError, match="5 fields"):
        bradley_terry_bootstrap([("A", "B", 1)], ["A", "B"])
    with pytest.raises(ValueError, match="resamples"):
        bradley_terry_bootstrap([], ["A", "B"], resamples=0)


def test_no_records_gives_zero_strengths():
    fit = bradley_terry([], ["A", "B", "C"])
    assert fit["strengths"] == [0.0, 0.0, 0.0]
    assert fit["comparisons"] == [0, 0, 0]


# --- the bootstrap ------------------------------------------------------------------------------


def test_known_strengths_are_recovered_within_their_intervals():
    """4 builders, 40 tasks, 3 judges, every pair on every task: each true strength (mean 0) lies
    in its interval, and so does each true difference; the clear differences are apart. Each of
    the ten intervals covers about 95 % of the time, all ten together 0.725 (measured over data
    seeds 0-39); the seed here, 2026, was the first one tried."""
    theta = np.array([0.9, 0.3, -0.2, -1.0])
    records, names = simulate(np.random.default_rng(2026), theta, 40, 3)
    result = bradley_terry_bootstrap(records, names, resamples=1000, seed=0)
    assert result["units"] == 40 and result["judges"] == 3
    assert result["resampled"] == "units"
    assert result["conditional_on_judges"] is True
    assert result["no_interval"] is None
    for true, (low, high) in zip(theta - theta.mean(), result["intervals"], strict=True):
        assert low < true < high
    for entry in result["differences"]:
        i, j = (names.index(b) for b in entry["builders"])
        assert entry["low"] < theta[i] - theta[j] < entry["high"]
        assert entry["difference"] == pytest.approx(result["strengths"][i]
                                                    - result["strengths"][j])
        assert entry["direct"] == 120 and entry["direct_units"] == 40
    apart = {tuple(e["builders"]) for e in result["differences"] if e["apart"]}
    assert ("b0", "b3") in apart and ("b1", "b3") in apart and ("b0", "b2") in apart
    # Holm across the pairs, as builders_compared
    assert [e["p_holm"] for e in result["differences"]] == stats.holm_adjust(
        [e["p_value"] for e in result["differences"]])
    for e in result["differences"]:
        excludes = e["low"] > 0 or e["high"] < 0
        assert e["apart"] == (e["p_holm"] < 0.05 and excludes)
        assert e["apart_by"] == "test and interval"
    # both gates act: b0 − b1's interval excludes 0 but its Holm p (0.08) does not pass 0.05;
    # at α = 0.5 and a 99.9 % interval, b1 − b2 passes the test (0.32) but its interval holds 0
    by_pair = {tuple(e["builders"]): e for e in result["differences"]}
    assert by_pair[("b0", "b1")]["low"] > 0 and by_pair[("b0", "b1")]["p_holm"] > 0.05
    assert by_pair[("b0", "b1")]["apart"] is False
    wide = bradley_terry_bootstrap(records, names, resamples=1000, seed=0, confidence=0.999,
                                   alpha=0.5)
    by_pair = {tuple(e["builders"]): e for e in wide["differences"]}
    assert by_pair[("b1", "b2")]["p_holm"] < 0.5 and by_pair[("b1", "b2")]["low"] < 0
    assert by_pair[("b1", "b2")]["apart"] is False
    assert by_pair[("b0", "b1")]["apart"] is True


def test_the_bootstrap_is_the_refit_of_each_resample():
    """The interval is the percentile interval of the fit on each resample's drawn tasks, checked
    by refitting a few resamples one by one with bradley_terry on the drawn records."""
    theta = np.array([0.5, 0.0, -0.5])
    records, names = simulate(np.random.default_rng(5), theta, 20, 1)
    result = bradley_terry_bootstrap(records, names, resamples=40, seed=3)
    weights = stats.cluster_weights(list(range(20)), resamples=40, seed=3)  # tasks t0..t19 in order
    refits = []
    for r in range(40):
        drawn = [rec[:3] for rec in records for _ in range(int(weights[r, int(rec[3][1:])]))]
        refits.append(bradley_terry(drawn, names)["strengths"])
    refits = np.asarray(refits)
    for i in range(3):
        assert result["intervals"][i] == pytest.approx(
            list(np.quantile(refits[:, i], [0.025, 0.975])), abs=1e-8)
    low, high = np.quantile(refits[:, 0] - refits[:, 2], [0.025, 0.975])
    assert (result["differences"][1]["low"], result["differences"][1]["high"]) == pytest.approx(
        (low, high), abs=1e-8)


def test_ten_judges_or_more_resample_judges_and_units():
    theta = np.array([0.4, 0.0, -0.4])
    records, names = simulate(np.random.default_rng(8), theta, 20, 10)
    result = bradley_terry_bootstrap(records, names, resamples=300, seed=0)
    assert result["resampled"] == "judges and units"
    assert result["conditional_on_judges"] is False
    judge_w, unit_w = stats.judges_clusters_weights(10, list(range(20)), resamples=300, seed=0)
    # resample 0 refitted from its drawn judges and tasks
    drawn = [rec[:3] for rec in records
             for _ in range(int(judge_w[0, int(rec[4][1:])] * unit_w[0, int(rec[3][1:])]))]
    strengths, converged = pairwise._resampled_strengths(
        pairwise._tally(records, {n: i for i, n in enumerate(names)}, extra=2), 3,
        {f"t{t}": t for t in range(20)}, {f"j{j}": j for j in range(10)}, True,
        PRIOR_GAMES, resamples=300, seed=0)
    assert converged and result["bootstrap_converged"] is True
    assert bradley_terry(drawn, names)["strengths"] == pytest.approx(list(strengths[0]), abs=1e-9)


def test_below_twenty_units_no_interval_and_the_test_stands_alone():
    theta = np.array([2.0, 0.0, -2.0])
    records, names = simulate(np.random.default_rng(1), theta, 12, 2)
    result = bradley_terry_bootstrap(records, names)
    assert result["intervals"] is None and result["resampled"] is None
    assert "12 units, fewer than 20" in result["no_interval"]
    for e in result["differences"]:
        assert e["low"] is None and e["high"] is None
        assert e["apart_by"] == "test alone"
        assert e["apart"] == (e["p_holm"] < 0.05)
    # the extremes are 4 logits apart over 12 tasks: apart on the test alone
    assert result["differences"][1]["apart"] is True


def exact_sign_flip(values):
    """Every sign assignment, enumerated: share with |Σ| at least the observed."""
    observed = abs(sum(values))
    hits = sum(abs(sum(s * v for s, v in zip(signs, values, strict=True))) >= observed - 1e-12
               for signs in itertools.product((1, -1), repeat=len(values)))
    return hits / 2 ** len(values)


def test_the_p_value_is_a_sign_flip_on_direct_comparisons_per_unit():
    records = [  # (a, b, score, unit, judge): per unit, Σ (score of A − 1/2) over A against B
        ("A", "B", 1, "t1", "j1"), ("B", "A", 0, "t1", "j2"),    # +0.5 +0.5
        ("A", "B", 1, "t2", "j1"),                                # +0.5
        ("A", "B", 0.5, "t3", "j1"), ("A", "B", 1, "t3", "j2"),  # 0 +0.5
        ("A", "B", 0, "t4", "j1"),                                # −0.5
        ("A", "B", 1, "t5", "j1"), ("A", "C", 1, "t5", "j1"),   # +0.5
        ("B", "C", 1, "t6", "j2"),
    ]
    result = bradley_terry_bootstrap(records, ["A", "B", "C"])
    ab, ac, bc = result["differences"]
    assert ab["p_value"] == pytest.approx(exact_sign_flip([1.0, 0.5, 0.5, -0.5, 0.5]))
    assert ab["direct"] == 7 and ab["direct_units"] == 5
    assert ac["p_value"] == 1.0 and ac["direct"] == 1  # one unit: both signs tie
    assert bc["p_value"] == 1.0
    assert ab["test"] == "sign-flip"
    assert result["judges"] == 2 and result["units"] == 6


def test_the_sign_flip_holds_its_level_beside_judges_who_favour_a_side():
    """Three equally strong builders, 25 tasks, four judges each with a side habit of their own
    (logit of choosing left drawn from N(0, 1)), sides drawn at random: the pairs' p-values fall
    below 0.05 at most about 5 % of the time: here 0.028 of 750 (250 data sets, 500 random flips,
    the bootstrap cut to one resample: the p-value does not use it; 0.033 of 1,200 at 400). The
    sums per task move in halves, so the test is a little conservative; with the bootstrap, 0.03
    of 300 data sets had a pair apart."""
    rng = np.random.default_rng(99)
    below = total = 0
    for d in range(250):
        habits = rng.normal(0, 1.0, size=4)
        records = []
        for t in range(25):
            for i, j in itertools.combinations(range(3), 2):
                for judge in range(4):
                    swapped = rng.random() < 0.5  # j's copy on the left
                    left_chosen = rng.random() < scipy.special.expit(habits[judge])
                    records.append((f"b{i}", f"b{j}", float(left_chosen != swapped), f"t{t}",
                                    f"j{judge}"))
        result = bradley_terry_bootstrap(records, ["b0", "b1", "b2"], resamples=1, seed=d,
                                         flips=500)
        below += sum(e["p_value"] < 0.05 for e in result["differences"])
        total += 3
    assert below / total <= 0.065, below / total


def test_builders_who_never_met_have_no_p_value():
    records = [("A", "B", 1, f"t{t}", "j") for t in range(3)] + [("C", "D", 0, "t9", "j")]
    result = bradley_terry_bootstrap(records, ["A", "B", "C", "D"])
    by_pair = {tuple(e["builders"]): e for e in result["differences"]}
    assert by_pair[("A", "C")]["p_value"] is None and by_pair[("A", "C")]["p_holm"] is None
    assert by_pair[("A", "C")]["apart"] is False
    assert by_pair[("A", "B")]["p_value"] == pytest.approx(exact_sign_flip([0.5] * 3))


def test_interval_coverage_of_a_difference():
    """150 data sets of 3 builders (true strengths 0.5, 0, −0.5) on 30 tasks, one judge, every pair
    on every task: the share of 95 % intervals (300 resamples) that hold the true difference.
    Measured here: 0.944 over the 450 intervals; at 1,000 data sets and 400 resamples 0.937,
    0.935, 0.935 for the three differences (docs/statistics.md). About 2 s."""
    theta = np.array([0.5, 0.0, -0.5])
    rng = np.random.default_rng(7)
    hits = total = 0
    for d in range(150):
        records, names = simulate(rng, theta, 30, 1)
        result = bradley_terry_bootstrap(records, names, resamples=300, seed=d, flips=1)
        for e in result["differences"]:
            i, j = (names.index(b) for b in e["builders"])
            hits += e["low"] <= theta[i] - theta[j] <= e["high"]
            total += 1
    assert 0.915 <= hits / total <= 0.98, hits / total


# --- position bias ------------------------------------------------------------------------------


def test_position_bias_by_counting():
    rows = [("j1", 7, 10), ("j2", 3, 4), ("j3", 0, 0), ("j4", 5, 5)]
    result = position_bias(rows)
    assert [e["share"] for e in result["judges"]] == [0.7, 0.75, None, 1.0]
    assert result["n_judges"] == 3 and result["without_decisive"] == 1
    assert result["mean_share"] == pytest.approx((0.7 + 0.75 + 1.0) / 3)
    assert result["p_value"] == pytest.approx(exact_sign_flip([0.2, 0.25, 0.5]))  # 2/8
    assert result["pooled"]["k"] == 15 and result["pooled"]["n"] == 19
    assert result["pooled_p"] == pytest.approx(scipy.stats.binomtest(15, 19).pvalue)


def test_the_judge_is_the_unit_not_the_answer():
    """One judge answering much, always left, and four who split evenly: the pooled binomial calls
    it a strong left bias; across judges it is one judge of five, and the test says nothing."""
    rows = [("heavy", 90, 100)] + [(f"j{i}", 5, 10) for i in range(4)]
    result = position_bias(rows)
    assert result["pooled_p"] < 1e-6
    assert result["p_value"] == 1.0  # one non-zero share deviation: every flip ties
    assert result["mean_share"] == pytest.approx((0.9 + 4 * 0.5) / 5)
    # eight judges all left-leaning a little: across judges that is consistent, p = 2/2^8
    leaning = position_bias([(f"j{i}", 6, 10) for i in range(8)])
    assert leaning["p_value"] == pytest.approx(2 / 256)
    assert leaning["pooled_p"] > 0.05  # 48/80 pooled is not significant


def test_the_mean_share_has_an_interval_from_twenty_judges():
    rng = np.random.default_rng(12)
    rows = [(f"j{i}", int(rng.integers(3, 10)), 10) for i in range(24)]
    result = position_bias(rows, resamples=500, seed=4)
    assert result["no_interval"] is None
    # the same draws, one resample at a time
    shares = np.array([left / 10 for _, left, _ in rows])
    draws = np.random.default_rng(4).integers(0, 24, size=(500, 24))
    means = [shares[row].mean() for row in draws]
    assert (result["low"], result["high"]) == pytest.approx(
        tuple(np.quantile(means, [0.025, 0.975])), abs=1e-12)
    assert result["low"] < result["mean_share"] < result["high"]
    few = position_bias(rows[:19])
    assert few["low"] is None and "19 judges with a decisive answer, fewer than 20" in \
        few["no_interval"]


def test_position_bias_rows_are_checked():
    with pytest.raises(ValueError, match="exceeds"):
        position_bias([("j", 3, 2)])
    with pytest.raises(ValueError, match="twice"):
        position_bias([("j", 1, 2), ("j", 1, 2)])
    assert position_bias([])["p_value"] is None


# --- inconsistency ------------------------------------------------------------------------------


def test_order_inconsistency_by_counting():
    pairs = [("first", "second"), ("second", "first"),   # consistent: the same copy each time
             ("first", "first"), ("first", "first"),      # inconsistent: whichever came first
             ("second", "second"),                        # inconsistent: whichever came second
             ("tie", "tie"), ("both_bad", "both_bad"),    # consistent
             ("first", "tie"), ("both_bad", "tie")]       # partly
    result = order_inconsistency(pairs)
    assert result["pairs"] == 9
    assert result["inconsistent"]["k"] == 3 and result["inconsistent"]["n"] == 9
    assert (result["inconsistent"]["low"], result["inconsistent"]["high"]) == \
        stats.wilson_interval(3, 9)
    assert (result["inconsistent_decisive"]["k"], result["inconsistent_decisive"]["n"]) == (3, 5)
    assert result["first_in_both"] == 2 and result["second_in_both"] == 1
    assert result["consistent"] == 4 and result["partly"] == 2
    # first among decisive verdicts: 1+1 (pairs 1, 2) + 4 + 0 + 1 (pair 8) = 7 of 11
    assert (result["first_share"]["k"], result["first_share"]["n"]) == (7, 11)
    with pytest.raises(ValueError, match="not one of"):
        order_inconsistency([("left", "first")])


# --- pairwise accuracy --------------------------------------------------------------------------


def test_pairwise_accuracy_by_counting():
    answers = [("left", "left"), ("right", "left"), ("tie", "left"), ("both_bad", "right"),
               ("right", "right"), ("right", "right"), ("left", None), ("tie", None)]
    result = pairwise_accuracy(answers)
    assert result["differing"] == 6
    assert (result["accuracy"]["k"], result["accuracy"]["n"]) == (3, 6)
    assert (result["decisive_accuracy"]["k"], result["decisive_accuracy"]["n"]) == (3, 4)
    assert (result["accuracy"]["low"], result["accuracy"]["high"]) == stats.wilson_interval(3, 6)
    assert result["ties"] == 1 and result["both_bad"] == 1
    assert result["equal"] == {"left": 1, "right": 0, "tie": 1, "both_bad": 0}
    assert pairwise_accuracy([])["accuracy"]["rate"] is None
    with pytest.raises(ValueError, match="right_side"):
        pairwise_accuracy([("left", "up")])


def test_phase_shift_by_counting():
    rows = [("left", "right", "right"),     # toward
            ("tie", "left", "left"),        # toward
            ("left", "left", "left"),       # correct both
            ("right", "tie", "right"),      # away
            ("both_bad", "tie", "left"),    # wrong both, changed
            ("left", "right", None)]        # equal truth
    result = phase_shift(rows)
    assert (result["toward"], result["away"], result["correct_both"], result["wrong_both"]) == \
        (2, 1, 1, 1)
    assert result["pairs"] == 5 and result["equal"] == 1 and result["changed"] == 4
    assert (result["phase1"]["k"], result["phase2"]["k"]) == (2, 3)
    assert result["p_value"] == stats.mcnemar_exact(2, 1) == 1.0
    assert result["test"] == "McNemar exact"


def test_answers_become_records_and_both_bad_is_set_apart():
    rows = [("A", "B", "left", "t1", "j1"), ("B", "A", "right", "t1", "j2"),
            ("A", "C", "tie", "t2", "j1"), ("C", "A", "both_bad", "t2", "j2"),
            ("A", "C", "both_bad", "t3", "j1"), ("B", "C", "second", "t3", "r1"),
            ("C", "B", "first", "t4", "r1")]
    result = preference_records(rows)
    assert result["records"] == [("A", "B", 1.0, "t1", "j1"), ("B", "A", 0.0, "t1", "j2"),
                                 ("A", "C", 0.5, "t2", "j1"), ("B", "C", 0.0, "t3", "r1"),
                                 ("C", "B", 1.0, "t4", "r1")]
    assert result["both_bad"] == 2 and result["both_bad_by_pair"] == {("C", "A"): 2}
    fit = bradley_terry([r[:3] for r in result["records"]], ["A", "B", "C"])
    assert fit["wins"] == [2, 0, 2] and fit["ties"] == [1, 0, 1]
    with pytest.raises(ValueError, match="not one of"):
        preference_records([("A", "B", "better", "t", "j")])


# --- the style fit ------------------------------------------------------------------------------


def simulate_style(rng, n, beta):
    rows = []
    for _ in range(n):
        strength = float(rng.normal(0, 0.6))
        left_len, right_len = (int(x) for x in rng.integers(200, 4000, size=2))
        correct = int(rng.choice([-1, 0, 1]))
        z = (beta[0] + beta[1] * strength + beta[2] * (left_len - right_len) / (left_len + right_len)
             + beta[3] * correct)
        rows.append((int(rng.random() < scipy.special.expit(z)), strength, left_len, right_len,
                     correct))
    return rows


def independent_style(rows, ridge):
    x = np.array([[1.0, s, (ll - lr) / (ll + lr), c] for _, s, ll, lr, c in rows])
    y = np.array([r[0] for r in rows], dtype=float)

    def objective(beta):
        z = x @ beta
        return np.sum(np.logaddexp(0, z) - y * z) + ridge / 2 * beta @ beta

    def gradient(beta):
        return x.T @ (scipy.special.expit(x @ beta) - y) + ridge * beta

    fit = scipy.optimize.minimize(objective, np.zeros(4), jac=gradient, method="BFGS",
                                  options={"gtol": 1e-10})
    return fit.x


def test_style_fit_recovers_known_coefficients():
    beta = (0.3, 0.8, 2.0, 1.2)
    rows = simulate_style(np.random.default_rng(11), 3000, beta)
    result = style_fit(rows)
    assert result["fitted"] and result["converged"] and result["n"] == 3000
    for term, true in zip(pairwise.STYLE_TERMS, beta, strict=True):
        c = result["coefficients"][term]
        assert abs(c["estimate"] - true) < 3.5 * c["se"], term
        assert c["low"] == pytest.approx(c["estimate"] - 1.959963984540054 * c["se"])
    # the same maximum as scipy.optimize on the same penalised likelihood
    estimates = [result["coefficients"][t]["estimate"] for t in pairwise.STYLE_TERMS]
    assert estimates == pytest.approx(list(independent_style(rows, pairwise.STYLE_RIDGE)), abs=1e-6)
    # the standard errors from the observed information, recomputed here
    x, _ = pairwise.style_design(rows)
    p = scipy.special.expit(x @ np.asarray(estimates))
    information = (x * (p * (1 - p))[:, None]).T @ x + pairwise.STYLE_RIDGE * np.eye(4)
    ses = np.sqrt(np.diag(np.linalg.inv(information)))
    assert [result["coefficients"][t]["se"] for t in pairwise.STYLE_TERMS] == pytest.approx(
        list(ses), rel=1e-6)


def test_style_fit_refuses_too_few_and_leaves_out_what_does_not_vary():
    rows = simulate_style(np.random.default_rng(3), 39, (0, 0, 1, 1))
    refused = style_fit(rows)
    assert refused["fitted"] is False and "39 decisive answers, fewer than 40" in refused["reason"]
    assert refused["coefficients"]["length"] is None
    # every pair of equal truth: correctness cannot be estimated, the rest is
    equal = [(y, s, ll, lr, 0) for y, s, ll, lr, _ in simulate_style(np.random.default_rng(4), 200,
                                                                     (0, 0, 1, 1))]
    result = style_fit(equal)
    assert result["fitted"] and result["not_estimable"] == ["correct"]
    assert result["coefficients"]["correct"] is None
    assert result["coefficients"]["length"]["se"] > 0
    one_side = [(1, s, ll, lr, c) for _, s, ll, lr, c in equal]
    assert "left side" in style_fit(one_side)["reason"]


def test_style_fit_stays_finite_on_separable_data():
    """A judge who always prefers the right copy: correct separates the answers perfectly; the
    ridge keeps the fit finite (unpenalised, the coefficient would run to infinity)."""
    rng = np.random.default_rng(9)
    rows = []
    for _ in range(80):
        c = int(rng.choice([-1, 1]))
        rows.append((int(c == 1), float(rng.normal()), int(rng.integers(10, 99)),
                     int(rng.integers(10, 99)), c))
    result = style_fit(rows)
    assert result["fitted"] and result["converged"]
    correct = result["coefficients"]["correct"]
    assert math.isfinite(correct["estimate"]) and correct["estimate"] > 5


def test_style_rows_are_checked():
    with pytest.raises(ValueError, match="correct must be"):
        style_fit([(1, 0.0, 10, 10, 2)])
    with pytest.raises(ValueError, match="left_preferred"):
        style_fit([(0.5, 0.0, 10, 10, 0)])
    with pytest.raises(ValueError, match="length_left"):
        style_fit([(1, 0.0, -1, 10, 0)])
    assert style_fit([(1, 0.0, 0, 0, 0)] * 50)["reason"].startswith("every decisive answer")
