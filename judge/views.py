"""The judge's pages: joining, the two phases, locks, the scorecard.

Guards first in every view: `judge_required` answers 404 to anyone but the judge this browser was
admitted as in the session the URL names. What a judge sees comes only from the judge selectors
(judging/selectors/judge.py), which never read builder identity or truth. Every change is a
service.
"""

from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.clickjacking import xframe_options_sameorigin
from django.views.decorators.http import require_http_methods

from accounts.guards import held_sessions, judge_held_by, judge_required, remember_judge
from blindjudge.errors import Conflict, Invalid, Refused, ServiceError, json_error, wants_json
from blindjudge.links import resume_link
from judge.pages import (
    flag_context,
    frame_response,
    item_context,
    items_context,
    judge_links,
    review_context,
)
from judging.enums import SessionKind, SessionState
from judging.selectors.judge import (
    join_link_admitted_here,
    judge_assignments,
    judge_by_resume_token,
    judge_frame,
    judge_item,
    judge_item_place,
    judge_phase,
    judge_progress,
    judge_review,
    judge_task_flag,
)
from judging.selectors.scorecard import judge_scorecard
from judging.services import (
    AlreadyAdmitted,
    ChangedElsewhere,
    guest_join,
    item_save,
    join_token_exchange,
    phase_lock,
    resume_token_reissue,
    task_flag_record,
)

WELCOME_KEY = "welcome:{url_id}"
REISSUED_KEY = "reissued:{url_id}"
# Why an item page shows verdicts without a form.
READ_ONLY_LOCKED = ("You have locked both phases: your verdicts are final and shown here read-only.")
READ_ONLY_ADJUDICATED = "You have locked your answers: they are final and shown here read-only."
READ_ONLY_CLOSED = ("The host has closed the session for now: your saved work is shown read-only "
                    "until it reopens.")
READ_ONLY_NOT_OPEN = "The session is {state}: verdicts are shown read-only."


@never_cache
def home(request):
    """The front page; for a browser that judges somewhere, the links to its sessions (their ids):
    never stored by a browser or a proxy (issue 25)."""
    return render(request, "home.html", {"judge_sessions": held_sessions(request)})


def show_admission(request, admission):
    """Bind the browser to the new judge and keep what must be shown once for the welcome page."""
    judge = admission.judge
    remember_judge(request, judge)
    request.session[WELCOME_KEY.format(url_id=judge.session.url_id)] = {
        "resume_link": resume_link(admission.resume_token),
        "commitment": admission.commitment_sha256,
        "protocol": admission.protocol_sha256,
    }
    return redirect("judge_welcome", url_id=judge.session.url_id)


@never_cache
@require_http_methods(["GET", "POST"])
def join(request, token):
    # The judges this browser is admitted as: a used link opened again where it admitted its
    # judge says so, and nowhere else (the refusal is the same for used and unknown links).
    held = frozenset(judge.pk for judge in (judge_held_by(request.session, url_id)
                                            for url_id in held_sessions(request)) if judge)
    # GET only shows a button: a link preview or a prefetch must not use the single-use token.
    if request.method == "GET":
        joined = join_link_admitted_here(token, held)
        return render(request, "judge/join.html", {"already_joined": joined} if joined else {})
    try:
        admission = join_token_exchange(token=token, held_judges=held)
    except AlreadyAdmitted as replay:
        return render(request, "judge/join.html", {"already_joined": replay.url_id})
    except Refused as refusal:
        return render(request, "judge/join.html", {"error": refusal.message},
                      status=refusal.status)
    return show_admission(request, admission)


@never_cache
@require_http_methods(["GET", "POST"])
def resume(request, token):
    if request.method == "GET":
        return render(request, "judge/resume.html")
    judge = judge_by_resume_token(token)
    remember_judge(request, judge)
    return redirect("judge_home", url_id=judge.session.url_id)


@never_cache
def resume_help(request):
    """How to come back without a join link: the resume link, GitHub, or the host."""
    return render(request, "judge/resume.html", {"help": True})


