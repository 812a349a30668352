"""The one CSV cell guard (content/spreadsheet.py), used by the report's CSV and the join links'."""

import pytest

from content.spreadsheet import neutralise_cell

pytestmark = pytest.mark.pure

INVISIBLE = ("\ufeff", "\u200b", "\u200c", "\u200d", "\u2060", "\u200e", "\u202e", "\u2066")


@pytest.mark.parametrize("invisible", INVISIBLE)
@pytest.mark.parametrize("formula", ["=1+2", "+SUM(A1)", "@cmd", "-3", "\uff1dHYPERLINK(1)"])
def test_a_formula_behind_an_invisible_character_is_neutralised(invisible, formula):
    # Issue 25: U+FEFF or U+200B then `=` was written as it was.
    assert neutralise_cell(invisible + formula) == "'" + invisible + formula
    assert neutralise_cell(invisible + invisible + formula) == "'" + invisible + invisible + formula


@pytest.mark.parametrize("text", ["plain words", "a=b", "x\u200b=1", "Zoë", "日本語"])
def test_text_that_starts_with_a_visible_character_is_written_as_it_is(text):
    assert neutralise_cell(text) == text
    assert neutralise_cell(3) == 3 and neutralise_cell(None) is None and neutralise_cell("") == ""
