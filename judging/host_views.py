"""The host's pages (all under /host/).

Every view starts with `@host_required`, then fetches its run or session through the host
selectors, so another host's ids are the same 404 as ids that do not exist, whatever the method.
Changes are POSTs (with CSRF) that call one service each and redirect (303) with a message.
A refusal re-shows the page with the message and everything the host typed, with the
refusal's status; anything else a service raises is rendered by ServiceErrorMiddleware.

Credentials (join links, guest codes, resume links) exist in clear only in the service's return
value. They are kept in the host's server-side session just long enough to be shown once on the
page the POST redirects to, which pops them, and never go into messages (a cookie) or logs.
Host pages are sent with `Cache-Control: no-store`: they hold truth labels, names and, once, a
credential.
"""

import datetime
import html
import math
import re

from django.conf import settings
from django.contrib import messages
from django.db.models import Count, Q
from django.db.models.functions import Length
from django.http import HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.shortcuts import render
from django.template.backends.utils import csrf_input
from django.urls import reverse
from django.utils import timezone
from django.utils.safestring import mark_safe

from accounts.guards import host_required, remember_judge
from accounts.models import AdmittedAs, Credential, CredentialKind, JudgeStatus
from blindjudge import links
from blindjudge.errors import Conflict, Invalid, NotFound, ServiceError
from content.normalise import BIDI_CLASS, INVISIBLE_CLASS, show_controls
from content.truth import DEFECTIVE, GOOD
from judging.host_forms import (
    AmendForm,
    BundleUploadForm,
    ConfirmForm,
    DraftForm,
    GuestCapForm,
    InviteGithubForm,
    InviteNameForm,
    PlannerForm,
    RedactionAcceptForm,
    SessionCreateForm,
    TruthForm,
    add_service_error,
)
from judging.models import SessionState
from judging.selectors.host import blinding_check, items_per_judge, run_for_host, session_for_host
from judging.selectors.live import live_connected_counts
from judging.services import (
    guests_configure,
    host_join,
    invitation_create,
    judge_erase,
    judge_remove,
    prereg_amend,
    redactions_accept,
    redactions_withdraw,
    resume_token_reissue,
    run_import,
    session_close,
    session_create,
    session_open,
    session_reopen,
    session_reveal,
    session_update_draft,
    truth_correct,
)

# reports (and numpy under it, ~15 MB and 0.2 s per process) load on the first page that needs
# them — the planner, the report download — never in a process that serves only judges.

ONCE_KEY = "host:shown-once"
_SPECIALS = re.compile(f"[{BIDI_CLASS}{INVISIBLE_CLASS}]")

# format in the URL -> (file name extension, content type)
REPORT_FORMATS = {
    "json": ("json", "application/json"),
    "csv": ("csv", "text/csv; charset=utf-8"),
    "anon": ("anon.json", "application/json"),
    "html": ("html", "text/html; charset=utf-8"),
}


class SeeOther(HttpResponseRedirect):
    status_code = 303


def _actor(request) -> str:
    return f"host:{request.user.get_username()}"


def _show_once(request, **payload):
    """Keep a credential for the next page only (see the module docstring)."""
    request.session[ONCE_KEY] = payload


def _render(request, template: str, context: dict, status: int = 200) -> HttpResponse:
    context = {"once": request.session.pop(ONCE_KEY, None), "host": request.host, **context}
    response = render(request, template, context, status=status)
    response["Cache-Control"] = "no-store"
    return response


def _not_post():
    return HttpResponseNotAllowed(["POST"])


def _visible(text: str) -> str:
    """Untrusted one-line text (model output) with bidi and invisible characters shown."""
    return show_controls(text or "")


def _session_url(session, name="session") -> str:
    return reverse(f"host:{name}", kwargs={"session_id": session.pk})


# --- Runs ----------------------------------------------------------------------------------------

def _runs_page(request, form=None, status=200):
    runs = (request.host.runs.order_by("-imported_at", "-pk")
            .annotate(copy_count=Count("copies", distinct=True),
                      finding_count=Count("findings", distinct=True))
            .prefetch_related("sessions"))
    return _render(request, "host/runs.html",
                   {"runs": runs, "form": form or BundleUploadForm()}, status=status)


@host_required
def runs(request):
    return _runs_page(request)


