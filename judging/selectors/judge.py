"""What a judge may see, and nothing else.

Every query here lists its columns, and none of them is a builder, a family, a copy's bundle id,
a truth label or a defect note: blinding is a property of these queries, not of a template that
forgets a field. One exception, by design (issue 30): phase 2 of a reasons session shows the
audited copy's known truth, read only once the judge has locked phase 1 (`_known_truth`).
Judge-facing modules (judge/) import these selectors and no others.
"""

import functools
import statistics
from dataclasses import dataclass, field, replace

from django.db import connection
from django.db.models import Case, F, Q, Subquery, When
from django.utils import timezone

from accounts.enums import CredentialKind, JudgeStatus
from accounts.models import Credential, Judge
from blindjudge.errors import NotFound, Refused
from blindjudge.prepared import PreparedQuery
from content.credentials import RESUME_REFUSAL, token_sha256
from content.vocabulary import TRUTH_LABELS, VERDICT_LABELS
from judging.enums import ReviewerDisplay, SessionKind
from judging.models import (
    Assignment,
    Copy,
    CopyRender,
    Finding,
    FindingRaise,
    FindingRender,
    Item,
    ItemDraft,
    Reviewer,
    ReviewRender,
    Run,
    SessionRender,
    TaskFlag,
    TaskRender,
    Verdict,
)
from judging.renders import frame_csp

# Sentinels of the prepared queries (blindjudge/prepared.py): values no call passes. The reads
# every judge page makes are compiled once per process: the ORM took longer building and
# compiling them than the database took answering.
_PK = 2_147_480_301

# Built from explicit column lists that hold no builder, family, bundle id of a copy, truth or
# defect note: blinding is a property of these queries, not of a template that forgets a field.

# A judge reads texts only as the session's stored renders (judging/renders.py, made when the
# session opened): nothing on a judge's path normalises or renders.


def judge_phase(judge) -> int | None:
    """The phase the judge is in: 1, 2, or None when both are locked (an adjudication has one
    phase: None once it is locked)."""
    if not judge.phase1_locked_at:
        return 1
    if not judge.phase2_locked_at and judge.session.kind != SessionKind.ADJUDICATION:
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


# A finding's proposed verdict, in the words of the choice it proposes.
PROPOSED_VERDICTS = {"confirmed": "real", "refuted": "false_alarm"}


def verdict_label(value: str | None) -> str:
    """A verdict in words ("Pass", "False alarm", "No verdict"); never the stored value."""
    return VERDICT_LABELS.get(value or "", "No verdict")


@dataclass(frozen=True)
class ReviewerRow:
    label: str
    verdict: str
    reason_html: str
    verdict_label: str = ""
    # Only computed where the session marks disagreements (a treatment frozen with the protocol);
    # False everywhere else, whatever the verdicts.
    disagrees: bool = False


@dataclass(frozen=True)
class JudgeItem:
    code: str
    position: int
    total: int
    phase: int
    previous_code: str | None
    next_code: str | None
    finding_html: str | None
    task_html: str
    rubric_html: str
    verdict: dict | None
    phase1_verdict: dict | None
    reviewer_rows: list
    proposed_verdict: str | None
    raised_by: list
    # The copy frame's rows (CopyRender.line_count), for the page to size the frame as
    # `frame_lines * FRAME_LINE_PX + FRAME_PAD_PX` (content.rendering). None when the frame opens
    # on rendered markdown (prose has no line count) or was stored before frames had rows.
    # `frame_text_lines`: a markdown frame's plain-text view (#text); None for every other frame.
    frame_lines: int | None = None
    frame_text_lines: int | None = None
    # A prose frame's estimated heights in px (CopyRender.prose_height_wide, _narrow): the page
    # sizes the frame from them at its width. None for other frames and older renders.
    frame_prose_px: tuple[int, int] | None = None
    # The item's save number in its phase (ItemDraft.revision; 0 before any save): the page sends
    # it back with each save, so a save from a tab that missed another tab's is noticed.
    revision: int = 0
    # A reason saved before any verdict of the phase, and the time saved with it.
    draft_reason: str = ""
    draft_seconds: float = 0.0
    proposed_verdict_label: str | None = None
    proposed_disagrees: bool = False  # findings: the proposed verdict differs from phase 1's
    # The item is a finding (about its copy), not the copy itself: every item of a findings
    # session, and an adjudication's findings.
    is_finding: bool = False
    # A reasons session's item: the review audited (its verdict in words and its reason as
    # rendered at opening; never its reviewer), and in phase 2 its copy's known truth in words.
    review: dict | None = None
    known_truth: str | None = None
    # A pairs session's item: its two copies as this judge sees them, {"left": side, "right":
    # side}, each side {code, frame_lines, frame_text_lines, frame_prose_px, reviewer_rows,
    # findings} (phase-2 rows only once phase 1 is locked). Never which copy is the pair's first.
    pair: dict | None = None


