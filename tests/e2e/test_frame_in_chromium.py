"""The copy frame in Chromium (issue 16, item 2): a 350-line diff's frame, served by a real server
inside the item page's sandboxed iframe, is exactly `line_count * FRAME_LINE_PX + FRAME_PAD_PX`
high unwrapped (the height the item page will give it, from the stored count); navigating the
frame to `#wrap` wraps its code without a reload (CSS :target, as nothing runs there), and its
file links then scroll the frame; the marks keep their colours inside highlighted code; dark mode
applies by the reader's colour scheme."""

import pytest
from playwright.sync_api import expect

from content.frame_geometry import FRAME_LINE_PX, FRAME_PAD_PX, FRAME_TOP_PX
from content.rendering import FRAME_PALETTES
from judging.models import CopyRender
from judging.services import (
    invitation_create,
    join_token_exchange,
    redactions_accept,
    session_open,
)
from tests.worlds import a_host, a_run, a_session, codes, judge_cookie

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.browser_once("the frame's height and scrolling as Chromium lays it out")]

BIDI_LINE = 'label = "Zeta \u202e says"  # by Zeta'


def a_350_line_diff() -> str:
    lines = ["diff --git a/shop/total.py b/shop/total.py", "--- a/shop/total.py",
             "+++ b/shop/total.py", "@@ -1,170 +1,172 @@"]
    for n in range(170):
        lines.append(f" value_{n} = compute({n})  # context line {n}")
        if n == 3:
            lines.append("+long_line = '" + "a long line that does not fit " * 20 + "'")
            lines.append("+" + BIDI_LINE)
    lines += ["diff --git a/shop/tax.py b/shop/tax.py", "--- a/shop/tax.py", "+++ b/shop/tax.py",
              "@@ -1,165 +1,165 @@"]
    for n in range(165):
        lines.append(f"-rate_{n} = {n} / 100" if n % 40 == 0 else f" rate_{n} = {n}")
        if n % 40 == 0:
            lines.append(f"+rate_{n} = {n} / 1000")
    assert len(lines) >= 350
    return "\n".join(lines) + "\n"


def frame_of(page):
    return page.locator("iframe.copy-frame").element_handle().content_frame()


MEASURE = """() => {
  const rows = document.querySelectorAll('.r');
  const last = rows[rows.length - 1].getBoundingClientRect();
  return {document: document.documentElement.scrollHeight, viewport: innerHeight,
          bodyScroll: document.body.scrollHeight, bodyClient: document.body.clientHeight,
          lastBottom: last.bottom, hash: location.hash, marker: document.frameMarker || null,
          rows: rows.length};
}"""


