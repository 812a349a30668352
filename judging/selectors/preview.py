"""What a host's preview of a session shows as a judge would see it: nobody's pages, stored for
nobody.

A preview is a draw (a seed in its URL: the same order and codes on every page of one preview,
another with each new preview) of the session's items, shown through the judge's own views
(judging.selectors.judge's `item_view` and `phase2_material`). It reads the texts an opening
stored when the session is open, and renders them with the opening's own functions
(judging.renders) when it is a draft, keeping the result nowhere. Nothing here writes a row.

Like the judge selectors, no query here reads a builder, a family, a copy's bundle id, a truth
label or a defect note: a preview shows exactly what a judge would, and the leak canaries check
its pages as they check a judge's (tests/judge/test_preview.py).
"""

import re
from dataclasses import dataclass, replace

from blindjudge.errors import NotFound
from content.draws import (
    Draws,
    draw_codes_with_copies,
    draw_order,
    draw_order_by_task,
    pair_swapped,
)
from content.vocabulary import TRUTH_LABELS
from judging import renders
from judging.enums import SessionKind, SessionState
from judging.models import (
    Copy,
    CopyRender,
    FindingRender,
    Item,
    Review,
    ReviewRender,
    Session,
    SessionRender,
    TaskRender,
)
from judging.selectors.judge import (
    ItemPlace,
    JudgeInstructions,
    JudgeItem,
    Phase2Material,
    StoredFrame,
    as_shown,
    frame_lines_of,
    item_view,
    pair_side,
    phase2_material,
    prose_px_of,
    verdict_label,
)

# What may be previewed: a draft (rendered on the fly) and an open session (as stored). A closed
# or revealed session's judges have seen it already; the host reads the report.
PREVIEW_STATES = (SessionState.DRAFT, SessionState.OPEN)
# A preview's seed in its URL: 16 hex digits (64 bits), drawn by the view that starts a preview.
PREVIEW_SEED = re.compile(r"^[0-9a-f]{16}$")
NO_DRAFT = {"reason": "", "seconds_spent": 0.0, "revision": 0}


def preview_session(host, session_id: int) -> Session:
    """The host's own session, if it can be previewed; NotFound (404) otherwise: another host's
    session is the same 404 as one that does not exist."""
    session = (Session.objects.select_related("run")
               .defer("protocol", "run__manifest", "run__request_keys")
               .filter(pk=session_id, run__host=host, state__in=PREVIEW_STATES).first())
    if session is None:
        raise NotFound("no such session to preview")
    return session


@dataclass(frozen=True)
class PreviewSlot:
    code: str
    position: int
    item_id: int
    copy_id: int
    finding_id: int | None
    task_id: int
    # A pairs session's: the pair's second copy, the side drawn (the second copy on the left) and
    # each copy's code in this preview.
    pair_copy_id: int | None = None
    swapped: bool = False
    first_code: str = ""
    second_code: str = ""


def preview_slots(session: Session, seed: str) -> list[PreviewSlot]:
    """The preview's items in its drawn order, with their codes: drawn as a judge's are
    (content.draws: an HMAC order, interleaving tasks in a by-task session, and codes from the
    judge's alphabet), seeded by the preview's seed. Where the session gives each judge fewer
    items than it has, the preview shows that many, the first of its order."""
    if not PREVIEW_SEED.match(seed or ""):
        raise NotFound("no such preview")
    rows = {str(r["pk"]): r for r in Item.objects.filter(session=session).order_by()
            .values("pk", "copy_id", "finding_id", "task_id", "pair_copy_id")}
    draws = Draws(seed * 4)
    order_seed = draws.hex("preview:order")
    if session.by_task:
        ordered = draw_order_by_task(order_seed, {key: str(r["task_id"]) for key, r in rows.items()})
    else:
        ordered = draw_order(order_seed, list(rows))
    if session.items_per_judge and session.items_per_judge < len(ordered):
        ordered = ordered[:session.items_per_judge]
    # A pair's copies have codes of their own, as a judge's do (judging.services.admission).
    pairs = session.kind == SessionKind.PAIRS
    codes, copy_codes = draw_codes_with_copies(
        draws, "preview:codes", len(ordered),
        [c for key in ordered for c in (rows[key]["copy_id"], rows[key]["pair_copy_id"])]
        if pairs else ())
    return [PreviewSlot(code=code, position=position, item_id=rows[key]["pk"],
                        copy_id=rows[key]["copy_id"], finding_id=rows[key]["finding_id"],
                        task_id=rows[key]["task_id"], pair_copy_id=rows[key]["pair_copy_id"],
                        swapped=pairs and pair_swapped(order_seed, key),
                        first_code=copy_codes.get(rows[key]["copy_id"], ""),
                        second_code=copy_codes.get(rows[key]["pair_copy_id"], ""))
            for position, (key, code) in enumerate(zip(ordered, codes, strict=True), start=1)]