def reviewer_labels(session) -> dict[int, str]:
    """Reviewer pk → the label judges see in phase 2, as the host chose."""
    labels = {}
    for index, (pk, model) in enumerate(_REVIEWERS.rows(run=session.run_id)):
        if session.reviewer_display == ReviewerDisplay.NAMES:
            labels[pk] = model
        else:
            labels[pk] = f"Reviewer {_letters(index)}"
    return labels


_REVIEWERS = PreparedQuery(lambda run: Reviewer.objects.filter(run_id=run).order_by("position")
                           .values_list("pk", "model"), run=_PK)


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
                                            AND s.position = a.position + 1){columns}
  FROM {assignment} a JOIN {item} i ON i.id = a.item_id{joins}
 WHERE a.judge_id = %s AND a.code = %s
"""
# The item page also takes the item's stored task, the session's stored rubric and the item's
# stored finding text, the copy's stored line count and the item's draft in the phase shown, in the
# same statement (by the render tables' primary and unique keys, and the draft's unique key).
# The three texts are scalar subqueries, not joins: with all five as LEFT JOINs, PostgreSQL spent
# ten times longer planning the seven-relation join order (1.4 ms) than running it (0.14 ms), on
# every item page; a scalar subquery is planned on its own, and the statement planned in 0.37 ms
# (bench/README.md). Each finds at most one row (a unique key), as its join did.
_PAGE_COLUMNS = """,
       (SELECT t.html FROM {task_render} t WHERE t.session_id = i.session_id
                                             AND t.task_id = i.task_id),
       (SELECT r.rubric_html FROM {session_render} r WHERE r.session_id = i.session_id),
       (SELECT f.html FROM {finding_render} f WHERE f.session_id = i.session_id
                                               AND f.finding_id = i.finding_id),
       c.line_count, c.prose, d.reason, d.seconds_spent, d.revision, c.prose_height_wide,
       c.prose_height_narrow"""
_PAGE_JOINS = """
  LEFT JOIN {copy_render} c ON c.session_id = i.session_id AND c.copy_id = i.copy_id
  LEFT JOIN {item_draft} d ON d.assignment_id = a.id AND d.phase = %s"""


@functools.cache
def _place_sql(vendor: str, page: bool) -> str:
    """The place statement for the database `vendor` (its quoting), with the item page's columns
    when `page`; written out once per process."""
    quote = connection.ops.quote_name
    tables = {"assignment": Assignment, "item": Item, "task_render": TaskRender,
              "session_render": SessionRender, "finding_render": FindingRender,
              "copy_render": CopyRender, "item_draft": ItemDraft}
    names = {key: quote(model._meta.db_table) for key, model in tables.items()}
    return _PLACE_SQL.format(columns=_PAGE_COLUMNS.format(**names) if page else "",
                             joins=_PAGE_JOINS.format(**names) if page else "", **names)


def _place_row(judge, code: str, *, page_phase: int | None = None) -> tuple:
    """The place statement's row; with `page_phase`, the item page's columns too (its draft is
    the one of that phase)."""
    page = page_phase is not None
    with connection.cursor() as cursor:
        cursor.execute(_place_sql(connection.vendor, page),
                       [page_phase, judge.pk, code] if page else [judge.pk, code])
        row = cursor.fetchone()
    if row is None:
        raise NotFound("no such item")
    return row


def _place(row) -> ItemPlace:
    return ItemPlace(*row[:3], total=row[5], previous_code=row[6], next_code=row[7],
                     copy_id=row[3], finding_id=row[4])


def judge_item_place(judge, code: str) -> ItemPlace:
    """The judge's item under `code` with its neighbours' codes and the judge's item count, in
    one indexed query, whatever the number of items."""
    return _place(_place_row(judge, code))


_TASK_FLAG_FIELDS = ("kind", "severity", "reason", "locked")
# Every item page of a session with task flags reads it: compiled once per process, as the page's
# other statements are (blindjudge/prepared.py).
_TASK_FLAG = {phase: PreparedQuery(
    lambda judge, code, phase=phase: TaskFlag.objects.filter(
        judge_id=judge, phase=phase, task_id__in=Subquery(
            Assignment.objects.filter(judge_id=judge, code=code).order_by()
            .values("item__task_id")[:1]))
    .order_by("pk").values_list(*_TASK_FLAG_FIELDS)[:1], judge=_PK, code="prepared:code:flag")
    for phase in (1, 2)}


def judge_task_flag(judge, code: str, phase: int) -> dict | None:
    """The judge's own flag, in `phase`, on the task of their item `code` (kind, severity,
    reason, locked), or None. Only ever the judge's own: no other judge's flag, no count."""
    rows = _TASK_FLAG[phase].rows(judge=judge.pk, code=code) if phase in _TASK_FLAG else []
    return dict(zip(_TASK_FLAG_FIELDS, rows[0], strict=True)) if rows else None


_STORED_REVIEWS = PreparedQuery(
    lambda session, copy: CopyRender.objects.filter(session_id=session, copy_id=copy).order_by()
    .values_list("reviews")[:1], session=_PK, copy=_PK + 1)
_ITEM_VERDICT_FIELDS = ("phase", "value", "reason", "seconds_spent", "kept", "locked")
_ITEM_VERDICTS = PreparedQuery(lambda assignment: Verdict.objects.filter(assignment_id=assignment)
                               .order_by().values_list(*_ITEM_VERDICT_FIELDS), assignment=_PK)


def judge_item(judge, code: str) -> JudgeItem:
    """One of the judge's items under its code, in the judge's current phase, with the session's
    task and rubric: every text as the session stored it rendered at opening.

    Phase-2 material (reviewers' verdicts and reasons, a finding's proposed verdict and who raised
    it) is read only once phase 1 is locked; before that, none of it is queried at all.
    """
    session = judge.session
    adjudication = session.kind == SessionKind.ADJUDICATION
    reasons = session.kind == SessionKind.REASONS
    phase = judge_phase(judge) or (1 if adjudication else 2)
    row = _place_row(judge, code, page_phase=phase)
    place = _place(row)
    task_html, rubric_html, finding_html = row[8] or "", row[9] or "", row[10]
    frame_lines, frame_text_lines = frame_lines_of(*row[11:13])
    frame_prose_px = prose_px_of(*row[16:18])
    draft = {"reason": row[13] or "", "seconds_spent": row[14] or 0.0, "revision": row[15] or 0}
    verdicts = {row[0]: dict(zip(_ITEM_VERDICT_FIELDS, row, strict=True))
                for row in _ITEM_VERDICTS.rows(assignment=place.assignment_id)}
    # An adjudicator never sees a model's verdict, not even after their lock; a reasons judge
    # sees the one review they audit (below), never the copy's other reviews.
    if judge.phase1_locked_at and not adjudication and not reasons:
        stored = _STORED_REVIEWS.rows(session=session.pk, copy=place.copy_id) \
            if not place.finding_id else []
        material = phase2_material(session, finding_id=place.finding_id,
                                   reviews=stored[0][0] if stored else [],
                                   phase1_verdict=verdicts.get(1))
    else:
        material = Phase2Material()
    view = item_view(place, phase=phase, task_html=task_html, rubric_html=rubric_html,
                     finding_html=finding_html, frame_lines=frame_lines,
                     frame_text_lines=frame_text_lines, verdicts=verdicts, draft=draft,
                     material=material, frame_prose_px=frame_prose_px)
    if reasons:
        view = replace(view, review=audited_review(session.pk, place.assignment_id),
                       known_truth=_known_truth(place.copy_id) if judge.phase1_locked_at else None)
    elif session.kind == SessionKind.PAIRS:
        # The item's own frame fields are the pair's first copy's: never on a pair's view (a
        # template reading them would tell which side the first copy is on).
        view = replace(view, frame_lines=None, frame_text_lines=None, frame_prose_px=None,
                       pair=pair_sides(session, place.assignment_id,
                                       phase2=bool(judge.phase1_locked_at)))
    return view


_PAIR = PreparedQuery(lambda assignment: Assignment.objects.filter(pk=assignment).order_by()
                      .values_list("swapped", "first_code", "second_code", "item__copy_id",
                                   "item__pair_copy_id"), assignment=_PK)
_PAIR_COLUMNS = ("copy_id", "line_count", "prose", "prose_height_wide", "prose_height_narrow")
_PAIR_RENDERS = {phase2: PreparedQuery(
    lambda session, first, second, phase2=phase2: CopyRender.objects.filter(
        session_id=session, copy_id__in=(first, second)).order_by()
    .values_list(*_PAIR_COLUMNS, *(("reviews",) if phase2 else ())),
    session=_PK, first=_PK + 1, second=_PK + 2) for phase2 in (False, True)}


def pair_sides(session, assignment_id: int, *, phase2: bool) -> dict:
    """A pair's two copies as the judge sees them, left and right by the side drawn for them:
    each copy's code, its stored frame's geometry and, with `phase2`, the reviewers' verdicts and
    reasons on it and the findings raised on it (in the reviews judges may see). Which copy is
    the pair's first is used here and never returned."""
    swapped, first_code, second_code, first, second = _PAIR.rows(assignment=assignment_id)[0]
    columns = _PAIR_COLUMNS + (("reviews",) if phase2 else ())
    stored = {row[0]: dict(zip(columns, row, strict=True)) for row in _PAIR_RENDERS[phase2].rows(
        session=session.pk, first=first, second=second)}
    findings = _findings_on(session, (first, second)) if phase2 else {}

    def side(copy_id: int, code: str) -> dict:
        row = stored.get(copy_id, {})
        material = (phase2_material(session, finding_id=None, reviews=row.get("reviews") or [],
                                    phase1_verdict=None) if phase2 else Phase2Material())
        return pair_side(code, line_count=row.get("line_count"), prose=row.get("prose"),
                         prose_heights=(row.get("prose_height_wide"),
                                        row.get("prose_height_narrow")),
                         reviewer_rows=material.reviewer_rows, findings=findings.get(copy_id, []))

    return as_shown(side(first, first_code), side(second, second_code), swapped=swapped)


