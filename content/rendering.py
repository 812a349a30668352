"""Rendering model output for judges: one template, inert text, marks made visible.

Everything a judge sees of a copy, a finding text or a review reason comes through here, after
`content.normalise` (metadata stripped, accepted patterns redacted, invisible, bidi and
mixed-script characters turned into marks). Copies are rendered into a standalone HTML document
served inside `<iframe sandbox>` with a CSP of `sandbox; default-src 'none'` plus the hash of the
one style block below; nothing in it can run, navigate or load.
"""

import base64
import hashlib
import re
from dataclasses import dataclass
from html import escape

import nh3
from markdown_it import MarkdownIt
from pygments.lexers import JsonLexer, PythonLexer, SqlLexer
from pygments.token import Comment, Keyword, Literal, Name, Number, String

from content.frame_geometry import (
    FRAME_LINE_PX,
    FRAME_SCROLLBAR_ROOM_PX,
    FRAME_TOP_PX,
    GUTTER_PIN_MAX_ROWS,
    PROSE_MEASURE_CH,
)
from content.normalise import PLAIN_LABELS, Normalised, Segment
from content.prose_height import prose_heights

# --- The frame's one style block --------------------------------------------------------------
#
# The rows' geometry (content.frame_geometry) is what the judge's page sizes the frame by.

# Colours, light and dark (`prefers-color-scheme`): each text colour passes WCAG AA (4.5:1) on
# each background it can sit on (tests/content/test_frame_views.py computes every pair).
# The syntax classes are Pygments' own short names for the token types styled (content/highlight).
FRAME_PALETTES = {
    "light": {
        "bg": "#ffffff", "fg": "#1f2328", "muted": "#59636e", "add": "#dafbe1", "del": "#ffebe9",
        "hunk": "#ddf4ff", "hunk-fg": "#0550ae", "code-bg": "#f6f8fa", "link": "#0969da",
        "border": "#d0d7de",
        "k": "#cf222e", "s": "#0a3069", "c": "#59636e", "m": "#0550ae", "nf": "#6639ba",
        "nb": "#953800", "nt": "#116329",
        "redacted-bg": "#1b1f24", "redacted-fg": "#ffffff", "special-bg": "#fff8c5",
        "special-fg": "#7a4d00", "special-line": "#bf8700", "mixed-bg": "#fbefff",
        "mixed-fg": "#1f2328", "mixed-line": "#8250df",
    },
    "dark": {
        "bg": "#0d1117", "fg": "#e6edf3", "muted": "#9198a1", "add": "#12261e", "del": "#25171c",
        "hunk": "#121d2f", "hunk-fg": "#79c0ff", "code-bg": "#161b22", "link": "#4493f8",
        "border": "#3d444d",
        "k": "#ff7b72", "s": "#a5d6ff", "c": "#9198a1", "m": "#79c0ff", "nf": "#d2a8ff",
        "nb": "#ffa657", "nt": "#7ee787",
        "redacted-bg": "#e6edf3", "redacted-fg": "#0d1117", "special-bg": "#3b2e00",
        "special-fg": "#f2cc60", "special-line": "#d29922", "mixed-bg": "#2d1f47",
        "mixed-fg": "#e6edf3", "mixed-line": "#a371f7",
    },
}
# Which text colour sits on which backgrounds (for the contrast test).
FRAME_CONTRAST_PAIRS = (
    [(fg, bg) for fg in ("fg", "muted", "k", "s", "c", "m", "nf", "nb", "nt", "link")
     for bg in ("bg", "add", "del", "code-bg")]
    + [("hunk-fg", "hunk"), ("redacted-fg", "redacted-bg"), ("special-fg", "special-bg"),
       ("mixed-fg", "mixed-bg")])


def _variables(palette: dict) -> str:
    return "".join(f"--{name}:{value};" for name, value in palette.items())


# The non-wrapping rows view: a text or diff frame without #wrap (or a file anchor of the wrap
# view) as target, or a markdown frame with #text as target.
_ROWS_VIEW = ("html:is(:has(.rowsframe):not(:has(#wrap:target,.wrap-at:target)),"
              ":has(#text:target))")
_WRAP_VIEW = "html:has(#wrap:target,.wrap-at:target)"

