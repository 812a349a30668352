"""One test run at a time on a test database: two runs in one checkout (or on one PostgreSQL
server without BLINDJUDGE_PG_TEST_NAME) would create, flush and destroy the same test databases
under each other (their xdist workers' too, named alike), and fail with errors that name neither
("disk I/O error" on SQLite, once, when two were started by mistake). A run's controlling process
takes an exclusive lock named by its test database before any worker starts, and holds it to the
end; a second run finds it held and stops at once, saying why, before touching a database."""

import fcntl
import hashlib
import os
import tempfile
from pathlib import Path

from django.conf import settings

_held = []  # the open lock files, kept for the life of the process (closing one releases it)
HELD_LOCK = "BLINDJUDGE_TEST_DATABASE_LOCK"  # the lock file this run holds, for its workers


def database_identity(database: dict) -> str:
    """The test database a settings entry names: its file (SQLite), or server and name."""
    name = (database.get("TEST") or {}).get("NAME") or f"test_{database['NAME']}"
    if "sqlite" in database["ENGINE"]:
        return f"sqlite:{Path(name).resolve()}"
    return f"{database['ENGINE']}:{database.get('HOST') or ''}:{database.get('PORT') or ''}/{name}"


def lock_path(identity: str) -> Path:
    digest = hashlib.sha256(identity.encode()).hexdigest()[:20]
    return Path(tempfile.gettempdir()) / f"blindjudge-test-db-{digest}.lock"


class Busy(Exception):
    pass


def lock_the_test_database() -> None:
    """Take the default test database's lock, or raise Busy naming it."""
    identity = database_identity(settings.DATABASES["default"])
    handle = open(lock_path(identity), "a+")  # noqa: SIM115 - held open on purpose
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise Busy(
            f"another test run is using the test database {identity} (process {os.getpid()} "
            "found its lock held): wait for it to end, or run from another clone; on a shared "
            "PostgreSQL server, give each run its own BLINDJUDGE_PG_TEST_NAME") from None
    _held.append(handle)
    os.environ[HELD_LOCK] = str(lock_path(identity))  # for the workers, which start after
