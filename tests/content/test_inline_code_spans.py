"""A finding's text and a review's reason are shown in the judge's own page as escaped text; their
code spans (`x`, as markdown writes them) are shown as code, not as raw backticks (issue 24 item 6),
and nothing else in them is parsed."""

import pytest

from content.normalise import normalise
from content.rendering import inline_html

pytestmark = pytest.mark.pure


def inline(text: str, patterns=()) -> str:
    return inline_html(normalise(text, "text", list(patterns)))


@pytest.mark.parametrize("text, html", [
    ("calls `eval()` on input", "calls <code>eval()</code> on input"),
    ("`a` and `b`", "<code>a</code> and <code>b</code>"),
    ("``x ` y`` stays whole", "<code>x ` y</code> stays whole"),
    ("`<script>alert(1)</script>`", "<code>&lt;script&gt;alert(1)&lt;/script&gt;</code>"),
    ("an odd ` backtick", "an odd ` backtick"),
    ("``` fence-like ```", "<code> fence-like </code>"),
    ("no code *here* or <b>here</b>", "no code *here* or &lt;b&gt;here&lt;/b&gt;"),
    ("``unmatched` runs", "``unmatched` runs"),
])
def test_code_spans_are_code_and_everything_else_is_text(text, html):
    assert inline(text) == html


def test_a_redaction_inside_a_code_span_is_still_made():
    html = inline("it imports `openai` here", patterns=["openai"])
    assert "openai" not in html and "[redacted]" in html
