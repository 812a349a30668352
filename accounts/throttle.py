"""Fixed-window attempt counters kept in the database, so every server process shares them.

Per-process memory would let an attacker multiply their attempts by the number of processes, and
a restart would forget them; the database is the one store every process of every deployment
(embedded or scaled out) has, and it outlives restarts. Expired rows are purged by `manage.py
purge_expired` (the systemd timer, `./bj start`).

Every limit counts first and decides after (`take`): a check before the count lets requests
sent at once all through. Host sign-in (`sign_in_begin`, then `sign_in_failed` or
`sign_in_succeeded`, and `sign_in_end`, called by the sign-in form through accounts.adapters)
counts wrong passwords per client address and per (username, address), each refusing for the
rest of its window; a sign-in under way counts as wrong until it succeeds. Per username alone,
across addresses, a count may only slow guessing, never lock the account's owner out: once a
username has had many wrong passwords, an address that has just failed for it waits a short
while before its next try, and an address that has not failed for it (the owner on their own
network) is never held back by it.
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
BUSY_REFUSAL = ("Too many sign-ins from your network are under way at once. Try again in a "
                "moment.")
# A sign-in under way is counted for this long at most: one whose process died mid-way stops
# holding a place after it.
BUSY_WINDOW_SECONDS = 60
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
    with transaction.atomic():
        _count_one(key, now, now - timedelta(seconds=window_seconds))


def _count_one(key: str, now, cutoff) -> None:
    # Each step names the row it means (in the window, or past it), so a row another request
    # created or renewed a moment ago is counted on, never reset: under PostgreSQL's READ
    # COMMITTED a statement sees rows committed before it started, the next one those after.
    for _ in range(3):
        if Throttle.objects.filter(key=key, window_start__gt=cutoff).update(count=F("count") + 1):
            return
        if Throttle.objects.filter(key=key, window_start__lte=cutoff).update(window_start=now,
                                                                           count=1):
            return
        try:
            with transaction.atomic():
                Throttle.objects.create(key=key, window_start=now, count=1)
            return
        except IntegrityError:
            continue  # another request created the row between our steps: count on it
    raise RuntimeError(f"could not count an attempt against {key!r}")


def take(key: str, *, limit: int, window_seconds: int) -> int:
    """Count one attempt against `key` first, then decide: 0 when it is within `limit` (itself
    included), else the seconds until the window ends.

    Counting first is what makes a limit hold against requests sent at once: a check before the
    count lets every one of them through before any is counted. The count and the read that
    decides are one transaction, and the count's write holds the row (PostgreSQL's row lock,
    SQLite's one write lock) until it commits, so every attempt sees a count that includes each
    attempt before it and none after. Inside a caller's transaction it commits (or rolls back)
    with it.
    """
    now = timezone.now()
    with transaction.atomic():
        _count_one(key, now, now - timedelta(seconds=window_seconds))
        count, start = Throttle.objects.filter(key=key).values_list("count", "window_start").get()
    if count <= limit:
        return 0
    return max(1, math.ceil((start + timedelta(seconds=window_seconds) - now).total_seconds()))


def give_back(key: str, *, window_seconds: int) -> None:
    """Take back one attempt `take` counted (it turned out right: a password, a guest code), in
    the same window only; a count never goes below zero."""
    cutoff = timezone.now() - timedelta(seconds=window_seconds)
    Throttle.objects.filter(key=key, window_start__gt=cutoff, count__gt=0).update(
        count=F("count") - 1)


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
            "username": f"sign-in:username:{user}", "slow": f"sign-in:slow:{user}:{network}",
            "busy": f"sign-in:busy:{network}"}


def _wait(seconds: int) -> str:
    if seconds < 90:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    minutes = math.ceil(seconds / 60)
    return f"{minutes} minutes"


def sign_in_begin(*, username: str, address: str) -> str | None:
    """Start a host sign-in from `address` for `username`: why it is not tried now (a message
    naming the wait), or None, and then it counts.

    Counted before it is decided, and before the password is checked: a sign-in under way counts
    as a wrong password, per address and per (username, address), until `sign_in_succeeded`
    takes it back, so a hundred sent at once are refused past the limits as surely as a hundred
    sent one by one. At most BLINDJUDGE_SIGNIN_CONCURRENT sign-ins from one address are under
    way at once (each ends with `sign_in_end`, whatever the outcome): the rest are refused before
    any password is hashed. A refusal is decided before the password is checked, so it says
    nothing about it.
    """
    keys, window = _keys(username, address), settings.BLINDJUDGE_SIGNIN_WINDOW_SECONDS
    taken = [("busy", BUSY_WINDOW_SECONDS)]
    refusal = None
    if take(keys["busy"], limit=settings.BLINDJUDGE_SIGNIN_CONCURRENT,
            window_seconds=BUSY_WINDOW_SECONDS):
        refusal = BUSY_REFUSAL
    elif wait := _taken(taken, keys, "address", settings.BLINDJUDGE_SIGNIN_ADDRESS_FAILURES, window):
        refusal = ADDRESS_REFUSAL.format(wait=_wait(wait))
    elif wait := _taken(taken, keys, "pair", settings.BLINDJUDGE_SIGNIN_FAILURES, window):
        refusal = PAIR_REFUSAL.format(wait=_wait(wait))
    else:
        refusal = _slowed(keys, window)
    if refusal:
        # Not tried, so not a wrong password: its counts go back (after deciding, so a sign-in
        # sent at the same moment saw them and was held to the limit).
        for name, seconds in taken:
            give_back(keys[name], window_seconds=seconds)
    return refusal


def _taken(taken: list, keys: dict, name: str, limit: int, window: int) -> int:
    taken.append((name, window))
    return take(keys[name], limit=limit, window_seconds=window)


def _slowed(keys: dict, window: int) -> str | None:
    if exceeded(keys["username"], limit=settings.BLINDJUDGE_SIGNIN_USERNAME_SLOW_AFTER,
                window_seconds=window):
        # Only a network that has itself just failed for this username waits, and only briefly.
        if wait := seconds_left(keys["slow"], limit=1,
                                window_seconds=settings.BLINDJUDGE_SIGNIN_SLOW_SECONDS):
            return SLOW_REFUSAL.format(wait=_wait(wait))
    return None


def sign_in_failed(*, username: str, address: str) -> None:
    """A wrong password (or unknown username) from `address`: its address and pair counts were
    taken when it began; the username's own count (which only slows) and the slow mark now."""
    keys, window = _keys(username, address), settings.BLINDJUDGE_SIGNIN_WINDOW_SECONDS
    hit(keys["username"], window_seconds=window)
    hit(keys["slow"], window_seconds=settings.BLINDJUDGE_SIGNIN_SLOW_SECONDS)


def sign_in_succeeded(*, username: str, address: str) -> None:
    """The right password: the attempt `sign_in_begin` counted as wrong is taken back."""
    keys, window = _keys(username, address), settings.BLINDJUDGE_SIGNIN_WINDOW_SECONDS
    for name in ("address", "pair"):
        give_back(keys[name], window_seconds=window)


def sign_in_end(*, username: str, address: str) -> None:
    """A sign-in `sign_in_begin` let through is over, whatever its outcome."""
    give_back(_keys(username, address)["busy"], window_seconds=BUSY_WINDOW_SECONDS)
