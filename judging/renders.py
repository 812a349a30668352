"""Rendering a session's texts once, for its judges: the copies' frames, the findings' texts, the
reviewers' reasons, the tasks' statements and the rubric.

Content and redactions freeze when a session opens, so everything a judge is shown is rendered
then (judging.services.session_open, before the state changes, in batches, each stored in a short
transaction of its own) and served as stored bytes afterwards: no judge request normalises or
renders anything. The data migration 0004 renders sessions opened before this existed with the
same functions. Works with the app's models or a migration's historical ones (`models` holds
either), so neither path can drift from the other.
"""

import gzip
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass

from content.canonical import canonical_sha256
from content.normalise import normalise
from content.rendering import (
    FRAME_CSP,
    FRAME_STYLE_HASH,
    FrameBody,
    frame_body,
    frame_document,
    inline_html,
    prose_html,
)

# A batch is stored when it holds this many rows or this many characters of HTML, whichever comes
# first: each write is short (a SQLite writer holds the one write lock for it) and the memory an
# opening holds stays bounded whatever the session's size.
BATCH_ROWS = 50
BATCH_CHARACTERS = 4_000_000


def inputs_sha256(*, task: str, rubric: str, patterns: list[str], instructions: str = "") -> str:
    """What every render of a session depends on besides the (immutable) imported texts: the
    tasks (`task`: their statement, or since run/2 a digest of every task's), the rubric, the
    host's instructions (named only when written, so the keys of sessions without stay as they
    were), the redaction patterns, and the renderer (by its frame style's hash). A render made for
    other inputs is stale and is never served."""
    inputs = {"task": task, "rubric": rubric, "patterns": list(patterns),
              "renderer": FRAME_STYLE_HASH}
    if instructions:
        inputs["instructions"] = instructions
    return canonical_sha256(inputs)


class RenderDeadline(Exception):
    """A text took longer to render than its deadline (raised by `deadline`)."""


@contextmanager
def deadline(seconds: float | None):
    """Raise RenderDeadline in the block once `seconds` of wall time have passed.

    A timer signal (SIGALRM), so it interrupts anything that runs Python or a regular expression
    (`re` checks for signals while it matches): a lexer that backtracks is stopped, never waited
    for. Signals reach the main thread only, so elsewhere (a serving thread) and for None or 0
    there is no deadline: an opening started from the host's page renders in a process of its own
    (judging.opening), and the command line's in the command's main thread. An enclosing timer
    (another deadline, a test runner's) is put back as it was."""
    if not seconds or seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(_signum, _frame):
        raise RenderDeadline(f"took longer than {seconds:g} s to render")

    previous = signal.signal(signal.SIGALRM, expired)
    outer, _interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    started = time.monotonic()
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer:
            signal.setitimer(signal.ITIMER_REAL, max(outer - (time.monotonic() - started), 1e-3))


# Said above a copy whose rendering passed its deadline: what the judge sees instead, and why.
TOO_SLOW_NOTE = ("This copy took too long to render, so it is shown as plain text, without "
                 "formatting or highlighting.")


@dataclass(frozen=True)
class Frame:
    """A copy's standalone frame document, the CSP source of its one style block, and its rows
    (content.rendering.FrameBody: what the judge's page sizes the frame by)."""

    document: str
    style_hash: str
    line_count: int
    prose: bool
    prose_heights: tuple[int, int] | None = None


def frame_render(content: str, fmt: str, patterns: list[str], *,
                 backtracking_allowed: bool = False, seconds: float | None = None) -> Frame:
    """A copy's frame as an opening stores it (and as migration 0008 counts it again).

    Past `seconds` (see `deadline`), the copy is rendered again as plain numbered rows with
    TOO_SLOW_NOTE above them: the same normaliser (so the same redactions and marks) and rows
    without markdown or lexers, linear in the copy's size (at most BLINDJUDGE_MAX_COPY_BYTES), so
    that no copy can hold an opening for longer than its deadline and a linear pass."""
    try:
        with deadline(seconds):
            normalised = normalise(content, fmt, patterns, backtracking_allowed=backtracking_allowed)
            body: FrameBody = frame_body(normalised, fmt)
    except RenderDeadline:
        normalised = normalise(content, "text", patterns, backtracking_allowed=backtracking_allowed)
        body = frame_body(normalised, "text", notes=(TOO_SLOW_NOTE,))
    return Frame(frame_document(body.html), FRAME_STYLE_HASH, body.line_count, body.prose,
                 body.prose_heights)


def inline_of(text: str, patterns: list[str], *, backtracking_allowed: bool = False) -> str:
    """A finding's text or a review's reason, as HTML for the judge's own page."""
    return inline_html(normalise(text or "", "text", patterns,
                                 backtracking_allowed=backtracking_allowed))


