"""The limits every service holds its inputs to: text as it is stored, guest caps, display names.

Every text limit is a setting (`BLINDJUDGE_MAX_*`, blindjudge/settings.py, README's
Configuration section), read when it is checked, so a test or an operator can change it.
`checked_text` finds a field's limit by the field's name (TEXT_LIMITS); `bundle_limits` gives the
bundle validator every limit of a bundle's texts at once. The checks themselves are pure
(content/stored_text.py); here they get the limits in force and refuse with `Invalid`.
"""

import re

from django.conf import settings

from blindjudge.errors import Invalid
from content import stored_text
from content.limits import TextLimits
from content.stored_text import TextRefused

MAX_TEXT_CHARS = 200_000  # a text with no limit of its own (none is left unnamed today)
# The default; the limit in force is text_limit("reason") (BLINDJUDGE_MAX_VERDICT_REASON_CHARS).
MAX_REASON_CHARS = 10_000
MAX_GUEST_CAP = 100_000
# The default; the limit in force is display_name_limit() (BLINDJUDGE_MAX_DISPLAY_NAME_CHARS).
MAX_DISPLAY_NAME = 60

# The field name a service checks a text under -> the setting that bounds it.
TEXT_LIMITS = {
    "rubric": "BLINDJUDGE_MAX_RUBRIC_CHARS",
    "instructions": "BLINDJUDGE_MAX_RUBRIC_CHARS",
    "preregistration": "BLINDJUDGE_MAX_PREREG_CHARS",
    "amendment": "BLINDJUDGE_MAX_PREREG_CHARS",
    "pattern": "BLINDJUDGE_MAX_PATTERN_CHARS",
    "note": "BLINDJUDGE_MAX_NOTE_CHARS",
    "reason": "BLINDJUDGE_MAX_VERDICT_REASON_CHARS",
}

# GitHub's own rule for logins: 1–39 letters, digits or single hyphens, not at either end.
GITHUB_LOGIN = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}")


def checked_github_login(login: str) -> str:
    """A GitHub login as listed (a leading @ dropped); refuses anything GitHub would not issue,
    so the invitations form, the `invite` command and every other caller give the same message."""
    login = (login or "").strip().lstrip("@")
    if not GITHUB_LOGIN.fullmatch(login):
        shown = f"{login[:40]}…" if len(login) > 40 else login
        raise Invalid(f'Not a GitHub login (1 to 39 letters, digits or single hyphens): "{shown}"')
    return login


def text_limit(field: str) -> int:
    """The limit in force, in characters, on the text a service checks as `field`."""
    setting = TEXT_LIMITS.get(field)
    return getattr(settings, setting) if setting else MAX_TEXT_CHARS


def display_name_limit() -> int:
    return settings.BLINDJUDGE_MAX_DISPLAY_NAME_CHARS


def bundle_limits() -> TextLimits:
    """The limits on a bundle's texts, from settings (the copy's own is BLINDJUDGE_MAX_COPY_BYTES)."""
    return TextLimits(
        name_chars=settings.BLINDJUDGE_MAX_NAME_CHARS,
        id_chars=settings.BLINDJUDGE_MAX_ID_CHARS,
        task_chars=settings.BLINDJUDGE_MAX_TASK_CHARS,
        finding_chars=settings.BLINDJUDGE_MAX_FINDING_CHARS,
        review_reason_chars=settings.BLINDJUDGE_MAX_REVIEW_REASON_CHARS,
        note_chars=settings.BLINDJUDGE_MAX_NOTE_CHARS,
        request_bytes=settings.BLINDJUDGE_MAX_REVIEW_REQUEST_BYTES,
    )


def checked_text(value: str, *, field: str, limit: int | None = None) -> str:
    """Text as it is stored: NFC with LF line endings. Refuses text over `limit` characters (by
    default the field's own limit, text_limit(field)) and NUL or lone surrogates, which no
    database here can store (a clear 400, never a 500)."""
    if limit is None:
        limit = text_limit(field)
    try:
        return stored_text.checked_text(value, field=field, limit=limit)
    except TextRefused as refused:
        raise Invalid(refused.message) from None


def check_guest_cap(cap: int | None):
    if cap is not None and not 1 <= cap <= MAX_GUEST_CAP:
        raise Invalid(f"guest cap: must be between 1 and {MAX_GUEST_CAP} (or no cap)")


def clean_display_name(name: str) -> str:
    """A name to be shown by (content.stored_text), at most display_name_limit() characters."""
    try:
        return stored_text.clean_display_name(name, limit=display_name_limit())
    except TextRefused as refused:
        raise Invalid(refused.message) from None