@host_required
def run_import_view(request):
    if request.method != "POST":
        return _not_post()
    form = BundleUploadForm(request.POST, request.FILES)
    if not form.is_valid():
        return _runs_page(request, form, status=400)
    upload = form.cleaned_data["bundle"]
    limit = settings.BLINDJUDGE_MAX_BUNDLE_BYTES
    if upload.size > limit:
        # Read nothing of a file we would refuse anyway.
        form.add_error("bundle", f"bundle: {upload.size} bytes exceeds the limit of {limit} bytes")
        return _runs_page(request, form, status=400)
    try:
        run = run_import(host=request.host, raw=upload.read(), actor=_actor(request))
    except Invalid as error:
        add_service_error(form, error.message)
        return _runs_page(request, form, status=400)
    messages.success(request, f"Run {run.pk} imported: {run.copies.count()} copies, "
                              f"{run.findings.count()} findings.")
    return SeeOther(reverse("host:run", kwargs={"run_id": run.pk}))


def _run_page(request, run, session_form=None, status=200):
    # Copies can be megabytes each: count their characters in the database, load none.
    copies = list(run.copies.select_related("builder").defer("content")
                  .annotate(characters=Length("content")))
    findings = list(run.findings.select_related("copy").prefetch_related("raised_by"))
    reviews = list(run.reviews.select_related("reviewer", "copy"))
    corrections = list(run.truth_corrections.select_related("copy", "finding"))
    context = {
        "run": run,
        "builders": list(run.builders.all()),
        "copies": [{"copy": c, "defect": _visible(c.defect)} for c in copies],
        "reviewers": list(run.reviewers.all()),
        "reviews": [{"review": r, "reason": _visible(r.reason),
                     "seal_reason": _visible(r.seal_reason)} for r in reviews],
        "findings": [{"finding": f, "text": _visible(f.text),
                      "raised_by": ", ".join(r.bundle_id for r in f.raised_by.all())}
                     for f in findings],
        "corrections": [{"correction": c, "item": (c.copy or c.finding).bundle_id,
                         "kind": "copy" if c.copy_id else "finding", "note": _visible(c.note)}
                        for c in corrections],
        "sessions": list(run.sessions.annotate(judge_count=Count("judges")).order_by("pk")),
        "session_form": session_form or SessionCreateForm(),
        "task": run.task,
    }
    return _render(request, "host/run.html", context, status=status)


@host_required
def run_detail(request, run_id):
    run = run_for_host(host=request.host, run_id=run_id)
    return _run_page(request, run)


@host_required
def session_create_view(request, run_id):
    run = run_for_host(host=request.host, run_id=run_id)
    if request.method != "POST":
        return _not_post()
    form = SessionCreateForm(request.POST)
    if not form.is_valid():
        return _run_page(request, run, form, status=400)
    data = form.cleaned_data
    try:
        created = session_create(
            run=run, kind=data["kind"], actor=_actor(request), rubric=data["rubric"],
            preregistration=data["preregistration"], items_per_judge=data["items_per_judge"],
            guests_allowed=data["guests_allowed"], guest_cap=data["guest_cap"],
            reviewer_display=data["reviewer_display"], scorecards=data["scorecards"],
        )
    except Invalid as error:
        add_service_error(form, error.message)
        return _run_page(request, run, form, status=400)
    if created.guest_code:
        _show_once(request, kind="guest_code", session=created.session.pk,
                   code=created.guest_code, guest_page=links.guest_page())
    messages.success(request, f"Draft session {created.session.pk} created.")
    return SeeOther(_session_url(created.session))


def _item_for_truth(run, kind, position):
    model = run.copies if kind == "copy" else run.findings
    item = model.filter(position=position).first()
    if item is None:
        raise NotFound(f"run {run.pk} has no {kind} {position}")
    return item


def _truth_page(request, run, kind, item, form=None, status=200):
    history = run.truth_corrections.filter(**{kind: item})
    context = {
        "run": run, "kind": kind, "item": item, "history": history,
        "form": form or TruthForm(finding=kind == "finding"),
        "defect": _visible(getattr(item, "defect", "")),
        "text": _visible(getattr(item, "text", "")),
    }
    return _render(request, "host/truth.html", context, status=status)


