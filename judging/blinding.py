"""The blinding check of a session: what judges would read that could name a builder, and what
the host decided about each match (redacted by an accepted pattern, or kept on purpose).

The host's pages and the `redactions` command show it; opening a session (judging.services)
refuses while any match is undecided, naming them (issue 24 item 7).
"""

import re

from content.blinding import (
    UNDECIDED,
    JudgedCopy,
    find_name_matches,
    match_status,
    redactions_shown,
    shape_features,
    shapes_of_one_builder,
)
from content.normalise import (
    BIDI_CLASS,
    INVISIBLE_CLASS,
    label,
    normalise,
    normalise_line_endings,
    redaction_spans,
    strip_metadata,
)
from judging.enums import SessionKind
from judging.models import Session, Task

# The undecided matches an opening's refusal names before it says how many more there are.
UNDECIDED_NAMED = 10


# A run of one hidden character is one hit (with its length); a text full of them lists at most
# this many hits, then says how many more there are.
HIDDEN_HITS_SHOWN = 100
_HIDDEN_RUN = re.compile(f"([{BIDI_CLASS}{INVISIBLE_CLASS}])\\1*")


def hidden_characters(text: str) -> tuple[list[dict], int]:
    """Where the bidi controls and invisible characters of `text` are: (the first hits, each
    `{label, kind, count, line, column}` for a run of one character, and the number of hits)."""
    hits, total = [], 0
    if text.isascii():
        return hits, total
    line, line_start = 1, 0
    position = 0
    for match in _HIDDEN_RUN.finditer(text):
        total += 1
        if len(hits) >= HIDDEN_HITS_SHOWN:
            continue
        line += text.count("\n", position, match.start())
        if position != match.start():
            newline = text.rfind("\n", position, match.start())
            if newline >= 0:
                line_start = newline + 1
        position = match.start()
        char = match.group(1)
        hits.append({"label": label(char), "count": len(match.group()), "line": line,
                     "column": match.start() - line_start + 1,
                     "kind": "bidi control" if re.match(f"[{BIDI_CLASS}]", char)
                     else "invisible character"})
    return hits, total


def _host_text_check(text: str, where: str, patterns: list[str], matches_in, counts: bool) -> dict:
    """The blinding check of a text the host wrote or imported (the task, the rubric): judges see
    it rendered like a markdown copy, so names, hidden characters and redactions are reported."""
    if not counts:
        return {"where": where, "matches": matches_in(text, where)}
    normalised = normalise(text, "markdown", patterns)
    hidden, hidden_total = hidden_characters(text)
    return {"where": where, "matches": matches_in(text, where), "hidden": hidden,
            "hidden_total": hidden_total, "hidden_more": hidden_total - len(hidden),
            "redactions": normalised.redactions, "mixed_script": normalised.mixed_script,
            "invisible": normalised.invisible, "bidi": normalised.bidi}


