"""Task flags: a judge's word that a task is invalid as posed (issue 29 item 3). Drafts until the
judge locks the phase (judging.services.verdicts.phase_lock locks them with the verdicts), then
immutable; shown to no one but their judge before the reveal."""

from django.db import transaction

from blindjudge.errors import Conflict, Invalid, NotFound
from content.rules import FLAG_KINDS, MAX_SEVERITY
from judging.enums import SessionState
from judging.models import Assignment, TaskFlag
from judging.services.checks import checked_text
from judging.services.verdicts import (
    PHASE_1_LOCKED,
    PHASE_2_LOCKED,
    _phase_of,
    judge_for_update,
)

NOT_COLLECTED = "this session does not collect task flags"
FLAG_PHASE_1_LOCKED = PHASE_1_LOCKED.replace("its verdicts never change", "its verdicts and task "
                                             "flags never change")
FLAG_PHASE_2_LOCKED = PHASE_2_LOCKED.replace("its verdicts never change", "its verdicts and task "
                                             "flags never change")


def _severity_of(severity) -> int:
    if isinstance(severity, str) and severity.strip().isdigit():
        severity = int(severity.strip())
    if isinstance(severity, bool) or not isinstance(severity, int) or \
            not 0 <= severity <= MAX_SEVERITY:
        raise Invalid(f"severity: expected a whole number from 0 to {MAX_SEVERITY}")
    return severity


def task_flag_checked(*, kind, severity, reason) -> tuple[str, int, str]:
    """A flag's own fields as they are stored, or Invalid (400): the kind one of
    content.rules.FLAG_KINDS, the severity 0..MAX_SEVERITY (or its text from a form), a reason
    (required; the stored text's limits). What task_flag_record checks of the flag itself, after
    what it checks of the judge and the session; a host's preview of the item page answers with
    it and stores nothing."""
    reason = checked_text(reason or "", field="reason").strip()
    kind = (kind or "").strip() if isinstance(kind, str) else kind
    if kind not in FLAG_KINDS:
        raise Invalid(f'kind "{kind}" is not one of {", ".join(FLAG_KINDS)}')
    severity = _severity_of(severity)
    if not reason:
        raise Invalid("reason: say why the task is flagged")
    return kind, severity, reason


def task_flag_record(*, judge, code: str, phase, kind: str, severity, reason: str) -> TaskFlag:
    """Flag the task of one of the judge's items (`code`: any item of the task) in phase 1 or 2 as
    `kind` (content.rules.FLAG_KINDS) with `severity` (0..MAX_SEVERITY, or its text from a form)
    and a reason (required). One flag per judge, task and phase: a later call before the lock
    replaces the draft. Idempotent: the same flag again changes nothing.

    Side effects: creates or updates the TaskFlag row of (judge, task, phase). Not audited and
    never sent to the host's dashboard: before the reveal a flag is its judge's alone.
    Refuses: a session that is not open (409), an unknown code (404, the same as another judge's
    code: a judge names only tasks they saw), a session that does not collect task flags (409),
    a missing or garbled phase (400), a locked phase or phase 2 before the phase-1 lock (409), a
    kind outside FLAG_KINDS, a severity outside 0..MAX_SEVERITY, an empty reason (400).
    """
    reason = checked_text(reason or "", field="reason").strip()
    kind = (kind or "").strip() if isinstance(kind, str) else kind
    with transaction.atomic():
        judge = judge_for_update(judge)
        session = judge.session
        if session.state != SessionState.OPEN:
            raise Conflict(f"the session is {session.state}; task flags are not accepted now")
        assignment = (Assignment.objects.filter(judge=judge, code=code).order_by()
                      .select_related("item").first())
        if assignment is None:
            raise NotFound("no such item")  # first: another judge's code is a 404 everywhere
        if not session.task_flags:
            raise Conflict(NOT_COLLECTED)
        phase = _phase_of(phase)  # after the code: another judge's code is a 404 whatever is sent
        if phase == 1:
            if judge.phase1_locked_at:
                raise Conflict(FLAG_PHASE_1_LOCKED)
        else:
            if not judge.phase1_locked_at:
                raise Conflict("phase 2 opens after you lock phase 1")
            if judge.phase2_locked_at:
                raise Conflict(FLAG_PHASE_2_LOCKED)
        kind, severity, reason = task_flag_checked(kind=kind, severity=severity, reason=reason)
        task_id = assignment.item.task_id
        flag = TaskFlag.objects.filter(judge=judge, task_id=task_id, phase=phase).first()
        if flag is None:
            flag = TaskFlag.objects.create(judge=judge, task_id=task_id, phase=phase, kind=kind,
                                           severity=severity, reason=reason)
        elif (flag.kind, flag.severity, flag.reason) != (kind, severity, reason):
            flag.kind, flag.severity, flag.reason = kind, severity, reason
            flag.save(update_fields=["kind", "severity", "reason", "updated_at"])
    return flag
