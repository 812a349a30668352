"""A run's tasks, copies and findings on the run's page, a hundred at a time (`?tasks=K`,
`?copies=K`, `?findings=K`), with the copies counted by truth above their list. A SWE-bench run
holds a few thousand copies (500 tasks, each with a statement, five builders); the page once
listed every one of them, and every task's statement, growing with the run."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from judging.selectors.host import RUN_ROWS_PER_PAGE
from judging.services import truth_correct
from tests.host.test_host_pages import page, url
from tests.host.test_run_reviews import rows
from tests.worlds import GOOD, a_run, client_as, make_run2_bundle

pytestmark = pytest.mark.django_db

TASKS = 130
FINDINGS = 150


# Each task's copy's truth, by its number: every fifth seeded_defect, every seventh (not fifth)
# tests_fail, the rest known_good.
def truth_of(n: int) -> str:
    return "seeded_defect" if n % 5 == 0 else "tests_fail" if n % 7 == 0 else "known_good"


def big_bundle() -> dict:
    """130 tasks, one copy of each by b1 (c000..c129), 150 findings on c000."""
    return make_run2_bundle(
        tasks=[{"id": f"t{n:03}", "title": f"Task {n}", "statement": f"Statement {n}."}
               for n in range(TASKS)],
        builders=[{"id": "b1", "model": "gpt-4o-2024-08-06", "family": "OpenAI"}],
        copies=[{"id": f"c{n:03}", "task": f"t{n:03}", "builder": "b1", "format": "text",
                 "content": GOOD + f"# {n}\n", "truth": truth_of(n),
                 "defect": "off by one" if truth_of(n) == "seeded_defect" else None}
                for n in range(TASKS)],
        reviewers=[{"id": "r1", "model": "qwen3-1.7b", "family": "Alibaba"}],
        reviews=[{"reviewer": "r1", "copy": "c000", "verdict": "pass", "reason": "fine"}],
        findings=[{"id": f"f{n:03}", "copy": "c000", "text": f"finding {n}", "raised_by": ["r1"],
                   "proposed_verdict": "confirmed", "truth": "real"} for n in range(FINDINGS)],
    )


@pytest.fixture
def big_run(host):
    return a_run(host, big_bundle())


def section(body: str, anchor: str, end: str) -> str:
    return body[body.index(f'id="{anchor}"'):body.index(f'id="{end}"')]


# (anchor, the section after it, how many, each row's first cell by its number)
LISTS = [
    ("tasks", "builders", TASKS, lambda n: f"t{n:03}"),
    ("copies", "reviewers", TASKS, lambda n: f"c{n:03}"),
    ("findings", "corrections", FINDINGS, lambda n: f"f{n:03}"),
]


@pytest.mark.parametrize(("anchor", "end", "total", "first_cell"), LISTS)
def test_each_list_comes_a_hundred_rows_at_a_time_in_the_bundles_order(host, big_run, anchor, end,
                                                                       total, first_cell):
    assert RUN_ROWS_PER_PAGE == 100
    client = client_as(host)
    seen = []
    for number in (1, 2):
        body = page(client.get(url("run", run_id=big_run.pk), {anchor: number}))
        listed = section(body, anchor, end)
        shown = rows(listed)
        assert len(shown) == (100 if number == 1 else total - 100)
        first, last = (number - 1) * 100 + 1, min(number * 100, total)
        assert f"{anchor.capitalize()} {first}–{last} of {total}" in listed
        assert (f'href="?{anchor}={number + 1}#{anchor}" rel="next"' in listed) == (number == 1)
        assert (f'href="?{anchor}={number - 1}#{anchor}" rel="prev"' in listed) == (number == 2)
        seen += [row[0] for row in shown]
    assert seen == [first_cell(n) for n in range(total)]
    # Out of range is the nearest page; anything else the first.
    last = section(page(client.get(url("run", run_id=big_run.pk), {anchor: "99"})), anchor, end)
    assert f"{anchor.capitalize()} 101–{total} of {total}" in last
    for junk in ("0x1", "", "-1e9", "two"):
        first = section(page(client.get(url("run", run_id=big_run.pk), {anchor: junk})), anchor, end)
        assert f"{anchor.capitalize()} 1–100 of {total}" in first, junk


def test_one_lists_page_leaves_the_others_where_they_are(host, big_run):
    body = page(client_as(host).get(url("run", run_id=big_run.pk), {"copies": 2}))
    assert "Copies 101–130 of 130" in body
    assert "Tasks 1–100 of 130" in body and "Findings 1–100 of 150" in body
    # Turning one list's page keeps the pages the others are on (and only those numbers).
    body = page(client_as(host).get(url("run", run_id=big_run.pk),
                                    {"copies": 2, "findings": 2, "evil": "x"}))
    assert 'href="?copies=2&amp;findings=2&amp;tasks=2#tasks" rel="next"' in body
    assert 'href="?findings=2&amp;copies=1#copies" rel="prev"' in body
    assert 'href="?copies=2&amp;findings=1#findings" rel="prev"' in body
    assert "evil" not in body


def test_the_copies_are_counted_by_truth_above_their_list(host, big_run):
    truth_correct(run=big_run, item="c001", truth="tests_pass", note="rerun", actor="test")
    body = page(client_as(host).get(url("run", run_id=big_run.pk)))
    copies = section(body, "copies", "reviewers")
    counts = {truth: sum(1 for n in range(TASKS) if truth_of(n) == truth)
              for truth in ("known_good", "seeded_defect", "tests_fail")}
    counts["known_good"] -= 1  # c001, corrected to tests_pass
    assert "Copies (130)" in body
    assert (f"By truth: known_good {counts['known_good']}, seeded_defect "
            f"{counts['seeded_defect']}, tests_fail {counts['tests_fail']}, tests_pass 1; "
            "1 corrected since the import.") in copies


def test_a_small_run_lists_everything_without_pages(host):
    run = a_run(host, make_run2_bundle())
    body = page(client_as(host).get(url("run", run_id=run.pk)))
    assert len(rows(section(body, "copies", "reviewers"))) == 6
    assert 'aria-label="Pages of' not in body
    assert "Copies 1–6 of 6" not in body  # a single page needs no range


def test_the_page_is_bounded_and_costs_the_same_statements_at_any_size(host, big_run):
    client = client_as(host)
    small = a_run(host, make_run2_bundle())
    client.get(url("run", run_id=small.pk))  # the session's own first statements
    counts = []
    for run in (small, big_run):
        with CaptureQueriesContext(connection) as queries:
            body = page(client.get(url("run", run_id=run.pk)))
        counts.append(len(queries))
    assert counts[0] == counts[1]
    assert len(body) < 150_000
