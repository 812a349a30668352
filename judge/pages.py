"""The judge's pages as contexts for their templates, built the same way for a judge (judge/views.py)
and for a host's preview of them (judge/preview.py): what differs is where the pages link to
(`PageLinks`) and who the figures are of, never how a page is put together.
"""

import functools
import gzip
import html
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from urllib.parse import quote

from django.http import HttpResponse
from django.urls import get_script_prefix, reverse
from django.utils.cache import patch_vary_headers
from django.utils.http import RFC3986_SUBDELIMS
from django.utils.safestring import mark_safe

from content.frame_geometry import FRAME_LINE_PX, FRAME_PAD_PX, PROSE_MEASURE_CH, PROSE_NARROW_CH
from content.instructions import mark_meanings, time_estimate, verdict_keys
from content.rules import FLAG_KINDS, MAX_SEVERITY
from judging.enums import SessionKind
from judging.selectors.judge import JudgeItem, JudgeProgress, verdict_label
from judging.services import KEEP, QUICK_ANSWER_SECONDS, text_limit, verdict_values

# "gzip" among the encodings a client takes, unless it gives it q=0.
ACCEPTS_GZIP = re.compile(r"(?:^|,)\s*gzip\s*(?:,|$|;\s*q\s*=\s*(?!0(?:\.0{0,3})?\s*(?:,|$)))", re.I)


@dataclass(frozen=True)
class PageLinks:
    """Where a judge's pages link to: the judge's own URLs, or a host's preview of them."""
    home: str
    instructions: str
    review: str
    item: Callable[[str], str]
    frame: Callable[[str], str]


# Values no session's URL id and no item code take, reversed in their places once per process
# (and script prefix); each page's links are then the parts joined around its own values.
_URL_ID_SLOT = "urlidslot0sentinel"
_CODE_SLOT = "codeslot0sentinel"
# A session's URL id as sessions are given them (judging.models): reverse() leaves it as it is.
_PLAIN_URL_ID = re.compile(r"[a-z0-9]+")


@functools.lru_cache(maxsize=64)
def _url_parts(name: str, with_code: bool, script_prefix: str) -> tuple[str, str, str]:
    """reverse(name) split around its URL id and (`with_code`) its code: (before the id, between
    the id and the code, after). `script_prefix` is reverse()'s own, named so each prefix keeps
    its own parts."""
    kwargs = {"url_id": _URL_ID_SLOT, **({"code": _CODE_SLOT} if with_code else {})}
    before, rest = reverse(name, kwargs=kwargs).split(_URL_ID_SLOT)
    between, after = rest.split(_CODE_SLOT) if with_code else (rest, "")
    return before, between, after


def _judge_url(name: str, url_id: str) -> str:
    """reverse(name, url_id) without reversing each time (a page links five of them, and each
    reverse() took longer than the rest of the links' work). An id reverse() might quote or
    refuse goes to reverse() itself."""
    if not _PLAIN_URL_ID.fullmatch(url_id):
        return reverse(name, kwargs={"url_id": url_id})
    before, between, _ = _url_parts(name, False, get_script_prefix())
    return before + url_id + between


def _per_code(name: str, url_id: str) -> Callable[[str], str]:
    """reverse(name, url_id, code) for any code, without reversing: the parts around the id and
    the code, the code quoted as reverse() quotes it (a review page links 160 codes, and each
    reverse() took longer than the row's drawing). A code reverse() would refuse (empty, or with a
    slash), or an id it might quote, goes to reverse() itself, which refuses or quotes it."""
    if not _PLAIN_URL_ID.fullmatch(url_id):
        def reversed_url(code: str) -> str:
            return reverse(name, kwargs={"url_id": url_id, "code": code})
        return reversed_url
    before, between, after = _url_parts(name, True, get_script_prefix())
    head = before + url_id + between

    def url(code: str) -> str:
        if not code or "/" in code:
            return reverse(name, kwargs={"url_id": url_id, "code": code})
        return head + quote(code, safe=RFC3986_SUBDELIMS + "/~:@") + after
    return url


