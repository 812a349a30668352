"""Who may join: invitations by join link or GitHub login, and guests by the session's guest code.
"""

from django.conf import settings
from django.contrib import messages

from blindjudge import links
from blindjudge.errors import Conflict, Invalid
from host.forms import GuestCapForm, InviteGithubForm, InviteNameForm, add_service_error
from host.views.common import (
    actor_of,
    for_host_session,
    host_change,
    render_host_page,
    session_url,
    show_once,
)
from judging.models import SessionState
from judging.selectors.host import guest_overview, invitation_rows
from judging.services import guests_configure, invitation_create


def _invitations_page(request, session, name_form=None, github_form=None, status=200):
    return render_host_page(request, "host/invitations.html", {
        "session": session, "run": session.run, "tab": "invitations",
        "invitations": invitation_rows(session), "can_invite": session.state != SessionState.REVEALED,
        "name_form": name_form or InviteNameForm(),
        "github_form": github_form or InviteGithubForm(),
        "github_join_link": links.github_join_link(session.url_id),
    }, status=status)


@for_host_session
def invitations(request, session):
    return _invitations_page(request, session)


@for_host_session
def invite_name(request, session):
    def change(data):
        invited = invitation_create(session=session, actor=actor_of(request), name=data["name"])
        show_once(request, kind="join_link", session=session.pk, name=invited.invitation.name,
                  link=links.join_link(invited.join_token),
                  expires_at=invited.expires_at.isoformat())
        return f"{invited.invitation.name} is invited.", session_url(session, "invitations")

    return host_change(request, form=InviteNameForm(request.POST), change=change,
                       page=lambda form=None, **shown: _invitations_page(request, session,
                                                                         name_form=form, **shown))


@for_host_session
def invite_github(request, session):
    """Each login is listed or refused on its own: what was listed stays done, and the refused
    logins come back in the box, each with its reason, under the worst refusal's status."""
    refused = []

    def change(data):
        listed = []
        for login in data["logins"]:
            try:
                invitation_create(session=session, actor=actor_of(request), github_login=login)
            except (Invalid, Conflict) as error:
                refused.append((login, error))
            else:
                listed.append(login)
        message = "Listed: " + ", ".join(listed) if listed else ""
        if refused:
            if message:
                messages.success(request, message)
            raise max((error for _, error in refused), key=lambda error: error.status)
        return message, session_url(session, "invitations")

    def page(form=None, status=200, error=None):
        if refused:
            form = InviteGithubForm({"github-logins": "\n".join(login for login, _ in refused)})
            form.is_valid()
            for _, reason in refused:
                add_service_error(form, reason.message)
        return _invitations_page(request, session, github_form=form, status=status)

    return host_change(request, form=InviteGithubForm(request.POST), change=change, page=page)


def _guests_page(request, session, cap_form=None, error=None, status=200):
    return render_host_page(request, "host/guests.html", {
        "session": session, "run": session.run, "tab": "guests", "error": error,
        "guest_page": links.guest_page(),
        **guest_overview(session),
        "cap_form": cap_form or GuestCapForm(initial={"cap": session.guest_cap}),
        "editable": session.state != SessionState.REVEALED,
        "default_cap": settings.BLINDJUDGE_DEFAULT_GUEST_CAP,
        "joins_per_address": settings.BLINDJUDGE_GUEST_JOINS,
        "join_window": _duration(settings.BLINDJUDGE_GUEST_JOIN_WINDOW_SECONDS),
    }, status=status)


def _duration(seconds: int) -> str:
    for unit, size in (("hour", 3600), ("minute", 60)):
        if seconds >= size and seconds % size == 0:
            count = seconds // size
            return f"{'an' if unit == 'hour' else 'a'} {unit}" if count == 1 else f"{count} {unit}s"
    return f"{seconds} seconds"


# action -> what guests_configure is asked to change
GUEST_ACTIONS = {"allow": {"allow": True}, "deny": {"allow": False}, "rotate": {"rotate": True},
                 "cap": {}}


@for_host_session
def guests(request, session):
    if request.method != "POST":
        return _guests_page(request, session)
    action = request.POST.get("action")
    if action not in GUEST_ACTIONS:
        return _guests_page(request, session, error="Choose what to change.", status=400)
    cap_form = GuestCapForm(request.POST) if action == "cap" else None

    def change(data):
        kwargs = {"cap": data["cap"]} if action == "cap" else GUEST_ACTIONS[action]
        result = guests_configure(session=session, actor=actor_of(request), **kwargs)
        changed = result.session
        if result.guest_code:
            show_once(request, kind="guest_code", session=changed.pk, code=result.guest_code,
                      guest_page=links.guest_page())
        if action == "cap":
            cap = changed.guest_cap
            message = f"Guest cap set to {cap}." if cap else "Guest cap removed."
        elif action == "rotate":
            message = "Guest code rotated; the old code stopped working."
        elif changed.guests_allowed:
            message = "Guests are allowed."
        else:
            message = "Guests are not allowed; the guest code stopped working."
        return message, session_url(changed, "guests")

    return host_change(request, form=cap_form, change=change, refusal_on_both=True,
                       page=lambda form=None, **shown: _guests_page(request, session, cap_form=form,
                                                                    **shown))