FRAME_STYLE = f"""
:root {{ {_variables(FRAME_PALETTES["light"])} color-scheme: light dark; }}
@media (prefers-color-scheme: dark) {{ :root {{ {_variables(FRAME_PALETTES["dark"])} }} }}
html {{ background: var(--bg); color: var(--fg); }}
body {{ margin: 0; padding: {FRAME_TOP_PX}px 8px {FRAME_SCROLLBAR_ROOM_PX}px;
       font: 15px/1.5 system-ui, sans-serif; overflow-wrap: anywhere; }}
{_ROWS_VIEW} {{ height: 100%; overflow: hidden; }}
{_ROWS_VIEW} > body {{ height: 100%; box-sizing: border-box; overflow: auto; padding-bottom: 0; }}
pre, code, .r {{ font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }}
pre {{ white-space: pre; margin: 0; }}
pre.text {{ line-height: {FRAME_LINE_PX}px; }}
{_WRAP_VIEW} pre {{ white-space: pre-wrap; }}
.md pre {{ background: var(--code-bg); padding: 0.5rem; white-space: pre-wrap; }}
#wrap, #text {{ display: none; }}
.wrap-at {{ display: block; height: 0; }}
.frame {{ width: max-content; min-width: 100%; }}
{_WRAP_VIEW} .frame, .mdframe {{ width: auto; }}
.mdframe {{ max-width: {PROSE_MEASURE_CH}ch; }}
main:focus-visible {{ outline: 2px solid var(--link); outline-offset: -2px; }}
.r {{ display: block; height: {FRAME_LINE_PX}px; line-height: {FRAME_LINE_PX}px; white-space: pre;
      background: var(--bg); margin: 0; padding: 0 0 0 8ch; text-indent: -8ch; overflow: clip; }}
{_WRAP_VIEW} .r {{ height: auto; min-height: {FRAME_LINE_PX}px; white-space: pre-wrap; }}
.r::before {{ content: ""; display: inline-block; box-sizing: border-box; width: 8ch;
              padding-right: 1ch; text-indent: 0; text-align: right; color: var(--muted);
              user-select: none;
              font-style: normal; font-weight: normal; }}
.r::before {{ position: sticky; left: 0; z-index: 1; background: inherit; }}
.nopin .r::before {{ position: static; }}
.wide .r {{ padding-left: 10ch; text-indent: -10ch; }} .wide .r::before {{ width: 10ch; }}
.text {{ counter-reset: line; }}
.text > .r::before {{ counter-increment: line; content: counter(line); }}
.diff .r::before {{ content: attr(data-n) "  "; }}
.diff .ctx:not([data-n])::before {{ content: ""; }}
.diff .add::before {{ content: attr(data-n) " +"; }}
.diff .del::before {{ content: attr(data-n) " -"; }}
.add {{ background: var(--add); }} .del {{ background: var(--del); }}
.hunk {{ background: var(--hunk); color: var(--hunk-fg); }} .meta {{ color: var(--muted); }}
summary.r {{ cursor: pointer; font-weight: 600; list-style: none; }}
summary.r::before, .diff summary.r::before {{ content: "\\25BE  "; }}
details:not([open]) > summary.r::before {{ content: "\\25B8  "; }}
.files {{ list-style: none; counter-reset: file; margin: 0; padding: 0; }}
.files > .r::before {{ counter-increment: file; content: counter(file) "  "; }}
.files a {{ color: var(--link); }}
.files .in-wrap, {_WRAP_VIEW} .files .in-rows {{ display: none; }}
{_WRAP_VIEW} .files a.in-wrap {{ display: inline; }}
.plain {{ display: none; }}
html:has(#text:target) .plain {{ display: block; }} html:has(#text:target) .md {{ display: none; }}
.k {{ color: var(--k); }} .s {{ color: var(--s); }} .c {{ color: var(--c); font-style: italic; }}
.m {{ color: var(--m); }} .nf {{ color: var(--nf); }} .nb {{ color: var(--nb); }}
.nt {{ color: var(--nt); }}
.mark {{ border-radius: 3px; padding: 0 2px; font: 12px/1 ui-monospace, monospace;
         font-style: normal; }}
.redacted {{ background: var(--redacted-bg); color: var(--redacted-fg); }}
.bidi, .invisible {{ background: var(--special-bg); color: var(--special-fg);
                     outline: 1px dashed var(--special-line); }}
.mixed {{ background: var(--mixed-bg); color: var(--mixed-fg); outline: 1px dashed var(--mixed-line); }}
.link {{ text-decoration: underline dotted; }} .url {{ color: var(--muted); }}
table {{ border-collapse: collapse; }} th, td {{ border: 1px solid var(--border); padding: 2px 6px; }}
.note {{ margin: 0 0 0.5rem; color: var(--muted); font-style: italic; }}
.note.r {{ margin: 0; font-family: system-ui, sans-serif; }}
.visually-hidden {{ position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0;
                    overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }}
""".strip()


def style_source_hash(style: str) -> str:
    """The CSP source ('sha256-…', without quotes) that allows exactly this one <style> block."""
    return "sha256-" + base64.b64encode(hashlib.sha256(style.encode("utf-8")).digest()).decode("ascii")


FRAME_STYLE_HASH = style_source_hash(FRAME_STYLE)

FRAME_CSP = (
    f"sandbox; default-src 'none'; style-src '{FRAME_STYLE_HASH}'; frame-ancestors 'self'; "
    "base-uri 'none'; form-action 'none'"
)

# The token types styled, by Pygments' short class name of the type or its nearest styled parent.
_STYLED = {Keyword: "k", String: "s", Comment: "c", Number: "m", Name.Function: "nf",
           Name.Class: "nf", Name.Decorator: "nf", Name.Builtin: "nb", Name.Tag: "nt",
           Literal.String: "s"}
HIGHLIGHT_CLASSES = frozenset(_STYLED.values())

_MARK_CLASS = {"redacted": "redacted", "bidi": "bidi", "invisible": "invisible",
               "mixed_script": "mixed"}
_MARK_TITLE = {"redacted": "redacted by the host", "bidi": "a text-direction control character",
               "invisible": "an invisible character", "mixed_script": "letters from mixed scripts"}


_MARK_TITLES = {"redacted": "redactions by the host",
                "bidi": "text-direction control characters",
                "invisible": "invisible characters",
                "mixed_script": "tokens of letters from mixed scripts"}


# Text content in the frame (inside <pre>, <span>, <p>…, never an attribute value: those, the
# marks' titles, keep html.escape) is read by the HTML tokenizer's data state
# (https://html.spec.whatwg.org/multipage/parsing.html#data-state), where only `<` and `&` mean
# anything, and only sometimes:
# - `<` goes to the tag open state, which starts markup only before an ASCII letter (a tag), `!`
#   (comment, doctype, CDATA), `/` (end tag) or `?` (bogus comment); before anything else, the end
#   of input included, it is the character `<`
#   (https://html.spec.whatwg.org/multipage/parsing.html#tag-open-state);
# - `&` goes to the character reference state, which reads a reference only before an ASCII
#   alphanumeric (named) or `#` (numeric); before anything else it is the character `&`
#   (https://html.spec.whatwg.org/multipage/parsing.html#character-reference-state);
# - `>` and quotes are characters in text.
# So only those `<` and `&` are escaped, and a `<` before whitespace too (any that Python's `\s`
# takes, U+0085 and U+3000 included, not only HTML's ASCII five), which HTML reads as text but
# lenient parsers and byte scans (tests/test_threats_http.py) read as a tag (`< script >`).
# html.escape's `&amp;` for every `&` made a frame of `&`s five times its copy, past the bound
# (docs/threats.md, case 34); now the worst is `&a` (3 ×), then `<a` or `< ` (2.5 ×).
# A `<` or `&` at the end of a piece is escaped too, as what follows it is not known here (the
# next piece, a mark or a line's tag). One pass of a one-character lookahead: linear.
_TEXT_MARKUP = re.compile(r"&(?=[A-Za-z0-9#]|\Z)|<(?=[A-Za-z!/?]|\s|\Z)")
_TEXT_ESCAPES = {"&": "&amp;", "<": "&lt;"}


def _text(text: str) -> str:
    """`text` as HTML text content (never an attribute value), escaped where HTML needs it."""
    return _TEXT_MARKUP.sub(lambda m: _TEXT_ESCAPES[m.group()], text)


def mark_html(segment: Segment) -> str:
    """One mark: a run of marks is one span, its count shown (`⟦U+200B⟧ × 1,747,626`)."""
    kind = segment.kind
    title = _MARK_TITLE[kind] if segment.count == 1 else f"{segment.count:,} {_MARK_TITLES[kind]}"
    return (f'<span class="mark {_MARK_CLASS[kind]}" title="{escape(title)}">'
            f"{_text(segment.shown())}</span>")


def _unhighlighted(text: str) -> str:
    # Past the mark budget: special characters as short codes (`⟦200B⟧`), never raw.
    return text.translate(PLAIN_LABELS)


