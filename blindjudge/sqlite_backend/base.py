"""Django's SQLite backend, with the writers of one process queued on a lock.

SQLite lets one writer in at a time. Django under ASGI runs each request's database work in a
thread of its own, so concurrent verdict saves in the one server process all reach BEGIN
IMMEDIATE at once, and SQLite's busy handler makes the losers sleep and retry (sleeps growing
to 100 ms): the benchmark measured a p99 of 8.7 s for verdict saves at 32 judges, and past the
busy timeout that is "database is locked". Here a writer first takes a process-wide lock, so
writers wait their turn in order and start the moment the previous one commits. Other processes
(commands, a second server) still meet SQLite's own lock and busy timeout, as before.

Nothing about durability changes: same pragmas (WAL, synchronous=FULL), one fsync per commit.
"""

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


class DatabaseWrapper(base.DatabaseWrapper):
    _holds_writer_lock = False

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
            return super()._close()
        finally:
            self._release_writer_lock()
