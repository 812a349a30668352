"""Judges and progress: who joined and how far they are (counts, never verdict values), and what
the host may do to a judge: reissue a resume link, remove, erase; the host judging themself.
"""

from django.template.backends.utils import csrf_input

from accounts.enums import AdmittedAs
from accounts.guards import remember_judge
from blindjudge import links
from host.forms import ConfirmForm
from host.judge_rows import judge_rows_page
from host.views.common import (
    actor_of,
    confirm_page,
    for_host_session,
    host_change,
    render_host_page,
    session_url,
    show_once,
    visible,
)
from judging.enums import SessionState
from judging.selectors.host import judge_held_by_host, judge_of_session
from judging.selectors.live import session_totals
from judging.services import (
    guest_remove,
    host_join,
    judge_erase,
    judge_remove,
    resume_token_reissue,
)


def _judges_page(request, session, error=None, status=200):
    rows, rows_html = judge_rows_page(session.pk, csrf=csrf_input(request))
    mine = judge_held_by_host(session, request.user)
    return render_host_page(request, "host/judges.html", {
        "session": session, "run": session.run, "tab": "judges", "error": error,
        "rows": rows, "totals": session_totals(session.pk),
        "row_html": rows_html,
        "my_judge": mine, "judge_path": f"/s/{session.url_id}/",
        "can_join": session.state == SessionState.OPEN and mine is None,
        "revealed": session.state == SessionState.REVEALED,
    }, status=status)


@for_host_session
def judges(request, session):
    return _judges_page(request, session)


@for_host_session
def judge_reissue(request, session, number):
    judge = judge_of_session(session, number)

    def change(_):
        token = resume_token_reissue(judge=judge, actor=actor_of(request))
        show_once(request, kind="resume_link", session=session.pk, judge=judge.pseudonym,
                  link=links.resume_link(token))
        return (f"New resume link for {judge.pseudonym}; the old one stopped working.",
                session_url(session, "judges"))

    return host_change(request, change=change, page=lambda **shown: _judges_page(request, session, **shown))


# What removing a guest adds to the confirmation: the guest code still admits them.
GUEST_REMOVAL = {
    "allowed": [
        "{judge.pseudonym} joined with the guest code. Unless you rotate it, they can join again "
        "with it at once, as a new guest.",
        "Rotating issues a new code, shown once, and the old one stops working for everyone: give "
        "the new code to the guests you still want.",
    ],
    "denied": [
        "{judge.pseudonym} joined with the guest code. Guests are not allowed now, so no code "
        "works; allowing guests again issues a new code.",
    ],
}
ROTATE_BUTTON = {"name": "rotate", "value": "yes", "label": "Remove and rotate the guest code"}


def _judge_confirm_view(service, *, verb: str, button: str, label: str, consequences: list[str],
                        done: str, guest_service=None, guest_done: str = ""):
    """A confirmation page, then `service`. For a judge who came as a guest, with
    `guest_service`, the page also says the guest code still admits them and offers the removal
    and the code's rotation in one click (`guest_service(judge, actor, rotate_code)`)."""
    @for_host_session
    def view(request, session, number):
        judge = judge_of_session(session, number)
        form = ConfirmForm(request.POST if request.method == "POST" else None,
                           label=label.format(judge=judge))
        guest = guest_service is not None and judge.admitted_as == AdmittedAs.GUEST
        extra = GUEST_REMOVAL["allowed" if session.guests_allowed else "denied"] if guest else []
        can_rotate = guest and session.guests_allowed
        page = {
            "session": session, "tab": "judges",
            "title": f"{verb} judge {judge.pseudonym}"
                     + (f" ({visible(judge.display_name)})?" if judge.display_name else "?"),
            "consequences": [*consequences, *(line.format(judge=judge) for line in extra)],
            "action": request.path,
            "button": f"{button} only, keep the guest code" if can_rotate else button,
            "alternatives": [ROTATE_BUTTON] if can_rotate else [],
        }
        if request.method != "POST":
            return confirm_page(request, form=form, **page)

        def change(_):
            if guest:
                rotate = request.POST.get("rotate") == "yes"
                result = guest_service(judge=judge, actor=actor_of(request), rotate_code=rotate)
                if result.guest_code:
                    show_once(request, kind="guest_code", session=session.pk,
                              code=result.guest_code, guest_page=links.guest_page())
                    return (guest_done.format(judge=judge), session_url(session, "guests"))
            else:
                service(judge=judge, actor=actor_of(request))
            return done.format(judge=judge), session_url(session, "judges")

        return host_change(request, form=form, change=change,
                           page=lambda form, status, error=None: confirm_page(request, form=form,
                                                                              status=status, **page))

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
    guest_service=guest_remove,
    guest_done="{judge.pseudonym} is removed and the guest code rotated: the old code stopped "
               "working. Give the new one to the guests you still want.",
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


@for_host_session
def host_join_view(request, session):
    """The host judges their own session: admitted, bound to this browser, shown their resume
    link, commitment and the protocol hash once, then sent to the judge's pages."""

    def change(_):
        admission = host_join(session=session, host=request.host)
        remember_judge(request, admission.judge)
        show_once(request, kind="host_join", session=session.pk, judge=admission.judge.pseudonym,
                  link=links.resume_link(admission.resume_token),
                  commitment=admission.commitment_sha256, protocol=admission.protocol_sha256,
                  judge_path=f"/s/{session.url_id}/")
        return (f"You judge session {session.pk} as {admission.judge.pseudonym}; "
                "your verdicts are reported apart, as self-blinded.", session_url(session, "judges"))

    return host_change(request, change=change, page=lambda **shown: _judges_page(request, session, **shown))
