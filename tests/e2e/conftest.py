"""End-to-end harness: a real ASGI server process on the test database, real Chromium, detectors.

- `e2e_server` (inside a `django_db(transaction=True)` test): starts
  `python -m uvicorn … blindjudge.asgi:application` with the flags `./bj start` uses
  (`SERVER_FLAGS`) on a listening socket made here, DJANGO_SETTINGS_MODULE=tests.e2e.settings_e2e
  and BLINDJUDGE_TEST_DATABASE_NAME naming this test run's database; yields its base URL; stops it
  before the database is flushed. Its stderr is attached to the report of a failing test.
- `browser`: Debian's Chromium headless shell, launched once per module, quiet flags; every host
  name but the server's 127.0.0.1 resolves to a local sink that records any request that reaches it.
- `observed_context`: a new browser context with an `Observer` (see there) attached.

Playwright's sync API runs an event loop in this thread, which Django's async-safety check
mistakes for async code: DJANGO_ALLOW_ASYNC_UNSAFE is set while the browser is up (and only then,
so other test modules keep the check); the server process never gets it.
"""

import faulthandler
import functools
import http.server
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import psutil
import pytest
from django.conf import settings
from django.db import connection
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[2]
# Debian's build of Chromium's headless shell (the old headless mode, the browser Playwright's own
# headless runs use): the same Blink, V8 and policies as /usr/bin/chromium, without the desktop
# browser around them. The suite's browser tests took 382 s of CPU with it against 660 s with
# /usr/bin/chromium, everything passing on both (2026-12-06, tests/README.md).
CHROMIUM = os.environ.get("BLINDJUDGE_TEST_CHROMIUM", "/usr/bin/chromium-headless-shell")
CHROMIUM_ARGS = ["--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--no-first-run", "--disable-quic"]
SERVER_START_SECONDS = 60
# The server ./bj start runs, flag for flag, but on an inherited socket (`--fd`) instead of
# --host/--port; tests/e2e/test_server.py checks the two stay the same.
SERVER_FLAGS = ["--loop", "uvloop", "--http", "httptools", "--ws", "websockets-sansio",
                "--lifespan", "off", "--ws-max-size", "4096", "--timeout-graceful-shutdown", "5",
                "--timeout-keep-alive", "75", "--no-server-header"]


# --- The sink: where every request to a host other than the server lands ----------------------

# Chromium's own services (component updater, network time) keep calling home from the browser
# process whatever the flags; Debian's build does so even with --disable-component-update. No page
# makes these requests, so the sink keeps them apart. A copy beaconing to these hosts would still
# be caught by the Observer, which sees every request a page or frame makes.
BROWSER_SERVICE_HOSTS = re.compile(
    r"(^|\.)(googleapis\.com|google\.com|gstatic\.com|gvt1\.com|gvt2\.com)(:\d+)?$")


class _SinkHandler(http.server.BaseHTTPRequestHandler):
    def _record(self):
        host = self.headers.get("Host") or ""
        hit = f"{self.command} {host}{self.path}"
        (self.server.background if BROWSER_SERVICE_HOSTS.search(host) else self.server.hits).append(hit)
        self.send_response(204)
        self.end_headers()

    do_GET = do_POST = do_HEAD = do_PUT = do_OPTIONS = _record

    def log_message(self, *args):
        pass


# A browser test that stops answering (a Playwright call without a timeout of its own, such as a
# key press or an evaluate, waiting on a renderer that never acknowledges it) would otherwise hold
# its worker until CI's limit. Past BROWSER_TEST_WATCHDOG_SECONDS the watchdog writes every
# thread's stack to var/watchdog/<worker>.log (each test's name is written there before it runs)
# and kills this worker's Chromium: the blocked call raises, the test fails, the worker goes on and
# the next test gets a new browser. Ending the worker instead, as it once did, left xdist
# (`--dist loadgroup`) waiting forever for the lost worker's tests. If the test is still running
# WATCHDOG_STAGE_SECONDS later (the stall was not Chromium's: a server process, a subprocess,
# Playwright's driver), it kills every process below the worker, so a wait on any of them ends;
# only a stage after that does the worker write its stacks again and exit.
# tests/e2e/test_watchdog.py runs both kinds of stall under xdist.
BROWSER_TEST_WATCHDOG_SECONDS = float(os.environ.get("BLINDJUDGE_TEST_BROWSER_WATCHDOG_SECONDS", "300"))
WATCHDOG_STAGE_SECONDS = float(os.environ.get("BLINDJUDGE_TEST_WATCHDOG_STAGE_SECONDS", "60"))


