"""Runs, sessions, assignments, verdicts and the audit log.

The `help_text` of each field is the data dictionary for the report's JSON. Rows are written only
by the functions in `judging/services/`; nothing here has behaviour beyond small derived
properties.
"""

import gzip

from django.db import models
from django.db.models import Q

from judging.enums import (
    AbstainScoring,
    CopyFormat,
    CopyTruth,
    FindingTruth,
    ProposedVerdict,
    ReviewerDisplay,
    ReviewVerdict,
    SealOutcome,
    SessionKind,
    SessionState,
    TaskFormat,
)


class Run(models.Model):
    host = models.ForeignKey(
        "accounts.Host", on_delete=models.PROTECT, related_name="runs",
        help_text="The host who imported the run and owns it.",
    )
    name = models.CharField(max_length=300, help_text="The run's name, from the bundle.")
    format = models.CharField(max_length=40, help_text="Bundle format, e.g. blindjudge.run/2.")
    bundle_run = models.JSONField(
        default=dict, help_text="The bundle's run object exactly as it appeared (its manifest "
        "hash is computed over it).")
    default_condition = models.CharField(
        max_length=100, default="clean", help_text="The condition of the clean reviews: the ones "
        "judges see in phase 2 and the report scores reviewers on.")
    abstain_scoring = models.CharField(
        max_length=20, choices=AbstainScoring.choices, default=AbstainScoring.NOT_FLAGGED,
        help_text="How a review without a verdict is scored: not_flagged or excluded.")
    request_keys = models.JSONField(
        help_text="The exact top-level keys a sealed review request must have."
    )
    verdict_patterns = models.JSONField(
        null=True, blank=True, default=None,
        help_text="Every pattern the content seal check applied at import, built-in and the "
        "host's: [{name, origin, pattern, description}]; null for a run imported before the "
        "check existed (its seals checked keys and hash only).")
    bundle_sha256 = models.CharField(
        max_length=64, help_text="SHA-256 of the bundle file's bytes as imported."
    )
    manifest = models.JSONField(help_text="Per-record content hashes (canonical JSON).")
    manifest_sha256 = models.CharField(
        max_length=64, help_text="SHA-256 of the manifest's canonical JSON."
    )
    imported_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"run {self.pk}: {self.name}"


