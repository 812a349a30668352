"""Pressing a verdict key as a judge does: on a copy that has been on screen.

The item page drops a verdict key (or click) that comes before the item's copy has been shown for
the session's minimum (`Session.verdict_min_shown_ms`, 300 ms by default; issue 24): a held key's
repeats, a bounce or a double click must not answer items nobody saw. The page marks when keys
count with `#item-top[data-keys-ready]`; a test that means a deliberate choice waits for it (an
event, not a sleep), and a test of the guard itself presses without waiting.
"""

from playwright.sync_api import expect

from judging.models import Verdict

KEYS_READY = "#item-top[data-keys-ready='1']"
# What the bar says of a key or click dropped for coming too soon, and of a held key's repeats
# (static/judge/judge.js TOO_SOON and HELD).
TOO_SOON = "Not taken: the copy had only just appeared. Read it, then choose again."
HELD = "Not taken: a held key answers once. Release it, read this copy, then choose."


def wait_until_keys_count(page, timeout: float = 15_000, *, on_page_clock: bool = False):
    """Wait until the page takes verdict keys. `on_page_clock`: the page runs on Playwright's
    clock, paused by the test; it is moved on in small steps meanwhile, since the minimum time on
    screen starts only when the copy's frame has loaded, on the real clock, whenever that is."""
    if on_page_clock:
        for _ in range(int(timeout / 100)):
            if page.locator(KEYS_READY).count():
                return
            page.clock.run_for(50)
            page.wait_for_timeout(50)
    expect(page.locator(KEYS_READY)).to_have_count(1, timeout=timeout)


def choose_by_key(page, key: str, *, on=None, on_page_clock: bool = False):
    """Press a verdict key once the page takes it; `on` presses it on that locator (which focuses
    it first, as a click on it would) instead of where the focus is."""
    wait_until_keys_count(page, on_page_clock=on_page_clock)
    (on if on is not None else page.keyboard).press(key)


def hold_saves(page, path) -> list:
    """Hold every save (POST) the page sends to `path` (a regex) on its way, as a slow server or a
    second writer holding SQLite's lock would: returns the list the held routes land in, for the
    test to `continue_()` when it chooses. Other requests to the path pass."""
    held = []
    page.route(path, lambda route: held.append(route) if route.request.method == "POST"
               else route.continue_())
    return held


def wait_until_held(page, held: list, count: int = 1) -> None:
    """Wait (on the real clock: the route sees the request leave) until `count` saves are held,
    and no more."""
    for _ in range(200):
        if len(held) >= count:
            break
        page.wait_for_timeout(50)
    assert len(held) == count, f"{len(held)} saves held, expected {count}"


def stored_verdicts(judge, phase: int = 1) -> dict:
    """The judge's stored verdicts of `phase`: {code: (value, seconds_spent)}."""
    return {code: (value, seconds) for code, value, seconds in Verdict.objects.filter(
        assignment__judge=judge, phase=phase).values_list("assignment__code", "value", "seconds_spent")}


def wait_stored(page, judge, count: int, *, on_page_clock: bool = False) -> dict:
    """Wait until the judge has `count` phase-1 verdicts stored; return them. `on_page_clock`: the
    page runs on Playwright's clock, which the wait moves on too (a save may wait on a timer)."""
    for _ in range(300):
        found = stored_verdicts(judge)
        if len(found) >= count:
            return found
        if on_page_clock:
            page.clock.run_for(50)
        page.wait_for_timeout(30)
    raise AssertionError(f"{count} verdicts never stored: {stored_verdicts(judge)}")


def in_browser_as(context, origin, cookie: str):
    name, value = cookie.split("=", 1)
    context.add_cookies([{"name": name, "value": value, "url": origin}])
    return context.new_page()


def judge_by_keys(page, server, session, judge, keys: dict):
    """Answers every item of `judge` with the key `keys` gives its item key (typing the reason
    first where one is given), starting at the first item; ends on the review page."""
    by_code = dict(judge.assignments.values_list("code", "item__key"))
    order = list(judge.assignments.order_by("position").values_list("code", flat=True))
    page.goto(server.url(f"/s/{session.url_id}/i/{order[0]}/"))
    for position, code in enumerate(order):
        expect(page.locator("h1 .code")).to_have_text(code)
        wait_until_keys_count(page)
        key, reason = keys[by_code[code]]
        if reason:
            page.locator("#reason").fill(reason)
            page.locator("h1").click()  # the keys count outside the reason's box
        if position + 1 < len(order):
            page.keyboard.press(key)
        else:
            with page.expect_navigation():  # the last item's key leads to the review
                page.keyboard.press(key)
    expect(page.get_by_role("heading", name="Review, then lock phase 1")).to_be_visible()
