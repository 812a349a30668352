"""The copy frame readable at length (issue 16, item 2): one row a line with a gutter (line number;
a diff's marker), every row FRAME_LINE_PX high unwrapped so the page can size the frame by its
line count; a diff's file list and a collapsible section per file; format-patch separators as
what they are; syntax highlighting (Pygments classes, styled by the frame's one style block)
under the marks; the `#wrap` and `#text` views by CSS alone; dark mode; and, past the sizes, plainer
forms with a note, inside the frame's size bound."""

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from content.frame_geometry import FRAME_LINE_PX, FRAME_PAD_PX
from content.normalise import normalise
from content.rendering import (
    FRAME_CONTRAST_PAIRS,
    FRAME_PALETTES,
    FRAME_SIZE_ALLOWANCE,
    FRAME_SIZE_FACTOR,
    FRAME_STYLE,
    HIGHLIGHT_CLASSES,
    HIGHLIGHT_MAX_CHARACTERS,
    frame_body,
    frame_document,
    sanitise_html,
)

# No database, no socket, no process: run once (tests/support/pure.py).
pytestmark = pytest.mark.pure

DATA = Path(__file__).resolve().parents[1] / "data" / "swebench"


class Rows(HTMLParser):
    """Each row of a frame (an element of class `r`) with its classes, attributes and text; the
    text of a `<pre class="text">`; every element and attribute."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.rows: list[dict] = []
        self.elements: list[tuple[str, dict]] = []
        self.pre_text: list[str] = []
        self._stack: list[tuple[str, dict | None]] = []
        self._in_pre = False

    def handle_starttag(self, tag, attrs):
        found = dict(attrs)
        self.elements.append((tag, found))
        row = None
        if "r" in (found.get("class") or "").split():
            row = {"tag": tag, "classes": found["class"].split(), "attrs": found, "text": ""}
            self.rows.append(row)
        self._stack.append((tag, row))
        if tag == "pre" and found.get("class") == "text":
            self._in_pre = True

    def handle_endtag(self, tag):
        while self._stack:
            open_tag, _ = self._stack.pop()
            if open_tag == tag:
                break
        if tag == "pre":
            self._in_pre = False

    def handle_data(self, data):
        for _, row in reversed(self._stack):
            if row is not None:
                row["text"] += data
                break
        if self._in_pre:
            self.pre_text.append(data)


def rows_of(html: str) -> Rows:
    parser = Rows()
    parser.feed(html)
    parser.close()
    return parser


def rendered_rows(body) -> int:
    """The rows the non-wrapping view shows: every row element, and a plain block's lines."""
    parsed = rows_of(body.html)
    if body.prose:
        # A markdown frame: its plain-text view's rows (and its note rows), not the rendered view.
        plain = body.html[body.html.index('<div class="frame plain">'):]
        parsed = rows_of(plain)
    pre = "".join(parsed.pre_text)
    return len(parsed.rows) + (len(pre.removesuffix("\n").split("\n")) if pre else 0)


def real_patches() -> list[str]:
    return [json.loads(line)["model_patch"]
            for line in (DATA / "qwen-mini.preds.jsonl").read_text("utf-8").splitlines()]


def body_of(text: str, fmt: str, patterns=()):
    return frame_body(normalise(text, fmt, list(patterns)), fmt)


# --- Rows and gutters ----------------------------------------------------------------------------

def test_a_text_copy_is_one_row_a_line_numbered_by_css_so_copying_takes_no_numbers():
    body = body_of("first\n\n  third <b>\n", "text")
    parsed = rows_of(body.html)

    assert [row["text"] for row in parsed.rows] == ["first", "", "  third <b>"]
    assert body.line_count == 3 == rendered_rows(body)
    # The numbers are the CSS counter of the gutter (a pseudo-element, never selected or copied);
    # the gutter cannot be selected either way.
    assert ".text > .r::before { counter-increment: line; content: counter(line); }" in FRAME_STYLE
    assert "user-select: none" in FRAME_STYLE
    assert not re.search(r">\s*[0-9]+\s*<", body.html)
    # Every row the same height unwrapped, and the page's sizing constants are integers of it.
    assert f"height: {FRAME_LINE_PX}px; line-height: {FRAME_LINE_PX}px" in FRAME_STYLE
    assert isinstance(FRAME_LINE_PX, int) and isinstance(FRAME_PAD_PX, int)
    assert FRAME_PAD_PX >= 15 + 8  # the padding above the rows and room for a scrollbar below


