"""Who may join: invitations by join link or GitHub login, and guests by the session's guest code.
"""

from django.contrib import messages
from django.utils import timezone

from accounts.guards import host_required
from accounts.models import AdmittedAs, Credential, CredentialKind
from blindjudge import links
from blindjudge.errors import Conflict, Invalid
from host.forms import GuestCapForm, InviteGithubForm, InviteNameForm, add_service_error
from host.views.common import SeeOther, actor_of, not_post, render_host_page, session_url, show_once
from judging.models import SessionState
from judging.selectors.host import session_for_host
from judging.services import guests_configure, invitation_create


def _invitations_page(request, session, name_form=None, github_form=None, status=200):
    invitations = []
    join_links = {
        c.invitation_id: c for c in Credential.objects.filter(
            session=session, kind=CredentialKind.JOIN).order_by("pk")
    }
    now = timezone.now()
    for invitation in session.invitations.select_related("judge").order_by("pk"):
        credential = join_links.get(invitation.pk)
        if invitation.judge_id:
            status_text = f"joined as {invitation.judge.pseudonym}"
        elif invitation.github_login:
            status_text = "waiting for GitHub sign-in"
        elif credential is None or credential.revoked_at:
            status_text = "link revoked"
        elif credential.used_at:
            status_text = "link used"
        elif credential.expires_at and credential.expires_at <= now:
            status_text = "link expired"
        else:
            status_text = "link not used yet"
        invitations.append({
            "invitation": invitation, "status": status_text,
            "expires_at": credential.expires_at if credential else None,
            "by": "GitHub login" if invitation.github_login else "join link",
        })
    return render_host_page(request, "host/invitations.html", {
        "session": session, "run": session.run, "tab": "invitations",
        "invitations": invitations, "can_invite": session.state != SessionState.REVEALED,
        "name_form": name_form or InviteNameForm(),
        "github_form": github_form or InviteGithubForm(),
        "github_join_link": links.github_join_link(session.url_id),
    }, status=status)


@host_required
def invitations(request, session_id):
    session = session_for_host(host=request.host, session_id=session_id)
    return _invitations_page(request, session)


@host_required
def invite_name(request, session_id):
    session = session_for_host(host=request.host, session_id=session_id)
    if request.method != "POST":
        return not_post()
    form = InviteNameForm(request.POST)
    if not form.is_valid():
        return _invitations_page(request, session, name_form=form, status=400)
    try:
        invited = invitation_create(session=session, actor=actor_of(request),
                                    name=form.cleaned_data["name"])
    except (Invalid, Conflict) as error:
        add_service_error(form, error.message)
        return _invitations_page(request, session, name_form=form, status=error.status)
    show_once(request, kind="join_link", session=session.pk, name=invited.invitation.name,
               link=links.join_link(invited.join_token),
               expires_at=invited.expires_at.isoformat())
    messages.success(request, f"{invited.invitation.name} is invited.")
    return SeeOther(session_url(session, "invitations"))


@host_required
def invite_github(request, session_id):
    session = session_for_host(host=request.host, session_id=session_id)
    if request.method != "POST":
        return not_post()
    form = InviteGithubForm(request.POST)
    if not form.is_valid():
        return _invitations_page(request, session, github_form=form, status=400)
    listed, refused = [], []
    for login in form.cleaned_data["logins"]:
        try:
            invitation_create(session=session, actor=actor_of(request), github_login=login)
        except (Invalid, Conflict) as error:
            refused.append((login, error))
        else:
            listed.append(login)
    if listed:
        messages.success(request, "Listed: " + ", ".join(listed))
    if refused:
        # Keep what was refused in the box, with the reasons; what was listed is done.
        form = InviteGithubForm({"github-logins": "\n".join(login for login, _ in refused)})
        form.is_valid()
        for _, error in refused:
            add_service_error(form, error.message)
        status = max(error.status for _, error in refused)
        return _invitations_page(request, session, github_form=form, status=status)
    return SeeOther(session_url(session, "invitations"))


def _guests_page(request, session, cap_form=None, error=None, status=200):
    return render_host_page(request, "host/guests.html", {
        "session": session, "run": session.run, "tab": "guests", "error": error,
        "guest_page": links.guest_page(),
        "has_code": Credential.objects.filter(session=session, kind=CredentialKind.GUEST,
                                              revoked_at__isnull=True).exists(),
        "guests": session.judges.filter(admitted_as=AdmittedAs.GUEST).count(),
        "cap_form": cap_form or GuestCapForm(initial={"cap": session.guest_cap}),
        "editable": session.state != SessionState.REVEALED,
    }, status=status)


@host_required
def guests(request, session_id):
    session = session_for_host(host=request.host, session_id=session_id)
    if request.method != "POST":
        return _guests_page(request, session)
    action = request.POST.get("action")
    cap_form = None
    kwargs = {}
    if action == "allow":
        kwargs["allow"] = True
    elif action == "deny":
        kwargs["allow"] = False
    elif action == "rotate":
        kwargs["rotate"] = True
    elif action == "cap":
        cap_form = GuestCapForm(request.POST)
        if not cap_form.is_valid():
            return _guests_page(request, session, cap_form=cap_form, status=400)
        kwargs["cap"] = cap_form.cleaned_data["cap"]
    else:
        return _guests_page(request, session, error="Choose what to change.", status=400)
    try:
        result = guests_configure(session=session, actor=actor_of(request), **kwargs)
    except (Invalid, Conflict) as error:
        if cap_form is not None:
            add_service_error(cap_form, error.message)
        return _guests_page(request, session, cap_form=cap_form, error=error.message,
                            status=error.status)
    session = result.session
    if result.guest_code:
        show_once(request, kind="guest_code", session=session.pk, code=result.guest_code,
                   guest_page=links.guest_page())
    if action == "cap":
        cap = session.guest_cap
        messages.success(request, f"Guest cap set to {cap}." if cap else "Guest cap removed.")
    elif action == "rotate":
        messages.success(request, "Guest code rotated; the old code stopped working.")
    elif session.guests_allowed:
        messages.success(request, "Guests are allowed.")
    else:
        messages.success(request, "Guests are not allowed; the guest code stopped working.")
    return SeeOther(session_url(session, "guests"))
