"""The HTML report as a reader sees it, in real Chromium at a desktop width (1440 px) and a phone's
(390 px), in the reader's light and dark colour schemes: screenshots of the whole page, every plot
label measured against its plot, every plot's marks, bars and scale measured against the page's
background, and axe-core over the page with no violation.

The page is the model-matrix world's (tests/reports/matrix_world.py: four builders with long model
names, long pair labels in the differences plot), built here and written to a file: the report is
one standalone file, so no server is needed; tests/e2e/test_report_in_chromium.py checks the host's
download of it under its policy.

Screenshots are saved, not compared pixel by pixel: their paths are printed (and the directory is
BLINDJUDGE_SCREENSHOTS, default var/screenshots/ in the checkout). axe-core is the tests' own pinned
copy (tests/e2e/package.json, installed by `./bj test` with `npm ci`). The page's policy forbids
scripts, so axe runs in a browser context with bypass_csp=True, injected with add_script_tag into
the page exactly as written (its <meta> policy included); with every <details> opened, so the
collapsed per-copy table is checked too.
"""

import os
import re
from pathlib import Path

import pytest

from reports.build import build_report
from reports.export import anonymise
from reports.html import to_html
from tests.reports.matrix_world import build_matrix

pytestmark = [pytest.mark.django_db,
              pytest.mark.browser_once("the HTML report's layout and plots in Chromium")]

ROOT = Path(__file__).resolve().parents[2]
AXE = Path(__file__).resolve().parent / "node_modules" / "axe-core" / "axe.min.js"
WIDTHS = {1440: 900, 390: 844}  # viewport width -> height
SCREENSHOTS = Path(os.environ.get("BLINDJUDGE_SCREENSHOTS", ROOT / "var" / "screenshots"))

# For every plot: its figure's box, the table's, and per body row the label cell's box, its text's
# box (a Range over the cell's contents), whether the cell's content overflows it, the chart
# cell's box and every mark's and bar's box; per axis tick label shown its box. Boxes: [left, right,
# top, bottom] in CSS pixels of the page.
MEASURE = """() => {
    const box = (r) => [r.left, r.right, r.top, r.bottom];
    const textBox = (node) => { const range = document.createRange(); range.selectNodeContents(node);
                                return box(range.getBoundingClientRect()); };
    return [...document.querySelectorAll('figure.plot')].map(figure => {
        const table = figure.querySelector('table.plot');
        const scroller = table.parentElement;
        return {
            id: figure.id, figure: box(figure.getBoundingClientRect()),
            table: box(table.getBoundingClientRect()),
            scrolls: scroller.scrollWidth > scroller.clientWidth,
            ticks: [...table.querySelectorAll('thead svg text')].map(t => t.getBoundingClientRect())
                       .filter(r => r.width > 0).map(box),  // a hidden (narrow-screen) label: none
            axis: box(table.querySelector('thead th.chart').getBoundingClientRect()),
            rows: [...table.tBodies[0].rows].map(row => {
                const label = row.querySelector('th.lbl'), chart = row.querySelector('td.chart');
                return {
                    label: label.textContent, cell: box(label.getBoundingClientRect()),
                    text: textBox(label), overflows: label.scrollWidth > label.clientWidth,
                    chart: box(chart.getBoundingClientRect()),
                    marks: [...chart.querySelectorAll('g.mark, g.bar')]
                           .map(g => box(g.getBoundingClientRect())),
                };
            }),
        };
    });
}"""


def inside(inner, outer, slack=0.5) -> bool:
    """Horizontally and vertically within (a box on the edge counts)."""
    return (inner[0] >= outer[0] - slack and inner[1] <= outer[1] + slack
            and inner[2] >= outer[2] - slack and inner[3] <= outer[3] + slack)


@pytest.fixture(scope="module")
def _pages_written():
    """The pages once written, for every test of the module: they are files, read and never
    changed, so the world (seconds on PostgreSQL) is built once, by the first test that asks."""
    return {}


@pytest.fixture
def pages(_pages_written, request, tmp_path_factory):
    """The matrix report's page and its anonymised one, as files."""
    if not _pages_written:
        report = build_report(build_matrix(request.getfixturevalue("host")))
        folder = tmp_path_factory.mktemp("report-pages")
        for name, html in (("report", to_html(report)), ("report-anon", to_html(anonymise(report)))):
            path = folder / f"{name}.html"
            path.write_text(html, encoding="utf-8")
            _pages_written[name] = path
    return dict(_pages_written)


