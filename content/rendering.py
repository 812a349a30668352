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

import bleach
from markdown_it import MarkdownIt

from content.normalise import Normalised, Segment

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


def mark_html(segment: Segment) -> str:
    kind = segment.kind
    text = escape(segment.text)
    if kind in ("bidi", "invisible"):
        text = f"\u27e6{text}\u27e7"
    return (f'<span class="mark {_MARK_CLASS[kind]}" title="{_MARK_TITLE[kind]}">{text}</span>')


def inline_html(normalised: Normalised) -> str:
    """Escaped HTML of normalised text with its marks, for text shown in the judge's own page."""
    return "".join(escape(s.text) if s.kind == "text" else mark_html(s)
                   for s in normalised.segments)


def _lines(normalised: Normalised) -> list[tuple[str, str]]:
    """(plain text, html) per line; marks never contain a newline."""
    lines: list[tuple[list[str], list[str]]] = [([], [])]
    for segment in normalised.segments:
        if segment.kind != "text":
            lines[-1][0].append(segment.text)
            lines[-1][1].append(mark_html(segment))
            continue
        parts = segment.text.split("\n")
        for index, part in enumerate(parts):
            if index:
                lines.append(([], []))
            lines[-1][0].append(part)
            lines[-1][1].append(escape(part))
    return [("".join(plain), "".join(html)) for plain, html in lines]


def _diff_class(line: str) -> str:
    if line.startswith(("+++ ", "--- ", "diff ", "index ")):
        return "meta"
    if line.startswith("@@"):
        return "hunk"
    if line.startswith("+"):
        return "add"
    if line.startswith("-"):
        return "del"
    return "ctx"


def text_html(normalised: Normalised) -> str:
    return '<pre class="text">' + "\n".join(html for _, html in _lines(normalised)) + "</pre>"


def diff_html(normalised: Normalised) -> str:
    rows = [f'<span class="line {_diff_class(plain)}">{html}</span>'
            for plain, html in _lines(normalised)]
    return '<pre class="diff">' + "".join(rows) + "</pre>"


# --- Markdown ------------------------------------------------------------------------------------

ALLOWED_TAGS = {
    "p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote", "pre", "code", "em",
    "strong", "hr", "br", "table", "thead", "tbody", "tr", "th", "td", "span", "s", "del",
}


def sanitise_html(html: str) -> str:
    """The one place HTML from model output is sanitised: a strict allowlist, no attributes but
    our own two span classes (nothing that loads, links or styles). bleach is end-of-life
    upstream; swap this function's body for its successor and every caller follows."""
    return bleach.clean(html, tags=ALLOWED_TAGS, attributes={"span": _renderer_span_class},
                        protocols=[], strip=True, strip_comments=True)


def _renderer_span_class(tag, name, value):
    # Raw HTML in markdown is escaped, never parsed, so only our renderer makes spans; still,
    # the only attribute that survives is one of our two classes.
    return name == "class" and value in ("link", "url")


def _inert_link_open(self, tokens, idx, options, env):
    return '<span class="link">'


def _inert_link_close(self, tokens, idx, options, env):
    # Find the matching opening token to show where the link pointed, as text.
    depth = 0
    for token in reversed(tokens[:idx]):
        if token.type == "link_close":
            depth += 1
        elif token.type == "link_open":
            if depth == 0:
                href = escape(token.attrGet("href") or "")
                return f'</span> <span class="url">\u27e8{href}\u27e9</span>'
            depth -= 1
    return "</span>"


def _inert_image(self, tokens, idx, options, env):
    token = tokens[idx]
    alt = "".join(child.content for child in token.children or [])
    return (f'<span class="url">[image: {escape(alt)} \u27e8'
            f'{escape(token.attrGet("src") or "")}\u27e9]</span>')


def _markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")
    md.add_render_rule("link_open", _inert_link_open)
    md.add_render_rule("link_close", _inert_link_close)
    md.add_render_rule("image", _inert_image)
    return md


_MD = _markdown()
_PLACEHOLDER = re.compile("\ue000(\\d+)\ue001")
_OWN_PLACEHOLDER_CHARS = re.compile("[\ue000\ue001]")


def markdown_html(normalised: Normalised) -> str:
    """Markdown rendered with links and images turned into inert text, sanitised, and the
    normaliser's marks put back where they were (placeholders survive rendering as text)."""
    marks: list[str] = []
    source: list[str] = []
    for segment in normalised.segments:
        if segment.kind == "text":
            # Our placeholder characters in the copy itself become marks too, never placeholders.
            def own_char(match):
                marks.append(mark_html(Segment("invisible", f"U+{ord(match.group()):04X}")))
                return f"\ue000{len(marks) - 1}\ue001"

            source.append(_OWN_PLACEHOLDER_CHARS.sub(own_char, segment.text))
        else:
            marks.append(mark_html(segment))
            source.append(f"\ue000{len(marks) - 1}\ue001")
    html = sanitise_html(_MD.render("".join(source)))
    return '<div class="md">' + _PLACEHOLDER.sub(lambda m: marks[int(m.group(1))], html) + "</div>"


# Markdown parsing and sanitising slow down faster than linearly on hostile input (one long
# paragraph of links, text full of `<`); past this many characters a copy is shown as text.
MARKDOWN_RENDER_LIMIT = 100_000


def copy_html(normalised: Normalised, fmt: str) -> str:
    if fmt == "markdown" and sum(len(s.text) for s in normalised.segments) > MARKDOWN_RENDER_LIMIT:
        return ('<p class="note">This markdown copy is long, so it is shown as plain text.</p>'
                + text_html(normalised))
    return {"markdown": markdown_html, "diff": diff_html}.get(fmt, text_html)(normalised)


def frame_document(body_html: str) -> str:
    return ('<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f"<style>{FRAME_STYLE}</style></head><body>{body_html}</body></html>")
