"""The blinding check (what will be stripped, what names match, which patterns to redact) and the
sample-size planner.
"""

import math

from content.stdlib_stats import paired_sample_plan
from host.forms import MAX_PATTERNS, PlannerForm, RedactionAcceptForm
from host.views.common import (
    SPECIAL_CHARACTERS,
    actor_of,
    for_host_session,
    host_change,
    render_host_page,
    session_url,
    visible,
)
from judging.enums import SessionState
from judging.renders import prose_of
from judging.selectors.host import blinding_check, copy_for_preview, item_truth_counts
from judging.services import (
    blinding_dismiss,
    blinding_undismiss,
    redactions_accept,
    redactions_withdraw,
    text_limit,
)


def _suggestions(session, check) -> list[str]:
    """The undecided matches (neither redacted nor kept on purpose), each as the literal pattern
    that would redact it: the matched text itself, without the invisible characters the matcher
    looked through (literal patterns match across them too)."""
    suggestions = {}
    for undecided in check["undecided"]:
        term = SPECIAL_CHARACTERS.sub("", undecided["matched"])
        if term:
            suggestions.setdefault(term.casefold(), term)
    return sorted(suggestions.values(), key=str.casefold)


def _redacted_preview(session, check) -> dict | None:
    """One copy as a judge will see it, with the accepted redactions applied: the first copy with
    a match (else the first copy), through the same normaliser and inert renderer as the frames
    judges get (judging.renders.prose_of), computed for this page and never stored."""
    with_match = next((c["copy"] for c in check["copies"] if c["matches"]), None)
    copy = copy_for_preview(session, with_match)
    if copy is None:
        return None
    # The frame's normaliser (metadata stripped, patterns redacted, hidden characters marked) and
    # its inert renderer, as escaped text whatever the format: the host reads what a judge will
    # read, without a copy's markdown headings and layout landing in the host's own page.
    html = prose_of(copy.content, session.redaction_patterns, fmt="text")
    return {"copy": visible(copy.bundle_id), "format": copy.format, "html": html}


def _blinding_page(request, session, accept_form=None, error=None, status=200):
    check = blinding_check(session)
    suggestions = _suggestions(session, check)
    preview = _redacted_preview(session, check)
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
        # Not "preview": base.html reads that name as a host's preview of the judge's pages.
        "redacted_preview": preview,
        "accept_form": accept_form or RedactionAcceptForm(), "error": error,
    }, status=status)


@for_host_session
def blinding(request, session):
    return _blinding_page(request, session)


@for_host_session
def redactions(request, session):
    """Accept patterns (from the form, or one suggested match) or withdraw one; keep a match on
    purpose (dismiss it) or take that back."""
    action = request.POST.get("action")
    pattern = request.POST.get("pattern", "")
    form = None
    limit = text_limit("pattern")
    if action in ("withdraw", "suggest", "dismiss", "undismiss") and len(pattern) > limit:
        # No accepted pattern is that long; the refusal must not quote it back whole.
        return _blinding_page(request, session, status=400,
                              error=f"pattern: limited to {limit:,} characters "
                                    f"(this one has {len(pattern):,})")

    def change(data):
        if action == "accept_all":
            # What the page listed, computed again here: the browser sends no patterns.
            patterns = _suggestions(session, blinding_check(session))[:MAX_PATTERNS]
            if not patterns:
                return "No match is left to accept.", session_url(session, "blinding")
            redactions_accept(session=session, patterns=patterns, actor=actor_of(request))
            return (f"{len(patterns)} pattern(s) accepted: every listed match.",
                    session_url(session, "blinding"))
        if action == "withdraw":
            redactions_withdraw(session=session, patterns=[pattern], actor=actor_of(request))
            return f"Pattern withdrawn: {pattern}", session_url(session, "blinding")
        if action == "suggest":
            redactions_accept(session=session, patterns=[pattern], actor=actor_of(request))
            return f"Pattern accepted: {pattern}", session_url(session, "blinding")
        if action == "dismiss":
            blinding_dismiss(session=session, matches=[pattern], actor=actor_of(request))
            return (f"Kept on purpose: {pattern} (judges will read it; the protocol and the "
                    "report say so)", session_url(session, "blinding"))
        if action == "undismiss":
            blinding_undismiss(session=session, matches=[pattern], actor=actor_of(request))
            return f"No longer kept on purpose: {pattern}", session_url(session, "blinding")
        redactions_accept(session=session, patterns=data["patterns"], actor=actor_of(request))
        return f"{len(data['patterns'])} pattern(s) accepted.", session_url(session, "blinding")

    if action not in ("withdraw", "suggest", "accept_all", "dismiss", "undismiss"):
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
    truths = item_truth_counts(session)
    return render_host_page(request, "host/planner.html", {
        "session": session, "run": session.run, "tab": "planner", "form": form,
        "result": result, "error": error, "truths": truths,
        "judges": judges_needed(result["n"], truths) if result else None,
    }, status=400 if error or (form.is_bound and not form.is_valid()) else 200)


def judges_needed(n: int, truths: dict) -> dict:
    """How many judges give `n` paired verdicts in each truth class: a judge's items are drawn
    balanced over the session's items, so each judge gives on average items_per_judge × the
    class's share of the items in each class; the scarcer class sets the number. A class with
    no item cannot be planned (None)."""
    total = truths["defective"] + truths["good"] + truths["unknown"]
    per_judge = min(truths["per_judge"], total)
    per_class = {name: per_judge * truths[name] / total if total else 0.0
                 for name in ("defective", "good")}
    if not all(per_class.values()):
        return {"judges": None, "per_judge": per_judge, "per_class": per_class,
                "missing": [name for name, share in per_class.items() if not share]}
    judges = max(math.ceil(n / share) for share in per_class.values())
    scarcer = min(per_class, key=per_class.get)
    return {"judges": judges, "per_judge": per_judge, "per_class": per_class, "scarcer": scarcer,
            "missing": []}
