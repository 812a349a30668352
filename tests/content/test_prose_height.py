"""A markdown frame's height, estimated at opening (issue 24, item 4; content.prose_height): what
the estimate counts. Whether it holds in a browser is tests/e2e/test_reading_in_chromium.py's."""

import pytest

from content.frame_geometry import FRAME_SCROLLBAR_ROOM_PX, FRAME_TOP_PX
from content.normalise import normalise
from content.prose_height import LINE_PX, SLACK_PX
from content.rendering import frame_body

# No database, no socket, no process: run once (tests/support/pure.py).
pytestmark = pytest.mark.pure

FRAME_PX = FRAME_TOP_PX + FRAME_SCROLLBAR_ROOM_PX + SLACK_PX


def heights(markdown: str) -> tuple[int, int]:
    body = frame_body(normalise(markdown, "markdown", []), "markdown")
    assert body.prose
    return body.prose_heights


def test_a_paragraph_takes_a_line_per_measure_of_its_characters_at_each_width():
    wide, narrow = heights("word " * 160 + "\n")  # 800 characters: 10 lines at 80, 20 at 40
    margins = 2 * 15
    assert wide >= FRAME_PX + margins + 10 * LINE_PX
    assert narrow >= FRAME_PX + margins + 20 * LINE_PX
    assert wide < FRAME_PX + margins + 12 * LINE_PX  # not wildly tall either


def test_code_lines_headings_lists_tables_and_link_targets_each_count():
    base = heights("Some text.\n")[0]
    assert heights("Some text.\n\n```\n" + "x = 1\n" * 30 + "```\n")[0] >= base + 30 * 13 * 1.45
    assert heights("# A heading\n\nSome text.\n")[0] >= base + 45
    assert heights("Some text.\n\n" + "- item\n" * 20)[0] >= base + 20 * LINE_PX
    assert heights("Some text.\n\n|a|b|\n|-|-|\n" + "|x|y|\n" * 20)[0] >= base + 21 * LINE_PX
    # A link shows its target after its text: a long target makes the line wrap.
    assert heights("[a](https://example.org/" + "x" * 200 + ")\n")[0] >= base + 2 * LINE_PX


def test_a_long_code_line_wraps_at_the_narrow_measure_and_a_long_word_anywhere():
    wide, narrow = heights("```\n" + "y" * 200 + "\n```\n")
    assert narrow - wide >= 2 * 13 * 1.45
    wide, narrow = heights("z" * 400 + "\n")
    assert narrow - wide >= 4 * LINE_PX


def test_a_copy_shown_as_text_has_rows_and_no_estimate():
    body = frame_body(normalise("- x\n" * 5001, "markdown", []), "markdown")
    assert not body.prose and body.prose_heights is None