def pair_side(code: str, *, line_count, prose, prose_heights, reviewer_rows, findings) -> dict:
    """One copy of a pair as its side shows it: its code, its stored frame's geometry, and in
    phase 2 the reviewers' rows and the findings raised on it. A judge's page and a host's
    preview build their sides with it."""
    lines, text_lines = frame_lines_of(line_count, prose)
    return {"code": code, "frame_lines": lines, "frame_text_lines": text_lines,
            "frame_prose_px": prose_px_of(*prose_heights), "reviewer_rows": reviewer_rows,
            "findings": findings}


def as_shown(first: dict, second: dict, *, swapped: bool) -> dict:
    """A pair's sides, the first copy's and the second's, as drawn for the judge: the second on
    the left where `swapped`. The one place a drawn side becomes left and right on a page."""
    left, right = (second, first) if swapped else (first, second)
    return {"left": left, "right": right}


def _findings_on(session, copy_ids) -> dict[int, list[dict]]:
    """Per copy, the findings raised on it in the reviews judges may see (the run's default
    condition), as rendered at opening, each with who raised it by the session's labels."""
    labels = reviewer_labels(session)
    condition = Run.objects.filter(sessions=session.pk).values("default_condition")[:1]
    raised: dict[int, list[str]] = {}
    for finding_id, reviewer_id in (FindingRaise.objects.filter(
            finding__copy_id__in=copy_ids, condition=Subquery(condition))
            .order_by().values_list("finding_id", "reviewer_id")):
        raised.setdefault(finding_id, []).append(labels[reviewer_id])
    html = dict(FindingRender.objects.filter(session_id=session.pk, finding_id__in=raised)
                .order_by().values_list("finding_id", "html"))
    out: dict[int, list[dict]] = {}
    for finding_id, copy_id in (Finding.objects.filter(pk__in=raised).order_by("position")
                                .values_list("pk", "copy_id")):
        out.setdefault(copy_id, []).append({"html": html.get(finding_id, ""),
                                            "raised_by": sorted(raised[finding_id])})
    return out


