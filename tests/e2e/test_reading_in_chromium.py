"""What a judge can read and reach (issue 24, items 4 and 5), in real Chromium against a real
server process.

- A markdown copy taller than the screen is sized from the height estimated when the session
  opened, so the page's own Space and Page Down read it to its last line, at 1440 px and on a
  phone; Tab moves into the copy (its body takes focus), the bar then says the keys go to the copy,
  a verdict key pressed there records nothing, and Tab brings the keys back. A click into the
  copy says the same.
- On a phone (390 x 844) the verdict bar takes at most a fifth of the screen, its buttons sit on
  one row, the reason waits behind its button, long lines wrap unless the judge turns wrapping
  off, and a sideways scroll of a long diff line leaves the line numbers and the `+`/`-` gutter
  where they were.
"""

import os
import re

import pytest
from playwright.sync_api import expect

from judging.models import Assignment, ItemDraft, Verdict
from tests.e2e.judge_keys import wait_until_keys_count
from tests.worlds import a_host, a_run, a_session, codes, invite_and_join, judge_cookie

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.browser_once("what a judge can read and reach in Chromium")]

WIDE = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}
LAST_WORDS = "the seeded defect sits on this very last line"


def a_migration_guide() -> str:
    """A long markdown guide of the kind that hid its end: headings, prose, lists, code, a table,
    a quote; its last paragraph holds what the judge must reach."""
    parts = ["# Migrating the billing service to PostgreSQL 16", ""]
    for step in range(1, 9):
        parts += [
            f"## Step {step}: move the {['invoices', 'ledgers', 'refunds', 'taxes'][step % 4]} table",
            "",
            ("Before anything else, take a consistent snapshot of the table and check that the "
             "replication slot has caught up; a lagging replica will serve stale balances to the "
             "reporting jobs that run every quarter of an hour, and those jobs write back totals. ") * 2,
            "",
            "- stop the writers (`systemctl stop billing-writer`)",
            "- check the slot lag:",
            "  - under 10 MB: go on",
            "  - over 10 MB: wait, and read [the runbook](https://runbooks.example.org/billing/replication-lag)",
            "- keep the old table until the report for the month is signed off",
            "",
            "```sql",
            f"ALTER TABLE billing.table_{step} ADD COLUMN migrated_at timestamptz NOT NULL DEFAULT now();",
            f"CREATE INDEX CONCURRENTLY table_{step}_migrated_idx "
            f"ON billing.table_{step} (migrated_at, account_id, currency);",
            "ANALYZE;",
            "```",
            "",
            "| column | before | after |",
            "|---|---|---|",
            "| amount | numeric(12,2) | numeric(18,4) |",
            "| currency | text | char(3) with a check against the ISO 4217 list kept in billing.currencies |",
            "",
            "> Do not drop the old index before the new one is valid: a query planner left without "
            "it scans the whole table, and the checkout times out.",
            "",
            "1. run the migration",
            "2. compare the row counts",
            "3. compare the sums per currency",
            "",
        ]
    parts += ["---", "", "Finally, re-enable the writers and watch the error rate for an hour; "
              f"{LAST_WORDS}."]
    return "\n".join(parts) + "\n"


def a_long_diff() -> str:
    lines = ["diff --git a/app/pricing.py b/app/pricing.py", "--- a/app/pricing.py",
             "+++ b/app/pricing.py", "@@ -1,3 +1,40 @@"]
    for n in range(36):
        lines.append(f"+total_{n} = sum(item.price * item.quantity for item in basket_{n} "
                     f"if item.available and not item.reserved_for_another_customer_{n})")
    lines += [" keep = 1", " keep = 2", "-old = 3"]
    return "\n".join(lines) + "\n"


def _world(copies: list[tuple[str, str, str]]):
    bundle = {"format": "blindjudge.run/1",
              "run": {"name": "reading", "task": "Judge the migration."},
              "builders": [{"id": "b1", "model": "m1", "family": "f1"}],
              "copies": [{"id": cid, "builder": "b1", "format": fmt, "content": content,
                          "truth": "known_good"} for cid, fmt, content in copies]}
    session = a_session(a_run(a_host(f"reading-{os.urandom(3).hex()}"), bundle), "open")
    return session, invite_and_join(session, name="Reader").judge


