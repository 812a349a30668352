"""Rendering costs what its input costs (issue 12, item 1): runs of marks are one segment, the
frame's size is bounded by its copy's, the link pass is one sweep, markdown past sane structure
limits is shown as text with a note, the sanitiser keeps its allowlist, and no host pattern can
stall. No timings here: work is counted, sizes are measured, a stall is caught by a watchdog."""

import subprocess
import sys
import textwrap

import pytest

from content.normalise import PatternError, Segment, compile_patterns, mark_budget, normalise
from content.rendering import (
    _MD,
    FRAME_SIZE_ALLOWANCE,
    FRAME_SIZE_FACTOR,
    MARKDOWN_MAX_LINES,
    MARKDOWN_MAX_LINKS,
    copy_html,
    frame_document,
    inline_html,
    sanitise_html,
)

# No database, no socket, no process: run once (tests/support/pure.py).
pytestmark = pytest.mark.pure

MEGABYTE = 1024 * 1024
BIDI_CYCLE = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f"


def frame(text: str, fmt: str) -> bytes:
    return frame_document(copy_html(normalise(text, fmt, []), fmt)).encode("utf-8")


def test_a_run_of_one_mark_is_one_segment_that_counts_its_characters():
    result = normalise("a" + "\u200b" * 1_000_000 + "b", "text", [])

    assert result.segments == (Segment("text", "a"), Segment("invisible", "U+200B", 1_000_000),
                               Segment("text", "b"))
    assert result.invisible == 1_000_000
    assert result.plain() == "a⟦U+200B⟧ × 1,000,000b"
    assert "⟦U+200B⟧ × 1,000,000" in inline_html(result)
    assert result.segments[1].characters() == "\u200b" * 1_000_000


def test_runs_of_bidi_controls_mixed_script_tokens_and_redactions_are_one_mark_each():
    result = normalise("x\u202e\u2066\u2066\u2069y p\u0430ypal p\u0430ypal\tp\u0430ypal. GPTGPT",
                       "text", ["re:gpt"])

    assert result.segments == (
        Segment("text", "x"), Segment("bidi", "U+202E U+2066 × 2 U+2069", 4),
        Segment("text", "y "), Segment("mixed_script", "p\u0430ypal p\u0430ypal\tp\u0430ypal", 3),
        Segment("text", ". "), Segment("redacted", "[redacted]", 2),
    )
    assert (result.bidi, result.mixed_script, result.redactions) == (4, 3, 2)
    assert result.segments[1].characters() == "\u202e\u2066\u2066\u2069"
    assert result.plain().endswith("[redacted] × 2")


