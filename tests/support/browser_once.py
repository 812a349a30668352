"""The `browser_once` marker: a browser test whose subject is what Chromium does with our pages.

Keys and focus, layout at a phone's width, the sandboxed frame, the policy's refusals, screenshots,
axe-core: none of it depends on the database behind the server, so such a test runs once, in the
embedded-default run, and is deselected when the run is on PostgreSQL (`DATABASE_URL`), where it
would repeat a browser's minutes to fetch pages whose bytes the test-client tests already fetch
there (the crawls, the permission matrix, the leak twins run in both runs).
`BLINDJUDGE_TEST_BROWSERS=both` keeps them in any run.

A browser test whose subject is the server behind the browser stays unmarked and runs in both
runs: the live dashboard over the channel layer (Redis on PostgreSQL), a socket told of a
reissued link, saves against a failing server, the report through its builder process, GitHub
sign-in, the server's own refusals.

The marker is enforced: it must say why (`@pytest.mark.browser_once("keys and layout")`), and
only a test that drives the real browser (asks for the `browser` fixture) may wear it; a misuse
stops the run at collection (tests/test_pure_marker.py shows both fire).
"""

import os

import pytest

from tests.support.pure import runs_on_postgresql

MARKER = "browser_once"


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        f"{MARKER}(reason): a browser test of what Chromium does with the pages; runs once, in the "
        "embedded-default run")


def pytest_collection_modifyitems(config, items):
    misuses, once = [], []
    for item in items:
        marker = item.get_closest_marker(MARKER)
        if marker is None:
            continue
        if not (marker.args and isinstance(marker.args[0], str) and marker.args[0].strip()):
            misuses.append(f"{item.nodeid}: say why it runs once: @pytest.mark.{MARKER}(\"...\")")
        if "browser" not in getattr(item, "fixturenames", ()):
            misuses.append(f"{item.nodeid}: drives no browser (asks for no `browser` fixture)")
        once.append(item)
    if misuses:
        raise pytest.UsageError(f"tests marked {MARKER} misuse it:\n  " + "\n  ".join(misuses))
    if not once or os.environ.get("BLINDJUDGE_TEST_BROWSERS") == "both" or not runs_on_postgresql():
        return
    config.hook.pytest_deselected(items=once)
    items[:] = [item for item in items if item.get_closest_marker(MARKER) is None]


def pytest_report_header(config):
    if os.environ.get("BLINDJUDGE_TEST_BROWSERS") != "both" and runs_on_postgresql():
        return f"tests marked {MARKER} are deselected: they ran in the embedded-default run"
    return None
