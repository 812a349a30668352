"""The thread each request's sync code runs in is kept for the next request (blindjudge/
request_threads.py), never while work given to it is unfinished, and never more than `keep`.

At the ASGI interface, in this process, against views of this module (its own URLconf): a view
answers with a number its thread draws once (thread idents are reused by the system once a thread
ends; these are not), waits until the test lets it go, or leaves work behind on its own thread.
Django's own handler is the positive control: its requests each get a new thread, so the
comparison that says "the same thread" can fail."""

import asyncio
import itertools
import sys
import threading

import pytest
from asgiref.sync import SyncToAsync
from django.core.handlers.asgi import ASGIHandler
from django.http import HttpResponse
from django.test import override_settings
from django.urls import path

from blindjudge.asgi import application
from blindjudge.request_threads import KeptThreadsASGIHandler

pytestmark = [pytest.mark.asyncio]

let_go = threading.Event()
waiting = threading.Event()
_numbers = itertools.count()
_this_thread = threading.local()


def thread_number() -> int:
    if not hasattr(_this_thread, "number"):
        _this_thread.number = next(_numbers)
    return _this_thread.number


def thread_view(request):
    return HttpResponse(f"{thread_number()}")


def waiting_view(request):
    waiting.set()
    let_go.wait(timeout=10)
    return HttpResponse(f"{thread_number()}")


class TrailingResponse(HttpResponse):
    def close(self):
        """Django's last call on the request's thread; it leaves work there, still to run."""
        super().close()
        executor = SyncToAsync.context_to_thread_executor[SyncToAsync.thread_sensitive_context.get()]
        executor.submit(let_go.wait, 10)


def trailing_view(request):
    return TrailingResponse(f"{thread_number()}")


def crossings_view(request):
    """How often the way here crossed from a sync thread back to the event loop (asgiref's
    AsyncToSync on this thread's stack)."""
    frame, crossings = sys._getframe(), 0
    while frame is not None:
        crossings += frame.f_code.co_qualname == "AsyncToSync.__call__"
        frame = frame.f_back
    return HttpResponse(f"{crossings}")


urlpatterns = [path("thread", thread_view), path("wait", waiting_view),
               path("trailing", trailing_view), path("crossings", crossings_view)]
in_this_module = override_settings(ROOT_URLCONF=__name__, ALLOWED_HOSTS=["testserver"])


def scope(route: str) -> dict:
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
            "scheme": "http", "path": f"/{route}", "raw_path": f"/{route}".encode(),
            "query_string": b"", "root_path": "", "headers": [(b"host", b"testserver")],
            "client": ("127.0.0.1", 40000), "server": ("testserver", 80)}


async def request(app, route: str, *, disconnect: asyncio.Event | None = None):
    """(status, body) of one GET; with `disconnect`, the client goes away when it is set."""
    sent = []
    body_sent = False

    async def receive():
        nonlocal body_sent
        if not body_sent:
            body_sent = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await (disconnect.wait() if disconnect else asyncio.Event().wait())
        return {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    await app(scope(route), receive, send)
    start = next((m for m in sent if m["type"] == "http.response.start"), None)
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return (start["status"] if start else None), body


async def thread_of_route(app, route: str) -> int:
    status, body = await request(app, route)
    assert status == 200, body
    return int(body)


async def thread_of(app) -> int:
    return await thread_of_route(app, "thread")


@in_this_module
async def test_requests_one_after_another_run_on_one_kept_thread():
    app = KeptThreadsASGIHandler()
    threads = [await thread_of(app) for _ in range(5)]
    assert len(set(threads)) == 1
    assert threads[0] != threading.get_ident()  # the sync work is off the event loop's thread
    assert len(app.idle) == 1


@in_this_module
async def test_positive_control_djangos_own_handler_starts_a_thread_per_request():
    app = ASGIHandler()
    threads = [await thread_of(app) for _ in range(3)]
    assert len(set(threads)) == 3


@in_this_module
async def test_the_product_serves_through_kept_threads():
    assert len({await thread_of(application) for _ in range(3)}) == 1


@in_this_module
async def test_a_gone_clients_request_keeps_its_thread_until_its_view_returns_and_no_one_waits():
    app = KeptThreadsASGIHandler()
    first = await thread_of(app)  # now kept, idle
    waiting.clear()
    let_go.clear()
    gone = asyncio.Event()
    abandoned = asyncio.create_task(request(app, "wait", disconnect=gone))
    try:
        await asyncio.to_thread(waiting.wait, 10)  # the view runs, on the kept thread
        gone.set()  # the client goes away; the view runs on (a thread cannot be stopped)
        await asyncio.sleep(0.1)
        assert not abandoned.done() and len(app.idle) == 0
        # Meanwhile another request does not wait behind the view: a thread of its own.
        second = await asyncio.wait_for(thread_of(app), 5)
        assert second != first
    finally:
        let_go.set()
    status, _ = await asyncio.wait_for(abandoned, 5)
    assert status is None  # nothing was answered
    assert len(app.idle) == 2  # both threads free again, both kept


@in_this_module
async def test_a_thread_with_unfinished_work_is_let_go_not_kept():
    app = KeptThreadsASGIHandler()
    let_go.clear()
    try:
        first = await asyncio.wait_for(thread_of_route(app, "trailing"), 5)
        assert len(app.idle) == 0  # its work left behind still runs there: not kept
        # The next request is not queued behind that work: a thread of its own.
        assert await asyncio.wait_for(thread_of(app), 5) != first
    finally:
        let_go.set()
    assert len(app.idle) == 1


@in_this_module
async def test_at_most_keep_threads_are_kept_after_a_burst():
    app = KeptThreadsASGIHandler(keep=2)
    waiting.clear()
    let_go.clear()
    burst = [asyncio.create_task(request(app, "wait")) for _ in range(5)]
    await asyncio.sleep(0.2)
    let_go.set()
    answers = await asyncio.wait_for(asyncio.gather(*burst), 10)
    assert [status for status, _ in answers] == [200] * 5
    assert len({body for _, body in answers}) == 5  # five at once: five threads, none waited
    assert len(app.idle) == 2


@in_this_module
async def test_the_middleware_and_the_view_run_in_one_call_on_the_request_thread():
    # Positive control: Django's own handler ends its chain in async code, so the way to the view
    # crosses back to the event loop once (the product's middleware includes sync-only ones).
    status, body = await request(ASGIHandler(), "crossings")
    assert (status, body) == (200, b"1")
    for app in (KeptThreadsASGIHandler(), application):
        status, body = await request(app, "crossings")
        assert (status, body) == (200, b"0")
