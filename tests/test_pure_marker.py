"""The `pure` marker (tests/support/pure.py) is enforced: each detector is shown to fire on a test
that breaks it, in a real pytest run of its own, and to stay quiet on the same act unmarked.

A pure test runs once (in the embedded-default run), so a test that touches the database, opens a
socket or starts a process must not be able to wear the marker and escape the PostgreSQL run.
So is `browser_once` (tests/support/browser_once.py): it must say why, and only a test that drives
the browser may wear it.
"""

import os
import subprocess
import sys
import textwrap

from tests.e2e.conftest import ROOT

BREAKERS = '''
import socket
import subprocess
import sys

import pytest

from accounts.models import Judge


@pytest.mark.pure
def test_pure_reads_the_database():
    Judge.objects.count()


@pytest.mark.pure
def test_pure_opens_a_socket():
    socket.create_connection(("127.0.0.1", 6379), timeout=1).close()


@pytest.mark.pure
def test_pure_opens_a_unix_socket():
    socket.socket(socket.AF_UNIX).close()


@pytest.mark.pure
def test_pure_starts_a_process():
    subprocess.run([sys.executable, "-c", "pass"], check=True)


@pytest.mark.pure
def test_pure_computes():
    assert sum(range(4)) == 6


def test_unmarked_opens_a_socket():
    socket.socket(socket.AF_UNIX).close()


def test_unmarked_starts_a_process():
    subprocess.run([sys.executable, "-c", "pass"], check=True)


@pytest.mark.django_db
def test_unmarked_reads_the_database():
    assert Judge.objects.count() == 0
'''

ASKS_FOR_THE_DATABASE = '''
import pytest


@pytest.mark.pure
def test_pure_but_asks_for_db(db):
    pass


@pytest.mark.pure
@pytest.mark.django_db
def test_pure_but_marked_django_db():
    pass
'''


COMPUTES = '''
import subprocess
import sys

import pytest

pytestmark = pytest.mark.pure


def test_pure_computes():
    assert sum(range(4)) == 6


@pytest.mark.pure(False)
def test_opted_out_starts_a_process():
    subprocess.run([sys.executable, "-c", "pass"], check=True)
'''


BOTH = {"test_pure_computes": "PASSED", "test_opted_out_starts_a_process": "PASSED"}

# The inner runs have no conftest: a `browser` fixture of their own stands for tests/e2e's.
BROWSER_ONCE_MISUSED = '''
import pytest


@pytest.fixture
def browser():
    return None


@pytest.mark.browser_once
def test_says_not_why(browser):
    pass


@pytest.mark.browser_once("keys and layout")
def test_drives_no_browser():
    pass
'''

BROWSER_ONCE = '''
import pytest


@pytest.fixture
def browser():
    return None


@pytest.mark.browser_once("keys and layout")
def test_in_the_browser(browser):
    pass


def test_of_the_server_behind_it(browser):
    pass
'''

BOTH_BROWSER = {"test_in_the_browser": "PASSED", "test_of_the_server_behind_it": "PASSED"}


def _pytest(tmp_path, source, **env):
    test_file = tmp_path / "test_inner.py"
    test_file.write_text(textwrap.dedent(source))
    environment = {key: value for key, value in os.environ.items()
                   if not key.startswith(("PYTEST_", "BLINDJUDGE_TEST_PURE", "BLINDJUDGE_TEST_BROWSERS"))}
    environment.update(PYTHONPATH=str(ROOT), COLUMNS="1000", **env)  # summary lines in full
    return subprocess.run(
        [sys.executable, "-m", "pytest", str(test_file), "-c", os.devnull, "--rootdir", str(tmp_path),
         "-p", "tests.support.pure", "-p", "tests.support.browser_once",
         "--ds", "blindjudge.settings_test", "-p", "no:randomly", "-p", "no:cacheprovider",
         "-p", "no:asyncio", "-rA"],
        cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120, check=False)


def _embedded(tmp_path) -> dict:
    """The embedded default, in a data folder of its own (its test database is a file there)."""
    return {"DATABASE_URL": "", "REDIS_URL": "", "BLINDJUDGE_DATA_DIR": str(tmp_path / "data")}


