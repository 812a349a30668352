"""The limits every service holds its inputs to: text as it is stored, guest caps, display names."""

import re

from blindjudge.errors import Invalid
from content.canonical import normalise_text

MAX_REASON_CHARS = 10_000
MAX_TEXT_CHARS = 200_000
MAX_GUEST_CAP = 100_000
MAX_DISPLAY_NAME = 60

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def checked_text(value: str, *, field: str, limit: int = MAX_TEXT_CHARS) -> str:
    """Text as it is stored: NFC with LF line endings. Refuses text over `limit` characters and
    NUL or lone surrogates, which no database here can store (a clear 400, never a 500)."""
    value = normalise_text(value or "")
    bad = _UNSTORABLE.search(value)
    if bad:
        what = "a NUL character" if bad.group() == "\x00" else "a lone surrogate"
        raise Invalid(f"{field}: contains {what} at character {bad.start()}")
    if len(value) > limit:
        raise Invalid(f"{field}: limited to {limit} characters")
    return value


def check_guest_cap(cap: int | None):
    if cap is not None and not 1 <= cap <= MAX_GUEST_CAP:
        raise Invalid(f"guest cap: must be between 1 and {MAX_GUEST_CAP} (or no cap)")


def clean_display_name(name: str) -> str:
    name = " ".join(checked_text(name, field="name", limit=10 * MAX_DISPLAY_NAME).split())
    if not name:
        raise Invalid("name: choose a name to be shown by")
    if len(name) > MAX_DISPLAY_NAME:
        raise Invalid(f"name: at most {MAX_DISPLAY_NAME} characters")
    if any(ord(ch) < 32 or 0x202A <= ord(ch) <= 0x202E or 0x2066 <= ord(ch) <= 0x2069
           for ch in name):
        raise Invalid("name: control and direction characters are not allowed")
    return name
