"""The `pure` marker: a test that needs no database, no socket and no other process.

What a pure test checks cannot depend on the database behind the run, so it runs once: in the
embedded-default run, and is deselected when the run is on PostgreSQL (`DATABASE_URL`), where it
would only repeat itself. `BLINDJUDGE_TEST_PURE=always` keeps them in any run.

The marker is enforced, so a test that needs the database cannot hide behind it and be run on one
backend only:
- at collection, a pure test that asks for a database fixture or carries `django_db` is an error;
- while it runs, the database is closed to it (pytest-django's blocker, as for every test without
  `django_db`), sockets cannot be made (pytest-socket's `disable_socket`, Unix sockets included:
  PostgreSQL and Redis are reached through them too) and no process can be started or forked.
tests/test_pure_marker.py shows each of these fire.

A module marks itself (`pytestmark = pytest.mark.pure`); a test of it that starts a process (to
import a module afresh, to run a command) says `@pytest.mark.pure(False)` and runs in both runs.
"""

import os
import subprocess

import pytest

MARKER = "pure"
DATABASE_FIXTURES = frozenset({
    "db", "transactional_db", "django_db_reset_sequences", "django_db_serialized_rollback",
    "django_db_setup", "live_server", "e2e_server", "report_builders",
})


class PureTestStartedAProcess(RuntimeError):
    pass


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        f"{MARKER}: needs no database, socket or process (enforced); runs once, in the embedded-default run")


def is_pure(item) -> bool:
    marker = item.get_closest_marker(MARKER)  # the test's own before its module's
    return marker is not None and (not marker.args or marker.args[0] is not False)


def runs_on_postgresql() -> bool:
    from django.conf import settings  # noqa: PLC0415 - Django is configured by pytest-django first

    return settings.DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"


def pytest_collection_modifyitems(config, items):
    misuses = []
    for item in items:
        if not is_pure(item):
            continue
        asked = DATABASE_FIXTURES.intersection(getattr(item, "fixturenames", ()))
        if asked or item.get_closest_marker("django_db") is not None:
            misuses.append(f"{item.nodeid}: {', '.join(sorted(asked)) or 'django_db'}")
        item.add_marker(pytest.mark.disable_socket)
    if misuses:
        raise pytest.UsageError(
            f"tests marked {MARKER} must not use the database, but these do:\n  " + "\n  ".join(misuses))
    if os.environ.get("BLINDJUDGE_TEST_PURE") == "always" or not runs_on_postgresql():
        return
    kept, pure = [], []
    for item in items:
        (pure if is_pure(item) else kept).append(item)
    if pure:
        config.hook.pytest_deselected(items=pure)
        items[:] = kept


def pytest_report_header(config):
    if os.environ.get("BLINDJUDGE_TEST_PURE") != "always" and runs_on_postgresql():
        return f"tests marked {MARKER} are deselected: they ran in the embedded-default run"
    return None


def _refuse_process(*args, **kwargs):
    raise PureTestStartedAProcess(f"a test marked {MARKER} started a process")


def _processes_refused(item):
    """Around a pure test's setup and call: starting or forking a process raises."""
    if not is_pure(item):
        return (yield)
    patched = [(subprocess.Popen, "__init__"), (os, "fork"), (os, "posix_spawn"), (os, "posix_spawnp")]
    saved = [(owner, name, getattr(owner, name)) for owner, name in patched]
    for owner, name in patched:
        setattr(owner, name, _refuse_process)
    try:
        return (yield)
    finally:
        for owner, name, original in saved:
            setattr(owner, name, original)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    return (yield from _processes_refused(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    return (yield from _processes_refused(item))