# A code span as markdown writes it (`x`, ``x ` y``): a run of backticks, then text, then the same
# run; findings and reasons name code this way, and shown raw the backticks were noise (issue 24).
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)


def _inline_text(text: str) -> str:
    """Escaped text with its code spans as <code> (their content escaped, nothing else parsed)."""
    parts, last = [], 0
    for span in _CODE_SPAN.finditer(text):
        parts.append(escape(text[last:span.start()]))
        parts.append("<code>" + escape(span.group(2)) + "</code>")
        last = span.end()
    parts.append(escape(text[last:]))
    return "".join(parts)


def inline_html(normalised: Normalised) -> str:
    """Escaped HTML of normalised text with its marks, for text shown in the judge's own page;
    code spans (`x`) are shown as code. A span a mark cuts through stays as typed."""
    return "".join(_inline_text(s.text) if s.kind == "text"
                   else escape(_unhighlighted(s.text)) if s.kind == "unhighlighted"
                   else mark_html(s) for s in normalised.segments)


def _body(normalised: Normalised) -> str:
    """The escaped text with its marks (no mark holds a newline)."""
    return "".join(_text(s.text) if s.kind == "text"
                   else _text(_unhighlighted(s.text)) if s.kind == "unhighlighted"
                   else mark_html(s) for s in normalised.segments)


def text_html(normalised: Normalised) -> str:
    return '<pre class="text">' + _body(normalised) + "</pre>"


# Runs of lines of one kind, found on the escaped text: escaping keeps what a line starts with
# (`+`, `-`, `@`, letters, spaces) and a mark starts with `<`, which starts no kind but `ctx`,
# as its label (`U+…`) did. Each line is taken with its newline.
_DIFF_LINE_STARTS = {
    "meta": r"(?:\+\+\+ |--- |diff |index )",
    "hunk": "@@",
    "add": r"\+(?!\+\+ )",
    "del": r"-(?!-- )",
    "ctx": r"(?!\+|-|@@|diff |index )",
}
_DIFF_RUN_RE = re.compile("|".join(
    f"(?P<{kind}>(?:{start}[^\n]*(?:\n|\\Z))+)" for kind, start in _DIFF_LINE_STARTS.items()))


def diff_html(normalised: Normalised, *, max_runs: int | None = None) -> str | None:
    """Lines coloured by what they are; consecutive lines of one kind share one block, so a
    diff costs one element per change of kind, not one per line. With `max_runs`, None when the
    diff changes kind more often than that."""
    body = _body(normalised)
    rows = []
    for m in _DIFF_RUN_RE.finditer(body):
        run = m.group()
        if not run:
            continue
        if max_runs is not None and len(rows) >= max_runs:
            return None
        rows.append(f'<span class="line {m.lastgroup}">{run.removesuffix(chr(10))}</span>')
    return '<pre class="diff">' + "".join(rows) + "</pre>"


# --- Markdown ------------------------------------------------------------------------------------

ALLOWED_TAGS = {
    "p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote", "pre", "code", "em",
    "strong", "hr", "br", "table", "thead", "tbody", "tr", "th", "td", "span", "s", "del",
}


_SANITISER = nh3.Cleaner(
    tags=ALLOWED_TAGS,
    clean_content_tags=set(),  # a tag not allowed goes, its text stays (escaped)
    attributes={"*": set()},  # no generic attributes (ammonia's default allows lang and title)
    tag_attribute_values={"span": {"class": {"link", "url", *HIGHLIGHT_CLASSES}}},
    generic_attribute_prefixes=set(),
    url_schemes=set(),
    strip_comments=True,
    link_rel=None,
)


def sanitise_html(html: str) -> str:
    """The one place HTML from model output is sanitised: a strict allowlist, no attributes but
    our own two span classes (nothing that loads, links or styles). Tags not allowed are dropped
    and their text kept; comments are dropped. nh3 (ammonia, in Rust) does it in linear time."""
    return _SANITISER.clean(html)


def _inert_link_open(self, tokens, idx, options, env):
    # Links never nest in CommonMark, but a stack costs nothing and keeps every close paired.
    env.setdefault("hrefs", []).append(tokens[idx].attrGet("href") or "")
    return '<span class="link">'


def _inert_link_close(self, tokens, idx, options, env):
    # Show where the link pointed, as text: the href its opening token left on the stack.
    hrefs = env.get("hrefs")
    if not hrefs:
        return "</span>"
    return f'</span> <span class="url">\u27e8{_text(hrefs.pop())}\u27e9</span>'


def _inert_image(self, tokens, idx, options, env):
    token = tokens[idx]
    alt = "".join(child.content for child in token.children or [])
    return (f'<span class="url">[image: {_text(alt)} \u27e8'
            f'{_text(token.attrGet("src") or "")}\u27e9]</span>')


def _markdown() -> MarkdownIt:
    # Fenced code is highlighted by the lexer its info string names (`_highlight_fence`, below).
    md = MarkdownIt("commonmark", {"html": False, "linkify": False,
                                   "highlight": lambda *fence: _highlight_fence(*fence)})
    md.enable("table")
    md.add_render_rule("link_open", _inert_link_open)
    md.add_render_rule("link_close", _inert_link_close)
    md.add_render_rule("image", _inert_image)
    return md


_MD = _markdown()
_PLACEHOLDER = re.compile("\ue000(\\d+)\ue001")
_OWN_PLACEHOLDER_CHARS = re.compile("[\ue000\ue001]")


# Past these, a markdown copy is shown as text with a note saying why (measured: bench/README.md,
# "Worst-case copies"). markdown-it's time goes with the number of blocks, each line at most one,
# so the lines are limited; the sanitiser is linear. The other limits are on what the output
# would be: each link or image costs some 50 bytes of HTML for a few bytes of
# markdown and each table cell about 10, so a copy of nothing else would break the frame's size
# bound; markdown-it stops parsing at 20 levels of nesting and drops whatever is deeper (the
# judge would not see it), so a copy nesting anywhere near that is shown as text, where nothing
# is dropped.
MARKDOWN_RENDER_LIMIT = 100_000  # characters
MARKDOWN_MAX_LINES = 5_000  # markdown-it spends 0.1-0.15 ms a block: 10,000 list items took 1.5 s
MARKDOWN_MAX_LINKS = 1_000  # links and images
MARKDOWN_MAX_TABLE_CELLS = 5_000
MARKDOWN_MAX_NESTING = 16  # levels; markdown-it's own limit (maxNesting) is 20

# The frame of a copy is at most this many times its size (in UTF-8), plus FRAME_SIZE_ALLOWANCE:
# a rendering that would be larger (markdown of nothing but empty blocks, a diff alternating
# `+` and `-` lines of one character) is replaced by the text form.
FRAME_SIZE_FACTOR = 4
FRAME_SIZE_ALLOWANCE = 64 * 1024