@functools.cache
def _watchdog_file():
    """This worker's log, opened once and held open: faulthandler writes to it from C."""
    folder = Path(os.environ.get("BLINDJUDGE_TEST_WATCHDOG_DIR") or ROOT / "var" / "watchdog")
    folder.mkdir(parents=True, exist_ok=True)
    name = os.environ.get("PYTEST_XDIST_WORKER", "main")
    return open(folder / f"{name}.log", "a", encoding="utf-8")  # noqa: SIM115 - held open for faulthandler


def _kill_below_this_worker(log, *, only_chromium: bool) -> list[int]:
    """Kill Chromium's processes below this worker (Playwright's driver, a Node process, stays,
    so the pending calls fail with "Target closed" instead of the driver's connection breaking),
    or, with only_chromium False, every process below it."""
    killed = []
    for process in psutil.Process().children(recursive=True):
        try:
            if not only_chromium or process.name().startswith("chrom"):
                process.kill()
                killed.append(process.pid)
        except psutil.NoSuchProcess:
            pass
    what = "Chromium" if only_chromium else "every process below the worker"
    log.write(f"{time.strftime('%H:%M:%S')} killed {what}: {len(killed)} processes {killed}\n")
    log.flush()
    return killed


class _Watchdog:
    def __init__(self, nodeid: str):
        self.log = _watchdog_file()
        self.nodeid = nodeid
        self.fired = threading.Event()
        self.log.write(f"{time.strftime('%H:%M:%S')} {nodeid}\n")
        self.log.flush()
        self.timers = [threading.Timer(BROWSER_TEST_WATCHDOG_SECONDS, self._fire, (True,)),
                       threading.Timer(BROWSER_TEST_WATCHDOG_SECONDS + WATCHDOG_STAGE_SECONDS,
                                       self._fire, (False,))]
        for timer in self.timers:
            timer.daemon = True

    def __enter__(self):
        for timer in self.timers:
            timer.start()
        faulthandler.dump_traceback_later(
            BROWSER_TEST_WATCHDOG_SECONDS + 2 * WATCHDOG_STAGE_SECONDS, exit=True, file=self.log)
        return self

    def __exit__(self, *exc_info):
        faulthandler.cancel_dump_traceback_later()
        for timer in self.timers:
            timer.cancel()

    def _fire(self, only_chromium: bool):
        seconds = BROWSER_TEST_WATCHDOG_SECONDS + (0 if only_chromium else WATCHDOG_STAGE_SECONDS)
        self.log.write(f"{time.strftime('%H:%M:%S')} stalled past {seconds:g} s: "
                       f"{self.nodeid}; every thread's stack:\n")
        self.log.flush()
        faulthandler.dump_traceback(file=self.log, all_threads=True)
        _kill_below_this_worker(self.log, only_chromium=only_chromium)
        self.fired.set()


@pytest.fixture(autouse=True)
def _watchdog(request):
    with _Watchdog(request.node.nodeid) as watchdog:
        yield
    if watchdog.fired.is_set():
        pytest.fail(f"the test stalled past {BROWSER_TEST_WATCHDOG_SECONDS:g} s and the watchdog killed "
                    f"its Chromium (and, if that was not enough, every process below the worker); "
                    f"the stacks are in {watchdog.log.name}", pytrace=False)


@pytest.fixture(scope="module")
def sink():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _SinkHandler)
    server.hits = []
    server.background = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


