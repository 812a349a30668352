"""The judge's instructions page (issue 17 item 2): the host's instructions as stored when the
session opened, and what the product says itself (the judge's item count and time estimate, the
two phases, the keys, each mark in its own look); linked from the welcome page and the items
page; guarded like every judge page. The leak canaries (tests/judge/test_leaks.py) walk it with
every other judge URL.
"""

import ast
import re
from pathlib import Path

import pytest
from django.urls import reverse

from content.instructions import _MARK_NAMES, _VERDICT_WORDS, KEEP_WORDS, MARK_SAMPLES, verdict_keys
from content.normalise import Segment
from content.rendering import _MARK_CLASS, _MARK_TITLE, mark_html
from judging.enums import SessionState
from judging.models import SessionRender
from judging.selectors.judge import VERDICT_LABELS
from judging.services import KEEP, session_update_draft, verdict_values
from tests.worlds import a_session, advance, answer_all, client_as, codes, invite_and_join

pytestmark = pytest.mark.django_db

TEXT = "Read each copy **to the end**.\n\n<script>alert('x')</script>"


def url(session):
    return reverse("judge_instructions", kwargs={"url_id": session.url_id})


@pytest.fixture
def instructed(run):
    """An open session of 2 items per judge whose host wrote instructions and 5 minutes an item."""
    draft = a_session(run, SessionState.DRAFT, rubric="Is add() right?", items_per_judge=2)
    session_update_draft(session=draft, actor="test", instructions=TEXT, minutes_per_item=5)
    return advance(draft, SessionState.OPEN)


def test_the_judge_reads_the_hosts_instructions_and_the_products_parts(instructed):
    judge = invite_and_join(instructed).judge
    response = client_as(judge).get(url(instructed))
    assert response.status_code == 200
    body = response.content.decode()
    stored = SessionRender.objects.get(session=instructed).instructions_html
    assert stored and stored in body  # served as stored at opening, not rendered again
    assert "<strong>to the end</strong>" in body
    assert "<script" not in body and "&lt;script&gt;" in body
    # Items and time: this judge's 2 items at the host's 5 minutes each.
    assert '<strong id="item-count">2 items</strong>' in body and "10 minutes" in body
    assert "5 minutes per item" in body
    # The keys, in the item page's words.
    for key, words in (("1", "Pass"), ("2", "Fail"), ("3", "Keep my phase-1 verdict")):
        assert re.search(rf"<kbd>{key}</kbd></td><td>{re.escape(words)}", body), key
    for key in ("j", "k", "Backspace", "?", "n", "Enter"):
        assert f"<kbd>{key}</kbd>" in body, key
    # Phase 2 and locking.
    assert "Phase 2: beside the model reviewers" in body and "A locked verdict never changes" in body
    # Each mark, drawn with the classes a copy's marks have, and its meaning.
    for css, title in (("redacted", "redacted by the host"),
                       ("invisible", "an invisible character"),
                       ("bidi", "a text-direction control character"),
                       ("mixed", "letters from mixed scripts")):
        assert f'<span class="mark {css}" title="{title}">' in body, css
    assert "⟦U+200B⟧" in body and "[redacted]" in body
    assert response["Cache-Control"].startswith("max-age=0") or "no-cache" in response["Cache-Control"]


def test_without_instructions_the_page_shows_the_products_parts_only(open_session):
    judge = invite_and_join(open_session).judge
    body = client_as(judge).get(url(open_session)).content.decode()
    assert "From the host" not in body
    assert '<strong id="item-count">6 items</strong>' in body and "18 minutes" in body


def test_a_findings_session_names_its_verdicts(run):
    session = a_session(run, SessionState.OPEN, kind="findings")
    judge = invite_and_join(session).judge
    body = client_as(judge).get(url(session)).content.decode()
    assert "<kbd>1</kbd></td><td>Real" in body and "<kbd>2</kbd></td><td>False alarm" in body


def test_the_verdict_words_are_the_item_pages(instructed):
    for kind, words in _VERDICT_WORDS.items():
        assert list(words) == [VERDICT_LABELS[v] for v in verdict_values(kind)]
        assert verdict_keys(kind)[-1] == (str(len(words) + 1), KEEP_WORDS + " (phase 2 only)")
    assert KEEP_WORDS == VERDICT_LABELS[KEEP]


def test_welcome_items_and_item_pages_link_it(instructed):
    judge = invite_and_join(instructed).judge
    browser = client_as(judge)
    link = f'href="{url(instructed)}"'
    welcome = browser.get(reverse("judge_welcome", kwargs={"url_id": instructed.url_id}))
    assert f'<a class="button" {link}>Read the instructions (2 min)</a>' in welcome.content.decode()
    items = browser.get(reverse("judge_home", kwargs={"url_id": instructed.url_id}))
    assert link in items.content.decode()
    item = browser.get(reverse("judge_item", kwargs={"url_id": instructed.url_id,
                                                     "code": codes(judge)[0]}))
    assert f"<a {link}>Instructions</a>" in item.content.decode()


def test_guarded_like_every_judge_page(instructed, open_session, anonymous):
    elsewhere = invite_and_join(open_session, name="Elsewhere").judge
    assert client_as(elsewhere).get(url(instructed)).status_code == 404
    assert anonymous.get(url(instructed)).status_code == 404
    assert anonymous.get("/s/zzzz2345zzzz2345zzzz23/instructions").status_code == 404


def test_it_stays_readable_through_both_phases(instructed):
    judge = invite_and_join(instructed).judge
    answer_all(judge, phase=1, lock=True)
    browser = client_as(judge)
    assert browser.get(url(instructed)).status_code == 200
    answer_all(judge, phase=2, value="keep", lock=True)
    assert browser.get(url(instructed)).status_code == 200


def test_the_mark_samples_are_the_renderers_own_marks():
    """Written out so that the judge's page renders nothing; held here to the renderer's output."""
    assert {kind for kind, _, _ in MARK_SAMPLES} == set(_MARK_CLASS) == set(_MARK_NAMES)
    for kind, text, sample in MARK_SAMPLES:
        assert mark_html(Segment(kind, text)) == sample, kind
        assert _MARK_NAMES[kind] == _MARK_TITLE[kind]


def test_the_instructions_page_imports_no_normaliser_or_renderer():
    """Nothing that serves a judge renders (as tests/judge/test_stored_renders.py holds for the
    other judge pages): the page and the product's parts import neither."""
    root = Path(__file__).resolve().parents[2]
    renderers = {"content.normalise", "content.rendering", "judging.renders"}
    for path in (root / "judge" / "instructions.py", root / "content" / "instructions.py"):
        tree = ast.parse(path.read_text("utf-8"))
        imported = {node.module for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom) and node.module}
        imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                     for alias in node.names}
        assert imported & renderers == set(), path
