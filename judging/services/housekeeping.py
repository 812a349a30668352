"""Housekeeping: deleting rows that have expired, so tables of one-off records do not grow forever.

Run by `manage.py purge_expired`: daily by the shipped systemd timer
(deploy/systemd/blindjudge-purge.timer) and at every `./bj start`.
"""

from dataclasses import dataclass
from datetime import timedelta
from importlib import import_module

from django.conf import settings
from django.contrib.sessions.models import Session
from django.utils import timezone

from accounts import throttle
from judging.models import LiveSocket

# Attempt counters are kept this long after their window started: longer than any window in use
# (the longest configured, and at least a day, for counters whose windows are not settings).
COUNTER_DAYS = 1
# A socket row whose client has not pinged for a day belongs to a process killed long ago.
SOCKET_DAYS = 1


@dataclass(frozen=True)
class Purged:
    sessions: int
    counters: int
    sockets: int


def expired_purge() -> Purged:
    """Delete browser sessions past their expiry (what Django's `clearsessions` does: a signed-out
    or abandoned session's row otherwise stays for ever), attempt counters whose window is long
    over, and live-socket rows a killed process left behind. Live rows are never touched: a
    session not yet expired, a counter in its window, a socket that pinged today.

    Side effects: deletes those rows; nothing else changes.
    """
    now = timezone.now()
    if settings.SESSION_ENGINE in ("django.contrib.sessions.backends.db", "blindjudge.sessions"):
        sessions = Session.objects.filter(expire_date__lt=now).delete()[0]
    else:  # another session store: its own way of clearing (Django's clearsessions)
        import_module(settings.SESSION_ENGINE).SessionStore.clear_expired()
        sessions = 0
    longest = max(settings.BLINDJUDGE_GUEST_WINDOW_SECONDS, settings.BLINDJUDGE_SIGNIN_WINDOW_SECONDS,
                  settings.BLINDJUDGE_SIGNIN_SLOW_SECONDS, COUNTER_DAYS * 86400)
    counters = throttle.purge_expired(older_than_seconds=longest)
    sockets = LiveSocket.objects.filter(seen_at__lt=now - timedelta(days=SOCKET_DAYS)).delete()[0]
    return Purged(sessions=sessions, counters=counters, sockets=sockets)
