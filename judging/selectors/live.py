"""What the host's live dashboard shows: each judge's counts and states, and who is connected now.
Never a verdict value.
"""

from datetime import timedelta

from django.db.models import Count, Exists, F, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from accounts.enums import JudgeStatus
from accounts.models import Judge
from judging.enums import SessionKind
from judging.live import STALE_SECONDS
from judging.models import LiveSocket, Session


def _sockets_connected_now():
    """The sockets the dashboard counts as connected: pinged within live.STALE_SECONDS (one whose
    process was killed without closing it stops counting then)."""
    return LiveSocket.objects.filter(seen_at__gt=timezone.now() - timedelta(seconds=STALE_SECONDS))


def last_activity():
    """An annotation: a judge's latest act, the newest of joining, a page opened (its socket
    opened), a verdict or a reason-only draft saved, and a phase locked. A socket's pings are not
    acts: an idle tab left open pings all day. Read from the judge's row alone: the services
    where a judge acts stamp `last_acted_at` (judging.services.activity), so the cost is
    O(judges), whatever the verdicts (issue 32 item 2). (Each NULL counts as the joining, so the
    greatest is the same on SQLite, whose MAX() is NULL with any NULL, and PostgreSQL.)"""
    joined = F("joined_at")
    return Greatest(joined, Coalesce("last_acted_at", joined),
                    Coalesce("phase1_locked_at", joined), Coalesce("phase2_locked_at", joined))


def dashboard_judges(session_id: int, judge_pks=None) -> tuple[Session, list[Judge]]:
    """The session (its state and items per judge) and its judges in number order, each with
    `connected`, how many of their sockets are connected now. Counts and states only: the
    answered counts are the ones `item_save` keeps on the judge row, so no verdict is read
    at all, and the cost does not grow with the verdicts (this runs for the progress page and for
    every change the host's socket is told of)."""
    session = Session.objects.only("pk", "items_per_judge", "by_task", "state", "kind").get(
        pk=session_id)
    connected = (_sockets_connected_now().filter(judge=OuterRef("pk"))
                 .order_by().values("judge").annotate(n=Count("pk")).values("n"))
    judges = Judge.objects.filter(session_id=session_id)
    if judge_pks is not None:
        judges = judges.filter(pk__in=judge_pks)
    if session.by_task:
        # Whole tasks: a judge's items may fall short of items per judge (the next task did not
        # fit) or pass it (one large task), so each judge's own count is read; it never changes.
        judges = judges.annotate(item_count=Count("assignments", distinct=True))
    rows = list(judges.annotate(connected=Coalesce(Subquery(connected), 0),
                                last_active_at=last_activity()).order_by("number"))
    if session.kind == SessionKind.ADJUDICATION:
        # The host sees an adjudicator by pseudonym only (issue 29 item 1): never the name on
        # the join link or the GitHub login, blanked here so no row or frame can carry them.
        for judge in rows:
            judge.display_name = judge.github_login = ""
    return session, rows


def live_row(judge: Judge, items: int) -> dict:
    """One judge as the host's dashboard feed carries them: who (pseudonym, name, how admitted),
    state and counts per phase, and how many of their sockets are connected now."""
    j = judge
    return {
        "number": j.number, "pseudonym": j.pseudonym,
        "name": "" if j.erased_at else j.display_name, "github": "" if j.erased_at else j.github_login,
        "erased": bool(j.erased_at), "admitted_as": j.admitted_as, "identified_by": j.identified_by,
        "status": j.status, "items": items, "answered1": j.phase1_answered,
        "answered2": j.phase2_answered,
        "phase1_locked": j.phase1_locked_at is not None, "phase2_locked": j.phase2_locked_at is not None,
        "connected": j.connected,
    }


def session_totals(session_id: int) -> dict:
    """The session's judges counted, the one place they are: joined, active, removed, locked
    each phase, and active judges with a page connected now. The overview and the progress page
    draw these, and the dashboard's socket sends them in every frame that carries rows, where
    static/host/live.js draws them as given. One aggregate over the judges (O(judges), never
    O(verdicts))."""
    active = Q(status=JudgeStatus.ACTIVE)
    return Judge.objects.filter(session_id=session_id).order_by().aggregate(
        joined=Count("pk"),
        active=Count("pk", filter=active),
        removed=Count("pk", filter=~active),
        phase1_locked=Count("pk", filter=Q(phase1_locked_at__isnull=False)),
        phase2_locked=Count("pk", filter=Q(phase2_locked_at__isnull=False)),
        connected=Count("pk", filter=active & Q(Exists(
            _sockets_connected_now().filter(judge=OuterRef("pk"))))),
    )


def judges_named(session_id: int):
    """Every judge of the session, in joining order, with what telling same names apart needs
    (number, shown name, erasure)."""
    return (Judge.objects.filter(session_id=session_id).order_by("number")
            .only("number", "display_name", "erased_at"))
