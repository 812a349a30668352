"""Live events: what services tell open websockets after their transaction commits.

Services call the functions below inside their transaction; each registers a
`transaction.on_commit` callback, so an event is sent only for a change that is in the database,
never for one that rolled back, and never from a view or a signal. The callback builds the event
from the committed rows (so it carries the state as it is, not as the service guessed it) and
sends it over the channel layer: in memory on the embedded default (one process), Redis when
`REDIS_URL` is set (every process sees it).

Events are hints: a page that misses one (socket down, Redis restarting, a process killed)
re-reads its state when it reconnects, so correctness never depends on an event arriving. A
failure to send is logged and swallowed: it must never undo or fail a committed change.

Groups (names never reach a client):
- `host.session.<pk>`: the host's dashboard of one session: which judge changed (the consumer
  then sends that judge's row of counts and states) and the session's state.
- `judges.session.<pk>`: every judge socket of the session; only the session's state.
- `judge.<pk>`: one judge's sockets (all their tabs); only that judge's own events.
- `host.user.<pk>`: every host dashboard socket of one user account (all tabs, all browsers);
  only "signed out", at sign-out and at a password change.
"""

import asyncio
import logging

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

logger = logging.getLogger(__name__)

# A socket whose client has not pinged for this long no longer counts as connected (its process
# may have been killed without closing it). Clients ping every PING_SECONDS.
PING_SECONDS = 25
STALE_SECONDS = 70


def host_group(session_id: int) -> str:
    return f"host.session.{session_id}"


def judges_group(session_id: int) -> str:
    return f"judges.session.{session_id}"


def judge_group(judge_id: int) -> str:
    return f"judge.{judge_id}"


def host_user_group(user_id: int) -> str:
    return f"host.user.{user_id}"


def _after_commit(build):
    """Run `build()` after the current transaction commits and send the (group, event) pairs it
    returns."""

    def send():
        try:
            messages = build()
            if not messages:
                return
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                async_to_sync(_send_all)(messages)  # the usual case: a sync thread
            else:
                # Called from code running inside an event loop's own thread (no sync_to_async
                # between): hand the sending to that loop instead of blocking it.
                loop.create_task(_send_all(messages))
        except Exception:  # an event is a hint: the committed change stands whatever happens here
            logger.exception("live event not sent; clients catch up when they reconnect")

    transaction.on_commit(send)


async def _send_all(messages):
    layer = get_channel_layer()
    if layer is None:
        return
    for group, event in messages:
        await layer.group_send(group, {"type": "live.event", "event": event})


def _host_row(session_id: int, judge_id: int):
    # Only which judge changed: the host's consumer reads the row when the event reaches it. Two
    # changes of one judge committed close together (a socket closing as the next page's opens)
    # may have their events sent in either order; a row read on delivery is never older than
    # the last event delivered, where a row read at sending could be.
    return [(host_group(session_id), {"type": "judge.changed", "judge": judge_id})]


def judge_changed(judge):
    """A judge joined, answered a new item, was erased, or connected or disconnected: the host's
    dashboard gets the judge's row as committed."""
    session_id, judge_id = judge.session_id, judge.pk
    _after_commit(lambda: _host_row(session_id, judge_id))


def verdict_saved(judge, *, code: str, phase: int, new: bool):
    """A verdict was saved: the judge's other tabs learn which item and phase (no value); the host's
    dashboard gets the new counts when an item got its first verdict in the phase."""
    session_id, judge_id = judge.session_id, judge.pk

    def build():
        messages = [(judge_group(judge_id), {"type": "saved", "code": code, "phase": phase})]
        return messages + (_host_row(session_id, judge_id) if new else [])

    _after_commit(build)


def judge_locked(judge, *, phase: int):
    session_id, judge_id = judge.session_id, judge.pk
    _after_commit(lambda: [(judge_group(judge_id), {"type": "locked", "phase": phase}),
                           *_host_row(session_id, judge_id)])


def judge_removed(judge):
    """The judge's sockets are told and closed at once; the host's dashboard gets the row."""
    session_id, judge_id = judge.session_id, judge.pk
    _after_commit(lambda: [(judge_group(judge_id), {"type": "removed"}),
                           *_host_row(session_id, judge_id)])


def host_signed_out(user_id: int):
    """The account signed out or changed its password: its host sockets are told and closed."""
    _after_commit(lambda: [(host_user_group(user_id), {"type": "signed_out"})])


def judge_credentials_ended(judge):
    """The judge's resume links were reissued or revoked: every socket of theirs re-checks its
    browser's binding and closes when it no longer admits (judge/consumers.py)."""
    judge_id = judge.pk
    _after_commit(lambda: [(judge_group(judge_id), {"type": "credentials"})])


def session_state_changed(session):
    session_id, state = session.pk, session.state
    event = {"type": "session", "state": state}
    _after_commit(lambda: [(judges_group(session_id), event), (host_group(session_id), event)])