class _TooMuch(Exception):
    """A markdown copy past one of the limits above; the message is the note the judge sees."""


def _check_links(links: int) -> None:
    if links > MARKDOWN_MAX_LINKS:
        raise _TooMuch(f"This markdown copy has {links:,} links and images (more than "
                       f"{MARKDOWN_MAX_LINKS:,}), so it is shown as plain text.")


def _check_structure(tokens) -> None:
    links = cells = deepest = 0
    for token in tokens:
        deepest = max(deepest, token.level)
        if token.type in ("td_open", "th_open"):
            cells += 1
        for child in token.children or ():
            deepest = max(deepest, child.level)
            if child.type in ("link_open", "image"):
                links += 1
    if deepest >= MARKDOWN_MAX_NESTING:
        raise _TooMuch(f"This markdown copy nests {MARKDOWN_MAX_NESTING} levels deep or more, "
                       "so it is shown as plain text.")
    _check_links(links)
    if cells > MARKDOWN_MAX_TABLE_CELLS:
        raise _TooMuch(f"This markdown copy has {cells:,} table cells (more than "
                       f"{MARKDOWN_MAX_TABLE_CELLS:,}), so it is shown as plain text.")


def markdown_html(normalised: Normalised) -> str:
    """Markdown rendered with links and images turned into inert text, sanitised, and the
    normaliser's marks put back where they were (placeholders survive rendering as text).
    Raises _TooMuch past the structure limits (checked on the parsed tokens, before rendering)."""
    return _markdown_rendered(normalised)[0]


def _markdown_rendered(normalised: Normalised) -> tuple[str, list, list[int]]:
    """(markdown_html, the parsed tokens, each mark's shown length): the frame estimates its
    height from the tokens (`prose_heights`)."""
    marks: list[str] = []
    shown: list[int] = []
    source: list[str] = []

    def own_char(match):
        # Our placeholder characters in the copy itself become marks too, never placeholders.
        segment = Segment("invisible", f"U+{ord(match.group()):04X}")
        marks.append(mark_html(segment))
        shown.append(len(segment.shown()) + 1)
        return f"\ue000{len(marks) - 1}\ue001"

    for segment in normalised.segments:
        if segment.kind == "text":
            source.append(_OWN_PLACEHOLDER_CHARS.sub(own_char, segment.text))
        elif segment.kind == "unhighlighted":
            source.append(_OWN_PLACEHOLDER_CHARS.sub(own_char, _unhighlighted(segment.text)))
        else:
            marks.append(mark_html(segment))
            shown.append(len(segment.shown()) + 1)
            source.append(f"\ue000{len(marks) - 1}\ue001")
    source = "".join(source)
    lines = source.count("\n") + 1
    if lines > MARKDOWN_MAX_LINES:
        raise _TooMuch(f"This markdown copy has {lines:,} lines (more than "
                       f"{MARKDOWN_MAX_LINES:,}), so it is shown as plain text.")
    # Every inline link or image has a `](`: counting them spares parsing a paragraph of 16,666
    # links (0.85 s) only to refuse it; reference links are counted after parsing.
    _check_links(source.count("]("))
    env: dict = {}
    tokens = _MD.parse(source, env)
    _check_structure(tokens)
    html = sanitise_html(_MD.renderer.render(tokens, _MD.options, env))
    html = '<div class="md">' + _PLACEHOLDER.sub(lambda m: marks[int(m.group(1))], html) + "</div>"
    return html, tokens, shown


def source_size(normalised: Normalised) -> int:
    """A lower bound of the UTF-8 size of the text `normalised` came from (metadata aside)."""
    size = 0
    for segment in normalised.segments:
        if segment.kind in ("text", "mixed_script"):
            size += len(segment.text.encode("utf-8"))
        elif segment.kind == "redacted":
            size += segment.count
        else:
            size += 2 * segment.count  # no special character is shorter in UTF-8
    return size


def _note(text: str) -> str:
    return f'<p class="note">{text}</p>'