def _slot(slots: list[PreviewSlot], code: str) -> PreviewSlot:
    for slot in slots:
        if slot.code == code:
            return slot
    raise NotFound("no such item")


def _copy_of_code(slots: list[PreviewSlot], code: str) -> int:
    """The copy a preview code frames: a slot's copy, or in a pairs session a pair's copy by its
    own code (a pair's code frames nothing, as for a judge)."""
    for slot in slots:
        if slot.pair_copy_id is None and slot.code == code:
            return slot.copy_id
        if slot.pair_copy_id is not None and code in (slot.first_code, slot.second_code):
            return slot.copy_id if code == slot.first_code else slot.pair_copy_id
    raise NotFound("no such item")


def _copy_shown(session: Session, copy_id: int, patterns) -> tuple:
    """(line_count, prose, reviews, prose heights) of a copy as the session's judges see it: as
    its opening stored it, or for a draft as it would."""
    if session.state == SessionState.OPEN:
        line_count, prose, reviews, *heights = (
            CopyRender.objects.filter(session=session, copy_id=copy_id)
            .values_list("line_count", "prose", "reviews", "prose_height_wide",
                         "prose_height_narrow").first() or (None, False, [], None, None))
        return line_count, prose, reviews, heights
    fresh = renders.copy_render(renders.app_models(), session.pk, copy_id, "", patterns,
                                condition=session.run.default_condition)
    return (fresh.line_count, fresh.prose, fresh.reviews,
            [fresh.prose_height_wide, fresh.prose_height_narrow])


def _preview_pair(session: Session, slot: PreviewSlot, phase: int, patterns) -> dict:
    """A preview pair's sides, as judging.selectors.judge.pair_sides gives a judge's (the
    findings raised on each copy are shown to judges only, from their opening's renders)."""
    def side(copy_id: int, code: str) -> dict:
        line_count, prose, reviews, heights = _copy_shown(session, copy_id, patterns)
        rows = (phase2_material(session, finding_id=None, reviews=reviews, phase1_verdict=None)
                .reviewer_rows if phase == 2 else [])
        return pair_side(code, line_count=line_count, prose=prose, prose_heights=heights,
                         reviewer_rows=rows, findings=[])

    return as_shown(side(slot.copy_id, slot.first_code), side(slot.pair_copy_id, slot.second_code),
                    swapped=slot.swapped)