# Compiled once per process (blindjudge/prepared.py): built and compiled on every request, this
# one statement with its subquery cost a reasons item page a third of its CPU (bench/README.md).
_AUDITED_REVIEW = PreparedQuery(
    lambda session, assignment: ReviewRender.objects.filter(
        session_id=session, review_id=Subquery(Assignment.objects.filter(pk=assignment)
                                               .order_by().values("item__review_id")[:1]))
    .order_by().values_list("verdict", "html")[:1], session=_PK, assignment=_PK + 1)


def audited_review(session_id: int, assignment_id: int) -> dict:
    """The review a reasons item audits, as its opening rendered it: its verdict (value and words)
    and its reason. Never its reviewer, condition or seal: none of them is read."""
    verdict, html = _AUDITED_REVIEW.rows(session=session_id, assignment=assignment_id)[0]
    return {"verdict": verdict, "verdict_label": verdict_label(verdict), "reason_html": html}


_COPY_TRUTH = PreparedQuery(lambda copy: Copy.objects.filter(pk=copy).order_by()
                           .values_list("truth")[:1], copy=_PK)


def _known_truth(copy_id: int) -> str:
    """The audited copy's known truth in words: phase 2 of a reasons session only (its caller
    checks the judge locked phase 1), so the report can tell whether knowing the answer changes
    what people call grounded. The only truth a judge selector reads."""
    truth = _COPY_TRUTH.rows(copy=copy_id)[0][0]
    return TRUTH_LABELS.get(truth, truth)