class Task(models.Model):
    """One task every builder of the run was given; each copy is one builder's answer to one."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="tasks")
    bundle_id = models.CharField(max_length=200, help_text="The task's id inside the bundle.")
    title = models.CharField(max_length=200, blank=True, help_text="Optional short title.")
    statement = models.TextField(help_text="The task statement (untrusted, shown inertly).")
    format = models.CharField(max_length=10, choices=TaskFormat.choices,
                              default=TaskFormat.MARKDOWN)
    cluster = models.CharField(max_length=200, blank=True,
                               help_text="Group id for resampling by cluster (e.g. repository).")
    position = models.PositiveIntegerField(help_text="Import order within the run.")

    class Meta:
        ordering = ["run", "position"]
        constraints = [
            models.UniqueConstraint(fields=["run", "bundle_id"], name="task_unique_bundle_id")
        ]


class Builder(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="builders")
    bundle_id = models.CharField(max_length=200, help_text="The builder's id inside the bundle.")
    model = models.CharField(max_length=200, help_text="The model that built the copy.")
    family = models.CharField(max_length=200, help_text="The model's developer organisation.")
    position = models.PositiveIntegerField(help_text="Import order within the run.")

    class Meta:
        ordering = ["run", "position"]
        constraints = [
            models.UniqueConstraint(fields=["run", "bundle_id"], name="builder_unique_bundle_id")
        ]


class Copy(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="copies")
    bundle_id = models.CharField(max_length=200, help_text="The copy's id inside the bundle.")
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="copies")
    builder = models.ForeignKey(Builder, on_delete=models.CASCADE, related_name="copies")
    format = models.CharField(max_length=10, choices=CopyFormat.choices)
    content = models.TextField(help_text="The copy as the builder wrote it (untrusted).")
    content_sha256 = models.CharField(max_length=64, help_text="SHA-256 of the content, UTF-8.")
    imported_truth = models.CharField(
        max_length=20, choices=CopyTruth.choices, help_text="Truth as the bundle gave it."
    )
    truth = models.CharField(
        max_length=20, choices=CopyTruth.choices,
        help_text="Current truth: the imported label or the latest correction.",
    )
    defect = models.TextField(blank=True, help_text="The host's note on a seeded defect.")
    cluster = models.CharField(
        max_length=200, blank=True, help_text="Group id for resampling by cluster."
    )
    position = models.PositiveIntegerField(help_text="Import order within the run.")

    class Meta:
        ordering = ["run", "position"]
        constraints = [
            models.UniqueConstraint(fields=["run", "bundle_id"], name="copy_unique_bundle_id")
        ]


class Reviewer(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="reviewers")
    bundle_id = models.CharField(max_length=200)
    model = models.CharField(max_length=200)
    family = models.CharField(max_length=200)
    position = models.PositiveIntegerField()

    class Meta:
        ordering = ["run", "position"]
        constraints = [
            models.UniqueConstraint(fields=["run", "bundle_id"], name="reviewer_unique_bundle_id")
        ]


class Review(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="reviews")
    reviewer = models.ForeignKey(Reviewer, on_delete=models.CASCADE, related_name="reviews")
    copy = models.ForeignKey(Copy, on_delete=models.CASCADE, related_name="reviews")
    condition = models.CharField(
        max_length=100, help_text="What the reviewer was told besides the copy; the run's "
        "default_condition for a clean review.")
    verdict = models.CharField(max_length=10, choices=ReviewVerdict.choices)
    reason = models.TextField(blank=True, help_text="The reviewer's reason (untrusted).")
    authorship_guess = models.CharField(
        max_length=200, blank=True, help_text="Which model the reviewer guessed wrote the copy."
    )
    request = models.TextField(blank=True, help_text="The exact serialized request, as sent.")
    request_sha256 = models.CharField(max_length=64, blank=True)
    seal = models.CharField(
        max_length=20, choices=SealOutcome.choices,
        help_text="sealed: keys exact, hash matches, no verdict carried besides the copy; "
        "verdict_in_content: keys sealed, but the request carries a verdict outside the copy and "
        "the task statement; failed: anything else; absent: no request.",
    )
    seal_reason = models.TextField(blank=True, help_text="Why the seal check failed.")
    content_verdict = models.CharField(
        max_length=200, blank=True, default="",
        help_text="The text of a verdict the request carries outside the copy and the task "
        "statement (at most 200 characters); empty when none was found.")
    content_verdict_pattern = models.CharField(
        max_length=100, blank=True, default="",
        help_text="The name of the pattern that found content_verdict; empty when none.")
    position = models.PositiveIntegerField()

    class Meta:
        ordering = ["run", "position"]
        constraints = [
            models.UniqueConstraint(fields=["reviewer", "copy", "condition"],
                                    name="review_one_per_condition")
        ]


class Comparison(models.Model):
    """A model reviewer's preference between two copies of one task, in the order it saw them
    (run/2 `comparisons`). A reviewer shown a pair both ways has two rows, one per order."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="comparisons")
    reviewer = models.ForeignKey(Reviewer, on_delete=models.CASCADE, related_name="comparisons")
    first = models.ForeignKey(Copy, on_delete=models.CASCADE, related_name="+",
                              help_text="The copy the reviewer was shown first.")
    second = models.ForeignKey(Copy, on_delete=models.CASCADE, related_name="+",
                               help_text="The copy the reviewer was shown second.")
    condition = models.CharField(
        max_length=100, help_text="What the reviewer was told besides the copies; the run's "
        "default_condition for a clean comparison.")
    verdict = models.CharField(max_length=10, help_text="first, second, tie or both_bad.")
    reason = models.TextField(blank=True, help_text="The reviewer's reason (untrusted).")
    request = models.TextField(blank=True, help_text="The exact serialized request, as sent.")
    request_sha256 = models.CharField(max_length=64, blank=True)
    seal = models.CharField(max_length=20, choices=SealOutcome.choices,
                            help_text="As for reviews (Review.seal).")
    seal_reason = models.TextField(blank=True, help_text="Why the seal check failed.")
    content_verdict = models.CharField(
        max_length=200, blank=True, default="",
        help_text="The text of a verdict the request carries outside the two copies and the task "
        "statement (at most 200 characters); empty when none was found.")
    content_verdict_pattern = models.CharField(
        max_length=100, blank=True, default="",
        help_text="The name of the pattern that found content_verdict; empty when none.")
    position = models.PositiveIntegerField()

    class Meta:
        ordering = ["run", "position"]
        constraints = [
            models.UniqueConstraint(fields=["reviewer", "first", "second", "condition"],
                                    name="comparison_one_per_order_and_condition")
        ]


