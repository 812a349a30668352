"""The host's instructions to judges (issue 17 item 2): written in the draft, previewed as judges
will see them, frozen with the protocol at opening.

The preview renders the text through the same normaliser and inert renderer as the rubric, with
the accepted redactions (judging.renders.prose_of), for this page only: nothing is stored until
"Save", and what judges get is rendered again when the session opens.
"""

from blindjudge.errors import Conflict
from content.instructions import mark_meanings, time_estimate, verdict_keys
from host.forms import InstructionsForm
from host.views.common import (
    actor_of,
    for_host_session,
    host_change,
    render_host_page,
    session_url,
)
from judging.enums import SessionState
from judging.renders import prose_of
from judging.selectors.host import items_per_judge, session_instructions_html
from judging.services import session_update_draft

FROZEN = ("The instructions froze with the protocol when the session opened: they can no longer "
          "change. Nothing was saved.")


def _page(request, session, *, form=None, preview_html=None, previewed=False, error=None,
          status=200):
    draft = session.state == SessionState.DRAFT
    if form is None and draft:
        form = InstructionsForm(initial={"instructions": session.instructions,
                                         "minutes_per_item": session.minutes_per_item})
    if draft and preview_html is None:
        # The saved text as judges would see it now (opening renders it again, for good).
        preview_html = prose_of(session.instructions, session.redaction_patterns)
    minutes = session.minutes_per_item
    if form is not None and form.is_bound and form.is_valid():
        minutes = form.cleaned_data["minutes_per_item"]
    return render_host_page(request, "host/instructions.html", {
        "session": session, "run": session.run, "tab": "instructions", "error": error,
        "draft": draft, "form": form if draft else None,
        "previewed": previewed, "preview_html": preview_html,
        "stored_html": "" if draft else session_instructions_html(session),
        # The product's parts, as a judge with the session's items per judge will see them.
        "estimate": time_estimate(items_per_judge(session), minutes),
        "verdict_keys": verdict_keys(session.kind), "marks": mark_meanings(),
        "one_key": getattr(session, "advance_on_key", False),
    }, status=status)


@for_host_session
def instructions(request, session):
    """GET: the editor (a draft) or the frozen text and its stored render. POST with
    action=preview: the text rendered as judges will see it, nothing saved; otherwise: save."""
    if request.method != "POST":
        return _page(request, session)
    if session.state != SessionState.DRAFT:
        return _page(request, session, error=FROZEN, status=409)
    form = InstructionsForm(request.POST)
    if request.POST.get("action") == "preview":
        if not form.is_valid():
            return _page(request, session, form=form, status=400)
        return _page(request, session, form=form, previewed=True,
                     preview_html=prose_of(form.cleaned_data["instructions"],
                                           session.redaction_patterns))

    def change(data):
        try:
            session_update_draft(session=session, actor=actor_of(request),
                                 instructions=data["instructions"],
                                 minutes_per_item=data["minutes_per_item"])
        except Conflict:
            # Opened since this view's check: the service refuses under the session's row lock.
            session.refresh_from_db(fields=["state"])
            raise Conflict(FROZEN) from None
        return "Instructions saved.", session_url(session, "instructions")

    return host_change(request, form=form, change=change, refused_on_page=(Conflict,),
                       page=lambda form=None, **shown: _page(request, session, form=form, **shown))
