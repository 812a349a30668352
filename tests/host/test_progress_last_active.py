"""What the host is shown as each judge's last activity, pinned: the progress page's rows, the live
dashboard's snapshot (the same rows, sent by the host's socket) and the invitations page.

A judge's last activity is the newest of their joining, a page opened (a socket opened), a verdict
or a reason-only draft saved, and a phase locked; an open tab's pings are not activity (issue 17
item 5, tests/judging/test_last_activity.py). Every act here happens at a minute of its own on a
pinned clock, through the services the pages call, so the minute shown names the act that set it.
"""

import re
from datetime import timedelta
from unittest import mock

import pytest
from django.utils import timezone

from host.consumers import HostLiveConsumer
from judging.services import item_save, live_socket_open, live_socket_seen, phase_lock
from tests.worlds import client_as, codes, invite_and_join

pytestmark = pytest.mark.django_db

START = (timezone.now() - timedelta(hours=6)).replace(second=0, microsecond=0)


def at(minute: int):
    """The clock pinned `minute` minutes after START, for what is done inside."""
    moment = START + timedelta(minutes=minute, seconds=7)
    return mock.patch("django.utils.timezone.now", lambda: moment)


def shown(minute: int, pattern: str) -> str:
    return (START + timedelta(minutes=minute)).strftime(pattern)


def row_cells(html: str) -> dict[str, str]:
    """Judge pseudonym -> the row's last-active cell, from the rows' HTML."""
    return {m.group(1): m.group(2) for m in re.finditer(
        r'<tr data-judge="\d+".*?<th scope="row">(J\d+)</th>.*?'
        r'data-cell="last-active" class="nowrap">([^<]*)<', html, re.S)}


def act(session):
    """Five judges, each last active through a different act; returns {pseudonym: minute}."""
    with at(0):
        ann, bo, cy, dee, eve = (invite_and_join(session, name).judge
                                 for name in ("Ann", "Bo", "Cy", "Dee", "Eve"))
    # Ann: a page opened, a verdict, then a reason alone on another item (a draft); her tab's
    # later pings are not activity.
    with at(10):
        live_socket_open(judge=ann, channel_name="test!ann")
    with at(20):
        item_save(judge=ann, code=codes(ann)[0], phase=1, value="pass")
    with at(30):
        item_save(judge=ann, code=codes(ann)[1], phase=1, value="", reason="thinking about it")
    with at(50):
        assert live_socket_seen(judge=ann, channel_name="test!ann")
    # Bo: every item answered, then the lock, later.
    with at(35):
        for code in codes(bo):
            item_save(judge=bo, code=code, phase=1, value="fail")
    with at(45):
        phase_lock(judge=bo, phase=1)
    # Cy: joined, nothing since. Dee: a verdict, then a page opened after it.
    with at(12):
        item_save(judge=dee, code=codes(dee)[0], phase=1, value="pass")
    with at(15):
        live_socket_open(judge=dee, channel_name="test!dee")
    # Eve: a verdict changed later (its value), and a save that changes nothing later still.
    with at(5):
        item_save(judge=eve, code=codes(eve)[0], phase=1, value="pass")
    with at(25):
        item_save(judge=eve, code=codes(eve)[0], phase=1, value="fail")
    with at(55):
        item_save(judge=eve, code=codes(eve)[0], phase=1, value="fail")
    return {ann.pseudonym: 30, bo.pseudonym: 45, cy.pseudonym: 0, dee.pseudonym: 15,
            eve.pseudonym: 25}


def test_the_progress_page_the_live_snapshot_and_the_invitations_show_each_judges_last_act(
        host, open_session):
    expected = act(open_session)
    host_client = client_as(host)
    wanted = {pseudonym: shown(minute, "%m-%d %H:%M") for pseudonym, minute in expected.items()}

    page = host_client.get(f"/host/sessions/{open_session.pk}/judges").content.decode()
    assert row_cells(page) == wanted

    snapshot = HostLiveConsumer._snapshot(mock.Mock(session_id=open_session.pk))
    assert row_cells("".join(snapshot["html"])) == wanted

    invitations = host_client.get(f"/host/sessions/{open_session.pk}/invitations").content.decode()
    cells = re.findall(r'data-cell="last-active">([^<]*)<', invitations)
    assert sorted(cells) == sorted(shown(minute, "%Y-%m-%d %H:%M") for minute in expected.values())
