"""Verdicts: recording a judge's answer, locking a phase. Locked verdicts never change."""

import math

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import Judge, JudgeStatus
from blindjudge.errors import Conflict, Invalid, NotFound
from judging import audit, live
from judging.models import Assignment, SessionKind, SessionState, Verdict
from judging.services.checks import checked_text

COPY_VERDICTS = ("pass", "fail")
FINDING_VERDICTS = ("real", "false_alarm")
KEEP = "keep"


# A save names the phase its page was rendered for; one sent for a phase locked since (a tab left
# open, a save in flight during the lock) must never become a verdict of the next phase.
PHASE_1_LOCKED = ("Not saved: phase 1 is locked; its verdicts never change. This save was for "
                  "phase 1 (perhaps from another tab): reload to continue in phase 2.")
PHASE_2_LOCKED = ("Not saved: phase 2 is locked; its verdicts never change (you locked it, perhaps "
                  "in another tab).")
PHASE_MISSING = ("Not saved: the save did not say which phase it is for (phase: expected 1 or 2). "
                 "Reload the page and save again.")

# The most time one save may record for one item in one phase: the running total a page sends
# is clamped to it (a tab left open and visible overnight still saves its verdict, with a time
# no report average can be swamped by). Twelve hours is far beyond any honest reading of a copy.
MAX_SECONDS_SPENT = 12 * 3600


def _phase_of(phase) -> int:
    """1 or 2 from the phase a save names (an int, or the form's text); Invalid for anything else."""
    if isinstance(phase, str):
        phase = phase.strip()
        phase = int(phase) if phase in ("1", "2") else None
    if isinstance(phase, bool) or phase not in (1, 2):
        raise Invalid(PHASE_MISSING)
    return phase


def verdict_values(kind: str) -> tuple[str, ...]:
    return COPY_VERDICTS if kind == SessionKind.COPIES else FINDING_VERDICTS


def judge_for_update(judge):
    # The run comes along for the audit event of a lock; the session's protocol and the run's
    # manifest (an entry per item each) are needed by neither a verdict nor a lock.
    judge = (Judge.objects.select_for_update(of=("self",)).select_related("session__run")
             .defer("session__protocol", "session__run__manifest", "session__run__request_keys")
             .get(pk=judge.pk))
    if judge.status != JudgeStatus.ACTIVE:
        raise NotFound("no such judge")
    return judge


