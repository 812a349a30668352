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
from html import escape

import nh3
from markdown_it import MarkdownIt

from content.normalise import PLAIN_LABELS, Normalised, Segment

FRAME_STYLE = """
body { margin: 0; padding: 0.75rem; font: 15px/1.5 system-ui, sans-serif; color: #1b1f24;
       background: #fff; overflow-wrap: anywhere; }
pre, code { font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, monospace; }
pre { white-space: pre-wrap; margin: 0; }
.md pre { background: #f6f8fa; padding: 0.5rem; }
.line { display: block; min-height: 1.45em; }
.add { background: #e6ffec; } .del { background: #ffebe9; }
.hunk { background: #ddf4ff; color: #0550ae; } .meta { color: #57606a; font-weight: 600; }
.mark { border-radius: 3px; padding: 0 2px; font: 12px ui-monospace, monospace; }
.redacted { background: #1b1f24; color: #fff; }
.bidi, .invisible { background: #fff8c5; color: #7a4d00; outline: 1px dashed #bf8700; }
.mixed { background: #fbefff; outline: 1px dashed #8250df; }
.link { text-decoration: underline dotted; } .url { color: #57606a; }
table { border-collapse: collapse; } th, td { border: 1px solid #d0d7de; padding: 2px 6px; }
.note { margin: 0 0 0.5rem; color: #57606a; font-style: italic; }
""".strip()



def style_source_hash(style: str) -> str:
    """The CSP source ('sha256-…', without quotes) that allows exactly this one <style> block."""
    return "sha256-" + base64.b64encode(hashlib.sha256(style.encode("utf-8")).digest()).decode("ascii")


FRAME_STYLE_HASH = style_source_hash(FRAME_STYLE)

FRAME_CSP = (
    f"sandbox; default-src 'none'; style-src '{FRAME_STYLE_HASH}'; frame-ancestors 'self'; "
    "base-uri 'none'; form-action 'none'"
)

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


def inline_html(normalised: Normalised) -> str:
    """Escaped HTML of normalised text with its marks, for text shown in the judge's own page."""
    return "".join(escape(s.text) if s.kind == "text"
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
    tag_attribute_values={"span": {"class": {"link", "url"}}},
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
    md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")
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
    marks: list[str] = []
    source: list[str] = []

    def own_char(match):
        # Our placeholder characters in the copy itself become marks too, never placeholders.
        marks.append(mark_html(Segment("invisible", f"U+{ord(match.group()):04X}")))
        return f"\ue000{len(marks) - 1}\ue001"

    for segment in normalised.segments:
        if segment.kind == "text":
            source.append(_OWN_PLACEHOLDER_CHARS.sub(own_char, segment.text))
        elif segment.kind == "unhighlighted":
            source.append(_OWN_PLACEHOLDER_CHARS.sub(own_char, _unhighlighted(segment.text)))
        else:
            marks.append(mark_html(segment))
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
    return '<div class="md">' + _PLACEHOLDER.sub(lambda m: marks[int(m.group(1))], html) + "</div>"


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


def _copy_body(normalised: Normalised, fmt: str) -> str:
    """A copy's body for its frame: markdown rendered, a diff coloured, text as it is; a copy
    past the markdown limits, or whose rendering would be past the frame's size bound, is shown
    as text with a note."""
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


def copy_html(normalised: Normalised, fmt: str) -> str:
    """A copy's body for its frame: markdown rendered, a diff coloured, text as it is; a copy
    past the markdown limits, or whose rendering would be past the frame's size bound, is shown
    as text with a note, and so is a copy with more marks than its budget."""
    body = _copy_body(normalised, fmt)
    if normalised.unhighlighted:
        body = _note(
            f"This copy holds more hidden characters, mixed-script tokens or redactions than can "
            f"be highlighted: the last {normalised.unhighlighted:,} are shown as plain text, a "
            "hidden character as its code in brackets (\u27e6200B\u27e7).") + body
    return body


def frame_document(body_html: str) -> str:
    return ('<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f"<style>{FRAME_STYLE}</style></head><body>{body_html}</body></html>")
