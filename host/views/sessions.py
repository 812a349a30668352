"""A session's overview: the draft editor, its states (open, close, reopen, reveal) and amendments
to the preregistration.
"""

from django.http import JsonResponse
from django.urls import reverse
from django.views.decorators.http import require_safe

from blindjudge.errors import Conflict, ServiceError
from host.forms import AmendForm, ConfirmForm, DraftForm, PlannerForm
from host.views.common import (
    actor_of,
    confirm_page,
    for_host_session,
    host_change,
    render_host_page,
    session_url,
    visible,
)
from judging.enums import SessionKind, SessionState
from judging.selectors.host import (
    adjudication_partners,
    amendments_of,
    blinding_check,
    item_count,
    opening_progress,
    session_events,
    session_lock_counts,
)
from judging.selectors.live import session_totals
from judging.services import (
    prereg_amend,
    protocol_of,
    resampling_unit,
    session_close,
    session_open_start,
    session_reopen,
    session_reveal,
    session_update_draft,
)
from reports.offprocess import prestart as prestart_report_builder
from reports.render import REPORT_FORMATS


def _draft_form_for(session):
    return DraftForm(initial={
        "rubric": session.rubric, "preregistration": session.preregistration,
        "items_per_judge": session.items_per_judge, "reviewer_display": session.reviewer_display,
        "scorecards": session.scorecards, "advance_on_key": session.advance_on_key,
        "mark_disagreement": session.mark_disagreement, "task_flags": session.task_flags,
        "verdict_min_shown_ms": session.verdict_min_shown_ms,
    })


def _session_page(request, session, *, draft_form=None, amend_form=None, error=None,
                  status=200):
    state = session.state
    context = {
        "session": session, "run": session.run, "tab": "overview", "error": error,
        "item_count": item_count(session),
        "totals": session_totals(session.pk),
        "draft_form": (draft_form or _draft_form_for(session)) if state == SessionState.DRAFT
        else None,
        "amend_form": (amend_form or AmendForm())
        if state in (SessionState.OPEN, SessionState.CLOSED) else None,
        "amendments": amendments_of(session),
        "planner_form": PlannerForm(),
        "events": session_events(session),
        # An adjudication has no report of its own: the reports of its partners use it.
        "report_formats": list(REPORT_FORMATS)
        if state == SessionState.REVEALED and session.kind != SessionKind.ADJUDICATION else [],
        "partners": adjudication_partners(session),
        "opening": opening_progress(session) if state == SessionState.DRAFT else None,
        # Judges come and lock only while a session is open or closed (to be reopened): there the
        # counts and the state follow over the host's socket.
        "live": state in (SessionState.OPEN, SessionState.CLOSED),
    }
    return render_host_page(request, "host/session.html", context, status=status)


@for_host_session
def session_detail(request, session):
    if session.state == SessionState.REVEALED and session.kind != SessionKind.ADJUDICATION:
        prestart_report_builder()  # the report's links are on this page
    return _session_page(request, session)


@for_host_session
def session_edit(request, session):
    def change(data):
        session_update_draft(
            session=session, actor=actor_of(request), rubric=data["rubric"],
            preregistration=data["preregistration"], items_per_judge=data["items_per_judge"],
            reviewer_display=data["reviewer_display"], scorecards=data["scorecards"],
            advance_on_key=data["advance_on_key"], mark_disagreement=data["mark_disagreement"],
            verdict_min_shown_ms=data["verdict_min_shown_ms"], task_flags=data["task_flags"],
        )
        return "Draft saved.", session_url(session)

    # A Conflict means the session is no longer a draft: the editor is gone, so say why on the page.
    return host_change(request, form=DraftForm(request.POST), change=change, refused_on_page=(Conflict,),
                       page=lambda form=None, **shown: _session_page(request, session, draft_form=form,
                                                                     **shown))


