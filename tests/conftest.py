"""Shared fixtures: one set of personas and one default world, for every module.

Personas, named as in healthchecks' tests: `host` (alice) owns the run; `other_host` (bob) must
see nothing of it; in alice's open session, `invited_judge` (joined by their join link), `guest`
(by the guest code), `github_judge` (signed in with GitHub, through the local stand-in) and
`removed_judge` (joined, then removed by the host); `judge_of_another_session` judges another open
session of the same run; `anonymous` is a browser with nobody signed in. `client_as(persona)`
(tests/worlds.py) gives a browser holding any of them.

The world: `run` (make_bundle()'s six copies), and a session on it in each state: `draft`,
`open_session`, `closed_session`, `revealed_session`. These are one session moved forward, so a
test that asks for a later state and for judges should name the judges first (fixtures are set up
in the order a test names them, and nobody joins a revealed session).

All of it is built by tests/worlds.py through the real services; modules needing a world of
their own call those builders with arguments.
"""

import gc
import time

import pytest
from asgiref.sync import SyncToAsync
from channels.layers import channel_layers
from django.conf import settings
from django.db import connection, connections
from django.test import Client
from pytest_django.plugin import blocking_manager_key

from judging import immutability
from judging.services import guest_join, guests_configure, judge_remove
from reports.offprocess import POOL
from tests.support import github_standin
from tests.support.db_lock import Busy, lock_the_test_database
from tests.support.inspect_reader import install_in_background
from tests.worlds import (
    a_github_judge,
    a_host,
    a_run,
    a_session,
    advance,
    invite_and_join,
    opening_children,
)

# The `pure` and `browser_once` markers (tests that run once, in the embedded-default run), enforced.
pytest_plugins = ["tests.support.pure", "tests.support.browser_once"]

# --- Personas --------------------------------------------------------------------------------------


@pytest.fixture
def host(db):
    return a_host("alice")


@pytest.fixture
def other_host(db):
    return a_host("bob", "another long passphrase")


@pytest.fixture
def anonymous():
    return Client()


@pytest.fixture
def admission(open_session):
    """The invited judge's admission: the judge, and the resume token shown to them once."""
    return invite_and_join(open_session)


@pytest.fixture
def invited_judge(admission):
    return admission.judge


@pytest.fixture
def guest_code(open_session):
    """Guests allowed in the open session: the guest code, shown once."""
    return guests_configure(session=open_session, actor="test", allow=True).guest_code


@pytest.fixture
def guest(open_session, guest_code):
    return guest_join(code=guest_code, display_name="Guest", client_address="192.0.2.77").judge


@pytest.fixture
def github_judge(open_session, standin):
    return a_github_judge(open_session, standin)


@pytest.fixture
def removed_judge(open_session):
    return judge_remove(judge=invite_and_join(open_session, name="Removed Judge").judge, actor="test")


@pytest.fixture
def other_session(run):
    """Another open session of alice's run."""
    return a_session(run, "open")


@pytest.fixture
def judge_of_another_session(other_session):
    return invite_and_join(other_session, name="Elsewhere Judge").judge


# --- The world ------------------------------------------------------------------------------------

@pytest.fixture
def run(host):
    return a_run(host)


@pytest.fixture
def draft(run):
    return a_session(run, "draft", rubric="Is add() right?")


@pytest.fixture
def open_session(draft):
    return advance(draft, "open")


@pytest.fixture
def closed_session(open_session):
    return advance(open_session, "closed")


@pytest.fixture
def revealed_session(closed_session):
    return advance(closed_session, "revealed")


# --- Machinery ------------------------------------------------------------------------------------

def _is_transactional(item) -> bool:
    marker = item.get_closest_marker("django_db")
    return "transactional_db" in getattr(item, "fixturenames", ()) or (
        marker is not None and marker.kwargs.get("transaction", False))


@pytest.fixture(autouse=True)
def _flushable_immutable_tables(request):
    """Transactional tests end with a flush, a DELETE of every row, which the immutability
    triggers rightly refuse. Drop them just for that flush; they are put back after it (below)."""
    if not _is_transactional(request.node):
        yield
        return
    request.getfixturevalue("transactional_db")
    immutability.install(connection)
    request.node.stash[_TRIGGERS_DROPPED_FOR_FLUSH] = True
    yield
    immutability.uninstall(connection)


_TRIGGERS_DROPPED_FOR_FLUSH = pytest.StashKey[bool]()


# The test process's garbage collector, collecting less often (CPython's default is 700, 10, 10).
# A worker's heap holds Django, scipy, Playwright and every module's data, and the crawls
# allocate millions of short-lived objects: with the default, the oldest generation was walked
# ~50 times in tests/judge/test_leaks.py, test_pairs_leaks.py and test_permissions.py, 37 s of
# their 190 s of CPU (measured with gc.callbacks, 2026-12-05); at 10,000 it is walked ~7 times
# and the collector takes 15 s. Only the young generation's size changes: every cycle is still
# collected, a little later. gc.freeze() after collection did not help (what the collector walks
# is made by the tests, not by the imports).
TEST_GC_THRESHOLDS = (10_000, 10, 10)


def pytest_configure(config):
    # One run at a time on this checkout's test databases (tests/support/db_lock.py): the
    # controller (or a run without workers) holds the lock for its workers; collecting touches
    # no database.
    if not hasattr(config, "workerinput") and not config.option.collectonly:
        try:
            lock_the_test_database()
        except Busy as busy:
            pytest.exit(str(busy), returncode=3)
    gc.set_threshold(*TEST_GC_THRESHOLDS)
    _flush_by_delete_on_postgresql()


