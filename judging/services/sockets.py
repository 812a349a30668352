"""Live sockets: which of a judge's websockets are connected now, for the host's dashboard; and
closing a host's sockets when the account signs out or changes its password."""

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from accounts.enums import JudgeStatus
from blindjudge.errors import NotFound
from judging import live
from judging.models import LiveSocket
from judging.services.activity import judge_acted
from judging.services.verdicts import judge_for_update


def live_socket_open(*, judge, channel_name: str):
    """A judge's websocket opened. Refused (NotFound) for a judge no longer active, or whose
    credential generation moved on since `judge` was read (resume links reissued or revoked), so
    a socket never outlives its judge's removal or its browser's session even if the event
    was missed.

    Side effects: records the socket with the time (and drops rows a killed process left behind
    more than a day ago) and, as the judge's last activity, its opening; after commit, the host's
    dashboard gets the judge's row.
    """
    generation = judge.credential_generation
    with transaction.atomic():
        judge = judge_for_update(judge)
        if judge.credential_generation != generation:  # links reissued since the guard's check
            raise NotFound("no such judge")
        now = timezone.now()
        LiveSocket.objects.filter(seen_at__lt=now - timedelta(days=1)).delete()
        socket, opened = LiveSocket.objects.update_or_create(
            channel_name=channel_name, defaults={"judge": judge, "seen_at": now})
        if opened:  # a page opened: an act (its pings are not)
            judge_acted(judge.pk, socket.opened_at)
        live.judge_changed(judge)
    return judge


def live_socket_seen(*, judge, channel_name: str) -> bool:
    """The client of a judge's socket pinged: it still counts as connected. Returns False (and
    forgets the socket) when the judge is no longer active or their resume links were reissued or
    revoked since the socket opened (`judge` holds the generation it opened with), so the caller
    closes it.

    Side effects: refreshes the socket's time; after commit, the host's dashboard gets the row
    when the socket had gone stale (its process restarted, or the client slept).
    """
    now = timezone.now()
    with transaction.atomic():
        if not type(judge).objects.filter(pk=judge.pk, status=JudgeStatus.ACTIVE,
                                          credential_generation=judge.credential_generation).exists():
            LiveSocket.objects.filter(channel_name=channel_name).delete()
            return False
        socket = LiveSocket.objects.filter(channel_name=channel_name).first()
        if socket is None or (now - socket.seen_at).total_seconds() > live.STALE_SECONDS:
            socket, opened = LiveSocket.objects.update_or_create(
                channel_name=channel_name, defaults={"judge_id": judge.pk, "seen_at": now})
            if opened:  # known again after its row was dropped: counted as opened, as it was
                judge_acted(judge.pk, socket.opened_at)
            live.judge_changed(judge)
        else:
            LiveSocket.objects.filter(pk=socket.pk).update(seen_at=now)
    return True


def live_socket_close(*, judge, channel_name: str):
    """A judge's websocket closed. Side effects: forgets the socket; after commit, the host's
    dashboard gets the judge's row."""
    with transaction.atomic():
        if LiveSocket.objects.filter(channel_name=channel_name).delete()[0]:
            live.judge_changed(judge)


def host_sockets_close(*, user_id: int):
    """Every host dashboard socket of this account, in every tab and browser, is told "signed out"
    and closed: called before a sign-out or a password change takes effect (the sockets would
    otherwise keep the dashboard live on a session that no longer holds). A socket that misses the
    event (Redis restarting, the embedded default's other process) is refused at its next ping or
    refresh, which re-read the browser session (host/consumers.py).

    Side effects: after commit (at once outside a transaction), the event to the account's group.
    """
    live.host_signed_out(user_id)
