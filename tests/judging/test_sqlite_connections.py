"""SQLite (the embedded default): a connection closed at the end of a request is kept for the
next one in the process (blindjudge/sqlite_backend `IdleConnections`), since under ASGI each
request opens one in a fresh thread. Reuse must never hand over a connection that is not exactly
as a new one would be: same file, same pragmas, no transaction."""

import copy
import sqlite3

import pytest
from django.db import connection, connections, transaction

from blindjudge.sqlite_backend.base import _IDLE, _WRITER, DatabaseWrapper

pytestmark = [
    pytest.mark.skipif(connection.vendor != "sqlite", reason="the embedded default's backend"),
    pytest.mark.django_db(transaction=True),
]


def wrapper(name=None) -> DatabaseWrapper:
    """A DatabaseWrapper as a request's thread gets one: the same settings, its own object."""
    settings_dict = copy.deepcopy(connection.settings_dict)
    if name is not None:
        settings_dict["NAME"] = str(name)
    return DatabaseWrapper(settings_dict, alias="reuse-test")


def pragmas(database) -> dict:
    with database.cursor() as cursor:
        found = {}
        for name in ("foreign_keys", "synchronous", "journal_mode", "busy_timeout"):
            cursor.execute(f"PRAGMA {name}")
            found[name] = cursor.fetchone()[0]
        return found


def test_the_next_request_gets_the_closed_connection_with_every_pragma_in_force():
    first = wrapper()
    fresh = pragmas(first)
    assert fresh == {"foreign_keys": 1, "synchronous": 2, "journal_mode": "wal",
                     "busy_timeout": int(connection.settings_dict["OPTIONS"]["timeout"] * 1000)}
    kept = first.connection
    first.close()
    second = wrapper()
    assert pragmas(second) == fresh
    assert second.connection is kept, "a new connection was opened though a clean one was idle"
    second.close()


def test_a_connection_closed_inside_a_transaction_is_closed_for_good():
    inside = wrapper()
    connections[inside.alias] = inside  # so that transaction.atomic can name it
    try:
        with pytest.raises(RuntimeError), transaction.atomic(using=inside.alias):
            with inside.cursor() as cursor:
                cursor.execute("INSERT INTO judging_auditevent (action, actor, details, at) "
                               "VALUES ('test.reuse', 'test', '{}', '2026-01-01')")
            abandoned = inside.connection
            inside.close()  # a request dropped mid-transaction
            raise RuntimeError("the request ended here")
    finally:
        del connections[inside.alias]
    assert not _WRITER.locked()
    after = wrapper()
    after.ensure_connection()
    assert after.connection is not abandoned
    with pytest.raises(sqlite3.ProgrammingError):  # it was really closed, not kept
        abandoned.execute("SELECT 1")
    with after.cursor() as cursor:
        cursor.execute("SELECT COUNT(*) FROM judging_auditevent WHERE action = 'test.reuse'")
        assert cursor.fetchone()[0] == 0, "the abandoned transaction's write survived"
    after.close()


def test_a_connection_left_without_foreign_keys_is_not_kept():
    loose = wrapper()
    loose.ensure_connection()
    loose.disable_constraint_checking()
    unsafe = loose.connection
    loose.close()
    after = wrapper()
    assert pragmas(after)["foreign_keys"] == 1
    assert after.connection is not unsafe
    after.close()


def test_a_database_made_again_at_the_same_path_never_gets_the_old_files_connection(tmp_path):
    path = tmp_path / "again.sqlite3"
    before = wrapper(path)
    with before.cursor() as cursor:
        cursor.execute("CREATE TABLE marker (x)")
    old = before.connection
    before.close()
    assert _IDLE.count() >= 1
    path.unlink()
    for leftover in (tmp_path / "again.sqlite3-wal", tmp_path / "again.sqlite3-shm"):
        leftover.unlink(missing_ok=True)
    after = wrapper(path)
    with after.cursor() as cursor:
        cursor.execute("SELECT COUNT(*) FROM sqlite_master WHERE name = 'marker'")
        assert cursor.fetchone()[0] == 0, "the connection still reads the deleted file"
    assert after.connection is not old
    with pytest.raises(sqlite3.ProgrammingError):  # the stale one was closed, not left open
        old.execute("SELECT 1")
    after.close()


def test_a_kept_connection_gives_back_its_page_cache():
    """An idle connection holds no cached pages (each held its last request's, up to SQLite's
    2 MB, and the kept ones grew the serving process: issue 32 item 3)."""
    first = wrapper()
    with first.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM judging_auditevent")
    kept = first.connection
    executed = []
    kept.set_trace_callback(executed.append)
    first.close()
    kept.set_trace_callback(None)
    assert "PRAGMA shrink_memory" in executed
    second = wrapper()
    second.ensure_connection()
    assert second.connection is kept
    second.close()