def test_screenshots_of_the_report_at_1440_and_390_pixels(browser, pages, capsys):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    saved = []
    for width, height in WIDTHS.items():
        context = browser.new_context(viewport={"width": width, "height": height})
        page = context.new_page()
        page.goto(pages["report"].as_uri())
        # The first screen opens with what was found, not with hashes.
        assert page.get_by_role("heading", name="What was found", exact=True).is_visible()
        first = page.locator("#findings").bounding_box()
        assert first["y"] < height / 2
        for name, full in (("first-screen", False), ("page", True)):
            path = SCREENSHOTS / f"report-{width}-{name}.png"
            page.screenshot(path=str(path), full_page=full)
            saved.append(path)
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        path = SCREENSHOTS / f"report-{width}-details-open.png"
        page.screenshot(path=str(path), full_page=True)
        saved.append(path)
        context.close()
    for path in saved:
        assert path.stat().st_size > 10_000, path
    with capsys.disabled():
        print("\nHTML report screenshots:\n" + "\n".join(f"  {p}" for p in saved))


def problems(plots: list, width: int) -> list[str]:
    """Every way a plot's labels, marks or scale fail to fit, in words (none: all fit)."""
    found = []
    for plot in plots:
        where = f"{plot['id']} at {width} px"
        if plot["scrolls"]:
            found.append(f"{where}: the plot is wider than the page")
        if not inside(plot["table"], plot["figure"]):
            found.append(f"{where}: the table leaves its figure")
        for row in plot["rows"]:
            label = f"{where}, row {row['label']!r}"
            if row["overflows"]:
                found.append(f"{label}: the label overflows its cell")
            if not inside(row["text"], row["cell"]):
                found.append(f"{label}: the label's text leaves its cell")
            if not inside(row["cell"], plot["table"]):
                found.append(f"{label}: the label cell leaves the plot")
            if row["cell"][1] > row["chart"][0] + 0.5:
                found.append(f"{label}: the label runs into the marks")
            if any(mark[0] < row["chart"][0] - 0.5 or mark[1] > row["chart"][1] + 0.5
                   for mark in row["marks"]):
                found.append(f"{label}: a mark leaves its chart cell")
        ticks = sorted(plot["ticks"])
        if any(t[0] < plot["axis"][0] - 0.5 or t[1] > plot["axis"][1] + 0.5 for t in ticks):
            found.append(f"{where}: a scale label leaves the scale")
        if any(a[1] > b[0] for a, b in zip(ticks, ticks[1:], strict=False)):
            found.append(f"{where}: two scale labels overlap")
    return found


@pytest.mark.parametrize("width", list(WIDTHS))
def test_every_plot_label_lies_inside_its_plot_and_beside_its_marks(browser, pages, width):
    context = browser.new_context(viewport={"width": width, "height": WIDTHS[width]})
    page = context.new_page()
    page.goto(pages["report"].as_uri())
    plots = page.evaluate(MEASURE)
    context.close()
    ids = {p["id"] for p in plots}
    assert {"plot-builders", "plot-builder-differences", "plot-judges-recall", "plot-judges-tnr",
            "plot-reviewers", "plot-judges-and-models", "plot-pooled-invited"} <= ids
    assert all(p["rows"] for p in plots)
    longest = max((r["label"] for p in plots for r in p["rows"]), key=len)
    assert len(longest) > 60  # a pair of long model names: the case a fixed margin clipped
    assert problems(plots, width) == []