class Finding(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="findings")
    bundle_id = models.CharField(max_length=200)
    copy = models.ForeignKey(Copy, on_delete=models.CASCADE, related_name="findings")
    text = models.TextField(help_text="What the reviewers raised (untrusted).")
    raised_by = models.ManyToManyField(Reviewer, through="FindingRaise",
                                       related_name="findings_raised")
    proposed_verdict = models.CharField(max_length=10, choices=ProposedVerdict.choices)
    imported_truth = models.CharField(max_length=20, choices=FindingTruth.choices)
    truth = models.CharField(max_length=20, choices=FindingTruth.choices)
    position = models.PositiveIntegerField()

    class Meta:
        ordering = ["run", "position"]
        constraints = [
            models.UniqueConstraint(fields=["run", "bundle_id"], name="finding_unique_bundle_id")
        ]


class FindingRaise(models.Model):
    """A reviewer raised a finding in its review under one condition."""

    finding = models.ForeignKey(Finding, on_delete=models.CASCADE)
    reviewer = models.ForeignKey(Reviewer, on_delete=models.CASCADE)
    condition = models.CharField(max_length=100, help_text="The condition of that review.")

    class Meta:
        # The table of the many-to-many field this model took over (migration 0005).
        db_table = "judging_finding_raised_by"
        constraints = [
            models.UniqueConstraint(fields=["finding", "reviewer", "condition"],
                                    name="findingraise_one_per_condition")
        ]