def prose_of(text: str, patterns: list[str], *, backtracking_allowed: bool = False,
             fmt: str = "markdown", seconds: float | None = None) -> str:
    """A task statement or the rubric: the same normaliser and inert renderer as a copy of that
    format, in its prose form (content.rendering.prose_html: no rows and no views, which need the
    frame's style, and this is shown in the judge's own page), markdown (links and images shown
    as text) or text (preformatted), every hidden character marked. Past `seconds`, preformatted
    text (as for a copy: frame_render)."""
    if not (text or "").strip():
        return ""
    try:
        with deadline(seconds):
            return prose_html(normalise(text, fmt, patterns,
                                        backtracking_allowed=backtracking_allowed), fmt)
    except RenderDeadline:
        return prose_html(normalise(text, "text", patterns,
                                    backtracking_allowed=backtracking_allowed), "text")


def task_of(title: str, statement: str, fmt: str, patterns: list[str], *,
            backtracking_allowed: bool = False, seconds: float | None = None) -> str:
    """A task as the judge's page shows it above each of its copies: its title (if any) and its
    statement, both untrusted text through the same normaliser as a copy."""
    heading = ""
    if title:
        heading = ('<p class="task-title"><strong>'
                   + inline_of(title, patterns, backtracking_allowed=backtracking_allowed)
                   + "</strong></p>")
    return heading + prose_of(statement, patterns, backtracking_allowed=backtracking_allowed,
                              fmt=fmt, seconds=seconds)


def pack_frame(document: str) -> bytes:
    """A frame document as stored: UTF-8, gzip-compressed once, at opening. A hostile copy's frame
    is megabytes of repeated marks that compress to a few hundred kilobytes, so serving it costs
    a small read and a small send, never megabytes per request. mtime=0 keeps the bytes a function
    of the document alone (twin sessions' judges get byte-identical answers: threats case 12a).
    The frame holds no secret (no token, nothing of the judge), so compressing it beside model
    output gives a BREACH-style attack nothing to find."""
    return gzip.compress(document.encode("utf-8"), compresslevel=6, mtime=0)


def frame_csp(style_hash: str) -> str:
    """The copy frame's CSP header, allowing the style block the stored frame was rendered with
    (so a later change of the frame's style cannot break frames stored before it)."""
    return FRAME_CSP.replace(FRAME_STYLE_HASH, style_hash)


@dataclass(frozen=True)
class Models:
    """The model classes the renders are read from and written to (app or historical)."""
    Item: type
    Copy: type
    Review: type
    Finding: type
    CopyRender: type
    FindingRender: type
    # Since run/2 (migration 0005); migration 0004 renders with the models it had, without them.
    Task: type | None = None
    TaskRender: type | None = None
    # Since reasons sessions (migration 0017).
    ReviewRender: type | None = None


def app_models() -> Models:
    """The app's own models (migrations pass their historical ones instead)."""
    from judging import models as app  # noqa: PLC0415 - order: migrations import this module with their historical models

    return Models(Item=app.Item, Copy=app.Copy, Review=app.Review, Finding=app.Finding,
                  CopyRender=app.CopyRender, FindingRender=app.FindingRender, Task=app.Task,
                  TaskRender=app.TaskRender, ReviewRender=app.ReviewRender)


def _task_ids(models: Models, session_id: int) -> set[int]:
    return set(models.Item.objects.filter(session_id=session_id).order_by()
               .values_list("task_id", flat=True))


def _copy_ids(models: Models, items) -> set[int]:
    """The copies a session's items show: each item's copy, and a pair's second copy."""
    copies = set(items.values_list("copy_id", flat=True))
    if _has_pairs(models):
        copies |= set(items.filter(pair_copy__isnull=False).values_list("pair_copy_id", flat=True))
    return copies


def _has_pairs(models: Models) -> bool:
    """The Item given knows pairs (migrations before 0019 pass their own, without them)."""
    return any(f.name == "pair_copy" for f in models.Item._meta.get_fields())


def _finding_ids(models: Models, items) -> set[int]:
    """The findings a session's judges read: each item's finding, and in a pairs session every
    finding raised on either copy of a pair (phase 2 shows them beside the reviewers' rows)."""
    findings = set(items.filter(finding__isnull=False).values_list("finding_id", flat=True))
    if _has_pairs(models):
        pairs = items.filter(pair_copy__isnull=False)
        if pairs.exists():
            copies = set(pairs.values_list("copy_id", flat=True)) | set(
                pairs.values_list("pair_copy_id", flat=True))
            findings |= set(models.Finding.objects.filter(copy_id__in=copies)
                            .values_list("pk", flat=True))
    return findings


