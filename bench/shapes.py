"""What each response the load benchmark (bench/run.py) gets must hold, as the pages are today.

A response of the wrong shape is not a slow or failed request: it means the page changed and the
benchmark no longer measures what it says (issue 32: it kept looking for `<pre` in a copy frame
that had become rows, and counted 520 of 808 frames as errors). So a check tells two things
apart:

- the server failing under load (a 5xx, 429, a timeout or a dropped connection): returned as a
  problem, counted among the cell's errors, and the run goes on;
- anything else that is not what the page gives today (another status, a marker missing, a JSON
  answer without its fields): PageChanged is raised, naming the page, the request and what was
  missing, and bench/run.py stops at once with a non-zero exit.

The markers are the parts each page exists for, not wording a copy edit would change: the item
page's verdict form and sandboxed frame for the code asked, the frame's rows, the save's JSON
fields, the phase-2 page's model reviewers, the review page's lock button, the lock's redirect
home, one progress row per judge, and the report download's schema, header row or policy.
tests/test_bench_shapes.py shows each check passing on the real pages and firing on a page of
the wrong shape.
"""

import json
from dataclasses import dataclass, field

# Counted as the server's failures under load, never as a page changing shape.
OVERLOAD_STATUSES = frozenset({429, 500, 502, 503, 504})


class PageChanged(Exception):
    """A response that is not of its page's shape today: the benchmark is stale."""

    def __init__(self, page: str, request: str, problem: str, body: bytes = b""):
        self.page, self.request, self.problem = page, request, problem
        excerpt = body[:300].decode("utf-8", "replace")
        super().__init__(f"{page} changed shape{f' ({request})' if request else ''}: {problem}"
                         + (f"; the response began {excerpt!r}" if excerpt else ""))


@dataclass(frozen=True)
class Shape:
    """One page's shape: its status, the byte strings its body must contain, the Location of a
    redirect, the JSON fields an answer must have (field: value, or None for any value), and a
    marker that must occur exactly `count` times."""

    page: str
    status: int = 200
    contains: tuple[bytes, ...] = ()
    location: str | None = None
    json_fields: dict = field(default_factory=dict)
    counted: tuple[bytes, int] | None = None

    def check(self, status: int, headers, body: bytes, request: str = "") -> str | None:
        """None when the response is of the page's shape; the problem (to count as an error)
        when the server failed under load; raises PageChanged for anything else."""
        if status != self.status:
            if status in OVERLOAD_STATUSES:
                return f"{self.page}: status {status}: {body[:200]!r}"
            raise PageChanged(self.page, request, f"status {status}, expected {self.status}", body)
        missing = [marker for marker in self.contains if marker not in body]
        if missing:
            raise PageChanged(self.page, request, "missing " + ", ".join(
                repr(m.decode()) for m in missing), body)
        if self.location is not None and (headers or {}).get("Location") != self.location:
            raise PageChanged(self.page, request, f"redirect to {(headers or {}).get('Location')!r}, "
                              f"expected {self.location!r}", body)
        if self.json_fields:
            try:
                answer = json.loads(body)
            except ValueError:
                raise PageChanged(self.page, request, "not a JSON answer", body) from None
            for name, value in self.json_fields.items():
                if not isinstance(answer, dict) or name not in answer:
                    raise PageChanged(self.page, request, f"missing the JSON field {name!r}", body)
                if value is not None and answer[name] != value:
                    raise PageChanged(self.page, request, f"JSON field {name!r} is "
                                      f"{answer[name]!r}, expected {value!r}", body)
        if self.counted is not None:
            marker, count = self.counted
            found = body.count(marker)
            if found != count:
                raise PageChanged(self.page, request, f"{found} of {marker.decode()!r}, "
                                  f"expected {count}", body)
        return None


def hello() -> Shape:
    return Shape("the hello-world baseline (bench/urls.py)", contains=(b"Hello, world",))


def statement() -> Shape:
    return Shape("the one-statement floor (bench/urls.py)", contains=(b"statement 1",))


