"""Reports built off the serving process: the builder processes, and the stream of a report.

Building a report imports numpy and scipy and peaks at hundreds of megabytes; a process that serves
judges must do neither. So the host's download asks a builder (`python -m reports.worker`, a child
of the serving process, see there for its protocol) and streams its answer on:

- `start_report(session_id, fmt)` takes a builder, asks it for the report and waits (in the
  calling thread, never the event loop) for its answer's header: the report is then complete in
  the builder, or refused (`ReportFailed`, with the status to answer: 404, 409, or 500 for a build
  that failed, 502 for a builder that died, 503 when every builder stayed busy, 504 for a build
  that took longer than BLINDJUDGE_REPORT_BUILD_TIMEOUT seconds, after which the builder is
  stopped). Nothing has been sent to the client yet, so every failure is a clean error page.
- The `ReportStream` it returns yields the report's exact byte count from the builder's pipe:
  `async_chunks()` under ASGI (the pipe is read when the event loop says it is readable: nothing
  blocks the loop), `chunks()` under WSGI (Django's test client). A builder that stalls for the
  timeout, or dies, mid-report ends the response short of its Content-Length, so the client
  sees an incomplete download, never a shorter file that looks whole.

Builders are started on demand (a download, or a host opening a revealed session's page:
`prestart`) and kept for reuse (starting one costs Python, Django, numpy and scipy: over a second)
until they have been idle BLINDJUDGE_REPORT_BUILDER_IDLE seconds (0: a new builder for every
report, which exits after it); at most BLINDJUDGE_REPORT_BUILDERS per serving
process build at once, a further download waits for one (up to the build timeout). A builder
whose stream was not read to its end (the client went away) is stopped, not reused. Builders run
with single-threaded BLAS: on a server the cores are the serving processes', and at a report's
matrix sizes thread hand-offs cost more than they save (bench/README.md).

Nothing here imports numpy, scipy or the report's sections.
"""

import asyncio
import atexit
import contextlib
import json
import logging
import os
import select
import subprocess
import sys
import threading
import time

from django.conf import settings

from blindjudge.errors import Conflict, NotFound, ServiceError

logger = logging.getLogger(__name__)

CHUNK_BYTES = 256 * 1024
MAX_HEADER_BYTES = 64 * 1024
# A builder idle for nearly its idle limit is about to exit on its own: it is not reused.
IDLE_MARGIN_SECONDS = 5.0
# Single-threaded numerical libraries in the builder, unless the environment chose otherwise.
BUILDER_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
REFUSALS = {404: NotFound, 409: Conflict}