def judge_links(url_id: str) -> PageLinks:
    return PageLinks(
        home=_judge_url("judge_home", url_id),
        instructions=_judge_url("judge_instructions", url_id),
        review=_judge_url("judge_lock", url_id),
        item=_per_code("judge_item", url_id),
        frame=_per_code("judge_frame", url_id),
    )


FLAG_KIND_LABELS = {
    "underspecified": "Underspecified: the statement leaves the right answer open",
    "tests_unfair": "Tests unfair: they would reject a correct solution or accept a wrong one",
    "other": "Other (say what in the reason)",
}
FLAG_SEVERITY_LABELS = ["0: minor", "1: noticeable", "2: serious", "3: the task cannot be judged fairly"]


def flag_context(*, url: str, phase, mine: dict | None, can_flag: bool, code: str,
                 item_url: str = "", posted=None) -> dict:
    """The "Flag this task" control of an item page (sessions with task flags): where it posts,
    the judge's own flag on the item's task in this phase (`mine`, or None), whether it can be
    changed (an open session, the phase not locked), the choices (nothing chosen unless the judge
    chose it: their saved flag, or what they typed into a refused form)."""
    chosen = posted or (mine or {})
    return {
        "url": url, "phase": phase, "code": code, "item_url": item_url, "mine": mine,
        "can_flag": can_flag and not (mine or {}).get("locked"),
        "mine_kind_label": FLAG_KIND_LABELS.get((mine or {}).get("kind"), ""),
        "kinds": [(value, FLAG_KIND_LABELS[value]) for value in FLAG_KINDS],
        "severities": [(str(level), FLAG_SEVERITY_LABELS[level]) for level in range(MAX_SEVERITY + 1)],
        "kind": chosen.get("kind", ""), "severity": str(chosen.get("severity", "")),
        "reason": chosen.get("reason", ""),
        "reason_limit": f"{text_limit('reason'):,}",
    }


def verdict_choices(session, phase, *, finding: bool = False):
    """(value, label, key) of each choice: 1 and 2 the verdicts, 3 "keep" in phase 2, or in an
    adjudication "cannot tell" (`j`/`k` move between items, so no letter is a choice).
    `finding`: the item is a finding (an adjudication's items are findings or copies)."""
    values = list(verdict_values(session.kind, finding=finding))
    if phase == 2:
        values.append(KEEP)
    return [(value, verdict_label(value), str(index + 1)) for index, value in enumerate(values)]


def items_context(*, session, phase, assignments, answered: int, links: PageLinks) -> dict:
    """The items page (judge/session.html): the codes in order with their links, what is answered
    in the phase, where to go on. `answered`: how many items have a verdict of the phase, the
    judge's one count of them (Judge.answered: the same count their socket reports, so the page
    and the socket agree)."""
    rows = [{**a, "url": links.item(a["code"])} for a in assignments]
    if not phase:
        answered = len(assignments)
    continue_code = None
    if phase:
        continue_code = next((a["code"] for a in assignments if phase not in a["answered"]),
                             assignments[0]["code"] if assignments else None)
    return {
        "session": session, "phase": phase, "assignments": rows, "answered": answered,
        "total": len(assignments), "links": links,
        "continue_url": links.item(continue_code) if continue_code else None,
        "can_lock": phase is not None and answered == len(assignments),
    }


