"""Who may join: invitations by join link or GitHub login, and guests by the session's guest code.
"""

from django.conf import settings
from django.contrib import messages
from django.http import HttpResponse

from blindjudge import links
from blindjudge.errors import Conflict, Invalid
from host.forms import GuestCapForm, InviteGithubForm, InviteListForm, InviteNameForm, add_service_error
from host.views.common import (
    actor_of,
    for_host_session,
    host_change,
    not_post,
    render_host_page,
    session_url,
    show_once,
)
from judging.enums import SessionState
from judging.invitation_links import join_links_csv
from judging.selectors.host import guest_overview, invitation_of_session, invitation_rows
from judging.services import (
    guests_configure,
    invitation_create,
    invitation_link_reissue,
    invitations_create_bulk,
    invitee_text_from_file,
    join_links_issue,
)

# The invitations of the list just invited, by id, per session id, until their CSV is
# downloaded: their join links are issued by that download (join_links_issue), in the response
# that hands them over, so no link is ever stored in clear, not even in the host's session.
PENDING_LIST_KEY = "host:join-links-pending"


def _invitations_page(request, session, name_form=None, github_form=None, list_form=None,
                      error=None, status=200):
    pending = request.session.get(PENDING_LIST_KEY, {}).get(str(session.pk))
    return render_host_page(request, "host/invitations.html", {
        "session": session, "run": session.run, "tab": "invitations", "error": error,
        "invitations": invitation_rows(session), "can_invite": session.state != SessionState.REVEALED,
        "name_form": name_form or InviteNameForm(),
        "github_form": github_form or InviteGithubForm(),
        "list_form": list_form or InviteListForm(),
        "pending_csv": pending and {"count": pending["count"]},
        "github_join_link": links.github_join_link(session.url_id),
    }, status=status)


@for_host_session
def invite_list(request, session):
    """A list of invitees, pasted or uploaded, invited in one service call, without links yet:
    the host downloads their join links once, as a CSV (join_links_download). A refused list
    comes back in the box (an uploaded file's text too), each bad line named."""
    form = InviteListForm(request.POST, request.FILES)
    listed = {"text": request.POST.get("list-names", "")}

    def change(data):
        text = data["names"]
        if data.get("upload"):
            upload = data["upload"]
            text = listed["text"] = invitee_text_from_file(upload.name, upload.read())
        invited = invitations_create_bulk(session=session, actor=actor_of(request), text=text,
                                          issue_links=False)
        pending = request.session.get(PENDING_LIST_KEY, {})
        pending[str(session.pk)] = {"count": len(invited),
                                    "ids": [one.invitation.pk for one in invited]}
        request.session[PENDING_LIST_KEY] = pending
        return (f"{len(invited)} people are invited. Download their join links now: the CSV can "
                "be downloaded once.", session_url(session, "invitations") + "#join-links")

    def page(form=None, status=200, error=None):
        if form is not None and form.is_bound and listed["text"] != form.data.get("list-names"):
            errors = form.non_field_errors()
            form = InviteListForm({"list-names": listed["text"]})
            form.is_valid()
            for message in errors:
                form.add_error(None, message)
        return _invitations_page(request, session, list_form=form, error=error, status=status)

    return host_change(request, form=form, change=change, page=page)


@for_host_session
def join_links_download(request, session):
    """The CSV of the list just invited, once: this request issues the links (only their hashes
    are stored) and takes the list out of the host's session, so a second request finds nothing;
    the service refuses to issue a second set anyway. Lost links are reissued one by one."""
    if request.method != "POST":
        return not_post()
    pending = request.session.get(PENDING_LIST_KEY, {})
    entry = pending.pop(str(session.pk), None)
    request.session[PENDING_LIST_KEY] = pending
    gone = ("The join links were already downloaded (or never created): they are shown once. "
            "Reissue a lost link from the list below.")
    if entry is None:
        return _invitations_page(request, session, status=410, error=gone)
    try:
        invited = join_links_issue(session=session, invitation_ids=entry["ids"],
                                   actor=actor_of(request))
    except Conflict as refusal:
        return _invitations_page(request, session, status=refusal.status, error=refusal.message)
    response = HttpResponse(join_links_csv(invited).encode("utf-8"),
                            content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="session-{session.pk}-join-links.csv"'
    response["Cache-Control"] = "no-store"
    return response


@for_host_session
def invitation_reissue(request, session, invitation_id):
    invitation = invitation_of_session(session, invitation_id)

    def change(_):
        invited = invitation_link_reissue(invitation=invitation, actor=actor_of(request))
        show_once(request, kind="join_link", session=session.pk, name=invited.invitation.name,
                  link=links.join_link(invited.join_token),
                  expires_at=invited.expires_at.isoformat())
        return (f"New join link for {invited.invitation.name}; the old one stopped working.",
                session_url(session, "invitations"))

    return host_change(request, change=change,
                       page=lambda **shown: _invitations_page(request, session, **shown))


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
