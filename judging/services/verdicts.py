"""Verdicts: recording a judge's answer, locking a phase. Locked verdicts never change."""

import math
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import DateTimeField, Subquery, Value
from django.utils import timezone

from accounts.enums import JudgeStatus
from accounts.models import Judge
from blindjudge.errors import Conflict, Invalid, NotFound
from judging import audit, live
from judging.enums import SessionKind, SessionState
from judging.models import Assignment, Item, ItemDraft, TaskFlag, Verdict
from judging.services.activity import judge_acted
from judging.services.checks import checked_text
from judging.services.pairs import PAIR_VERDICTS
from judging.services.reasons import REASON_VERDICTS

COPY_VERDICTS = ("pass", "fail")
FINDING_VERDICTS = ("real", "false_alarm")
KEEP = "keep"
# An adjudicator may say the item cannot be decided from what is shown: the item stays unknown
# (issue 29 item 1), never counted as either answer.
CANNOT_TELL = "cannot_tell"
ONE_PHASE = ("An adjudication has one phase: its verdicts were final when you locked them. "
             "Nothing was saved.")
REASONS_MISSING = ("{missing} of {total} items have no reason yet: {kind} gives its reason for "
                   "every answer. Nothing was locked.")
REASONS_REQUIRED = {SessionKind.ADJUDICATION: "an adjudication",
                    SessionKind.REASONS: "an audit of reasons"}


# A save names the phase its page was rendered for; one sent for a phase locked since (a tab left
# open, a save in flight during the lock) must never become a verdict of the next phase.
PHASE_1_LOCKED = ("Not saved: phase 1 is locked; its verdicts never change. This save was for "
                  "phase 1 (perhaps from another tab): reload to continue in phase 2.")
PHASE_2_LOCKED = ("Not saved: phase 2 is locked; its verdicts never change (you locked it, perhaps "
                  "in another tab).")
PHASE_MISSING = ("Not saved: the save did not say which phase it is for (phase: expected 1 or 2). "
                 "Reload the page and save again.")
LOCK_PHASE_MISSING = ("Nothing locked: the lock did not say which phase it is for (phase: expected "
                      "1 or 2). Reload the review page and lock from there.")

# The most time one save may record for one item in one phase: the running total a page sends
# is clamped to it (a tab left open and visible overnight still saves its verdict, with a time
# no report average can be swamped by). Twelve hours is far beyond any honest reading of a copy.
MAX_SECONDS_SPENT = 12 * 3600


# An answer given in less time than this on its item is marked for the judge to check before the
# lock ("answered in 0 s — check") and counted per judge in the report (issue 30 item 4).
QUICK_ANSWER_SECONDS = 1.0


def _phase_or_none(phase) -> int | None:
    """The phase a save names, or None where it names none (refused later, by _phase_of)."""
    try:
        return _phase_of(phase)
    except Invalid:
        return None


def answer_clock():
    """The server's time of an answer save: now. One name, so that the tests which pin the
    report's bytes can pin its intervals too (tests/support/clock.py)."""
    return timezone.now()


def _latest_answer_at(judge, phase: int | None):
    """When the judge last saved an answer in the phase, of any of their items (None: never):
    the newest `answered_at` of their verdicts of the phase, as a subquery riding in the
    assignment's lookup so a save makes no query more for it (tests/judging/test_query_counts.py).
    Read under the judge's row lock, so no other save of theirs falls in between."""
    if phase is None:
        return Value(None, output_field=DateTimeField())
    return Subquery(Verdict.objects.filter(assignment__judge_id=judge.pk, phase=phase,
                                           answered_at__isnull=False)
                    .order_by("-answered_at").values("answered_at")[:1])


def _phase_of(phase, missing: str = PHASE_MISSING) -> int:
    """1 or 2 from the phase a save or a lock names (an int, or the form's text); Invalid (with
    `missing`) for anything else."""
    if isinstance(phase, str):
        phase = phase.strip()
        phase = int(phase) if phase in ("1", "2") else None
    if isinstance(phase, bool) or phase not in (1, 2):
        raise Invalid(missing)
    return phase


