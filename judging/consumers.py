"""Websocket consumers: the host's live dashboard of a session, and a judge's own feed.

Guards first, as in views: a socket is accepted only for the host who owns the session (the
signed-in user, `accounts.guards.host_of`) or for the judge this browser was admitted as in the
session the path names (`accounts.guards.judge_held_by`). Everyone else is refused at the
handshake with nothing sent. Which groups a socket joins is decided here from that check alone:
a client never names a group, so it cannot subscribe to another judge's or session's events.

What the sockets carry comes from the selectors and `judging.live`: the host's rows hold counts
and states, never verdict values; a judge's frames hold their own session's state and their own
events. A client may send only `{"type": "ping"}` and `{"type": "refresh"}`; anything else
(binary, oversized, not JSON, another shape) or too many frames closes the socket. Changes go
through services, like every view.
"""

import asyncio
import contextvars
import json
import time

from asgiref.sync import sync_to_async
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncWebsocketConsumer
from django.db import connections

from accounts.guards import host_of, judge_held_by
from accounts.models import Judge, JudgeStatus
from blindjudge.errors import NotFound
from judging import live
from judging.selectors.host import session_for_host
from judging.selectors.judge import judge_live_state
from judging.selectors.live import live_judge_rows, live_totals
from judging.services import live_socket_close, live_socket_open, live_socket_seen


def database_sync_to_async(func):
    """`func` (database work) in a worker thread, side by side with other sockets' calls, on
    database connections of its own that are closed (or back in the pool) when it returns.

    Not Channels' `database_sync_to_async`: its "thread sensitive" calls of every socket of a
    process queue for one thread. And not simply its `thread_sensitive=False` form: Django keeps
    connections in a context-local, and asgiref carries the caller's context into the worker
    thread, so two calls made from one task (a consumer and the task it spawned, a test and the
    consumer it drives) shared one connection object from two threads at once; with the
    PostgreSQL pool, connections went missing from it until it ran dry. Here each call runs in an
    empty context, so Django makes it connections no other call can see.
    """

    def in_own_context(*args, **kwargs):
        def call():
            try:
                return func(*args, **kwargs)
            finally:
                connections.close_all()

        return contextvars.Context().run(call)

    return sync_to_async(in_own_context, thread_sensitive=False)


MAX_FRAME_BYTES = 256  # the largest frame a client has reason to send is {"type": "refresh"}
FLOOD_FRAMES = 20  # frames allowed per FLOOD_SECONDS; a client pings every live.PING_SECONDS
FLOOD_SECONDS = 10

# Close codes (RFC 6455, and 4000-4999 for the application's own).
CLOSE_UNSUPPORTED = 1003  # a binary frame
CLOSE_BAD_DATA = 1007  # not JSON
CLOSE_POLICY = 1008  # a frame of another shape, or a flood
CLOSE_TOO_BIG = 1009
CLOSE_REMOVED = 4403  # the judge was removed: the client must not reconnect


class LiveConsumer(AsyncWebsocketConsumer):
    """Frame limits shared by both feeds. Subclasses define `on_<type>` for each allowed type."""

    allowed_types = frozenset({"ping", "refresh"})
    groups_joined: tuple = ()

    async def dispatch(self, message):
        # `disconnect` runs only when the server delivers the client's close. A client that hangs
        # up while the consumer is mid-work (a tab navigating away during the handshake) makes the
        # server's next `send` raise instead (Uvicorn's ClientDisconnected) and the consumer ends
        # without it, so what this socket recorded is forgotten here, as the error passes. Not in
        # a `finally` around the whole consumer: Channels' teardown first cancels the channel
        # layer's pending receive, and with channels_redis's list layer that cancellation could
        # wait until the process's next message arrived.
        try:
            await super().dispatch(message)
        except StopConsumer:
            raise
        except BaseException:
            await self.forget()
            raise

    async def websocket_connect(self, message):
        self.frame_times = []
        self.closing = False
        await super().websocket_connect(message)

    async def disconnect(self, code):
        await self.forget()

    async def forget(self):
        """Undo what this socket recorded; runs at least once however the socket ends, so it
        must be safe to run twice."""
        await self.leave_groups()

    async def receive(self, text_data=None, bytes_data=None):
        if self.closing:
            return
        if text_data is None:
            return await self.refuse(CLOSE_UNSUPPORTED)
        if len(text_data) > MAX_FRAME_BYTES or len(text_data.encode("utf-8")) > MAX_FRAME_BYTES:
            return await self.refuse(CLOSE_TOO_BIG)
        now = time.monotonic()
        self.frame_times = [t for t in self.frame_times if now - t < FLOOD_SECONDS] + [now]
        if len(self.frame_times) > FLOOD_FRAMES:
            return await self.refuse(CLOSE_POLICY)
        try:
            frame = json.loads(text_data)
        except ValueError:
            return await self.refuse(CLOSE_BAD_DATA)
        if (not isinstance(frame, dict) or set(frame) != {"type"}
                or frame["type"] not in self.allowed_types):
            return await self.refuse(CLOSE_POLICY)
        await getattr(self, f"on_{frame['type']}")()

    async def refuse(self, code: int):
        self.closing = True
        await self.close(code=code)

    async def send_json(self, payload: dict):
        if not self.closing:
            await self.send(text_data=json.dumps(payload, separators=(",", ":")))

    async def join_groups(self, groups):
        self.groups_joined = tuple(groups)
        for group in self.groups_joined:
            await self.channel_layer.group_add(group, self.channel_name)

    async def leave_groups(self):
        for group in self.groups_joined:
            await self.channel_layer.group_discard(group, self.channel_name)
        self.groups_joined = ()