@dataclass(frozen=True)
class Phase2Material:
    """What phase 2 adds to an item: the reviewers' rows (copies), or a finding's proposed verdict
    and who raised it; with the proposed verdict in the words of the choice it proposes."""
    reviewer_rows: list = field(default_factory=list)
    proposed: str | None = None
    raised_by: list = field(default_factory=list)
    proposed_label: str | None = None
    proposed_disagrees: bool = False


# A finding's phase 2, compiled once per process as every statement of the judge's pages is.
_PROPOSED = PreparedQuery(lambda finding: Finding.objects.filter(pk=finding).order_by()
                         .values_list("proposed_verdict")[:1], finding=_PK)
_RAISED_BY = PreparedQuery(
    lambda finding, session: FindingRaise.objects.filter(
        finding_id=finding, condition=Subquery(Run.objects.filter(sessions=session).order_by()
                                               .values("default_condition")[:1]))
    .order_by().values_list("reviewer_id"), finding=_PK, session=_PK + 1)


def phase2_material(session, *, finding_id: int | None, reviews: list,
                    phase1_verdict: dict | None) -> Phase2Material:
    """Phase 2's rows for an item: the stored reviews (CopyRender.reviews, as rendered at
    opening) for a copy; for a finding its proposed verdict and the reviewers who raised it in the
    reviews judges may see (the run's default condition only). Labels as the host chose."""
    labels = reviewer_labels(session)
    if finding_id:
        # Two columns, never the finding's row: its truth and bundle id stay in the database.
        proposed = _PROPOSED.rows(finding=finding_id)[0][0]
        raised_by = sorted(labels[r] for (r,) in _RAISED_BY.rows(finding=finding_id,
                                                                 session=session.pk))
        as_choice = PROPOSED_VERDICTS.get(proposed) if proposed else None
        return Phase2Material(
            proposed=proposed, raised_by=raised_by,
            proposed_label=verdict_label(as_choice) if proposed else None,
            proposed_disagrees=bool(session.mark_disagreement and as_choice
                                    and _disagrees(as_choice, phase1_verdict)))
    return Phase2Material(reviewer_rows=[
        ReviewerRow(label=labels[review["reviewer"]], verdict=review["verdict"],
                    reason_html=review["reason_html"],
                    verdict_label=verdict_label(review["verdict"]),
                    disagrees=session.mark_disagreement and _disagrees(review["verdict"],
                                                                       phase1_verdict))
        for review in reviews])