def pending(models: Models, session_id: int, key: str) -> tuple[list[int], list[int]]:
    """(copy ids, finding ids) of the session's items with no render for these inputs yet."""
    items = models.Item.objects.filter(session_id=session_id).order_by()
    copies = _copy_ids(models, items)
    findings = _finding_ids(models, items)
    copies -= set(models.CopyRender.objects.filter(session_id=session_id, inputs_sha256=key)
                  .values_list("copy_id", flat=True))
    findings -= set(models.FindingRender.objects.filter(session_id=session_id, inputs_sha256=key)
                    .values_list("finding_id", flat=True))
    return sorted(copies), sorted(findings)


def pending_tasks(models: Models, session_id: int, key: str) -> list[int]:
    """Task ids of the session's items with no render for these inputs yet."""
    if models.TaskRender is None:
        return []
    done = set(models.TaskRender.objects.filter(session_id=session_id, inputs_sha256=key)
               .values_list("task_id", flat=True))
    return sorted(_task_ids(models, session_id) - done)


def pending_reviews(models: Models, session_id: int, key: str) -> list[int]:
    """Review ids of a reasons session's items with no render for these inputs yet."""
    if models.ReviewRender is None:
        return []
    reviews = set(models.Item.objects.filter(session_id=session_id, review__isnull=False)
                  .order_by().values_list("review_id", flat=True))
    reviews -= set(models.ReviewRender.objects.filter(session_id=session_id, inputs_sha256=key)
                   .values_list("review_id", flat=True))
    return sorted(reviews)


def expected_counts(models: Models, session_id: int) -> tuple[int, int, int, int]:
    """How many copy, finding, task and review renders a complete session has."""
    items = models.Item.objects.filter(session_id=session_id).order_by()
    return (len(_copy_ids(models, items)),
            len(_finding_ids(models, items)),
            len(_task_ids(models, session_id)) if models.TaskRender is not None else 0,
            items.filter(review__isnull=False).values("review_id").distinct().count()
            if models.ReviewRender is not None else 0)


def stored_counts(models: Models, session_id: int, key: str) -> tuple[int, int, int, int]:
    """How many copy, finding, task and review renders are stored for these inputs
    (expected_counts' order: a complete session's are equal to it)."""
    return tuple(model.objects.filter(session_id=session_id, inputs_sha256=key).count()
                 if model is not None else 0
                 for model in (models.CopyRender, models.FindingRender, models.TaskRender,
                               models.ReviewRender))


def render_batches(models: Models, session_id: int, key: str, patterns: list[str], *,
                   backtracking_allowed: bool = False, condition: str | None = None,
                   seconds: float | None = None, reviews: bool = True):
    """Yield lists of unsaved render rows (TaskRender, CopyRender, FindingRender) for what is
    still missing, each list bounded by BATCH_ROWS and BATCH_CHARACTERS. Reads one task or copy
    at a time (either may be megabytes); holds no transaction.

    A copy's reviews are those under `condition` (the run's default one: judges never see a
    review given under another condition, such as one told a prior verdict); None takes every
    review (migration 0004's data had no conditions); `reviews` False renders none (an adjudication
    shows no model's verdict). `seconds`: each task's and copy's deadline (frame_render)."""
    copy_ids, finding_ids = pending(models, session_id, key)
    batch, size = [], 0
    for task_id in pending_tasks(models, session_id, key):
        row = task_render(models, session_id, task_id, key, patterns,
                          backtracking_allowed=backtracking_allowed, seconds=seconds)
        batch.append(row)
        size += len(row.html)
        if len(batch) >= BATCH_ROWS or size >= BATCH_CHARACTERS:
            yield batch
            batch, size = [], 0
    for copy_id in copy_ids:
        row, document_size = _copy_render(models, session_id, copy_id, key, patterns,
                                           backtracking_allowed=backtracking_allowed,
                                           condition=condition, seconds=seconds, reviews=reviews)
        batch.append(row)
        size += document_size + sum(len(r["reason_html"]) for r in row.reviews)
        if len(batch) >= BATCH_ROWS or size >= BATCH_CHARACTERS:
            yield batch
            batch, size = [], 0
    for start in range(0, len(finding_ids), BATCH_ROWS):
        chunk = finding_ids[start:start + BATCH_ROWS]
        for finding_id, text in models.Finding.objects.filter(pk__in=chunk).values_list("pk", "text"):
            row = _finding_render(models, session_id, finding_id, text, key, patterns,
                                  backtracking_allowed=backtracking_allowed)
            batch.append(row)
            size += len(row.html)
            if len(batch) >= BATCH_ROWS or size >= BATCH_CHARACTERS:
                yield batch
                batch, size = [], 0
    # A reasons session's reviews: what its judges audit, the verdict and the reason.
    review_ids = pending_reviews(models, session_id, key)
    for start in range(0, len(review_ids), BATCH_ROWS):
        chunk = review_ids[start:start + BATCH_ROWS]
        for review_id, verdict, reason in (models.Review.objects.filter(pk__in=chunk)
                                           .values_list("pk", "verdict", "reason")):
            row = models.ReviewRender(
                session_id=session_id, review_id=review_id, inputs_sha256=key, verdict=verdict,
                html=inline_of(reason, patterns, backtracking_allowed=backtracking_allowed))
            batch.append(row)
            size += len(row.html)
            if len(batch) >= BATCH_ROWS or size >= BATCH_CHARACTERS:
                yield batch
                batch, size = [], 0
    if batch:
        yield batch


