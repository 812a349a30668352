"""What the database itself guarantees, on whichever database the suite runs on: immutability
triggers, WAL on SQLite, and exactly one lock when two requests race (docs/threats.md case 26)."""

import threading

import pytest
from django.db import DatabaseError, connection, connections, transaction

from blindjudge.errors import Conflict
from judging.models import AuditEvent, Verdict
from judging.services import phase_lock
from tests.worlds import answer_all


def test_raw_update_and_delete_of_a_locked_verdict_fail(invited_judge):
    answer_all(invited_judge, 1, "fail")
    phase_lock(judge=invited_judge, phase=1)
    verdict = Verdict.objects.filter(assignment__judge=invited_judge).first()
    table = Verdict._meta.db_table
    with pytest.raises(DatabaseError, match="locked verdicts are immutable"):
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"UPDATE {table} SET value = 'pass' WHERE id = %s", [verdict.pk])
    with pytest.raises(DatabaseError, match="locked verdicts are immutable"):
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM {table} WHERE id = %s", [verdict.pk])
    with pytest.raises(DatabaseError, match="locked verdicts are immutable"):
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"UPDATE {table} SET locked = %s WHERE id = %s", [False, verdict.pk])
    verdict.refresh_from_db()
    assert (verdict.value, verdict.locked) == ("fail", True)


def test_unlocked_drafts_can_still_change_in_raw_sql(invited_judge):
    """The positive control: the trigger refuses locked rows only, not every write."""
    answer_all(invited_judge, 1, "fail")
    verdict = Verdict.objects.filter(assignment__judge=invited_judge).first()
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {Verdict._meta.db_table} SET value = 'pass' WHERE id = %s",
                       [verdict.pk])
    verdict.refresh_from_db()
    assert verdict.value == "pass"


def test_the_audit_log_is_append_only(invited_judge):
    event = AuditEvent.objects.filter(action="judge.admitted").first()
    table = AuditEvent._meta.db_table
    with pytest.raises(DatabaseError, match="append-only"):
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"UPDATE {table} SET action = 'forged' WHERE id = %s", [event.pk])
    with pytest.raises(DatabaseError, match="append-only"):
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM {table} WHERE id = %s", [event.pk])
    assert AuditEvent.objects.get(pk=event.pk).action == "judge.admitted"


@pytest.mark.skipif(connection.vendor != "sqlite", reason="WAL is SQLite's")
@pytest.mark.django_db
def test_sqlite_runs_in_wal_mode_with_immediate_transactions():
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        assert cursor.fetchone()[0] == "wal"
        cursor.execute("PRAGMA busy_timeout")
        assert cursor.fetchone()[0] >= 1000
    assert connection.settings_dict["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    assert connection.settings_dict["NAME"] != ":memory:"
    assert "mode=memory" not in str(connection.settings_dict["NAME"])


@pytest.mark.django_db(transaction=True)
def test_two_locks_at_once_give_exactly_one_lock(invited_judge):
    """Case 26, on the real database with two connections: exactly one lock succeeds; the other
    gets the service's 409 refusal, never a database error."""
    judge = invited_judge
    answer_all(judge, 1, "fail")
    barrier = threading.Barrier(2)
    outcomes = []

    def lock():
        try:
            barrier.wait(timeout=10)
            phase_lock(judge=judge, phase=1)
            outcomes.append("locked")
        except Conflict as error:
            outcomes.append(f"conflict: {error.message}")
        except Exception as error:  # noqa: BLE001 - any other outcome is the failure we look for
            outcomes.append(f"error: {type(error).__name__}: {error}")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=lock) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(outcomes) == ["conflict: phase 1 is already locked", "locked"]
    assert AuditEvent.objects.filter(action="phase.locked").count() == 1