def _outcomes(output: str) -> dict[str, str]:
    outcomes = {}
    for line in output.splitlines():
        for outcome in ("PASSED", "FAILED", "ERROR"):
            if line.startswith(outcome + " "):
                name = line.split("::", 1)[1].split(" ", 1)[0]
                outcomes[name] = f"{outcome} {line.split(' - ', 1)[1] if ' - ' in line else ''}".strip()
    return outcomes


def test_a_pure_test_cannot_reach_the_database_a_socket_or_a_process(tmp_path):
    result = _pytest(tmp_path, BREAKERS, **_embedded(tmp_path))
    outcomes = _outcomes(result.stdout)
    assert outcomes["test_pure_reads_the_database"].startswith("FAILED"), result.stdout[-3000:]
    assert "Database access not allowed" in outcomes["test_pure_reads_the_database"]
    assert "SocketBlockedError" in outcomes["test_pure_opens_a_socket"]
    assert "SocketBlockedError" in outcomes["test_pure_opens_a_unix_socket"]
    assert "PureTestStartedAProcess" in outcomes["test_pure_starts_a_process"]
    # The same acts, unmarked, pass: the failures above are the marker's doing.
    for name in ("test_pure_computes", "test_unmarked_opens_a_socket", "test_unmarked_starts_a_process",
                 "test_unmarked_reads_the_database"):
        assert outcomes[name] == "PASSED", (name, result.stdout[-3000:])


def stopped_at_collection(tmp_path, source) -> str:
    """What a run of `source` printed on stderr, having stopped at collection (pytest's usage
    error, exit 4), before any test ran."""
    result = _pytest(tmp_path, source, **_embedded(tmp_path))
    assert result.returncode == 4, result.stdout[-2000:] + result.stderr[-2000:]
    return result.stderr


def test_a_pure_test_that_asks_for_the_database_stops_the_run_at_collection(tmp_path):
    said = stopped_at_collection(tmp_path, ASKS_FOR_THE_DATABASE)
    assert "must not use the database" in said
    assert "test_pure_but_asks_for_db: db" in said
    assert "test_pure_but_marked_django_db: django_db" in said


POSTGRESQL = "postgres://postgres@127.0.0.1:5432/blindjudge"


def runs_once(tmp_path, source, *, marker, both, on_postgresql, keep):
    """`source` run three ways: in the embedded default every test runs (`both`); on PostgreSQL
    only `on_postgresql`, the marked test deselected and the header saying so; on PostgreSQL with
    `keep` (the variable that keeps them) every test again."""
    embedded = _pytest(tmp_path, source, **_embedded(tmp_path))
    assert _outcomes(embedded.stdout) == both
    postgresql = _pytest(tmp_path, source, DATABASE_URL=POSTGRESQL)
    assert _outcomes(postgresql.stdout) == on_postgresql
    assert "1 deselected" in postgresql.stdout
    assert f"tests marked {marker} are deselected" in postgresql.stdout
    kept = _pytest(tmp_path, source, DATABASE_URL=POSTGRESQL, **keep)
    assert _outcomes(kept.stdout) == both


def test_pure_tests_run_once_in_the_embedded_default_run_and_are_left_out_on_postgresql(tmp_path):
    runs_once(tmp_path, COMPUTES, marker="pure", both=BOTH,
              on_postgresql={"test_opted_out_starts_a_process": "PASSED"},
              keep={"BLINDJUDGE_TEST_PURE": "always"})


def test_a_browser_once_test_must_say_why_and_drive_the_browser(tmp_path):
    said = stopped_at_collection(tmp_path, BROWSER_ONCE_MISUSED)
    assert "tests marked browser_once misuse it" in said
    assert "test_says_not_why: say why it runs once" in said
    assert "test_drives_no_browser: drives no browser" in said
    assert "test_says_not_why: drives no browser" not in said


def test_browser_once_tests_run_in_the_embedded_default_run_and_are_left_out_on_postgresql(tmp_path):
    runs_once(tmp_path, BROWSER_ONCE, marker="browser_once", both=BOTH_BROWSER,
              on_postgresql={"test_of_the_server_behind_it": "PASSED"},
              keep={"BLINDJUDGE_TEST_BROWSERS": "both"})
