"""Two test runs on one test database: the second stops before touching it, saying why
(tests/support/db_lock.py)."""

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from tests.support.db_lock import HELD_LOCK, database_identity, lock_path

ROOT = Path(__file__).resolve().parents[1]


def _locked_elsewhere(path: Path) -> bool:
    """Whether another open file (another run, or this process's own lock) holds `path`'s lock."""
    with open(path, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
        return False


@pytest.mark.django_db
def test_this_run_holds_its_test_databases_lock():
    """The lock named by this run's test database (an xdist worker's without its suffix) is
    held, by the run's controlling process."""
    database = dict(settings.DATABASES["default"])
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        database["TEST"] = {"NAME": database["TEST"]["NAME"].removesuffix(f"_{worker}")}
    assert os.environ[HELD_LOCK] == str(lock_path(database_identity(database)))
    assert _locked_elsewhere(Path(os.environ[HELD_LOCK]))


def test_a_second_run_on_a_test_database_in_use_stops_before_touching_it(tmp_path):
    data = tmp_path / "data"
    database = data / "test-blindjudge.sqlite3"
    identity = f"sqlite:{database.resolve()}"
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST_")}
    env.update(DATABASE_URL="", REDIS_URL="", BLINDJUDGE_DATA_DIR=str(data))
    with open(lock_path(identity), "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # the first run, holding its database
        assert _locked_elsewhere(lock_path(identity))
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider",
             "tests/support/db_lock_case.py"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False)
    output = run.stdout + run.stderr
    assert run.returncode == 3, output
    assert f"another test run is using the test database {identity}" in output, output
    assert not database.exists()  # stopped before creating it
