"""The walk issue 24 is done by, in real Chromium against a real server process: one judge, one
phase, every way a verdict could be recorded without being meant.

On a 1440 px screen the judge holds a verdict key for a second, presses keys 30 ms apart and
double-clicks a verdict; on a 390 px phone (touch) they finish with one tap per item; on the way
they read a markdown copy taller than the screen to its end by keyboard alone. The review page
and then the revealed report hold exactly the verdicts given on purpose — one per item, the value
chosen — each with the time it was on screen.

The page's clock is Playwright's (installed before the first page loads) and only this test moves
it, so "a second", "30 ms apart" and "read for 1.5 s" mean the same on a busy machine; the
server's clock plays no part in what counts.
"""

import os
import re

import pytest
from playwright.sync_api import expect

from judging.demo import DEMO_RUBRIC, demo_bundle
from judging.services import phase_lock
from reports.build import build_report
from tests.e2e.judge_keys import (
    HELD,
    KEYS_READY,
    TOO_SOON,
    stored_verdicts,
    wait_stored,
    wait_until_keys_count,
)
from tests.worlds import a_demo_session, a_host, advance, invite_and_join, judge_cookie

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.browser_once("every way a browser could send a verdict not meant")]

WIDE = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}
READ_MS = 1500  # how long the judge reads each copy before choosing, on the page's clock
LAST_WORDS = "The last paragraph of this long migration guide."


def long_markdown_bundle() -> dict:
    """The demo run, its markdown copy made a migration guide far taller than either screen, with
    its last paragraph the one a judge must reach."""
    bundle = demo_bundle()
    [copy] = [c for c in bundle["copies"] if c["format"] == "markdown"]
    sections = "".join(f"\n\n## Step {n}\n\nMove the setting `option_{n}` to the new section and "
                       f"run the checks again before the next step; nothing else changes here.\n"
                       for n in range(1, 41))
    copy["content"] = copy["content"] + sections + "\n\n" + LAST_WORDS + "\n"
    return bundle


def shown_next(page, code: str):
    """Wait until the item page shows `code`, moving the page's clock on meanwhile: a tap's move
    waits on its save (and a timer), which must not wait on a clock only this test moves. (Not
    for a burst of keys, whose point is that the clock stands still.)"""
    for _ in range(250):
        if page.locator("h1 .code").inner_text().strip() == code:
            return
        page.clock.run_for(20)
        page.wait_for_timeout(20)
    expect(page.locator("h1 .code")).to_have_text(code)


def read(page):
    """The judge reads the copy now shown, for READ_MS on the page's clock."""
    page.clock.run_for(READ_MS)
    wait_until_keys_count(page, on_page_clock=True)


def read_to_the_end_by_keyboard(page):
    """Down the markdown copy with the keyboard alone, to its last paragraph, which must then be
    on screen and not under the bar."""
    body = page.frame_locator("iframe.copy-frame").locator("p", has_text=LAST_WORDS)
    bar = page.locator("#verdict-form")
    for _ in range(60):
        box, bar_box = body.bounding_box(), bar.bounding_box()
        if box and box["y"] >= 0 and box["y"] + box["height"] <= bar_box["y"]:
            return
        page.keyboard.press("PageDown")
        page.clock.run_for(100)
    raise AssertionError(f"the copy's last paragraph was never on screen: {box}, bar {bar_box}")