def _code_of(judge, fmt: str) -> str:
    return (Assignment.objects.filter(judge=judge, item__copy__format=fmt)
            .order_by("position").values_list("code", flat=True)[0])


def _open(observed_context, server, session, judge, code, viewport, **options):
    context, seen = observed_context(server.origin, viewport=viewport, **options)
    name, value = judge_cookie(judge).split("=", 1)
    context.add_cookies([{"name": name, "value": value, "url": server.origin}])
    page = context.new_page()
    page.goto(server.url(f"/s/{session.url_id}/i/{code}/"))
    page.wait_for_load_state("load")
    expect(page.frame_locator("iframe.copy-frame").locator("main")).to_be_attached(timeout=15_000)
    return page, seen


def _copy_frame(page):
    return page.locator("iframe.copy-frame").element_handle().content_frame()


FIND_LAST = """(words) => {
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    let node; while ((node = walker.nextNode())) {
        const at = node.data.indexOf(words); if (at < 0) continue;
        const range = document.createRange();
        range.setStart(node, at); range.setEnd(node, at + words.length);
        const r = range.getBoundingClientRect();
        // The content ends with main's box and the body's padding below it (16 px).
        const end = document.querySelector('main').getBoundingClientRect().bottom + scrollY + 16;
        return {top: r.top, bottom: r.bottom, height: innerHeight, content: end,
                scrollHeight: document.documentElement.scrollHeight};
    } return null; }"""


def _read_to_the_end_with_the_pages_keys(page, inside) -> list:
    """Space and Page Down on the page, as a reader does, until it stops scrolling; where the
    last words were, in the window, and where the bar's top was, after each press."""
    last, seen = -1, []
    frame = page.locator("iframe.copy-frame")
    for press in range(200):
        y = page.evaluate("window.scrollY")
        words = inside.evaluate(FIND_LAST, LAST_WORDS)
        box = frame.bounding_box()
        seen.append((box["y"] + words["top"], box["y"] + words["bottom"],
                     page.locator("#verdict-form").bounding_box()["y"]))
        if y == last:
            return seen
        last = y
        page.keyboard.press("Space" if press % 2 else "PageDown")
    raise AssertionError("the page never stopped scrolling")


def _stored(judge) -> dict:
    return dict(Verdict.objects.filter(assignment__judge=judge)
                .values_list("assignment__code", "value"))


@pytest.mark.parametrize("viewport", [WIDE, PHONE], ids=["1440", "390"])
def test_a_markdown_copy_taller_than_the_screen_is_read_to_its_last_line_by_the_pages_keys(
        e2e_server, observed_context, sink, viewport):
    session, judge = _world([("guide", "markdown", a_migration_guide()),
                             ("other", "text", "a short copy\n")])
    code = _code_of(judge, "markdown")
    mobile = {"is_mobile": True, "has_touch": True} if viewport is PHONE else {}
    page, seen = _open(observed_context, e2e_server, session, judge, code, viewport, **mobile)
    frame = page.locator("iframe.copy-frame")
    inside = _copy_frame(page)

    # Much taller than the screen: the frame holds all of it, nothing is left to scroll inside.
    last = inside.evaluate(FIND_LAST, LAST_WORDS)
    assert last is not None and last["content"] > 2 * viewport["height"], last
    box = frame.bounding_box()
    assert last["scrollHeight"] <= last["height"] and last["content"] <= box["height"], (
        f"the frame ({box['height']} px) hides the copy's last "
        f"{last['content'] - box['height']} px")
    # Erring tall, but not by much: the page is not mostly blank frame.
    assert box["height"] <= 1.25 * last["content"] + 100, (box, last)

    # The page's own keys read it to its last line: on the way, the last words were in the
    # window, above the bar.
    where = _read_to_the_end_with_the_pages_keys(page, inside)
    assert any(0 <= top and bottom <= bar_top for top, bottom, bar_top in where), where
    # The frame itself never scrolled: the page did.
    assert inside.evaluate("document.scrollingElement.scrollTop") == 0
    expect(page.locator("#frame-note")).to_contain_text("Tab also moves into it")
    seen.assert_silent(sink)