def verdict_values(kind: str, *, finding: bool | None = None) -> tuple[str, ...]:
    """The verdicts a judge may give on an item of a `kind` session. An adjudication's items are
    findings or copies: `finding` says which, and either takes CANNOT_TELL besides."""
    if kind == SessionKind.ADJUDICATION:
        return (FINDING_VERDICTS if finding else COPY_VERDICTS) + (CANNOT_TELL,)
    if kind == SessionKind.REASONS:
        return REASON_VERDICTS
    if kind == SessionKind.PAIRS:
        return PAIR_VERDICTS
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


class ChangedElsewhere(Conflict):
    """A save from a page that had not seen the item's latest save (another tab, another device):
    refused so nothing is overwritten unseen. Carries what is stored now, for the page to show
    and offer "keep mine", which saves again with `overwrite`."""

    code = "changed_elsewhere"

    def __init__(self, *, verdict: str, reason: str, revision: int):
        super().__init__(CHANGED_ELSEWHERE)
        self.current = {"verdict": verdict, "reason": reason, "revision": revision}


CHANGED_ELSEWHERE = ("Not saved: this item was changed in another tab or window since this page "
                     "showed it. The saved version is shown; keep yours to overwrite it.")


@dataclass(frozen=True)
class ItemSaved:
    verdict: Verdict | None  # None: a reason saved before any verdict (the item is not answered)
    revision: int  # the item's save number in the phase, after this save
    saved_at: datetime


def _revision_of(revision) -> int | None:
    """The revision a save names (an int, or the form's text); None when it names none."""
    if revision is None or revision == "":
        return None
    if isinstance(revision, str):
        revision = revision.strip()
        if not revision.isdigit():
            raise Invalid("revision: expected the number of the item's last save, 0 or more")
        return int(revision)
    if isinstance(revision, bool) or not isinstance(revision, int) or revision < 0:
        raise Invalid("revision: expected the number of the item's last save, 0 or more")
    return revision


def _seconds_of(seconds_spent) -> float:
    try:
        seconds_spent = float(seconds_spent)
    except (TypeError, ValueError):
        raise Invalid("seconds spent: expected a number") from None
    if not 0 <= seconds_spent < math.inf:
        raise Invalid("seconds spent: expected a number of seconds, 0 or more")
    return min(seconds_spent, MAX_SECONDS_SPENT)


