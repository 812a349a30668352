"""A copy's text in its frame is text, whatever it holds (issue 12, item 1): the frame escapes only
the `&` and `<` that HTML would read as markup (content.rendering._text), so a copy of `&`s costs
what it weighs and still cannot make an element, an attribute or a character reference. The frame
is parsed by Python's html.parser, which reads `<` and `&` in text as the HTML tokenizer does
(markup only before a letter, `!`, `/`, `?`; a reference only before a letter, digit or `#`);
tests/e2e/test_judging_in_chromium.py checks the same frames in Chromium."""

import re
from html.parser import HTMLParser

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from content.normalise import normalise
from content.rendering import copy_html, frame_document

# No database, no socket, no process: run once (tests/support/pure.py).
pytestmark = pytest.mark.pure

MARK_KINDS = ("redacted", "bidi", "invisible", "mixed_script")


class Inventory(HTMLParser):
    """Every element and attribute of a document, and its text (references resolved)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.attributes, self.others, self.text = [], [], [], []
        self._style = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes += [(tag, name, value) for name, value in attrs]
        # Not the copy's text: the style block, and the frame's title and its screen-reader heading.
        self._style = tag in ("style", "title") or ("class", "visually-hidden") in attrs
        # A diff row's marker is drawn in its gutter (CSS, from the row's kind): read it there.
        found = dict(attrs)
        kinds = (found.get("class") or "").split()
        if tag == "span" and "r" in kinds:
            if "add" in kinds:
                self.text.append("+")
            elif "del" in kinds:
                self.text.append("-")
            elif "ctx" in kinds and "data-n" in found:
                self.text.append(" ")

    def handle_endtag(self, tag):
        self._style = False

    def handle_data(self, data):
        if not self._style:
            self.text.append(data)

    def handle_comment(self, data):
        self.others.append(("comment", data))

    def handle_decl(self, decl):
        self.others.append(("declaration", decl))

    def handle_pi(self, data):
        self.others.append(("processing instruction", data))

    def unknown_decl(self, data):
        self.others.append(("declaration", data))


def inventory(html: str) -> Inventory:
    parser = Inventory()
    parser.feed(html)
    parser.close()
    return parser


# Text that is mostly what HTML could take for markup, with a few marked characters (a zero-width
# space, a bidi control) and ordinary ones between.
MARKUPISH = st.lists(
    st.one_of(st.sampled_from(list("&<>#!/?;'\"=xX0a-+@ \n\u200b\u202e")),
              st.sampled_from(["&amp;", "&lt;", "&#60;", "&#x3c;", "<b>", "</pre>", "<!--", "-->",
                               "<?x", "<![CDATA[", "&amp", "&lt", "<script>", "< / b >", "<\tb",
                               "<span title='", "\n+++ a\n", "\n@@ "]),
              st.characters(codec="utf-8", exclude_categories=("Cs",))),
    max_size=40).map("".join)


def shown(text: str, fmt: str) -> str:
    """What the judge must read: the copy's text, each mark as its visible label."""
    return "".join(s.shown() if s.kind in MARK_KINDS else s.text
                   for s in normalise(text, fmt, []).segments)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=MARKUPISH, fmt=st.sampled_from(["text", "diff"]))
@example(text="&a&#60;&lt;<a<!--<?x</pre><b title='x'>", fmt="text")
@example(text="&\u200b<\u200ba&", fmt="diff")
@example(text="<\n+<a\n-&#\n@@ &x", fmt="diff")
@example(text="<\x85A", fmt="text")  # U+0085 is whitespace to a lenient (Unicode) reader
@example(text="\ue000", fmt="text")  # the rows' own placeholder character, in the copy itself
def test_a_text_or_diff_copy_makes_no_markup_and_reads_as_itself(text, fmt):
    body = copy_html(normalise(text, fmt, []), fmt)
    parsed = inventory(frame_document(body))
    # Nor does a lenient reader find a tag: every `<` that could start one starts one of ours.
    own = {"div", "i", "span", "p", "pre", "details", "summary", "ol", "li", "a"}
    assert set(re.findall(r"<\s*/?\s*([A-Za-z][\w:-]*)", body)) <= own

    assert parsed.others == [("declaration", "doctype html")]
    assert set(parsed.tags) <= {"html", "head", "meta", "title", "style", "body", "main", "h1"} | own
    assert parsed.tags.count("style") == 1
    assert {(tag, name) for tag, name, _ in parsed.attributes} <= {
        ("html", "lang"), ("meta", "charset"), ("pre", "class"), ("span", "class"),
        ("span", "title"), ("p", "class"), ("div", "class"), ("i", "id"), ("i", "class"),
        ("span", "data-n"), ("details", "open"), ("details", "id"), ("summary", "class"),
        ("h1", "class"),
        ("ol", "class"), ("li", "class"), ("a", "class"), ("a", "href"), ("main", "tabindex")}
    assert all(re.fullmatch(r"#w[0-9]+", value) for _, name, value in parsed.attributes
               if name == "href")
    assert [value for _, name, value in parsed.attributes if name == "tabindex"] == ["0"]
    marks = sum(1 for s in normalise(text, fmt, []).segments if s.kind in MARK_KINDS)
    assert sum(1 for tag, name, value in parsed.attributes if name == "title") <= marks
    notes = sum(1 for tag in parsed.tags if tag == "p")
    files = [index for index, tag in enumerate(parsed.tags) if tag == "li"]
    assert not files  # (a file list needs two `diff` headers; MARKUPISH makes none)
    read = "".join(parsed.text[notes:])
    # One row a line, each followed by a newline (between rows it is only whitespace to CSS).
    assert read.removesuffix("\n") == shown(text, fmt).removesuffix("\n")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=MARKUPISH)
def test_a_markdown_copy_makes_only_the_renderers_markup(text):
    parsed = inventory(frame_document(copy_html(normalise(text, "markdown", []), "markdown")))

    assert parsed.others == [("declaration", "doctype html")]
    assert {name for _, name, _ in parsed.attributes} <= {"lang", "charset", "class", "title", "id",
                                                          "tabindex"}
    # The one tabindex: the frame's main element, which takes focus so the keyboard scrolls the
    # copy (issue 24).
    assert [(tag, value) for tag, name, value in parsed.attributes if name == "tabindex"] == [
        ("main", "0")]
    # The one id: the plain-text view's anchor (#text), or #wrap when shown as text rows.
    assert {(tag, value) for tag, name, value in parsed.attributes if name == "id"} <= {
        ("i", "text"), ("i", "wrap")}
    assert "script" not in parsed.tags and parsed.tags.count("style") == 1


def test_only_what_html_would_read_as_markup_is_escaped():
    html = copy_html(normalise("a & b < c > d \"e\" &amp; &#1 <b> </x <!x <?x &", "text", []),
                     "text")

    rows = '<div class="frame rowsframe"><i id="wrap"></i><div class="rows text">'
    assert html == (rows + '<span class="r">a & b &lt; c > d "e" &amp;amp; &amp;#1 &lt;b> '
                    '&lt;/x &lt;!x &lt;?x &amp;</span>\n</div></div>')
    html = copy_html(normalise("<<<&&&<1<-<=<>&-&;&\u00e9<", "text", []), "text")
    assert html == rows + '<span class="r"><<<&&&<1<-<=<>&-&;&\u00e9&lt;</span>\n</div></div>'