@host_required
def truth_correct_view(request, run_id, kind, position):
    run = run_for_host(host=request.host, run_id=run_id)
    item = _item_for_truth(run, kind, position)
    if request.method != "POST":
        return _truth_page(request, run, kind, item)
    form = TruthForm(request.POST, finding=kind == "finding")
    if not form.is_valid():
        return _truth_page(request, run, kind, item, form, status=400)
    try:
        truth_correct(run=run, item=item.bundle_id, truth=form.cleaned_data["truth"],
                      note=form.cleaned_data["note"], actor=_actor(request))
    except (Invalid, Conflict) as error:
        add_service_error(form, error.message)
        return _truth_page(request, run, kind, item, form, status=error.status)
    messages.success(request, f'Truth of {kind} "{_visible(item.bundle_id)}" corrected to '
                              f'{form.cleaned_data["truth"]}.')
    return SeeOther(reverse("host:run", kwargs={"run_id": run.pk}) + "#corrections")


# --- Session overview ----------------------------------------------------------------------------

def _progress_summary(session) -> dict:
    judges = session.judges.aggregate(
        joined=Count("id"),
        active=Count("id", filter=Q(status=JudgeStatus.ACTIVE)),
        removed=Count("id", filter=Q(status=JudgeStatus.REMOVED)),
        phase1_locked=Count("id", filter=Q(phase1_locked_at__isnull=False)),
        phase2_locked=Count("id", filter=Q(phase2_locked_at__isnull=False)),
    )
    return judges


def _draft_form_for(session):
    return DraftForm(initial={
        "rubric": session.rubric, "preregistration": session.preregistration,
        "items_per_judge": session.items_per_judge, "reviewer_display": session.reviewer_display,
        "scorecards": session.scorecards,
    })


def _session_page(request, session, *, draft_form=None, amend_form=None, error=None,
                  status=200):
    state = session.state
    context = {
        "session": session, "run": session.run, "tab": "overview", "error": error,
        "item_count": session.items.count(),
        "progress": _progress_summary(session),
        "draft_form": (draft_form or _draft_form_for(session)) if state == SessionState.DRAFT
        else None,
        "amend_form": (amend_form or AmendForm())
        if state in (SessionState.OPEN, SessionState.CLOSED) else None,
        "amendments": list(session.amendments.all()),
        "planner_form": PlannerForm(),
        "events": [
            {"event": e, "details": "; ".join(f"{k}={v}" for k, v in sorted(e.details.items()))}
            for e in session.auditevent_set.order_by("-at", "-pk")[:100]
        ],
        "report_formats": list(REPORT_FORMATS) if state == SessionState.REVEALED else [],
    }
    return _render(request, "host/session.html", context, status=status)


@host_required
def session_detail(request, session_id):
    session = session_for_host(host=request.host, session_id=session_id)
    return _session_page(request, session)


@host_required
def session_edit(request, session_id):
    session = session_for_host(host=request.host, session_id=session_id)
    if request.method != "POST":
        return _not_post()
    form = DraftForm(request.POST)
    if not form.is_valid():
        return _session_page(request, session, draft_form=form, status=400)
    data = form.cleaned_data
    try:
        session_update_draft(
            session=session, actor=_actor(request), rubric=data["rubric"],
            preregistration=data["preregistration"], items_per_judge=data["items_per_judge"],
            reviewer_display=data["reviewer_display"], scorecards=data["scorecards"],
        )
    except Conflict as error:  # no longer a draft: the editor is gone, say why
        return _session_page(request, session, error=error.message, status=error.status)
    except Invalid as error:
        add_service_error(form, error.message)
        return _session_page(request, session, draft_form=form, status=error.status)
    messages.success(request, "Draft saved.")
    return SeeOther(_session_url(session))


def _transition_view(service, done: str):
    @host_required
    def view(request, session_id):
        session = session_for_host(host=request.host, session_id=session_id)
        if request.method != "POST":
            return _not_post()
        try:
            session = service(session=session, actor=_actor(request))
        except ServiceError as error:
            return _session_page(request, session, error=error.message, status=error.status)
        messages.success(request, done.format(session=session))
        return SeeOther(_session_url(session))

    view.__name__ = service.__name__ + "_view"
    return view


