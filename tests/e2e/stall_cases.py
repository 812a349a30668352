"""Run only by tests/e2e/test_watchdog.py (the name keeps it out of the suite's collection), in
this order: a test waiting on a child process that never ends, a browser test whose renderer
never answers, and a test after it in the same module that needs a working browser."""

import subprocess
import sys


def test_a_child_process_that_never_ends():
    # Not Chromium: only the watchdog's second stage, which kills every process below the
    # worker, ends this wait. It runs first, before the module has started Playwright's driver.
    subprocess.run([sys.executable, "-c", "import time; time.sleep(3600)"], check=False)


def test_a_renderer_that_never_answers(browser):
    page = browser.new_page()
    # Playwright's evaluate has no timeout of its own: this waits for as long as the loop runs.
    page.evaluate("() => { while (true) {} }")


def test_the_next_test_gets_a_browser_that_answers(browser):
    assert browser.new_page().evaluate("() => 6 * 7") == 42
