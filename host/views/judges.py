"""Judges and progress: who joined and how far they are (counts, never verdict values), and what
the host may do to a judge: reissue a resume link, remove, erase; the host judging themself.
"""

import datetime
import html

from django.contrib import messages
from django.template.backends.utils import csrf_input
from django.urls import reverse
from django.utils.safestring import mark_safe

from accounts.guards import host_required, remember_judge
from accounts.models import JudgeStatus
from blindjudge import links
from blindjudge.errors import Conflict, Invalid, NotFound
from host.forms import ConfirmForm, add_service_error
from host.views.common import (
    SeeOther,
    actor_of,
    confirm_page,
    not_post,
    progress_summary,
    render_host_page,
    session_url,
    show_once,
    visible,
)
from judging.models import SessionState
from judging.selectors.host import items_per_judge, session_for_host
from judging.selectors.live import live_connected_counts
from judging.services import host_join, judge_erase, judge_remove, resume_token_reissue

_NUMBER_SLOT = 987654321  # stands for a judge's number in a URL reversed once per page


def _per_judge_urls(session) -> dict:
    """URL templates of the per-judge actions: reversed once per page, not once per row and
    action (reversing was a fifth of the progress page's time at 64 judges, profiled)."""
    return {name: reverse(f"host:judge_{name}",
                          kwargs={"session_id": session.pk, "number": _NUMBER_SLOT})
            for name in ("reissue", "remove", "erase")}


def _utc_minute(moment) -> str:
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%d %H:%M") if moment else ""


def _judge_rows(session) -> list[dict]:
    """Each judge with counts of answered items per phase (counts only, never verdict values) and
    their sockets connected now.
    The counts live on the judge row (kept by verdict_record), so the page reads one row per
    judge however many verdicts the session holds."""
    items = items_per_judge(session)
    urls = _per_judge_urls(session)
    slot = str(_NUMBER_SLOT)
    connected = live_connected_counts(session.pk)
    return [{"judge": j, "items": items, "answered1": j.phase1_answered,
             "answered2": j.phase2_answered, "name": visible(j.display_name),
             "active": j.status == JudgeStatus.ACTIVE, "connected": connected.get(j.pk, 0),
             **{f"{name}_url": url.replace(slot, str(j.number)) for name, url in urls.items()}}
            for j in session.judges.order_by("number")]


def _judge_row_html(row: dict, *, csrf: str, revealed: bool) -> str:
    """One judge's table row, every value escaped. Made here rather than by the template: at
    64 judges the template engine's per-variable cost was most of the progress page's time
    (profiled), the page a host keeps refreshing while a session runs. `csrf` is markup."""
    j = row["judge"]
    e = _escape
    if j.erased_at:
        name = f"<em>erased {j.erased_at.astimezone(datetime.UTC):%Y-%m-%d}</em>"
    elif j.github_login:
        name = f"{e(row['name'])} (@{e(j.github_login)})"
    else:
        name = e(row["name"])
    status = e(j.status) + (f" {_utc_minute(j.removed_at)}" if j.removed_at else "")
    phases = [f"{answered} of {row['items']} answered<br>"
              + (f"locked {_utc_minute(locked)}" if locked else "not locked")
              for answered, locked in ((row["answered1"], j.phase1_locked_at),
                                       (row["answered2"], j.phase2_locked_at))]
    if not row["active"]:
        connected = "–"
    elif row["connected"]:
        connected = "yes" + (f" ({row['connected']} tabs)" if row["connected"] > 1 else "")
    else:
        connected = "no"
    who = e(j.pseudonym)
    actions = ""
    if row["active"] and not revealed:
        actions += (f'<form method="post" action="{e(row["reissue_url"])}" class="inline">{csrf}'
                    f'<button type="submit">Reissue resume link<span class="visually-hidden"> of '
                    f'{who}</span></button></form><a class="button" href="{e(row["remove_url"])}">'
                    f'Remove<span class="visually-hidden"> {who}</span>…</a>')
    if not j.erased_at:
        actions += (f'<a class="button" href="{e(row["erase_url"])}">Erase identity'
                    f'<span class="visually-hidden"> of {who}</span>…</a>')
    # The data- attributes are what static/host/live.js updates in place.
    return (f'<tr data-judge="{j.number}" data-status="{e(j.status)}" '
            f'data-connected="{row["connected"]}" '
            f'data-locked1="{str(bool(j.phase1_locked_at)).lower()}" '
            f'data-locked2="{str(bool(j.phase2_locked_at)).lower()}">'
            f'<th scope="row">{who}</th><td data-cell="name">{name}</td><td>{e(j.admitted_as)}</td>'
            f'<td>{e(j.identified_by)}</td><td data-cell="status">{status}</td>'
            f'<td data-cell="phase1">{phases[0]}</td><td data-cell="phase2">{phases[1]}</td>'
            f'<td data-cell="connected">{connected}</td><td>{_utc_minute(j.joined_at)}</td>'
            f'<td class="row-actions" data-cell="actions">{actions}</td></tr>\n')


