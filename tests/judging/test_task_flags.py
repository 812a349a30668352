"""Task validity from the judges (issue 29 item 3): the session option, the one service that records
a flag, its lock with the phase and the database's refusal to change a locked flag."""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import DatabaseError, connection, transaction

from blindjudge.errors import Conflict, Invalid, NotFound
from judging.models import Session, TaskFlag
from judging.services import (
    phase_lock,
    prereg_amend,
    session_update_draft,
    task_flag_record,
)
from tests.worlds import a_run, a_session, advance, answer_all, codes, invite_and_join
from tests.worlds import make_run2_bundle as run2

EXCLUDE = ('```rules\n[{"name": "drop", "action": "exclude_tasks", '
           '"when": {"flag_share": ">=0.5", "severity": ">=2"}}]\n```\n')


@pytest.fixture
def run_of_two_tasks(host):
    return a_run(host, run2())


@pytest.fixture
def flags_session(run_of_two_tasks):
    return a_session(run_of_two_tasks, "open", task_flags=True)


@pytest.fixture
def flagger(flags_session):
    return invite_and_join(flags_session, name="Flagger").judge


def task_of(judge, code):
    return judge.assignments.get(code=code).item.task


# --- The option --------------------------------------------------------------------------------

def test_task_flags_freeze_in_the_protocol_only_when_on(run_of_two_tasks):
    on = a_session(run_of_two_tasks, "open", task_flags=True)
    off = a_session(run_of_two_tasks, "open")
    assert on.protocol["task_flags"] is True
    assert "task_flags" not in off.protocol
    assert Session.objects.get(pk=on.pk).task_flags is True


def test_task_flags_are_refused_on_a_findings_session(run):
    with pytest.raises(Invalid, match="task flags: only a copies session"):
        a_session(run, kind="findings", task_flags=True)
    assert not Session.objects.exists()


def test_an_exclude_tasks_rule_is_accepted_exactly_where_flags_are_collected(run_of_two_tasks):
    with pytest.raises(Invalid, match="this session does not collect them"):
        a_session(run_of_two_tasks, preregistration=EXCLUDE)
    draft = a_session(run_of_two_tasks, preregistration=EXCLUDE, task_flags=True)
    # Turning them off under the rule is refused; the draft stays as it was.
    with pytest.raises(Invalid, match="this session does not collect them"):
        session_update_draft(session=draft, actor="test", task_flags=False)
    assert Session.objects.get(pk=draft.pk).task_flags is True
    # A draft without flags takes the rule once the same edit turns them on.
    plain = a_session(run_of_two_tasks)
    with pytest.raises(Invalid, match="this session does not collect them"):
        session_update_draft(session=plain, actor="test", preregistration=EXCLUDE)
    session_update_draft(session=plain, actor="test", preregistration=EXCLUDE, task_flags=True)
    plain.refresh_from_db()
    assert plain.task_flags and "exclude_tasks" in plain.preregistration
    opened = advance(draft, "open")
    assert opened.protocol["task_flags"] is True
    # Amendments: accepted where flags are collected, refused elsewhere.
    prereg_amend(session=opened, text=EXCLUDE, actor="test")
    without = a_session(run_of_two_tasks, "open")
    with pytest.raises(Invalid, match="amendment: .*this session does not collect them"):
        prereg_amend(session=without, text=EXCLUDE, actor="test")


def test_create_session_takes_task_flags_and_refuses_them_on_findings(run_of_two_tasks):
    out = io.StringIO()
    call_command("create_session", str(run_of_two_tasks.pk), "--kind", "copies", "--task-flags",
                 "--json", stdout=out)
    session = Session.objects.get(pk=json.loads(out.getvalue())["session"])
    assert session.task_flags is True
    with pytest.raises(CommandError, match="task flags: only a copies session"):
        call_command("create_session", str(run_of_two_tasks.pk), "--kind", "findings",
                     "--task-flags", stdout=io.StringIO())


# --- Recording a flag --------------------------------------------------------------------------

def test_a_flag_is_a_draft_until_the_lock_and_a_later_one_replaces_it(flagger):
    first, *rest = codes(flagger)
    task = task_of(flagger, first)
    task_flag_record(judge=flagger, code=first, phase=1, kind="underspecified", severity=1,
                     reason="which sign?")
    # Another item of the same task names the same task: the flag is replaced, never doubled.
    same_task = next(c for c in rest if task_of(flagger, c) == task)
    task_flag_record(judge=flagger, code=same_task, phase=1, kind="tests_unfair", severity="3",
                     reason="  the tests reject a right answer ")
    row = TaskFlag.objects.get(judge=flagger)
    assert (row.task, row.phase, row.kind, row.severity, row.reason, row.locked) == (
        task, 1, "tests_unfair", 3, "the tests reject a right answer", False)


