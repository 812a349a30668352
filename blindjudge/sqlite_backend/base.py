"""Django's SQLite backend, with the writers of one process queued on a lock, and connections
kept for reuse.

SQLite lets one writer in at a time. Django under ASGI runs each request's database work in a
thread of its own, so concurrent verdict saves in the one server process all reach BEGIN
IMMEDIATE at once, and SQLite's busy handler makes the losers sleep and retry (sleeps growing
to 100 ms): the benchmark measured a p99 of 8.7 s for verdict saves at 32 judges, and past the
busy timeout that is "database is locked". Here a writer first takes a process-wide lock, so
writers wait their turn in order and start the moment the previous one commits. Other processes
(commands, a second server) still meet SQLite's own lock and busy timeout, as before.

Django closes a request's connection when the request ends (CONN_MAX_AGE is 0: a connection
lives in its thread, and a request's thread, even kept for the next request by
blindjudge/request_threads.py, may be let go or stand idle), so every request connects again, and
a new SQLite connection costs about 1 ms in pragmas and function registrations: a quarter of a
judge request's server CPU. A closed connection is therefore kept (`IdleConnections`) for the
next request of the process.

Nothing about durability changes: same pragmas (WAL, synchronous=FULL), one fsync per commit.
"""

import os
import threading
from collections import deque

from django.db import OperationalError
from django.db.backends.sqlite3 import base


class FifoLock:
    """A lock handed to its waiters in the order they asked: a plain lock lets a writer that
    just arrived overtake one that has waited, which stretched the slowest saves' wait."""

    def __init__(self):
        self._mutex = threading.Lock()
        self._held = False
        self._waiters = deque()

    def acquire(self, timeout: float) -> bool:
        with self._mutex:
            if not self._held:
                self._held = True
                return True
            turn = threading.Event()
            self._waiters.append(turn)
        if turn.wait(timeout):
            return True
        with self._mutex:
            if turn.is_set():  # handed over just as the wait ran out
                return True
            self._waiters.remove(turn)
            return False

    def release(self):
        with self._mutex:
            if self._waiters:
                self._waiters.popleft().set()  # straight to the next writer; still held
            else:
                self._held = False

    def locked(self) -> bool:
        return self._held


_WRITER = FifoLock()


class IdleConnections:
    """Connections closed outside any transaction, for the next DatabaseWrapper of the process.

    Kept per connection parameters (the file, the options) and checked against the file's
    identity when taken, so a test database made again at the same path never gets a connection
    to the old one. A connection comes back only as it left Django's hands: autocommit, no
    transaction open, foreign keys enforced. At most `size` wait; the rest are closed.
    """

    def __init__(self, size: int = 8):
        self.size = size
        self._lock = threading.Lock()
        self._idle: list[tuple[tuple, tuple, object]] = []  # (parameters, file identity, connection)

    @staticmethod
    def file_identity(path: str) -> tuple | None:
        try:
            found = os.stat(path)
        except OSError:
            return None
        return (found.st_dev, found.st_ino)

    def take(self, key: tuple, path: str):
        identity = self.file_identity(path)
        stale = []
        found = None
        with self._lock:
            for index in range(len(self._idle) - 1, -1, -1):
                their_key, their_identity, connection = self._idle[index]
                if their_key != key:
                    continue
                del self._idle[index]
                if identity is not None and their_identity == identity:
                    found = connection
                    break
                stale.append(connection)
        for connection in stale:
            connection.close()
        return found

    def give(self, key: tuple, path: str, connection) -> bool:
        if connection.in_transaction:
            return False
        try:
            if connection.execute("PRAGMA foreign_keys").fetchone()[0] != 1:
                return False
        except Exception:  # noqa: BLE001 - an unusable connection is closed, not kept
            return False
        identity = self.file_identity(path)
        if identity is None:
            return False
        with self._lock:
            if len(self._idle) >= self.size:
                return False
        try:
            # An idle connection keeps no page cache: each held the pages of its last request
            # (up to SQLite's 2 MB cache_size), and the 8 kept ones grew the serving process by
            # ~0.3 MB a minute (bench/README.md, issue 32 item 3). In WAL mode another
            # connection's commit empties a connection's cache at its next read anyway.
            connection.execute("PRAGMA shrink_memory")
        except Exception:  # noqa: BLE001 - an unusable connection is closed, not kept
            return False
        with self._lock:
            if len(self._idle) >= self.size:
                return False
            self._idle.append((key, identity, connection))
            return True

    def count(self) -> int:
        with self._lock:
            return len(self._idle)


# 8: at 32 judges at once most requests open a connection (7 % of the server's samples under the
# item page, issue 32); keeping 32 saved 0.3-0.9 ms of CPU a request but each kept connection
# holds its page cache, and the benchmark's process grew (bench/README.md, issue 32 item 1).
_IDLE = IdleConnections()


class DatabaseWrapper(base.DatabaseWrapper):
    _holds_writer_lock = False
    _idle_key = None

    def get_new_connection(self, conn_params):
        key = tuple(sorted((name, repr(value)) for name, value in conn_params.items()))
        path = str(conn_params["database"])
        connection = None if self.is_in_memory_db() else _IDLE.take(key, path)
        if connection is None:
            connection = super().get_new_connection(conn_params)
        self._idle_key = None if self.is_in_memory_db() else (key, path)
        return connection

    def _keep_for_reuse(self) -> bool:
        """Hand the connection to the next DatabaseWrapper instead of closing it, when it is
        clean: never from inside an atomic block (the wrapper keeps using it) or after an
        error."""
        if self.connection is None or self._idle_key is None:
            return False
        if self.in_atomic_block or self.needs_rollback or self.errors_occurred:
            return False
        if not self.get_autocommit():
            return False
        key, path = self._idle_key
        return _IDLE.give(key, path, self.connection)

    def _start_transaction_under_autocommit(self):
        # Bounded like SQLite's own wait, with the same refusal when it runs out.
        if not _WRITER.acquire(timeout=float(self.settings_dict["OPTIONS"].get("timeout", 5))):
            raise OperationalError("database is locked (waited for this process's writers)")
        self._holds_writer_lock = True
        try:
            super()._start_transaction_under_autocommit()
        except BaseException:
            self._release_writer_lock()
            raise

    def _release_writer_lock(self):
        if self._holds_writer_lock:
            self._holds_writer_lock = False
            _WRITER.release()

    def _commit(self):
        try:
            return super()._commit()
        finally:
            self._release_writer_lock()

    def _rollback(self):
        try:
            return super()._rollback()
        finally:
            self._release_writer_lock()

    def _close(self):
        try:
            if self._keep_for_reuse():
                return None
            return super()._close()
        finally:
            self._release_writer_lock()
