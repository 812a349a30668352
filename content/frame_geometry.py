"""The copy frame's row geometry, shared by the renderer and the judge's page.

Its own module so that the pages serving judges, which never render (tests/judge/test_stored_renders.py),
can size the frame without importing the renderer.
"""

# Every row of a text or diff copy (and of a markdown copy's plain-text view) is FRAME_LINE_PX high
# while code does not wrap, and so is every note, file-list entry and file header: the judge's page
# sizes the frame as `line_count * FRAME_LINE_PX + FRAME_PAD_PX` (CopyRender.line_count), so the page
# scrolls and never a box inside it. FRAME_PAD_PX is the padding above the rows plus a room below
# them as tall as a classic horizontal scrollbar (Chromium's is 15 px): in that view the body is the
# scroll container and fills the frame, so when a long line brings the scrollbar, it takes that
# room and not the last row, and no vertical scrollbar appears. The fragment `#wrap` wraps the code
# (rows grow, the document scrolls as usual); `#text` shows a markdown copy's plain-text view; both
# by CSS alone (`:target`), as nothing runs in the frame.
FRAME_LINE_PX = 20
FRAME_TOP_PX = 8
FRAME_SCROLLBAR_ROOM_PX = 16
FRAME_PAD_PX = FRAME_TOP_PX + FRAME_SCROLLBAR_ROOM_PX

# A markdown frame's prose is at most PROSE_MEASURE_CH wide (in `ch` of its 15 px body font), and
# its height is estimated when the session opens at that measure and at PROSE_NARROW_CH (about a
# phone's), stored with the render (content.prose_height); the judge's page takes the height at
# its frame's own width through the two.
PROSE_MEASURE_CH = 80
PROSE_NARROW_CH = 40

# A sideways scroll of the rows view keeps the line numbers and the `+`/`-` gutter in place
# (`position: sticky` on each row's gutter) in frames of up to this many lines; each sticky box
# costs the browser a layer, so a frame of tens of thousands of lines scrolls its gutter away.
GUTTER_PIN_MAX_ROWS = 10_000