def test_a_350_line_diffs_frame_is_its_line_count_high_and_wraps_on_its_fragment(
        e2e_server, browser):
    bundle = {"format": "blindjudge.run/1", "run": {"name": "long", "task": "Judge the diff."},
              "builders": [{"id": "b1", "model": "gpt-4o-2024-08-06", "family": "OpenAI"}],
              "copies": [{"id": "c1", "builder": "b1", "format": "diff",
                          "content": a_350_line_diff(), "truth": "known_good"}]}
    draft = a_session(a_run(a_host("e2e-frame", "e2e host passphrase 3"), bundle), "draft")
    redactions_accept(session=draft, patterns=["Zeta"], actor="test")
    session = session_open(session=draft, actor="test")
    token = invitation_create(session=session, actor="test", name="Long Reader").join_token
    judge = join_token_exchange(token=token).judge
    render = CopyRender.objects.get(session=session)
    height = render.line_count * FRAME_LINE_PX + FRAME_PAD_PX
    assert render.line_count >= 350 + 2  # the lines, and the two files' list entries

    for scheme in ("light", "dark"):
        context = browser.new_context(viewport={"width": 1440, "height": 900},
                                      color_scheme=scheme)
        name, value = judge_cookie(judge).split("=", 1)
        context.add_cookies([{"name": name, "value": value, "url": e2e_server.origin}])
        page = context.new_page()
        page.goto(e2e_server.url(f"/s/{session.url_id}/i/{codes(judge)[0]}/"))
        page.wait_for_load_state("load")
        frame = frame_of(page)
        expect(page.frame_locator("iframe.copy-frame").locator(".r").first).to_be_attached()
        background = frame.evaluate("getComputedStyle(document.documentElement).backgroundColor")
        expected = FRAME_PALETTES[scheme]["bg"]
        assert background == "rgb({}, {}, {})".format(
            *(int(expected[i:i + 2], 16) for i in (1, 3, 5))), (scheme, background)
        if scheme == "dark":
            context.close()
            continue

        # The item page sizes the frame from the stored count (as its script will, by CSSOM).
        page.evaluate(f"document.querySelector('iframe.copy-frame').style.height = '{height}px'")
        page.wait_for_function(f"document.querySelector('iframe.copy-frame')"
                               f".getBoundingClientRect().height === {height}")
        unwrapped = frame.evaluate(MEASURE)
        assert unwrapped["rows"] == render.line_count
        assert abs(unwrapped["document"] - height) <= 2, unwrapped
        # The rows fill it: the last ends where the room for a scrollbar begins, and nothing
        # scrolls inside the frame (a long line scrolls it sideways only).
        assert abs(unwrapped["lastBottom"] - (height - (FRAME_PAD_PX - FRAME_TOP_PX))) <= 2, unwrapped
        assert unwrapped["bodyScroll"] <= unwrapped["bodyClient"], unwrapped
        assert frame.evaluate("document.body.scrollWidth > document.body.clientWidth")

        # The marks keep their own colours inside a highlighted string.
        colours = frame.evaluate("""() => {
          const mark = document.querySelector('.s .mark.bidi');
          const redacted = document.querySelector('.s .mark.redacted');
          return [getComputedStyle(mark).backgroundColor, getComputedStyle(mark).color,
                  getComputedStyle(mark.parentElement).color,
                  getComputedStyle(redacted).backgroundColor, mark.textContent];
        }""")
        assert colours[0] == "rgb(255, 248, 197)" and colours[1] == "rgb(122, 77, 0)", colours
        assert colours[2] == "rgb(10, 48, 105)"  # the string's own colour, under the mark
        assert colours[3] == "rgb(27, 31, 36)" and colours[4] == "\u27e6U+202E\u27e7"
        # In the rows view the file list is text: a link could not scroll the page from a
        # sandboxed frame.
        expect(page.frame_locator("iframe.copy-frame").locator(".files a").first).to_be_hidden()

        # #wrap: set on the iframe, as the page's toggle will. Same document (no reload), and the
        # long line wraps, so the document grows past the frame and scrolls inside it.
        frame.evaluate("document.frameMarker = 'same document'")
        page.evaluate("""() => { const f = document.querySelector('iframe.copy-frame');
                                 f.src = f.src.split('#')[0] + '#wrap'; }""")
        frame.wait_for_function("location.hash === '#wrap'")
        wrapped = frame.evaluate(MEASURE)
        assert wrapped["marker"] == "same document", wrapped
        assert wrapped["document"] > height + FRAME_LINE_PX, (unwrapped, wrapped)
        assert frame.evaluate("document.documentElement.scrollWidth <= innerWidth")
        # Its file links now scroll the frame itself, and keep it wrapped.
        page.frame_locator("iframe.copy-frame").locator(".files a").nth(1).click()
        frame.wait_for_function("location.hash === '#w2'")
        moved = frame.evaluate("[document.documentElement.scrollTop, document.frameMarker,"
                               " document.documentElement.scrollHeight]")
        assert moved[0] > 0 and moved[1] == "same document" and moved[2] == wrapped["document"]
        context.close()