def _tab_into_the_copy(page, limit: int = 40):
    page.locator("h1").focus()
    seen = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        active = page.evaluate("document.activeElement.localName + '.' + document.activeElement.className")
        seen.append(active)
        if active.startswith("iframe"):
            return
    raise AssertionError(f"Tab never moved into the copy: {seen}")


def test_tab_moves_into_a_markdown_copy_the_bar_says_so_and_its_keys_record_nothing(
        e2e_server, observed_context, sink):
    session, judge = _world([("guide", "markdown", a_migration_guide()),
                             ("other", "markdown", "# Short\n\nA short guide.\n")])
    code = _code_of(judge, "markdown")
    page, seen = _open(observed_context, e2e_server, session, judge, code, WIDE)
    note = page.locator("#focus-note")
    wait_until_keys_count(page)
    expect(note).to_be_hidden()

    _tab_into_the_copy(page)
    inside = _copy_frame(page)
    assert inside.evaluate("document.activeElement.localName") == "main"
    expect(note).to_be_visible()
    expect(note).to_contain_text("verdict keys are off")
    # Its keys are the copy's: End scrolls it (as far as there is to scroll), a verdict key
    # records nothing and the item stays.
    page.keyboard.press("End")
    page.keyboard.press("1")
    page.keyboard.press("2")
    page.wait_for_timeout(400)  # room for a save to be sent, if one were
    expect(page.locator("h1 .code")).to_have_text(code)
    expect(page.locator("input[name=verdict]:checked")).to_have_count(0)
    assert _stored(judge) == {}

    # Tab leaves the copy: the bar says nothing more, and the keys are the verdicts' again.
    page.keyboard.press("Tab")
    expect(note).to_be_hidden()
    assert page.evaluate("document.activeElement.localName") != "iframe"
    page.locator("h1").focus()
    page.keyboard.press("1")
    expect(page.locator("h1 .code")).not_to_have_text(code)
    for _ in range(100):
        if _stored(judge):
            break
        page.wait_for_timeout(50)
    assert _stored(judge) == {code: "pass"}

    # A click into a copy gives it the keys too, and the bar says so; a click outside ends it.
    wait_until_keys_count(page)
    page.locator("iframe.copy-frame").click(position={"x": 200, "y": 30})
    expect(note).to_be_visible()
    page.keyboard.press("2")
    page.wait_for_timeout(400)
    assert len(_stored(judge)) == 1
    page.locator("h1").click()
    expect(note).to_be_hidden()
    seen.assert_silent(sink)


# --- On a phone --------------------------------------------------------------------------------

def _bar_is_compact(page):
    bar = page.locator("#verdict-form").bounding_box()
    assert bar["height"] <= 0.2 * PHONE["height"], f"the bar takes {bar['height'] / PHONE['height']:.0%}"
    tops = page.evaluate("""() => [...document.querySelectorAll('#verdict-form .actions button')]
        .filter(b => b.offsetParent !== null).map(b => Math.round(b.getBoundingClientRect().top))""")
    assert len(tops) >= 2 and max(tops) - min(tops) <= 2, f"the buttons sit on several rows: {tops}"


def folded(page):
    """The reason is out of sight: its box clipped to nothing (still named by its label for
    assistive technology; Tab into it unfolds it)."""
    page.wait_for_function("""() => { const r = document.querySelector('.reason-box')
        .getBoundingClientRect(); return r.width <= 1 && r.height <= 1; }""", polling=100)


FIRST_ADDED_ROW = """() => { const r = document.querySelector('.rows .r.add').getBoundingClientRect();
    return {x: r.left, y: r.top}; }"""