class _Chromium:
    """A module's Chromium, launched again if the watchdog killed the last one."""

    def __init__(self, playwright, args):
        self.playwright, self.args, self.current = playwright, args, None

    def connected(self):
        if self.current is None or not self.current.is_connected():
            self.current = self.playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=self.args)
        return self.current

    def close(self):
        if self.current is not None and self.current.is_connected():
            self.current.close()


@pytest.fixture(scope="module")
def _chromium(sink):
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    # Name resolution is the one door out: every host but 127.0.0.1 (the server) maps to the sink,
    # so a request that escapes routing is recorded there instead of reaching the internet.
    rules = f"MAP * 127.0.0.1:{sink.server_address[1]}, EXCLUDE 127.0.0.1"
    try:
        with sync_playwright() as playwright:
            chromium = _Chromium(playwright, [*CHROMIUM_ARGS, f"--host-resolver-rules={rules}"])
            yield chromium
            chromium.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def browser(_chromium):
    """Chromium, launched once per module (again only after the watchdog has killed it)."""
    return _chromium.connected()


# --- The server process -------------------------------------------------------------------------

@dataclass
class E2EServer:
    base: str
    process: subprocess.Popen
    stderr_path: Path
    stdout_path: Path | None = None

    @property
    def origin(self) -> str:
        return self.base

    def stderr(self) -> str:
        try:
            return self.stderr_path.read_text(errors="replace")
        except OSError:
            return ""

    def stdout(self) -> str:
        """Uvicorn's access log."""
        try:
            return self.stdout_path.read_text(errors="replace") if self.stdout_path else ""
        except OSError:
            return ""

    def url(self, path: str) -> str:
        return self.base + path


def _wait_until_answering(server: E2EServer):
    deadline = time.monotonic() + SERVER_START_SECONDS
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"the server exited with {server.process.returncode}:\n{server.stderr()}")
        try:
            # S310: the URL is our own server's http:// address, never a file: or custom scheme.
            with urllib.request.urlopen(server.url("/guest/"), timeout=5) as response:  # noqa: S310
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.1)
    raise RuntimeError(f"the server did not answer in {SERVER_START_SECONDS}s:\n{server.stderr()}")


@pytest.fixture
def e2e_server(request, transactional_db, tmp_path):
    """A real Uvicorn process (as ./bj start runs it) serving the product (plus the test-only
    pages) on this test's database. Depends on transactional_db, so it stops before the flush at
    the end of the test. A `server_env(NAME="value", …)` mark adds to its environment."""
    # The listening socket is made here and handed over, so no other process can take the port
    # between choosing it and binding it.
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    port = listener.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env.update({
        "DJANGO_SETTINGS_MODULE": "tests.e2e.settings_e2e",
        "BLINDJUDGE_TEST_DATABASE_NAME": str(connection.settings_dict["NAME"]),
        "SITE_URL": base,
        "ALLOWED_HOSTS": "127.0.0.1",
        "PYTHONUNBUFFERED": "1",
        "STATIC_ROOT": str(tmp_path / "static"),  # unused (finders serve); present, so no warning
        # The server's allauth talks to this run's GitHub stand-in (tests/support/github_standin.py).
        "BLINDJUDGE_TEST_GITHUB_PORT": str(settings.TEST_GITHUB_STANDIN_PORT),
        # Its websocket opening counts (in Redis, with REDIS_URL) start from zero, as a new
        # process's own would: no other test's server, nor another run on the same Redis, shares them.
        "BLINDJUDGE_WS_OPEN_KEY_PREFIX": f"bjtest-ws-open-{os.urandom(6).hex()}",
    })
    for mark in request.node.iter_markers("server_env"):
        env.update(mark.kwargs)
    (tmp_path / "static").mkdir()
    stderr_path, stdout_path = tmp_path / "server.stderr", tmp_path / "server.stdout"
    with open(stderr_path, "wb") as stderr, open(stdout_path, "wb") as stdout:
        process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "blindjudge.asgi:application",
             "--fd", str(listener.fileno()), *SERVER_FLAGS],
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
            pass_fds=[listener.fileno()])
    listener.close()
    server = E2EServer(base=base, process=process, stderr_path=stderr_path, stdout_path=stdout_path)
    request.node.e2e_server = server
    try:
        _wait_until_answering(server)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    server = getattr(item, "e2e_server", None)
    if server is not None and report.failed:
        report.sections.append((f"server stderr ({report.when})", server.stderr() or "(empty)"))


