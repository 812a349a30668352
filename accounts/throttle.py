"""Fixed-window attempt counters kept in the database, so every server process shares them.

Per-process memory would let an attacker multiply their attempts by the number of processes, and
a restart would forget them; the database is the one store every process of every deployment
(embedded or scaled out) has, and it outlives restarts. Expired rows are purged by `manage.py
purge_expired` (the systemd timer, `./bj start`).

Host sign-in (`sign_in_refusal`, `sign_in_failed`, called by the sign-in form through
accounts.adapters) counts wrong passwords per client address and per (username, address), each
refusing for the rest of its window. Per username alone, across addresses, a count may only slow
guessing, never lock the account's owner out: once a username has had many wrong passwords, an
address that has just failed for it waits a short while before its next try, and an address
that has not failed for it (the owner on their own network) is never held back by it.
"""

import hashlib
import ipaddress
import math
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from accounts.models import Throttle

# Refusals name the wait; they are the same whether or not the username exists.
ADDRESS_REFUSAL = ("Too many failed sign-ins from your network. Try again in {wait}.")
PAIR_REFUSAL = ("Too many wrong passwords for this username from your network. "
                "Try again in {wait}.")
SLOW_REFUSAL = ("This username has had many wrong passwords recently, so each network that has "
                "just got it wrong waits a little between tries: try again in {wait}.")


def exceeded(key: str, *, limit: int, window_seconds: int) -> bool:
    """Whether `key` has used up its `limit` attempts in the current window."""
    return seconds_left(key, limit=limit, window_seconds=window_seconds) > 0


def seconds_left(key: str, *, limit: int, window_seconds: int) -> int:
    """Seconds until `key`'s current window ends if it has used up its `limit` in it, else 0."""
    now = timezone.now()
    row = (Throttle.objects.filter(key=key, window_start__gt=now - timedelta(seconds=window_seconds),
                                   count__gte=limit).values_list("window_start", flat=True).first())
    if row is None:
        return 0
    return max(1, math.ceil((row + timedelta(seconds=window_seconds) - now).total_seconds()))


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


def purge_expired(*, older_than_seconds: int) -> int:
    """Delete counters whose window started more than `older_than_seconds` ago (longer than any
    window in use, so no live count is lost). Returns how many were deleted."""
    cutoff = timezone.now() - timedelta(seconds=older_than_seconds)
    return Throttle.objects.filter(window_start__lt=cutoff).delete()[0]


def network_of(address: str) -> str:
    """The unit an address is counted as: an IPv4 address itself, an IPv6 address's /64 (one
    subscriber usually holds a whole /64, and could otherwise count from zero 2^64 times)."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address or "unknown"
    if parsed.version == 6:
        if parsed.ipv4_mapped:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.IPv6Network(f"{parsed}/64", strict=False).network_address) + "/64"
    return str(parsed)


def _username_digest(username: str) -> str:
    # Usernames are compared without case at sign-in; stored as a digest, never as typed.
    return hashlib.sha256(username.strip().lower().encode("utf-8")).hexdigest()


def _keys(username: str, address: str) -> dict[str, str]:
    network, user = network_of(address), _username_digest(username)
    return {"address": f"sign-in:address:{network}", "pair": f"sign-in:pair:{user}:{network}",
            "username": f"sign-in:username:{user}", "slow": f"sign-in:slow:{user}:{network}"}


def _wait(seconds: int) -> str:
    if seconds < 90:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    minutes = math.ceil(seconds / 60)
    return f"{minutes} minutes"


def sign_in_refusal(*, username: str, address: str) -> str | None:
    """Why a host sign-in from `address` for `username` is not tried now (a message naming the
    wait), or None. Decided before the password is checked, so a refusal says nothing about it."""
    keys, window = _keys(username, address), settings.BLINDJUDGE_SIGNIN_WINDOW_SECONDS
    if wait := seconds_left(keys["address"], limit=settings.BLINDJUDGE_SIGNIN_ADDRESS_FAILURES,
                            window_seconds=window):
        return ADDRESS_REFUSAL.format(wait=_wait(wait))
    if wait := seconds_left(keys["pair"], limit=settings.BLINDJUDGE_SIGNIN_FAILURES,
                            window_seconds=window):
        return PAIR_REFUSAL.format(wait=_wait(wait))
    if exceeded(keys["username"], limit=settings.BLINDJUDGE_SIGNIN_USERNAME_SLOW_AFTER,
                window_seconds=window):
        # Only a network that has itself just failed for this username waits, and only briefly.
        if wait := seconds_left(keys["slow"], limit=1,
                                window_seconds=settings.BLINDJUDGE_SIGNIN_SLOW_SECONDS):
            return SLOW_REFUSAL.format(wait=_wait(wait))
    return None


def sign_in_failed(*, username: str, address: str) -> None:
    """A wrong password (or unknown username) from `address`: counted on every key."""
    keys, window = _keys(username, address), settings.BLINDJUDGE_SIGNIN_WINDOW_SECONDS
    for name in ("address", "pair", "username"):
        hit(keys[name], window_seconds=window)
    hit(keys["slow"], window_seconds=settings.BLINDJUDGE_SIGNIN_SLOW_SECONDS)
