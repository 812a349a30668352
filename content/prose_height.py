"""A markdown frame's height, estimated once, when the session opens (issue 24, item 4).

Rendered markdown wraps, so no line count sizes its frame, and a frame of fixed height hid the end
of long copies (three migration guides lost their last 118–193 px, where a seeded defect was).
Nothing runs in the frame to measure it, and nothing is rendered at request time, so the height is
estimated from the parsed markdown here and stored with the render (CopyRender.prose_height_*).

The frame's prose is at most PROSE_MEASURE_CH wide (`.mdframe { max-width }` in the frame's
style), in the `ch` of its 15 px body font. The estimate is made at two measures,
PROSE_MEASURE_CH and PROSE_NARROW_CH (about a phone's width); a block of n characters takes about
n / c + ½ lines at c characters a line, so the judge's page, which knows the frame's width in the
same `ch` (it measures that font), takes the height as `a + b / c` through the two points.

It errs tall: every character is taken as wide as the font's `0` (prose averages some 85 % of
it, code in its 13 px font less), headings a tenth wider still, and a line more at the end. A
copy taller than its estimate all the same still reads to its end: the frame's body takes focus
(Tab), and Space, the arrows and End scroll it.
"""

import math
import re
from unicodedata import east_asian_width

from content.frame_geometry import (
    FRAME_SCROLLBAR_ROOM_PX,
    FRAME_TOP_PX,
    PROSE_MEASURE_CH,
    PROSE_NARROW_CH,
)

# The frame's style (content.rendering.FRAME_STYLE) and Chromium's defaults for the rest.
BODY_PX = 15.0
LINE_PX = BODY_PX * 1.5  # body { font: 15px/1.5 }
CODE_LINE_PX = 13 * 1.45  # pre, code { font: 13px/1.45 }
PRE_PAD_PX = 8.0  # .md pre { padding: 0.5rem } (the root's 16 px)
NOTE_GAP_PX = 8.0  # .note { margin: 0 0 0.5rem }
CELL_EXTRA_PX = 2 * 2 + 1  # th, td { padding: 2px 6px; border: 1px }, borders collapsed
# Headings: (font size in em, margin above and below in the heading's em), as browsers have them.
HEADINGS = {"h1": (2.0, 0.67), "h2": (1.5, 0.83), "h3": (1.17, 1.0), "h4": (1.0, 1.33),
            "h5": (0.83, 1.67), "h6": (0.67, 2.33)}
BOLD = 1.1  # a bold character's width over a regular one's, at most
# A code character (13 px monospace: 7.8 px in DejaVu Sans Mono) in `ch` of the 15 px body font
# (its `0`: 8.3–9.5 px), with room for a body font of narrower digits.
CODE_CH = 1.1
LIST_INDENT_PX = 40.0  # ul, ol { padding-left: 40px }
QUOTE_INDENT_PX = 80.0  # blockquote { margin: 1em 40px }
HR_PX = 2.0  # hr { border: 1px inset; margin: 0.5em auto }
# Indents are counted in `ch` of at least this many pixels (a smaller `ch` makes an indent more
# characters; the fonts' `0` at 15 px is 8.3–9.5 px).
CH_PX_AT_LEAST = 8.0
# Room for what the estimate does not model (a mark's padding, a table's header row in bold).
SLACK_PX = LINE_PX

_PLACEHOLDER = re.compile("\ue000(\\d+)\ue001")


def _width(text: str) -> int:
    """`text`'s width in characters: a wide one (CJK, most emoji) counts as two."""
    if text.isascii():
        return len(text)
    return sum(2 if east_asian_width(c) in "WF" else 1 for c in text)


def _shown_length(text: str, marks: list[int]) -> int:
    """Characters shown for `text` (wide ones twice), each mark's placeholder counted as the
    mark's own text."""
    if "\ue000" not in text:
        return _width(text)
    extra = 0
    for match in _PLACEHOLDER.finditer(text):
        index = int(match.group(1))
        extra += (marks[index] if index < len(marks) else 1) - len(match.group())
    return _width(text) + extra


def _inline_pieces(token, marks: list[int]) -> list[int]:
    """The characters of an inline token's lines as shown, split at hard breaks: link targets
    are shown after the text (` ⟨url⟩`), images as `[image: alt ⟨src⟩]`."""
    pieces, length, hrefs = [], 0, []
    for child in token.children or ():
        kind = child.type
        if kind in ("text", "code_inline", "html_inline"):
            length += _shown_length(child.content, marks)
        elif kind == "softbreak":
            length += 1
        elif kind == "hardbreak":
            pieces.append(length)
            length = 0
        elif kind == "link_open":
            hrefs.append(child.attrGet("href") or "")
        elif kind == "link_close":
            length += len(hrefs.pop()) + 3 if hrefs else 0
        elif kind == "image":
            alt = sum(_shown_length(c.content, marks) for c in child.children or ())
            length += alt + len(child.attrGet("src") or "") + 12
    pieces.append(length)
    return pieces