# --- Detectors ----------------------------------------------------------------------------------

@dataclass
class Observer:
    """Everything a browser context does that a test may need to see.

    - `attempted`: every request the page or any frame made to another origin, including those
      the browser then refused (Playwright reports a CSP-blocked load as a request that failed
      with "csp").
    - `left`: off-origin requests that went on to the network stack (routing sees only those);
      each is aborted, so nothing leaves and nothing hangs. With `let_through`, they go on to the
      sink instead (for the positive control of the sink itself). Requests to `also_allowed`
      origins (the GitHub stand-in, in the sign-in tests) go on; `requests` lists them.
    - `refused`: (url, failure) of requests the browser refused, e.g. "csp".
    - `dialogs`, `page_errors`, `console`: the execution detectors. Dialogs are dismissed.
    """

    origin: str
    let_through: bool = False
    also_allowed: tuple = ()
    requests: list = field(default_factory=list)
    attempted: list = field(default_factory=list)
    left: list = field(default_factory=list)
    refused: list = field(default_factory=list)
    dialogs: list = field(default_factory=list)
    page_errors: list = field(default_factory=list)
    console: list = field(default_factory=list)

    def off_origin(self, url: str) -> bool:
        parts = urlsplit(url)
        if parts.scheme in ("data", "blob", "about"):
            return False  # never network; the product's CSP refuses data: loads anyway
        return f"{parts.scheme}://{parts.netloc}" not in (self.origin, *self.also_allowed)

    def attach(self, context):
        context.on("request", self._on_request)
        context.on("requestfailed", lambda r: self.refused.append((r.url, r.failure)))
        context.on("dialog", self._on_dialog)
        context.on("weberror", lambda e: self.page_errors.append(str(e.error)))
        context.on("console", lambda m: self.console.append((m.type, m.text)))
        context.route("**/*", self._route)

    def _on_request(self, request):
        self.requests.append(request.url)
        if self.off_origin(request.url):
            self.attempted.append(request.url)

    def _on_dialog(self, dialog):
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def _route(self, route):
        url = route.request.url
        if not self.off_origin(url):
            route.continue_()
            return
        self.left.append(url)
        if self.let_through:
            route.continue_()
        else:
            route.abort("blockedbyclient")

    def console_errors(self) -> list:
        return [text for kind, text in self.console if kind in ("error", "warning")]

    def assert_silent(self, sink=None):
        """Nothing ran, nothing tried to load from elsewhere, nothing left."""
        assert self.attempted == [], f"requests off the server: {self.attempted}"
        assert self.left == [], f"requests that reached the network stack: {self.left}"
        assert self.dialogs == [], f"dialogs: {self.dialogs}"
        assert self.page_errors == [], f"page errors: {self.page_errors}"
        assert self.console_errors() == [], f"console errors: {self.console_errors()}"
        if sink is not None:
            assert sink.hits == [], f"requests that reached the sink: {sink.hits}"


@pytest.fixture
def observed_context(browser, sink):
    """`make(origin, **context_options) -> (context, observer)`; contexts close at the end."""
    contexts = []
    sink.hits.clear()

    def make(origin: str, *, let_through: bool = False, also_allowed: tuple = (), **options):
        context = browser.new_context(**options)
        observer = Observer(origin=origin, let_through=let_through, also_allowed=also_allowed)
        observer.attach(context)
        contexts.append(context)
        return context, observer

    yield make
    for context in contexts:
        context.close()
