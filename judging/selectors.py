"""Reads. Host selectors return only the host's own rows; another host's id is the same
NotFound as an id that does not exist."""

from dataclasses import dataclass

from django.db import connection

from blindjudge.errors import NotFound
from content.blinding import find_name_matches
from content.normalise import normalise, strip_metadata
from content.rendering import inline_html
from judging.models import (
    Assignment,
    Finding,
    Item,
    Review,
    Reviewer,
    ReviewerDisplay,
    Run,
    Session,
    Verdict,
)

# The frozen protocol and the run's manifest are JSON documents with an entry per item (hundreds
# of KB at 1,000 items) that almost no page reads; decoding them on every request cost more than
# the page itself. Deferred, they load on first access (one query) where they are needed.
HEAVY_SESSION_FIELDS = ("protocol", "run__manifest", "run__request_keys")


def session_for_host(*, host, session_id) -> Session:
    try:
        return (Session.objects.select_related("run").defer(*HEAVY_SESSION_FIELDS)
                .get(pk=int(session_id), run__host=host))
    except (Session.DoesNotExist, ValueError, TypeError):
        raise NotFound(f"no session {session_id}") from None


def run_for_host(*, host, run_id) -> Run:
    try:
        return Run.objects.get(pk=int(run_id), host=host)
    except (Run.DoesNotExist, ValueError, TypeError):
        raise NotFound(f"no run {run_id}") from None


def blinding_check(session: Session) -> dict:
    """The host's blinding check: per copy and per builder, the metadata that will be stripped,
    every name or model-id-like match in content, finding texts and review reasons, and how many
    matches the accepted patterns redact. It reports; only accepted patterns change content."""
    run = session.run
    builders = list(run.builders.all())
    builder_rows = [{"id": b.bundle_id, "model": b.model, "family": b.family} for b in builders]
    patterns = session.redaction_patterns
    per_builder = {
        b.bundle_id: {"builder": b.bundle_id, "model": b.model, "family": b.family, "copies": 0,
                      "stripped_lines": 0, "matches": 0, "redactions": 0}
        for b in builders
    }

    def matches_in(text, where):
        return [{"where": where, "term": m.term, "why": m.why, "builder": m.builder,
                 "matched": m.matched, "line": m.line, "column": m.column,
                 "context": m.context} for m in find_name_matches(text, builder_rows)]

    copies = []
    for copy in run.copies.select_related("builder").prefetch_related("findings", "reviews"):
        # Metadata is stripped whatever the host accepts, so only what remains can unblind.
        visible, stripped = strip_metadata(copy.content, copy.format)
        matches = matches_in(visible, "content")
        for finding in copy.findings.all():
            matches += matches_in(finding.text, f"finding {finding.bundle_id}")
        for review in copy.reviews.all():
            matches += matches_in(review.reason, f"review reason ({review.position})")
        redactions = normalise(copy.content, copy.format, patterns).redactions
        redactions += sum(normalise(f.text, "text", patterns).redactions
                          for f in copy.findings.all())
        copies.append({"copy": copy.bundle_id, "builder": copy.builder.bundle_id,
                       "stripped_metadata": list(stripped), "matches": matches,
                       "redactions": redactions})
        totals = per_builder[copy.builder.bundle_id]
        totals["copies"] += 1
        totals["stripped_lines"] += len(stripped)
        totals["matches"] += len(matches)
        totals["redactions"] += redactions
    return {"session": session.pk, "state": session.state, "accepted_patterns": patterns,
            "copies": copies, "builders": list(per_builder.values())}


def items_per_judge(session: Session) -> int:
    """How many items each judge of the session has: the session's items per judge, or all of
    them (the allocation at joining, judging.services._admit, gives every judge exactly that)."""
    items = session.items.count()
    return min(session.items_per_judge or items, items)


# --- What a judge may see --------------------------------------------------------------------
# Built from explicit column lists that hold no builder, family, bundle id of a copy, truth or
# defect note: blinding is a property of these queries, not of a template that forgets a field.

JUDGE_COPY_COLUMNS = ("item__copy__content", "item__copy__format")


def judge_phase(judge) -> int | None:
    """The phase the judge is in: 1, 2, or None when both are locked."""
    if not judge.phase1_locked_at:
        return 1
    if not judge.phase2_locked_at:
        return 2
    return None


