"""The host's live dashboard of a session over a websocket: counts and states, never verdict values.

Accepted only for the host who owns the session (`accounts.guards.host_of` on the socket's user);
each judge's row comes from host/judge_rows.py, as on the progress page: its data and its HTML.
The socket outlives no sign-in: sign-out and a password change close it (the "signed out" event,
judging.services.host_sockets_close), and each `ping` and `refresh` re-reads the browser session
from the store first (still signed in, as the same account, with the same password, still this
session's host), so a socket that missed the event is closed at its next frame. The server also
re-reads it every BLINDJUDGE_HOST_SOCKET_RECHECK_SECONDS (30) and before sending any event, so a
socket that never sends a frame cannot outlive it either, and closes a socket that has sent none
for BLINDJUDGE_HOST_SOCKET_IDLE_SECONDS (70, the live feeds' stale limit).
"""

import asyncio
import time
from importlib import import_module
from types import SimpleNamespace

from django.conf import settings
from django.contrib.auth import HASH_SESSION_KEY, get_user

from accounts.guards import host_of
from blindjudge.errors import NotFound
from host.judge_rows import judge_rows_each
from judging import live
from judging.live_consumer import CLOSE_REMOVED, LiveConsumer, database_sync_to_async
from judging.selectors.host import session_for_host
from judging.selectors.live import session_totals

# The client stops reconnecting (static/live/socket.js) and says the page is no longer live.
CLOSE_SIGNED_OUT = CLOSE_REMOVED
# A socket that sent no frame for BLINDJUDGE_HOST_SOCKET_IDLE_SECONDS (HTTP's 408); the client
# reconnects when it wakes.
CLOSE_IDLE = 4408


class HostLiveConsumer(LiveConsumer):
    """`/ws/host/sessions/<id>/`: the host's dashboard of one of their own sessions."""
    async def connect(self):
        session = await database_sync_to_async(self._owned_session)()
        if session is None:
            return await self.close()  # before accept: the handshake is refused, nothing sent
        self.session_id = session.pk
        self.changed_judges: set[int] = set()
        self.flushing = None
        user = self.scope["user"]
        browser_session = self.scope["session"]
        self.signed_in_as = (browser_session.session_key, user.pk,
                             browser_session.get(HASH_SESSION_KEY))
        await self.join_groups([live.host_group(session.pk), live.host_user_group(user.pk)])
        self.last_frame_at = self.checked_at = time.monotonic()
        await self.accept()
        await self.on_refresh()
        # The server checks the sign-in on its own schedule too: a socket that never pings, on a
        # channel layer the "signed out" event cannot cross (the in-memory one, another process),
        # still ends with its sign-in (issue 25 item 6).
        self.watching = asyncio.ensure_future(self.watch_sign_in())

    async def watch_sign_in(self):
        every = settings.BLINDJUDGE_HOST_SOCKET_RECHECK_SECONDS
        idle = settings.BLINDJUDGE_HOST_SOCKET_IDLE_SECONDS
        while not self.closing:
            await asyncio.sleep(min(every, idle))
            if self.closing:
                return
            if time.monotonic() - self.last_frame_at > idle:
                # A client pings every live.PING_SECONDS: one silent this long is gone or asleep;
                # it reconnects when it wakes (static/live/socket.js), signed in or not.
                return await self.refuse(CLOSE_IDLE)
            if (time.monotonic() - self.checked_at >= every
                    and not await database_sync_to_async(self._still_signed_in)()):
                return await self.signed_out()

    async def receive(self, text_data=None, bytes_data=None):
        self.last_frame_at = time.monotonic()
        await super().receive(text_data=text_data, bytes_data=bytes_data)

    def _owned_session(self, user=None):
        host = host_of(user if user is not None else self.scope.get("user"))
        if host is None:
            return None
        try:
            return session_for_host(host=host, session_id=self.scope["url_route"]["kwargs"]["session_id"])
        except NotFound:
            return None

    def _still_signed_in(self) -> bool:
        """The browser session this socket opened with, read again from the session store: still
        signed in to the same account with the same password hash (Django's `get_user` checks it
        against the account's password), and that account still hosts this session."""
        self.checked_at = time.monotonic()
        session_key, user_id, auth_hash = self.signed_in_as
        store = import_module(settings.SESSION_ENGINE).SessionStore(session_key=session_key)
        user = get_user(SimpleNamespace(session=store))
        return (user.is_authenticated and user.pk == user_id
                and store.get(HASH_SESSION_KEY) == auth_hash
                and self._owned_session(user) is not None)

    async def signed_out(self):
        await self.send_json({"type": "signed_out"})
        await self.refuse(CLOSE_SIGNED_OUT)

    async def on_ping(self):
        if not await database_sync_to_async(self._still_signed_in)():
            return await self.signed_out()
        await self.send_json({"type": "pong"})

    async def on_refresh(self):
        if not await database_sync_to_async(self._still_signed_in)():
            return await self.signed_out()
        await self.send_json(await database_sync_to_async(self._snapshot)())

    def _snapshot(self):
        state, rows = judge_rows_each(self.session_id)
        return {"type": "snapshot", "state": state, "totals": session_totals(self.session_id),
                "judges": [row["judge"] for row in rows], "html": [row["html"] for row in rows]}

    def _changed_rows(self, judge_pks) -> tuple[list[dict], dict]:
        _, rows = judge_rows_each(self.session_id, judge_pks)
        return rows, session_totals(self.session_id)

    async def live_event(self, message):
        event = message["event"]
        if event.get("type") == "signed_out":
            return await self.signed_out()
        if event.get("type") == "judge.changed":
            # Rows are read while further events queue up; those are then read together, once.
            self.changed_judges.add(event["judge"])
            if self.flushing is None or self.flushing.done():
                self.flushing = asyncio.ensure_future(self.send_changed_rows())
            return
        if await self.still_signed_in_or_closed():
            await self.send_json(event)

    async def still_signed_in_or_closed(self) -> bool:
        """Nothing is sent on a sign-in that no longer holds, whatever the schedule says: read
        again before each send (a batch of judges' rows is one send), else the socket closes."""
        if await database_sync_to_async(self._still_signed_in)():
            return True
        await self.signed_out()
        return False

    async def send_changed_rows(self):
        while self.changed_judges and not self.closing:
            if not await self.still_signed_in_or_closed():
                return
            judges, self.changed_judges = self.changed_judges, set()
            rows, totals = await database_sync_to_async(self._changed_rows)(judges)
            for row in rows:
                await self.send_json({"type": "judge", "judge": row["judge"], "html": row["html"],
                                      "totals": totals})

    async def forget(self):
        for name in ("flushing", "watching"):
            task = getattr(self, name, None)
            setattr(self, name, None)
            if task is not None and task is not asyncio.current_task():
                task.cancel()
        await super().forget()