def item_view(place: ItemPlace, *, phase: int, task_html: str, rubric_html: str,
              finding_html: str | None, frame_lines: int | None, frame_text_lines: int | None,
              verdicts: dict, draft: dict, material: Phase2Material,
              frame_prose_px: tuple[int, int] | None = None) -> JudgeItem:
    """The item page's view of one item at its place: what judge_item reads for a judge, and a
    host's preview (judging.selectors.preview) for nobody."""
    return JudgeItem(
        code=place.code, position=place.position, total=place.total, phase=phase,
        previous_code=place.previous_code, next_code=place.next_code,
        finding_html=finding_html, task_html=task_html, rubric_html=rubric_html,
        verdict=verdicts.get(phase), phase1_verdict=verdicts.get(1),
        reviewer_rows=material.reviewer_rows, proposed_verdict=material.proposed,
        raised_by=material.raised_by, frame_lines=frame_lines, frame_text_lines=frame_text_lines,
        revision=draft["revision"], draft_reason=draft["reason"],
        draft_seconds=draft["seconds_spent"], proposed_verdict_label=material.proposed_label,
        proposed_disagrees=material.proposed_disagrees, frame_prose_px=frame_prose_px,
        is_finding=place.finding_id is not None,
    )


def prose_px_of(wide, narrow) -> tuple[int, int] | None:
    """A prose frame's estimated heights (wide, narrow), or None when it has none stored."""
    return (wide, narrow) if wide and narrow else None


def frame_lines_of(line_count, prose) -> tuple[int | None, int | None]:
    """(frame_lines, frame_text_lines) of a stored frame; none for a frame stored before rows
    (its line_count is null: its lines are not FRAME_LINE_PX high)."""
    if line_count is None:
        return None, None
    return (None, line_count) if prose else (line_count, None)


def _disagrees(other: str, phase1_verdict: dict | None) -> bool:
    """A verdict differs from the judge's own phase-1 one; an abstention differs from nothing."""
    return bool(phase1_verdict) and other in VERDICT_LABELS and other not in ("abstain", "keep") \
        and other != phase1_verdict["value"]


