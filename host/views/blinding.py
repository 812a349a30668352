"""The blinding check (what will be stripped, what names match, which patterns to redact) and the
sample-size planner.
"""

import math

from django.contrib import messages

from accounts.guards import host_required
from blindjudge.errors import Conflict, Invalid
from content.truth import DEFECTIVE, GOOD
from host.forms import PlannerForm, RedactionAcceptForm, add_service_error
from host.views.common import (
    SPECIAL_CHARACTERS,
    SeeOther,
    actor_of,
    not_post,
    render_host_page,
    session_url,
    visible,
)
from judging.models import SessionState
from judging.selectors.host import blinding_check, session_for_host
from judging.services import redactions_accept, redactions_withdraw


def _blinding_page(request, session, accept_form=None, error=None, status=200):
    check = blinding_check(session)
    accepted = {p.casefold() for p in session.redaction_patterns}
    # A suggestion is the matched text itself, without the invisible characters the matcher
    # looked through (literal patterns match across them too).
    suggestions = sorted(
        {SPECIAL_CHARACTERS.sub("", m["matched"]) for c in check["copies"] for m in c["matches"]}
        - {""}, key=str.casefold,
    )
    suggestions = [s for s in suggestions if s.casefold() not in accepted]
    for copy in check["copies"]:
        copy["copy"] = visible(copy["copy"])
        copy["stripped_metadata"] = [visible(line) for line in copy["stripped_metadata"]]
        for match in copy["matches"]:
            match["matched"] = visible(match["matched"])
            match["where"] = visible(match["where"])
    return render_host_page(request, "host/blinding.html", {
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
        return not_post()
    action = request.POST.get("action")
    form = None
    try:
        if action == "withdraw":
            pattern = request.POST.get("pattern", "")
            session = redactions_withdraw(session=session, patterns=[pattern],
                                          actor=actor_of(request))
            messages.success(request, f"Pattern withdrawn: {pattern}")
        elif action == "suggest":
            pattern = request.POST.get("pattern", "")
            session = redactions_accept(session=session, patterns=[pattern], actor=actor_of(request))
            messages.success(request, f"Pattern accepted: {pattern}")
        else:
            form = RedactionAcceptForm(request.POST)
            if not form.is_valid():
                return _blinding_page(request, session, accept_form=form, status=400)
            patterns = form.cleaned_data["patterns"]
            session = redactions_accept(session=session, patterns=patterns, actor=actor_of(request))
            messages.success(request, f"{len(patterns)} pattern(s) accepted.")
    except (Invalid, Conflict) as error:
        if form is not None:
            add_service_error(form, error.message)
        return _blinding_page(request, session, accept_form=form, error=error.message,
                              status=error.status)
    return SeeOther(session_url(session, "blinding"))


def _z(p: float) -> float:
    from scipy.stats import norm  # noqa: PLC0415 - reports and numpy load only in a process that serves the host

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
        from reports import stats  # noqa: PLC0415 - reports and numpy load only in a process that serves the host

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
    return render_host_page(request, "host/planner.html", {
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
