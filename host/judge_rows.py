"""The judges' rows of the host's dashboard, built once for both the progress page and the live
update: the data the socket carries (judging.selectors.live.live_row) and the row's HTML, drawn
by one template, host/_judge_row.html. The page joins the rows' HTML; the dashboard's socket sends
each changed row with its HTML, which static/host/live.js puts in place as it is.
"""

from django.template.loader import get_template
from django.urls import reverse

from content.normalise import show_controls
from judging.models import SessionState
from judging.selectors.host import items_per_judge
from judging.selectors.live import dashboard_judges, live_row

ROW_TEMPLATE = "host/_judge_row.html"
_NUMBER_SLOT = 987654321  # stands for a judge's number in a URL reversed once per page


def _per_judge_urls(session_id: int) -> dict:
    """URL templates of the per-judge actions: reversed once per page, not once per row and
    action (reversing was a fifth of the progress page's time at 64 judges, profiled)."""
    return {name: reverse(f"host:judge_{name}", kwargs={"session_id": session_id, "number": _NUMBER_SLOT})
            for name in ("reissue", "remove", "erase")}


def judge_rows(session_id: int, judge_pks=None, *, csrf: str = "") -> list[dict]:
    """Each judge (of `judge_pks`, or all) as {"judge": live row data, "html": the row}.

    `csrf` is the hidden CSRF input of the page the rows are drawn into; rows sent over the
    socket are drawn without it, and the page's script gives their forms the page's own."""
    session, judges = dashboard_judges(session_id, judge_pks)
    items = items_per_judge(session)
    urls = _per_judge_urls(session_id)
    slot = str(_NUMBER_SLOT)
    template = get_template(ROW_TEMPLATE)
    revealed = session.state == SessionState.REVEALED
    rows = []
    for judge in judges:
        data = live_row(judge, items)
        html = template.render({
            "j": judge, "row": data, "csrf": csrf, "revealed": revealed,
            "shown_name": show_controls(judge.display_name or ""),
            **{f"{name}_url": url.replace(slot, str(judge.number)) for name, url in urls.items()},
        })
        rows.append({"judge": data, "html": html})
    return rows
