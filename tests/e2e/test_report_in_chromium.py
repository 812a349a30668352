"""The HTML report in real Chromium: served by the host's download under its own policy and saved
to a file and opened offline, it renders (its one hashed style block applied), makes no request
off the server, runs nothing, and its SVG marks sit where the report's numbers put them.

The detectors: the Observer's are shown to fire in test_judging_in_chromium.py; the style check is
shown to fire here, on the same page with its style block changed by one byte in transit."""

import pytest
from playwright.sync_api import expect

from tests.reports.test_report_scripted import build_scripted

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.browser_once("the HTML report under its policy in Chromium")]

RECALL_PLOT = "#plot-judges-recall"
# The page's own style sets the body's width; without it Chromium's default is "none".
STYLED_MAX_WIDTH = "992px"  # 62rem


def _sign_in(page, server):
    page.goto(server.url("/accounts/login/"))
    page.get_by_label("Username", exact=True).fill("alice")
    page.get_by_label("Password", exact=True).fill("correct horse battery staple")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Runs", exact=True)).to_be_visible()


def _max_width(page) -> str:
    return page.evaluate("() => getComputedStyle(document.body).maxWidth")


def _dot(page, row: str, series: str) -> dict:
    """A mark's data-x (percent of its plot's width) and where Chromium drew its centre, in
    percent of the width of the SVG it sits in."""
    return page.evaluate("""([selector, row, series]) => {
        const mark = document.querySelector(
            `${selector} g.mark[data-row="${row}"][data-series="${series}"]`);
        const svg = mark.ownerSVGElement.closest('svg.marks') || mark.ownerSVGElement;
        const box = svg.getBoundingClientRect(), at = mark.getBoundingClientRect();
        return {x: mark.dataset.x, drawn: (at.left + at.width / 2 - box.left) / box.width * 100};
    }""", [RECALL_PLOT, row, series])


def test_the_html_report_renders_under_its_policy_with_the_dots_in_place(
        e2e_server, observed_context, sink, host, tmp_path):
    session = build_scripted(host)
    report_path = f"/host/sessions/{session.pk}/report/html"
    context, seen = observed_context(e2e_server.origin, viewport={"width": 1200, "height": 900})
    page = context.new_page()
    _sign_in(page, e2e_server)

    # Positive control: one byte changed in the style block, so its hash no longer matches the
    # policy. Chromium refuses it (the page falls back to its default width) and says so.
    def tampered(route):
        response = route.fetch()
        body = response.text().replace("max-width: 62rem;", "max-width: 62rem; ", 1)
        route.fulfill(response=response, body=body)

    page.route(f"**{report_path}", tampered)
    page.goto(e2e_server.url(report_path))
    assert _max_width(page) == "none"
    assert any("Applying inline style violates the following Content Security Policy" in text
               for _, text in seen.console), seen.console
    page.unroute(f"**{report_path}")
    seen.console.clear()

    # The page as served: its style applies, nothing leaves, nothing runs.
    response = page.goto(e2e_server.url(report_path))
    assert response.status == 200
    assert response.headers["content-security-policy"].startswith("default-src 'none'; style-src")
    expect(page.get_by_role("heading", name="What was found", exact=True)).to_be_visible()
    assert _max_width(page) == STYLED_MAX_WIDTH
    # J01's recall: 2 of 4 alone (0.5), 4 of 4 beside the models (1.0); J04 (the guest) 0 of 4.
    for row, series, value in (("J01", "1", 0.5), ("J01", "2", 1.0), ("J04", "1", 0.0),
                               ("J02", "2", 0.75)):
        dot = _dot(page, row, series)
        assert float(dot["x"]) == value * 100
        assert dot["drawn"] == pytest.approx(value * 100, abs=0.5)
    html = page.content()
    page.wait_for_timeout(200)
    seen.assert_silent(sink)

    # Saved and opened with no server at all: the <meta> policy travels with the file.
    saved = tmp_path / "report.html"
    saved.write_text(html, encoding="utf-8")
    offline, seen_offline = observed_context("file://")
    page = offline.new_page()
    page.goto(saved.as_uri())
    assert _max_width(page) == STYLED_MAX_WIDTH
    assert float(_dot(page, "J01", "1")["drawn"]) == pytest.approx(50, abs=0.5)
    page.wait_for_timeout(200)
    seen_offline.assert_silent(sink)
    assert seen_offline.requests == [saved.as_uri()]
