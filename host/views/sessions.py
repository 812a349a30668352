"""A session's overview: the draft editor, its states (open, close, reopen, reveal) and amendments
to the preregistration.
"""

from django.contrib import messages
from django.urls import reverse

from accounts.guards import host_required
from blindjudge.errors import Conflict, Invalid, ServiceError
from host.forms import AmendForm, ConfirmForm, DraftForm, PlannerForm, add_service_error
from host.views.common import (
    SeeOther,
    actor_of,
    confirm_page,
    not_post,
    progress_summary,
    render_host_page,
    session_url,
)
from host.views.reports import REPORT_FORMATS
from judging.models import SessionState
from judging.selectors.host import session_for_host
from judging.services import (
    prereg_amend,
    session_close,
    session_open,
    session_reopen,
    session_reveal,
    session_update_draft,
)


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
        "progress": progress_summary(session),
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
    return render_host_page(request, "host/session.html", context, status=status)


@host_required
def session_detail(request, session_id):
    session = session_for_host(host=request.host, session_id=session_id)
    return _session_page(request, session)


@host_required
def session_edit(request, session_id):
    session = session_for_host(host=request.host, session_id=session_id)
    if request.method != "POST":
        return not_post()
    form = DraftForm(request.POST)
    if not form.is_valid():
        return _session_page(request, session, draft_form=form, status=400)
    data = form.cleaned_data
    try:
        session_update_draft(
            session=session, actor=actor_of(request), rubric=data["rubric"],
            preregistration=data["preregistration"], items_per_judge=data["items_per_judge"],
            reviewer_display=data["reviewer_display"], scorecards=data["scorecards"],
        )
    except Conflict as error:  # no longer a draft: the editor is gone, say why
        return _session_page(request, session, error=error.message, status=error.status)
    except Invalid as error:
        add_service_error(form, error.message)
        return _session_page(request, session, draft_form=form, status=error.status)
    messages.success(request, "Draft saved.")
    return SeeOther(session_url(session))


def _transition_view(service, done: str):
    @host_required
    def view(request, session_id):
        session = session_for_host(host=request.host, session_id=session_id)
        if request.method != "POST":
            return not_post()
        try:
            session = service(session=session, actor=actor_of(request))
        except ServiceError as error:
            return _session_page(request, session, error=error.message, status=error.status)
        messages.success(request, done.format(session=session))
        return SeeOther(session_url(session))

    view.__name__ = service.__name__ + "_view"
    return view


session_open_view = _transition_view(
    session_open, "Session {session.pk} is open; its protocol is frozen "
                  "(sha256 {session.protocol_sha256}).")
session_close_view = _transition_view(
    session_close, "Session {session.pk} is closed: no new verdicts until you reopen it.")
session_reopen_view = _transition_view(
    session_reopen, "Session {session.pk} is open again.")


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
        return confirm_page(request, form=form, **page)
    if not form.is_valid():
        return confirm_page(request, form=form, status=400, **page)
    try:
        session = session_reveal(session=session, actor=actor_of(request))
    except ServiceError as error:
        add_service_error(form, error.message)
        return confirm_page(request, form=form, status=error.status, **page)
    messages.success(request, f"Session {session.pk} is revealed; the report is ready.")
    return SeeOther(session_url(session))


@host_required
def prereg_amend_view(request, session_id):
    session = session_for_host(host=request.host, session_id=session_id)
    if request.method != "POST":
        return not_post()
    form = AmendForm(request.POST)
    if not form.is_valid():
        return _session_page(request, session, amend_form=form, status=400)
    try:
        amendment = prereg_amend(session=session, text=form.cleaned_data["text"],
                                 actor=actor_of(request))
    except Conflict as error:  # a draft (edit the preregistration itself) or revealed
        return _session_page(request, session, error=error.message, status=error.status)
    except Invalid as error:
        add_service_error(form, error.message)
        return _session_page(request, session, amend_form=form, status=error.status)
    when = "before" if amendment.before_first_verdict else "after"
    messages.success(request, f"Amendment recorded ({when} the first verdict).")
    return SeeOther(session_url(session) + "#amendments")