def _lines(characters: int, per_line: float) -> int:
    return max(1, math.ceil(characters / max(per_line, 1.0)))


class _Column:
    """Blocks stacked down the frame, their margins collapsing as CSS collapses adjacent ones
    (lists, list items and quotes have no border or padding to stop it)."""

    def __init__(self):
        self.height = 0.0
        self.margin = 0.0

    def gap(self, margin: float) -> None:
        self.margin = max(self.margin, margin)

    def block(self, height: float) -> None:
        self.height += self.margin + height
        self.margin = 0.0

    def total(self) -> float:
        return self.height + self.margin


def prose_height(tokens, marks: list[int], notes: list[str], columns: float) -> int:
    """The frame's height in px (body padding included) for markdown-it `tokens` laid out
    `columns` `ch` wide; `marks` are the shown lengths of the marks the placeholders stand for,
    `notes` the notes shown above the prose."""
    column = _Column()
    for note in notes:
        column.block(_lines(len(note), columns) * LINE_PX)
        column.gap(NOTE_GAP_PX)
    indent = 0.0  # px taken from the line's width by lists and quotes around the block
    lists = 0
    heading = None
    row: list[int] | None = None
    for token in tokens:
        kind = token.type
        width = columns - indent / CH_PX_AT_LEAST
        if kind == "heading_open":
            heading = HEADINGS.get(token.tag, (1.0, 1.0))
            column.gap(heading[0] * heading[1] * BODY_PX)
        elif kind == "heading_close":
            column.gap(heading[0] * heading[1] * BODY_PX if heading else BODY_PX)
            heading = None
        elif kind == "paragraph_open" or kind == "paragraph_close":
            if not token.hidden:  # a tight list's paragraphs are not <p>
                column.gap(BODY_PX)
        elif kind in ("bullet_list_open", "ordered_list_open"):
            if lists == 0:
                column.gap(BODY_PX)  # nested lists have no margin
            lists += 1
            indent += LIST_INDENT_PX
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists -= 1
            indent -= LIST_INDENT_PX
            if lists == 0:
                column.gap(BODY_PX)
        elif kind == "blockquote_open":
            column.gap(BODY_PX)
            indent += QUOTE_INDENT_PX
        elif kind == "blockquote_close":
            indent -= QUOTE_INDENT_PX
            column.gap(BODY_PX)
        elif kind == "hr":
            column.gap(BODY_PX / 2)
            column.block(HR_PX)
            column.gap(BODY_PX / 2)
        elif kind in ("fence", "code_block"):
            per_line = (width - 2 * PRE_PAD_PX / CH_PX_AT_LEAST) / CODE_CH
            code = token.content.split("\n")
            if code and code[-1] == "":
                code.pop()
            lines = sum(_lines(_shown_length(line.expandtabs(8), marks), per_line) for line in code)
            column.block(2 * PRE_PAD_PX + max(lines, 1) * CODE_LINE_PX)
        elif kind == "table_open":
            column.block(1.0)  # the table's top border
        elif kind == "tr_open":
            row = []
        elif kind == "tr_close" and row is not None:
            # Cells side by side share the width; a row as tall as its cells' text would be in
            # one line of the whole width, and a line more when it wraps at all.
            characters = sum(cell + 2 for cell in row)
            lines = _lines(characters * BOLD, width)
            column.block((lines + (1 if lines > 1 else 0)) * LINE_PX + CELL_EXTRA_PX)
            row = None
        elif kind == "inline":
            pieces = _inline_pieces(token, marks)
            if row is not None:
                row.append(sum(pieces))
            elif heading is not None:
                size = heading[0]
                per_line = width / (size * BOLD)
                column.block(sum(_lines(p, per_line) for p in pieces) * size * LINE_PX)
            else:
                column.block(sum(_lines(p, width) for p in pieces) * LINE_PX)
    return math.ceil(FRAME_TOP_PX + column.total() + FRAME_SCROLLBAR_ROOM_PX + SLACK_PX)


def prose_heights(tokens, marks: list[int], notes: list[str]) -> tuple[int, int]:
    """(height at PROSE_MEASURE_CH, height at PROSE_NARROW_CH), in px."""
    return (prose_height(tokens, marks, notes, PROSE_MEASURE_CH),
            prose_height(tokens, marks, notes, PROSE_NARROW_CH))