def verdict_record(*, judge, code: str, phase: int, value: str, reason: str = "",
                   seconds_spent: float = 0.0) -> Verdict:
    """Save a judge's verdict on one of their items in phase 1 or 2 (a draft until the lock).

    Idempotent: saving the same verdict again changes nothing and never adds a row. In phase 2,
    `keep` records the judge's own phase-1 verdict. `phase` is the phase the judge's page was
    rendered for (1 or 2, or its text from a form): a save for a phase the judge has locked since
    is refused, never stored as a verdict of the next phase. `seconds_spent` is the judge's
    running total on the item in this phase, clamped to MAX_SECONDS_SPENT; the stored time never
    decreases, so a replay cannot lower it.
    Side effects: creates or updates the Verdict row of (assignment, phase); a new row adds one
    to the judge's answered count of that phase; after commit, tells the judge's other tabs, and
    the host's dashboard when the item got its first verdict.
    Refuses: an unknown code (404, same as another judge's code), a closed session, a locked
    phase (409: PHASE_1_LOCKED, PHASE_2_LOCKED), phase 2 before the phase-1 lock (409), a missing
    or garbled phase (400: PHASE_MISSING), a time that is not a number of seconds (400), a value
    outside the session's kind.
    """
    reason = checked_text(reason, field="reason")  # BLINDJUDGE_MAX_VERDICT_REASON_CHARS
    try:
        seconds_spent = float(seconds_spent)
    except (TypeError, ValueError):
        raise Invalid("seconds spent: expected a number") from None
    if not 0 <= seconds_spent < math.inf:
        raise Invalid("seconds spent: expected a number of seconds, 0 or more")
    seconds_spent = min(seconds_spent, MAX_SECONDS_SPENT)
    with transaction.atomic():
        judge = judge_for_update(judge)
        session = judge.session
        if session.state != SessionState.OPEN:
            raise Conflict(f"the session is {session.state}; verdicts are not accepted now")
        # order_by(): the default ordering would join and sort for a unique-key lookup.
        assignment = Assignment.objects.filter(judge=judge, code=code).order_by().first()
        if assignment is None:
            raise NotFound("no such item")
        phase = _phase_of(phase)  # after the code: another judge's code is a 404 whatever is sent
        allowed = verdict_values(session.kind)
        kept = False
        if phase == 1:
            if judge.phase1_locked_at:
                raise Conflict(PHASE_1_LOCKED)
        else:
            if not judge.phase1_locked_at:
                raise Conflict("phase 2 opens after you lock phase 1")
            if judge.phase2_locked_at:
                raise Conflict(PHASE_2_LOCKED)
            if value == KEEP:
                value = Verdict.objects.get(assignment=assignment, phase=1).value
                kept = True
        if value not in allowed:
            raise Invalid(f'verdict "{value}" is not one of {", ".join(allowed)}')
        verdict = Verdict.objects.filter(assignment=assignment, phase=phase).order_by().first()
        if verdict is None:
            verdict = Verdict.objects.create(
                assignment=assignment, phase=phase, value=value, kept=kept, reason=reason,
                seconds_spent=seconds_spent,
            )
            answered = f"phase{phase}_answered"
            type(judge).objects.filter(pk=judge.pk).update(**{answered: F(answered) + 1})
            live.verdict_saved(judge, code=code, phase=phase, new=True)
        elif (verdict.value, verdict.kept, verdict.reason) != (value, kept, reason) or \
                seconds_spent > verdict.seconds_spent:
            verdict.value, verdict.kept, verdict.reason = value, kept, reason
            verdict.seconds_spent = max(verdict.seconds_spent, seconds_spent)
            verdict.save(update_fields=["value", "kept", "reason", "seconds_spent", "updated_at"])
            live.verdict_saved(judge, code=code, phase=phase, new=False)
    return verdict


def phase_lock(*, judge, phase: int):
    """Lock a judge's verdicts of one phase, after every item has one. Never undone.

    The judge row is locked first (`select_for_update` on PostgreSQL; SQLite's IMMEDIATE
    transaction serialises writers) so two tabs locking at once give exactly one lock: the second
    sees the first's lock and is refused with a 409, never a database error.
    Side effects: marks the phase's verdicts locked (the database trigger then refuses any change
    to them), stamps the judge's lock time, appends a `phase.locked` audit event; after commit,
    tells the judge's other tabs and the host's dashboard.
    """
    if phase not in (1, 2):
        raise Invalid("phase: expected 1 or 2")
    with transaction.atomic():
        judge = judge_for_update(judge)
        session = judge.session
        if session.state != SessionState.OPEN:
            raise Conflict(f"the session is {session.state}; locking is not possible now")
        stamp = "phase1_locked_at" if phase == 1 else "phase2_locked_at"
        if getattr(judge, stamp):
            raise Conflict(f"phase {phase} is already locked")
        if phase == 2 and not judge.phase1_locked_at:
            raise Conflict("phase 2 opens after you lock phase 1")
        assignments = judge.assignments.count()
        answered = Verdict.objects.filter(assignment__judge=judge, phase=phase).count()
        if answered < assignments:
            raise Conflict(
                f"{assignments - answered} of {assignments} items have no phase-{phase} verdict yet"
            )
        Verdict.objects.filter(assignment__judge=judge, phase=phase, locked=False).update(
            locked=True
        )
        setattr(judge, stamp, timezone.now())
        judge.save(update_fields=[stamp])
        audit.record("phase.locked", actor=f"judge:{judge.pseudonym}", session=session,
                     judge=judge.pseudonym, phase=phase)
        live.judge_locked(judge, phase=phase)
    return judge