class TruthCorrection(models.Model):
    """A dated correction of a truth label; the report scores under both versions."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="truth_corrections")
    copy = models.ForeignKey(Copy, null=True, blank=True, on_delete=models.CASCADE)
    finding = models.ForeignKey(Finding, null=True, blank=True, on_delete=models.CASCADE)
    old_truth = models.CharField(max_length=20)
    new_truth = models.CharField(max_length=20)
    note = models.TextField(help_text="Why the label was corrected.")
    corrected_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["corrected_at", "pk"]
        constraints = [
            models.CheckConstraint(
                condition=Q(copy__isnull=False, finding__isnull=True)
                | Q(copy__isnull=True, finding__isnull=False),
                name="truthcorrection_one_target",
            )
        ]


# The shortest time a copy is shown before a verdict key or click counts (Session.verdict_min_shown_ms):
# the default is not named in a frozen protocol, so every protocol frozen before it stays as it was.
DEFAULT_VERDICT_MIN_SHOWN_MS = 300
MAX_VERDICT_MIN_SHOWN_MS = 5000


class Session(models.Model):
    run = models.ForeignKey(Run, on_delete=models.PROTECT, related_name="sessions")
    url_id = models.CharField(
        max_length=32, unique=True,
        help_text="Random id used in URLs; never sequential, never the guest code.",
    )
    kind = models.CharField(max_length=20, choices=SessionKind.choices)
    state = models.CharField(
        max_length=10, choices=SessionState.choices, default=SessionState.DRAFT
    )
    rubric = models.TextField(blank=True)
    instructions = models.TextField(
        blank=True, help_text="The host's instructions to judges (markdown), frozen at opening and "
        "shown on the judge's instructions page beside what the product says itself.")
    minutes_per_item = models.PositiveSmallIntegerField(
        default=3, help_text="The host's estimate of a judge's minutes per item, for the time "
        "estimate on the instructions page.")
    preregistration = models.TextField(blank=True, help_text="Free text, frozen at opening.")
    items_per_judge = models.PositiveIntegerField(
        null=True, blank=True, help_text="Items each judge gets; empty means all."
    )
    by_task = models.BooleanField(
        default=False, help_text="Copies sessions: each judge gets every copy of each task they "
        "get (content.draws.by_task_pick), in an order interleaving the tasks."
    )
    reasons_sample = models.JSONField(
        null=True, blank=True, default=None,
        help_text="Reasons sessions: how the audited reviews were drawn, frozen with the protocol: "
        "{by: all | stratified, per_stratum, seed_sha256, strata: [{reviewer, correct, truth_class, "
        "reviews, sampled}]}; the seed itself is published at the reveal.")
    pairs_design = models.JSONField(
        null=True, blank=True, default=None,
        help_text="Pairs sessions: how the pairs were chosen, frozen with the protocol: {by: all | "
        "balanced, pairs, per_builder_pair, seed_sha256}; the seed itself is published at the "
        "reveal.")
    pairs_seed = models.CharField(
        max_length=64, blank=True, default="",
        help_text="Pairs sessions: the seed (hex) of a balanced sample's draw; shown from the reveal.")
    reasons_seed = models.CharField(
        max_length=64, blank=True, help_text="Reasons sessions: the seed the stratified sample was "
        "drawn with (hex), committed by its SHA-256 in reasons_sample; published at the reveal.")
    task_flags = models.BooleanField(
        default=False, help_text="Copies sessions: judges may flag a task as invalid (underspecified, "
        "tests unfair, other) with a severity and a reason, once per task and phase; frozen with "
        "the protocol. The host sees the flags only after the reveal."
    )
    guests_allowed = models.BooleanField(default=False)
    guest_cap = models.PositiveIntegerField(
        null=True, blank=True, help_text="Most guests admitted; empty means no cap."
    )
    reviewer_display = models.CharField(
        max_length=10, choices=ReviewerDisplay.choices, default=ReviewerDisplay.LETTERS
    )
    scorecards = models.BooleanField(
        default=False, help_text="Whether judges see their own scorecard after the reveal."
    )
    advance_on_key = models.BooleanField(
        default=True, help_text="Judging speed, not a treatment (outside the protocol): a verdict "
        "key records the verdict and shows the next item; off, a key picks and Save records."
    )
    verdict_min_shown_ms = models.PositiveSmallIntegerField(
        default=DEFAULT_VERDICT_MIN_SHOWN_MS, help_text="Frozen with the protocol: a verdict key (or "
        "click) counts only once the item's copy has been shown this long (milliseconds); earlier "
        "ones are dropped, never queued, so a held or bounced key cannot answer items the judge "
        f"never saw. 0: no minimum; at most {MAX_VERDICT_MIN_SHOWN_MS}.")
    mark_disagreement = models.BooleanField(
        default=False, help_text="A treatment, frozen with the protocol: in phase 2 the reviewers' "
        "rows that disagree with the judge's own phase-1 verdict are marked."
    )
    redaction_patterns = models.JSONField(
        default=list, help_text="Content patterns the host accepted for redaction."
    )
    blinding_dismissed = models.JSONField(
        default=list, help_text="Blinding-check matches the host kept on purpose (`import openai` "
        "in code), by decision key (content.blinding.decision_key); frozen with the protocol. A "
        "session opens only when every match is redacted or kept.")
    draw_seed = models.CharField(
        max_length=64, blank=True,
        help_text="If set, every draw (allocation, order, codes, salts) derives from it, so a "
        "session can be replayed exactly; empty means every draw comes from the OS CSPRNG.",
    )
    allocation_seed = models.CharField(
        max_length=64, help_text="Seed for the balanced allocation's tie-breaks (hex)."
    )
    protocol = models.JSONField(null=True, blank=True, help_text="The protocol frozen at opening.")
    protocol_sha256 = models.CharField(max_length=64, blank=True)
    decision_rules = models.JSONField(
        default=list, help_text="Preregistered decision rules in force (validated)."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    opened_at = models.DateTimeField(null=True, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    revealed_at = models.DateTimeField(null=True, blank=True)
    joined_judges = models.PositiveIntegerField(
        default=0, help_text="Judges admitted so far; numbers each judge's pseudonym and draws."
    )

    def __str__(self):
        return f"session {self.pk} ({self.kind}, {self.state}) on run {self.run_id}"


class PreregAmendment(models.Model):
    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="amendments")
    text = models.TextField()
    text_sha256 = models.CharField(max_length=64)
    decision_rules = models.JSONField(
        null=True, blank=True, help_text="Rules this amendment puts in force, if it has any."
    )
    amended_at = models.DateTimeField(auto_now_add=True)
    before_first_verdict = models.BooleanField(
        help_text="True when no verdict existed in the session at the time of the amendment."
    )

    class Meta:
        ordering = ["amended_at", "pk"]


class Item(models.Model):
    """One thing judged in a session: a copy (copies sessions) or a finding (findings sessions);
    in an adjudication, either (a finding of unknown truth, or a copy), keyed "finding:<id>" or
    "copy:<id>" since a finding and a copy may share a bundle id."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="items")
    copy = models.ForeignKey(Copy, on_delete=models.PROTECT, related_name="+")
    task = models.ForeignKey(
        Task, on_delete=models.PROTECT, related_name="+",
        help_text="The copy's task, kept here so the judge's page finds the task's render "
        "without reading the copy row.")
    finding = models.ForeignKey(
        Finding, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    review = models.ForeignKey(
        Review, null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        help_text="Reasons sessions: the model review whose reason is audited (its copy is `copy`).")
    pair_copy = models.ForeignKey(
        Copy, null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        help_text="Pairs sessions: the pair's second copy (same task, another builder); `copy` is "
        "the first, by the builders' import order. Which is shown on the left is drawn per judge "
        "(Assignment.swapped).")
    key = models.CharField(
        max_length=220, help_text="The bundle id of the copy or finding (in an adjudication, "
        "prefixed finding: or copy:); keys the order HMAC."
    )

    class Meta:
        ordering = ["session", "key"]
        constraints = [
            models.UniqueConstraint(fields=["session", "key"], name="item_unique_key")
        ]


class Assignment(models.Model):
    judge = models.ForeignKey("accounts.Judge", on_delete=models.CASCADE, related_name="assignments")
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="assignments")
    code = models.CharField(
        max_length=16, help_text="The item code this judge alone sees: a label, not a credential."
    )
    position = models.PositiveIntegerField(help_text="1-based place in the judge's drawn order.")
    order_key = models.CharField(
        max_length=64, help_text="HMAC-SHA256(order seed, item key), hex; sorting by it is the order."
    )
    swapped = models.BooleanField(
        default=False, help_text="Pairs sessions: the pair's second copy is shown on the left. "
        "Drawn per judge and pair from the judge's order seed (content.draws.pair_swapped), so it "
        "is committed with the order.")
    first_code = models.CharField(
        max_length=16, blank=True, default="",
        help_text="Pairs sessions: the code this judge sees on the pair's first copy (the same on "
        "every pair of theirs holding that copy).")
    second_code = models.CharField(
        max_length=16, blank=True, default="",
        help_text="Pairs sessions: the code this judge sees on the pair's second copy.")

    class Meta:
        ordering = ["judge", "position"]
        constraints = [
            models.UniqueConstraint(fields=["judge", "code"], name="assignment_unique_code"),
            models.UniqueConstraint(fields=["judge", "item"], name="assignment_unique_item"),
            models.UniqueConstraint(fields=["judge", "position"], name="assignment_unique_position"),
        ]