def item_save(*, judge, code: str, phase: int, value: str, reason: str = "",
              seconds_spent: float = 0.0, revision=None, overwrite: bool = False) -> ItemSaved:
    """Save the judge's work on one of their items in phase 1 or 2: a verdict (a draft until the
    lock), or, with an empty `value`, the reason alone.

    A reason alone before any verdict of the phase is kept as the item's draft (ItemDraft): it
    answers nothing (answered counts, locks and reports read verdicts only) and moves onto the
    verdict when one is saved. A reason alone once a verdict exists changes that verdict's reason.
    In phase 2, `keep` records the judge's own phase-1 verdict; nothing is ever chosen for the
    judge, so an item is answered in phase 2 only by an explicit verdict or `keep`.

    Idempotent: saving what is stored again changes nothing and never adds a row. `phase` is the
    phase the judge's page was rendered for (1 or 2, or its text from a form): a save for a phase
    the judge has locked since is refused, never stored as a verdict of the next phase.
    `seconds_spent` is the judge's running total on the item in this phase, clamped to
    MAX_SECONDS_SPENT; the stored time never decreases, so a replay cannot lower it.
    An answer save (the verdict created, or its value or keep changed; not a save of the reason
    or the time alone) stamps the verdict's `answered_at` and `server_seconds`: the server's
    interval since the judge's previous answer save in the phase, of any item (None for the
    first), beside the page's `seconds_spent`.
    `revision` is the item's save number the page showed (None: the caller does not track it,
    the last save wins): a save naming another one while what is stored differs from what it
    sends is refused with ChangedElsewhere (409 `changed_elsewhere`), unless `overwrite`.
    Side effects: creates or updates the Verdict row of (assignment, phase), or the draft's
    reason; bumps the item's revision when anything changed; a new verdict adds one to the
    judge's answered count of that phase; a save that changed anything stamps the judge's last
    activity (Judge.last_acted_at, in the same write of their row); after commit, tells the
    judge's other tabs, and the host's dashboard when the item got its first verdict. Reasons
    and drafts are not audited (verdicts never are: they are the judge's work, and the lock is
    the audited event).
    Refuses: an unknown code (404, same as another judge's code), a closed session, a locked
    phase (409: PHASE_1_LOCKED, PHASE_2_LOCKED), phase 2 before the phase-1 lock (409), a missing
    or garbled phase (400: PHASE_MISSING), a time that is not a number of seconds (400), a
    garbled revision (400), a value outside the session's kind.
    """
    reason = checked_text(reason, field="reason")  # BLINDJUDGE_MAX_VERDICT_REASON_CHARS
    seconds_spent = _seconds_of(seconds_spent)
    revision = _revision_of(revision)
    value = (value or "").strip()
    with transaction.atomic():
        judge = judge_for_update(judge)
        session = judge.session
        if session.state != SessionState.OPEN:
            raise Conflict(f"the session is {session.state}; verdicts are not accepted now")
        # order_by(): the default ordering would join and sort for a unique-key lookup.
        assignment = (Assignment.objects.filter(judge=judge, code=code).order_by()
                      .annotate(latest_answer_at=_latest_answer_at(judge, _phase_or_none(phase)))
                      .first())
        if assignment is None:
            raise NotFound("no such item")
        phase = _phase_of(phase)  # after the code: another judge's code is a 404 whatever is sent
        adjudication = session.kind == SessionKind.ADJUDICATION
        if adjudication and (phase == 2 or judge.phase1_locked_at):
            raise Conflict(ONE_PHASE)
        allowed = verdict_values(session.kind, finding=adjudication and Item.objects.filter(
            pk=assignment.item_id, finding__isnull=False).exists())
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
        if value and value not in allowed:
            raise Invalid(f'verdict "{value}" is not one of {", ".join(allowed)}')
        verdict = Verdict.objects.filter(assignment=assignment, phase=phase).order_by().first()
        draft = ItemDraft.objects.filter(assignment=assignment, phase=phase).order_by().first()
        stored_revision = draft.revision if draft else 0
        if revision is not None and revision != stored_revision and not overwrite:
            stored = ((verdict.value, verdict.kept, verdict.reason) if verdict
                      else ("", False, draft.reason if draft else ""))
            sent = (value, kept, reason) if value else (stored[0], stored[1], reason)
            if sent != stored:  # a replay of what is stored is no conflict
                raise ChangedElsewhere(
                    verdict=(KEEP if verdict and verdict.kept else verdict.value if verdict else ""),
                    reason=stored[2], revision=stored_revision)
        changed = False
        new_answer = None  # the answered count a new verdict adds to
        if value:
            if draft is not None:
                # The time saved with a reason before the verdict counts towards the verdict's.
                seconds_spent = max(seconds_spent, draft.seconds_spent)
            answered_at = answer_clock()
            # The clock stepped back (a time sync) would give a negative interval: none is 0.
            server_seconds = (None if assignment.latest_answer_at is None else
                              max((answered_at - assignment.latest_answer_at).total_seconds(), 0.0))
            if verdict is None:
                verdict = Verdict.objects.create(
                    assignment=assignment, phase=phase, value=value, kept=kept, reason=reason,
                    seconds_spent=seconds_spent, answered_at=answered_at,
                    server_seconds=server_seconds,
                )
                new_answer = judge.answered_field(phase)
                live.verdict_saved(judge, code=code, phase=phase, new=True)
                changed = True
            elif (verdict.value, verdict.kept, verdict.reason) != (value, kept, reason) or \
                    seconds_spent > verdict.seconds_spent:
                fields = ["value", "kept", "reason", "seconds_spent", "updated_at"]
                if (verdict.value, verdict.kept) != (value, kept):  # a new answer
                    verdict.answered_at, verdict.server_seconds = answered_at, server_seconds
                    fields += ["answered_at", "server_seconds"]
                verdict.value, verdict.kept, verdict.reason = value, kept, reason
                verdict.seconds_spent = max(verdict.seconds_spent, seconds_spent)
                verdict.save(update_fields=fields)
                live.verdict_saved(judge, code=code, phase=phase, new=False)
                changed = True
        elif verdict is not None:
            if verdict.reason != reason or seconds_spent > verdict.seconds_spent:
                verdict.reason = reason
                verdict.seconds_spent = max(verdict.seconds_spent, seconds_spent)
                verdict.save(update_fields=["reason", "seconds_spent", "updated_at"])
                live.verdict_saved(judge, code=code, phase=phase, new=False)
                changed = True
        elif draft is None:
            changed = bool(reason) or seconds_spent > 0  # an empty save of nothing stores nothing
        elif draft.reason != reason or seconds_spent > draft.seconds_spent:
            changed = True
        if changed:
            draft = _draft_saved(draft, assignment, phase, verdict=verdict, reason=reason,
                                 seconds_spent=seconds_spent)
            # The judge's last activity and answered count, in one write of their row.
            judge_acted(judge.pk, draft.updated_at, answered_field=new_answer)
        saved_at = draft.updated_at if draft else (verdict.updated_at if verdict else timezone.now())
    return ItemSaved(verdict=verdict, revision=draft.revision if draft else 0, saved_at=saved_at)