def _prose_body(normalised: Normalised, fmt: str) -> str:
    """A task statement's or the rubric's body for the judge's own page: markdown rendered, a
    diff coloured, text as it is; past the markdown limits, or past the size bound, text with a
    note."""
    if fmt == "markdown" and sum(len(s.text) for s in normalised.segments) > MARKDOWN_RENDER_LIMIT:
        return _note("This markdown copy is long, so it is shown as plain text.") + text_html(
            normalised)
    if fmt not in ("markdown", "diff"):
        return text_html(normalised)
    budget = FRAME_SIZE_FACTOR * source_size(normalised) + FRAME_SIZE_ALLOWANCE - len(
        frame_document(""))
    too_large = f"This {'markdown copy' if fmt == 'markdown' else 'diff'} would be too large " \
        "rendered, so it is shown as plain text."
    if fmt == "diff":
        # Each block of lines costs about 40 bytes: stop as soon as they would pass the bound.
        body = diff_html(normalised, max_runs=max(0, budget - source_size(normalised)) // 40)
        if body is None:
            return _note(too_large) + text_html(normalised)
    else:
        try:
            body = markdown_html(normalised)
        except _TooMuch as too_much:
            return _note(str(too_much)) + text_html(normalised)
    if len(body.encode("utf-8")) > budget:
        return _note(too_large) + text_html(normalised)
    return body


def _unhighlighted_note(normalised: Normalised) -> str:
    return (f"This copy holds more hidden characters, mixed-script tokens or redactions than can "
            f"be highlighted: the last {normalised.unhighlighted:,} are shown as plain text, a "
            "hidden character as its code in brackets (\u27e6200B\u27e7).")


def prose_html(normalised: Normalised, fmt: str) -> str:
    """A task statement or the rubric, for the judge's own page (not a frame: no rows, no views):
    markdown rendered, text as it is, with the same limits and notes as a copy had before rows."""
    body = _prose_body(normalised, fmt)
    if normalised.unhighlighted:
        body = _note(_unhighlighted_note(normalised)) + body
    return body


# --- The copy frame: rows, views, highlighting ----------------------------------------------------

# Syntax highlighting (Pygments, one of HIGHLIGHT_LEXERS, below, named by a diff's file name or a
# fence's info string, never guessed: guess_lexer tries every lexer on the whole input) costs
# some 1-2 s per MB of diff here, rows and all, and adds a span per run of tokens, so it is done
# only for copies up to these sizes (bench/README.md, "Rows and highlighting": a 256 KB Python
# diff took 0.9 s on a quiet machine and 1.9 s at load 10, against the 2 s a copy may take;
# 128 KB is some 3,000 lines, where a SWE-bench patch has tens); past them, rows without
# highlighting and a note. Past the
# frame's size bound (FRAME_SIZE_FACTOR), the rows go too (each costs some 25-40 bytes of markup,
# so a copy of very short lines would pass the bound): the copy is then one preformatted block,
# still FRAME_LINE_PX a line, with a note.
HIGHLIGHT_MAX_CHARACTERS = 128 * 1024
HIGHLIGHT_MAX_LINES = 5_000

# Marks stand in the text as this one character while it is split into lines and lexed (a
# character cannot be split between tokens, where `\ue000N\ue001` could), and are put back in
# order afterwards. The copy's own U+E000 is counted among them and put back as itself.
_PLACE = "\ue000"
_PLACE_RE = re.compile(_PLACE)


@dataclass(frozen=True)
class FrameBody:
    """A copy's body for its frame. `line_count`: the rows of its non-wrapping view (every
    row, note, file-list entry and file header is FRAME_LINE_PX high there; for markdown, the
    plain-text view's rows). `prose`: the frame opens on rendered markdown (wrapping prose, whose
    height no line count gives)."""

    html: str
    line_count: int
    prose: bool = False
    # A prose frame's estimated height in px at PROSE_MEASURE_CH and at PROSE_NARROW_CH
    # (content.prose_height), by which the judge's page sizes it.
    prose_heights: tuple[int, int] | None = None


def _placeheld(normalised: Normalised) -> tuple[str, list[str]]:
    """The copy's text with each mark as _PLACE, and the marks' HTML in order."""
    parts: list[str] = []
    marks: list[str] = []
    for segment in normalised.segments:
        if segment.kind in ("text", "unhighlighted"):
            text = segment.text if segment.kind == "text" else _unhighlighted(segment.text)
            # The copy's own U+E000 (a private-use character, not markup) is put back as itself.
            marks.extend([_PLACE] * text.count(_PLACE))
            parts.append(text)
        else:
            marks.append(mark_html(segment))
            parts.append(_PLACE)
    return "".join(parts), marks


def _lines(text: str) -> list[str]:
    """The copy's lines; a final newline ends the last line and starts none."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


class _Marks:
    """Puts the marks back, line by line, in the text's order."""

    def __init__(self, marks: list[str]):
        self.marks = marks

    def starts(self, lines: list[str]) -> list[int]:
        """Where each line's marks start in the list (a line's marks are its _PLACEs)."""
        starts, at = [], 0
        for line in lines:
            starts.append(at)
            at += line.count(_PLACE)
        return starts

    def fill(self, html: str, start: int) -> str:
        if _PLACE not in html:
            return html
        position = iter(range(start, start + html.count(_PLACE)))
        return _PLACE_RE.sub(lambda _: self.marks[next(position)], html)


# --- Highlighting ---------------------------------------------------------------------------------

_CLASS_OF: dict = {}


def _class_of(token_type) -> str:
    try:
        return _CLASS_OF[token_type]
    except KeyError:
        found, walk = "", token_type
        while walk is not None:
            if walk in _STYLED:
                found = _STYLED[walk]
                break
            walk = walk.parent
        _CLASS_OF[token_type] = found
        return found


def _highlighted_lines(lexer, text: str) -> list[str]:
    """`text` lexed, as one HTML string per line: each run of tokens of one styled class a span
    with that short class, its text escaped like any other (`_text`); the marks' _PLACEs kept as
    they are."""
    lines: list[str] = []
    current: list[str] = []
    run_class, run = "", []

    def close_run():
        if run:
            escaped = _code_text("".join(run))
            current.append(f'<span class="{run_class}">{escaped}</span>' if run_class else escaped)
            run.clear()

    for token_type, value in lexer.get_tokens(text):
        name = _class_of(token_type)
        for index, piece in enumerate(value.split("\n")):
            if index:
                close_run()
                lines.append("".join(current))
                current = []
            if piece:
                if name != run_class:
                    close_run()
                    run_class = name
                run.append(piece)
    close_run()
    lines.append("".join(current))
    return lines


class _PythonLexer(PythonLexer):
    """Pygments' Python lexer with its two docstring rules' `^(\\s*)` taking only the line's own
    indentation (`^([^\\S\\n]*)`). As written, at each line start it runs over every blank or
    whitespace-only line after it and back, so such lines cost quadratic time (25 KB of " \\n":
    8 s; a 128 KB copy: minutes). The newline before a docstring is a token of its own (the
    rule ahead of these), so the tokens are otherwise the same (tests/content/test_lexer_bounds.py)."""

    tokens = {"root": [
        (rule[0].replace(r"^(\s*)", r"^([^\S\n]*)"), *rule[1:])
        if isinstance(rule, tuple) and isinstance(rule[0], str) else rule
        for rule in PythonLexer.tokens["root"]]}


# The only lexers model text is highlighted with (issue 25). Pygments has some 600, and many
# backtrack catastrophically on a few hundred hostile bytes (maple: `"` then `\a` x 25, 6 s, each
# more `\a` x 2-2.5; systemd: 500 spaces, 2 s) and `re` holds the GIL, so every request of the
# process would wait. Most of the rest take quadratic time on some plain-looking input (flagged
# by that test's detector, 300 -> 2,400 characters taking x 26-60 or more where a linear lexer
# takes x 8-9; confirmed at 4-16x larger sizes for those marked *): c*, cpp*, java, c#, markdown*
# on runs of newlines; javascript*, typescript*, go* on `/*` or `"\` repeated; rust*, kotlin*,
# dart on `//` repeated; yaml*, toml*, ini*, css, makefile on punctuation or an unclosed string;
# bash, ruby, dockerfile on an unclosed heredoc; html, xml on `<!--` or `&` repeated; diff on a
# long line without a newline; and Python's own lexer* on whitespace-only lines (fixed above).
# So: the languages model output needs most whose lexers grow linearly on every input of
# tests/content/test_lexer_bounds.py (swift, scss, lua, scala, perl, haskell passed too, and are
# left out as rare here: each costs that test ~1 s). Any other language is shown as plain rows,
# as an unknown one always was. Fences name a lexer by any of its class's aliases; a diff's file
# names map through HIGHLIGHT_EXTENSIONS (never Pygments' search over every lexer's patterns).
HIGHLIGHT_LEXERS: dict[str, type] = {
    "python": _PythonLexer,
    "json": JsonLexer,
    "sql": SqlLexer,
}
HIGHLIGHT_EXTENSIONS: dict[str, str] = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".json": "json",
    ".sql": "sql",
}
_LEXER_OF_ALIAS = {alias.lower(): lexer for name, lexer in HIGHLIGHT_LEXERS.items()
                   for alias in (name, *lexer.aliases)}