def item_context(request, *, session, view: JudgeItem, links: PageLinks, progress: JudgeProgress,
                 read_only_reason: str | None, live_phase: int | None, can_answer: bool,
                 error=None, posted=None) -> dict:
    """The item page's context: the contract templates/judge/item.html renders.

    one_key: a verdict key records and shows the next item (the session's advance_on_key);
    read_only / read_only_reason: nothing can be saved (both phases locked, or the session not
    open) and why; can_answer: the form takes choices (an open session, or a preview); revision:
    the item's save number, sent back with every save (a save from a tab that missed another's
    answers 409 {"error": "changed_elsewhere", "message", "saved": false, "verdict", "reason",
    "revision"}; `overwrite=1` saves anyway); a save answers {"saved": true, "revision",
    "saved_at"}; a save with an empty verdict stores the reason alone. progress: answered, total,
    median_seconds, remaining_seconds (the judge's own median x items left; None before 2
    answers), answered_codes (the codes answered in the phase, which the page counts once each).
    phase1_reason / phase1_verdict_label: the judge's own phase-1 answer. next_url,
    previous_url, review_url, next_frame_url (None at the ends). mark_disagreement, and on
    item.reviewer_rows `verdict_label` and `disagrees`; item.proposed_verdict_label and
    item.proposed_disagrees for findings. choices: (value, label, key) with keys 1, 2 (3: keep).
    """
    current = view.verdict or {}
    stored_reason = current.get("reason", "") if view.verdict else view.draft_reason
    return {
        "session": session, "item": view, "error": error, "links": links,
        "task_html": view.task_html, "rubric_html": view.rubric_html,
        "choices": verdict_choices(session, view.phase, finding=view.is_finding),
        # An adjudication's answers are truth kept beside the imported one: each needs its reason
        # before the lock (judging.services.phase_lock).
        "reason_required": session.kind == SessionKind.ADJUDICATION,
        "reason_limit": f"{text_limit('reason'):,}",
        "chosen": (posted.get("verdict") if posted else None) or (
            KEEP if current.get("kept") else current.get("value")),
        "reason": posted.get("reason", "") if posted else stored_reason,
        "seconds_spent": current.get("seconds_spent", 0) if view.verdict else view.draft_seconds,
        "is_findings": view.is_finding,
        "open": can_answer,
        "live_phase": live_phase,
        "frame_url": links.frame(view.code),
        # A pairs session's two copies, each framed by its own code (a pair's code frames none).
        "pair": ({side: {**view.pair[side], "frame_url": links.frame(view.pair[side]["code"])}
                  for side in ("left", "right")} if view.pair else None),
        "one_key": session.advance_on_key,
        "read_only": read_only_reason is not None,
        "read_only_reason": read_only_reason,
        "revision": view.revision,
        "progress": {"answered": progress.answered, "total": progress.total,
                     "median_seconds": progress.median_seconds,
                     "remaining_seconds": progress.remaining_seconds,
                     "answered_codes": progress.answered_codes},
        "phase1_reason": (view.phase1_verdict or {}).get("reason", ""),
        "phase1_verdict_label": verdict_label((view.phase1_verdict or {}).get("value")),
        "next_url": links.item(view.next_code) if view.next_code else None,
        "previous_url": links.item(view.previous_code) if view.previous_code else None,
        "review_url": links.review,
        "next_frame_url": links.frame(view.next_code) if view.next_code and not view.pair
        else None,
        "mark_disagreement": session.mark_disagreement,
        # The frame's rows are this high (content.rendering): the page sizes the frame from
        # item.frame_lines with them, so the page scrolls and not a box inside it.
        "frame_line_px": FRAME_LINE_PX, "frame_pad_px": FRAME_PAD_PX,
        # A prose frame's estimated heights were made for prose this many `ch` wide
        # (content.prose_height): the page takes the height at its own width through the two.
        "frame_prose_ch": f"{PROSE_MEASURE_CH} {PROSE_NARROW_CH}",
    }


REASON_START_CHARS = 120


def start_of(reason: str) -> str:
    """The start of a reason for the review table: its first REASON_START_CHARS characters."""
    reason = " ".join(reason.split())
    return reason if len(reason) <= REASON_START_CHARS else reason[:REASON_START_CHARS - 1] + "…"


