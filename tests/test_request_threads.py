"""The thread each request's sync code runs in is kept for the next request (blindjudge/
request_threads.py), never while work given to it is unfinished, and never more than `keep`; the
judging loop's requests (paths under /s/) run their views at most `at_once` at a time, reads and
writes apart, and nothing else waits for them.

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
from django.views.decorators.csrf import csrf_exempt

from blindjudge.asgi import application, django_asgi_app
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


class Running:
    """How many `turn_view`s run now, and the most that ran at once."""

    def __init__(self):
        self.lock = threading.Lock()
        self.now = self.most = 0

    def enter(self):
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)

    def leave(self):
        with self.lock:
            self.now -= 1


running = Running()


@csrf_exempt  # a save's shape (POST) without a form: the turn is what is tested
def turn_view(request):
    running.enter()
    try:
        let_go.wait(timeout=10)
    finally:
        running.leave()
    return HttpResponse(f"{thread_number()}")


urlpatterns = [path("thread", thread_view), path("wait", waiting_view),
               path("trailing", trailing_view), path("crossings", crossings_view),
               path("host/thread", thread_view),
               path("s/x/turn", turn_view), path("s/x/thread", thread_view),
               path("s/x/save", csrf_exempt(thread_view))]
in_this_module = override_settings(ROOT_URLCONF=__name__, ALLOWED_HOSTS=["testserver"])


def scope(route: str, method: str = "GET") -> dict:
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
            "scheme": "http", "path": f"/{route}", "raw_path": f"/{route}".encode(),
            "query_string": b"", "root_path": "", "headers": [(b"host", b"testserver")],
            "client": ("127.0.0.1", 40000), "server": ("testserver", 80)}


async def request(app, route: str, *, disconnect: asyncio.Event | None = None, method="GET",
                  reading: asyncio.Event | None = None, uploading: asyncio.Event | None = None):
    """(status, body) of one request; with `disconnect`, the client goes away when it is set;
    with `reading`, the client takes the answer's body only once it is set; with `uploading`,
    the request's body ends only once it is set (slow clients)."""
    sent = []

    # The body's parts: (bytes, more to come, what the client waits for before sending them).
    parts = [(b"a=", True, None), (b"1", False, uploading)] if uploading else [(b"", False, None)]

    async def receive():
        if parts:
            body, more, first = parts.pop(0)
            if first is not None:
                await first.wait()
            return {"type": "http.request", "body": body, "more_body": more}
        await (disconnect.wait() if disconnect else asyncio.Event().wait())
        return {"type": "http.disconnect"}

    async def send(message):
        if reading is not None and message["type"] == "http.response.body":
            await reading.wait()
        sent.append(message)

    await app(scope(route, method), receive, send)
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


async def until(condition, seconds=5.0):
    for _ in range(int(seconds / 0.01)):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("not within the time")


@pytest.fixture
def turns():
    """A clean count of running views; whatever a test leaves waiting is let go at its end."""
    global running
    running = Running()
    let_go.clear()
    yield running
    let_go.set()


async def held_back(task, seconds=0.3) -> bool:
    """Whether `task` is still unanswered after a while (it waits for a turn)."""
    await asyncio.sleep(seconds)
    return not task.done()


@in_this_module
@pytest.mark.parametrize(("at_once", "most"), [(2, 2), (0, 5)])
async def test_judge_requests_run_their_views_at_most_at_once_at_a_time(turns, at_once, most):
    # at_once=0, no turns, is the control: all five views run at once, which the count can see.
    app = KeptThreadsASGIHandler(at_once=at_once)
    burst = [asyncio.create_task(request(app, "s/x/turn")) for _ in range(5)]
    await until(lambda: turns.now == most)
    await asyncio.sleep(0.2)
    assert turns.now == most  # the others wait their turn
    let_go.set()
    answers = await asyncio.wait_for(asyncio.gather(*burst), 10)
    assert [status for status, _ in answers] == [200] * 5
    assert turns.most == most


@in_this_module
async def test_reads_and_writes_take_turns_apart(turns):
    app = KeptThreadsASGIHandler(at_once=1)
    save = asyncio.create_task(request(app, "s/x/turn", method="POST"))
    await until(lambda: turns.now == 1)
    # A page is not held up by a save (waiting, say, for SQLite's write lock)...
    status, _ = await asyncio.wait_for(request(app, "s/x/thread"), 5)
    assert status == 200
    # ...while a second save waits for the first.
    second = asyncio.create_task(request(app, "s/x/turn", method="POST"))
    assert await held_back(second)
    assert turns.now == 1
    let_go.set()
    for answer in await asyncio.wait_for(asyncio.gather(save, second), 10):
        assert answer[0] == 200
    assert turns.most == 1


@in_this_module
async def test_only_the_judging_loop_takes_turns(turns):
    app = KeptThreadsASGIHandler(at_once=1)
    busy = asyncio.create_task(request(app, "s/x/turn"))
    await until(lambda: turns.now == 1)
    for route in ("thread", "host/thread"):  # the host's pages, sign-in, everything else
        status, _ = await asyncio.wait_for(request(app, route), 5)
        assert status == 200
    waiting_page = asyncio.create_task(request(app, "s/x/thread"))  # the control: this one waits
    assert await held_back(waiting_page)
    let_go.set()
    assert (await asyncio.wait_for(busy, 10))[0] == 200
    assert (await asyncio.wait_for(waiting_page, 10))[0] == 200


@in_this_module
async def test_a_slow_client_holds_no_turn_while_its_answer_is_sent(turns):
    app = KeptThreadsASGIHandler(at_once=1)
    reading = asyncio.Event()
    slow = asyncio.create_task(request(app, "s/x/thread", reading=reading))
    await asyncio.sleep(0.2)
    assert not slow.done()  # its view answered; the client has not taken the body
    status, _ = await asyncio.wait_for(request(app, "s/x/thread"), 5)
    assert status == 200
    reading.set()
    assert (await asyncio.wait_for(slow, 5))[0] == 200


@in_this_module
async def test_a_slow_upload_holds_no_turn_until_its_body_has_arrived(turns):
    app = KeptThreadsASGIHandler(at_once=1)
    uploading = asyncio.Event()
    slow = asyncio.create_task(request(app, "s/x/turn", method="POST", uploading=uploading))
    await asyncio.sleep(0.2)
    assert turns.now == 0 and not slow.done()  # its body is still coming
    status, _ = await asyncio.wait_for(request(app, "s/x/save", method="POST"), 5)
    assert status == 200  # a save whose body is in is not held up by it
    uploading.set()
    await until(lambda: turns.now == 1)  # now it has its turn, and its view runs
    let_go.set()
    assert (await asyncio.wait_for(slow, 5))[0] == 200


@in_this_module
async def test_a_gone_clients_view_holds_its_turn_until_it_returns(turns):
    app = KeptThreadsASGIHandler(at_once=1)
    gone = asyncio.Event()
    abandoned = asyncio.create_task(request(app, "s/x/turn", disconnect=gone))
    await until(lambda: turns.now == 1)
    gone.set()
    nextone = asyncio.create_task(request(app, "s/x/thread"))
    assert await held_back(nextone)  # the view still runs: one at a time holds
    let_go.set()
    assert (await asyncio.wait_for(nextone, 5))[0] == 200
    assert (await asyncio.wait_for(abandoned, 5))[0] is None


async def test_the_product_takes_turns_two_at_a_time_by_default():
    assert django_asgi_app.at_once == 2