def _draft_saved(draft, assignment, phase, *, verdict, reason, seconds_spent) -> ItemDraft:
    """The item's draft after a save that changed something: its revision one higher; the reason
    kept there only while no verdict holds it."""
    if draft is None:
        draft = ItemDraft(assignment=assignment, phase=phase)
    draft.revision += 1
    if verdict is None:
        draft.reason = reason
        draft.seconds_spent = max(draft.seconds_spent, seconds_spent)
    else:
        draft.reason = ""  # the verdict holds the reason now
    draft.save()
    return draft


def phase_lock(*, judge, phase: int | str):
    """Lock a judge's verdicts of one phase, after every item has one. Never undone.

    `phase` is the phase the judge's review page was rendered for (1 or 2, or its text from the
    form), never the phase the judge is in now: a review page left open in phase 1 locks nothing
    once phase 1 is locked (409), so a stale tab can never lock phase 2.

    The judge row is locked first (`select_for_update` on PostgreSQL; SQLite's IMMEDIATE
    transaction serialises writers) so two tabs locking at once give exactly one lock: the second
    sees the first's lock and is refused with a 409, never a database error.
    Side effects: marks the phase's verdicts and task flags locked (the database triggers then
    refuse any change to them), stamps the judge's lock time, appends a `phase.locked` audit
    event; after commit, tells the judge's other tabs and the host's dashboard.
    """
    phase = _phase_of(phase, LOCK_PHASE_MISSING)
    with transaction.atomic():
        judge = judge_for_update(judge)
        session = judge.session
        if session.state != SessionState.OPEN:
            raise Conflict(f"the session is {session.state}; locking is not possible now")
        stamp = "phase1_locked_at" if phase == 1 else "phase2_locked_at"
        if getattr(judge, stamp):
            raise Conflict(f"phase {phase} is already locked")
        if phase == 2 and session.kind == SessionKind.ADJUDICATION:
            raise Conflict(ONE_PHASE)
        if phase == 2 and not judge.phase1_locked_at:
            raise Conflict("phase 2 opens after you lock phase 1")
        assignments = judge.assignments.count()
        answered = judge.answered(phase)  # read under the judge's row lock, as item_save keeps it
        if answered < assignments:
            raise Conflict(
                f"{assignments - answered} of {assignments} items have no phase-{phase} verdict yet"
            )
        if phase == 1 and session.kind in REASONS_REQUIRED:
            # Every answer, "cannot tell" too, carries its reason: an adjudication's is shown
            # beside the original truth, an audit's says which claim did or did not check out,
            # and an answer without one could not be checked by anyone.
            unexplained = Verdict.objects.filter(assignment__judge=judge, phase=1, reason="").count()
            if unexplained:
                raise Conflict(REASONS_MISSING.format(missing=unexplained, total=assignments,
                                                      kind=REASONS_REQUIRED[session.kind]))
        Verdict.objects.filter(assignment__judge=judge, phase=phase, locked=False).update(
            locked=True
        )
        if session.task_flags:
            # The judge's task flags of the phase lock with its verdicts (judging.services.flags);
            # a session without them has none, and its lock makes no query for them.
            TaskFlag.objects.filter(judge=judge, phase=phase, locked=False).update(locked=True)
        setattr(judge, stamp, timezone.now())
        judge.save(update_fields=[stamp])
        audit.record("phase.locked", actor=f"judge:{judge.pseudonym}", session=session,
                     judge=judge.pseudonym, phase=phase)
        live.judge_locked(judge, phase=phase)
    return judge
