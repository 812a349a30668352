"""The HTML report: one standalone page, its single style block allowed by hash, no script, no
link but to its own sections; it opens with what was found, in sentences whose every figure is the
report's (worked out by hand here for the scripted session), then a table of contents, the
sections, and the hashes and protocol in appendices at the end. Builders and reviewers are named
by model; proportions read as percentages, differences as percentage points; the SVG's marks sit
where the numbers put them; the per-copy table is collapsed. The same page is checked in real
Chromium (rendering under its policy, every label inside its plot, axe-core, screenshots) in
tests/e2e/test_report_in_chromium.py and tests/e2e/test_report_pages_in_chromium.py."""

import base64
import hashlib
import re
from html import unescape
from html.parser import HTMLParser

import pytest

from accounts.models import Judge
from judging.models import Run, Session
from judging.services import guest_join, guests_configure, phase_lock
from reports import numbers
from reports.build import build_report
from reports.export import anonymise
from reports.headline import _conditions, headline
from reports.html import REPORT_CSP, REPORT_META_CSP, to_html
from reports.plots import PERCENT, Scale, points_scale
from tests.reports.matrix_world import JUDGES, build_matrix
from tests.reports.test_report import build_revealed, exported, schema_errors
from tests.reports.test_report import schema as schema  # noqa: PLC0414 - the fixture
from tests.reports.test_report_scripted import scripted  # noqa: F401 - the fixture
from tests.support.verdicts import verdict_record
from tests.worlds import a_run, a_session, advance, answer_all, invite_and_join, make_run2_bundle

HOSTILE = '<script>alert(1)</script><img src="http://evil.example/x.png">'