def review_context(*, session, phase, entries, links: PageLinks, error=None) -> dict:
    """The review before a lock (judge/review.html): every item in order with its verdict of the
    phase (entries from judge_review), unanswered ones listed first."""
    rows = []
    for entry in entries:
        verdict = entry["verdict"]
        rows.append({
            "code": entry["code"], "position": entry["position"], "answered": verdict is not None,
            "url": links.item(entry["code"]),
            "verdict_label": (verdict_label(KEEP) + f" ({verdict_label(verdict['value'])})"
                              if verdict and verdict["kept"] else
                              verdict_label(verdict["value"]) if verdict else "No verdict yet"),
            "reason_start": start_of(verdict["reason"]) if verdict else "",
            "seconds_spent": verdict["seconds_spent"] if verdict else None,
            # Marked by the page's own time on the item (summed over visits), the figure this
            # row shows: the judge can check it against what they remember. The server's interval
            # between answer saves is not used here: saves retried after a lost connection land
            # together, and answers changed on a second pass come seconds apart, so it would mark
            # items the judge read at length (the report gives it beside this one).
            "check": verdict is not None and verdict["seconds_spent"] < QUICK_ANSWER_SECONDS,
        })
    missing = [row for row in rows if not row["answered"]]
    return {"session": session, "phase": phase, "rows": rows, "missing": missing,
            "rows_html": mark_safe("".join(_review_row_html(row) for row in rows)),  # noqa: S308
            "checks": sum(row["check"] for row in rows),
            "answered": len(rows) - len(missing), "total": len(rows), "error": error,
            "links": links}


def _escaped(value) -> str:
    """conditional_escape's text, without its SafeString per value."""
    return value.__html__() if hasattr(value, "__html__") else html.escape(str(value))


def _whole_seconds(seconds) -> str:
    """floatformat:"0" of a time in seconds: rounded half up to a whole number, no grouping."""
    return str(int(Decimal(repr(float(seconds))).quantize(Decimal(1), rounding=ROUND_HALF_UP)))


def _review_row_html(row: dict) -> str:
    """One row of the review table, every value escaped as autoescape escapes it: what the
    template's loop drew, byte for byte (tests/judge/test_review_rows.py), at a fraction of its
    time (a review page has a row per item, 160 in the benchmark, and the template engine's cost
    per value was most of the page; format_html's, half of what was left)."""
    if row["check"]:
        spent = '<strong class="check">answered in 0 s — check</strong>'
    elif row["seconds_spent"] is not None:
        spent = _whole_seconds(row["seconds_spent"]) + " s"
    else:
        spent = "—"
    unanswered = "" if row["answered"] else ' class="unanswered"'
    return (f'<tr{unanswered}>\n'
            f'    <td>{_escaped(row["position"])}</td>\n'
            f'    <td><a class="code" href="{_escaped(row["url"])}">{_escaped(row["code"])}</a></td>\n'
            f'    <td>{_escaped(row["verdict_label"])}</td>\n'
            f'    <td>{_escaped(row["reason_start"] or "—")}</td>\n'
            f'    <td>{spent}</td>\n  </tr>')


def instructions_context(*, session, shown, links) -> dict:
    """The instructions page of a judge, or of a host's preview: the host's text as judges get it
    and what the product says itself."""
    return {
        "session": session, "instructions_html": shown.instructions_html, "links": links,
        "estimate": time_estimate(shown.items, shown.minutes_per_item),
        "verdict_keys": verdict_keys(shown.kind), "marks": mark_meanings(),
        "phase": shown.phase,
        # Issue 16's one-key setting (a verdict key records and moves on) where the session has it.
        "one_key": session.advance_on_key,
    }


def frame_response(request, stored):
    """The stored frame bytes with the frame's headers: its CSP (sandbox, the style block's hash),
    no referrer, same-origin only. Shared by the judging frame and the scorecard's copy frame."""
    # Stored compressed at opening; sent as stored to every client that takes gzip (every
    # browser), decompressed only for one that does not.
    if ACCEPTS_GZIP.search(request.headers.get("Accept-Encoding", "")):
        response = HttpResponse(stored.gzipped, content_type="text/html; charset=utf-8")
        response["Content-Encoding"] = "gzip"
    else:
        response = HttpResponse(gzip.decompress(stored.gzipped),
                                content_type="text/html; charset=utf-8")
    patch_vary_headers(response, ["Accept-Encoding"])
    response["Content-Security-Policy"] = stored.csp
    response["Referrer-Policy"] = "no-referrer"
    response["Cross-Origin-Resource-Policy"] = "same-origin"
    return response