def test_a_diffs_rows_are_numbered_from_its_hunk_headers_and_its_markers_are_in_the_gutter():
    diff = ("--- a/notes.txt\n+++ b/notes.txt\n@@ -10,4 +20,5 @@ a heading\n"
            " kept\n-gone\n+new one\n+new two\n kept again\n\\ No newline at end of file\n")
    body = body_of(diff, "diff")
    rows = [(r["classes"][1:], r["attrs"].get("data-n"), r["text"]) for r in rows_of(body.html).rows]

    assert rows == [
        (["file"], None, "--- a/notes.txt"),
        (["meta"], None, "+++ b/notes.txt"),
        (["hunk"], None, "@@ -10,4 +20,5 @@ a heading"),
        (["ctx"], "20", "kept"),
        (["del"], "11", "gone"),  # the old file's number for a removed line
        (["add"], "21", "new one"),
        (["add"], "22", "new two"),
        (["ctx"], "23", "kept again"),
        (["meta"], None, "\\ No newline at end of file"),
    ]
    assert body.line_count == len(rows) == rendered_rows(body)
    # The marker is drawn in the gutter from the row's kind, after its number.
    assert '.diff .add::before { content: attr(data-n) " +"; }' in FRAME_STYLE
    assert '.diff .del::before { content: attr(data-n) " -"; }' in FRAME_STYLE


def test_a_diff_without_headers_keeps_todays_reading_with_blank_numbers():
    body = body_of("+added\n-removed\nplain\n", "diff")
    rows = [(r["classes"][1], r["attrs"].get("data-n"), r["text"]) for r in rows_of(body.html).rows]
    assert rows == [("add", None, "added"), ("del", None, "removed"), ("ctx", None, "plain")]


# --- Files ---------------------------------------------------------------------------------------

def test_a_real_multi_file_diff_has_a_file_list_and_a_collapsible_section_per_file():
    patches = real_patches()
    diff = "".join(patches)
    files = [line.split(" b/", 1)[1] for line in diff.splitlines() if line.startswith("diff --git")]
    assert len(files) == len(patches) >= 3
    body = body_of(diff, "diff")
    parsed = rows_of(body.html)

    listed = [r for r in parsed.rows if r["tag"] == "li"]
    # Each entry names its file twice: as text for the rows view, as a link for the wrap view.
    assert [r["text"] for r in listed] == [name + name for name in files]
    links = [attrs["href"] for tag, attrs in parsed.elements if tag == "a"]
    assert links == [f"#w{n}" for n in range(1, len(files) + 1)]
    sections = [attrs for tag, attrs in parsed.elements if tag == "details"]
    assert sections == [{"open": None, "id": f"f{n}"} for n in range(1, len(files) + 1)]
    anchors = [attrs["id"] for tag, attrs in parsed.elements if tag == "i"]
    assert anchors == ["wrap"] + [f"w{n}" for n in range(1, len(files) + 1)]
    summaries = [r["text"] for r in parsed.rows if r["tag"] == "summary"]
    assert summaries == [line for line in diff.splitlines() if line.startswith("diff --git")]
    # Rows: every line of the diff, and a list entry per file.
    assert body.line_count == len(diff.splitlines()) + len(files) == rendered_rows(body)
    # Every link stays in the document; the CSP forbids the rest (tests/test_threats_http.py).
    assert all(re.fullmatch(r"#w[0-9]+", href) for href in links)