class Verdict(models.Model):
    """A judge's answer on one assignment in one phase. Locked rows never change (see triggers)."""

    assignment = models.ForeignKey(Assignment, on_delete=models.PROTECT, related_name="verdicts")
    phase = models.PositiveSmallIntegerField(choices=[(1, "phase 1"), (2, "phase 2")])
    value = models.CharField(
        max_length=12, help_text="pass/fail (copies) or real/false_alarm (findings); in an "
        "adjudication also cannot_tell; in a reasons session grounded, partly, not_grounded or "
        "no_claim; in a pairs session left, right, tie or both_bad (the sides as this judge saw "
        "them: Assignment.swapped says which copy was on the left)."
    )
    kept = models.BooleanField(
        default=False, help_text="Phase 2 only: the judge kept their phase-1 verdict."
    )
    reason = models.TextField(blank=True)
    seconds_spent = models.FloatField(
        default=0, help_text="Time the judge spent on the item in this phase, summed over visits."
    )
    # Issue 30 item 4: the server's own measure beside the page's. An "answer save" is a save
    # that creates the verdict or changes its answer (value, or keep); a save of the reason or
    # the time alone is none, so typing a reason cannot cut the interval up. Both fields are
    # written with the answer, under the judge's row lock (judging.services.verdicts.item_save),
    # and so never on a locked row.
    answered_at = models.DateTimeField(
        null=True, blank=True,
        help_text="When the server stored the verdict's current answer: the save that created "
                  "the verdict or last changed its value (or keep). A save of the reason or the "
                  "time alone leaves it. Null for verdicts saved before it was recorded.",
    )
    server_seconds = models.FloatField(
        null=True, blank=True,
        help_text="Seconds between the save that gave the verdict its current answer and the "
                  "judge's previous answer save in the same phase (of any of their items, this "
                  "one included), measured by the server's clock, not the page's. An answer save "
                  "creates a verdict or changes its value (or keep); saves of a reason or the "
                  "time alone are not counted. Null for the judge's first answer of the phase. "
                  "Saves retried after a lost connection arrive together, with short intervals.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    locked = models.BooleanField(default=False, help_text="Set when the judge locks the phase.")

    class Meta:
        ordering = ["assignment", "phase"]
        constraints = [
            models.UniqueConstraint(fields=["assignment", "phase"], name="verdict_one_per_phase")
        ]


class TaskFlag(models.Model):
    """A judge's flag on a task they saw (had an item of), in one phase: the task is invalid as
    posed (content.rules.FLAG_KINDS) with a severity 0..MAX_SEVERITY and a reason. A draft until
    the judge locks the phase, then immutable (see triggers), like a verdict. Shown to no one but
    its judge before the reveal."""

    judge = models.ForeignKey("accounts.Judge", on_delete=models.PROTECT, related_name="task_flags")
    task = models.ForeignKey(Task, on_delete=models.PROTECT, related_name="+")
    phase = models.PositiveSmallIntegerField(choices=[(1, "phase 1"), (2, "phase 2")])
    kind = models.CharField(max_length=20, help_text="underspecified, tests_unfair or other.")
    severity = models.PositiveSmallIntegerField(help_text="0 (minor) to 3 (the task is unusable).")
    reason = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    locked = models.BooleanField(default=False, help_text="Set when the judge locks the phase.")

    class Meta:
        ordering = ["judge", "phase", "task"]
        constraints = [
            models.UniqueConstraint(fields=["judge", "task", "phase"],
                                    name="task_flag_one_per_task_and_phase")
        ]


class ItemDraft(models.Model):
    """A judge's unfinished work on one item in one phase, beside (never instead of) the Verdict.

    It holds the reason typed before any verdict was chosen (moved onto the verdict when one is
    saved) and the time spent so far, and numbers every save of the item in the phase: a page
    that saves names the revision it showed, so a save from a tab that did not see another tab's
    newer save is noticed (judging.services.verdicts.item_save). Not a verdict: answered counts,
    locks and reports read Verdict rows only.
    """

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="drafts")
    phase = models.PositiveSmallIntegerField(choices=[(1, "phase 1"), (2, "phase 2")])
    reason = models.TextField(blank=True, help_text="A reason saved while no verdict exists yet.")
    seconds_spent = models.FloatField(
        default=0, help_text="Time on the item in this phase saved with the draft reason."
    )
    revision = models.PositiveIntegerField(
        default=0, help_text="Saves of this item in this phase so far (verdict or reason)."
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["assignment", "phase"], name="item_draft_one_per_phase")
        ]


