"""The browser tests' watchdog (tests/e2e/conftest.py): a test that stalls (a Playwright call, a
wait on a child process) fails, and the run goes on and finishes, under xdist as `./bj test`
runs it.

A run of tests/e2e/stall_cases.py in its own pytest (xdist, one worker, `--dist loadgroup`) with
the watchdog at a few seconds: one case waits on a child process that never ends (the second
stage's kind of stall), the next one's renderer spins forever inside an `evaluate`, which has no
timeout of its own (the first stage's). Before this mend the watchdog ended the worker, and xdist
then waited for good for the lost worker's tests (a CI run hung that way on 2026-12-06).
"""

import os
import re
import subprocess
import sys

import pytest
from django.db import connection

from tests.e2e.conftest import ROOT

# The subject is the test harness and Chromium, the same in both runs; the inner run below uses no
# database.
pytestmark = pytest.mark.skipif(connection.vendor != "sqlite", reason="the harness's, run once")

WATCHDOG_SECONDS = 4
STAGE_SECONDS = 3
RUN_LIMIT_SECONDS = 240  # a hang shows as this test failing on subprocess.run's timeout


def test_a_stalled_renderer_or_child_process_fails_its_test_and_the_run_finishes(tmp_path):
    env = {**os.environ,
           "BLINDJUDGE_TEST_BROWSER_WATCHDOG_SECONDS": str(WATCHDOG_SECONDS),
           "BLINDJUDGE_TEST_WATCHDOG_STAGE_SECONDS": str(STAGE_SECONDS),
           "BLINDJUDGE_TEST_WATCHDOG_DIR": str(tmp_path / "watchdog"),
           # A data folder of its own: the outer run holds its test database's lock.
           "BLINDJUDGE_DATA_DIR": str(tmp_path / "data")}
    for name in ("PYTEST_XDIST_WORKER", "DATABASE_URL", "REDIS_URL"):
        env.pop(name, None)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider", "-rA",
         "-n", "1", "--dist", "loadgroup", "tests/e2e/stall_cases.py"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=RUN_LIMIT_SECONDS, check=False)
    output = run.stdout + run.stderr
    cases = "tests/e2e/stall_cases.py::"
    # The child's wait returns once the process is killed, so that test's call passes and the
    # watchdog fails it in its teardown: pytest reports it as an error.
    assert f"ERROR {cases}test_a_child_process_that_never_ends" in output, output
    assert f"FAILED {cases}test_a_renderer_that_never_answers" in output, output
    assert f"PASSED {cases}test_the_next_test_gets_a_browser_that_answers" in output, output
    assert run.returncode == 1, output
    assert "node down" not in output, output
    assert "Target page, context or browser has been closed" in output, output
    assert f"stalled past {WATCHDOG_SECONDS} s" in output, output

    # The stall was real (the watchdog fires only on a test still running after its seconds), and
    # it killed Chromium rather than the worker. (The stacks show Playwright's event loop, not the
    # test's own frame, which runs in a greenlet faulthandler does not walk.)
    log = (tmp_path / "watchdog" / "gw0.log").read_text()
    assert f"stalled past {WATCHDOG_SECONDS} s: {cases}test_a_renderer_that_never_answers" in log, log
    killed = re.search(r"killed Chromium: (\d+) processes", log.split(f"{cases}test_a_renderer")[-1])
    assert killed and int(killed.group(1)) > 0, log
    # The child process was not Chromium: the first stage killed nothing, the second ended it.
    child = log.split(f"{cases}test_a_renderer")[0]
    assert f"stalled past {WATCHDOG_SECONDS} s: {cases}test_a_child_process_that_never_ends" in child, log
    assert (f"stalled past {WATCHDOG_SECONDS + STAGE_SECONDS} s: {cases}test_a_child_process_that_never_ends"
            in child), log
    assert "killed Chromium: 0 processes" in child, log
    everything = re.search(r"killed every process below the worker: (\d+) processes", child)
    assert everything and int(everything.group(1)) > 0, log