session_open_view = _transition_view(
    session_open, "Session {session.pk} is open; its protocol is frozen "
                  "(sha256 {session.protocol_sha256}).")
session_close_view = _transition_view(
    session_close, "Session {session.pk} is closed: no new verdicts until you reopen it.")
session_reopen_view = _transition_view(
    session_reopen, "Session {session.pk} is open again.")


def _confirm_page(request, *, session, tab, title, consequences, action, button, form,
                  status=200):
    return _render(request, "host/confirm.html", {
        "session": session, "run": session.run, "tab": tab, "title": title,
        "consequences": consequences, "action": action, "button": button, "form": form,
    }, status=status)


REVEAL_LABEL = "I understand that the reveal cannot be undone"


@host_required
def session_reveal_view(request, session_id):
    session = session_for_host(host=request.host, session_id=session_id)
    form = ConfirmForm(request.POST if request.method == "POST" else None, label=REVEAL_LABEL)
    page = {
        "session": session, "tab": "overview", "title": f"Reveal session {session.pk}?",
        "consequences": [
            "The mapping of codes to copies and builders, and every judge's commitment salt, "
            "are published in the report.",
            "Judging ends for good: the session cannot be reopened.",
            "Judges with scorecards allowed see their own scorecard; nothing else.",
            "This is logged and cannot be undone.",
        ],
        "action": reverse("host:session_reveal", kwargs={"session_id": session.pk}),
        "button": "Reveal",
    }
    if request.method != "POST":
        return _confirm_page(request, form=form, **page)
    if not form.is_valid():
        return _confirm_page(request, form=form, status=400, **page)
    try:
        session = session_reveal(session=session, actor=_actor(request))
    except ServiceError as error:
        add_service_error(form, error.message)
        return _confirm_page(request, form=form, status=error.status, **page)
    messages.success(request, f"Session {session.pk} is revealed; the report is ready.")
    return SeeOther(_session_url(session))


@host_required
def prereg_amend_view(request, session_id):
    session = session_for_host(host=request.host, session_id=session_id)
    if request.method != "POST":
        return _not_post()
    form = AmendForm(request.POST)
    if not form.is_valid():
        return _session_page(request, session, amend_form=form, status=400)
    try:
        amendment = prereg_amend(session=session, text=form.cleaned_data["text"],
                                 actor=_actor(request))
    except Conflict as error:  # a draft (edit the preregistration itself) or revealed
        return _session_page(request, session, error=error.message, status=error.status)
    except Invalid as error:
        add_service_error(form, error.message)
        return _session_page(request, session, amend_form=form, status=error.status)
    when = "before" if amendment.before_first_verdict else "after"
    messages.success(request, f"Amendment recorded ({when} the first verdict).")
    return SeeOther(_session_url(session) + "#amendments")


# --- Blinding check and planner ------------------------------------------------------------------

def _blinding_page(request, session, accept_form=None, error=None, status=200):
    check = blinding_check(session)
    accepted = {p.casefold() for p in session.redaction_patterns}
    # A suggestion is the matched text itself, without the invisible characters the matcher
    # looked through (literal patterns match across them too).
    suggestions = sorted(
        {_SPECIALS.sub("", m["matched"]) for c in check["copies"] for m in c["matches"]}
        - {""}, key=str.casefold,
    )
    suggestions = [s for s in suggestions if s.casefold() not in accepted]
    for copy in check["copies"]:
        copy["copy"] = _visible(copy["copy"])
        copy["stripped_metadata"] = [_visible(line) for line in copy["stripped_metadata"]]
        for match in copy["matches"]:
            match["matched"] = _visible(match["matched"])
            match["where"] = _visible(match["where"])
    return _render(request, "host/blinding.html", {
        "session": session, "run": session.run, "tab": "blinding", "check": check,
        "total_matches": sum(b["matches"] for b in check["builders"]),
        "suggestions": suggestions, "editable": session.state == SessionState.DRAFT,
        "accept_form": accept_form or RedactionAcceptForm(), "error": error,
    }, status=status)


@host_required
def blinding(request, session_id):
    session = session_for_host(host=request.host, session_id=session_id)
    return _blinding_page(request, session)