class AuditEvent(models.Model):
    """Append-only: a database trigger refuses UPDATE and DELETE. Holds no personal names."""

    at = models.DateTimeField(auto_now_add=True)
    actor = models.CharField(max_length=200, help_text="host:<username>, judge:<pseudonym>, cli.")
    action = models.CharField(max_length=60)
    run = models.ForeignKey(Run, null=True, blank=True, on_delete=models.PROTECT)
    session = models.ForeignKey(Session, null=True, blank=True, on_delete=models.PROTECT)
    details = models.JSONField(default=dict)

    class Meta:
        ordering = ["at", "pk"]


class LiveSocket(models.Model):
    """One open websocket of a judge, so the host sees who is connected now across every server
    process. A process killed outright never deletes its rows: they stop counting once `seen_at`
    (refreshed by the client's ping) is older than `judging.live.STALE_SECONDS`."""

    channel_name = models.CharField(max_length=200, unique=True)
    judge = models.ForeignKey("accounts.Judge", on_delete=models.CASCADE, related_name="live_sockets")
    opened_at = models.DateTimeField(auto_now_add=True)
    seen_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["judge", "seen_at"], name="livesocket_judge_seen")]


# --- Renders, made once when a session opens ------------------------------------------------------
# What a judge is shown of model-written and host-written text is rendered when the session opens
# (content and redactions are frozen then) and served as stored bytes: no judge request renders or
# normalises anything (judging/renders.py writes these rows; the judge selectors read them).