@never_cache
@require_http_methods(["GET", "POST"])
def guest(request):
    context = {"code": "", "name": "", "error": None}
    if request.method == "POST":
        context.update(code=request.POST.get("code", "")[:64], name=request.POST.get("name", "")[:200])
        try:
            return show_admission(request, guest_join(code=context["code"], display_name=context["name"],
                                              client_address=request.META.get("REMOTE_ADDR", ""),
                                              held_sessions=frozenset(held_sessions(request))))
        except AlreadyAdmitted as replay:
            return redirect("judge_home", url_id=replay.url_id)
        except (Invalid, Refused) as error:
            context["error"] = error.message
            status = error.status
            return render(request, "judge/guest.html", context, status=status)
    return render(request, "judge/guest.html", context)


@never_cache
@judge_required
def welcome(request, url_id):
    shown_once = request.session.pop(WELCOME_KEY.format(url_id=url_id), None)
    judge = request.judge
    links = judge_links(url_id)
    phase = judge_phase(judge)
    # "Start judging" opens the first item still to judge, not the list it is chosen from.
    start = items_context(session=judge.session, phase=phase, assignments=judge_assignments(judge),
                          answered=judge.answered(phase), links=links)["continue_url"] if phase else None
    return render(request, "judge/welcome.html", {
        "judge": judge, "session": judge.session, "shown_once": shown_once,
        "links": links, "start_url": start,
        "commitment": judge.commitment_sha256, "protocol": judge.session.protocol_sha256,
    })


@never_cache
@judge_required
def session_home(request, url_id):
    judge = request.judge
    session = judge.session
    if session.state == SessionState.REVEALED:
        if session.scorecards:
            return redirect("judge_scorecard", url_id=url_id)
        return render(request, "judge/ended.html", {"session": session, "revealed": True})
    phase = judge_phase(judge)
    context = items_context(session=session, phase=phase, assignments=judge_assignments(judge),
                            answered=judge.answered(phase) if phase else 0, links=judge_links(url_id))
    return render(request, "judge/session.html" if phase else "judge/ended.html", {
        **context, "judge": judge,
        # A reissued resume link, shown once (as at joining), after the reissue's redirect.
        "reissued_link": request.session.pop(REISSUED_KEY.format(url_id=url_id), None),
        "can_reissue": True,
    })


@never_cache
@judge_required
@require_http_methods(["GET", "POST"])
def reissue(request, url_id):
    """The judge reissues their own resume link: every earlier link and every browser session
    opened before end (a link they fear leaked stops working), and this browser is admitted again
    under the new link, shown once on the items page. A GET (the URL opened by hand) goes to the
    items page, where the button is."""
    judge = request.judge
    if request.method == "GET":
        return redirect("judge_home", url_id=url_id)
    if request.POST.get("reissue") != "yes":
        # Only the page's button: a stray POST must not end the judge's other browsers.
        raise Invalid("Use the button to reissue your resume link.")
    token = resume_token_reissue(judge=judge, actor=f"judge:{judge.pseudonym}")
    # The reissue ended this browser's admission too; admit it again as the new link would.
    remember_judge(request, judge_by_resume_token(token))
    request.session[REISSUED_KEY.format(url_id=url_id)] = resume_link(token)
    return redirect("judge_home", url_id=url_id)


@never_cache
@judge_required
@require_http_methods(["GET", "POST"])
def item(request, url_id, code):
    judge = request.judge
    session = judge.session
    if session.state == SessionState.REVEALED:
        raise Http404("no such page")
    if request.method == "POST":
        return _save_verdict(request, judge, url_id, code)
    return _item_page(request, judge, judge_item(judge, code))