def _escape(value) -> str:
    return html.escape(str(value), quote=True)


def _judges_page(request, session, error=None, status=200):
    rows = _judge_rows(session)
    revealed = session.state == SessionState.REVEALED
    csrf = csrf_input(request)
    mine = session.judges.filter(user=request.user).first()
    return render_host_page(request, "host/judges.html", {
        "session": session, "run": session.run, "tab": "judges", "error": error,
        "rows": rows, "progress": progress_summary(session),
        "connected_now": sum(1 for row in rows if row["active"] and row["connected"]),
        "row_html": mark_safe("".join(  # noqa: S308 - every value in a row is escaped
            _judge_row_html(row, csrf=csrf, revealed=revealed) for row in rows)),
        "my_judge": mine, "judge_path": f"/s/{session.url_id}/",
        "can_join": session.state == SessionState.OPEN and mine is None,
        "revealed": revealed,
    }, status=status)


@host_required
def judges(request, session_id):
    session = session_for_host(host=request.host, session_id=session_id)
    return _judges_page(request, session)


def _judge_of(session, number):
    judge = session.judges.filter(number=number).first()
    if judge is None:
        raise NotFound(f"session {session.pk} has no judge {number}")
    return judge


@host_required
def judge_reissue(request, session_id, number):
    session = session_for_host(host=request.host, session_id=session_id)
    judge = _judge_of(session, number)
    if request.method != "POST":
        return not_post()
    try:
        token = resume_token_reissue(judge=judge, actor=actor_of(request))
    except (Invalid, Conflict) as error:
        return _judges_page(request, session, error=error.message, status=error.status)
    show_once(request, kind="resume_link", session=session.pk, judge=judge.pseudonym,
               link=links.resume_link(token))
    messages.success(request, f"New resume link for {judge.pseudonym}; the old one stopped working.")
    return SeeOther(session_url(session, "judges"))


def _judge_confirm_view(service, *, verb: str, button: str, label: str, consequences: list[str],
                        done: str):
    @host_required
    def view(request, session_id, number):
        session = session_for_host(host=request.host, session_id=session_id)
        judge = _judge_of(session, number)
        form = ConfirmForm(request.POST if request.method == "POST" else None,
                           label=label.format(judge=judge))
        page = {
            "session": session, "tab": "judges",
            "title": f"{verb} judge {judge.pseudonym}"
                     + (f" ({visible(judge.display_name)})?" if judge.display_name else "?"),
            "consequences": consequences,
            "action": request.path, "button": button,
        }
        if request.method != "POST":
            return confirm_page(request, form=form, **page)
        if not form.is_valid():
            return confirm_page(request, form=form, status=400, **page)
        try:
            service(judge=judge, actor=actor_of(request))
        except (Invalid, Conflict) as error:
            add_service_error(form, error.message)
            return confirm_page(request, form=form, status=error.status, **page)
        messages.success(request, done.format(judge=judge))
        return SeeOther(session_url(session, "judges"))

    view.__name__ = service.__name__ + "_view"
    return view


judge_remove_view = _judge_confirm_view(
    judge_remove, verb="Remove", button="Remove", label="Remove {judge.pseudonym}",
    consequences=[
        "Their pages and their resume link stop working at once.",
        "Their verdicts stay and are reported apart, as a removed judge's.",
        "A removed judge cannot be restored.",
    ],
    done="{judge.pseudonym} is removed; their links stopped working.",
)
judge_erase_view = _judge_confirm_view(
    judge_erase, verb="Erase the identity of", button="Erase identity",
    label="Erase the name and GitHub identity of {judge.pseudonym}",
    consequences=[
        "Their name, GitHub login and account link are deleted, here and on their invitation.",
        "Their pseudonymous verdicts stay and are reported under the pseudonym.",
        "Erasure cannot be undone.",
    ],
    done="The identity of {judge.pseudonym} is erased; the pseudonym and verdicts stay.",
)


@host_required
def host_join_view(request, session_id):
    """The host judges their own session: admitted, bound to this browser, shown their resume
    link, commitment and the protocol hash once, then sent to the judge's pages."""
    session = session_for_host(host=request.host, session_id=session_id)
    if request.method != "POST":
        return not_post()
    try:
        admission = host_join(session=session, host=request.host)
    except (Invalid, Conflict) as error:
        return _judges_page(request, session, error=error.message, status=error.status)
    remember_judge(request, admission.judge)
    show_once(request, kind="host_join", session=session.pk, judge=admission.judge.pseudonym,
               link=links.resume_link(admission.resume_token),
               commitment=admission.commitment_sha256, protocol=admission.protocol_sha256,
               judge_path=f"/s/{session.url_id}/")
    messages.success(request, f"You judge session {session.pk} as {admission.judge.pseudonym}; "
                              "your verdicts are reported apart, as self-blinded.")
    return SeeOther(session_url(session, "judges"))
