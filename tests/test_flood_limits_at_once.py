"""Every flood limit holds against requests sent at once (issue 25 item 3): a limit counts first,
atomically, then decides (accounts.throttle.take), never checks first and counts after.

The outside test sent 100 wrong passwords at once and all 100 were checked (limit 5), and 60
guest joins at once were all admitted (limit 30 an hour). Here the requests go through the pages
from threads, each with its own database connection, while the test holds the database's write
lock (SQLite's one lock; on PostgreSQL an exclusive lock on the counters' table, which lets reads
through): every request reaches the limit's code before any is counted — the moment the old
check-then-count lost — and the test then lets them all go. With count-first, each request's
count waits for the lock and sees every count before it.

Also: at most BLINDJUDGE_SIGNIN_CONCURRENT sign-ins from one address are under way at once, and a
password is never hashed while the request holds a pooled PostgreSQL connection.
"""

import threading
import time
from contextlib import contextmanager

import pytest
from django.contrib.auth.hashers import MD5PasswordHasher
from django.db import connection, connections, transaction
from django.test import Client, override_settings

from accounts import throttle
from accounts.enums import AdmittedAs
from accounts.models import Judge, Throttle
from judging.services import guests_configure
from tests.worlds import HOST_PASSWORD, a_run, a_session

pytestmark = pytest.mark.django_db(transaction=True)

ATTACKER = "203.0.113.9"
WRONG_PASSWORD_SHOWN = "The username and/or password you specified are not correct."
AT_ONCE = 12


@contextmanager
def counters_locked():
    """Hold what every count needs to write (and nothing a read needs) while requests start."""
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(f"LOCK TABLE {Throttle._meta.db_table} IN EXCLUSIVE MODE")
        else:  # SQLite: the write lock, taken by this write (transaction_mode IMMEDIATE)
            Throttle.objects.create(key="test:hold-the-write-lock", window_start="2026-01-01T00:00Z")
        yield
    Throttle.objects.filter(key="test:hold-the-write-lock").delete()


def at_once(request, count: int) -> list:
    """Send `count` requests (`request()` each) from threads at the same moment, with the
    counters locked until every one of them has had time to reach its limit's check."""
    results, errors = [None] * count, []

    def run(index):
        try:
            results[index] = request()
        except Exception as error:  # noqa: BLE001 - reported below with the others
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    with counters_locked():
        for thread in threads:
            thread.start()
        time.sleep(1.5)  # every request reaches the limits (and waits, where it counts first)
    for thread in threads:
        thread.join(60)
    assert not errors, errors
    return results


@override_settings(BLINDJUDGE_SIGNIN_FAILURES=3, BLINDJUDGE_SIGNIN_ADDRESS_FAILURES=8,
                   BLINDJUDGE_SIGNIN_CONCURRENT=100)
def test_wrong_passwords_sent_at_once_are_checked_only_up_to_the_limit(host):
    def wrong_password():
        page = Client(REMOTE_ADDR=ATTACKER).post(
            "/accounts/login/", {"login": "alice", "password": "not the password"})
        return page.content.decode()

    pages = at_once(wrong_password, AT_ONCE)
    checked = [p for p in pages if WRONG_PASSWORD_SHOWN in p]
    # The rest are refused untried: by the (username, address) limit, or, where the others
    # sent with them still counted when they were decided, by the address's own (8).
    refused = [p for p in pages if "Too many wrong passwords for this username" in p
               or "Too many failed sign-ins from your network" in p]
    assert (len(checked), len(refused)) == (3, AT_ONCE - 3), [
        p[p.find('class="errorlist'):][:300] for p in pages if p not in checked + refused]
    # Refused attempts were not tried, so they count nothing: the pair's count is the limit.
    pair = Throttle.objects.get(key__startswith="sign-in:pair:")
    assert pair.count == 3
    # The owner, from their own address, signs in at once.
    owner = Client(REMOTE_ADDR="198.51.100.77")
    owner.post("/accounts/login/", {"login": "alice", "password": HOST_PASSWORD})
    assert "_auth_user_id" in owner.session


@override_settings(BLINDJUDGE_GUEST_JOINS=3, BLINDJUDGE_GUEST_ATTEMPTS=100)
def test_guest_joins_sent_at_once_admit_no_more_than_the_limit(host):
    session = a_session(a_run(host), "open")
    code = guests_configure(session=session, actor="test", allow=True, cap=None).guest_code

    names = iter(range(AT_ONCE))

    def join():
        return Client(REMOTE_ADDR=ATTACKER).post(
            "/guest/", {"code": code, "name": f"Guest {next(names)}"}).status_code

    statuses = at_once(join, AT_ONCE)
    assert sorted(statuses) == [302] * 3 + [429] * (AT_ONCE - 3)
    assert Judge.objects.filter(session=session, admitted_as=AdmittedAs.GUEST).count() == 3


@override_settings(BLINDJUDGE_SIGNIN_CONCURRENT=2)
def test_sign_ins_under_way_from_one_address_are_bounded(host):
    """Two under way from one address: a third is refused before any password is hashed; once
    one ends, the next may begin. Another address is not held back."""
    who = {"username": "alice", "address": ATTACKER}
    assert throttle.sign_in_begin(**who) is None
    assert throttle.sign_in_begin(**who) is None
    assert throttle.sign_in_begin(**who) == throttle.BUSY_REFUSAL
    assert throttle.sign_in_begin(username="alice", address="198.51.100.1") is None
    throttle.sign_in_end(**who)
    assert throttle.sign_in_begin(**who) is None


VERIFIED_WITH_CONNECTION = []


class WatchingHasher(MD5PasswordHasher):
    """The test hasher, noting whether this thread's database connection is held while a
    password is checked."""

    def verify(self, password, encoded):
        VERIFIED_WITH_CONNECTION.append(connection.connection is not None)
        return super().verify(password, encoded)

    def encode(self, password, salt):
        VERIFIED_WITH_CONNECTION.append(connection.connection is not None)
        return super().encode(password, salt)


def test_no_pooled_connection_is_held_while_a_password_is_hashed(host):
    if not (connection.settings_dict.get("OPTIONS") or {}).get("pool"):
        pytest.skip("only PostgreSQL is pooled (the embedded default's SQLite connection is the "
                    "process's own; runs in the PostgreSQL + Redis run)")
    VERIFIED_WITH_CONNECTION.clear()
    hasher = f"{WatchingHasher.__module__}.{WatchingHasher.__qualname__}"
    with override_settings(PASSWORD_HASHERS=[hasher]):
        browser = Client(REMOTE_ADDR="198.51.100.5")
        browser.post("/accounts/login/", {"login": "alice", "password": "not the password"})
        browser.post("/accounts/login/", {"login": "nobody", "password": "not the password"})
        browser.post("/accounts/login/", {"login": "alice", "password": HOST_PASSWORD})
        assert "_auth_user_id" in browser.session
    # A wrong password, an unknown username (hashed against nothing, for the time), the right one:
    # each hashed (some twice: a check, then a hash for the time or a stored hash refreshed), and
    # never with a connection held.
    assert len(VERIFIED_WITH_CONNECTION) >= 3
    assert not any(VERIFIED_WITH_CONNECTION), VERIFIED_WITH_CONNECTION