def _save_verdict(request, judge, url_id, code):
    """A save (the page's autosave or its form), for the phase the page was rendered for (its
    hidden `phase` field): a verdict, or with an empty verdict the reason alone (kept as a draft
    before any verdict). A save for a phase locked since (a stale tab, a save in flight during the
    lock) is refused with 409 and stored nowhere; so is a save naming a `revision` older than the
    item's (another tab saved it since), unless it says `overwrite=1`, with the stored version in
    the answer. It needs for the form the neighbouring codes: never the whole item view with its
    phase-2 reviewer rows, built only when a refused form is shown again."""
    try:
        saved = item_save(judge=judge, code=code, phase=request.POST.get("phase"),
                          value=request.POST.get("verdict", ""),
                          reason=request.POST.get("reason", ""),
                          seconds_spent=request.POST.get("seconds_spent") or 0,
                          revision=request.POST.get("revision"),
                          overwrite=request.POST.get("overwrite") == "1")
    except ServiceError as error:
        if wants_json(request):
            extra = error.current if isinstance(error, ChangedElsewhere) else {}
            return json_error(error.status, error.code, error.message, saved=False, **extra)
        if isinstance(error, ChangedElsewhere):
            # What the judge sent is shown again (nothing is lost) over the stored version's
            # revision: sending the form again keeps theirs, as the message says.
            return _item_page(request, judge, judge_item(judge, code), error=error.message,
                              status=error.status, posted=request.POST)
        if isinstance(error, Conflict):
            # The page was out of date (a phase locked, the session closed): the item as it is
            # now, read-only when nothing can be saved, with what happened; nothing the stale
            # form held is carried over.
            judge.refresh_from_db(fields=["phase1_locked_at", "phase2_locked_at"])
            judge.session.refresh_from_db(fields=["state"])
            return _item_page(request, judge, judge_item(judge, code), error=error.message,
                              status=error.status)
        if not isinstance(error, Invalid):
            raise
        return _item_page(request, judge, judge_item(judge, code), error=error.message,
                          status=400, posted=request.POST)
    if wants_json(request):
        return JsonResponse({"saved": True, "revision": saved.revision,
                             "saved_at": saved.saved_at.isoformat()})
    go = request.POST.get("go", "next")
    if saved.verdict is None and go != "stay":
        # A reason without a verdict is kept, but the item is not answered: stay on it and say so.
        return _item_page(request, judge, judge_item(judge, code), status=400,
                          error="Your reason is saved as a draft. Choose a verdict to answer "
                                "this item.")
    if go == "stay":
        return redirect("judge_item", url_id=url_id, code=code)
    if go == "review":  # the last item's button, where its key goes: the review before the lock
        return redirect("judge_lock", url_id=url_id)
    if go in ("previous", "next"):
        place = judge_item_place(judge, code)
        target = place.previous_code if go == "previous" else place.next_code
        if target:
            return redirect("judge_item", url_id=url_id, code=target)
    return redirect("judge_home", url_id=url_id)


def _read_only_reason(judge, session) -> str | None:
    """Why the item page shows verdicts without a form, or None when the judge can save."""
    if session.state == SessionState.CLOSED:
        return READ_ONLY_CLOSED
    if session.state != SessionState.OPEN:
        return READ_ONLY_NOT_OPEN.format(state=session.state)
    if judge_phase(judge) is None:
        return READ_ONLY_ADJUDICATED if session.kind == SessionKind.ADJUDICATION else READ_ONLY_LOCKED
    return None


def _item_page(request, judge, view, *, error=None, status=200, posted=None):
    """The item page (judge.pages.item_context) of the judge's own item."""
    session = judge.session
    context = item_context(
        request, session=session, view=view, links=judge_links(session.url_id),
        progress=judge_progress(judge, view.phase, total=view.total),
        read_only_reason=_read_only_reason(judge, session), live_phase=judge_phase(judge),
        can_answer=session.state == SessionState.OPEN, error=error, posted=posted)
    if session.task_flags:
        context["task_flag"] = flag_context(
            url=reverse("judge_task_flag", kwargs={"url_id": session.url_id, "code": view.code}),
            phase=view.phase, mine=judge_task_flag(judge, view.code, view.phase),
            can_flag=context["open"] and not context["read_only"], code=view.code)
    return render(request, "judge/item.html", {**context, "judge": judge}, status=status)