def _lexer_for_filename(name: str):
    """The allowlisted lexer for a file name's extension, or None."""
    base = name.rsplit("/", 1)[-1]
    extension = base[base.rindex("."):].lower() if "." in base else ""
    language = HIGHLIGHT_EXTENSIONS.get(extension)
    return HIGHLIGHT_LEXERS[language](stripnl=False, ensurenl=False) if language else None


def _lexer_by_name(name: str):
    """The allowlisted lexer a fence's info string names (any of its aliases), or None."""
    lexer = _LEXER_OF_ALIAS.get(name.strip().lower()) if name else None
    return lexer(stripnl=False, ensurenl=False) if lexer else None


def _highlight(lexer, lines: list[str]) -> list[str] | None:
    """Each line's HTML, lexed as one text; None when the lexer's lines do not match."""
    if lexer is None or not lines:
        return None
    result = _highlighted_lines(lexer, "\n".join(lines))
    return result if len(result) == len(lines) else None


# --- Rows -----------------------------------------------------------------------------------------

_ROW_BYTES = len('<span class="r"></span>\n')


def _row(html: str, kind: str = "", number: int | None = None) -> str:
    classes = f"r {kind}" if kind else "r"
    n = "" if number is None else f' data-n="{number}"'
    return f'<span class="{classes}"{n}>{html}</span>\n'


def _note_row(text: str) -> str:
    return f'<p class="note r">{text}</p>\n'


def _gutter_class(count: int) -> str:
    # Past GUTTER_PIN_MAX_ROWS the gutter scrolls sideways with the code (`nopin`).
    return (" wide" if count >= 100_000 else "") + (" nopin" if count > GUTTER_PIN_MAX_ROWS else "")


class _Budget(Exception):
    """The rows would be past the frame's size bound."""


class _Sink:
    """Collects HTML and stops (`_Budget`) as soon as it would be past `limit` characters (a
    character is at least a byte, and the size test is on bytes afterwards)."""

    def __init__(self, limit: int):
        self.parts: list[str] = []
        self.size, self.limit = 0, limit

    def add(self, html: str) -> None:
        self.size += len(html)
        if self.size > self.limit:
            raise _Budget
        self.parts.append(html)

    def html(self) -> str:
        return "".join(self.parts)


# `_TEXT_MARKUP` for text holding marks' placeholders and newlines: a line's end and a mark end a
# piece too (what follows is a row's or a mark's tag), so escaping a whole text at once gives what
# escaping each piece gives.
_LINES_MARKUP = re.compile("&(?=[A-Za-z0-9#\n\ue000]|\\Z)|<(?=[A-Za-z!/?]|\\s|\ue000|\\Z)")


def _code_text(text: str) -> str:
    """`_text` for text with marks' placeholders (and newlines) in it."""
    return _LINES_MARKUP.sub(lambda m: _TEXT_ESCAPES[m.group()], text)


def _text_rows(lines: list[str], marks: _Marks, sink: _Sink, *, plain: bool = False) -> None:
    """One row a line, built for the whole text at once (a 5 MB copy is some 65,000 lines: a
    Python call per line cost more than the rest); the marks are put back in order."""
    sink.add(f'<div class="rows text{" plain" if plain else ""}{_gutter_class(len(lines))}">')
    if lines:
        escaped = _code_text("\n".join(lines))
        sink.add(marks.fill('<span class="r">' + escaped.replace("\n", '</span>\n<span class="r">')
                            + "</span>\n", 0))
    sink.add("</div>")


# Diffs: what a line is, read as `git apply` reads a patch (the hunk header's counts say how many
# old and new lines follow), so a format-patch `---` before the diffstat, its `-- ` signature or a
# commit message line that starts with `-` is not taken for a removed line.
_HUNK_RE = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_FILE_START_RE = re.compile(r"diff |--- (?!-)")
_HEADER_RE = re.compile(
    r"(?:index |new file mode|deleted file mode|old mode|new mode|similarity index|"
    r"dissimilarity index|rename from|rename to|copy from|copy to|Binary files|GIT binary patch|"
    r"--- |\+\+\+ )")
_GIT_PATHS_RE = re.compile(r"diff --git (?:\"?a/)?(.*?) \"?b/(.*?)\"?$")


@dataclass
class _DiffRow:
    kind: str  # file, meta, hunk, add, del, ctx
    line: str
    number: int | None = None
    file: int = 0  # the file section (1-based) it belongs to; 0 before the first


def _code(row: _DiffRow) -> str:
    """A code row's text without its marker (`+`, `-`, the space of context), which the gutter
    shows; a line read as context outside a counted hunk keeps its first character."""
    if row.kind in ("add", "del") or (row.kind == "ctx" and row.number is not None):
        return row.line[1:]
    return row.line


def _file_name(rows: list[_DiffRow], start: int) -> str:
    """The path of the file whose header starts at rows[start]: the new path (`+++ b/x`, or
    the `diff --git` line's second one), the old one when the file was deleted."""
    header = rows[start].line
    new = old = ""
    for row in rows[start + 1:start + 8]:
        if row.kind not in ("meta",) or row.file != rows[start].file:
            break
        if row.line.startswith("+++ "):
            new = row.line[4:].split("\t")[0]
        elif row.line.startswith("--- "):
            old = row.line[4:].split("\t")[0]
    if header.startswith("--- "):
        old = header[4:].split("\t")[0]
    match = _GIT_PATHS_RE.match(header)
    if match and not new:
        new = "b/" + match.group(2)
    name = new if new and new != "/dev/null" else old
    return name[2:] if name[:2] in ("a/", "b/") else name