def test_one_file_has_its_section_and_no_list():
    diff = real_patches()[0]
    parsed = rows_of(body_of(diff, "diff").html)
    assert not [r for r in parsed.rows if r["tag"] == "li"]
    assert [tag for tag, _ in parsed.elements].count("details") == 1


def test_a_format_patch_mails_separator_diffstat_and_signature_are_meta_rows_not_removed_lines():
    mail = ("From 1234567890abcdef1234567890abcdef12345678 Mon Sep 17 00:00:00 2001\n"
            "From: A Person <a@example.com>\n"
            "Date: Mon, 1 Jan 2024 00:00:00 +0000\n"
            "Subject: [PATCH] Fix the tax\n"
            "\n"
            "- rounds once\n"
            "---\n"
            " shop/total.py | 2 +-\n"
            " 1 file changed, 1 insertion(+), 1 deletion(-)\n"
            "\n"
            "diff --git a/shop/total.py b/shop/total.py\n"
            "index 1111111..2222222 100644\n"
            "--- a/shop/total.py\n"
            "+++ b/shop/total.py\n"
            "@@ -1,2 +1,2 @@\n"
            "-    return round(x, 3)\n"
            "+    return round(x, 2)\n"
            " # end\n"
            "-- \n"
            "my signature\n")
    # After a mail header the normaliser strips the title and the diffstat with it (issue 24
    # item 8: every diff in one shape); the message is kept, and is not a removed line.
    rows = [(r["classes"][1], r["text"]) for r in rows_of(body_of(mail, "diff").html).rows]
    kinds = dict((text, kind) for kind, text in rows)
    assert "Subject: [PATCH] Fix the tax" not in kinds and " shop/total.py | 2 +-" not in kinds
    assert "---" not in kinds
    assert kinds["- rounds once"] == "meta"  # the message, not a removed line
    assert kinds["-- "] == "meta"  # the signature line, after the hunk's counted lines
    assert [text for kind, text in rows if kind == "del"] == ["    return round(x, 3)"]
    assert [text for kind, text in rows if kind == "add"] == ["    return round(x, 2)"]

    # The same message and diffstat without the mail header stay, and are meta rows.
    rows = [(r["classes"][1], r["text"])
            for r in rows_of(body_of(mail.split("\n", 3)[3], "diff").html).rows]
    kinds = dict((text, kind) for kind, text in rows)
    assert kinds["Subject: [PATCH] Fix the tax"] == "meta"
    assert kinds["- rounds once"] == "meta"
    assert kinds["---"] == "meta"  # the separator before the diffstat
    assert kinds[" shop/total.py | 2 +-"] == "meta"
    assert kinds["-- "] == "meta"
    assert [text for kind, text in rows if kind == "del"] == ["    return round(x, 3)"]
    assert [text for kind, text in rows if kind == "add"] == ["    return round(x, 2)"]


# --- Highlighting --------------------------------------------------------------------------------

def highlighted(text: str) -> set[str]:
    return set(re.findall(r'<span class="([a-z]+)">', text)) & HIGHLIGHT_CLASSES


def test_code_in_a_diff_is_highlighted_by_its_file_name_with_classes_only():
    diff = ("diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1,2 +1,3 @@\n"
            ' def total(x):  # the sum\n-    return "a"\n+    return 2 * len(x)\n+    pass\n')
    html = body_of(diff, "diff").html
    assert highlighted(html) >= {"k", "nf", "c", "s", "m", "nb"}
    assert '<span class="k">def</span> <span class="nf">total</span>' in html
    # The frame's one style block colours them, in both schemes.
    for name in HIGHLIGHT_CLASSES:
        assert f".{name} {{ color: var(--{name});" in FRAME_STYLE
    # An unknown file name, or none, is not guessed at.
    assert not highlighted(body_of(diff.replace("m.py", "m.unknownext"), "diff").html)


