"""Host sign-in throttling (issue 12, item 9; docs/threats.md case 40): wrong passwords are counted
in the database every server process shares, per address and per (username, address); a count
per username alone only slows the addresses that just failed, and never keeps the right password
from a fresh address out.

Before: allauth counted in per-process memory (another process, or a restart, started from zero)
and 5 wrong passwords for a username refused its owner from everywhere for 5 minutes.
"""

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client, override_settings

from accounts import throttle
from accounts.models import Throttle
from tests.worlds import HOST_PASSWORD

ROOT = Path(__file__).resolve().parent.parent
ATTACKER, OWNER = "203.0.113.7", "198.51.100.20"
LIMITS = {"BLINDJUDGE_SIGNIN_FAILURES": 3, "BLINDJUDGE_SIGNIN_ADDRESS_FAILURES": 8,
          "BLINDJUDGE_SIGNIN_USERNAME_SLOW_AFTER": 4, "BLINDJUDGE_SIGNIN_SLOW_SECONDS": 60,
          "BLINDJUDGE_SIGNIN_WINDOW_SECONDS": 900}

WRONG_PASSWORDS = """
from django.test import Client
browser = Client(REMOTE_ADDR="{address}", HTTP_HOST="127.0.0.1")
for _ in range({count}):
    page = browser.post("/accounts/login/", {{"login": "alice", "password": "not the password"}})
    assert page.status_code == 200 and "_auth_user_id" not in browser.session, page.status_code
print("done")
"""


def sign_in(address: str, password: str, username: str = "alice") -> tuple[bool, str]:
    browser = Client(REMOTE_ADDR=address)
    page = browser.post("/accounts/login/", {"login": username, "password": password})
    return "_auth_user_id" in browser.session, page.content.decode()


def another_process(address: str, count: int):
    """`count` wrong passwords through the sign-in page in a separate OS process (its own memory,
    gone when it exits: a second server process, or this one before a restart)."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "blindjudge.settings_test",
           "BLINDJUDGE_TEST_DATABASE_NAME": connection.settings_dict["NAME"],
           **{name: str(value) for name, value in LIMITS.items()}}
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c",
         WRONG_PASSWORDS.format(address=address, count=count)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert result.returncode == 0 and result.stdout.strip().endswith("done"), result.stderr


@pytest.mark.django_db(transaction=True)
@override_settings(**LIMITS)
def test_wrong_passwords_count_across_processes_and_restarts(host):
    another_process(ATTACKER, 2)  # one process, then it exits (a restart)
    another_process(ATTACKER, 1)  # another process: the count goes on from 2
    signed_in, page = sign_in(ATTACKER, HOST_PASSWORD)  # and this one sees 3 of 3 used
    assert not signed_in
    assert "Too many wrong passwords for this username from your network. Try again in" in page
    # The right password from the owner's address is unaffected.
    assert sign_in(OWNER, HOST_PASSWORD)[0]


@pytest.mark.django_db
@override_settings(**LIMITS)
def test_many_wrong_passwords_never_lock_the_owner_out_from_a_fresh_address(host):
    attackers = [f"203.0.113.{n}" for n in range(1, 6)]
    for address in attackers:  # 15 wrong passwords for alice, more than any limit
        for _ in range(3):
            assert not sign_in(address, "not the password")[0]
    assert sign_in(OWNER, HOST_PASSWORD)[0]
    assert sign_in("2001:db8:1::5", HOST_PASSWORD)[0]


@pytest.mark.django_db
@override_settings(**LIMITS)
def test_a_username_under_attack_only_slows_the_addresses_that_just_failed(host):
    for address in ("203.0.113.1", "203.0.113.2"):
        for _ in range(2):  # under the per-address limit (3) for alice
            assert not sign_in(address, "not the password")[0]
    # alice has had 4 wrong passwords from anywhere: 203.0.113.1 just failed, so it waits...
    signed_in, page = sign_in("203.0.113.1", HOST_PASSWORD)
    assert not signed_in and "each network that has just got it wrong waits" in page
    assert "try again in 60 seconds" in page or "try again in 59 seconds" in page
    # ...an address that has not failed for alice is not held back...
    assert sign_in("203.0.113.3", HOST_PASSWORD)[0]
    # ...and once the short wait is over, 203.0.113.1 tries again (the clock moved on).
    Throttle.objects.filter(key__startswith="sign-in:slow:").update(
        window_start=Throttle.objects.get(key__startswith="sign-in:slow:", key__endswith=".1")
        .window_start - timedelta(seconds=61))
    assert sign_in("203.0.113.1", HOST_PASSWORD)[0]


@pytest.mark.django_db
@override_settings(**LIMITS)
def test_one_address_guessing_many_usernames_is_refused_for_all_of_them(host):
    for n in range(8):
        assert not sign_in(ATTACKER, "not the password", username=f"user{n}")[0]
    signed_in, page = sign_in(ATTACKER, HOST_PASSWORD)
    assert not signed_in and "Too many failed sign-ins from your network. Try again in 15 minutes." in page
    assert sign_in(OWNER, HOST_PASSWORD)[0]


@pytest.mark.django_db
@override_settings(**LIMITS)
def test_an_ipv6_subscribers_addresses_count_as_one(host):
    for n in range(3):  # three addresses of one /64
        assert not sign_in(f"2001:db8:1:2::{n + 1}", "not the password")[0]
    signed_in, page = sign_in("2001:db8:1:2::99", HOST_PASSWORD)
    assert not signed_in and "Too many wrong passwords" in page
    assert sign_in("2001:db8:1:3::1", HOST_PASSWORD)[0]  # the next /64 is another subscriber


@pytest.mark.django_db
@override_settings(**LIMITS)
def test_the_counts_ignore_the_usernames_case_and_store_no_username(host):
    for login in ("alice", "ALICE", "Alice "):
        assert not sign_in(ATTACKER, "not the password", username=login)[0]
    assert not sign_in(ATTACKER, HOST_PASSWORD)[0]
    assert not Throttle.objects.filter(key__icontains="alice").exists()
    assert throttle.network_of("::ffff:203.0.113.7") == ATTACKER