def _diff_rows(lines: list[str]) -> list[_DiffRow]:
    # A diff with headers (a `diff` line, a hunk header, a `---`/`+++` pair) is read by them;
    # one without, line by line by its first character, as the frame always read it.
    has_headers = any(line.startswith("diff ") or _HUNK_RE.match(line) or (
        line.startswith("--- ") and next_line.startswith("+++ "))
        for line, next_line in zip(lines, lines[1:] + [""], strict=False))
    rows: list[_DiffRow] = []
    file = 0
    old_left = new_left = 0
    old_no = new_no = 0
    combined = False  # `@@@` hunks have no usable counts: they run while lines look like hunk lines
    in_header = False
    for index, line in enumerate(lines):
        if old_left > 0 or new_left > 0 or combined:
            first = line[:1]
            if combined and first not in (" ", "+", "-", "\\"):
                combined = False
            elif first == "\\":
                rows.append(_DiffRow("meta", line, None, file))
                continue
            elif combined:
                rows.append(_DiffRow({"+": "add", "-": "del"}.get(first, "ctx"), line, None, file))
                continue
            elif first == "+" and new_left > 0:
                rows.append(_DiffRow("add", line, new_no, file))
                new_no, new_left = new_no + 1, new_left - 1
                continue
            elif first == "-" and old_left > 0:
                rows.append(_DiffRow("del", line, old_no, file))
                old_no, old_left = old_no + 1, old_left - 1
                continue
            elif first in (" ", "") and old_left > 0 and new_left > 0:
                rows.append(_DiffRow("ctx", line, new_no, file))
                old_no, new_no = old_no + 1, new_no + 1
                old_left, new_left = old_left - 1, new_left - 1
                continue
            else:  # the counts were wrong: the hunk ends here
                old_left = new_left = 0
        hunk = _HUNK_RE.match(line)
        if hunk:
            old_no, new_no = int(hunk.group(1)), int(hunk.group(3))
            old_left = 1 if hunk.group(2) is None else int(hunk.group(2))
            new_left = 1 if hunk.group(4) is None else int(hunk.group(4))
            rows.append(_DiffRow("hunk", line, None, file))
            in_header = False
            continue
        if line.startswith("@@@"):
            combined = True
            rows.append(_DiffRow("hunk", line, None, file))
            in_header = False
            continue
        starts_file = line.startswith("diff ") or (
            line.startswith("--- ") and not in_header and index + 1 < len(lines)
            and lines[index + 1].startswith("+++ "))
        if starts_file:
            file += 1
            rows.append(_DiffRow("file", line, None, file))
            in_header = True
            continue
        if in_header and _HEADER_RE.match(line):
            rows.append(_DiffRow("meta", line, None, file))
            continue
        in_header = False
        if line in ("---", "-- ") or (has_headers and file == 0):
            # A format-patch mail's subject, message, `---` separator and diffstat, its
            # signature: what the mail says about the patch, not lines of it.
            rows.append(_DiffRow("meta", line, None, file))
        elif line.startswith("@@"):
            rows.append(_DiffRow("hunk", line, None, file))
        elif line[:1] == "+":
            rows.append(_DiffRow("add", line, None, file))
        elif line[:1] == "-":
            rows.append(_DiffRow("del", line, None, file))
        else:
            rows.append(_DiffRow("ctx" if line[:1] == " " or not has_headers else "meta", line,
                                 None, file))
    return rows


def _diff_highlights(rows: list[_DiffRow], names: dict[int, str]) -> dict[int, str]:
    """HTML of the code rows whose file has a lexer, by row index: each hunk's new side (context
    and added lines) and old side (context and removed lines) lexed as texts of their own, so a
    string or comment spanning lines is coloured as in the file."""
    out: dict[int, str] = {}
    lexers: dict[int, object] = {}
    index = 0
    while index < len(rows):
        if rows[index].kind not in ("add", "del", "ctx"):
            index += 1
            continue
        end = index
        while end < len(rows) and rows[end].kind in ("add", "del", "ctx", "meta") and \
                rows[end].file == rows[index].file and not (
                    rows[end].kind == "meta" and not rows[end].line.startswith("\\")):
            end += 1
        file = rows[index].file
        if file not in lexers:
            lexers[file] = _lexer_for_filename(names.get(file, "")) if names.get(file) else None
        lexer = lexers[file]
        if lexer is not None:
            for side in ("add", "del"):
                picked = [i for i in range(index, end) if rows[i].kind in (side, "ctx")]
                lines = [_code(rows[i]) for i in picked]
                html = _highlight(lexer, lines)
                if html is not None:
                    for i, line_html in zip(picked, html, strict=True):
                        if rows[i].kind == side or side == "add":
                            out[i] = line_html
        index = end
    return out


def _diff_body(lines: list[str], marks: _Marks, sink: _Sink, *, highlight: bool) -> int:
    """A diff's rows into `sink`; returns how many rows (file list included)."""
    rows = _diff_rows(lines)
    starts = marks.starts(lines)
    files = [i for i, row in enumerate(rows) if row.kind == "file"]
    names = {rows[i].file: _file_name(rows, i) for i in files}
    highlighted = _diff_highlights(rows, names) if highlight else {}
    count = len(rows)
    if len(files) > 1:
        sink.add('<ol class="files">')
        for i in files:
            file = rows[i].file
            name = _code_text(names[file] or rows[i].line)
            # A name's marks are shown as their labels: the header below has them as marks.
            name = name.replace(_PLACE, "\u27e6\u2026\u27e7")
            # A link only where it can work: in the wrap view the frame scrolls itself; in the
            # rows view the page is sized to the whole frame and scrolls instead, and Chromium
            # lets no fragment link in a sandboxed (opaque-origin) frame scroll its page.
            sink.add(f'<li class="r"><span class="in-rows">{name}</span>'
                     f'<a class="in-wrap" href="#w{file}">{name}</a></li>\n')
        sink.add("</ol>")
        count += len(files)
    sink.add(f'<div class="rows diff{_gutter_class(max((len(lines) + 1), 1))}">')
    open_file = False
    for i, (row, start) in enumerate(zip(rows, starts, strict=True)):
        if row.kind == "file":
            if open_file:
                sink.add("</details>")
            sink.add(f'<i class="wrap-at" id="w{row.file}"></i><details open id="f{row.file}">'
                     f'<summary class="r file">{marks.fill(_code_text(row.line), start)}</summary>\n')
            open_file = True
            continue
        if row.kind in ("add", "del", "ctx"):
            # The marker is in the gutter (CSS, from the row's kind), so the code cell is the line
            # without it, coloured when its file's language is known.
            code = _code(row)
            body = marks.fill(highlighted[i] if i in highlighted else _code_text(code), start)
        else:
            body = marks.fill(_code_text(row.line), start)
        sink.add(_row(body, row.kind, row.number))
    if open_file:
        sink.add("</details>")
    sink.add("</div>")
    return count


def _rows_frame(notes: list[str], inner: str) -> str:
    return ('<div class="frame rowsframe"><i id="wrap"></i>' + "".join(_note_row(n) for n in notes)
            + inner + "</div>")


def _budget_of(normalised: Normalised) -> int:
    return (FRAME_SIZE_FACTOR * source_size(normalised) + FRAME_SIZE_ALLOWANCE
            - len(frame_document("")))


