"""Every recorded verdict is one a judge gave on purpose (issue 24, items 1 to 3), in real Chromium
against a real server process.

- A held key answers once: its repeats, and a burst of keys 30 ms apart, answer nothing past the
  item the first press was on; a click that comes before the copy has been on screen is undone.
  Each dropped key says so in the bar, and none is queued.
- A save still in flight for the item the judge went back from is never overtaken by that item's
  page fetched ahead: coming back shows what was typed, and the next key is stored (it used to be
  refused as "changed in another tab").
- The progress bar counts each answered item once, at every step of a whole phase.

Where the timing is the point (keys 30 ms apart, a copy shown for less than the minimum), the page's
clock is Playwright's, moved on by the test, so a busy machine cannot turn a burst into deliberate
presses or the reverse.
"""

import os
import re

import pytest
from playwright.sync_api import expect

from judging.demo import DEMO_RUBRIC
from judging.models import Verdict
from judging.services import KEEP
from tests.e2e.judge_keys import (
    HELD,
    KEYS_READY,
    TOO_SOON,
    choose_by_key,
    hold_saves,
    stored_verdicts,
    wait_stored,
    wait_until_held,
    wait_until_keys_count,
)
from tests.worlds import a_demo_session, a_host, answer_all, codes, invite_and_join, judge_cookie

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.browser_once("what the page sends only when a judge means it")]


def _judge_on_first_item(server, observed_context, **options):
    session = a_demo_session(a_host(f"purpose-{os.urandom(3).hex()}"), "open",
                             rubric=DEMO_RUBRIC, **options)
    judge = invite_and_join(session, name="On Purpose").judge
    context, seen = observed_context(server.origin, viewport={"width": 1440, "height": 900})
    name, value = judge_cookie(judge).split("=", 1)
    context.add_cookies([{"name": name, "value": value, "url": server.origin}])
    page = context.new_page()
    return session, judge, page, seen


def _stored(judge) -> dict:
    return {code: value for code, (value, _) in stored_verdicts(judge).items()}


def test_a_held_key_answers_one_item_and_its_repeats_answer_nothing(e2e_server, observed_context):
    session, judge, page, seen = _judge_on_first_item(e2e_server, observed_context)
    order = codes(judge)
    page.goto(e2e_server.url(f"/s/{session.url_id}/i/{order[0]}/"))
    wait_until_keys_count(page)

    # A key held 0.2 s: one press, then the keyboard's auto-repeats (Playwright sends `repeat`
    # on every keydown of a key already down).
    for _ in range(7):
        page.keyboard.down("2")
        page.wait_for_timeout(30)
    page.keyboard.up("2")
    expect(page.locator("h1 .code")).to_have_text(order[1])
    wait_stored(page, judge, 1)
    # The repeats that reached the second item were dropped there, and the bar said why.
    expect(page.locator("#autosave-status")).to_have_text(HELD)
    expect(page.locator("input[name=verdict]:checked")).to_have_count(0)
    page.wait_for_timeout(300)  # room for a queued key to land, if one were queued
    assert _stored(judge) == {order[0]: "fail"}
    expect(page.locator("h1 .code")).to_have_text(order[1])

    # Released and pressed again once the copy has been read: that one counts.
    choose_by_key(page, "1")
    expect(page.locator("h1 .code")).to_have_text(order[2])
    wait_stored(page, judge, 2)
    assert _stored(judge) == {order[0]: "fail", order[1]: "pass"}
    assert seen.page_errors == []


def test_keys_30_ms_apart_and_a_click_too_soon_answer_nothing_unseen(e2e_server, observed_context):
    session, judge, page, seen = _judge_on_first_item(e2e_server, observed_context)
    order = codes(judge)
    page.clock.install()
    page.goto(e2e_server.url(f"/s/{session.url_id}/i/{order[0]}/"))
    page.clock.pause_at(page.evaluate("Date.now()") + 1000)  # the first copy has been read
    wait_until_keys_count(page, on_page_clock=True)

    # Fifteen presses 30 ms apart: the first answers the item it was on; the rest land on the next
    # item before its copy has been on screen for 300 ms, each starting that wait again.
    page.keyboard.press("1")
    expect(page.locator("h1 .code")).to_have_text(order[1])
    for _ in range(14):
        page.clock.run_for(30)
        page.keyboard.press("2")
    expect(page.locator("#autosave-status")).to_have_text(TOO_SOON)
    expect(page.locator(KEYS_READY)).to_have_count(0)
    # A click on a verdict at that moment (the second click of a double click) is undone.
    page.get_by_role("radio", name=re.compile("^Fail")).click()
    expect(page.locator("input[name=verdict]:checked")).to_have_count(0)
    expect(page.locator("#autosave-status")).to_have_text(TOO_SOON)
    page.clock.run_for(1000)  # any save a dropped key or click had started would leave now
    wait_stored(page, judge, 1)
    assert _stored(judge) == {order[0]: "pass"}
    expect(page.locator("h1 .code")).to_have_text(order[1])

    # After a pause the judge's choice counts, by click as by key: one click per decision,
    # recorded and on to the next item.
    wait_until_keys_count(page, on_page_clock=True)
    page.get_by_role("radio", name=re.compile("^Fail")).click()
    expect(page.locator("h1 .code")).to_have_text(order[2])
    wait_stored(page, judge, 2)
    assert _stored(judge) == {order[0]: "pass", order[1]: "fail"}
    assert seen.page_errors == []