# An opening's claim not refreshed for this long (its process died) may be taken over, and the
# host's page says the opening stopped (judging.services.session_open).
OPEN_LEASE_SECONDS = 300


class SessionRender(models.Model):
    """The session's rubric as the judge's page shows it, and the claim of the one opening that
    is rendering the session now (judging.services.session_open)."""

    session = models.OneToOneField(Session, on_delete=models.CASCADE, primary_key=True,
                                   related_name="render")
    inputs_sha256 = models.CharField(
        max_length=64, help_text="SHA-256 of what the renders depend on (tasks, rubric, "
        "redaction patterns); renders made for other inputs are thrown away, never served.")
    rubric_html = models.TextField(blank=True, help_text="The rubric, normalised and rendered inert.")
    instructions_html = models.TextField(
        blank=True, help_text="The host's instructions, normalised and rendered inert.")
    complete = models.BooleanField(
        default=False, help_text="Every item's render is stored (set by the opening that made them).")
    opener = models.CharField(
        max_length=32, blank=True, help_text="Random id of the opening rendering now; empty if none.")
    opener_seen_at = models.DateTimeField(
        null=True, blank=True, help_text="When that opening last stored a batch (its lease).")
    rendered = models.PositiveIntegerField(
        default=0, help_text="How many of the texts to render the opening has stored (its progress).")
    to_render = models.PositiveIntegerField(
        default=0, help_text="How many texts the opening renders in all (tasks, copies, findings).")
    failure = models.TextField(
        blank=True, help_text="Why the last opening stopped, for the host; empty when it did not fail.")