def _plain_frame(text: str, marks: list[str], notes: list[str]) -> FrameBody:
    """Past the rows' budget: one preformatted block (each line FRAME_LINE_PX high all the same),
    without line numbers."""
    # HTML drops a newline right after `<pre>`, so a leading empty line is not shown there.
    lines = len(_lines(text)) - (1 if text.startswith("\n") else 0)
    block = '<pre class="text">' + _Marks(marks).fill(_code_text(text), 0) + "</pre>"
    return FrameBody(_rows_frame(notes, block), len(notes) + lines)


def _highlight_fence(content: str, language: str, _attributes) -> str:
    """A fenced block's code coloured by the lexer its info string names ("" when none is known:
    markdown-it then escapes it as usual). The marks' placeholders (`\ue000N\ue001`) become one
    character each while it is lexed, so no token splits one, and are written back in order."""
    lexer = _lexer_by_name(language)
    if lexer is None or len(content) > HIGHLIGHT_MAX_CHARACTERS:
        return ""
    numbers = _PLACEHOLDER.findall(content)
    lines = _PLACEHOLDER.sub(_PLACE, content).split("\n")
    if lines[-1] == "":
        lines.pop()
    html = _highlight(lexer, lines)
    if html is None:
        return ""
    number = iter(numbers)
    return _PLACE_RE.sub(lambda _: f"\ue000{next(number)}\ue001", "\n".join(html) + "\n")


def _frame_rows(normalised: Normalised, fmt: str, notes: list[str], budget: int) -> FrameBody:
    """A text or diff copy (or markdown shown as text) as rows: highlighted when small enough,
    plain past that, one block past the frame's size bound."""
    text, mark_list = _placeheld(normalised)
    lines = _lines(text)
    is_diff = fmt == "diff"
    highlight = is_diff and len(text) <= HIGHLIGHT_MAX_CHARACTERS and len(lines) <= HIGHLIGHT_MAX_LINES
    if is_diff and not highlight:
        notes = [*notes, "This diff is long, so it is shown without syntax highlighting."]
    too_large = ("This copy would be too large with line numbers, so it is shown as plain text "
                 "without them.")
    attempts = [True, False] if highlight else [False]
    # Every row costs at least _ROW_BYTES of markup, besides the text and its marks: past the
    # bound even so (a copy of very short lines, or of marks shown as codes), the rows are never
    # built (2.6 million of them took seconds).
    least = len(text.encode("utf-8")) + sum(map(len, mark_list)) + _ROW_BYTES * len(lines)
    if least > budget:
        attempts = []
    for highlighted in attempts:
        sink = _Sink(budget)
        try:
            sink.add('<div class="frame rowsframe"><i id="wrap"></i>')
            for note in notes:
                sink.add(_note_row(note))
            if is_diff:
                count = _diff_body(lines, _Marks(mark_list), sink, highlight=highlighted)
            else:
                _text_rows(lines, _Marks(mark_list), sink)
                count = len(lines)
            sink.add("</div>")
        except _Budget:
            if highlighted:
                notes = [*notes, "This diff would be too large highlighted, so it is shown "
                         "without syntax highlighting."]
            continue
        html = sink.html()
        if len(html.encode("utf-8")) <= budget:
            return FrameBody(html, len(notes) + count)
    return _plain_frame(text, mark_list,
                        [n for n in notes if "highlighting" not in n] + [too_large])


def _markdown_frame(normalised: Normalised, notes: list[str], budget: int) -> FrameBody:
    """Rendered markdown (wrapping prose), and the same normalised text as numbered rows, shown
    instead when the fragment is #text: code written outside fences reads as it was written."""
    if sum(len(s.text) for s in normalised.segments) > MARKDOWN_RENDER_LIMIT:
        return _frame_rows(normalised, "text", [
            *notes, "This markdown copy is long, so it is shown as plain text."], budget)
    try:
        rendered, tokens, shown = _markdown_rendered(normalised)
    except _TooMuch as too_much:
        return _frame_rows(normalised, "text", [*notes, str(too_much)], budget)
    text, mark_list = _placeheld(normalised)
    lines = _lines(text)
    head = "".join(_note(n) for n in notes)
    sink = _Sink(budget - len(rendered) - len(head))
    try:
        sink.add('<div class="frame plain">' + "".join(_note_row(n) for n in notes))
        _text_rows(lines, _Marks(mark_list), sink)
        sink.add("</div>")
    except _Budget:
        return _frame_rows(normalised, "text", [
            *notes, "This markdown copy would be too large rendered, so it is shown as plain "
            "text."], budget)
    html = ('<div class="mdframe"><i id="text"></i>' + head + rendered + "</div>" + sink.html())
    if len(html.encode("utf-8")) > budget:
        return _frame_rows(normalised, "text", [
            *notes, "This markdown copy would be too large rendered, so it is shown as plain "
            "text."], budget)
    return FrameBody(html, len(notes) + len(lines), prose=True,
                     prose_heights=prose_heights(tokens, shown, notes))


def frame_body(normalised: Normalised, fmt: str, *, notes: tuple[str, ...] = ()) -> FrameBody:
    """A copy's body for its frame, with the rows its non-wrapping view has (see FrameBody).
    Text and diffs are numbered rows (a diff's with a file list, a collapsible section per file
    and its code highlighted); markdown is rendered, with a plain-text view. Past the markdown
    limits, past the highlighting sizes or past the frame's size bound, something plainer with
    a note saying so; and a note when the copy has more marks than its budget. `notes`: the
    caller's own, shown first (an opening's "shown as plain text" when rendering took too long)."""
    notes = [*notes, *([_unhighlighted_note(normalised)] if normalised.unhighlighted else [])]
    budget = _budget_of(normalised)
    if fmt == "markdown":
        return _markdown_frame(normalised, notes, budget)
    return _frame_rows(normalised, "diff" if fmt == "diff" else "text", notes, budget)


def copy_html(normalised: Normalised, fmt: str) -> str:
    """A copy's body for its frame (frame_body's HTML)."""
    return frame_body(normalised, fmt).html


# A frame is a document of its own to assistive technology (and to axe-core, run on the frame's
# page): it has a title, a main landmark and a level-one heading, the heading for screen readers
# only (it takes no row).
FRAME_TITLE = "The copy"


#
# Its main element takes focus (tabindex 0): nothing else in a frame may (no links, no controls),
# and Chromium leaves a frame with nothing focusable out of the Tab order, so a copy in a box of its
# own could not be scrolled by keyboard at all (issue 24). Focused, Space, the arrows, Home and End
# scroll the frame.
def frame_document(body_html: str) -> str:
    return ('<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f"<title>{FRAME_TITLE}</title><style>{FRAME_STYLE}</style></head>"
            f'<body><main tabindex="0"><h1 class="visually-hidden">{FRAME_TITLE}</h1>{body_html}'
            "</main></body></html>")