WORST = {
    "zero-width spaces": "\u200b" * (MEGABYTE // 3),
    "bidi controls, cycling": BIDI_CYCLE * (MEGABYTE // 3 // len(BIDI_CYCLE)),
    "mixed-script tokens": ("p\u0430ypal " * 10 + "\n") * (MEGABYTE // 81),
    "quotes": '"' * MEGABYTE,
    "zero-width spaces between letters": "a\u200b" * (MEGABYTE // 4),
    "soft hyphens between letters": "a\u00ad" * (MEGABYTE // 3),
    "bidi and invisible characters alternating": "\u202e\u200b" * (MEGABYTE // 6),
    "a diff of alternating one-character lines": "+\n-\n" * (MEGABYTE // 4),
    "a diff of blank lines": "@@ -1,1 +1,400000 @@\n" + "+\n" * 400_000,
    "empty blockquotes": ">\n\n" * 30_000,
    "links": "[a](b) " * 14_000,
    "a table": "|a|\n|-|\n" + "|x|\n" * 24_000,
    # What HTML must escape in text, repeated: only `&` before a letter, digit or `#` and `<`
    # before a letter, `!`, `/`, `?` or a space are escaped, so the worst is `&a` (6 bytes for 2).
    "ampersands": "&" * MEGABYTE,
    "less-than signs": "<" * MEGABYTE,
    "ampersands before letters": "&a" * (MEGABYTE // 2),
    "less-than signs before letters": "<a" * (MEGABYTE // 2),
    "ampersands before hashes": "&#" * (MEGABYTE // 2),
    "less-than signs before bangs": "<!" * (MEGABYTE // 2),
    "less-than signs before slashes and question marks": "</<?" * (MEGABYTE // 4),
    "less-than signs before spaces": "< " * (MEGABYTE // 2),
    "ampersands and less-than signs mixed": "&<a&#<!&&<<>\"" * (MEGABYTE // 12),
    "ampersands and less-than signs, one a line": "&a\n<a\n" * (MEGABYTE // 6),
}


@pytest.mark.parametrize("name", WORST)
@pytest.mark.parametrize("fmt", ["text", "markdown", "diff"])
def test_a_frame_is_at_most_four_times_its_copy_plus_64_kb(name, fmt):
    text = WORST[name]
    size = len(text.encode("utf-8"))

    assert len(frame(text, fmt)) <= FRAME_SIZE_FACTOR * size + FRAME_SIZE_ALLOWANCE
    assert FRAME_SIZE_FACTOR * size + FRAME_SIZE_ALLOWANCE == 4 * size + 65_536


def test_marks_past_the_budget_are_one_segment_shown_as_short_codes_and_still_counted():
    text = "a\u200b" * 100_000 + "p\u0430ypal x " * 10 + "\u202e"
    result = normalise(text, "text", [])

    assert (result.invisible, result.bidi, result.mixed_script) == (100_000, 1, 10)
    assert len(result.segments) < 2 * mark_budget(len(text.encode("utf-8"))) + 2
    assert result.segments[-1].kind == "unhighlighted"
    assert result.unhighlighted == result.segments[-1].count > 90_000
    # plain() writes every mark as it always did, budget or not.
    assert result.plain() == "a⟦U+200B⟧" * 100_000 + "⟦mixed-script:p\u0430ypal⟧ x " * 10 + "⟦U+202E⟧"
    html = copy_html(result, "text")
    assert html.startswith('<div class="frame rowsframe"><i id="wrap"></i>'
                           '<p class="note r">This copy holds more hidden characters')
    assert "a\u27e6200B\u27e7" in html and "\u200b" not in html and "\u202e" not in html
    assert "\u202e" not in inline_html(result) and "\u200b" not in inline_html(result)
    assert "\u200b" not in copy_html(result, "markdown") and "\u200b" not in copy_html(result, "diff")


def test_redactions_past_the_budget_stay_where_they_were():
    text = "GPT " + "a\u200b" * 2_000 + " GPT x GPT GPT"
    result = normalise(text, "text", ["re:gpt"])

    assert result.redactions == 4 and result.invisible == 2_000
    assert result.plain() == "[redacted] " + "a⟦U+200B⟧" * 2_000 + " [redacted] x [redacted] [redacted]"
    assert copy_html(result, "text").endswith(" [redacted] x [redacted] [redacted]</pre></div>")


class CountingList(list):
    """A token list that counts every element read from it, however it is read."""

    reads = 0

    def __getitem__(self, index):
        item = super().__getitem__(index)
        CountingList.reads += len(item) if isinstance(index, slice) else 1
        return item

    def __iter__(self):
        for item in super().__iter__():
            CountingList.reads += 1
            yield item

    def __reversed__(self):
        for item in super().__reversed__():
            CountingList.reads += 1
            yield item


@pytest.mark.parametrize("links", [100, 2000])
def test_the_link_pass_reads_each_token_a_bounded_number_of_times(links):
    env: dict = {}
    tokens = _MD.parse("[a](http://x.example/) " * links, env)
    for token in tokens:
        if token.children:
            token.children = CountingList(token.children)
    children = sum(len(t.children or ()) for t in tokens)
    CountingList.reads = 0

    html = _MD.renderer.render(tokens, _MD.options, env)

    assert html.count('<span class="url">\u27e8http://x.example/\u27e9</span>') == links
    assert CountingList.reads <= 4 * children  # the old pass read ~links²/2 tokens


@pytest.mark.parametrize(("text", "note"), [
    ("|a|b|c|d|e|f|g|h|i|j|\n" + "|-" * 10 + "|\n" + "|x|y|z|x|y|z|x|y|z|x|\n" * 600,
     "6,010 table cells (more than 5,000)"),
    ("|a|\n|-|\n" + "|x|\n" * MARKDOWN_MAX_LINES, "5,003 lines (more than 5,000)"),
    ("- x\n" * (MARKDOWN_MAX_LINES + 1), "lines (more than 5,000)"),
    ("[a](b) " * (MARKDOWN_MAX_LINKS + 1), "1,001 links and images (more than 1,000)"),
    ("![a](b) " * (MARKDOWN_MAX_LINKS + 1), "1,001 links and images (more than 1,000)"),
    ("[a][r] " * (MARKDOWN_MAX_LINKS + 1) + "\n\n[r]: http://x.example/\n",
     "1,001 links and images (more than 1,000)"),
    (">" * 25 + " the deep text\n", "nests 16 levels deep or more"),
    ("".join("  " * i + f"- item{i}\n" for i in range(25)) + "\nthe deep text\n",
     "nests 16 levels deep or more"),
])
def test_markdown_past_a_structure_limit_is_shown_as_text_with_a_note(text, note):
    html = copy_html(normalise(text, "markdown", []), "markdown")

    assert html.startswith('<div class="frame rowsframe"><i id="wrap"></i>'
                           '<p class="note r">This markdown copy ')
    assert note in html
    # The text form: numbered rows, and no rendered view beside them.
    assert '<div class="rows text">' in html and 'class="md"' not in html
    assert "<table>" not in html and "<blockquote>" not in html
    # Nothing is lost: the text form holds every character (markdown-it drops what nests deeper
    # than its limit; the judge saw none of it).
    assert "the deep text" in html or "deep" not in text


def test_markdown_within_the_limits_is_rendered():
    text = ("|a|\n|-|\n" + "|x|\n" * 100 + "\n" + "[a](b) " * 100 + "\n\n" + "> " * 10 + "q\n")
    html = copy_html(normalise(text, "markdown", []), "markdown")

    assert html.startswith('<div class="mdframe"><i id="text"></i><div class="md">')
    assert "<table>" in html and "<blockquote>" in html


@pytest.mark.parametrize(("dirty", "clean"), [
    ('<p title="x" lang="en" id="y" data-x="1" style="color:red">a</p>', "<p>a</p>"),
    ('<span class="link">a</span><span class="url">b</span>',
     '<span class="link">a</span><span class="url">b</span>'),
    ('<span class="evil">c</span><span class="link x">d</span>', "<span>c</span><span>d</span>"),
    ("<script>alert(1)</script><style>p{}</style>", "alert(1)p{}"),
    ("<!-- hidden -->shown", "shown"),
    ('<a href="javascript:x">e</a><img src="x" onerror="y">', "e"),
    ("<table><tr><td onclick='x'>c</td></tr></table>",
     "<table><tbody><tr><td>c</td></tr></tbody></table>"),
    ("&lt;b&gt; &amp;", "&lt;b&gt; &amp;"),
])
def test_the_sanitiser_keeps_the_allowlist(dirty, clean):
    assert sanitise_html(dirty) == clean


@pytest.mark.pure(False)  # runs the regex in a process it can stop
def test_a_catastrophic_host_regex_returns_promptly():
    """Under Python's `re`, `(a+)+$` against 40 a's and a b backtracks about 2^40 times (hours).
    A watchdog, not a timing: the subprocess gets 20 s, so a regression fails instead of hanging."""
    code = textwrap.dedent("""
        from content.normalise import normalise
        result = normalise("a" * 40 + "b " + "a" * 5, "text", ["re:(a+)+$", "re:(x+x+)+y"])
        print(result.plain())
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=20,
                          check=True)
    assert done.stdout == "a" * 40 + "b [redacted]\n"


@pytest.mark.parametrize("pattern", ["re:(a)\\1", "re:(?<=a)b", "re:x(?!y)", "re:a\\Z"])
def test_a_regex_that_needs_backtracking_is_refused_with_a_message_naming_it(pattern):
    with pytest.raises(PatternError) as refused:
        compile_patterns([pattern])

    message = str(refused.value)
    assert message.startswith(f"pattern {pattern!r}: the linear-time regex engine refuses it")
    assert "Lookarounds, backreferences" in message
