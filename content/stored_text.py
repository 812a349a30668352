"""Text as the database stores it, and a display name: the checks every service makes, pure.

Pure: no Django. The limits are the caller's: judging.services.checks reads them from settings
(`BLINDJUDGE_MAX_*`) and turns a `TextRefused` into the services' `Invalid`, message unchanged;
content's own callers (content/invitees.py) pass theirs in.
"""

import re

from content.canonical import normalise_text

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


class TextRefused(ValueError):
    """A text the checks refuse; `message` says why, naming the field as the caller named it."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def checked_text(value: str, *, field: str, limit: int) -> str:
    """Text as it is stored: NFC with LF line endings. Refuses text over `limit` characters and
    NUL or lone surrogates, which no database here can store (a clear 400, never a 500)."""
    value = value or ""
    if len(value) > 4 * limit:
        # Far over: refused before normalising megabytes (NFC changes a length by far less).
        raise TextRefused(f"{field}: limited to {limit:,} characters (this one has {len(value):,})")
    value = normalise_text(value)
    bad = _UNSTORABLE.search(value)
    if bad:
        what = "a NUL character" if bad.group() == "\x00" else "a lone surrogate"
        raise TextRefused(f"{field}: contains {what} at character {bad.start()}")
    if len(value) > limit:
        raise TextRefused(f"{field}: limited to {limit:,} characters (this one has {len(value):,})")
    return value


def clean_display_name(name: str, *, limit: int) -> str:
    """A name to be shown by, spaces collapsed, at most `limit` characters, without control or
    direction characters."""
    name = " ".join(checked_text(name, field="name", limit=10 * limit).split())
    if not name:
        raise TextRefused("name: choose a name to be shown by")
    if len(name) > limit:
        raise TextRefused(f"name: at most {limit} characters")
    if any(ord(ch) < 32 or 0x202A <= ord(ch) <= 0x202E or 0x2066 <= ord(ch) <= 0x2069
           for ch in name):
        raise TextRefused("name: control and direction characters are not allowed")
    return name
