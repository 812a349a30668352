"""The truth vocabulary: which truth labels count as defective and which as good, and whether a
verdict matches them. Unknown truth is never scored.

The labels themselves are the domain's enums (judging.enums.CopyTruth, FindingTruth); they are
repeated here as plain strings so that this module, like all of content/, needs no Django.
"""

# A copy's truth labels, in the bundle schema's order (importers check mapped values against them).
COPY_TRUTHS = ("known_good", "seeded_defect", "tests_fail", "tests_pass", "unknown")

# A copy's truth as an adjudication decided it (issue 29 item 1): never stored as a copy's truth
# (it is kept beside it), only scored in the report's own adjudicated section.
ADJUDICATED_COPY_TRUTHS = {"pass": "adjudicated_pass", "fail": "adjudicated_fail"}

DEFECTIVE = {"seeded_defect", "tests_fail", "real", "adjudicated_fail"}
GOOD = {"known_good", "tests_pass", "false_alarm", "adjudicated_pass"}

# The verdict values that say "this item is defective" (copies: fail; findings: the finding is real).
SAYS_DEFECTIVE = ("fail", "real")


def truth_class(truth: str) -> str | None:
    """'defective', 'good', or None for unknown truth (never scored)."""
    if truth in DEFECTIVE:
        return "defective"
    if truth in GOOD:
        return "good"
    return None


def audit_stratum(scored_verdict: str | None, truth: str) -> tuple[str, str]:
    """A reasons session's stratum of a review, beside its reviewer (issue 30): whether its
    verdict is right ("correct", "wrong", or "unscored": unknown truth, or an abstention left out
    of scoring, `scored_verdict` None) and its copy's truth class ("defective", "good",
    "unknown"). One definition for the sample's draw, the report and verify_report."""
    right = None if scored_verdict is None else is_correct(scored_verdict, truth)
    return ("unscored" if right is None else "correct" if right else "wrong",
            truth_class(truth) or "unknown")


def is_correct(verdict: str, truth: str) -> bool | None:
    """Whether a verdict matches truth; None when truth is unknown."""
    cls = truth_class(truth)
    if cls is None:
        return None
    return (verdict in SAYS_DEFECTIVE) == (cls == "defective")
