"""The judge's instructions page in real Chromium (issue 17 item 2), at 1280 px and 390 px: reached
from the welcome page, the host's text and the product's parts shown, the mark samples drawn in
their colours, nothing in the console (the CSP refuses inline styles and scripts, so a violation
would be logged), no horizontal scroll, and axe-core finds no violation. A screenshot of each
width is kept (BLINDJUDGE_SCREENSHOTS, default var/screenshots/).
"""

import os
from pathlib import Path

import pytest
from playwright.sync_api import expect

from judging.enums import SessionState
from judging.services import invitation_create, session_update_draft
from tests.worlds import a_session, advance

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.browser_once("the instructions page as Chromium lays it out, at two widths")]

AXE = Path(__file__).resolve().parent / "node_modules" / "axe-core" / "axe.min.js"
TEXT = "Read each copy **to the end**.\n\n- one\n- two\n\n<script>window.ran = true</script>"


@pytest.mark.parametrize("width", [1280, 390])
def test_a_judge_reads_the_instructions(e2e_server, observed_context, browser, sink, run, width):
    assert AXE.exists(), f"{AXE} is missing: `./bj test` installs it (or: npm ci --prefix tests/e2e)"
    draft = a_session(run, SessionState.DRAFT, rubric="Is add() right?", items_per_judge=3)
    session_update_draft(session=draft, actor="test", instructions=TEXT, minutes_per_item=2)
    session = advance(draft, SessionState.OPEN)
    token = invitation_create(session=session, actor="test", name="Ada").join_token
    context, seen = observed_context(e2e_server.origin, viewport={"width": width, "height": 900})
    page = context.new_page()
    page.goto(e2e_server.url(f"/join/{token}"))
    page.get_by_role("button", name="Join the session").click()
    page.get_by_role("link", name="Read the instructions (2 min)").click()
    expect(page.get_by_role("heading", name="Instructions", exact=True)).to_be_visible()
    expect(page.locator(".host-instructions strong")).to_have_text("to the end")
    expect(page.locator(".host-instructions")).to_contain_text("<script>window.ran = true</script>")
    assert page.evaluate("window.ran === undefined")
    expect(page.locator("#item-count")).to_have_text("3 items")
    expect(page.get_by_text("about 6 minutes")).to_be_visible()
    redacted = page.locator(".marks .mark.redacted")
    expect(redacted).to_have_text("[redacted]")
    # Drawn with the copy's mark style (the stylesheet loaded, not an inline style). Awaited: the
    # page's text is there before its stylesheet (a loaded CI run read the colour too soon).
    expect(redacted).to_have_css("background-color", "rgb(27, 31, 36)")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    page.screenshot(path=str(_shot(width)), full_page=True)
    seen.assert_silent(sink)

    axe_context = browser.new_context(bypass_csp=True, viewport={"width": width, "height": 900},
                                      storage_state=context.storage_state())
    checked = axe_context.new_page()
    checked.goto(page.url)
    checked.add_script_tag(path=str(AXE))
    result = checked.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    axe_context.close()
    assert len(result["passes"]) > 10
    assert [(v["id"], v["help"], [n["target"] for n in v["nodes"][:3]])
            for v in result["violations"]] == []


def _shot(width: int) -> Path:
    """Where the page's screenshot goes, as the report pages' (BLINDJUDGE_SCREENSHOTS)."""
    folder = Path(os.environ.get("BLINDJUDGE_SCREENSHOTS",
                                 Path(__file__).resolve().parents[2] / "var" / "screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"judge-instructions-{width}.png"