class CopyRender(models.Model):
    """A copy as a session's judges see it: the frame document (gzip-compressed: a hostile copy's
    frame can be megabytes of repeated marks, which served raw cost every other judge time), the
    hash of the style block it was rendered with (its CSP header is built from it), and the
    reviewers' reasons as HTML."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="copy_renders")
    copy = models.ForeignKey(Copy, on_delete=models.CASCADE, related_name="+")
    inputs_sha256 = models.CharField(max_length=64)
    style_hash = models.CharField(
        max_length=100, help_text="CSP source ('sha256-…') of the frame's one style block.")
    line_count = models.PositiveIntegerField(
        null=True, help_text="Rows of the frame's non-wrapping view (content.rendering.FrameBody): "
        "text or diff lines, file headers, file-list entries and notes; for markdown, its "
        "plain-text view's; each FRAME_LINE_PX high. Null for a frame stored before frames had "
        "rows (migration 0008), whose lines are not.")
    prose = models.BooleanField(
        default=False, help_text="The frame opens on rendered markdown (wrapping prose, no line "
        "count); its plain-text view (#text) has line_count rows.")
    prose_height_wide = models.PositiveIntegerField(
        null=True, help_text="A prose frame's height in px, estimated at opening "
        "(content.prose_height) for prose PROSE_MEASURE_CH wide; with prose_height_narrow, the "
        "judge's page sizes the frame at its own width. Null for other frames and for frames "
        "stored before the estimate (migration 0013).")
    prose_height_narrow = models.PositiveIntegerField(
        null=True, help_text="The same estimate for prose PROSE_NARROW_CH wide (about a phone).")
    # The large values last (migration 0020): SQLite stores a row's columns in table order, and a
    # column after a large value is reached only by walking its overflow pages, so every item
    # page's read of the small ones above paid for the frame's size (bench/README.md).
    reviews = models.JSONField(
        default=list, help_text="Per review of the copy, in reviewer order: review and reviewer "
        "ids, the verdict and the reason's HTML.")
    frame_gzip = models.BinaryField(
        help_text="The standalone HTML document served in the sandbox, UTF-8, gzip-compressed "
        "(judging.renders.pack_frame); served as these bytes to every browser that accepts gzip.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["session", "copy"], name="copyrender_one_per_copy")
        ]

    @property
    def frame(self) -> str:
        """The frame document as text (for checks and tests; serving sends the stored bytes)."""
        return gzip.decompress(bytes(self.frame_gzip)).decode("utf-8")


class TaskRender(models.Model):
    """A task statement as the session's judges see it above each of its copies (HTML)."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="task_renders")
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="+")
    inputs_sha256 = models.CharField(max_length=64)
    html = models.TextField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["session", "task"], name="taskrender_one_per_task")
        ]


class ReviewRender(models.Model):
    """A model review as a reasons session's judges audit it: its verdict and its reason (HTML),
    never its reviewer, condition or seal."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="review_renders")
    review = models.ForeignKey(Review, on_delete=models.CASCADE, related_name="+")
    inputs_sha256 = models.CharField(max_length=64)
    verdict = models.CharField(max_length=10, help_text="The review's verdict (pass/fail/abstain).")
    html = models.TextField(help_text="The review's reason, normalised and rendered inert.")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["session", "review"], name="reviewrender_one_per_review")
        ]


class FindingRender(models.Model):
    """A finding's text as a findings session's judges see it (HTML)."""

    session = models.ForeignKey(Session, on_delete=models.CASCADE, related_name="finding_renders")
    finding = models.ForeignKey(Finding, on_delete=models.CASCADE, related_name="+")
    inputs_sha256 = models.CharField(max_length=64)
    html = models.TextField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["session", "finding"], name="findingrender_one_per_finding")
        ]