def test_bad_values_are_refused_and_nothing_is_stored(flagger):
    code = codes(flagger)[0]
    for kind, severity, reason, message in [
        ("broken", 1, "r", 'kind "broken" is not one of underspecified, tests_unfair, other'),
        ("other", 4, "r", "severity: expected a whole number from 0 to 3"),
        ("other", -1, "r", "severity: expected a whole number from 0 to 3"),
        ("other", "two", "r", "severity: expected a whole number from 0 to 3"),
        ("other", True, "r", "severity: expected a whole number from 0 to 3"),
        ("other", 1, "  ", "reason: say why the task is flagged"),
    ]:
        with pytest.raises(Invalid, match=message):
            task_flag_record(judge=flagger, code=code, phase=1, kind=kind, severity=severity,
                             reason=reason)
    with pytest.raises(Invalid, match="phase: expected 1 or 2"):
        task_flag_record(judge=flagger, code=code, phase=3, kind="other", severity=1, reason="r")
    assert not TaskFlag.objects.exists()


def test_another_judges_code_is_the_same_404_as_no_code(flags_session, flagger):
    other = invite_and_join(flags_session, name="Other").judge
    foreign = next(c for c in codes(other) if c not in codes(flagger))
    with pytest.raises(NotFound) as foreign_error:
        task_flag_record(judge=flagger, code=foreign, phase=1, kind="other", severity=1, reason="r")
    with pytest.raises(NotFound) as missing_error:
        task_flag_record(judge=flagger, code="ZZZZ", phase=1, kind="other", severity=1, reason="r")
    assert foreign_error.value.message == missing_error.value.message
    assert not TaskFlag.objects.exists()


def test_a_judge_cannot_flag_a_task_they_did_not_see(host):
    run = a_run(host, run2())
    session = a_session(run, "open", task_flags=True, by_task=True, items_per_judge=3)
    judge = invite_and_join(session, name="One task").judge
    seen = {a.item.task_id for a in judge.assignments.all()}
    assert len(seen) == 1
    # A judge names a task only by a code of theirs, so a task they did not see has none: the 404.
    unseen = [c for c in codes(invite_and_join(session, name="Other").judge)
              if c not in codes(judge)]
    with pytest.raises(NotFound):
        task_flag_record(judge=judge, code=unseen[0], phase=1, kind="other", severity=0,
                         reason="r")
    assert not TaskFlag.objects.exists()


def test_a_session_without_task_flags_refuses_them(open_session, invited_judge):
    with pytest.raises(Conflict, match="this session does not collect task flags"):
        task_flag_record(judge=invited_judge, code=codes(invited_judge)[0], phase=1,
                         kind="other", severity=1, reason="r")
    assert not TaskFlag.objects.exists()


def test_the_lock_locks_the_flags_of_its_phase_and_then_refuses_changes(flagger):
    code = codes(flagger)[0]
    task_flag_record(judge=flagger, code=code, phase=1, kind="other", severity=2, reason="odd")
    with pytest.raises(Conflict, match="phase 2 opens after you lock phase 1"):
        task_flag_record(judge=flagger, code=code, phase=2, kind="other", severity=2, reason="r")
    answer_all(flagger, 1, "pass", lock=True)
    assert TaskFlag.objects.get(judge=flagger, phase=1).locked is True
    with pytest.raises(Conflict, match="phase 1 is locked"):
        task_flag_record(judge=flagger, code=code, phase=1, kind="other", severity=0, reason="no")
    # Phase 2 has flags of its own, locked with phase 2.
    task_flag_record(judge=flagger, code=code, phase=2, kind="underspecified", severity=1,
                     reason="still odd")
    assert TaskFlag.objects.get(judge=flagger, phase=2).locked is False
    answer_all(flagger, 2, "keep", lock=True)
    assert list(TaskFlag.objects.filter(judge=flagger).order_by("phase")
                .values_list("phase", "kind", "severity", "locked")) == [
        (1, "other", 2, True), (2, "underspecified", 1, True)]
    with pytest.raises(Conflict, match="phase 2 is locked"):
        task_flag_record(judge=flagger, code=code, phase=2, kind="other", severity=0, reason="no")


def test_a_closed_session_takes_no_flags(flags_session, flagger):
    advance(flags_session, "closed")
    with pytest.raises(Conflict, match="the session is closed"):
        task_flag_record(judge=flagger, code=codes(flagger)[0], phase=1, kind="other",
                         severity=1, reason="r")


def test_raw_update_and_delete_of_a_locked_flag_fail_and_of_a_draft_do_not(flagger):
    code = codes(flagger)[0]
    task_flag_record(judge=flagger, code=code, phase=1, kind="other", severity=2, reason="odd")
    table = TaskFlag._meta.db_table
    draft = TaskFlag.objects.get(judge=flagger)
    with connection.cursor() as cursor:  # the positive control: a draft is no locked row
        cursor.execute(f"UPDATE {table} SET severity = 3 WHERE id = %s", [draft.pk])
    assert TaskFlag.objects.get(pk=draft.pk).severity == 3
    answer_all(flagger, 1, "pass")
    phase_lock(judge=flagger, phase=1)
    for statement, params in [(f"UPDATE {table} SET severity = 0 WHERE id = %s", [draft.pk]),
                              (f"UPDATE {table} SET locked = %s WHERE id = %s", [False, draft.pk]),
                              (f"DELETE FROM {table} WHERE id = %s", [draft.pk])]:
        with pytest.raises(DatabaseError, match="locked task flags are immutable"):
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(statement, params)
    row = TaskFlag.objects.get(pk=draft.pk)
    assert (row.severity, row.locked) == (3, True)
