"""The judge's pages serve what the session stored when it opened (issue 12, item 1): the frame is
the stored bytes with a CSP built from the stored style hash, the item page shows the stored task,
rubric, finding text and reasons, nothing on those paths renders or reads a copy's content, and
the task and rubric are sanitised inert HTML with their hidden characters marked."""

import ast
import gzip
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from judging.models import Copy, CopyRender, FindingRender, SessionRender, TaskRender
from judging.renders import pack_frame
from judging.services import phase_lock, redactions_accept, session_open
from tests.worlds import a_run, a_session, answer_all, client_as, codes, invite_and_join, make_bundle

ROOT = Path(__file__).resolve().parents[2]
STORED = "<!doctype html><html><head><style>p{}</style></head><body><p>stored-marker</p></body></html>"
STORED_HASH = "sha256-c3RvcmVkLXN0eWxlLWhhc2gtZm9yLXRlc3Q="


def csp(response) -> dict[str, list[str]]:
    directives = {}
    for part in response["Content-Security-Policy"].split(";"):
        name, *values = part.split()
        directives[name] = values
    return directives


class Elements(HTMLParser):
    """Every element's tag and attribute names in a piece of HTML."""

    def __init__(self, html: str):
        super().__init__()
        self.seen: list[tuple[str, list[str]]] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.seen.append((tag, [name for name, _ in attrs]))


def page_url(session, code, frame=False):
    return f"/s/{session.url_id}/i/{code}/" + ("frame" if frame else "")


@pytest.mark.django_db
def test_the_frame_is_the_stored_document_with_a_csp_for_its_stored_style_hash(host):
    session = a_session(a_run(host), "open")
    judge = invite_and_join(session, "Reader").judge
    code = codes(judge)[0]
    copy_id = judge.assignments.get(code=code).item.copy_id
    CopyRender.objects.filter(session=session, copy_id=copy_id).update(
        frame_gzip=pack_frame(STORED), style_hash=STORED_HASH)
    client = client_as(judge)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(page_url(session, code, frame=True))
    assert response.status_code == 200
    assert response.content == STORED.encode("utf-8")
    assert "Content-Encoding" not in response and "Accept-Encoding" in response["Vary"]
    assert csp(response)["style-src"] == [f"'{STORED_HASH}'"]
    assert csp(response)["sandbox"] == [] and csp(response)["default-src"] == ["'none'"]
    # Serving reads the stored render and never the copy's row (its content, its truth).
    assert len(queries) <= 3
    copy_table = Copy._meta.db_table
    assert not [q["sql"] for q in queries.captured_queries
                if re.search(rf'\b"?{copy_table}"?\b', q["sql"])]


@pytest.mark.django_db
def test_a_browser_that_takes_gzip_gets_the_stored_bytes_as_they_are(host):
    """A hostile copy's frame can be megabytes of repeated marks: it is compressed once, at
    opening, and those bytes are what a browser gets (no decompressing, no compressing per
    request); a client that does not take gzip gets the document itself."""
    session = a_session(a_run(host), "open")
    judge = invite_and_join(session, "Reader").judge
    code = codes(judge)[0]
    copy_id = judge.assignments.get(code=code).item.copy_id
    stored = bytes(CopyRender.objects.get(session=session, copy_id=copy_id).frame_gzip)
    client = client_as(judge)
    browser = client.get(page_url(session, code, frame=True),
                         HTTP_ACCEPT_ENCODING="gzip, deflate, br, zstd")
    assert browser["Content-Encoding"] == "gzip" and "Accept-Encoding" in browser["Vary"]
    assert browser.content == stored
    assert gzip.decompress(browser.content).startswith(b"<!doctype html>")
    refused = client.get(page_url(session, code, frame=True), HTTP_ACCEPT_ENCODING="gzip;q=0, br")
    assert "Content-Encoding" not in refused
    assert refused.content == gzip.decompress(stored)
    # Positive control of the size: the worst case of the bench, 5 MB of a zero-width space
    # between letters (a 15 MB frame), is stored in a small fraction of it.
    assert len(pack_frame("<p>" + "a<span>⟦U+200B⟧</span>" * 400_000)) < 200_000