@dataclass(frozen=True)
class JudgeProgress:
    answered: int
    total: int
    median_seconds: float | None  # the judge's own median time per answered item in the phase
    remaining_seconds: float | None  # that median times the items left; None before 2 answers
    # Which of the judge's codes are answered in the phase: the page counts these together with
    # the ones answered since it was fetched, so an item is never counted twice (issue 24).
    answered_codes: tuple[str, ...] = ()


_PROGRESS = {phase: PreparedQuery(
    lambda judge, phase=phase: Verdict.objects.filter(assignment__judge_id=judge, phase=phase)
    .order_by().values_list("assignment__code", "seconds_spent"), judge=_PK) for phase in (1, 2)}


def judge_progress(judge, phase: int | None, *, total: int | None = None) -> JudgeProgress:
    """The judge's own progress in a phase, with an estimate of the time left from their own
    median time per item (nobody else's): one query on the judge's own verdicts (two when the
    caller does not know the judge's item count)."""
    if total is None:
        total = Assignment.objects.filter(judge=judge).count()
    if phase is None:
        return JudgeProgress(answered=total, total=total, median_seconds=None, remaining_seconds=None)
    rows = _PROGRESS[phase].rows(judge=judge.pk)
    seconds = [spent for _, spent in rows]
    median = statistics.median(seconds) if len(seconds) >= 2 else None
    return JudgeProgress(answered=len(seconds), total=total, median_seconds=median,
                         answered_codes=tuple(sorted(code for code, _ in rows)),
                         remaining_seconds=None if median is None
                         else median * max(total - len(seconds), 0))


def judge_review(judge, phase: int) -> list[dict]:
    """Every item of the judge in their order with their verdict of the phase (value, kept,
    reason, time) or None: the review before the lock."""
    verdicts = {row[0]: dict(zip(_REVIEW_VERDICT_FIELDS, row[1:], strict=True))
                for row in _REVIEW_VERDICTS[phase].rows(judge=judge.pk)}
    return [{"code": code, "position": position, "verdict": verdicts.get(pk)}
            for pk, code, position in _REVIEW_ITEMS.rows(judge=judge.pk)]


_REVIEW_ITEMS = PreparedQuery(lambda judge: Assignment.objects.filter(judge_id=judge)
                              .order_by("position").values_list("pk", "code", "position"), judge=_PK)
_REVIEW_VERDICT_FIELDS = ("value", "kept", "reason", "seconds_spent")
_REVIEW_VERDICTS = {phase: PreparedQuery(
    lambda judge, phase=phase: Verdict.objects.filter(assignment__judge_id=judge, phase=phase)
    .order_by().values_list("assignment_id", *_REVIEW_VERDICT_FIELDS), judge=_PK)
    for phase in (1, 2)}


@dataclass(frozen=True)
class StoredFrame:
    gzipped: bytes  # the document, UTF-8, gzip-compressed as stored (judging.renders.pack_frame)
    csp: str


def _frame_query(pairs: bool) -> PreparedQuery:
    # order_by(): the models' default ordering would join the judge (and sort by session and
    # number) for what is a lookup on a unique key; every judge-path lookup clears it.
    def build(judge, session, code):
        mine = Assignment.objects.filter(judge_id=judge).order_by()
        if pairs:
            # By the copy's own code only: a pair's code names no frame (it would tell which of
            # the two is the pair's first, and so the builders' order). One lookup for either
            # code, so the work does not depend on whether the copy is a pair's first or second
            # (trying every first code before any second made a second copy's frame measurably
            # slower: case 14e).
            own_copy = Subquery(
                mine.filter(Q(first_code=code) | Q(second_code=code))
                .annotate(own=Case(When(first_code=code, then=F("item__copy_id")),
                                   default=F("item__pair_copy_id")))
                .values("own")[:1])
        else:
            own_copy = Subquery(mine.filter(code=code).values("item__copy_id")[:1])
        return (CopyRender.objects.filter(session_id=session, copy_id=own_copy)
                .order_by().values_list("frame_gzip", "style_hash")[:1])
    return PreparedQuery(build, judge=2_147_480_201, session=2_147_480_202,
                         code="prepared:code:sentinel")