def _transition_view(service, done: str):
    @for_host_session
    def view(request, session):
        def change(_):
            changed = service(session=session, actor=actor_of(request))
            return done.format(session=changed), session_url(changed)

        return host_change(request, change=change, refusals=(ServiceError,),
                           page=lambda **shown: _session_page(request, session, **shown))

    view.__name__ = service.__name__ + "_view"
    return view


_open_change = _transition_view(
    session_open_start, "Opening session {session.pk}: everything its judges will see is being "
                        "rendered; this page shows how far it has got, and the protocol freezes "
                        "when it is done.")


@for_host_session
@require_safe
def session_opening(request, session):
    """The opening's progress as JSON, for the session page's script (static/host/opening.js)
    while the opening renders: `running`, `rendered` of `to_render`, `stalled`, `failure`, `state`."""
    response = JsonResponse(opening_progress(session))
    response["Cache-Control"] = "no-store"
    return response

# What each key of the frozen protocol (judging.services.protocol_of) means to a host, in the
# confirmation before opening. A key not named here (a newer protocol's) is listed by its name.
PROTOCOL_PARTS = {
    "kind": "what judges judge ({kind})",
    "tasks": "the tasks: titles and statements",
    "rubric": "the rubric",
    "instructions": "your instructions to judges",
    "minutes_per_item": "the minutes-per-item estimate judges are told ({minutes_per_item})",
    "items": "the items: which copies (and findings) are judged, by content hash",
    "items_per_judge": "items per judge ({items_per_judge})",
    "redaction_patterns": "the redactions ({redactions} accepted pattern{redactions_plural})",
    "blinding_dismissed": "the matched names kept on purpose ({dismissed})",
    "reviewer_display": "how model reviewers are shown in phase 2",
    "scorecards": "whether judges see their own scorecard after the reveal",
    "preregistration": "the preregistration (later amendments are dated, marked before or after "
                       "the first verdict)",
    "decision_rules": "the preregistration's decision rules",
    "allocation_seed": "the allocation and draws (each judge's items, order and codes)",
    "by_task": "judging by whole tasks",
    "task_flags": "that judges may flag tasks as invalid (you see the flags after the reveal)",
    "verdict_min_shown_ms": "the shortest time a copy is shown before a verdict counts "
                            "({verdict_min_shown_ms} ms)",
    "primary_comparison": "the preregistered primary comparison",
    "alpha": "the preregistered significance level",
    "actions": "the preregistered rules that exclude tasks or judges",
    "screening": "the commitment to the seed that draws the controls judges are screened on "
                 "(the seed and what it draws are published at the reveal)",
    "resampling_unit": "the unit every interval and p-value of the report rests on ({unit})",
}
PROTOCOL_INTERNALS = {"blindjudge_protocol", "canonical"}  # the format's version and hash form
STILL_CHANGEABLE = [
    "Who may join: invitations, GitHub logins and guests (allowed or not, the cap, the code).",
    "Closing and reopening the session, until the reveal.",
    "Judges: reissuing links, removing a judge, erasing an identity.",
    "Truth labels of the run: corrections are dated and the report scores under both versions.",
]


def _unit_words(run) -> str:
    unit = resampling_unit(run)
    if unit["by"] is None:
        return "one task and no clusters: none to resample"
    noun = {"cluster": "declared cluster", "task": "task"}[unit["by"]]
    return f"each {noun}: {unit['units']} of them"


def _frozen_parts(session) -> list[str]:
    try:
        keys = list(protocol_of(session))
    except ServiceError:  # a preregistration that does not parse: opening will say so
        keys = list(PROTOCOL_PARTS)
    redactions = len(session.redaction_patterns)
    values = {"kind": session.kind, "items_per_judge": session.items_per_judge or "all",
              "minutes_per_item": session.minutes_per_item,
              "verdict_min_shown_ms": session.verdict_min_shown_ms,
              "redactions": redactions, "redactions_plural": "" if redactions == 1 else "s",
              "dismissed": ", ".join(session.blinding_dismissed),
              "unit": _unit_words(session.run)}
    return [PROTOCOL_PARTS.get(key, key.replace("_", " ")).format(**values)
            for key in keys if key not in PROTOCOL_INTERNALS]