@host_required
def redactions(request, session_id):
    """Accept patterns (from the form, or one suggested match) or withdraw one."""
    session = session_for_host(host=request.host, session_id=session_id)
    if request.method != "POST":
        return _not_post()
    action = request.POST.get("action")
    form = None
    try:
        if action == "withdraw":
            pattern = request.POST.get("pattern", "")
            session = redactions_withdraw(session=session, patterns=[pattern],
                                          actor=_actor(request))
            messages.success(request, f"Pattern withdrawn: {pattern}")
        elif action == "suggest":
            pattern = request.POST.get("pattern", "")
            session = redactions_accept(session=session, patterns=[pattern], actor=_actor(request))
            messages.success(request, f"Pattern accepted: {pattern}")
        else:
            form = RedactionAcceptForm(request.POST)
            if not form.is_valid():
                return _blinding_page(request, session, accept_form=form, status=400)
            patterns = form.cleaned_data["patterns"]
            session = redactions_accept(session=session, patterns=patterns, actor=_actor(request))
            messages.success(request, f"{len(patterns)} pattern(s) accepted.")
    except (Invalid, Conflict) as error:
        if form is not None:
            add_service_error(form, error.message)
        return _blinding_page(request, session, accept_form=form, error=error.message,
                              status=error.status)
    return SeeOther(_session_url(session, "blinding"))


def _z(p: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(p))


@host_required
def planner(request, session_id):
    session = session_for_host(host=request.host, session_id=session_id)
    form = PlannerForm(request.GET or None)
    result = None
    error = None
    if form.is_bound and form.is_valid():
        data = form.cleaned_data
        alpha = 0.05 if data["alpha"] is None else data["alpha"]
        power = 0.80 if data["power"] is None else data["power"]
        from reports import stats

        try:
            n = stats.paired_sample_size(data["psi"], data["delta"], alpha=alpha, power=power)
        except ValueError as problem:
            error = str(problem)
        else:
            z_a, z_b = _z(1 - alpha / 2), _z(power)
            psi, delta = data["psi"], data["delta"]
            result = {
                "n": n, "psi": psi, "delta": delta, "alpha": alpha, "power": power,
                "z_alpha": z_a, "z_power": z_b,
                "exact": (z_a * math.sqrt(psi) + z_b * math.sqrt(psi - delta ** 2)) ** 2
                / delta ** 2,
            }
    truths = _item_truths(session)
    return _render(request, "host/planner.html", {
        "session": session, "run": session.run, "tab": "planner", "form": form,
        "result": result, "error": error, "truths": truths,
    }, status=400 if error or (form.is_bound and not form.is_valid()) else 200)


def _item_truths(session) -> dict:
    defective = good = unknown = 0
    for item in session.items.select_related("copy", "finding"):
        truth = item.finding.truth if item.finding_id else item.copy.truth
        if truth in DEFECTIVE:
            defective += 1
        elif truth in GOOD:
            good += 1
        else:
            unknown += 1
    return {"defective": defective, "good": good, "unknown": unknown,
            "per_judge": session.items_per_judge or defective + good + unknown}


