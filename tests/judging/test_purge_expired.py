"""`manage.py purge_expired`: expired browser sessions, attempt counters long past their window and
socket rows of killed processes are deleted; live ones are kept (issue 12, "Also")."""

import io
import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.sessions.models import Session
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from accounts import throttle
from accounts.models import Throttle
from judging.models import LiveSocket
from tests.worlds import HOST_PASSWORD, invite_and_join


def a_session(expires_in: timedelta) -> str:
    store = SessionStore()
    store["note"] = "x"
    store.save()
    Session.objects.filter(session_key=store.session_key).update(
        expire_date=timezone.now() + expires_in)
    return store.session_key


@pytest.mark.django_db
def test_purge_deletes_expired_rows_and_keeps_live_ones(host, open_session):
    expired = [a_session(timedelta(seconds=-1)), a_session(timedelta(days=-30))]
    live = a_session(timedelta(minutes=5))
    signed_in = Client()
    assert signed_in.post("/accounts/login/", {"login": host.user.username,
                                               "password": HOST_PASSWORD}).status_code == 302
    throttle.sign_in_failed(username="alice", address="203.0.113.7")  # counting now
    old_keys = ["sign-in:address:198.51.100.1", "guest-code:198.51.100.1"]
    for key in old_keys:
        Throttle.objects.create(key=key, window_start=timezone.now() - timedelta(days=2), count=3)
    judge = invite_and_join(open_session, "Ada").judge
    now = timezone.now()
    LiveSocket.objects.create(channel_name="killed", judge=judge, seen_at=now - timedelta(days=2))
    LiveSocket.objects.create(channel_name="open", judge=judge, seen_at=now)

    out = io.StringIO()
    call_command("purge_expired", "--json", stdout=out)

    assert json.loads(out.getvalue()) == {"ok": True, "sessions": 2, "counters": 2, "sockets": 1}
    assert not Session.objects.filter(session_key__in=expired).exists()
    assert Session.objects.filter(session_key=live).exists()
    assert signed_in.get("/host/").status_code == 200  # a live sign-in is untouched
    assert not Throttle.objects.filter(key__in=old_keys).exists()
    # The live counts: address, pair, username, slow, and the sign-ins under way (now none).
    assert Throttle.objects.filter(key__startswith="sign-in:").count() == 5
    assert Throttle.objects.get(key__startswith="sign-in:busy:").count == 0
    assert list(LiveSocket.objects.values_list("channel_name", flat=True)) == ["open"]
    # Nothing more to do the second time.
    out = io.StringIO()
    call_command("purge_expired", stdout=out)
    assert out.getvalue().strip() == ("deleted: 0 expired sessions, 0 old attempt counters, "
                                      "0 stale socket rows")


def test_the_shipped_systemd_timer_and_bj_start_run_it():
    root = Path(__file__).resolve().parents[2]
    service = (root / "deploy/systemd/blindjudge-purge.service").read_text()
    timer = (root / "deploy/systemd/blindjudge-purge.timer").read_text()
    assert "\nType=oneshot\n" in service
    assert "\nExecStart=/srv/blindjudge/.venv/bin/python manage.py purge_expired\n" in service
    assert "\nOnCalendar=daily\n" in timer and "\nWantedBy=timers.target\n" in timer
    start = (root / "bj").read_text().split("    start)\n", 1)[1].split(";;", 1)[0]
    assert '"$VENV/bin/python" manage.py purge_expired\n' in start
    assert start.index("purge_expired") < start.index("exec ")
