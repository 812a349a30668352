"""Reasons sessions (issue 30 items 1 and 2): people audit whether a model review's reason is
grounded in the copy it reviews, not only whether its verdict was right ("my columns grade
verdicts, not reasons": seed 002), because a model grading a model's reasoning would re-import
the problem under study.

Each item is one review of the run's default condition (the reviews the report scores): its copy,
its task, its verdict and its reason, under a random code, never its reviewer's model, family,
condition or seal. The host audits every review, or a stratified sample: per stratum (reviewer ×
correct / wrong / unscored verdict × truth class of the copy) at most N reviews, drawn with a
seed that is recorded and committed like an order (its SHA-256 in the frozen protocol, the seed
itself in the report), so correct verdicts are audited as much as wrong ones. A judge audits at
most one review of any copy (content.draws.one_per_copy_pick).

Phase 1 is the audit alone: grounded (every claim checks out against the copy and the task),
partly (some do), not grounded (a claim the copy does not support: an invented line, a bug that
is not there, a test never run), or no checkable claim, each with a reason. Phase 2, after the
lock, adds the copy's known truth, so the report can show whether knowing the answer changes what
people call grounded; phase 1 is the primary measure (docs/statistics.md).
"""

from content.canonical import sha256_hex
from content.draws import stratified_sample
from content.scoring import scored_verdict
from content.truth import audit_stratum
from judging.models import Run

REASON_VERDICTS = ("grounded", "partly", "not_grounded", "no_claim")
REVIEW_KEY = "review:"


def review_key(reviewer_id: str, copy_id: str) -> str:
    """A review's item key: one review per reviewer and copy under the default condition."""
    return f"{REVIEW_KEY}{reviewer_id}:{copy_id}"


def stratum_of(review, copy, abstain_scoring: str) -> str:
    """The review's stratum label: reviewer, whether its verdict is right (correct, wrong, or
    unscored: unknown truth or an abstention left out), and the truth class of its copy."""
    correctness, cls = audit_stratum(scored_verdict(review.verdict, abstain_scoring), copy.truth)
    return f"{review.reviewer.bundle_id}|{correctness}|{cls}"


def reasons_sources(run: Run, *, per_stratum: int | None, seed: str):
    """(sources, sample): the items of a new reasons session, each (copy, review, key), and how
    they were drawn, as the protocol freezes it. Every default-condition review of the run, or
    with `per_stratum`, at most that many of each stratum drawn with `seed` (hex)."""
    reviews = list(run.reviews.filter(condition=run.default_condition)
                   .select_related("reviewer", "copy").defer("copy__content", "request"))
    by_key = {review_key(r.reviewer.bundle_id, r.copy.bundle_id): r for r in reviews}
    if per_stratum is None:
        keys = sorted(by_key)
        sample = {"by": "all"}
    else:
        strata: dict[str, list[str]] = {}
        for key, review in by_key.items():
            strata.setdefault(stratum_of(review, review.copy, run.abstain_scoring), []).append(key)
        keys = stratified_sample(strata, per_stratum, seed)
        sample = {"by": "stratified", "per_stratum": per_stratum,
                  "seed_sha256": sha256_hex(bytes.fromhex(seed))}
    return [(by_key[key].copy, by_key[key], key) for key in keys], sample
