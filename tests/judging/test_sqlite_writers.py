"""SQLite (the embedded default): the writers of one server process queue on a lock
(blindjudge/sqlite_backend) instead of sleeping in SQLite's busy handler. The lock must never be
left held — a leaked lock would stop every later write in the process — so each way a
transaction can end is checked to release it."""

import threading

import pytest
from django.db import connection, connections, transaction

from blindjudge.sqlite_backend.base import _WRITER, FifoLock
from judging.models import AuditEvent

pytestmark = [
    pytest.mark.skipif(connection.vendor != "sqlite", reason="the embedded default's backend"),
    pytest.mark.django_db(transaction=True),
]


def _write(tag):
    AuditEvent.objects.create(action="test.write", actor="test", details={"tag": tag})


def test_a_write_transaction_holds_the_lock_and_every_ending_releases_it(db):
    assert not _WRITER.locked()
    with transaction.atomic():
        _write("commit")
        assert _WRITER.locked()
    assert not _WRITER.locked()
    with pytest.raises(ValueError), transaction.atomic():
        _write("rollback")
        raise ValueError("rolled back")
    assert not _WRITER.locked()
    atomic = transaction.atomic()
    atomic.__enter__()
    _write("closed")
    connection.close()  # a connection closed inside a transaction (a dropped request)
    assert not _WRITER.locked()
    atomic.__exit__(None, None, None)
    assert not _WRITER.locked()
    assert AuditEvent.objects.filter(action="test.write").count() == 1


def test_a_second_writer_waits_for_the_first_and_then_writes(db):
    first_holds, release_first, second_done = (threading.Event() for _ in range(3))
    errors = []

    def first():
        try:
            with transaction.atomic():
                _write("first")
                first_holds.set()
                release_first.wait(10)
        except Exception as error:  # noqa: BLE001 - reported by the assertion below
            errors.append(error)
        finally:
            connections.close_all()

    def second():
        try:
            first_holds.wait(10)
            with transaction.atomic():
                _write("second")
            second_done.set()
        except Exception as error:  # noqa: BLE001
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    assert first_holds.wait(10)
    assert not second_done.wait(0.3), "the second writer did not wait for the first"
    release_first.set()
    for thread in threads:
        thread.join(15)
    assert not errors and second_done.is_set()
    tags = list(AuditEvent.objects.filter(action="test.write").order_by("pk")
                .values_list("details__tag", flat=True))
    assert tags == ["first", "second"]
    assert not _WRITER.locked()


def test_waiting_writers_are_served_in_the_order_they_asked_and_a_timed_out_one_leaves_no_trace():
    lock = FifoLock()
    assert lock.acquire(1)
    served = []

    def writer(number):
        assert lock.acquire(10)
        served.append(number)
        lock.release()

    threads = []
    for number in range(8):
        threads.append(threading.Thread(target=writer, args=(number,)))
        threads[-1].start()
        while len(lock._waiters) < number + 1:  # queued before the next one asks
            threading.Event().wait(0.001)
    gave_up = []
    late = threading.Thread(target=lambda: gave_up.append(FifoLock.acquire(lock, 0.05)))
    late.start()
    late.join()
    assert gave_up == [False] and len(lock._waiters) == 8
    lock.release()
    for thread in threads:
        thread.join(10)
    assert served == list(range(8)) and not lock.locked()