class Elements(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []
        self.styles = []
        self.marks = []  # (plot id, tag, attributes) of each mark (g.mark) and bar (g.bar)
        self.ids = set()
        self._in_style = False
        self._plot = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if "id" in attrs:
            self.ids.add(attrs["id"])
        self._in_style = tag == "style"
        if tag == "figure":
            self._plot = attrs.get("id")
        elif tag == "g" and self._plot:
            self.marks.append((self._plot, attrs.get("class"), attrs))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        self._in_style = False
        if tag == "figure":
            self._plot = None

    def handle_data(self, data):
        if self._in_style:
            self.styles.append(data)


def parse(html):
    parser = Elements()
    parser.feed(html)
    return parser


def text_of(html: str) -> str:
    """The page's text as a reader sees it: tags dropped, entities decoded, spaces collapsed."""
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def test_one_style_block_allowed_by_its_hash_and_nothing_that_loads_or_runs(scripted):  # noqa: F811
    page = parse(to_html(scripted))
    [style] = page.styles
    digest = base64.b64encode(hashlib.sha256(style.encode("utf-8")).digest()).decode()
    assert f"style-src 'sha256-{digest}'" in REPORT_META_CSP
    assert REPORT_CSP == REPORT_META_CSP + "; frame-ancestors 'none'"
    [meta] = [a for t, a in page.tags if t == "meta" and a.get("http-equiv")]
    assert meta["content"] == REPORT_META_CSP
    tags = {t for t, _ in page.tags}
    assert not tags & {"script", "img", "link", "iframe", "object", "embed", "form"}
    assert not any(k == "style" or k.startswith("on") for _, a in page.tags for k in a)
    assert "svg" in tags and "circle" in tags
    # The reader's colour scheme is followed from inside that one block: every colour the plots
    # name (data-colour) is recoloured in its dark part.
    dark = style[style.index("@media (prefers-color-scheme: dark)"):]
    named = {a["data-colour"] for _, a in page.tags if "data-colour" in a}
    assert {"blue", "orange", "green", "purple", "text-coloured", "zero"} <= named
    assert all(f'[data-colour="{name}"]' in dark for name in named), named
    # The only links are to the page's own sections, and each one lands.
    links = [a["href"] for t, a in page.tags if t == "a"]
    assert links and all(href.startswith("#") and href[1:] in page.ids for href in links)
    assert not any(k in ("src", "xlink:href") or (k == "href" and t != "a")
                   for t, a in page.tags for k in a)


def test_untrusted_text_is_escaped(host):
    # A run name and a judge's name are free text; both reach the page only escaped.

    session, judges = build_revealed(host)
    Run.objects.filter(pk=session.run_id).update(name=HOSTILE)
    Judge.objects.filter(pk=judges["J01"].pk).update(display_name=HOSTILE)
    page = to_html(build_report(Session.objects.get(pk=session.pk)))
    assert "<script>" not in page and "evil.example/x.png\">" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_the_page_opens_with_what_was_found_and_ends_with_the_appendices(scripted):  # noqa: F811
    page = to_html(scripted)
    order = [page.index(h) for h in (
        'id="findings"', 'id="contents"', 'id="builders-compared"', 'id="judges"',
        'id="phase-shift"', 'id="decision-rules"', 'id="reviewers"', 'id="copies"',
        'id="task-flags"', 'id="adjudicated"', 'id="sample"', 'id="protocol"',
        "Preregistration as frozen",
        'id="hashes"', "Commitments and their salts")]
    assert order == sorted(order)
    # Hashes and salts come only in the appendix, after every finding.
    appendix = page.index('id="protocol"')
    assert page.index(scripted["protocol"]["sha256"]) > appendix
    assert page.index(scripted["judges"][0]["commitment"]["salt"]) > appendix
    # The table of contents lists every section, in the page's order.
    toc = page[page.index('id="contents"'):page.index("</nav>")]
    anchors = re.findall(r'href="#([\w-]+)"', toc)
    assert anchors == ["builders-compared", "judges", "phase-shift", "decision-rules", "reviewers",
                       "copies", "task-flags", "adjudicated", "sample", "protocol", "hashes"]
    assert "reported, never used to decide" in page
    assert re.search(r"tnr drops</th><td>.*?</td><td class=\"fired\">fired", page)
    assert re.search(r"herding</th><td>.*?</td><td class=\"not-fired\">not fired", page)
    assert "No pooled McNemar test" in page


def test_what_was_found_states_the_scripted_figures_worked_out_by_hand(scripted):  # noqa: F811
    topics = {t["key"]: t["sentences"] for t in headline(scripted)}
    effects = scripted["phase_shift"]["pooled"]["invited"]["effects"]

    assert topics["sample"] == [
        "4 judges joined (3 invited and 1 guest); 4 locked phase 1 and 4 locked both phases.",
        "The session held 9 copies of 1 task by 3 builders; 2 model reviewers reviewed the copies."]
    # In scope: b1 d4 (tests_fail); b2 g4 (tests_pass); b3 d3, g3, u1. The invited judges'
    # phase-1 passes: d4 P P P (3/3), g4 F P P (2/3), d3 P P F + g3 P F P + u1 F P F (5/9).
    # Wilson 3/3 [0.4385, 1], 2/3 [0.2077, 0.9385], 5/9 [0.2667, 0.8112].
    builders = topics["builders"]
    assert builders[0] == (
        "The primary comparison (none was preregistered, so the default) is the invited judges' "
        "pass rate in phase 1, alone: gpt-4o-2024-08-06 100% (3/3) [44–100%], "
        "claude-3-5-sonnet-20241022 67% (2/3) [21–94%] and gemini-1.5-pro 56% (5/9) [27–81%].")
    # The largest difference: 3/3 − 5/9 = 4/9 = 44 pp; one task, so no pair is distinguished.
    # Three judges' verdicts on one task: no interval, said; conditional on these judges.
    assert builders[1] == (
        "No two builders are distinguished: a difference counts only where its Holm-adjusted p "
        "is below 0.05 and its 95% interval, where one is valid, excludes 0. The largest, "
        "gpt-4o-2024-08-06 − gemini-1.5-pro, is +44 pp (Holm-adjusted p = 1.000, 1 task; no "
        "interval is valid at so few units with several verdicts per task; conditional on these "
        "3 judges).")
    humans = topics["humans-and-models"]
    # Pooled invited, phase 1: defective 6 of 12 caught, good 9 of 12 passed, 24 pairs. r1
    # (Alibaba, no builder's family): defective d1 F d2 F d3 P d4 P, good g1 P g2 P g3 F g4 P.
    # r2 (OpenAI, b1's family): b1's copies apart, g4's seal failed: d2 P d3 F, g2 P g3 P.
    # Three units (two clusters and one task), fewer than 20: no interval, and why.
    assert humans[0] == (
        "Alone (phase 1), the invited judges caught 50% of defective copies and passed 75% of "
        "good ones (3 judges who locked both phases, 24 paired verdicts; no interval: 3 units "
        "(declared clusters), fewer than 20: a bootstrap over so few is too narrow, and no other "
        "interval fits verdicts pooled over judges).")
    assert humans[1] == (
        "Under the default condition (clean), the model reviewers: qwen3-1.7b caught 50% (2/4) "
        "[15–85%] of defective copies and passed 75% (3/4) [30–95%] of good ones; gpt-4o-mini "
        "caught 50% (1/2) [9–91%] and passed 100% (2/2) [34–100%] (their own family's copies and "
        "failed seals apart).")
    shift = topics["phase-shift"]
    # Recall 6/12 -> 11/12 (+5/12 = +42 pp), TNR 9/12 -> 7/12 (−2/12 = −17 pp); towards 5 + 1 of
    # 24 (25%), away 0 + 3 (12.5%, rounded half up: 13%); kappa 7/88 = 0.08 -> 0.
    # Three units: no intervals (said in the sentence on people alone above).
    assert all(effects[name]["low"] is None for name in effects)
    assert shift[0] == (
        "Beside the models (phase 2), the invited judges' recall went from 50% to 92% "
        "(+42 pp) and their true-negative rate from 75% to 58% (−17 pp).")
    assert shift[1] == ("Of 24 paired verdicts, 6 changed towards the truth (25%) and 3 away "
                        "from it (13%).")
    assert shift[2] == ("Their agreement went from Fleiss' κ 0.08 to 0.00 (reported, never used "
                        "to decide).")
    assert shift[3] == "The guests are reported apart, under Phase shift."
    assert topics["rules"] == [
        "The rules in force are those of amendment 1, written after the first verdict.",
        "“tnr drops” fired (delta_tnr = −0.167, < 0: holds)."]
    blinding = topics["blinding"]
    # r1's guesses: d1 gpt-4o (model and family right), d2 gpt-4o (both wrong), d3 Google (family
    # right), g1 claude (both wrong): family 2/4, model 1/4, chance 1/3 each.
    assert blinding[1].startswith("Model reviewers who guessed the builder got its family in 50% "
                                  "(2/4) [15–85%] against chance 33% (p = ")
    assert blinding[1].endswith("better than chance is not shown (p below 0.05 for neither).")
    assert blinding[-1] == ("People were not asked to guess authors, so how far they stayed blind "
                            "is unmeasured.")
    # Every sentence is on the page, in its topic's list.
    page = text_of(to_html(scripted))
    for sentences in topics.values():
        for sentence in sentences:
            assert sentence in page


def _resolve(report: dict, path: str) -> list:
    """The values a figure path names: dotted keys, `[]` for every element of a list,
    `[in_force]` for the rule set in force."""
    values = [report]
    for part in path.split("."):
        key, _, selector = part.partition("[")
        values = [v[key] for v in values if isinstance(v, dict) and key in v]
        if selector == "]":
            values = [e for v in values for e in v]
        elif selector == "in_force]":
            values = [e for v in values for e in v if e["in_force"]]
    return values


@pytest.mark.parametrize("which", ["scripted", "realistic"])
def test_every_figure_path_of_what_was_found_is_in_the_report(which, scripted, host):  # noqa: F811
    report = scripted if which == "scripted" else build_report(build_revealed(host)[0])
    for topic in headline(report):
        assert topic["sentences"], topic["key"]
        for path in topic["figures"]:
            assert _resolve(report, path) != [], (topic["key"], path)
        assert f'id="{topic["section"]}"' in to_html(report)


def test_builders_and_reviewers_are_named_by_model_with_the_bundle_id_beside(scripted):  # noqa: F811
    page = to_html(scripted)
    start = page.index('id="plot-builders"')
    builders = page[start:page.index("</figure>", start)]
    for model, family, bundle_id in (("gpt-4o-2024-08-06", "OpenAI", "b1"),
                                     ("claude-3-5-sonnet-20241022", "Anthropic", "b2"),
                                     ("gemini-1.5-pro", "Google", "b3")):
        label = f'<th scope="row" class="lbl">{model}<span class="sub">{family} · {bundle_id}</span>'
        assert label in builders
    reviewers = page[page.index('id="plot-reviewers"'):]
    assert '<th scope="row" class="lbl">qwen3-1.7b<span class="sub">Alibaba</span>' in reviewers
    assert ('<th scope="row" class="lbl">gpt-4o-mini<span class="sub">OpenAI, own family&#x27;s '
            'copies</span>') in reviewers
    # The per-copy table names each copy's builder by model, its bundle id beside.
    assert '<td>gpt-4o-2024-08-06<span class="id"> b1</span></td>' in page


def test_proportions_read_as_percentages_and_differences_as_points(scripted):  # noqa: F811
    page = text_of(to_html(scripted))
    # Every k/n on the page is a percentage's: "50% (2/4)", never "(0.50)" or a bare "2/4 (".
    fractions = re.findall(r"(\S+) \((\d+)/(\d+)\)", page)
    assert fractions
    for shown, k, n in fractions:
        assert shown == (numbers.percent(int(k) / int(n)) if int(n) else "—"), (shown, k, n)
    assert not re.search(r"\(\d\.\d\d\) \[", page)  # the old "2/4 (0.50) [0.15, 0.85]"
    assert not re.search(r"[+\-−]\d\.\d{3} \[", page)  # the old signed "+0.417 [..]"
    # Pooled effects: rates as %, changes as pp; J01's recall in each phase, Wilson 2/4, 4/4.
    assert "Change in recall delta_recall +42 pp No interval" not in page
    assert "Change in recall delta_recall +42 pp" in page
    assert "50% (2/4) [15–85%]" in page and "100% (4/4) [51–100%]" in page


def test_the_marks_and_bars_sit_where_the_numbers_put_them(scripted):  # noqa: F811
    page = parse(to_html(scripted))

    def mark(plot, row, series, cls="mark"):
        [found] = [a for p, c, a in page.marks if p == plot and c == cls and a["data-row"] == row
                   and a["data-series"] == series]
        return found

    # J01 recall: 2 of 4 alone (50%), 4 of 4 beside the models (100%); J04 (the guest) 0 of 4.
    assert float(mark("plot-judges-recall", "J01", "1")["data-x"]) == 50.0
    assert float(mark("plot-judges-recall", "J01", "2")["data-x"]) == 100.0
    assert float(mark("plot-judges-recall", "J04", "1")["data-x"]) == 0.0
    # Its Wilson 2 of 4 bar: 0.150039 to 0.849961, drawn in percent of the plot's width.
    svg = to_html(scripted)
    bar = re.search(r'<g class="bar" data-row="J01" data-series="1"[^>]*><line x1="([\d.]+)%" '
                    r'y1="\d+" x2="([\d.]+)%"', svg)
    assert (float(bar[1]), float(bar[2])) == (15.0, 85.0)
    # Pooled changes on a symmetric points scale: the invited group's delta_recall +5/12 with its
    # bounds inside ±100 pp; the guest's delta_tnr is −1, the scale's left end.
    invited = scripted["phase_shift"]["pooled"]["invited"]["effects"]
    scale = points_scale([x for k in ("delta_recall", "delta_tnr") for x in invited[k].values()])
    assert float(mark("plot-changes-invited", "Recall", "value")["data-x"]) == pytest.approx(
        (5 / 12 - scale.lo) / (scale.hi - scale.lo) * 100, abs=0.005)
    assert float(mark("plot-changes-guest", "True-negative rate", "value")["data-x"]) == 0.0
    # Every series' colour and shape is named in words beside the plot.
    assert "Phase 1, alone: blue circle" in text_of(svg)
    assert "Phase 2, beside the models: orange square" in text_of(svg)


def test_scales():
    assert PERCENT.x(0.5) == 50.0 and PERCENT.x(-0.1) == 0.0 and PERCENT.x(1.2) == 100.0
    assert [t for _, t in PERCENT.ticks() if t] == ["0%", "50%", "100%"]
    assert points_scale([0.03, -0.04]) == Scale("points", -0.05, 0.05)
    assert points_scale([0.16, -0.4, 0.64]) == Scale("points", -1.0, 1.0)
    assert points_scale([0.2, None]) == Scale("points", -0.2, 0.2)
    assert points_scale([]) == Scale("points", -0.05, 0.05)


def test_the_per_copy_table_is_collapsed_and_counts_each_copy_s_verdicts(scripted):  # noqa: F811
    page = to_html(scripted)
    section = page[page.index('id="copies"'):page.index('id="sample"')]
    assert "<details>" in section and "<details open" not in section
    rows = re.findall(r"<tr><th scope=\"row\">(\w+)</th>", section)
    assert rows == ["d1", "d2", "d3", "d4", "g1", "g2", "g3", "g4", "u1"]
    # d1 (b1, seeded_defect): phase 1 F F F P (J04 the guest passed it), phase 2 F F F F; r1 and
    # r2 both failed it, rightly.
    d1 = section[section.index('<th scope="row">d1</th>'):section.index("</tr>", section.index(">d1<"))]
    assert d1 == ('<th scope="row">d1</th><td>task</td><td>gpt-4o-2024-08-06<span class="id"> b1'
                  '</span></td><td>seeded_defect</td><td></td><td class="n">3 fail, 1 pass</td>'
                  '<td class="n">4 fail</td><td class="n">3/4 → 4/4</td><td class="right">fail ✓</td>'
                  '<td class="right">fail ✓</td>')
    # u1 is of unknown truth: nothing is right or wrong.
    u1 = section[section.index('<th scope="row">u1</th>'):section.index("</tr>", section.index(">u1<"))]
    assert '<td class="n"></td><td class="">fail</td><td></td>' in u1


def test_numbers():
    assert numbers.percent(0.5111) == "51%" and numbers.percent(0.125) == "13%"
    assert numbers.percent(0.004) == "<1%" and numbers.percent(0.996) == ">99%"
    assert numbers.percent(0.0) == "0%" and numbers.percent(1.0) == "100%"
    assert numbers.percent(None) == numbers.percent(float("nan")) == "—"
    assert numbers.rate_text({"k": 46, "n": 90, "rate": 46 / 90, "low": 0.4096, "high": 0.6093}) == (
        "51% (46/90) [41–61%]")
    assert numbers.rate_text({"k": 0, "n": 0, "rate": None, "low": None, "high": None}) == "— (0/0)"
    assert numbers.points(0.16) == "+16 pp" and numbers.points(-0.04) == "−4 pp"
    assert numbers.points(0.004) == "0 pp" and numbers.points(-0.125) == "−13 pp"
    assert numbers.difference_text({"value": 0.16, "low": -0.4, "high": 0.64}) == "+16 pp [−40 to +64 pp]"
    assert numbers.difference_text({"value": 0.0, "low": None, "high": None}) == "0 pp"
    # One rule for p (issue 28 item 5): three decimals from 0.001 up, two significant figures in
    # powers of ten below; the issue's own test vectors.
    assert [numbers.p_text(p) for p in (0.14599, 0.125, 0.0204, 2.98e-6, 1.52e-10, 1.0)] == [
        "0.146", "0.125", "0.020", "3.0 × 10⁻⁶", "1.5 × 10⁻¹⁰", "1.000"]
    assert numbers.p_text(0.0074697) == "0.007" and numbers.p_text(0.00099) == "9.9 × 10⁻⁴"
    assert numbers.p_text(None) == "—"
    assert numbers.decimal(-0.1666, 3) == "−0.167" and numbers.decimal(-0.0001, 2) == "0.00"


@pytest.mark.django_db
def test_the_matrix_world_reads_by_model_and_its_anonymised_page_names_no_judge(host):
    report = build_report(build_matrix(host))
    page = to_html(report)
    for model in ("claude-3-5-sonnet-20241022", "Meta-Llama-3.1-405B-Instruct-Turbo",
                  "gpt-4o-mini-2024-07-18", "mistral-large-2411"):
        assert model in page
    assert all(name in page for name in JUDGES)
    published = to_html(anonymise(report))
    assert "Anonymised: judges are known by pseudonym only." in published
    assert not any(name in published for name in [*JUDGES, "Walk-in Guest"])
    # The unequal redaction (b1's copies only) is stated among the findings.
    assert ("Redactions were unequal across builders (claude-3-5-sonnet-20241022 2; the others "
            "none), and unequal redaction is itself a leak.") in text_of(page)


@pytest.mark.django_db
def test_a_findings_session_reads_as_findings_and_sets_no_judge_beside_a_model(host):
    # make_run2_bundle: findings f1 (on c2, real) and f2 (on c1, false alarm). Two judges call f1
    # real and f2 a false alarm alone, then both real beside the models.
    session = a_session(a_run(host, make_run2_bundle()), "open", kind="findings")
    for name in ("Finder", "Seeker"):
        judge = invite_and_join(session, name=name).judge
        for phase, plan in ((1, {"f1": "real", "f2": "false_alarm"}), (2, {"f1": "real", "f2": "real"})):
            for key, code in judge.assignments.values_list("item__key", "code"):
                verdict_record(judge=judge, code=code, phase=phase, value=plan[key])
            phase_lock(judge=judge, phase=phase)
    report = build_report(advance(session, "revealed"))
    topics = {t["key"]: t["sentences"] for t in headline(report)}
    assert topics["sample"][1] == ("The session held 2 findings raised on copies of 2 tasks by 3 "
                                   "builders; 2 model reviewers reviewed the copies.")
    assert topics["humans-and-models"][0].startswith(
        "Alone (phase 1), the invited judges confirmed 100% of real findings and rejected 100% "
        "of false alarms (2 judges who locked both phases, 4 paired verdicts; no interval: ")
    assert topics["humans-and-models"][-1] == (
        "The judges judged findings and the models copies: the two are not the same measure, and "
        "are not set side by side.")
    # f2: 2 false_alarm then 2 real, wrong beside the models: 2/2 → 0/2.
    assert topics["phase-shift"][1].startswith("Of 4 paired verdicts, 0 changed towards the truth")
    page = to_html(report)
    assert 'id="plot-judges-and-models"' not in page
    section = page[page.index('id="copies"'):page.index('id="sample"')]
    assert re.findall(r"<tr><th scope=\"row\">(\w+)</th>", section) == ["f1", "f2"]
    assert ('<th scope="row">f2</th><td>t-add</td><td>gpt-4o-2024-08-06<span class="id"> b1</span>'
            '</td><td>false_alarm</td><td>no type checks</td><td class="n">2 false_alarm</td>'
            '<td class="n">2 real</td><td class="n">2/2 → 0/2</td><td>confirmed</td>'
            '<td>qwen3-1.7b</td></tr>') in section


def test_the_opening_on_conditions_holds_for_a_reviewer_with_no_default_condition_review():
    """A reviewer asked only under two other conditions is compared against an empty default: its
    default rate reads as missing, never a failure to build the page."""
    no_reviews = {"n": 0, "flagged": 0, "rate": None, "low": None, "high": None, "no_verdict": 0}
    shifted = {"n": 2, "flagged": 1, "rate": 0.5, "low": 0.09, "high": 0.91, "no_verdict": 0}
    report = {"reviewers": [{"id": "r1", "model": "m1"}], "reviewer_conditions": {
        "default_condition": "clean",
        "reviewers": [{"reviewer": "r1", "discrimination": None,
                       "conditions": [{"condition": "told_fail",
                                       "by_class": {"defective": shifted, "good": shifted}},
                                      {"condition": "told_pass",
                                       "by_class": {"defective": no_reviews, "good": no_reviews}}],
                       "comparisons": [{"condition": "told_fail", "truth_class": "defective",
                                        "only_default": 0, "only_condition": 0, "p_value": None}]}]}}
    [sentence] = _conditions(report)["sentences"]
    assert sentence == ("m1: under told_fail it flagged 50% of defective copies against — under "
                        "clean (0 flagged under clean only, 0 under told_fail only, p = —).")


def _judges_section(page: str) -> str:
    return page[page.index('id="judges"'):page.index('id="phase-shift"')]


def _plot_rows(page: str, plot_id: str) -> list[str]:
    """The row labels of one plot, in order."""
    start = page.index(f'id="{plot_id}"')
    plot = page[start:page.index("</figure>", start)]
    return re.findall(r'<th scope="row" class="lbl">([^<]+)', plot)


@pytest.mark.django_db
def test_judges_who_gave_no_verdict_are_listed_once_apart_and_left_out_of_the_plots(host, schema):
    """A guest who joined and left and a judge who drafted and never locked filled every plot and
    per-judge table with "— (0/0)" rows (issue 28, Also). They are listed once, apart; the JSON
    keeps their (empty) scores and marks them."""
    session = a_session(a_run(host, make_run2_bundle()), "open")
    ada = invite_and_join(session, name="Ada").judge  # J01: judges both phases
    code = guests_configure(session=session, actor="test", allow=True).guest_code
    guest_join(code=code, display_name="Walk-in", client_address="203.0.113.9")  # J02: leaves
    drafty = invite_and_join(session, name="Drafty").judge  # J03: drafts, never locks
    answer_all(ada, 1, "fail", lock=True)
    answer_all(ada, 2, "keep", lock=True)
    answer_all(drafty, 1, "pass")
    report = build_report(advance(session, "revealed"))

    assert report["sample"]["achieved"]["judges_without_verdicts"] == ["J02", "J03"]
    assert [s["judge"] for s in report["scores"]["judges"]] == ["J01", "J02", "J03"]
    assert schema_errors(schema, exported(report)) == []
    page = to_html(report)
    for plot in ("plot-judges-recall", "plot-judges-tnr"):
        assert _plot_rows(page, plot) == ["J01"], plot
    assert not any(a["data-row"] in ("J02", "J03") for _, _, a in parse(page).marks)
    section = _judges_section(page)
    who_judged = section[section.index("<h3>Who judged</h3>"):section.index("</table>")]
    rest = section.replace(who_judged, "")
    assert "— (0/0)" not in rest
    # Listed once each, apart, with what they left behind; nowhere else in the section but the
    # table of who joined.
    apart = text_of(rest[rest.index("Joined, gave no verdict"):])
    assert ("J02 Walk-in (guest) and J03 Drafty (invited; 6 unlocked drafts, never scored) "
            "joined and gave no verdict") in apart
    assert text_of(rest).count("J02") == text_of(rest).count("J03") == 1
    # The headline says so too.
    [sample] = [t["sentences"] for t in headline(report) if t["key"] == "sample"]
    assert sample[1] == ("2 judges joined and gave no verdict (J02 and J03): listed apart, out of "
                         "the plots and per-judge tables.")
