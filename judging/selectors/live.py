"""What the host's live dashboard shows: each judge's counts and states, and who is connected now.
Never a verdict value.
"""

from datetime import timedelta

from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from accounts.models import Judge
from judging.live import STALE_SECONDS
from judging.models import LiveSocket, Session
from judging.selectors.host import items_per_judge


def _sockets_connected_now():
    """The sockets the dashboard counts as connected: pinged within live.STALE_SECONDS (one whose
    process was killed without closing it stops counting then)."""
    return LiveSocket.objects.filter(seen_at__gt=timezone.now() - timedelta(seconds=STALE_SECONDS))


def live_judge_rows(session_id: int, judge_pks=None) -> list[dict]:
    """Each judge of the session as the host's dashboard shows it: who (pseudonym, name, how
    admitted), state and counts per phase, and how many of their sockets are connected now.
    Counts and states only: the answered counts are the ones `verdict_record` keeps on the judge
    row, so no verdict is read at all, and the cost does not grow with the verdicts (this runs
    for the progress page and for every change the host's socket is told of)."""
    session = Session.objects.only("pk", "items_per_judge").get(pk=session_id)
    items = items_per_judge(session)
    connected = (_sockets_connected_now().filter(judge=OuterRef("pk"))
                 .order_by().values("judge").annotate(n=Count("pk")).values("n"))
    judges = Judge.objects.filter(session_id=session_id)
    if judge_pks is not None:
        judges = judges.filter(pk__in=judge_pks)
    judges = judges.annotate(connected=Coalesce(Subquery(connected), 0)).order_by("number")
    return [{
        "number": j.number, "pseudonym": j.pseudonym,
        "name": "" if j.erased_at else j.display_name, "github": "" if j.erased_at else j.github_login,
        "erased": bool(j.erased_at), "admitted_as": j.admitted_as, "identified_by": j.identified_by,
        "status": j.status, "items": items, "answered1": j.phase1_answered,
        "answered2": j.phase2_answered,
        "phase1_locked": j.phase1_locked_at is not None, "phase2_locked": j.phase2_locked_at is not None,
        "connected": j.connected,
    } for j in judges]


def live_connected_counts(session_id: int) -> dict[int, int]:
    """Sockets connected now per judge of the session (judge pk -> count)."""
    return dict(_sockets_connected_now().filter(judge__session_id=session_id)
                .order_by().values("judge").annotate(n=Count("pk")).values_list("judge", "n"))


def live_totals(rows: list[dict]) -> dict:
    active = [r for r in rows if r["status"] == "active"]
    return {
        "joined": len(rows), "active": len(active), "removed": len(rows) - len(active),
        "phase1_locked": sum(r["phase1_locked"] for r in rows),
        "phase2_locked": sum(r["phase2_locked"] for r in rows),
        "connected": sum(1 for r in active if r["connected"]),
    }


def live_snapshot(session_id: int) -> dict:
    """The whole dashboard at once, as a (re)connecting host socket is sent it: the session's
    state, the totals and every judge's row."""
    state = Session.objects.filter(pk=session_id).values_list("state", flat=True).first()
    rows = live_judge_rows(session_id)
    return {"type": "snapshot", "state": state, "totals": live_totals(rows), "judges": rows}