def test_only_the_verdicts_given_on_purpose_are_recorded_each_with_its_time(e2e_server,
                                                                             observed_context):
    session = a_demo_session(a_host(f"walk-{os.urandom(3).hex()}"), "open", rubric=DEMO_RUBRIC,
                             bundle=long_markdown_bundle())
    judge = invite_and_join(session, name="Walking Judge").judge
    order = list(judge.assignments.order_by("position").values_list("code", flat=True))
    by_copy = dict(judge.assignments.values_list("item__copy__bundle_id", "code"))
    markdown_code = by_copy[next(c["id"] for c in long_markdown_bundle()["copies"]
                                 if c["format"] == "markdown")]
    given = {}  # code -> the verdict given on purpose
    name, value = judge_cookie(judge).split("=", 1)

    def open_on(viewport, **options):
        context, seen = observed_context(e2e_server.origin, viewport=viewport, **options)
        context.add_cookies([{"name": name, "value": value, "url": e2e_server.origin}])
        page = context.new_page()
        page.clock.install()
        return page, seen

    def on_item(page, index):
        expect(page.locator("h1 .code")).to_have_text(order[index])
        if order[index] == markdown_code:
            read_to_the_end_by_keyboard(page)
        read(page)

    page, seen = open_on(WIDE)
    page.goto(e2e_server.url(f"/s/{session.url_id}/i/{order[0]}/"))
    page.clock.pause_at(page.evaluate("Date.now()") + 100)

    # 1. A verdict key held for a second: one press and thirty auto-repeats answer one item.
    #    The press counts once the copy has been on screen long enough; repeats that arrive while
    #    the page moves to the next item are ignored, and those after it are refused as held. On a
    #    loaded machine the move (a fetch, on the real clock) can outlast every repeat, so the
    #    test lets it end halfway through the hold, and the later repeats land on the new item.
    on_item(page, 0)
    wait_until_keys_count(page, on_page_clock=True)
    for _ in range(5):
        page.keyboard.down("2")
        page.clock.run_for(33)
    expect(page.locator("h1 .code")).to_have_text(order[1])
    for _ in range(26):
        page.keyboard.down("2")
        page.clock.run_for(33)
    page.keyboard.up("2")
    given[order[0]] = "fail"
    expect(page.locator("h1 .code")).to_have_text(order[1])
    expect(page.locator("#autosave-status")).to_have_text(HELD)
    wait_stored(page, judge, 1, on_page_clock=True)

    # 2. Keys 30 ms apart: the first answers the item it was on; the rest, on the next item
    #    before its copy has been shown, are dropped (never queued).
    on_item(page, 1)
    page.keyboard.press("1")
    given[order[1]] = "pass"
    expect(page.locator("h1 .code")).to_have_text(order[2])
    for _ in range(9):
        page.clock.run_for(30)
        page.keyboard.press("2")
    expect(page.locator("#autosave-status")).to_have_text(TOO_SOON)
    expect(page.locator(KEYS_READY)).to_have_count(0)

    # 3. A double click: the second click lands on the next item and is undone there.
    on_item(page, 2)
    page.get_by_role("radio", name=re.compile("^Fail")).dblclick()
    given[order[2]] = "fail"
    expect(page.locator("h1 .code")).to_have_text(order[3])
    expect(page.locator("input[name=verdict]:checked")).to_have_count(0)
    # 4. Deliberate keys, one item after another, reading each first.
    on_item(page, 3)
    page.keyboard.press("1")
    given[order[3]] = "pass"
    expect(page.locator("h1 .code")).to_have_text(order[4])
    wait_stored(page, judge, 4, on_page_clock=True)
    assert {code: v for code, (v, _) in stored_verdicts(judge).items()} == given
    assert seen.page_errors == []

    # 5. The rest on a phone, one tap per item.
    phone, phone_seen = open_on(PHONE, has_touch=True, is_mobile=True)
    phone.goto(e2e_server.url(f"/s/{session.url_id}/i/{order[4]}/"))
    phone.clock.pause_at(phone.evaluate("Date.now()") + 100)
    for index in range(4, len(order)):
        on_item(phone, index)
        choice = "Pass" if index % 2 else "Fail"
        # A tap before the minimum time on screen is dropped as too soon (on purpose); that time
        # starts when the copy's frame has loaded, on the real clock, which a loaded machine makes
        # late: the tap waits for the page to take it, as a reading judge does.
        wait_until_keys_count(phone, on_page_clock=True)
        phone.get_by_role("radio", name=re.compile(f"^{choice}")).tap()
        given[order[index]] = choice.lower()
        if index + 1 < len(order):
            shown_next(phone, order[index + 1])
    recorded = wait_stored(phone, judge, len(order), on_page_clock=True)
    assert phone_seen.page_errors == []

    # The review page lists exactly those verdicts, each with its time on screen (in a tab of its
    # own: the last tap may still be taking the first tab there).
    review = phone.context.new_page()
    review.goto(e2e_server.url(f"/s/{session.url_id}/lock/"))
    rows = review.locator("table.review tbody tr")
    expect(rows).to_have_count(len(order))
    for row in range(len(order)):
        cells = rows.nth(row).locator("td")
        code = cells.nth(1).inner_text()
        assert cells.nth(2).inner_text().casefold() == given[code], code
        seconds = float(cells.nth(4).inner_text().removesuffix(" s"))
        assert seconds >= READ_MS / 1000 - 0.5, (code, seconds)

    # And the revealed report: one phase-1 verdict per item, the value given, its time on screen
    # (the copy was read for READ_MS first; none is the "0 s" of a key nobody meant).
    assert {code: v for code, (v, _) in recorded.items()} == given
    phase_lock(judge=judge, phase=1)
    report = build_report(advance(session, "revealed"))
    rows = [v for v in report["verdicts"] if v["phase"] == 1]
    assert {v["code"]: v["value"] for v in rows} == given and len(rows) == len(order)
    for v in rows:
        assert v["seconds_spent"] >= READ_MS / 1000, v