def admitted(pseudonym: str) -> Shape:
    """The judge guard's floor (bench/urls.py): the judge the cookie admits, by pseudonym."""
    return Shape("the judge guard's floor (bench/urls.py)",
                 contains=(f"admitted {pseudonym}".encode(),))


def item(code: str, phase: int) -> Shape:
    """The item page (judge/views.py, templates/judge/item.html) for this code in this phase: its
    verdict form naming the phase, and the copy's sandboxed frame; in phase 2 the model
    reviewers' section besides (the benchmark's bundle has reviews on every copy)."""
    markers = (f'data-code="{code}"'.encode(), f'data-phase="{phase}"'.encode(),
               b'<form method="post" class="verdict', f'name="phase" value="{phase}"'.encode(),
               b'<iframe class="copy-frame" sandbox src="')
    if phase == 2:
        markers += (b'id="reviewers-heading"',)
    return Shape(f"the item page (phase {phase})", contains=markers)


def pair(code: str) -> Shape:
    """A pairs session's item page in phase 1: the pair's code, its verdict form, and the two
    copies' sandboxed frames, left and right."""
    return Shape("the pair page (phase 1)", contains=(
        f'data-code="{code}"'.encode(), b'data-phase="1"', b'<form method="post" class="verdict',
        b'name="phase" value="1"', b'data-side="left"', b'data-side="right"'),
        counted=(b'<iframe class="copy-frame" sandbox src="', 2))


def reason(code: str) -> Shape:
    """A reasons session's item page in phase 1 (issue 30): the item page's verdict form and the
    copy's frame, with the review to audit above them."""
    return Shape("the reasons item page (phase 1)", contains=(
        f'data-code="{code}"'.encode(), b'data-phase="1"', b'<form method="post" class="verdict',
        b'name="phase" value="1"', b'<iframe class="copy-frame" sandbox src="',
        b'<section class="review-audited"'))


def frame() -> Shape:
    """The copy frame: the frame document (content.rendering.frame_document) holding numbered
    rows (content.rendering.FrameBody; a markdown copy's plain-text view has them too)."""
    return Shape("the copy frame", contains=(
        b'<main tabindex="0"><h1 class="visually-hidden">The copy</h1>', b'<span class="r'))


def save() -> Shape:
    """The item page's autosave answer (Accept: application/json)."""
    return Shape("a verdict save (the item page's autosave)",
                 json_fields={"saved": True, "revision": None, "saved_at": None})


def review(phase: int) -> Shape:
    """The review page before the lock (templates/judge/review.html) of a judge who answered
    every item: the verdicts' table and the lock button."""
    return Shape(f"the review page (phase {phase})", contains=(
        f"Review, then lock phase {phase}".encode(), b'<table class="review">',
        f'<input type="hidden" name="phase" value="{phase}">'.encode(),
        b'name="confirm" value="yes"'))


def lock(url_id: str, phase: int) -> Shape:
    """A lock: the judge is sent back to their items."""
    return Shape(f"a lock (phase {phase})", status=302, location=f"/s/{url_id}/")


def progress(judges: int) -> Shape:
    """The host's progress view ("Judges and progress"): the totals and one row per judge."""
    return Shape("the host's progress view", contains=(b'id="live-totals"', b'id="judges-live"'),
                 counted=(b'<tr data-judge="', judges))


def report(fmt: str) -> Shape:
    """The host's report download of a revealed session (host/views/reports.py), by format: the
    JSON report's schema name, the CSV's header row, the HTML page under its own policy."""
    page = f"the report download ({fmt})"
    if fmt == "json":
        return Shape(page, json_fields={"schema": "blindjudge.report/2"})
    if fmt == "csv":
        return Shape(page, contains=(b"rater_kind,rater,group,phase,condition,item,copy,task,",))
    if fmt == "html":
        return Shape(page, contains=(b"<!DOCTYPE html>", b'http-equiv="Content-Security-Policy"'))
    raise ValueError(f"no shape for the report format {fmt!r}")
