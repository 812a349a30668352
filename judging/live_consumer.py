"""What both live feeds share: the frame limits, close codes and database calls of a websocket
consumer. The host's dashboard consumer is in host/consumers.py, the judge's in judge/consumers.py.

Guards first, as in views: a socket is accepted only for the host who owns the session or for the
judge this browser was admitted as. Which groups a socket joins is decided by the consumer from
that check alone: a client never names a group. A client may send only `{"type": "ping"}` and
`{"type": "refresh"}`; anything else (binary, oversized, not JSON, another shape) or too many
frames closes the socket.
"""

import contextvars
import json
import time

from asgiref.sync import sync_to_async
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncWebsocketConsumer
from django.db import connections


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

# Close codes of a socket that was accepted: all in 4000-4999, the range RFC 6455 leaves to the
# application, which every server sends as given (Daphne refused 1003/1007/1009 with an exception,
# a 1011 and a traceback). The last three digits echo the RFC's or HTTP's code of the same meaning.
# A socket that may not exist for this client is refused at the handshake instead (HTTP 403).
CLOSE_UNSUPPORTED = 4003  # a binary frame
CLOSE_BAD_DATA = 4007  # not JSON
CLOSE_POLICY = 4008  # a frame of another shape, or a flood
CLOSE_TOO_BIG = 4009
CLOSE_REMOVED = 4403  # the judge was removed: the client must not reconnect
CLOSE_TOO_MANY = 4429  # too many sockets opened from this address (blindjudge/asgi.py): wait


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
        # Once: a removal's event and the socket's own check (at a ping) can both find the judge
        # gone, and a second close is an error to the server (Uvicorn raises on it).
        if self.closing:
            return
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


class NoSuchSocket(AsyncWebsocketConsumer):
    """Any other websocket path: refused at the handshake, like a URL that does not exist."""
    async def connect(self):
        await self.close()
