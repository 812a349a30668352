"""Fixed-window attempt counters kept in the database, so every server process shares them.

Per-process memory would let an attacker multiply their attempts by the number of processes;
the database is the one store every process of every deployment (embedded or scaled out) has.
"""

from datetime import timedelta

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import Throttle


def exceeded(key: str, *, limit: int, window_seconds: int) -> bool:
    """Whether `key` has used up its `limit` attempts in the current window."""
    cutoff = timezone.now() - timedelta(seconds=window_seconds)
    return Throttle.objects.filter(key=key, window_start__gt=cutoff, count__gte=limit).exists()


def hit(key: str, *, window_seconds: int) -> None:
    """Count one attempt against `key`, starting a new window when the last one has passed.

    Runs in its own transaction so the count survives the refusal that usually follows it.
    """
    now = timezone.now()
    cutoff = now - timedelta(seconds=window_seconds)
    with transaction.atomic():
        if Throttle.objects.filter(key=key, window_start__gt=cutoff).update(count=F("count") + 1):
            return
        if Throttle.objects.filter(key=key).update(window_start=now, count=1):
            return
        try:
            with transaction.atomic():
                Throttle.objects.create(key=key, window_start=now, count=1)
        except IntegrityError:
            # Another process created the row between our update and insert: count on it.
            Throttle.objects.filter(key=key).update(count=F("count") + 1)