def test_the_label_measure_sees_a_clipped_label(browser, pages):
    """Positive control: the same page with its label column forced to a fixed narrow width that
    hides what does not fit (as the old fixed margin did) fails the measure."""
    context = browser.new_context(bypass_csp=True, viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.goto(pages["report"].as_uri())
    page.add_style_tag(content="table.plot { table-layout: fixed; } table.plot th.lbl { width: 6rem; "
                               "white-space: nowrap; overflow: hidden; }")
    found = problems(page.evaluate(MEASURE), 1440)
    context.close()
    assert any("Meta-Llama-3.1-405B-Instruct-Turbo" in f and "overflows its cell" in f for f in found)


def axe_violations(browser, path: Path, width: int, *, spoil: str = "", scheme: str = "light") -> list:
    """axe-core's violations on the page at `path` (every <details> open) in the colour scheme
    `scheme`, as (rule, impact, help, first targets); `spoil` is a script run first, for the
    positive control."""
    assert AXE.exists(), f"{AXE} is missing: `./bj test` installs it (or: npm ci --prefix tests/e2e)"
    context = browser.new_context(bypass_csp=True, color_scheme=scheme,
                                  viewport={"width": width, "height": WIDTHS[width]})
    page = context.new_page()
    page.goto(path.as_uri())
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    if spoil:
        page.evaluate(spoil)
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    context.close()
    assert result["testEngine"]["name"] == "axe-core"
    assert len(result["passes"]) > 20  # it ran its rules
    return [(v["id"], v["impact"], v["help"], [n["target"] for n in v["nodes"][:5]])
            for v in result["violations"]]


@pytest.mark.parametrize("name", ["report", "report-anon"])
@pytest.mark.parametrize("width", list(WIDTHS))
def test_axe_core_finds_no_violation(browser, pages, name, width):
    assert axe_violations(browser, pages[name], width) == []


def test_axe_core_finds_no_violation_in_the_dark_scheme(browser, pages):
    """Its colour-contrast rule over every text of the page as a reader in dark mode sees it."""
    assert axe_violations(browser, pages["report"], 390, scheme="dark") == []


def test_axe_core_sees_a_violation_put_in_the_page(browser, pages):
    """Positive control: a plot label emptied and a heading level skipped are reported."""
    spoil = ("document.querySelector('table.plot th.lbl').textContent = '';"
             "document.querySelector('h3').outerHTML = '<h6>skipped</h6>';")
    rules = {v[0] for v in axe_violations(browser, pages["report"], 1440, spoil=spoil)}
    assert {"empty-table-header", "heading-order"} <= rules


# The page's background and text colour, and the colour of everything a plot draws: each mark's
# fill (in the plots and in their keys), each bar's stroke, each scale label's fill; as Chromium
# computed them, "rgb(r, g, b)" or "rgba(r, g, b, a)".
COLOURS = """() => {
    const style = (e) => getComputedStyle(e);
    const fills = (selector) => [...document.querySelectorAll(selector)].map(e => style(e).fill);
    return {
        background: [style(document.body).backgroundColor,
                     style(document.documentElement).backgroundColor],
        text: style(document.body).color,
        marks: fills('figure.plot g.mark circle, figure.plot g.mark rect, figure.plot g.mark polygon'),
        keys: fills('svg.key circle, svg.key rect, svg.key polygon'),
        bars: [...document.querySelectorAll('figure.plot g.bar')].map(e => style(e).stroke),
        ticks: fills('svg.axis text'),
    };
}"""


def rgb(text: str) -> tuple:
    """(r, g, b, alpha) of a computed colour."""
    parts = [float(x) for x in re.findall(r"[\d.]+", text)]
    return (*parts[:3], parts[3] if len(parts) > 3 else 1.0)


def luminance(colour: tuple) -> float:
    """WCAG 2's relative luminance."""
    def channel(c):
        c /= 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(c) for c in colour[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: tuple, b: tuple) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def colour_problems(measured: dict, scheme: str) -> list[str]:
    """Every way the page's colours fail the scheme, in words (none: all legible). The page's
    background is the body's, else the root's, else the canvas's (white, for a page that declares
    no dark scheme). Marks and bars are graphics (WCAG 1.4.11: 3:1 against their background),
    scale labels and text are text (1.4.3: 4.5:1)."""
    found = []
    opaque = [c for c in map(rgb, measured["background"]) if c[3] > 0]
    background = opaque[0] if opaque else (255.0, 255.0, 255.0, 1.0)
    dark = luminance(background) < 0.05
    if dark != (scheme == "dark"):
        found.append(f"the page's background {background[:3]} does not follow the {scheme} scheme")
    if contrast(rgb(measured["text"]), background) < 4.5:
        found.append(f"the text {measured['text']} is faint on {background[:3]}")
    for kind, least in (("marks", 3.0), ("keys", 3.0), ("bars", 3.0), ("ticks", 4.5)):
        for colour in sorted(set(measured[kind])):
            if contrast(rgb(colour), background) < least:
                found.append(f"{kind}: {colour} on {background[:3]} is below {least}:1")
    return found


def scheme_colours(browser, path: Path, scheme: str, *, spoil: str = "") -> dict:
    context = browser.new_context(bypass_csp=bool(spoil), color_scheme=scheme,
                                  viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.goto(path.as_uri())
    if spoil:
        page.add_style_tag(content=spoil)
    measured = page.evaluate(COLOURS)
    if scheme == "dark" and not spoil:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "report-1440-dark-first-screen.png"))
    context.close()
    return measured


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_page_follows_the_reader_s_colour_scheme_and_its_plots_stay_legible(browser, pages,
                                                                               scheme):
    """The report is one standalone file: a reader in dark mode got a white page (issue 28,
    Also). Its own hashed style now holds a dark scheme; the plots' marks, bars and scale labels
    are recoloured with it and stay legible against the page."""
    measured = scheme_colours(browser, pages["report"], scheme)
    assert len(set(measured["marks"])) >= 4  # the plots' series, each its own colour
    assert colour_problems(measured, scheme) == []


def test_the_colour_measure_sees_a_mark_lost_in_the_background(browser, pages):
    """Positive control: in the dark scheme, the phase-1 marks drawn in the light scheme's
    near-black fail the measure."""
    spoil = "figure.plot g.mark circle { fill: #24292f !important; }"
    found = colour_problems(scheme_colours(browser, pages["report"], "dark", spoil=spoil), "dark")
    assert any(f.startswith("marks: rgb(36, 41, 47)") for f in found), found