class ReportFailed(ServiceError):
    """The report could not be given: the status and message say why (see the module docstring)."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status, self.code = status, code


class Builder:
    """One builder process and the reading end of its answers (non-blocking)."""

    def __init__(self):
        env = dict(os.environ)
        # The serving process's own settings (asgi.py and manage.py put their name here).
        env.setdefault("DJANGO_SETTINGS_MODULE", settings.SETTINGS_MODULE or "blindjudge.settings")
        for name in BUILDER_THREADS:
            env.setdefault(name, "1")
        self.process = subprocess.Popen(  # noqa: S603 - our own interpreter and module, fixed arguments
            [sys.executable, "-m", "reports.worker", "--idle", str(settings.BLINDJUDGE_REPORT_BUILDER_IDLE)],
            cwd=settings.BASE_DIR, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=None, close_fds=True)
        self.fd = self.process.stdout.fileno()
        os.set_blocking(self.fd, False)
        self.last_used = time.monotonic()

    def reusable(self) -> bool:
        idle = settings.BLINDJUDGE_REPORT_BUILDER_IDLE
        return (idle > 0 and self.process.poll() is None
                and time.monotonic() - self.last_used < idle - IDLE_MARGIN_SECONDS)

    def stop(self, *, kill: bool):
        """Let the builder go and wait for it, so no process is left behind: an idle one is told
        (its input closes and it exits; killed if it has not within 2 s), a busy one killed
        (`kill`). Blocks up to 2 s: `stop_soon` does it in a thread of its own."""
        if kill:
            self.process.kill()
        try:
            self.process.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()

    def stop_soon(self, *, kill: bool) -> threading.Thread:
        """`stop`, without blocking the caller (the event loop, say)."""
        thread = threading.Thread(target=self.stop, kwargs={"kill": kill}, daemon=True,
                                  name=f"report-builder-{self.process.pid}-stop")
        thread.start()
        return thread

    def ask(self, session_id: int, fmt: str, deadline: float) -> tuple[dict, bytes]:
        """Send one request and wait for its header: (header, the body's first bytes)."""
        try:
            self.process.stdin.write(json.dumps({"session": session_id, "format": fmt}).encode() + b"\n")
            self.process.stdin.flush()
        except OSError:
            raise self.died() from None
        received = b""
        poller = select.poll()  # not select(): a busy server's descriptors pass 1024
        poller.register(self.fd, select.POLLIN)
        while b"\n" not in received:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                limit = settings.BLINDJUDGE_REPORT_BUILD_TIMEOUT
                raise ReportFailed(504, "build_timeout",
                                   f"the report took longer than {limit} s to build and was "
                                   "stopped; try again later, or export it with "
                                   "`manage.py export_report`")
            if not poller.poll(remaining * 1000):
                continue
            try:
                chunk = os.read(self.fd, CHUNK_BYTES)
            except BlockingIOError:
                continue
            if not chunk:
                raise self.died()
            received += chunk
            if b"\n" not in received and len(received) > MAX_HEADER_BYTES:
                raise ReportFailed(502, "builder_failed", "the report builder answered out of protocol")
        line, _, rest = received.partition(b"\n")
        try:
            header = json.loads(line)
        except ValueError:
            raise ReportFailed(502, "builder_failed", "the report builder answered out of protocol") from None
        return header, rest

    def died(self) -> ReportFailed:
        try:
            status = self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            status = None
        logger.error("the report builder (pid %s) stopped before answering (exit status %s)",
                     self.process.pid, status)
        return ReportFailed(502, "builder_failed",
                            f"the report builder stopped before the report was built (exit status "
                            f"{status}); the server's log says more")


class BuilderPool:
    """The serving process's builders: at most BLINDJUDGE_REPORT_BUILDERS, idle ones reused."""

    def __init__(self):
        self.ready = threading.Condition()
        self.idle: list[Builder] = []
        self.running = 0
        self.stopping: list[threading.Thread] = []  # builders being let go, each in a thread

    def _stopping(self, thread: threading.Thread):
        """Keep the thread letting a builder go, for stop_all to wait for (the lock held)."""
        self.stopping = [t for t in self.stopping if t.is_alive()] + [thread]

    def let_go(self, builder: Builder, *, kill: bool):
        thread = builder.stop_soon(kill=kill)
        with self.ready:
            self._stopping(thread)

    def take(self, deadline: float) -> Builder:
        with self.ready:
            while True:
                while self.idle:
                    builder = self.idle.pop()
                    if builder.reusable():
                        return builder
                    self.running -= 1
                    self._stopping(builder.stop_soon(kill=False))
                if self.running < settings.BLINDJUDGE_REPORT_BUILDERS:
                    self.running += 1
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise ReportFailed(503, "builders_busy",
                                       "every report builder stayed busy with other reports; try "
                                       "again in a moment")
                self.ready.wait(remaining)
        return self._start()

    def _start(self) -> Builder:
        """A new builder in the place just counted in `running`; the place is given back if the
        builder cannot start."""
        try:
            return Builder()
        except BaseException as error:
            with self.ready:
                self.running -= 1
                self.ready.notify()
            if not isinstance(error, OSError):
                raise
            logger.error("the report builder could not be started: %s", error)
            raise ReportFailed(500, "builder_failed", "the report builder could not be started") from None

    def prestart(self):
        """Start a builder for the pool now, unless one is idle or none may start; returns at
        once (the builder sets itself up in its own process)."""
        with self.ready:
            if any(builder.reusable() for builder in self.idle):
                return
            if self.running >= settings.BLINDJUDGE_REPORT_BUILDERS:
                return
            self.running += 1
        try:
            builder = self._start()
        except ReportFailed:
            return  # logged; the download will try again and say so
        with self.ready:
            self.idle.append(builder)
            self.ready.notify()

    def give_back(self, builder: Builder, *, reusable: bool):
        builder.last_used = time.monotonic()
        keep = reusable and builder.reusable()
        if not keep:
            self.let_go(builder, kill=not reusable)
        with self.ready:
            if keep:
                self.idle.append(builder)
            else:
                self.running -= 1
            self.ready.notify()

    def stop_all(self):
        """Stop the idle builders and wait for those being let go (busy ones are stopped when their
        report is given back)."""
        with self.ready:
            idle, self.idle = self.idle, []
            self.running -= len(idle)
            stopping, self.stopping = self.stopping, []
        for builder in idle:
            builder.stop(kill=False)
        for thread in stopping:
            thread.join(timeout=10)


POOL = BuilderPool()
atexit.register(POOL.stop_all)


class ReportStream:
    """A report's bytes as the builder sends them; give it to one StreamingHttpResponse, through
    `async_chunks()` or `chunks()`. Its builder goes back to the pool at the last byte, or is
    stopped at `close()` before it (or at a failure)."""

    def __init__(self, builder: Builder, size: int, first: bytes, build_s: float, build_cpu_s: float):
        self.builder, self.size, self.first = builder, size, first
        self.build_s, self.build_cpu_s = build_s, build_cpu_s
        self.sent = 0
        self.lock = threading.Lock()
        self.done = False

    def finish(self, *, complete: bool):
        with self.lock:
            if self.done:
                return
            self.done = True
        if not complete:
            logger.warning("a report download ended after %d of %d bytes; its builder was stopped",
                           self.sent, self.size)
        POOL.give_back(self.builder, reusable=complete)

    def close(self):
        """Django calls this when the response is done with (also when it never read the stream:
        a HEAD request); a report not read to its end stops its builder."""
        self.finish(complete=self.sent >= self.size)

    def __del__(self):
        # A stream dropped unread and unclosed would hold its builder's place forever.
        with contextlib.suppress(Exception):  # at interpreter exit there may be no pool left
            self.close()

    def _take(self, chunk: bytes) -> bytes:
        if not chunk:
            raise ReportFailed(502, "builder_failed", "the report builder stopped mid-report")
        chunk = chunk[: self.size - self.sent]
        self.sent += len(chunk)
        return chunk

    def _timeout(self) -> ReportFailed:
        return ReportFailed(504, "build_timeout", "the report builder stalled mid-report")

    async def _async_chunks(self):
        loop = asyncio.get_running_loop()
        fd, timeout = self.builder.fd, settings.BLINDJUDGE_REPORT_BUILD_TIMEOUT
        try:
            if self.first and self.size:
                yield self._take(self.first)
            while self.sent < self.size:
                if self.done:
                    return  # closed meanwhile: the builder (and its pipe) may be gone
                try:
                    chunk = os.read(fd, min(CHUNK_BYTES, self.size - self.sent))
                except BlockingIOError:
                    await _readable(loop, fd, timeout, self._timeout)
                    continue
                yield self._take(chunk)
        finally:
            self.finish(complete=self.sent >= self.size)

    def _chunks(self):
        poller = select.poll()
        poller.register(self.builder.fd, select.POLLIN)
        timeout = settings.BLINDJUDGE_REPORT_BUILD_TIMEOUT * 1000
        try:
            if self.first and self.size:
                yield self._take(self.first)
            while self.sent < self.size:
                if self.done:
                    return  # closed meanwhile: the builder (and its pipe) may be gone
                if not poller.poll(timeout):
                    raise self._timeout()
                try:
                    chunk = os.read(self.builder.fd, min(CHUNK_BYTES, self.size - self.sent))
                except BlockingIOError:
                    continue
                yield self._take(chunk)
        finally:
            self.finish(complete=self.sent >= self.size)

    def async_chunks(self):
        return _AsyncContent(self, self._async_chunks())

    def chunks(self):
        return _Content(self, self._chunks())


class _Content:
    """What a StreamingHttpResponse iterates, with the stream's close() for Django to call."""

    def __init__(self, stream: ReportStream, iterator):
        self.stream, self.iterator = stream, iterator

    def __iter__(self):
        return self.iterator

    def close(self):
        self.stream.close()


class _AsyncContent:
    """The same, iterated asynchronously only (Django tries `iter()` first: an object offering
    both would be read synchronously, all of it into memory, under ASGI)."""

    def __init__(self, stream: ReportStream, iterator):
        self.stream, self.iterator = stream, iterator

    def __aiter__(self):
        return self.iterator

    def close(self):
        self.stream.close()


async def _readable(loop, fd: int, timeout: float, timed_out):
    """Wait until the descriptor `fd` is readable (the event loop watches it; nothing blocks)."""
    readable = loop.create_future()
    loop.add_reader(fd, lambda: readable.done() or readable.set_result(None))
    try:
        await asyncio.wait_for(readable, timeout)
    except TimeoutError:
        raise timed_out() from None
    finally:
        loop.remove_reader(fd)


def prestart():
    """A host is on a revealed session's page, where the report's links are: start a builder now
    (BLINDJUDGE_REPORT_BUILDER_PRESTART), so that the download finds it ready instead of waiting
    the second or two a builder takes to start. Does nothing when one is idle, when none may start,
    or with BLINDJUDGE_REPORT_BUILDER_IDLE=0; never waits."""
    if settings.BLINDJUDGE_REPORT_BUILDER_PRESTART and settings.BLINDJUDGE_REPORT_BUILDER_IDLE > 0:
        POOL.prestart()


def start_report(session_id: int, fmt: str) -> ReportStream:
    """Ask a builder for the report of revealed session `session_id` in format `fmt` and wait
    for it to be built; ReportFailed if it is not (see the module docstring). Blocks the calling
    thread for the build: call it from a synchronous view (Django runs those in a thread)."""
    deadline = time.monotonic() + settings.BLINDJUDGE_REPORT_BUILD_TIMEOUT
    builder = POOL.take(deadline)
    try:
        header, first = builder.ask(session_id, fmt, deadline)
    except ReportFailed:
        POOL.give_back(builder, reusable=False)
        raise
    if not header.get("ok"):
        POOL.give_back(builder, reusable=True)
        status, message = int(header.get("status", 500)), str(header.get("message", "refused"))
        if status in REFUSALS:
            raise REFUSALS[status](message)  # answered as every other 404 and 409
        raise ReportFailed(status, str(header.get("code", "build_failed")), message)
    return ReportStream(builder, int(header["bytes"]), first, float(header.get("build_s", 0.0)),
                        float(header.get("build_cpu_s", 0.0)))