def blinding_check(session: Session, *, counts: bool = True) -> dict:
    """The host's blinding check: per copy and per builder, the metadata that will be stripped,
    every name or model-id-like match in content, finding texts and review reasons, and how many
    redactions the accepted patterns make in what this session's judges read of each copy
    (content.blinding.redactions_shown, the definition the report counts with); and for
    the task statement and the rubric (shown to judges too), every match, every hidden character
    (line and column) and the redactions. Each match says what the host decided (redacted, kept
    on purpose, or undecided); `undecided` lists the undecided ones by text. It reports; only
    accepted patterns change content.

    `counts=False` (an opening, which needs only the undecided matches) skips the redaction
    counts, the shapes and the hidden characters, which normalise every text once more."""
    run = session.run
    builders = list(run.builders.all())
    builder_rows = [{"id": b.bundle_id, "model": b.model, "family": b.family} for b in builders]
    patterns = session.redaction_patterns
    per_builder = {
        b.bundle_id: {"builder": b.bundle_id, "model": b.model, "family": b.family, "copies": 0,
                      "stripped_lines": 0, "matches": 0, "redactions": 0}
        for b in builders
    }

    scorecards_show_defects = session.scorecards and session.kind == SessionKind.COPIES

    dismissed = set(session.blinding_dismissed)
    judged = list(session.items.order_by().values_list("copy_id", "finding_id", "review_id"))
    # A pairs session's judges read both copies of every pair.
    judged_copies = {copy_id for copy_id, _, _ in judged} | set(
        session.items.filter(pair_copy__isnull=False).order_by()
        .values_list("pair_copy_id", flat=True))
    judged_findings = {finding_id for _, finding_id, _ in judged if finding_id}
    audited = {review_id for _, _, review_id in judged if review_id}

    # A reasons session's judges read reviews' reasons and must not learn the reviewer: models
    # name themselves ("As GPT-4o, …"), so its reasons are checked for the reviewers' names too.
    reason_rows = builder_rows + ([{"id": r.bundle_id, "model": r.model, "family": r.family}
                                   for r in run.reviewers.all()]
                                  if session.kind == SessionKind.REASONS else [])

    def matches_in(text, where, rows=builder_rows):
        # Spans on the text as the matcher reads it (LF line ends), so both count alike.
        matches = find_name_matches(text, rows)
        redacted = redaction_spans(normalise_line_endings(text), patterns) if matches else []
        return [{"where": where, "term": m.term, "why": m.why, "builder": m.builder,
                 "matched": m.matched, "line": m.line, "column": m.column,
                 "context": m.context, "key": m.key,
                 "status": match_status(m, redacted, dismissed)} for m in matches]

    copies, shapes = [], []
    for copy in run.copies.select_related("builder").prefetch_related("findings", "reviews"):
        if counts:
            shapes.append((copy.builder.bundle_id, shape_features(copy.content)))
        # Metadata is stripped whatever the host accepts, so only what remains can unblind.
        visible, stripped = strip_metadata(copy.content, copy.format)
        matches = matches_in(visible, "content")
        for finding in copy.findings.all():
            matches += matches_in(finding.text, f"finding {finding.bundle_id}")
        for review in copy.reviews.all():
            matches += matches_in(review.reason, f"review reason ({review.position})", reason_rows)
        if scorecards_show_defects and copy.defect:
            # Judges read the defect note on their scorecard after the reveal (issue 24 item 9).
            matches += matches_in(copy.defect, "defect note (on scorecards)")
        # Redactions in what this session's judges read of the copy (None: not judged here).
        redactions = None
        if counts and copy.pk in judged_copies:
            redactions = redactions_shown(JudgedCopy(
                builder=copy.builder.bundle_id, content=copy.content, format=copy.format,
                findings=tuple(f.text for f in copy.findings.all() if f.pk in judged_findings),
                reasons=tuple(r.reason for r in copy.reviews.all()
                              if (r.pk in audited if session.kind == SessionKind.REASONS
                                  else r.condition == run.default_condition)),
                defect=copy.defect or ""), kind=session.kind, scorecards=session.scorecards,
                patterns=patterns)
        copies.append({"copy": copy.bundle_id, "builder": copy.builder.bundle_id,
                       "stripped_metadata": list(stripped), "matches": matches,
                       "redactions": redactions})
        totals = per_builder[copy.builder.bundle_id]
        totals["copies"] += 1
        totals["stripped_lines"] += len(stripped)
        totals["matches"] += len(matches)
        totals["redactions"] += redactions or 0
    # Every task of the session's items, title and statement, the rubric and the instructions:
    # host-written or imported text a judge reads beside each copy or before the first.
    tasks = list(Task.objects.filter(pk__in=session.items.values("task_id")).order_by("position"))
    one = len(tasks) == 1

    def where_in(task, part):
        return ("task" if one else f"task {task.bundle_id}") + (" title" if part == "title" else "")

    sources = [(text, where_in(task, part)) for task in tasks
               for part, text in (("title", task.title), ("statement", task.statement))]
    texts = [_host_text_check(text, where, patterns, matches_in, counts)
             for text, where in (*sources, (session.rubric, "rubric"),
                                 (session.instructions, "instructions")) if text]
    return {"session": session.pk, "state": session.state, "accepted_patterns": patterns,
            "dismissed": list(session.blinding_dismissed),
            "copies": copies, "builders": list(per_builder.values()), "texts": texts,
            "shapes": shapes_of_one_builder(shapes),
            "undecided": undecided_of(copies, texts)}


def undecided_of(copies: list[dict], texts: list[dict]) -> list[dict]:
    """The check's undecided matches, one entry per decision key (in order of first finding):
    the text as first matched, how many times, and where first (`copy c1 content 3:7`)."""
    found: dict[str, dict] = {}
    places = [(f"copy {c['copy']}", c["matches"]) for c in copies]
    places += [("", t["matches"]) for t in texts]
    for place, matches in places:
        for m in matches:
            if m["status"] != UNDECIDED:
                continue
            entry = found.setdefault(m["key"], {
                "matched": m["matched"], "key": m["key"], "count": 0,
                "first": " ".join(filter(None, (place, m["where"], f"{m['line']}:{m['column']}"))),
            })
            entry["count"] += 1
    return list(found.values())


def undecided_refusal(undecided: list[dict]) -> str:
    """Why a session with undecided matches does not open, naming them (the first
    UNDECIDED_NAMED), and what to do."""
    named = "; ".join(f"“{u['matched']}” ({u['count']}×, first in {u['first']})"
                      for u in undecided[:UNDECIDED_NAMED])
    more = len(undecided) - UNDECIDED_NAMED
    return (f"cannot open: the blinding check found {len(undecided)} name"
            f"{'' if len(undecided) == 1 else 's'} neither redacted nor kept on purpose: {named}"
            + (f"; and {more} more" if more > 0 else "")
            + ". On the blinding page (or with `redactions --accept` / `--dismiss`), accept a "
              "pattern that redacts each, or dismiss it to keep it on purpose")


