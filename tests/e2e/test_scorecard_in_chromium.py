"""The judge's scorecard in real Chromium on a phone (375 px wide): every table fits the screen,
the verdict table included when a host's defect note holds a word longer than the screen is wide
(it was cut off at the right: its box scrolled sideways, and a phone shows no scrollbar, so the
verdict columns past the edge read as missing). The page itself never scrolls sideways. Its rates
read as the report's percentages.

The measure is shown to fire (positive control) on the same page with its verdict table made
wider than the screen."""

import os

import pytest

from judging.demo import demo_bundle
from tests.worlds import a_demo_session, a_host, advance, answer_all, invite_and_join, judge_cookie

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.browser_once("the scorecard's layout on a phone's width")]

PHONE = {"width": 375, "height": 812}
# A host's note naming the function at fault and the file of the test that shows it: words longer
# than a phone's screen is wide, with no space to break at.
LONG_NOTE = ("normalise_unicode_whitespace_before_comparing_the_two_strings() is never called; "
             "tests/test_text_normalisation_of_combining_characters_and_whitespace.py shows it")

# For each table of the page: its right edge, and whether the box it sits in scrolls sideways;
# the document's own width beside the window's.
MEASURE = """() => ({
    tables: [...document.querySelectorAll('main table')].map(table => {
        const box = table.parentElement;
        return {right: table.getBoundingClientRect().right,
                scrolls: box.scrollWidth > box.clientWidth};
    }),
    page: document.documentElement.scrollWidth, window: innerWidth})"""


def problems(measured: dict) -> list[str]:
    """Every way a table leaves the phone's screen, in words (none: every table fits)."""
    found = []
    width = measured["window"]
    if measured["page"] > width + 1:
        found.append(f"the page scrolls sideways ({measured['page']} px on a {width} px screen)")
    for n, table in enumerate(measured["tables"]):
        if table["right"] > width + 1:
            found.append(f"table {n} ends at {table['right']:.0f} px, past the {width} px screen"
                         + (" (its box scrolls, with no scrollbar shown)" if table["scrolls"] else ""))
    return found


@pytest.fixture
def scorecard(e2e_server, browser):
    """Opens, at 375 px, the scorecard of a judge of the demo session (one seeded defect's note
    long and unbroken) who failed every copy alone and kept every verdict beside the models."""
    bundle = demo_bundle()
    seeded = next(c for c in bundle["copies"] if c.get("defect"))
    seeded["defect"] = LONG_NOTE
    session = a_demo_session(a_host(f"card-{os.urandom(3).hex()}"), "open", bundle=bundle,
                             scorecards=True)
    judge = invite_and_join(session, name="Phone Judge").judge
    answer_all(judge, 1, "fail", lock=True)
    answer_all(judge, 2, "keep", lock=True)
    advance(session, "revealed")
    contexts = []

    def open_page(**options):
        context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True, **options)
        contexts.append(context)
        name, value = judge_cookie(judge).split("=", 1)
        context.add_cookies([{"name": name, "value": value, "url": e2e_server.origin}])
        page = context.new_page()
        response = page.goto(e2e_server.url(f"/s/{session.url_id}/scorecard/"))
        assert response.status == 200
        page.wait_for_load_state("load")
        return page

    yield open_page
    for context in contexts:
        context.close()


def test_on_a_phone_the_verdict_table_fits_the_screen(scorecard):
    page = scorecard()
    assert "normalise_unicode_whitespace" in page.locator("main table").nth(1).inner_text()
    measured = page.evaluate(MEASURE)
    assert len(measured["tables"]) == 2  # the scores, the verdicts
    assert problems(measured) == []


def test_the_measure_sees_a_table_cut_off_at_the_right(scorecard):
    """Positive control: the verdict table made wider than the screen fails the measure."""
    page = scorecard(bypass_csp=True)
    page.add_style_tag(content="main table { min-width: 40rem; }")
    assert any("past the 375 px screen (its box scrolls" in p for p in problems(page.evaluate(MEASURE)))


def test_the_rates_read_as_percentages_with_their_interval_in_brackets(scorecard):
    # Three of three defective copies caught (Wilson 0.4385–1), none of four good ones passed.
    scores = scorecard().locator("main table").first.inner_text()
    assert "100% (3/3) [44–100%]" in scores and "0% (0/4) [0–49%]" in scores, scores
