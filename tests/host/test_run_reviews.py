"""A run's reviews on the host's pages: counted per reviewer and condition on the run's page, and
listed, 500 a page, on their own (`/host/runs/N/reviews?page=K`). A real run holds thousands (the
seed's tables: 1,620 reviews of 180 copies); the run's page once listed every one with its request
loaded, 560 KB of HTML for the seed, growing with every review."""

import html
import re

import pytest
from django.db import connection
from django.db.models import Count, Q
from django.test.utils import CaptureQueriesContext

from judging.models import Review, Run
from judging.selectors.host import REVIEWS_PER_PAGE
from tests.host.test_host_pages import page, url
from tests.host.test_import_page import SEED, SEED_FIELDS, file
from tests.worlds import a_run, client_as, make_run2_bundle

pytestmark = pytest.mark.django_db


@pytest.fixture
def seed_run(host):
    response = client_as(host).post(url("run_import"), {
        **SEED_FIELDS, "outputs": file(SEED / "items-v1.jsonl"),
        "reviews": file(SEED / "reviews-v1.jsonl")})
    assert response.status_code == 303
    return Run.objects.get()


def rows(body: str) -> list[list[str]]:
    """The body rows of the page's table, each as its cells' text."""
    tbody = body[body.index("<tbody>"):body.index("</tbody>")]
    return [[html.unescape(re.sub(r"<[^>]+>", "", cell)).strip()
             for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", tbody, re.S)]


def test_the_run_page_counts_each_reviewers_reviews_by_condition_and_lists_none(host, seed_run):
    body = page(client_as(host).get(url("run", run_id=seed_run.pk)))
    reviews = body[body.index('id="reviews"'):body.index('id="findings"')]
    assert "Reviews (1620)" in reviews and "(500 a page)" in reviews
    expected = (Review.objects.filter(run=seed_run)
                .values_list("reviewer__bundle_id", "condition")
                .annotate(n=Count("pk"), passed=Count("pk", filter=Q(verdict="pass")),
                          failed=Count("pk", filter=Q(verdict="fail")),
                          abstained=Count("pk", filter=Q(verdict="abstain")))
                .order_by("reviewer__position", "condition"))
    shown = rows(reviews)
    assert [row[:2] + row[2:6] for row in shown] == [
        [reviewer, condition + (" (default)" if condition == seed_run.default_condition else ""),
         str(n), str(passed), str(failed), str(abstained)]
        for reviewer, condition, n, passed, failed, abstained in expected]
    assert sum(int(row[2]) for row in shown) == 1620
    assert 'class="untrusted"' not in reviews  # no reason here
    assert len(body) < 100_000  # was 560 KB


def test_the_reviews_are_listed_500_a_page_in_the_bundles_order(host, seed_run):
    client = client_as(host)
    ordered = list(Review.objects.filter(run=seed_run).order_by("position")
                   .values_list("reviewer__bundle_id", "copy__bundle_id", "reason"))
    seen = []
    for number in (1, 2, 3, 4):
        body = page(client.get(url("run_reviews", run_id=seed_run.pk), {"page": number}))
        listed = rows(body)
        assert len(listed) == (REVIEWS_PER_PAGE if number < 4 else 1620 - 3 * REVIEWS_PER_PAGE)
        assert f"Reviews {(number - 1) * 500 + 1}–{min(number * 500, 1620)} of 1620" in body
        assert (f'href="?page={number + 1}" rel="next"' in body) == (number < 4)
        assert (f'href="?page={number - 1}" rel="prev"' in body) == (number > 1)
        seen += [(row[0], row[1], row[4]) for row in listed]
    assert seen == [(reviewer, copy, reason.strip()) for reviewer, copy, reason in ordered]
    # A page number out of range is the nearest page; anything else, the first.
    last = page(client.get(url("run_reviews", run_id=seed_run.pk), {"page": "99"}))
    assert "Reviews 1501–1620 of 1620" in last
    for junk in ("0x1", "", "-1e9", "two"):
        first = page(client.get(url("run_reviews", run_id=seed_run.pk), {"page": junk}))
        assert "Reviews 1–500 of 1620" in first, junk


def test_a_reviews_page_costs_the_same_statements_whatever_the_runs_size(host, seed_run):
    client = client_as(host)
    first_lines = b"".join((SEED / "reviews-v1.jsonl").read_bytes().splitlines(keepends=True)[:30])
    response = client.post(url("run_import"), {
        **SEED_FIELDS, "name": "thirty reviews", "again": "on",
        "outputs": file(SEED / "items-v1.jsonl"), "reviews": file("reviews.jsonl", first_lines)})
    assert response.status_code == 303
    small = Run.objects.get(name="thirty reviews")
    assert small.reviews.count() == 30

    def statements(run, path_name):
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url(path_name, run_id=run.pk)).status_code == 200
        return len(captured)

    for path_name in ("run", "run_reviews"):
        assert statements(seed_run, path_name) == statements(small, path_name), path_name


def test_reasons_are_text_and_another_hosts_run_is_not_found(host, other_host):
    bundle = make_run2_bundle()
    bundle["reviews"][0]["reason"] = '<img src=x onerror="alert(1)"> plainly wrong'
    run = a_run(host, bundle)
    body = page(client_as(host).get(url("run_reviews", run_id=run.pk)))
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt; plainly wrong" in body
    assert "<img src=x" not in body
    assert client_as(other_host).get(url("run_reviews", run_id=run.pk)).status_code == 404
