"""The domain's closed vocabularies (Django TextChoices): the values stored in the judging
tables and named in the report. A leaf: the models import these, and a page needs them without
the models (faces read the database only through their selectors).
"""

from django.db import models


class CopyFormat(models.TextChoices):
    TEXT = "text"
    MARKDOWN = "markdown"
    DIFF = "diff"


class CopyTruth(models.TextChoices):
    KNOWN_GOOD = "known_good"
    SEEDED_DEFECT = "seeded_defect"
    TESTS_FAIL = "tests_fail"
    TESTS_PASS = "tests_pass"
    UNKNOWN = "unknown"


class FindingTruth(models.TextChoices):
    REAL = "real"
    FALSE_ALARM = "false_alarm"
    UNKNOWN = "unknown"


class ReviewVerdict(models.TextChoices):
    PASS = "pass"
    FAIL = "fail"
    ABSTAIN = "abstain"  # the reply gave no verdict; scored by the run's abstain_scoring


class AbstainScoring(models.TextChoices):
    NOT_FLAGGED = "not_flagged"  # an abstention flags nothing (scored as a pass)
    EXCLUDED = "excluded"  # left out of the reviewer's scoring


class TaskFormat(models.TextChoices):
    TEXT = "text"
    MARKDOWN = "markdown"


class ProposedVerdict(models.TextChoices):
    CONFIRMED = "confirmed"
    REFUTED = "refuted"


class SealOutcome(models.TextChoices):
    SEALED = "sealed"
    VERDICT_IN_CONTENT = "verdict_in_content"  # keys sealed, verdict in content
    FAILED = "failed"
    ABSENT = "absent"


class SessionKind(models.TextChoices):
    COPIES = "copies"
    FINDINGS = "findings"
    # Truth the tests cannot settle, decided once, blind, by one person outside the matrix
    # (issue 29 item 1): items are findings and copies of unknown truth; one phase, no model shown.
    ADJUDICATION = "adjudication"
    # People audit whether a model review's reason is grounded in the copy (issue 30): items are
    # reviews; phase 1 shows the review's verdict and reason, never its reviewer.
    REASONS = "reasons"
    # Side-by-side judging (issue 31): items are pairs of copies of one task by two builders; the
    # judge prefers the left, the right, both (tie) or neither (both bad), sides drawn per judge.
    PAIRS = "pairs"


class PairVerdict(models.TextChoices):
    """A preference between two copies. A judge's answer names the sides they saw (left/right);
    a model reviewer's comparison names the order it saw them in (first/second)."""
    LEFT = "left"
    RIGHT = "right"
    FIRST = "first"
    SECOND = "second"
    TIE = "tie"
    BOTH_BAD = "both_bad"


class SessionState(models.TextChoices):
    DRAFT = "draft"
    OPEN = "open"
    CLOSED = "closed"
    REVEALED = "revealed"


class ReviewerDisplay(models.TextChoices):
    LETTERS = "letters", "Reviewer A, B, …"
    NAMES = "names", "Model names"