def preview_item(session: Session, seed: str, code: str, phase: int) -> JudgeItem:
    """The item page's view of one preview item, in the phase previewed, with no verdict, draft
    or revision (nothing of a preview is ever stored)."""
    slots = preview_slots(session, seed)
    slot = _slot(slots, code)
    index = slot.position - 1
    place = ItemPlace(assignment_id=0, code=slot.code, position=slot.position, total=len(slots),
                      previous_code=slots[index - 1].code if index > 0 else None,
                      next_code=slots[index + 1].code if index + 1 < len(slots) else None,
                      copy_id=slot.copy_id, finding_id=slot.finding_id)
    # An open session's texts as its opening stored them; a draft's as its opening would.
    patterns, models = session.redaction_patterns, renders.app_models()
    if session.state == SessionState.OPEN:
        task_html = (TaskRender.objects.filter(session=session, task_id=slot.task_id)
                     .values_list("html", flat=True).first()) or ""
        rubric_html = (SessionRender.objects.filter(session=session)
                       .values_list("rubric_html", flat=True).first()) or ""
        finding_html = (FindingRender.objects.filter(session=session, finding_id=slot.finding_id)
                        .values_list("html", flat=True).first()) if slot.finding_id else None
        line_count, prose, reviews, *heights = (
            CopyRender.objects.filter(session=session, copy_id=slot.copy_id)
            .values_list("line_count", "prose", "reviews", "prose_height_wide",
                         "prose_height_narrow").first() or (None, False, [], None, None))
    else:
        task_html = renders.task_render(models, session.pk, slot.task_id, "", patterns).html
        rubric_html = renders.prose_of(session.rubric, patterns)
        finding_html = (renders.finding_render(models, session.pk, slot.finding_id, "",
                                               patterns).html if slot.finding_id else None)
        fresh = renders.copy_render(models, session.pk, slot.copy_id, "", patterns,
                                    condition=session.run.default_condition)
        line_count, prose, reviews = fresh.line_count, fresh.prose, fresh.reviews
        heights = [fresh.prose_height_wide, fresh.prose_height_narrow]
    frame_lines, frame_text_lines = frame_lines_of(line_count, prose)
    reasons = session.kind == SessionKind.REASONS
    if session.kind == SessionKind.PAIRS:
        view = item_view(place, phase=phase, task_html=task_html, rubric_html=rubric_html,
                         finding_html=None, frame_lines=None, frame_text_lines=None, verdicts={},
                         draft=NO_DRAFT, material=Phase2Material())
        return replace(view, pair=_preview_pair(session, slot, phase, patterns))
    material = (phase2_material(session, finding_id=slot.finding_id,
                                reviews=[] if slot.finding_id else reviews, phase1_verdict=None)
                if phase == 2 and session.kind in (SessionKind.COPIES, SessionKind.FINDINGS)
                else Phase2Material())
    view = item_view(place, phase=phase, task_html=task_html, rubric_html=rubric_html,
                     finding_html=finding_html, frame_lines=frame_lines,
                     frame_text_lines=frame_text_lines, verdicts={}, draft=NO_DRAFT,
                     material=material, frame_prose_px=prose_px_of(*heights))
    if reasons:
        # The review the item audits, as its opening stores it (a draft's: rendered now).
        review_id = Item.objects.filter(pk=slot.item_id).values_list("review_id", flat=True)[0]
        stored = (ReviewRender.objects.filter(session=session, review_id=review_id)
                  .values_list("verdict", "html").first()
                  if session.state == SessionState.OPEN else None)
        if stored is None:
            verdict, reason = (Review.objects.filter(pk=review_id)
                               .values_list("verdict", "reason")[0])
            stored = (verdict, renders.inline_of(reason, patterns))
        truth = (Copy.objects.filter(pk=slot.copy_id).values_list("truth", flat=True)[0]
                 if phase == 2 else None)
        view = replace(view, review={"verdict": stored[0], "verdict_label": verdict_label(stored[0]),
                                     "reason_html": stored[1]},
                       known_truth=TRUTH_LABELS.get(truth, truth) if truth else None)
    return view


def preview_frame(session: Session, seed: str, code: str) -> StoredFrame:
    """The copy frame behind a preview code: the stored bytes of an open session, or for a draft
    the frame its opening would store, rendered now and kept nowhere."""
    copy_id = _copy_of_code(preview_slots(session, seed), code)
    if session.state == SessionState.OPEN:
        row = (CopyRender.objects.filter(session=session, copy_id=copy_id)
               .values_list("frame_gzip", "style_hash").first())
        if row is None:
            raise NotFound("no such item")
        gzipped, style_hash = bytes(row[0]), row[1]
    else:
        fresh = renders.copy_render(renders.app_models(), session.pk, copy_id, "",
                                    session.redaction_patterns,
                                    condition=session.run.default_condition)
        gzipped, style_hash = bytes(fresh.frame_gzip), fresh.style_hash
    return StoredFrame(gzipped=gzipped, csp=renders.frame_csp(style_hash))


def preview_instructions(session: Session, seed: str, phase: int) -> JudgeInstructions:
    """The instructions page's figures for a preview: the host's text as judges get it (stored,
    or rendered as the opening will) and the preview's own item count."""
    if session.state == SessionState.OPEN:
        html = (SessionRender.objects.filter(session=session)
                .values_list("instructions_html", flat=True).first()) or ""
    else:
        html = renders.prose_of(session.instructions, session.redaction_patterns)
    return JudgeInstructions(instructions_html=html, items=len(preview_slots(session, seed)),
                             minutes_per_item=session.minutes_per_item, kind=session.kind,
                             phase=phase)