class HostLiveConsumer(LiveConsumer):
    """`/ws/host/sessions/<id>/`: the host's dashboard of one of their own sessions."""

    async def connect(self):
        session = await database_sync_to_async(self._owned_session)()
        if session is None:
            return await self.close()  # before accept: the handshake is refused, nothing sent
        self.session_id = session.pk
        self.changed_judges: set[int] = set()
        self.flushing = None
        await self.join_groups([live.host_group(session.pk)])
        await self.accept()
        await self.on_refresh()

    def _owned_session(self):
        host = host_of(self.scope.get("user"))
        if host is None:
            return None
        try:
            return session_for_host(host=host, session_id=self.scope["url_route"]["kwargs"]["session_id"])
        except NotFound:
            return None

    async def on_ping(self):
        await self.send_json({"type": "pong"})

    async def on_refresh(self):
        await self.send_json(await database_sync_to_async(self._snapshot)())

    def _snapshot(self):
        from judging.models import Session

        state = Session.objects.filter(pk=self.session_id).values_list("state", flat=True).first()
        rows = live_judge_rows(self.session_id)
        return {"type": "snapshot", "state": state, "totals": live_totals(rows), "judges": rows}

    async def live_event(self, message):
        event = message["event"]
        if event.get("type") == "judge.changed":
            # Rows are read while further events queue up; those are then read together, once.
            self.changed_judges.add(event["judge"])
            if self.flushing is None or self.flushing.done():
                self.flushing = asyncio.ensure_future(self.send_changed_rows())
            return
        await self.send_json(event)

    async def send_changed_rows(self):
        while self.changed_judges and not self.closing:
            judges, self.changed_judges = self.changed_judges, set()
            for row in await database_sync_to_async(live_judge_rows)(self.session_id, judges):
                await self.send_json({"type": "judge", "judge": row})

    async def forget(self):
        flushing, self.flushing = getattr(self, "flushing", None), None
        if flushing is not None:
            flushing.cancel()
        await super().forget()


class JudgeLiveConsumer(LiveConsumer):
    """`/ws/s/<url_id>/`: one judge's own feed in the session the path names."""

    judge = None

    async def connect(self):
        judge = await database_sync_to_async(self._held_judge)()
        if judge is None:
            return await self.close()  # another judge's session, a removed judge, nobody
        await self.join_groups([live.judge_group(judge.pk), live.judges_group(judge.session_id)])
        try:
            self.judge = await database_sync_to_async(live_socket_open)(
                judge=judge, channel_name=self.channel_name)
        except NotFound:  # removed between the check and now
            await self.leave_groups()
            return await self.close()
        await self.accept()
        # Read after joining the groups: an event racing the snapshot is never lost, at worst
        # repeated by it.
        await self.on_refresh()

    def _held_judge(self):
        browser_session = self.scope.get("session")
        if browser_session is None:
            return None
        return judge_held_by(browser_session, self.scope["url_route"]["kwargs"]["url_id"])

    async def on_ping(self):
        if not await database_sync_to_async(live_socket_seen)(judge=self.judge,
                                                                channel_name=self.channel_name):
            return await self.removed()
        await self.send_json({"type": "pong"})

    async def on_refresh(self):
        state = await database_sync_to_async(self._state)()
        if state is None:
            return await self.removed()
        await self.send_json(state)

    def _state(self):
        judge = (Judge.objects.select_related("session")
                 .filter(pk=self.judge.pk, status=JudgeStatus.ACTIVE).first())
        return judge_live_state(judge) if judge else None

    async def removed(self):
        await self.send_json({"type": "removed"})
        await self.refuse(CLOSE_REMOVED)

    async def live_event(self, message):
        event = message["event"]
        if event.get("type") == "removed":
            return await self.removed()
        await self.send_json(event)

    async def forget(self):
        await super().forget()
        judge, self.judge = self.judge, None
        if judge is not None:
            await database_sync_to_async(live_socket_close)(judge=judge, channel_name=self.channel_name)


class NoSuchSocket(AsyncWebsocketConsumer):
    """Any other websocket path: refused at the handshake, like a URL that does not exist."""

    async def connect(self):
        await self.close()