def _flush_by_delete_on_postgresql():
    """On PostgreSQL, a transactional test's flush deletes every row instead of truncating every
    table: the same empty tables (sequences are not reset either way), but TRUNCATE makes a new
    file for each of the ~60 tables and their indexes, about 0.16 s a test, where DELETE of a test's
    few rows takes milliseconds. The foreign keys are deferred (Django makes them so), so the
    order of the tables does not matter. Only the test process flushes; the product never does."""
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        return
    from django.db.backends.postgresql.operations import DatabaseOperations  # noqa: PLC0415

    truncate = DatabaseOperations.sql_flush

    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        if reset_sequences or not tables:
            return truncate(self, style, tables, reset_sequences=reset_sequences,
                            allow_cascade=allow_cascade)
        return ["SET CONSTRAINTS ALL DEFERRED;",
                *(f"DELETE FROM {self.quote_name(table)};" for table in tables)]

    DatabaseOperations.sql_flush = sql_flush


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """After a transactional test's flush, the immutability triggers are put back at once: a test
    that follows in the same transaction-wrapped database relies on them (in a random order, the
    one after a transactional test once found them gone). Only after a test that got as far as
    its database: one skipped before it (as the first of a worker's tests to ask for the
    database) has no tables to put them on."""
    result = yield
    # (after the last test, the database is gone)
    if item.stash.get(_TRIGGERS_DROPPED_FOR_FLUSH, False) and nextitem is not None:
        with item.config.stash[blocking_manager_key].unblock():
            immutability.install(connection)
    return result


@pytest.fixture(autouse=True)
def _sync_thread_connections_closed():
    """An async test's `sync_to_async` calls run in asgiref's one shared thread, whose database
    connection Django never closes there: on PostgreSQL it stayed checked out of the pool, and the
    worker's test database could not be dropped at the end ("being accessed by other users")."""
    yield
    executor = SyncToAsync.single_thread_executor
    if executor is not None and not getattr(executor, "_shutdown", False):
        executor.submit(connections.close_all).result()


@pytest.fixture(scope="session")
def _standin_server():
    standin, server = github_standin.start(settings.TEST_GITHUB_STANDIN_PORT)
    yield standin
    server.shutdown()
    server.server_close()


@pytest.fixture
def standin(_standin_server):
    """The local stand-in for GitHub's endpoints (tests/support/github_standin.py), its record cleared."""
    _standin_server.requests.clear()
    yield _standin_server
    _standin_server.requests.clear()


@pytest.fixture
def fresh_channel_layer():
    """A channel layer made for this test's event loop: channels keeps one per process, and the
    Redis layer's locks belong to the loop that first used them (pytest-asyncio gives each test
    its own)."""
    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


@pytest.fixture
def report_builders(transactional_db, monkeypatch):
    """For a test that downloads a report: the download is built by a builder process
    (reports/offprocess.py) that reads the database itself, so the test's rows must be committed
    (this fixture makes the test transactional) and the builder must join this run's test
    database, by name (blindjudge/settings_test.py). Builders are let go before and after, so
    none started for another database is reused, and none outlives the test's rows. Yields the
    pool of this (test) process's builders."""
    monkeypatch.setenv("BLINDJUDGE_TEST_DATABASE_NAME", str(connection.settings_dict["NAME"]))
    _let_builders_go()
    yield POOL
    _let_builders_go()


def _let_builders_go():
    # A report stream dropped unread in a reference cycle (a test client's response holds one)
    # gives its builder back only when it is collected (ReportStream.__del__): collected when a
    # builder is still busy, so none outlives its test (with TEST_GC_THRESHOLDS the collector comes
    # seldom, and a later test counted an earlier test's builder among its own). Only then: a full
    # collection of a worker's heap costs ~0.2 s, and most report tests read their download.
    if POOL.running > len(POOL.idle):
        gc.collect()
    POOL.stop_all()


@pytest.fixture
def opening_processes(transactional_db, monkeypatch):
    """For a test that opens a session from the host's page: the opening runs in a process of its
    own (judging/opening.py) that reads and writes the database itself, so the test's rows must be
    committed (this fixture makes the test transactional) and the process must join this run's
    test database, by name (blindjudge/settings_test.py). Afterwards no opening process is left
    writing to a database the next test flushes."""
    monkeypatch.setenv("BLINDJUDGE_TEST_DATABASE_NAME", str(connection.settings_dict["NAME"]))
    yield
    give_up = time.monotonic() + 60
    while opening_children() and time.monotonic() < give_up:
        time.sleep(0.05)
    assert not opening_children(), "an opening process outlived its test"


def pytest_terminal_summary(terminalreporter, config):
    """The order's seed, even with -q: a failure that hangs on the order can be run again in it."""
    seed = getattr(config.option, "randomly_seed", None)
    if isinstance(seed, int) and config.pluginmanager.has_plugin("randomly"):
        terminalreporter.write_line(f"random order: --randomly-seed={seed} repeats it")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Spread over xdist's workers test by test (`./bj test` runs `--dist loadgroup`), except the
    tests of a module with a module-scoped fixture (a browser, a world built once), which stay
    together on one worker so it is built once."""
    for item in items:
        definitions = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
        if any(definition.scope in ("module", "package", "class")
               for chain in definitions.values() for definition in chain):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))
    if any(item.module.__name__ == "tests.reports.test_export_interop" for item in items):
        install_in_background()  # inspect-ai's own reader: tests/support/inspect_reader.py
