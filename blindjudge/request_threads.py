"""Django's ASGI handler, with the thread each request's sync code runs in kept for the next.

Django's handler runs every request in a `ThreadSensitiveContext` of its own, which makes a new
one-thread executor for the request's sync work (middleware, view, signals, the response's
close) and, when the request ends, a second thread to join the first (asgiref 3.13). Two threads
started and joined per request cost about 0.9 ms of CPU here, measured alone (bench/README.md,
"The request's thread"): most of what the hello-world view costs the server, and a fifth of a
judge's item page.

Here a request takes an idle kept executor if there is one and otherwise makes one, exactly as
Django would; the request's sync work runs on its one thread as before, one call at a time, in
the request's own context (asgiref copies it into each call). A request whose client went away
still holds its thread until its view returns (asgiref waits for the sync call it cancels), and
other requests meanwhile take other threads. When a request ends, its executor is kept for the
next request only if nothing given to it is still unfinished (work left on the thread would make
the next request wait behind it; such a thread is let go, its thread ending once that work
returns). At most `KEEP` are kept; a burst beyond that makes fresh ones, as before, so no request
ever waits for a thread.

What a reused thread carries from one request to the next: Django's database connections, which
are per thread (close_old_connections closes them at the end of each request as before, so each
request still takes a connection from the pool: blindjudge/sqlite_backend, psycopg's pool).
Everything else Django keeps per request (the active language, the time zone, the URLconf) is
per context, which each request has fresh.

And the request's middleware and view run in one call on that thread (`load_middleware`), not
crossing back to the event loop between the innermost middleware and the view.

The judging loop's requests (every path under /s/: a judge's pages, frames and saves) take turns:
at most `at_once` of them (BLINDJUDGE_JUDGE_REQUESTS_AT_ONCE, 2) are worked on at a time in each
process, reads (GET, HEAD) and writes (the rest) counted apart so a save waiting for SQLite's
write lock never holds up a page; the others wait on the event loop, in order, where waiting
costs nothing. Python runs one thread at a time, so 32 judges' requests in 32 threads did not
finish sooner: they took the GIL from each other at every SQLite call, and the handing over made
each request cost the server half again to nearly twice the CPU (bench/README.md, "Judge requests
take turns"). A request's turn starts once its body has been read and ends when its answer starts to
go out, so a slow client, uploading or downloading, holds no turn; Django's last call, which hands
the database connection back, runs after it. A request whose client went away keeps its turn
until its view returns (Django waits for it before ending the request), so no more than
`at_once` views ever run at a time. Everything else (a host's pages, which may build a report for
seconds; sign-in, which may wait on GitHub or hash a password; static files; the websockets)
never waits for a turn.
"""

import asyncio
import threading
from collections import deque
from concurrent.futures import ThreadPoolExecutor

from asgiref.sync import ThreadSensitiveContext
from django.conf import settings
from django.core.handlers.asgi import ASGIHandler

KEEP = 32
TAKING_TURNS = "/s/"  # the judging loop's paths (judge/urls.py)
READS = frozenset({"GET", "HEAD"})


class RequestThread(ThreadPoolExecutor):
    """One thread, counting the calls given to it that have not finished."""

    def __init__(self):
        super().__init__(max_workers=1, thread_name_prefix="request")
        self._count_lock = threading.Lock()
        self.unfinished = 0

    def submit(self, fn, /, *args, **kwargs):
        with self._count_lock:
            self.unfinished += 1
        try:
            future = super().submit(fn, *args, **kwargs)
        except BaseException:
            self._finished(None)
            raise
        future.add_done_callback(self._finished)
        return future

    def _finished(self, _future):
        with self._count_lock:
            self.unfinished -= 1


class KeptThreadsASGIHandler(ASGIHandler):
    """Django's `ASGIHandler`, each request's sync work on a kept thread (see the module)."""

    def __init__(self, keep: int = KEEP, at_once: int | None = None):
        super().__init__()
        self.keep = keep
        self.idle: deque[RequestThread] = deque()
        self.at_once = settings.BLINDJUDGE_JUDGE_REQUESTS_AT_ONCE if at_once is None else at_once
        # The turns, reads' and writes'. An asyncio semaphore belongs to the event loop it first
        # waited on: one pair per loop (Uvicorn runs one per process; tests run one per test).
        self._turns: tuple[asyncio.AbstractEventLoop, asyncio.Semaphore, asyncio.Semaphore] | None = None

    def turns_for(self, scope) -> asyncio.Semaphore | None:
        """The turns this request waits for, or None (it never waits)."""
        if not self.at_once or not scope["path"].startswith(TAKING_TURNS):
            return None
        loop = asyncio.get_running_loop()
        if self._turns is None or self._turns[0] is not loop:
            self._turns = (loop, asyncio.Semaphore(self.at_once), asyncio.Semaphore(self.at_once))
        return self._turns[1] if scope["method"] in READS else self._turns[2]

    async def handle_in_turn(self, scope, receive, send, turns: asyncio.Semaphore):
        """Django's handling, its turn taken when the body is read and given back when the
        answer starts (see the module)."""
        holding = False

        async def body_then_turn():
            nonlocal holding
            message = await receive()
            if message["type"] == "http.request" and not message.get("more_body") and not holding:
                await turns.acquire()
                holding = True
            return message

        async def turn_then_answer(message):
            nonlocal holding
            if holding:
                holding = False
                turns.release()
            await send(message)

        try:
            await self.handle(scope, body_then_turn, turn_then_answer)
        finally:
            if holding:  # nothing was answered (the client went away, or an error)
                turns.release()

    def load_middleware(self, is_async=False):
        """The middleware chain as Django builds it for WSGI (sync, the view called straight from
        the innermost middleware), run as one call on the request's thread.

        Django's ASGI chain ends in its async `_get_response_async`, so the innermost sync-only
        middleware (ours; whitenoise's) reaches it through `async_to_sync`: from the request's
        thread back to the event loop, which hands the sync view to the same thread again
        (asgiref's CurrentThreadExecutor). Two more crossings per request, each a future, a
        wake-up of the loop and of the thread. Every middleware here can run sync, and every view
        is sync (an async one would be called through `async_to_sync` by `_get_response`)."""
        super().load_middleware(is_async=False)
        self._middleware_chain = self.adapt_method_mode(True, self._middleware_chain, False)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        # All on the event loop's thread: taking and giving back need no lock.
        thread = self.idle.pop() if self.idle else RequestThread()
        try:
            async with ThreadSensitiveContext(executor=thread):
                turns = self.turns_for(scope)
                if turns is None:
                    await self.handle(scope, receive, send)
                else:
                    await self.handle_in_turn(scope, receive, send, turns)
        finally:
            if thread.unfinished == 0 and len(self.idle) < self.keep:
                self.idle.append(thread)
            else:
                thread.shutdown(wait=False)  # its thread ends once what it runs returns
