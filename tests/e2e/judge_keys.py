"""Pressing a verdict key as a judge does: on a copy that has been on screen.

The item page drops a verdict key (or click) that comes before the item's copy has been shown for
the session's minimum (`Session.verdict_min_shown_ms`, 300 ms by default; issue 24): a held key's
repeats, a bounce or a double click must not answer items nobody saw. The page marks when keys
count with `#item-top[data-keys-ready]`; a test that means a deliberate choice waits for it (an
event, not a sleep), and a test of the guard itself presses without waiting.
"""

from playwright.sync_api import expect

KEYS_READY = "#item-top[data-keys-ready='1']"
# What the bar says of a key or click dropped for coming too soon, and of a held key's repeats
# (static/judge/judge.js TOO_SOON and HELD).
TOO_SOON = "Not taken: the copy had only just appeared. Read it, then choose again."
HELD = "Not taken: a held key answers once. Release it, read this copy, then choose."


def wait_until_keys_count(page, timeout: float = 15_000):
    expect(page.locator(KEYS_READY)).to_have_count(1, timeout=timeout)


def choose_by_key(page, key: str, *, on=None):
    """Press a verdict key once the page takes it; `on` presses it on that locator (which focuses
    it first, as a click on it would) instead of where the focus is."""
    wait_until_keys_count(page)
    (on if on is not None else page.keyboard).press(key)