def test_a_string_spanning_lines_is_coloured_as_in_the_file():
    diff = ("--- a/d.py\n+++ b/d.py\n@@ -1,3 +1,3 @@\n"
            ' x = """\n-old words\n+new words\n """\n')
    rows = rows_of(body_of(diff, "diff").html).rows
    html = body_of(diff, "diff").html
    assert [r["text"] for r in rows[-4:]] == ['x = """', "old words", "new words", '"""']
    assert '<span class="s">new words</span>' in html and '<span class="s">old words</span>' in html


def test_fenced_markdown_code_is_highlighted_by_its_info_string_and_still_sanitised():
    text = "Text.\n\n```python\nimport os\nprint('<script>')  # note\n```\n\n```nolang\nx = 1\n```\n"
    html = body_of(text, "markdown").html
    rendered = html[:html.index('<div class="frame plain">')]
    assert highlighted(rendered) >= {"k", "s", "c", "nb"}
    assert "<script>" not in html and "&lt;script>" in html
    assert "x = 1" in rendered  # an unknown language: escaped as before, not coloured
    # The sanitiser lets through the highlighting classes and nothing else of the kind.
    assert sanitise_html('<span class="k">a</span><span class="evil">b</span>'
                         '<span class="k" style="color:red" onclick="x()">c</span>') == (
        '<span class="k">a</span><span>b</span><span class="k">c</span>')


@pytest.mark.parametrize("fmt", ["diff", "markdown"])
def test_highlighted_code_is_inert(fmt):
    code = "def f():\n    return '<img src=x onerror=alert(1)>' + \"</pre><script>alert(2)</script>\""
    text = ("--- a/x.py\n+++ b/x.py\n@@ -0,0 +1,2 @@\n" + "".join("+" + line + "\n" for line in
                                                               code.splitlines())
            if fmt == "diff" else "```python\n" + code + "\n```\n")
    html = frame_document(body_of(text, fmt).html)
    parsed = rows_of(html)
    tags = {tag for tag, _ in parsed.elements}
    assert tags.isdisjoint({"script", "img", "svg", "iframe", "object", "embed", "link"})
    assert [tag for tag, _ in parsed.elements].count("style") == 1
    attributes = {name for _, attrs in parsed.elements for name in attrs}
    assert attributes <= {"lang", "charset", "class", "title", "id", "data-n", "open", "href",
                          "tabindex"}
    # The frame's own main element takes focus, so the keyboard scrolls the copy (issue 24).
    assert [(tag, attrs["tabindex"]) for tag, attrs in parsed.elements if "tabindex" in attrs] == [
        ("main", "0")]
    assert not any(name.startswith("on") or name in ("style", "src") for name in attributes)
    assert "alert(1)" in html and "alert(2)" in html  # shown, as text
    assert highlighted(html)


def test_marks_stay_visible_inside_highlighted_code_and_win_over_its_colours():
    line = 'print("Zeta \u202e evil")  # made by Zeta'
    diff = "--- a/x.py\n+++ b/x.py\n@@ -0,0 +1 @@\n+" + line + "\n"
    html = body_of(diff, "diff", ["Zeta"]).html
    row = re.search(r'<span class="r add" data-n="1">(.*?)</span>\n', html).group(1)

    # The string and the comment are coloured, and the marks sit inside those tokens, whole.
    assert re.search(r'<span class="s">[^<]*<span class="mark redacted" title="redacted by the '
                     r'host">\[redacted\]</span>[^<]*<span class="mark bidi" title="a text-'
                     r'direction control character">⟦U\+202E⟧</span>[^<]*</span>', row), row
    assert re.search(r'<span class="c">[^<]*<span class="mark redacted"[^>]*>\[redacted\]</span>'
                     r'</span>', row), row
    assert "Zeta" not in html and "\u202e" not in html
    # Every mark kind sets its own colour and background, so a token's colour never reaches it.
    for kind in ("redacted", "bidi", "mixed"):
        rule = re.search(r"\." + kind + r"\b[^{]*\{([^}]*)\}", FRAME_STYLE).group(1)
        assert "background" in rule and re.search(r"(?<!-)color:", rule), kind


# --- Views ---------------------------------------------------------------------------------------