@never_cache
@judge_required
@require_http_methods(["GET", "POST"])
def task_flag(request, url_id, code):
    """The judge's flag on the task of their item `code`, for the phase the page was rendered for
    (its hidden `phase`): kind, severity 0-3 and a reason (judging.services.task_flag_record). A
    later one before the lock replaces it. JSON answers {"saved": true, "flag": {...}} or the
    refusal; the plain form goes back to the item, and a refusal is shown on a page of its own
    with what was typed. The URL opened by hand (a GET) leads to the judge's items, whatever
    the code: a flag is only ever posted."""
    judge = request.judge
    if judge.session.state == SessionState.REVEALED:
        raise Http404("no such page")
    if request.method == "GET":
        return redirect("judge_home", url_id=url_id)
    try:
        flag = task_flag_record(judge=judge, code=code, phase=request.POST.get("phase"),
                                kind=request.POST.get("kind", ""),
                                severity=request.POST.get("severity", ""),
                                reason=request.POST.get("reason", ""))
    except ServiceError as error:
        if wants_json(request):
            return json_error(error.status, error.code, error.message, saved=False)
        if not isinstance(error, (Invalid, Conflict)):
            raise  # NotFound: the same 404 page as any other
        # An Invalid comes after the code was found the judge's own: back to that item; a
        # Conflict may come before (the session closed), so back to the judge's items.
        back = reverse("judge_item", kwargs={"url_id": url_id, "code": code}) \
            if isinstance(error, Invalid) else reverse("judge_home", kwargs={"url_id": url_id})
        # Alone on a page of its own, never the item page: what was wrong and, where it can
        # still be saved, the form again with what was typed (nothing of the item is read).
        context = {"error": error.message, "judge": judge, "task_flag": flag_context(
            url=request.path, phase=request.POST.get("phase", ""), mine=None,
            can_flag=isinstance(error, Invalid), posted=request.POST,
            code=code if isinstance(error, Invalid) else "", item_url=back)}
        return render(request, "judge/task_flag.html", context, status=error.status)
    if wants_json(request):
        return JsonResponse({"saved": True, "flag": {
            "kind": flag.kind, "severity": flag.severity, "reason": flag.reason,
            "locked": flag.locked}})
    return redirect("judge_item", url_id=url_id, code=code)


@never_cache
@xframe_options_sameorigin
@judge_required
def frame(request, url_id, code):
    """The copy, as a standalone document for `<iframe sandbox>`: nothing in it runs or loads.
    Served as stored when the session opened (judging/renders.py): this view renders nothing."""
    judge = request.judge
    if judge.session.state == SessionState.REVEALED:
        raise Http404("no such page")
    return frame_response(request, judge_frame(judge, code))


@never_cache
@judge_required
@require_http_methods(["GET", "POST"])
def lock(request, url_id):
    """GET: the review before the lock (every item with its verdict, reason and time, unanswered
    ones first); its one button locks once every item is answered. POST `confirm=yes` with the
    `phase` the page was rendered for: the lock of that phase. A review page left open in phase 1
    (another tab locked it since) is refused with 409 and locks nothing: never the phase the judge
    is in now."""
    judge = request.judge
    phase = judge_phase(judge)
    if phase is None or judge.session.state == SessionState.REVEALED:
        raise Http404("no such page")
    error = None
    if request.method == "POST":
        if request.POST.get("confirm") == "yes":
            # The service locks the posted phase only where it is the judge's phase now (one
            # already locked, or phase 2 before phase 1, is a 409) and every item is answered;
            # the list below is only for the page.
            phase_lock(judge=judge, phase=request.POST.get("phase"))
            return redirect("judge_home", url_id=url_id)
        error = "Use the lock button to confirm: locked verdicts can never be changed."
    context = review_context(session=judge.session, phase=phase, entries=judge_review(judge, phase),
                             links=judge_links(url_id), error=error)
    return render(request, "judge/review.html", {**context, "judge": judge},
                  status=400 if error else 200)


@never_cache
@judge_required
def scorecard(request, url_id):
    judge = request.judge
    card = judge_scorecard(judge)
    return render(request, "judge/scorecard.html", {"judge": judge, "session": judge.session,
                                                    "card": card})


def _card_entry(judge, code):
    """The scorecard's row for one of the judge's own codes; 404 where the judge has no scorecard
    (before the reveal, or where the host gave none) or the code is not on it."""
    for entry in judge_scorecard(judge)["items"]:
        if entry["code"] == code:
            return entry
    raise Http404("no such page")


@never_cache
@judge_required
def card(request, url_id, code):
    """After the reveal, where the host gave scorecards: one code of the judge's scorecard with the
    copy they judged under it (the stored frame, judge_card_frame), the known answer, the defect
    note and their verdicts, in words."""
    judge = request.judge
    entry = _card_entry(judge, code)
    return render(request, "judge/card.html", {"judge": judge, "session": judge.session,
                                               "item": entry})


@never_cache
@xframe_options_sameorigin
@judge_required
def card_frame(request, url_id, code):
    """The copy behind a scorecard code: the very bytes and headers of the judging frame, served
    only where the card page itself is."""
    judge = request.judge
    _card_entry(judge, code)
    return frame_response(request, judge_frame(judge, code))