def judge_assignments(judge) -> list[dict]:
    """The judge's codes in their drawn order, each with the phases answered so far."""
    rows = list(Assignment.objects.filter(judge=judge).order_by("position")
                .values("pk", "code", "position"))
    answered = {}
    for assignment_id, phase in Verdict.objects.filter(assignment__judge=judge).order_by().values_list(
            "assignment_id", "phase"):
        answered.setdefault(assignment_id, set()).add(phase)
    return [{"code": r["code"], "position": r["position"],
             "answered": answered.get(r["pk"], set())} for r in rows]


@dataclass(frozen=True)
class ReviewerRow:
    label: str
    verdict: str
    reason_html: str


@dataclass(frozen=True)
class JudgeItem:
    code: str
    position: int
    total: int
    phase: int
    previous_code: str | None
    next_code: str | None
    finding_html: str | None
    verdict: dict | None
    phase1_verdict: dict | None
    reviewer_rows: list
    proposed_verdict: str | None
    raised_by: list


def reviewer_labels(session) -> dict[int, str]:
    """Reviewer pk → the label judges see in phase 2, as the host chose."""
    reviewers = Reviewer.objects.filter(run_id=session.run_id).order_by("position").values(
        "pk", "model")
    labels = {}
    for index, reviewer in enumerate(reviewers):
        if session.reviewer_display == ReviewerDisplay.NAMES:
            labels[reviewer["pk"]] = reviewer["model"]
        else:
            labels[reviewer["pk"]] = f"Reviewer {_letters(index)}"
    return labels


def _letters(index: int) -> str:
    label = ""
    index += 1
    while index:
        index, remainder = divmod(index - 1, 26)
        label = chr(65 + remainder) + label
    return label


@dataclass(frozen=True)
class ItemPlace:
    """Where one of the judge's codes sits in their order, and what it points at."""

    assignment_id: int
    code: str
    position: int
    total: int
    previous_code: str | None
    next_code: str | None
    copy_id: int
    finding_id: int | None


# One statement, written out: the ORM spent longer compiling the three correlated subqueries
# than the database took to run them (profiled; this runs on every item page and form save).
# Every lookup is on a unique index: (judge, code), then (judge, position) twice.
_PLACE_SQL = """
SELECT a.id, a.code, a.position, i.copy_id, i.finding_id,
       (SELECT COUNT(*) FROM {assignment} s WHERE s.judge_id = a.judge_id),
       (SELECT s.code FROM {assignment} s WHERE s.judge_id = a.judge_id
                                            AND s.position = a.position - 1),
       (SELECT s.code FROM {assignment} s WHERE s.judge_id = a.judge_id
                                            AND s.position = a.position + 1)
  FROM {assignment} a JOIN {item} i ON i.id = a.item_id
 WHERE a.judge_id = %s AND a.code = %s
"""


def judge_item_place(judge, code: str) -> ItemPlace:
    """The judge's item under `code` with its neighbours' codes and the judge's item count, in
    one indexed query, whatever the number of items."""
    sql = _PLACE_SQL.format(assignment=connection.ops.quote_name(Assignment._meta.db_table),
                            item=connection.ops.quote_name(Item._meta.db_table))
    with connection.cursor() as cursor:
        cursor.execute(sql, [judge.pk, code])
        row = cursor.fetchone()
    if row is None:
        raise NotFound("no such item")
    return ItemPlace(*row[:3], total=row[5], previous_code=row[6], next_code=row[7],
                     copy_id=row[3], finding_id=row[4])


def judge_item(judge, code: str) -> JudgeItem:
    """One of the judge's items under its code, in the judge's current phase.

    Phase-2 material (reviewers' verdicts and reasons, a finding's proposed verdict and who raised
    it) is read only once phase 1 is locked; before that, none of it is queried at all.
    """
    session = judge.session
    phase = judge_phase(judge) or 2
    place = judge_item_place(judge, code)
    patterns = session.redaction_patterns
    finding_html = None
    if place.finding_id:
        text = Finding.objects.filter(pk=place.finding_id).values_list("text", flat=True)[0]
        finding_html = inline_html(normalise(text, "text", patterns))
    verdicts = {v["phase"]: v for v in Verdict.objects.filter(assignment_id=place.assignment_id)
                .order_by().values("phase", "value", "reason", "seconds_spent", "kept", "locked")}
    reviewer_rows, proposed, raised_by = [], None, []
    if judge.phase1_locked_at:
        labels = reviewer_labels(session)
        if place.finding_id:
            finding = Finding.objects.get(pk=place.finding_id)
            proposed = finding.proposed_verdict
            raised_by = sorted(labels[r] for r in finding.raised_by.values_list("pk", flat=True))
        else:
            for review in (Review.objects.filter(copy_id=place.copy_id)
                           .order_by("reviewer__position").values("reviewer_id", "verdict",
                                                                   "reason")):
                reviewer_rows.append(ReviewerRow(
                    label=labels[review["reviewer_id"]], verdict=review["verdict"],
                    reason_html=inline_html(normalise(review["reason"], "text", patterns))))
    return JudgeItem(
        code=place.code, position=place.position, total=place.total, phase=phase,
        previous_code=place.previous_code, next_code=place.next_code,
        finding_html=finding_html, verdict=verdicts.get(phase), phase1_verdict=verdicts.get(1),
        reviewer_rows=reviewer_rows, proposed_verdict=proposed, raised_by=raised_by,
    )