def test_on_a_phone_the_bar_is_a_fifth_of_the_screen_with_the_reason_behind_its_button(
        e2e_server, observed_context, sink):
    session, judge = _world([("patch", "diff", a_long_diff()),
                             ("guide", "markdown", a_migration_guide()),
                             ("notes", "text", "a short copy\n")])
    code = codes(judge)[0]
    page, seen = _open(observed_context, e2e_server, session, judge, code, PHONE,
                       is_mobile=True, has_touch=True)

    # Under a fifth of the screen, its buttons on one row, the reason behind a button.
    _bar_is_compact(page)
    reason = page.locator("textarea[name=reason]")
    toggle = page.get_by_role("button", name="Reason")
    folded(page)
    expect(toggle).to_have_attribute("aria-expanded", "false")
    toggle.tap()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(reason).to_be_visible()
    expect(reason).to_be_focused()
    page.keyboard.type("the totals skip reserved items")
    toggle.tap()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    folded(page)
    for _ in range(100):  # the reason is saved as typed, folded or not
        if ItemDraft.objects.filter(assignment__code=code,
                                    reason="the totals skip reserved items").exists():
            break
        page.wait_for_timeout(50)
    assert ItemDraft.objects.filter(assignment__code=code,
                                    reason="the totals skip reserved items").exists()

    # A tap on a verdict records it and shows the next item, whose bar is as compact (with
    # "Save and go back" now, on the same row).
    wait_until_keys_count(page)
    page.get_by_role("radio", name=re.compile("^Pass")).tap()
    expect(page.locator("h1 .code")).not_to_have_text(code)
    expect(page.locator("#autosave-status")).to_have_text(re.compile(rf"^Item {code} saved"))
    expect(page.get_by_role("button", name="Save and go back")).to_be_visible()
    _bar_is_compact(page)
    folded(page)
    assert _stored(judge) == {code: "pass"}
    seen.assert_silent(sink)


def test_on_a_phone_long_lines_wrap_and_a_sideways_scroll_leaves_the_gutter_in_place(
        e2e_server, observed_context, sink):
    session, judge = _world([("patch", "diff", a_long_diff()),
                             ("notes", "text", "a short copy\n")])
    code = _code_of(judge, "diff")
    page, seen = _open(observed_context, e2e_server, session, judge, code, PHONE,
                       is_mobile=True, has_touch=True)

    # Long lines wrap by default on a phone (the frame's #wrap view), so nothing is clipped.
    wrap = page.get_by_role("button", name="Wrap long lines")
    expect(wrap).to_have_attribute("aria-pressed", "true")
    expect(page.locator("iframe.copy-frame")).to_have_attribute("src", re.compile("#wrap$"))

    # Turned off, the code scrolls sideways, and the gutter (line numbers, + and -) stays put.
    wrap.tap()
    expect(wrap).to_have_attribute("aria-pressed", "false")
    # (A frame's URL without its fragment loads it anew.)
    expect(page.locator("iframe.copy-frame")).not_to_have_attribute("src", re.compile("#"))
    page.frame_locator("iframe.copy-frame").locator(".rows .r.add").first.wait_for()
    inside = _copy_frame(page)
    # (Polled: a frame below the fold gets no animation frames.)
    inside.wait_for_function("location.hash === '' && document.readyState === 'complete'",
                             polling=100)
    expect(page.locator("iframe.copy-frame")).to_have_attribute("tabindex", "-1")
    frame_top = page.evaluate(
        "document.querySelector('iframe.copy-frame').getBoundingClientRect().top + scrollY")
    row = inside.evaluate(FIRST_ADDED_ROW)
    page.evaluate(f"window.scrollTo(0, {frame_top + row['y'] - 200})")
    frame_box = page.locator("iframe.copy-frame").bounding_box()
    gutter = {"x": frame_box["x"] + row["x"] + 1, "y": frame_box["y"] + row["y"] + 2,
              "width": 40, "height": 16}
    code_cell = {**gutter, "x": gutter["x"] + 120}
    before = page.screenshot(clip=gutter), page.screenshot(clip=code_cell)
    scrolled = inside.evaluate("() => { document.body.scrollLeft = 250; return document.body.scrollLeft; }")
    assert scrolled > 100, "the long line scrolls sideways"
    page.wait_for_timeout(200)  # painted
    after = page.screenshot(clip=gutter), page.screenshot(clip=code_cell)
    assert after[1] != before[1], "the code moved"
    assert after[0] == before[0], "the gutter moved with the code"
    seen.assert_silent(sink)