@pytest.mark.django_db
def test_a_frame_with_no_stored_render_is_not_found_never_rendered(host):
    session = a_session(a_run(host), "open")
    judge = invite_and_join(session, "Reader").judge
    code = codes(judge)[0]
    CopyRender.objects.filter(session=session).delete()
    assert client_as(judge).get(page_url(session, code, frame=True)).status_code == 404


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text("utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_the_judge_pages_and_the_judge_selectors_import_no_normaliser_or_renderer():
    """Nothing that serves a judge renders: judge/views.py imports neither the normaliser nor the
    renderer (nor the module that renders at opening), and the judge selectors import only the
    frame's CSP builder from it."""
    renderers = {"content.normalise", "content.rendering", "judging.renders"}
    assert imported_modules(ROOT / "judge" / "views.py") & renderers == set()
    selectors = ROOT / "judging" / "selectors" / "judge.py"
    assert imported_modules(selectors) & {"content.normalise", "content.rendering"} == set()
    tree = ast.parse(selectors.read_text("utf-8"))
    from_renders = [alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                    and node.module == "judging.renders" for alias in node.names]
    assert from_renders == ["frame_csp"]


@pytest.mark.django_db
def test_the_item_page_shows_the_stored_task_rubric_finding_and_reasons(host):
    run = a_run(host)
    session = a_session(run, "open", rubric="A rubric.")
    TaskRender.objects.filter(session=session).update(html="<p>stored-task-marker</p>")
    SessionRender.objects.filter(session=session).update(rubric_html="<p>stored-rubric-marker</p>")
    judge = invite_and_join(session, "Reader").judge
    client = client_as(judge)
    code = judge.assignments.filter(item__copy__reviews__isnull=False).values_list(
        "code", flat=True).first()
    page = client.get(page_url(session, code)).content.decode()
    assert "stored-task-marker" in page and "stored-rubric-marker" in page
    assert run.tasks.get().statement not in page
    # Phase 2: the reviewers' reasons as stored.
    stored = CopyRender.objects.get(session=session, copy=judge.assignments.get(code=code).item.copy)
    assert stored.reviews
    stored.reviews = [{**r, "reason_html": "stored-reason-marker"} for r in stored.reviews]
    stored.save()
    answer_all(judge, 1)
    phase_lock(judge=judge, phase=1)
    page = client.get(page_url(session, code)).content.decode()
    assert page.count("stored-reason-marker") == len(stored.reviews)
    # A findings session: the finding's text as stored.
    findings = a_session(run, "open", kind="findings")
    finder = invite_and_join(findings, "Finder").judge
    FindingRender.objects.filter(session=findings).update(html="stored-finding-marker")
    page = client_as(finder).get(page_url(findings, codes(finder)[0])).content.decode()
    assert "stored-finding-marker" in page


TASK = ("Fix the crash: see [the issue](https://evil.example/track?x=1) and "
        "![screenshot](https://evil.example/beacon.png).\n\n"
        "<script>alert('task')</script> <img src=x onerror=alert(1)>\n\n"
        "Hidden\u200bword, \u202edesrever\u202c, and Zeta Lab's *style*.")
RUBRIC = "Pass only if **tests** pass.\u2066 <b style='color:red'>bold</b>"


@pytest.mark.django_db
def test_the_task_and_rubric_are_sanitised_inert_html_with_marks_and_redactions(host):
    """Today the page printed them with `linebreaks`: the hidden characters went into the judge's
    page as they were and markdown links stayed text without their marks."""
    bundle = make_bundle()
    bundle["run"]["task"] = TASK
    draft = a_session(a_run(host, bundle), "draft", rubric=RUBRIC)
    redactions_accept(session=draft, patterns=["Zeta"], actor="test")
    session = session_open(session=draft, actor="test")
    judge = invite_and_join(session, "Reader").judge
    page = client_as(judge).get(page_url(session, codes(judge)[0])).content.decode()
    task = page.split('<summary>Task and rubric</summary>', 1)[1].split("</details>", 1)[0]
    for hidden in ("\u200b", "\u202e", "\u202c", "\u2066"):
        assert hidden not in page
    assert "\u27e6U+200B\u27e7" in task and "\u27e6U+202E\u27e7" in task and "\u27e6U+2066\u27e7" in task
    assert 'class="mark invisible"' in task and 'class="mark bidi"' in task
    assert "[redacted]" in task and "Zeta" not in task
    # Links and images are inert text: no href, no src, no element that loads or runs.
    assert '<span class="link">the issue</span>' in task
    assert "\u27e8https://evil.example/track?x=1\u27e9" in task
    assert "[image: screenshot \u27e8https://evil.example/beacon.png\u27e9]" in task
    elements = Elements(task)
    assert {tag for tag, _ in elements.seen} <= {"div", "p", "span", "em", "strong", "h2"}, elements.seen
    assert {name for _, attrs in elements.seen for name in attrs} <= {"class", "title"}
    assert "&lt;script&gt;" in task and "&lt;img src=x onerror=alert(1)&gt;" in task
    assert "<strong>tests</strong>" in task and "<em>style</em>" in task
    # Their marks are styled by the judge's static CSS (no inline style anywhere).
    css = (ROOT / "static" / "judge" / "judge.css").read_text("utf-8")
    for selector in (".mark", ".redacted", ".bidi", ".invisible", ".prose .link", ".prose .url"):
        assert selector in css