def test_a_double_click_answers_one_item(e2e_server, observed_context):
    """One click per decision: the second click of a double click lands on the next item, on the
    same spot, before its copy has been on screen, and is undone there."""
    session, judge, page, seen = _judge_on_first_item(e2e_server, observed_context)
    order = codes(judge)
    page.goto(e2e_server.url(f"/s/{session.url_id}/i/{order[0]}/"))
    wait_until_keys_count(page)
    page.get_by_role("radio", name=re.compile("^Pass")).dblclick()
    expect(page.locator("h1 .code")).to_have_text(order[1])
    wait_stored(page, judge, 1)
    page.wait_for_timeout(300)  # room for a second verdict to be sent, if one were
    assert _stored(judge) == {order[0]: "pass"}
    expect(page.locator("h1 .code")).to_have_text(order[1])
    expect(page.locator("input[name=verdict]:checked")).to_have_count(0)
    assert seen.page_errors == []


def test_going_back_while_a_save_is_in_flight_never_loses_it_to_the_page_fetched_ahead(
        e2e_server, observed_context):
    session, judge, page, seen = _judge_on_first_item(e2e_server, observed_context)
    first, second = codes(judge)[:2]
    page.goto(e2e_server.url(f"/s/{session.url_id}/i/{first}/"))
    choose_by_key(page, "1")
    expect(page.locator("h1 .code")).to_have_text(second)
    wait_stored(page, judge, 1)

    # On the second item a reason is typed; `b` saves it and goes back; that save is held on
    # its way (a slow server, a second writer holding SQLite's lock) while the judge presses `n`.
    held = hold_saves(page, re.compile(rf"/i/{second}/$"))
    page.get_by_label(re.compile("^Reason")).fill("the migration drops the index")
    page.keyboard.press("Escape")
    page.keyboard.press("b")
    expect(page.locator("h1 .code")).to_have_text(first)
    wait_until_held(page, held)
    page.keyboard.press("n")
    page.wait_for_timeout(200)  # the move waits for that save: the second item is not shown yet
    expect(page.locator("h1 .code")).to_have_text(first)
    held[0].continue_()
    page.unroute(re.compile(rf"/i/{second}/$"))

    # The second item comes back as saved, and its next verdict is stored, not refused.
    expect(page.locator("h1 .code")).to_have_text(second)
    expect(page.get_by_label(re.compile("^Reason"))).to_have_value("the migration drops the index")
    expect(page.locator(".conflict")).to_be_hidden()
    choose_by_key(page, "2")
    wait_stored(page, judge, 2)
    assert _stored(judge) == {first: "pass", second: "fail"}
    verdict = Verdict.objects.get(assignment__code=second, phase=1)
    assert verdict.reason == "the migration drops the index"
    expect(page.locator(".conflict")).to_be_hidden()
    assert seen.page_errors == [] and seen.dialogs == []


def test_the_progress_bar_counts_each_item_once_at_every_step_of_a_phase(e2e_server, observed_context):
    session, judge, page, seen = _judge_on_first_item(e2e_server, observed_context)
    order = codes(judge)
    total = len(order)
    page.goto(e2e_server.url(f"/s/{session.url_id}/i/{order[0]}/"))
    answered = page.locator(".answered-text")
    expect(answered).to_have_text(f"0 of {total} answered")
    for position, code in enumerate(order[:-1], start=1):
        expect(page.locator("h1 .code")).to_have_text(code)
        expect(answered).to_have_text(f"{position - 1} of {total} answered")
        choose_by_key(page, "1" if position % 2 else "2")
        expect(page.locator("h1 .code")).to_have_text(order[position])
        expect(answered).to_have_text(f"{position} of {total} answered")
        if position == 3:
            # Back to an answered item and on again: still one item each.
            page.keyboard.press("b")
            expect(page.locator("h1 .code")).to_have_text(code)
            expect(answered).to_have_text(f"{position} of {total} answered")
            choose_by_key(page, "2")  # answered again, differently
            expect(page.locator("h1 .code")).to_have_text(order[position])
            expect(answered).to_have_text(f"{position} of {total} answered")
    # The last save's answer has reached the page (until then the page asks before a reload).
    expect(page.locator("#autosave-status")).to_have_text(re.compile(rf"^Item {order[-2]} saved "))
    wait_stored(page, judge, total - 1)
    page.reload()
    expect(answered).to_have_text(f"{total - 1} of {total} answered")
    assert len(_stored(judge)) == total - 1
    assert seen.page_errors == []


def test_after_both_locks_the_item_pages_buttons_look_disabled(e2e_server, observed_context):
    """After both locks "Save and next" still looked active (issue 24 item 6)."""
    session, judge, page, seen = _judge_on_first_item(e2e_server, observed_context)
    code = codes(judge)[0]
    page.goto(e2e_server.url(f"/s/{session.url_id}/i/{code}/"))
    primary = page.get_by_role("button", name="Save and next")
    expect(primary).to_be_enabled()
    active = primary.evaluate("b => getComputedStyle(b).backgroundColor")
    page.goto("about:blank")  # off the page before the locks: its live socket would follow them
    answer_all(judge, 1, "pass", lock=True)
    answer_all(judge, 2, KEEP, lock=True)
    page.goto(e2e_server.url(f"/s/{session.url_id}/i/{code}/"))
    expect(primary).to_be_disabled()
    looks = primary.evaluate("""b => { const s = getComputedStyle(b);
        return {background: s.backgroundColor, border: s.borderTopStyle, cursor: s.cursor}; }""")
    assert looks["background"] != active and looks == {**looks, "border": "dashed", "cursor": "not-allowed"}
    assert seen.page_errors == []
