"""The judges' rows of the host's dashboard, built once for both the progress page and the live
update: the data the socket carries (judging.selectors.live.live_row) and the row's HTML, drawn
by one template, host/_judge_rows.html. The page joins the rows' HTML; the dashboard's socket sends
each changed row with its HTML, which static/host/live.js puts in place as it is.
"""

import datetime

from django.template.loader import get_template
from django.urls import reverse

from accounts.enums import JudgeStatus
from content.normalise import show_controls
from judging.enums import SessionState
from judging.selectors.host import items_per_judge
from judging.selectors.live import dashboard_judges, judges_named, live_row

ROWS_TEMPLATE = "host/_judge_rows.html"
_NUMBER_SLOT = 987654321  # stands for a judge's number in a URL reversed once per page


def _per_judge_urls(session_id: int) -> dict:
    """URL templates of the per-judge actions: reversed once per page, not once per row and
    action (reversing was a fifth of the progress page's time at 64 judges, profiled)."""
    return {name: reverse(f"host:judge_{name}", kwargs={"session_id": session_id, "number": _NUMBER_SLOT})
            for name in ("reissue", "remove", "erase")}


def _utc_minute(moment) -> str:
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%d %H:%M") if moment else ""


def _connected_text(data: dict) -> str:
    if data["status"] != JudgeStatus.ACTIVE:
        return "–"
    if not data["connected"]:
        return "no"
    return "yes" + (f" ({data['connected']} tabs)" if data["connected"] > 1 else "")


def _short_utc(moment) -> str:
    return moment.astimezone(datetime.UTC).strftime("%m-%d %H:%M") if moment else "–"


def _same_names(session_id: int, judges: list | None) -> dict[int, str]:
    """Judges whose shown name another judge of the session shares, by number: "2 of 3" (in
    order of joining), so "Ann" and "Ann" are told apart on every row. `judges`: every judge of
    the session when the page has them all already; a live update of a few rows reads the names
    (one query)."""
    if judges is None:
        judges = judges_named(session_id)
    by_name: dict[str, list[int]] = {}
    for judge in sorted(judges, key=lambda judge: judge.number):
        if judge.display_name and not judge.erased_at:
            by_name.setdefault(judge.display_name.casefold(), []).append(judge.number)
    return {number: f"{place} of {len(numbers)}" for numbers in by_name.values()
            if len(numbers) > 1 for place, number in enumerate(numbers, start=1)}


def _row_contexts(session_id: int, judge_pks, csrf: str) -> tuple[str, list[dict]]:
    """The session's state, and each judge's row as the template draws it."""
    session, judges = dashboard_judges(session_id, judge_pks)
    same_names = _same_names(session_id, judges if judge_pks is None else None)
    items = items_per_judge(session)
    urls = _per_judge_urls(session_id)
    slot = str(_NUMBER_SLOT)
    revealed = session.state == SessionState.REVEALED
    rows = []
    for judge in judges:
        data = live_row(judge, getattr(judge, "item_count", items))
        erased = judge.erased_at
        # Every value as text here: the template engine's per-value cost (number formatting, the
        # date filter, attribute lookups) was most of the page's time at 64 rows.
        rows.append({
            "row": data, "csrf": csrf, "can_act": data["status"] == JudgeStatus.ACTIVE and not revealed,
            "number": str(judge.number), "pseudonym": judge.pseudonym, "status": judge.status,
            "admitted_as": judge.admitted_as, "identified_by": judge.identified_by,
            "github_login": judge.github_login, "shown_name": show_controls(judge.display_name or ""),
            "answered1": str(data["answered1"]), "answered2": str(data["answered2"]),
            "items": str(data["items"]),
            "locked1": "true" if data["phase1_locked"] else "false",
            "locked2": "true" if data["phase2_locked"] else "false",
            "connected": str(data["connected"]), "connected_text": _connected_text(data),
            "erased_on": erased.astimezone(datetime.UTC).strftime("%Y-%m-%d") if erased else "",
            "removed_at": _utc_minute(judge.removed_at), "joined_at": _utc_minute(judge.joined_at),
            "locked1_at": _utc_minute(judge.phase1_locked_at),
            "locked2_at": _utc_minute(judge.phase2_locked_at),
            "same_name": same_names.get(judge.number, ""),
            "last_active": _short_utc(judge.last_active_at),
            **{f"{name}_url": url.replace(slot, str(judge.number)) for name, url in urls.items()},
        })
    return session.state, rows


def judge_rows_page(session_id: int, *, csrf: str) -> tuple[list[dict], str]:
    """Every judge's live row data, and the table body that draws them all (one render: the
    template engine's cost per render call was a good part of the page at 64 judges). `csrf` is
    the page's hidden CSRF input, for the rows' forms."""
    _, rows = _row_contexts(session_id, None, csrf)
    return [r["row"] for r in rows], get_template(ROWS_TEMPLATE).render({"rows": rows})


def judge_rows_each(session_id: int, judge_pks=None) -> tuple[str, list[dict]]:
    """The session's state, and each judge (of `judge_pks`, or all) as {"judge": live row data,
    "html": their row}, for the dashboard's socket. Drawn without a CSRF input: the page's script
    gives the rows' forms the page's own."""
    template = get_template(ROWS_TEMPLATE)
    state, rows = _row_contexts(session_id, judge_pks, "")
    return state, [{"judge": r["row"], "html": template.render({"rows": [r]})} for r in rows]
