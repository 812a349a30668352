"""The host's live dashboard of a session over a websocket: counts and states, never verdict values.

Accepted only for the host who owns the session (`accounts.guards.host_of` on the socket's user);
each judge's row comes from host/judge_rows.py, as on the progress page: its data and its HTML.
"""

import asyncio

from accounts.guards import host_of
from blindjudge.errors import NotFound
from host.judge_rows import judge_rows_each
from judging import live
from judging.live_consumer import LiveConsumer, database_sync_to_async
from judging.selectors.host import session_for_host
from judging.selectors.live import live_totals


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
        state, rows = judge_rows_each(self.session_id)
        live = [row["judge"] for row in rows]
        return {"type": "snapshot", "state": state, "totals": live_totals(live),
                "judges": live, "html": [row["html"] for row in rows]}

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
            _, rows = await database_sync_to_async(judge_rows_each)(self.session_id, judges)
            for row in rows:
                await self.send_json({"type": "judge", "judge": row["judge"], "html": row["html"]})

    async def forget(self):
        flushing, self.flushing = getattr(self, "flushing", None), None
        if flushing is not None:
            flushing.cancel()
        await super().forget()