def _missing_parts(session) -> list[str]:
    """What the host has not written, said before it freezes without it."""
    missing = []
    if not session.rubric.strip():
        missing.append("No rubric: judges decide with the task and the copy alone, and the "
                       "protocol freezes without one.")
    if not session.instructions.strip():
        missing.append("No instructions: judges get the standard instructions only (how to "
                       "judge here, the keys), nothing of yours.")
    return missing


@for_host_session
def session_open_view(request, session):
    """GET: what opening freezes and what it does not, what is missing, and the matches the
    blinding check leaves undecided (opening is refused while there are any), with the button;
    POST: open."""
    if request.method == "POST":
        return _open_change(request, session_id=session.pk)
    draft = session.state == SessionState.DRAFT
    undecided = blinding_check(session, counts=False)["undecided"] if draft else []
    for entry in undecided:
        entry["matched"] = visible(entry["matched"])
        entry["first"] = visible(entry["first"])
    return render_host_page(request, "host/open_confirm.html", {
        "session": session, "run": session.run, "tab": "overview",
        "frozen": _frozen_parts(session), "changeable": STILL_CHANGEABLE, "draft": draft,
        "missing": _missing_parts(session) if draft else [], "undecided": undecided,
    })
session_close_view = _transition_view(
    session_close, "Session {session.pk} is closed: no new verdicts until you reopen it.")
session_reopen_view = _transition_view(
    session_reopen, "Session {session.pk} is open again.")


REVEAL_LABEL = "I understand that the reveal cannot be undone"


def _unlocked_lines(session) -> list[str]:
    """How many judges never locked, said before the reveal ends judging for good: the report
    scores locked verdicts only and reports drafts apart (reports.sections.scores)."""
    counts = session_lock_counts(session)
    lines = []
    if counts["never_locked"]:
        lines.append(
            f"{counts['never_locked']} of {counts['active']} judge{'s' if counts['active'] != 1 else ''} "
            f"never locked phase 1: their drafts are not scored; the report counts them apart, "
            "as unlocked drafts.")
    if counts["phase2_unlocked"]:
        lines.append(
            f"{counts['phase2_unlocked']} locked phase 1 but never phase 2: their phase-2 drafts "
            "are reported apart too.")
    if not lines and counts["active"]:
        lines.append(f"All {counts['active']} active judges locked both phases.")
    return lines


@for_host_session
def session_reveal_view(request, session):
    form = ConfirmForm(request.POST if request.method == "POST" else None, label=REVEAL_LABEL)
    page = {
        "session": session, "tab": "overview", "title": f"Reveal session {session.pk}?",
        "consequences": [
            *_unlocked_lines(session),
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

    def change(_):
        revealed = session_reveal(session=session, actor=actor_of(request))
        return f"Session {revealed.pk} is revealed; the report is ready.", session_url(revealed)

    return host_change(request, form=form, change=change, refusals=(ServiceError,),
                       page=lambda form, status, error=None: confirm_page(request, form=form,
                                                                          status=status, **page))


@for_host_session
def prereg_amend_view(request, session):
    def change(data):
        amendment = prereg_amend(session=session, text=data["text"], actor=actor_of(request))
        when = "before" if amendment.before_first_verdict else "after"
        return f"Amendment recorded ({when} the first verdict).", session_url(session) + "#amendments"

    # A Conflict: a draft (edit the preregistration itself) or a revealed session; said on the page.
    return host_change(request, form=AmendForm(request.POST), change=change, refused_on_page=(Conflict,),
                       page=lambda form=None, **shown: _session_page(request, session, amend_form=form,
                                                                     **shown))
