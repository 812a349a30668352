"""How a verdict is scored: shared by the report's sections and the judge's own scorecard
(judging.selectors.judge.judge_scorecard), so that both score exactly alike.

Scores are recall on defective items and the true-negative rate on good ones, each k/n with its
Wilson 95% interval; a verdict on an item of unknown truth is counted apart, never scored. A model
review that gave no verdict (abstain) is scored by the run's rule (`scored_verdict`). The standard
library only: a judge's scorecard is computed in a process that serves judges.
"""

from content.stdlib_stats import wilson_95
from content.truth import is_correct, truth_class


def rate(k: int, n: int) -> dict:
    """k/n with its Wilson 95% interval; with n = 0 there is nothing to bound (all null)."""
    if n == 0:
        return {"k": 0, "n": 0, "rate": None, "low": None, "high": None}
    low, high = wilson_95(k, n)  # reports.stats.wilson_interval's, without loading numpy
    return {"k": k, "n": n, "rate": k / n, "low": low, "high": high}


def score(pairs) -> dict:
    """Recall and true-negative rate over (verdict, truth) pairs; unknown truth counted apart."""
    caught = defective = true_negative = good = unknown = 0
    for verdict, truth in pairs:
        cls = truth_class(truth)
        if cls is None:
            unknown += 1
        elif cls == "defective":
            defective += 1
            caught += is_correct(verdict, truth)
        else:
            good += 1
            true_negative += is_correct(verdict, truth)
    return {"recall": rate(caught, defective), "tnr": rate(true_negative, good),
            "unknown_truth": unknown}


def scored_verdict(verdict: str, abstain_scoring: str) -> str | None:
    """The verdict a model review is scored as: an abstention (no verdict given) counts as a pass
    under the run's `not_flagged` rule (it flagged nothing) and is left out (None) under
    `excluded`; pass and fail are scored as given."""
    if verdict != "abstain":
        return verdict
    return "pass" if abstain_scoring == "not_flagged" else None