def task_render(models: Models, session_id: int, task_id: int, key: str, patterns: list[str], *,
                backtracking_allowed: bool = False, seconds: float | None = None):
    """One task's unsaved TaskRender row (an opening stores it; a host's preview of a draft only
    shows it)."""
    title, statement, fmt = (models.Task.objects.filter(pk=task_id)
                             .values_list("title", "statement", "format")[0])
    return models.TaskRender(session_id=session_id, task_id=task_id, inputs_sha256=key,
                             html=task_of(title, statement, fmt, patterns,
                                          backtracking_allowed=backtracking_allowed,
                                          seconds=seconds))


def copy_render(models: Models, session_id: int, copy_id: int, key: str, patterns: list[str], *,
                backtracking_allowed: bool = False, condition: str | None = None):
    """One copy's unsaved CopyRender row: its frame, packed, and its reviews' reasons."""
    return _copy_render(models, session_id, copy_id, key, patterns,
                        backtracking_allowed=backtracking_allowed, condition=condition)[0]


def _copy_render(models, session_id, copy_id, key, patterns, *, backtracking_allowed, condition,
                 seconds=None, reviews=True):
    """(the row, the frame document's length): the batches are bounded by the unpacked size."""
    content, fmt = models.Copy.objects.filter(pk=copy_id).values_list("content", "format")[0]
    frame = frame_render(content, fmt, patterns, backtracking_allowed=backtracking_allowed,
                         seconds=seconds)
    del content
    reviews = [
        {"review": r["pk"], "reviewer": r["reviewer_id"], "verdict": r["verdict"],
         "reason_html": inline_of(r["reason"], patterns, backtracking_allowed=backtracking_allowed)}
        for r in models.Review.objects.filter(
            copy_id=copy_id, **({} if condition is None else {"condition": condition}))
        .order_by("reviewer__position", "pk").values("pk", "reviewer_id", "verdict", "reason")
    ] if reviews else []
    row = models.CopyRender(session_id=session_id, copy_id=copy_id, inputs_sha256=key,
                            frame_gzip=pack_frame(frame.document), style_hash=frame.style_hash,
                            reviews=reviews)
    if _has_field(models.CopyRender, "line_count"):  # since migration 0008
        row.line_count, row.prose = frame.line_count, frame.prose
    if _has_field(models.CopyRender, "prose_height_wide"):  # since migration 0013
        row.prose_height_wide, row.prose_height_narrow = frame.prose_heights or (None, None)
    return row, len(frame.document)


def finding_render(models: Models, session_id: int, finding_id: int, key: str,
                   patterns: list[str], *, backtracking_allowed: bool = False):
    """One finding's unsaved FindingRender row."""
    text = models.Finding.objects.filter(pk=finding_id).values_list("text", flat=True)[0]
    return _finding_render(models, session_id, finding_id, text, key, patterns,
                           backtracking_allowed=backtracking_allowed)


def _finding_render(models, session_id, finding_id, text, key, patterns, *, backtracking_allowed):
    return models.FindingRender(session_id=session_id, finding_id=finding_id, inputs_sha256=key,
                                html=inline_of(text, patterns,
                                               backtracking_allowed=backtracking_allowed))


def _has_field(model, name: str) -> bool:
    return any(field.name == name for field in model._meta.get_fields())


def store(models: Models, rows: list) -> None:
    """Insert a batch; a row another opening stored first is kept (one per session and copy or
    finding, by the unique constraints), never doubled."""
    for model in (models.TaskRender, models.CopyRender, models.FindingRender, models.ReviewRender):
        if model is None:
            continue
        mine = [row for row in rows if isinstance(row, model)]
        if mine:
            model.objects.bulk_create(mine, ignore_conflicts=True)
