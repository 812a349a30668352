"""The judge's review before a lock marks answers given in under one second (issue 30 item 4):
the row's time reads "answered in 0 s — check", in words (not a colour alone), and a note above
the table says how many there are. The page-measured time decides (judge/pages.py says why)."""

import html
import re

import pytest

from tests.support.verdicts import verdict_record
from tests.worlds import client_as, codes, invite_and_join

MARK = "answered in 0 s — check"


@pytest.fixture
def judge(open_session):
    return invite_and_join(open_session, "Ada").judge


def review(judge, phase=1):
    return client_as(judge).get(f"/s/{judge.session.url_id}/lock/")


def row_text(response, code: str) -> str:
    """The words of the review table's row of `code`, as a person (or a screen reader) reads them."""
    page = response.content.decode()
    rows = [r for r in re.findall(r"<tr\b.*?</tr>", page, flags=re.S) if f">{code}</a>" in r]
    assert len(rows) == 1
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", rows[0])).split())


def test_answers_under_one_second_are_marked_in_words_and_the_others_show_their_time(judge):
    quick, edge, slow, *rest = codes(judge)
    times = {quick: 0.4, edge: 1.0, slow: 42.4}
    for code, seconds in times.items():
        verdict_record(judge=judge, code=code, phase=1, value="pass", seconds_spent=seconds)
    page = review(judge)
    assert page.status_code == 200
    assert MARK in row_text(page, quick) and "0 s —" in row_text(page, quick)
    assert '<strong class="check">answered in 0 s — check</strong>' in page.content.decode()
    assert MARK not in row_text(page, edge) and row_text(page, edge).endswith("1 s")
    assert MARK not in row_text(page, slow) and row_text(page, slow).endswith("42 s")
    for code in rest:  # unanswered: no time, no mark
        assert MARK not in row_text(page, code) and row_text(page, code).endswith("—")
    rows = {r["code"]: r["check"] for r in page.context["rows"]}
    assert rows == {quick: True, edge: False, slow: False, **dict.fromkeys(rest, False)}
    assert page.context["checks"] == 1
    note = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page.content.decode())).split())
    assert ("1 answer took under one second on its item (marked “answered in 0 s — check” below): "
            "open it and make sure it is what you meant before you lock.") in note


def test_the_page_measured_time_decides_not_the_servers_interval(judge):
    """Two answers saved within a second of each other by the server's clock, each read for
    a minute by the page's: nothing is marked (a lost connection sends retried saves together)."""
    first, second, *_ = codes(judge)
    verdict_record(judge=judge, code=first, phase=1, value="pass", seconds_spent=60)
    verdict_record(judge=judge, code=second, phase=1, value="fail", seconds_spent=61)
    page = review(judge)
    assert MARK not in page.content.decode() and page.context["checks"] == 0


def test_several_quick_answers_are_counted_in_the_note_and_phase_2_is_marked_too(judge):
    own = codes(judge)
    for code in own:
        verdict_record(judge=judge, code=code, phase=1, value="pass", seconds_spent=0)
    page = review(judge)
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page.content.decode())).split())
    assert f"{len(own)} answers took under one second on their items" in text
    assert page.content.decode().count(MARK) == len(own) + 1  # each row, and the note
    client_as(judge).post(f"/s/{judge.session.url_id}/lock/", {"confirm": "yes", "phase": "1"})
    verdict_record(judge=judge, code=own[0], phase=2, value="keep", seconds_spent=0.2)
    phase2 = review(judge)
    assert MARK in row_text(phase2, own[0]) and phase2.context["checks"] == 1
