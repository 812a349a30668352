"""A judge's own live feed: their session's state and their own saves and locks, for every tab they
have open. Accepted only for the judge this browser was admitted as in the session the path names
(`accounts.guards.judge_held_by`); nothing of any other judge is ever sent.
"""

from accounts.guards import judge_held_by
from blindjudge.errors import NotFound
from judging import live
from judging.live_consumer import CLOSE_REMOVED, LiveConsumer, database_sync_to_async
from judging.selectors.judge import judge_live_state, judge_live_state_if_active
from judging.services import live_socket_close, live_socket_open, live_socket_seen


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
            return await self.gone()
        await self.send_json({"type": "pong"})

    async def on_refresh(self):
        state = await database_sync_to_async(self._state)()
        if state is None:
            return await self.gone()
        await self.send_json(state)

    def _state(self):
        # Re-checked against this browser's binding: a session whose resume links were reissued
        # or revoked since the socket opened gets nothing more.
        judge = self._held_judge()
        return judge_live_state(judge) if judge is not None else None

    def _still_active(self):
        return judge_live_state_if_active(self.judge.pk) is not None

    async def gone(self):
        """This browser no longer holds the judge: removed, or its links reissued or revoked."""
        if await database_sync_to_async(self._still_active)():
            return await self.ended()
        return await self.removed()

    async def removed(self):
        await self.send_json({"type": "removed"})
        await self.refuse(CLOSE_REMOVED)

    async def ended(self):
        # The same close code as removal: the client must not reconnect (it would be refused).
        await self.send_json({"type": "ended"})
        await self.refuse(CLOSE_REMOVED)

    async def live_event(self, message):
        event = message["event"]
        if event.get("type") == "removed":
            return await self.removed()
        if event.get("type") == "credentials":  # links reissued or revoked: is this browser's still good?
            if await database_sync_to_async(self._held_judge)() is None:
                return await self.gone()
            return None
        await self.send_json(event)

    async def forget(self):
        await super().forget()
        judge, self.judge = self.judge, None
        if judge is not None:
            await database_sync_to_async(live_socket_close)(judge=judge, channel_name=self.channel_name)
