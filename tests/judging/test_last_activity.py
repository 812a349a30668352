"""The progress table's "last active" (issue 17 item 5): a judge's latest act, not an open tab.

Joining, a page opened (a socket opened), a verdict or a reason-only draft saved and a lock count;
a socket's pings, which an idle open tab sends all day, do not.
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from accounts.models import Judge
from judging.models import LiveSocket
from judging.selectors.live import dashboard_judges
from judging.services import item_save
from tests.worlds import a_host, a_run, a_session, codes, invite_and_join

pytestmark = pytest.mark.django_db


def last_active(judge):
    _, judges = dashboard_judges(judge.session_id, [judge.pk])
    return judges[0].last_active_at


def test_an_open_tabs_pings_are_not_activity_but_opening_a_page_and_saving_a_draft_are():
    session = a_session(a_run(a_host()), "open")
    judge = invite_and_join(session, "Idle Ida").judge
    now = timezone.now()
    Judge.objects.filter(pk=judge.pk).update(joined_at=now - timedelta(hours=3))
    assert last_active(judge) == now - timedelta(hours=3)

    socket = LiveSocket.objects.create(channel_name="test!idle", judge=judge, seen_at=now)
    LiveSocket.objects.filter(pk=socket.pk).update(opened_at=now - timedelta(hours=2))
    # The tab has pinged just now, but the judge last opened a page two hours ago.
    assert last_active(judge) == now - timedelta(hours=2)

    judge.refresh_from_db()
    item_save(judge=judge, code=codes(judge)[0], phase=1, value="", reason="thinking about it")
    assert last_active(judge) > now - timedelta(minutes=1)