# --- Invitations ---------------------------------------------------------------------------------

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
    return _render(request, "host/invitations.html", {
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
        return _not_post()
    form = InviteNameForm(request.POST)
    if not form.is_valid():
        return _invitations_page(request, session, name_form=form, status=400)
    try:
        invited = invitation_create(session=session, actor=_actor(request),
                                    name=form.cleaned_data["name"])
    except (Invalid, Conflict) as error:
        add_service_error(form, error.message)
        return _invitations_page(request, session, name_form=form, status=error.status)
    _show_once(request, kind="join_link", session=session.pk, name=invited.invitation.name,
               link=links.join_link(invited.join_token),
               expires_at=invited.expires_at.isoformat())
    messages.success(request, f"{invited.invitation.name} is invited.")
    return SeeOther(_session_url(session, "invitations"))


@host_required
def invite_github(request, session_id):
    session = session_for_host(host=request.host, session_id=session_id)
    if request.method != "POST":
        return _not_post()
    form = InviteGithubForm(request.POST)
    if not form.is_valid():
        return _invitations_page(request, session, github_form=form, status=400)
    listed, refused = [], []
    for login in form.cleaned_data["logins"]:
        try:
            invitation_create(session=session, actor=_actor(request), github_login=login)
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
    return SeeOther(_session_url(session, "invitations"))


# --- Guests --------------------------------------------------------------------------------------

def _guests_page(request, session, cap_form=None, error=None, status=200):
    return _render(request, "host/guests.html", {
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
        result = guests_configure(session=session, actor=_actor(request), **kwargs)
    except (Invalid, Conflict) as error:
        if cap_form is not None:
            add_service_error(cap_form, error.message)
        return _guests_page(request, session, cap_form=cap_form, error=error.message,
                            status=error.status)
    session = result.session
    if result.guest_code:
        _show_once(request, kind="guest_code", session=session.pk, code=result.guest_code,
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
    return SeeOther(_session_url(session, "guests"))


# --- Judges and progress -------------------------------------------------------------------------

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
             "answered2": j.phase2_answered, "name": _visible(j.display_name),
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
    return _render(request, "host/judges.html", {
        "session": session, "run": session.run, "tab": "judges", "error": error,
        "rows": rows, "progress": _progress_summary(session),
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
        return _not_post()
    try:
        token = resume_token_reissue(judge=judge, actor=_actor(request))
    except (Invalid, Conflict) as error:
        return _judges_page(request, session, error=error.message, status=error.status)
    _show_once(request, kind="resume_link", session=session.pk, judge=judge.pseudonym,
               link=links.resume_link(token))
    messages.success(request, f"New resume link for {judge.pseudonym}; the old one stopped working.")
    return SeeOther(_session_url(session, "judges"))


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
                     + (f" ({_visible(judge.display_name)})?" if judge.display_name else "?"),
            "consequences": consequences,
            "action": request.path, "button": button,
        }
        if request.method != "POST":
            return _confirm_page(request, form=form, **page)
        if not form.is_valid():
            return _confirm_page(request, form=form, status=400, **page)
        try:
            service(judge=judge, actor=_actor(request))
        except (Invalid, Conflict) as error:
            add_service_error(form, error.message)
            return _confirm_page(request, form=form, status=error.status, **page)
        messages.success(request, done.format(judge=judge))
        return SeeOther(_session_url(session, "judges"))

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
        return _not_post()
    try:
        admission = host_join(session=session, host=request.host)
    except (Invalid, Conflict) as error:
        return _judges_page(request, session, error=error.message, status=error.status)
    remember_judge(request, admission.judge)
    _show_once(request, kind="host_join", session=session.pk, judge=admission.judge.pseudonym,
               link=links.resume_link(admission.resume_token),
               commitment=admission.commitment_sha256, protocol=admission.protocol_sha256,
               judge_path=f"/s/{session.url_id}/")
    messages.success(request, f"You judge session {session.pk} as {admission.judge.pseudonym}; "
                              "your verdicts are reported apart, as self-blinded.")
    return SeeOther(_session_url(session, "judges"))


# --- Report --------------------------------------------------------------------------------------

@host_required
def report_download(request, session_id, fmt):
    session = session_for_host(host=request.host, session_id=session_id)
    if fmt not in REPORT_FORMATS:
        raise NotFound(f"no report format {fmt!r}")
    from reports.build import build_report
    from reports.export import anonymise, to_csv, to_json
    from reports.html import REPORT_CSP, to_html

    report = build_report(session)  # Conflict (409) before the reveal
    if fmt == "csv":
        body = to_csv(report).encode("utf-8")
    elif fmt == "html":
        body = to_html(report).encode("utf-8")
    else:
        body = to_json(anonymise(report) if fmt == "anon" else report)
    extension, content_type = REPORT_FORMATS[fmt]
    response = HttpResponse(body, content_type=content_type)
    # Only the numeric id and a fixed extension: nothing from the run (its name is the host's
    # free text) reaches the header.
    # The HTML report opens in the browser (saving keeps the name); the others download.
    disposition = "inline" if fmt == "html" else "attachment"
    response["Content-Disposition"] = (
        f'{disposition}; filename="blindjudge-session-{int(session.pk)}-report.{extension}"'
    )
    if fmt == "html":
        # The page's own policy (its one style block by hash, nothing else), set before the
        # CSP middleware, which then leaves it alone.
        response["Content-Security-Policy"] = REPORT_CSP
        response["Referrer-Policy"] = "no-referrer"
    response["Cache-Control"] = "no-store"
    return response

