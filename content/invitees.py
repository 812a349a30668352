"""A host's list of invitees, pasted or uploaded, read: one name a line, then optionally a note.

Pure: no Django. judging.services (admission.py) reads lists through here with the display-name
limit in force (BLINDJUDGE_MAX_DISPLAY_NAME_CHARS), turns `InviteesRefused` into its `Invalid`
and `BadLines` into its `InvalidLines`, the messages unchanged, then checks the names against
the session and writes the invitations.
"""

import csv
import io
import re
from dataclasses import dataclass

from content.stored_text import TextRefused, checked_text, clean_display_name

INVITE_NOTE_CHARS = 200  # Invitation.note's column
BULK_INVITE_LINES = 500  # names in one list: a class or a team, not a mailing list
# Between a name and its note: a tab (a spreadsheet's column pasted), or a spaced dash or bar.
NOTE_SEPARATOR = re.compile(r"\t| — | \| ")
INVITEE_FILE_BYTES = 1024 * 1024
SHOWN_PROBLEMS = 100  # bad lines listed in a refusal; then how many more
NO_NAMES = "invitees: give at least one name, one a line"


class InviteesRefused(ValueError):
    """A list or file of invitees refused as a whole; `message` says why."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class BadLines(InviteesRefused):
    """A list with bad lines: `problems` as shown (see lines_refusal), `every` all of them, each
    naming its line."""

    def __init__(self, problems: list[str]):
        message, shown = lines_refusal(problems)
        super().__init__(message)
        self.problems = shown
        self.every = list(problems)


def lines_refusal(problems: list[str]) -> tuple[str, list[str]]:
    """The refusal of a list with bad lines, and the problems it shows (the first SHOWN_PROBLEMS,
    then how many more)."""
    shown = problems[:SHOWN_PROBLEMS] + (
        [f"… and {len(problems) - SHOWN_PROBLEMS} more"] if len(problems) > SHOWN_PROBLEMS else [])
    return "Nobody was invited; fix these lines and send the list again:\n" + "\n".join(shown), shown


@dataclass(frozen=True)
class Invitee:
    line: int  # in the list as the host gave it, from 1
    name: str
    note: str


def checked_note(note: str) -> str:
    """The host's note on an invitee, spaces collapsed, at most INVITE_NOTE_CHARS; TextRefused."""
    note = " ".join(checked_text(note or "", field="note", limit=10 * INVITE_NOTE_CHARS).split())
    if len(note) > INVITE_NOTE_CHARS:
        raise TextRefused(f"note: at most {INVITE_NOTE_CHARS} characters")
    return note


def invitee_list_parse(text: str, *, name_limit: int) -> list[Invitee]:
    """One invitee per line: a name, then optionally a note after a tab, " — " or " | " (the first
    separator on the line splits it). Blank lines are skipped. Names are checked as every display
    name is (at most `name_limit` characters), notes up to INVITE_NOTE_CHARS; names repeated in
    the list (compared without case and with spaces collapsed) are refused at their second line.
    Raises BadLines naming every bad line, InviteesRefused for a list refused whole."""
    invitees, problems = invitee_lines(text, name_limit=name_limit)
    if problems:
        raise BadLines([problem for _, problem in problems])
    if not invitees:
        raise InviteesRefused(NO_NAMES)
    return invitees


def invitee_lines(text: str, *, name_limit: int) -> tuple[list[Invitee], list[tuple[int, str]]]:
    """The good lines as Invitees and the bad ones as (line number, problem); InviteesRefused for
    a list over BULK_INVITE_LINES."""
    problems, invitees, first_line_of = [], [], {}
    lines = (text or "").splitlines()
    if len(lines) > BULK_INVITE_LINES * 2:  # blank lines allowed, but not a file of them
        raise InviteesRefused(f"invitees: at most {BULK_INVITE_LINES} names at a time")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        name, note = _split_line(line)
        if not name:
            problems.append((number, f"line {number}: no name before the note"))
            continue
        try:
            name = clean_display_name(name, limit=name_limit)
        except TextRefused as error:
            problems.append((number, f'line {number}: {_without_field(error.message)} ("{_shown(name)}")'))
            continue
        try:
            note = checked_note(note)
        except TextRefused as error:
            problems.append((number, f"line {number}: {error.message}"))
            continue
        key = name.casefold()
        if key in first_line_of:
            problems.append((number, f'line {number}: "{name}" is already on line {first_line_of[key]}'))
            continue
        first_line_of[key] = number
        invitees.append(Invitee(line=number, name=name, note=note))
    if len(invitees) > BULK_INVITE_LINES:
        raise InviteesRefused(f"invitees: at most {BULK_INVITE_LINES} names at a time "
                              f"(this list has {len(invitees)})")
    return invitees, problems


def invitee_text_from_file(filename: str, data: bytes) -> str:
    """An uploaded or named list of invitees as the text invitee_list_parse reads: a .csv file's
    rows become "name<TAB>note" lines (a first row headed "name" is skipped, left blank so line
    numbers stay the file's); any other file is read as the pasted list. UTF-8 (with or without a
    byte-order mark) only; InviteesRefused otherwise."""
    if len(data) > INVITEE_FILE_BYTES:
        raise InviteesRefused(f"invitees file: at most {INVITEE_FILE_BYTES:,} bytes")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InviteesRefused(f"invitees file: not UTF-8 text (byte {error.start})") from None
    if not filename.lower().endswith(".csv"):
        return text
    lines = []
    try:
        for number, row in enumerate(csv.reader(io.StringIO(text)), start=1):
            cells = [cell.strip() for cell in row]
            if number == 1 and cells and cells[0].casefold() in ("name", "names"):
                lines.append("")
                continue
            lines.append("\t".join(cells[:2]) if any(cells) else "")
    except csv.Error as error:
        raise InviteesRefused(f"invitees file: not a readable CSV file ({error})") from None
    return "\n".join(lines)


def _split_line(line: str) -> tuple[str, str]:
    parts = NOTE_SEPARATOR.split(line, maxsplit=1)
    return parts[0].strip(), (parts[1].strip() if len(parts) > 1 else "")


def _without_field(message: str) -> str:
    return message.removeprefix("name: ")


def _shown(text: str, limit: int = 40) -> str:
    text = "".join(ch if ch.isprintable() else "\ufffd" for ch in text.strip())
    return text if len(text) <= limit else text[:limit] + "…"
