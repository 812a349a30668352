"""A host's preview of the judge's pages (issue 17 item 3), on host-guarded URLs under
/host/sessions/<id>/preview/.

The judge's own templates, filled by the judge's own context builders (judge/pages.py) from the
preview selectors (judging/selectors/preview.py), which read what a judge's selectors read. It
stores nothing: no judge, assignment, verdict, draft, socket or audit row; nobody is counted. A
choice made on an item page stays in that page (static/judge/judge.js sends no save in a
preview); a form posted without scripts is answered by moving on, with nothing kept.

Guards first: `host_required`, then `preview_session`, which gives another host's session, or one
no longer in draft or open, the same 404 as one that does not exist.
"""

import secrets

from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.clickjacking import xframe_options_sameorigin
from django.views.decorators.http import require_http_methods, require_safe

from accounts.guards import host_required
from blindjudge.errors import Invalid, json_error, wants_json
from judge.pages import (
    PageLinks,
    flag_context,
    frame_response,
    instructions_context,
    item_context,
    items_context,
    review_context,
)
from judging.enums import SessionKind
from judging.selectors.judge import JudgeProgress
from judging.selectors.preview import (
    PREVIEW_SEED,
    preview_frame,
    preview_instructions,
    preview_item,
    preview_session,
    preview_slots,
)
from judging.services import task_flag_checked

PHASES = (1, 2)


def _links(session_id: int, seed: str, phase: int) -> PageLinks:
    def at(name, **extra):
        return reverse(name, kwargs={"session_id": session_id, "seed": seed, "phase": phase,
                                     **extra})

    return PageLinks(home=at("preview_home"), instructions=at("preview_instructions"),
                     review=at("preview_review"),
                     item=lambda code: at("preview_item", code=code),
                     frame=lambda code: at("preview_frame", code=code))


def _banner(session, seed: str, phase: int) -> dict:
    other = 2 if phase == 1 else 1
    return {
        "phase": phase, "other_phase": other,
        "other_phase_url": reverse("preview_home", kwargs={"session_id": session.pk, "seed": seed,
                                                           "phase": other}),
        "again_url": reverse("preview_start", kwargs={"session_id": session.pk}),
        "exit_url": reverse("host:session", kwargs={"session_id": session.pk}),
    }


def _previewed(view):
    """Guards of every preview page after the host's: the session (the host's own, in draft or
    open) and the phase; the view gets them with the page links."""
    def guarded(request, session_id, seed, phase, **kwargs):
        session = preview_session(request.host, session_id)
        if phase not in PHASES or not PREVIEW_SEED.match(seed):
            raise Http404("no such preview")
        if phase == 2 and session.kind == SessionKind.ADJUDICATION:
            raise Http404("no such preview")  # an adjudication has one phase
        request.preview = {"links": _links(session_id, seed, phase),
                           "banner": _banner(session, seed, phase)}
        return view(request, session, seed, phase, **kwargs)

    return guarded


def _page(request, template, context):
    return render(request, template, {**context, "preview": request.preview["banner"]})


@never_cache
@host_required
@require_safe
def start(request, session_id):
    """A new preview: a fresh draw of the session's items and codes, from the welcome page."""
    preview_session(request.host, session_id)
    return redirect("preview_welcome", session_id=session_id, seed=secrets.token_hex(8), phase=1)


@never_cache
@host_required
@require_safe
@_previewed
def welcome(request, session, seed, phase):
    links = request.preview["links"]
    start = items_context(session=session, phase=phase, assignments=_assignments(session, seed),
                          answered=0, links=links)["continue_url"]
    return _page(request, "judge/welcome.html", {"session": session, "links": links,
                                                 "start_url": start})


@never_cache
@host_required
@require_safe
@_previewed
def instructions(request, session, seed, phase):
    return _page(request, "judge/instructions.html", instructions_context(
        session=session, shown=preview_instructions(session, seed, phase),
        links=request.preview["links"]))


def _assignments(session, seed) -> list[dict]:
    return [{"code": slot.code, "position": slot.position, "answered": set()}
            for slot in preview_slots(session, seed)]


@never_cache
@host_required
@require_safe
@_previewed
def home(request, session, seed, phase):
    return _page(request, "judge/session.html", items_context(
        session=session, phase=phase, assignments=_assignments(session, seed), answered=0,
        links=request.preview["links"]))


@never_cache
@host_required
@require_http_methods(["GET", "POST"])
@_previewed
def item(request, session, seed, phase, code):
    view = preview_item(session, seed, code, phase)
    if request.method == "POST":
        # The form posted without scripts: nothing is kept; it moves as the judge's would.
        go = request.POST.get("go", "next")
        target = {"next": view.next_code, "previous": view.previous_code,
                  "stay": view.code}.get(go)
        links = request.preview["links"]
        return redirect(links.item(target) if target else links.review if go in ("next", "review")
                        else links.home)
    context = item_context(
        request, session=session, view=view, links=request.preview["links"],
        progress=JudgeProgress(answered=0, total=view.total, median_seconds=None,
                               remaining_seconds=None),
        read_only_reason=None, live_phase=None, can_answer=True)
    if session.task_flags:
        context["task_flag"] = flag_context(
            url=reverse("preview_task_flag", kwargs={"session_id": session.pk, "seed": seed,
                                                     "phase": phase, "code": view.code}),
            phase=phase, mine=None, can_flag=True, code=view.code)
    return _page(request, "judge/item.html", context)


@never_cache
@host_required
@require_http_methods(["GET", "POST"])
@_previewed
def task_flag(request, session, seed, phase, code):
    """A task flag from a previewed item page: checked as a judge's is (the flag's own fields:
    judging.services.task_flag_checked) and answered as theirs is, in JSON, but stored nowhere,
    so the page shows it until it is left; the plain form, and the URL opened by hand, go back
    to the item. A session that collects no task flags has no such page."""
    if not session.task_flags or all(slot.code != code for slot in preview_slots(session, seed)):
        raise Http404("no such item")
    back = request.preview["links"].item(code)
    if request.method == "GET":
        return redirect(back)
    try:
        kind, severity, reason = task_flag_checked(
            kind=request.POST.get("kind", ""), severity=request.POST.get("severity", ""),
            reason=request.POST.get("reason", ""))
    except Invalid as error:
        if wants_json(request):
            return json_error(error.status, error.code, error.message, saved=False)
        return redirect(back)
    if wants_json(request):
        return JsonResponse({"saved": True, "preview": True, "flag": {
            "kind": kind, "severity": severity, "reason": reason, "locked": False}})
    return redirect(back)


@never_cache
@xframe_options_sameorigin
@host_required
@require_safe
@_previewed
def frame(request, session, seed, phase, code):
    return frame_response(request, preview_frame(session, seed, code))


@never_cache
@host_required
@require_safe
@_previewed
def review(request, session, seed, phase):
    entries = [{"code": slot.code, "position": slot.position, "verdict": None}
               for slot in preview_slots(session, seed)]
    return _page(request, "judge/review.html", review_context(
        session=session, phase=phase, entries=entries, links=request.preview["links"]))