def test_wrap_and_text_are_css_views_on_the_fragment():
    text_body = body_of("a\nb\n", "text")
    assert text_body.html.startswith('<div class="frame rowsframe"><i id="wrap"></i>')
    # Unwrapped by default; #wrap (or a file's anchor of the wrap view) wraps, without a script.
    assert "html:has(#wrap:target,.wrap-at:target) .r { height: auto;" in FRAME_STYLE
    assert "white-space: pre-wrap" in FRAME_STYLE
    assert ".r { display: block; height: 20px; line-height: 20px; white-space: pre;" in FRAME_STYLE

    markdown = "# Title\n\nSome prose.\n\nunfenced code:\n  x = compute(1)\n\n    indented code\n"
    body = body_of(markdown, "markdown")
    assert body.prose and body.line_count == len(markdown.splitlines()) == rendered_rows(body)
    assert body.html.startswith('<div class="mdframe"><i id="text"></i><div class="md"><h1>')
    plain = rows_of(body.html[body.html.index('<div class="frame plain">'):]).rows
    # The plain-text view holds the normalised text as written, one numbered row a line.
    assert [r["text"] for r in plain] == markdown.splitlines()
    assert ".plain { display: none; }" in FRAME_STYLE
    assert "html:has(#text:target) .plain { display: block; }" in FRAME_STYLE
    assert "html:has(#text:target) .md { display: none; }" in FRAME_STYLE


def test_dark_mode_colours_the_frame_and_its_highlighting_with_aa_contrast():
    assert "@media (prefers-color-scheme: dark)" in FRAME_STYLE
    dark = FRAME_STYLE[FRAME_STYLE.index("@media (prefers-color-scheme: dark)"):]
    for name in ("bg", "fg", "add", "del", *HIGHLIGHT_CLASSES):
        assert f"--{name}:{FRAME_PALETTES['dark'][name]};" in dark

    def luminance(colour: str) -> float:
        channels = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    for scheme, palette in FRAME_PALETTES.items():
        for text, background in FRAME_CONTRAST_PAIRS:
            light, darker = sorted((luminance(palette[text]), luminance(palette[background])),
                                   reverse=True)
            ratio = (light + 0.05) / (darker + 0.05)
            assert ratio >= 4.5, (scheme, text, background, round(ratio, 2))


# --- Budgets -------------------------------------------------------------------------------------

def test_a_diff_past_the_highlighting_size_is_shown_in_rows_without_highlighting_and_says_so():
    line = "+    total = sum(item.price for item in basket)  # subtotal\n"
    count = HIGHLIGHT_MAX_CHARACTERS // len(line) + 10
    diff = f"--- a/x.py\n+++ b/x.py\n@@ -0,0 +1,{count} @@\n" + line * count
    body = body_of(diff, "diff")
    assert "This diff is long, so it is shown without syntax highlighting." in body.html
    assert not highlighted(body.html)
    assert body.line_count == count + 3 + 1 == rendered_rows(body)  # rows, headers, the note


@pytest.mark.parametrize("fmt", ["text", "diff", "markdown"])
def test_a_copy_too_large_for_rows_is_one_block_with_a_note_inside_the_size_bound(fmt):
    text = "+\n-\n" * 50_000  # 100,000 one-character lines: rows would pass 4 x the copy
    body = body_of(text, fmt)
    size = len(text.encode("utf-8"))

    assert '<p class="note r">This copy would be too large with line numbers' in body.html
    assert '<pre class="text">' in body.html and '<span class="r' not in body.html.split("</p>")[-1]
    assert len(frame_document(body.html).encode("utf-8")) <= FRAME_SIZE_FACTOR * size + \
        FRAME_SIZE_ALLOWANCE
    # Its lines are still FRAME_LINE_PX high, so the count still sizes the frame.
    assert f"pre.text {{ line-height: {FRAME_LINE_PX}px; }}" in FRAME_STYLE
    assert body.line_count == rendered_rows(body) == 100_000 + body.html.count('class="note r"')