def judge_copy(judge, code: str) -> tuple[str, str]:
    """(content, format) of the copy behind one of the judge's codes; nothing else."""
    # order_by(): the models' default ordering would join the judge (and sort by session and
    # number) for what is a lookup on a unique key; every judge-path lookup clears it.
    row = (Assignment.objects.filter(judge=judge, code=code).order_by()
           .values_list(*JUDGE_COPY_COLUMNS).first())
    if row is None:
        raise NotFound("no such item")
    return row


# --- What the host's live dashboard shows --------------------------------------------------------

def _sockets_connected_now():
    """The sockets the dashboard counts as connected: pinged within live.STALE_SECONDS (one whose
    process was killed without closing it stops counting then)."""
    from datetime import timedelta

    from django.utils import timezone

    from judging.live import STALE_SECONDS
    from judging.models import LiveSocket

    return LiveSocket.objects.filter(seen_at__gt=timezone.now() - timedelta(seconds=STALE_SECONDS))


def live_judge_rows(session_id: int, judge_pks=None) -> list[dict]:
    """Each judge of the session as the host's dashboard shows it: who (pseudonym, name, how
    admitted), state and counts per phase, and how many of their sockets are connected now.
    Counts and states only: the answered counts are the ones `verdict_record` keeps on the judge
    row, so no verdict is read at all, and the cost does not grow with the verdicts (this runs
    for the progress page and for every change the host's socket is told of)."""
    from django.db.models import Count, OuterRef, Subquery
    from django.db.models.functions import Coalesce

    from accounts.models import Judge

    session = Session.objects.only("pk", "items_per_judge").get(pk=session_id)
    items = items_per_judge(session)
    connected = (_sockets_connected_now().filter(judge=OuterRef("pk"))
                 .order_by().values("judge").annotate(n=Count("pk")).values("n"))
    judges = Judge.objects.filter(session_id=session_id)
    if judge_pks is not None:
        judges = judges.filter(pk__in=judge_pks)
    judges = judges.annotate(connected=Coalesce(Subquery(connected), 0)).order_by("number")
    return [{
        "number": j.number, "pseudonym": j.pseudonym,
        "name": "" if j.erased_at else j.display_name, "github": "" if j.erased_at else j.github_login,
        "erased": bool(j.erased_at), "admitted_as": j.admitted_as, "identified_by": j.identified_by,
        "status": j.status, "items": items, "answered1": j.phase1_answered,
        "answered2": j.phase2_answered,
        "phase1_locked": j.phase1_locked_at is not None, "phase2_locked": j.phase2_locked_at is not None,
        "connected": j.connected,
    } for j in judges]


def live_connected_counts(session_id: int) -> dict[int, int]:
    """Sockets connected now per judge of the session (judge pk -> count)."""
    from django.db.models import Count

    return dict(_sockets_connected_now().filter(judge__session_id=session_id)
                .order_by().values("judge").annotate(n=Count("pk")).values_list("judge", "n"))


def live_totals(rows: list[dict]) -> dict:
    active = [r for r in rows if r["status"] == "active"]
    return {
        "joined": len(rows), "active": len(active), "removed": len(rows) - len(active),
        "phase1_locked": sum(r["phase1_locked"] for r in rows),
        "phase2_locked": sum(r["phase2_locked"] for r in rows),
        "connected": sum(1 for r in active if r["connected"]),
    }


def judge_live_state(judge) -> dict:
    """What a judge's own socket says about their own session: its state, their phase and their
    own count of answered items. Nothing of any other judge."""
    session = judge.session
    phase = judge_phase(judge)
    total = Assignment.objects.filter(judge=judge).count()
    answered = (Verdict.objects.filter(assignment__judge=judge, phase=phase).count()
                if phase else total)
    return {"type": "state", "state": session.state, "phase": phase, "answered": answered,
            "total": total}