# Compiled once per process (blindjudge/prepared.py): every frame request runs one of these.
_FRAME = {False: _frame_query(pairs=False), True: _frame_query(pairs=True)}


def judge_frame(judge, code: str) -> StoredFrame:
    """The stored frame of the copy behind one of the judge's codes, as rendered when the session
    opened, with the CSP header for the style block it holds. One indexed query; nothing else of
    the copy is read."""
    rows = _FRAME[judge.session.kind == SessionKind.PAIRS].rows(
        judge=judge.pk, session=judge.session_id, code=code) if type(code) is str else []
    if not rows:
        raise NotFound("no such item")
    gzipped, style_hash = rows[0]
    return StoredFrame(gzipped=bytes(gzipped), csp=frame_csp(style_hash))


def judge_live_state(judge) -> dict:
    """What a judge's own socket says about their own session: its state, their phase and their
    own count of answered items. Nothing of any other judge."""
    session = judge.session
    phase = judge_phase(judge)
    total = Assignment.objects.filter(judge=judge).count()
    answered = judge.answered(phase) if phase else total
    return {"type": "state", "state": session.state, "phase": phase, "answered": answered,
            "total": total}


def join_link_admitted_here(token: str, held_judges: frozenset[int]) -> str | None:
    """The session's url id when this join link was used and admitted one of `held_judges` (the
    judges the browser asking is admitted as); None otherwise. Read only: a used link opened again
    where it admitted its judge says so before the judge presses anything, and anywhere else it
    looks like any other link (used and unknown links are refused alike)."""
    if not held_judges:
        return None
    credential = (
        Credential.objects.select_related("session").only("session__url_id")
        .filter(kind=CredentialKind.JOIN, token_sha256=token_sha256(token or ""),
                used_at__isnull=False, judge_id__in=held_judges)
        .first()
    )
    return credential.session.url_id if credential else None


def judge_by_resume_token(token: str) -> Judge:
    """The active judge a resume token belongs to. Unknown, revoked, expired and removed all give
    the same Refused, so a revoked link looks exactly like one that never existed."""
    credential = (
        Credential.objects.select_related("judge__session")
        .only("judge__status", "judge__credential_generation", "judge__session__url_id")
        .filter(kind=CredentialKind.RESUME, token_sha256=token_sha256(token or ""),
                revoked_at__isnull=True)
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()))
        .first()
    )
    if credential is None or credential.judge.status != JudgeStatus.ACTIVE:
        raise Refused(RESUME_REFUSAL)
    return credential.judge


def judge_live_state_if_active(judge_pk: int) -> dict | None:
    """judge_live_state of the judge as the database has them now; None once they are removed."""
    judge = (Judge.objects.select_related("session")
             .only("pk", "phase1_locked_at", "phase2_locked_at", "phase1_answered",
                   "phase2_answered", "session__state", "session__kind")
             .filter(pk=judge_pk, status=JudgeStatus.ACTIVE).first())
    return judge_live_state(judge) if judge else None


@dataclass(frozen=True)
class JudgeInstructions:
    """The judge's instructions page: the host's text as rendered at opening, and the figures
    the product states itself (how many items this judge has, the host's minutes per item)."""
    instructions_html: str
    items: int
    minutes_per_item: int
    kind: str
    phase: int | None


def judge_instructions(judge) -> JudgeInstructions:
    session = judge.session
    html = (SessionRender.objects.filter(session_id=session.pk)
            .values_list("instructions_html", flat=True).first()) or ""
    return JudgeInstructions(instructions_html=html,
                             items=Assignment.objects.filter(judge=judge).count(),
                             minutes_per_item=session.minutes_per_item, kind=session.kind,
                             phase=judge_phase(judge))
