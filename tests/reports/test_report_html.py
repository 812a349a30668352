"""The HTML report: one standalone page, its single style block allowed by hash, no script, the
SVG's dots and bars where the report's numbers put them, untrusted text escaped. The same page is
checked rendering in real Chromium under its policy in tests/e2e/test_report_in_chromium.py."""

import base64
import hashlib
import re
from html.parser import HTMLParser

import pytest

from accounts.models import Judge
from judging.models import Run, Session
from reports.build import build_report
from reports.html import PLOT_WIDTH, PLOT_X0, REPORT_CSP, REPORT_META_CSP, to_html
from tests.reports.test_report import build_revealed
from tests.reports.test_report_scripted import scripted  # noqa: F401 - the fixture

HOSTILE = '<script>alert(1)</script><img src="http://evil.example/x.png">'


class Elements(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []
        self.styles = []
        self.shapes = []  # (plot title, tag, attributes) of each SVG dot and bar
        self._in_style = False
        self._plot = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        self._in_style = tag == "style"
        if tag == "svg":
            self._plot = attrs.get("aria-label")
        elif tag in ("circle", "line") and self._plot:
            self.shapes.append((self._plot, tag, attrs))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        self._in_style = False
        if tag == "svg":
            self._plot = None

    def handle_data(self, data):
        if self._in_style:
            self.styles.append(data)


def parse(html):
    parser = Elements()
    parser.feed(html)
    return parser


def test_one_style_block_allowed_by_its_hash_and_nothing_that_loads_or_runs(scripted):  # noqa: F811
    page = parse(to_html(scripted))
    [style] = page.styles
    digest = base64.b64encode(hashlib.sha256(style.encode("utf-8")).digest()).decode()
    assert f"style-src 'sha256-{digest}'" in REPORT_META_CSP
    assert REPORT_CSP == REPORT_META_CSP + "; frame-ancestors 'none'"
    [meta] = [a for t, a in page.tags if t == "meta" and a.get("http-equiv")]
    assert meta["content"] == REPORT_META_CSP
    tags = {t for t, _ in page.tags}
    assert not tags & {"script", "img", "link", "iframe", "object", "embed", "form", "a"}
    assert not any(k == "style" or k.startswith("on") for _, a in page.tags for k in a)
    assert "svg" in tags and "circle" in tags


def test_untrusted_text_is_escaped(host):
    # A run name and a judge's name are free text; both reach the page only escaped.

    session, judges = build_revealed(host)
    Run.objects.filter(pk=session.run_id).update(name=HOSTILE)
    Judge.objects.filter(pk=judges["J01"].pk).update(display_name=HOSTILE)
    page = to_html(build_report(Session.objects.get(pk=session.pk)))
    assert "<script>" not in page and "evil.example/x.png\">" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_the_dots_and_bars_sit_where_the_numbers_put_them(scripted):  # noqa: F811
    page = parse(to_html(scripted))
    recall = "Recall per judge, phase 1 (blue) and phase 2 (orange)"

    def shape(plot, tag, row, series, cls):
        [found] = [a for p, t, a in page.shapes if p.startswith(plot) and t == tag
                   and a.get("class") == cls and a["data-row"] == row
                   and a["data-series"] == series]
        return found

    # J01 recall: 2 of 4 in phase 1 (0.5), 4 of 4 in phase 2 (1.0); J04 0 of 4 in phase 1.
    assert float(shape(recall, "circle", "J01", "1", "dot")["cx"]) == PLOT_X0 + 0.5 * PLOT_WIDTH == 360
    assert float(shape(recall, "circle", "J01", "2", "dot")["cx"]) == PLOT_X0 + PLOT_WIDTH == 560
    assert float(shape(recall, "circle", "J04", "1", "dot")["cx"]) == PLOT_X0 == 160
    # Wilson 2 of 4: 0.150039 to 0.849961.
    bar = shape(recall, "line", "J01", "1", "bar")
    assert float(bar["x1"]) == pytest.approx(PLOT_X0 + 0.150039 * PLOT_WIDTH, abs=0.01)
    assert float(bar["x2"]) == pytest.approx(PLOT_X0 + 0.849961 * PLOT_WIDTH, abs=0.01)
    # Pooled effects on a -1..1 scale: delta_recall 5/12 sits at 160 + (5/12 + 1)/2 · 400.
    effects = "Pooled effects, invited judges"
    dot = shape(effects, "circle", "delta_recall", "value", "dot")
    assert float(dot["cx"]) == pytest.approx(PLOT_X0 + (5 / 12 + 1) / 2 * PLOT_WIDTH, abs=0.005)
    guest = shape("Pooled effects, guest judges", "circle", "delta_tnr", "value", "dot")
    assert float(guest["cx"]) == PLOT_X0  # -1


def test_the_page_reads_as_a_summary_first(scripted):  # noqa: F811
    page = to_html(scripted)
    order = [page.index(h) for h in ('id="preregistration"', "Commitments and their salts",
                                     "achieved beside planned", "What the blinding did not remove",
                                     'id="summary"', "Decision rules, evaluated exactly as written",
                                     'id="judges"', 'id="reviewers"')]
    assert order == sorted(order)
    assert "reported, never used to decide" in page
    assert re.search(r"models help recall</td><td>.*?</td><td class=\"fired\">fired", page)
    assert re.search(r"herding</td><td>.*?</td><td class=\"not-fired\">not fired", page)
    assert "No pooled McNemar test" in page
