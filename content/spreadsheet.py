"""CSV cells a spreadsheet would run as formulas (CSV injection), for every CSV blindjudge writes:
the report's rows and the host's join links. One guard, so the two can never drift apart."""

import unicodedata

# A spreadsheet runs a cell that starts with one of these as a formula: the four formula signs,
# their full-width forms (which some spreadsheets read as the ASCII ones), and `;` (a separator
# in some locales, so a cell can start a new one).
FORMULA_PREFIXES = ("=", "+", "-", "@", ";", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def _hides_what_follows(character: str) -> bool:
    """Leading characters a spreadsheet may trim or ignore before reading a formula: whitespace
    (tab, CR, newline, space, no-break space, ideographic space, …) and invisible format
    characters (U+FEFF, U+200B and the other zero-width and direction marks, category Cf)."""
    return character.isspace() or unicodedata.category(character) == "Cf"


def neutralise_cell(value):
    """Text a spreadsheet would run as a formula gets a leading apostrophe; numbers stay.

    A cell is neutralised when it starts with a formula sign, or with whitespace or an invisible
    character (whatever follows: a spreadsheet may drop it and then read a formula)."""
    if isinstance(value, str) and value and (value.startswith(FORMULA_PREFIXES)
                                             or _hides_what_follows(value[0])):
        return "'" + value
    return value
