"""The blinding check (what will be stripped, what names match, which patterns to redact) and the
sample-size planner.
"""

from host.forms import PlannerForm, RedactionAcceptForm
from host.views.common import (
    SPECIAL_CHARACTERS,
    actor_of,
    for_host_session,
    host_change,
    render_host_page,
    session_url,
    visible,
)
from judging.models import SessionState
from judging.selectors.host import blinding_check, item_truth_counts
from judging.services import redactions_accept, redactions_withdraw, text_limit
from reports.stdlib_stats import paired_sample_plan


def _blinding_page(request, session, accept_form=None, error=None, status=200):
    check = blinding_check(session)
    accepted = {p.casefold() for p in session.redaction_patterns}
    # A suggestion is the matched text itself, without the invisible characters the matcher
    # looked through (literal patterns match across them too).
    suggestions = sorted(
        {SPECIAL_CHARACTERS.sub("", m["matched"])
         for c in check["copies"] + check["texts"] for m in c["matches"]}
        - {""}, key=str.casefold,
    )
    suggestions = [s for s in suggestions if s.casefold() not in accepted]
    for text in check["texts"]:
        for match in text["matches"]:
            match["matched"] = visible(match["matched"])
            match["context"] = visible(match["context"])
    for copy in check["copies"]:
        copy["copy"] = visible(copy["copy"])
        copy["stripped_metadata"] = [visible(line) for line in copy["stripped_metadata"]]
        for match in copy["matches"]:
            match["matched"] = visible(match["matched"])
            match["where"] = visible(match["where"])
    return render_host_page(request, "host/blinding.html", {
        "session": session, "run": session.run, "tab": "blinding", "check": check,
        "total_matches": sum(b["matches"] for b in check["builders"])
        + sum(len(t["matches"]) for t in check["texts"]),
        "suggestions": suggestions, "editable": session.state == SessionState.DRAFT,
        "accept_form": accept_form or RedactionAcceptForm(), "error": error,
    }, status=status)


@for_host_session
def blinding(request, session):
    return _blinding_page(request, session)


@for_host_session
def redactions(request, session):
    """Accept patterns (from the form, or one suggested match) or withdraw one."""
    action = request.POST.get("action")
    pattern = request.POST.get("pattern", "")
    form = None
    limit = text_limit("pattern")
    if action in ("withdraw", "suggest") and len(pattern) > limit:
        # No accepted pattern is that long; the refusal must not quote it back whole.
        return _blinding_page(request, session, status=400,
                              error=f"pattern: limited to {limit:,} characters "
                                    f"(this one has {len(pattern):,})")

    def change(data):
        if action == "withdraw":
            redactions_withdraw(session=session, patterns=[pattern], actor=actor_of(request))
            return f"Pattern withdrawn: {pattern}", session_url(session, "blinding")
        if action == "suggest":
            redactions_accept(session=session, patterns=[pattern], actor=actor_of(request))
            return f"Pattern accepted: {pattern}", session_url(session, "blinding")
        redactions_accept(session=session, patterns=data["patterns"], actor=actor_of(request))
        return f"{len(data['patterns'])} pattern(s) accepted.", session_url(session, "blinding")

    if action not in ("withdraw", "suggest"):
        form = RedactionAcceptForm(request.POST)
    return host_change(request, form=form, change=change, refusal_on_both=True,
                       page=lambda form=None, **shown: _blinding_page(request, session,
                                                                      accept_form=form, **shown))


@for_host_session
def planner(request, session):
    form = PlannerForm(request.GET or None)
    result = None
    error = None
    if form.is_bound and form.is_valid():
        data = form.cleaned_data
        alpha = 0.05 if data["alpha"] is None else data["alpha"]
        power = 0.80 if data["power"] is None else data["power"]
        try:
            result = paired_sample_plan(data["psi"], data["delta"], alpha=alpha, power=power)
        except ValueError as problem:
            error = str(problem)
    return render_host_page(request, "host/planner.html", {
        "session": session, "run": session.run, "tab": "planner", "form": form,
        "result": result, "error": error, "truths": item_truth_counts(session),
    }, status=400 if error or (form.is_bound and not form.is_valid()) else 200)
