"""The progress table's "last active" (issue 17 item 5): a judge's latest act, not an open tab.

Joining, a page opened (a socket opened), a verdict or a reason-only draft saved and a lock count;
a socket's pings, which an idle open tab sends all day, do not. Since issue 32 item 2 the services
where a judge acts stamp it on the judge's row (judging.services.activity), and the host's pages
read the row alone; what they show is pinned in tests/host/test_progress_last_active.py.
"""

import importlib
from datetime import timedelta
from unittest import mock

import pytest
from django.apps import apps
from django.utils import timezone

from accounts.models import Judge
from judging.selectors.live import dashboard_judges
from judging.services import item_save, live_socket_close, live_socket_open, live_socket_seen
from tests.worlds import a_host, a_run, a_session, codes, invite_and_join

pytestmark = pytest.mark.django_db


def last_active(judge):
    _, judges = dashboard_judges(judge.session_id, [judge.pk])
    return judges[0].last_active_at


def clock(moment):
    return mock.patch("django.utils.timezone.now", lambda: moment)


def test_an_open_tabs_pings_are_not_activity_but_opening_a_page_and_saving_a_draft_are():
    session = a_session(a_run(a_host()), "open")
    judge = invite_and_join(session, "Idle Ida").judge
    now = timezone.now()
    Judge.objects.filter(pk=judge.pk).update(joined_at=now - timedelta(hours=3))
    assert last_active(judge) == now - timedelta(hours=3)

    with clock(now - timedelta(hours=2)):
        live_socket_open(judge=judge, channel_name="test!idle")
    with clock(now - timedelta(minutes=1)):
        assert live_socket_seen(judge=judge, channel_name="test!idle")
    # The tab has pinged just now, but the judge last opened a page two hours ago.
    assert last_active(judge) == now - timedelta(hours=2)

    judge.refresh_from_db()
    item_save(judge=judge, code=codes(judge)[0], phase=1, value="", reason="thinking about it")
    assert last_active(judge) > now - timedelta(minutes=1)


def test_a_page_opened_stays_the_last_act_after_its_tab_closes():
    """The one change from reading the sockets' rows (issue 32 item 2): a closed tab's socket row
    is deleted, and with it the opening was forgotten (the row showed an older act again); the
    stamp keeps it, as it keeps every other act."""
    session = a_session(a_run(a_host()), "open")
    judge = invite_and_join(session, "Brief Bea").judge
    opened = timezone.now() + timedelta(minutes=5)
    with clock(opened):
        live_socket_open(judge=judge, channel_name="test!brief")
    live_socket_close(judge=judge, channel_name="test!brief")
    assert last_active(judge) == opened


def test_an_older_act_recorded_late_never_moves_the_stamp_back():
    session = a_session(a_run(a_host()), "open")
    judge = invite_and_join(session, "Late Lou").judge
    later = timezone.now() + timedelta(minutes=10)
    with clock(later):
        item_save(judge=judge, code=codes(judge)[0], phase=1, value="pass")
    with clock(later - timedelta(minutes=5)):
        live_socket_open(judge=judge, channel_name="test!late")
    assert last_active(judge) == later
    assert Judge.objects.get(pk=judge.pk).phase1_answered == 1


def test_the_migration_stamps_judges_from_their_verdicts_drafts_and_sockets():
    session = a_session(a_run(a_host()), "open")
    saver, drafter, opener, idle = (invite_and_join(session, name).judge
                                    for name in ("Sam", "Dot", "Opal", "Ivy"))
    base = timezone.now() + timedelta(minutes=1)
    with clock(base):
        item_save(judge=saver, code=codes(saver)[0], phase=1, value="pass")
        item_save(judge=drafter, code=codes(drafter)[0], phase=1, value="pass")
    with clock(base + timedelta(minutes=1)):
        item_save(judge=drafter, code=codes(drafter)[1], phase=1, value="", reason="later")
    with clock(base + timedelta(minutes=2)):
        live_socket_open(judge=opener, channel_name="test!opal")
    stamped = dict(Judge.objects.values_list("pk", "last_acted_at"))
    Judge.objects.update(last_acted_at=None)
    migration = importlib.import_module("accounts.migrations.0006_judge_last_acted_at")
    migration.stamp_existing(apps, None)
    assert dict(Judge.objects.values_list("pk", "last_acted_at")) == stamped
    assert stamped[saver.pk] == base and stamped[drafter.pk] == base + timedelta(minutes=1)
    assert stamped[opener.pk] == base + timedelta(minutes=2) and stamped[idle.pk] is None
