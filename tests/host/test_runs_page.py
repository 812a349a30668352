"""The host's runs page stays fast however large a run is (issue 25 low 10).

It counted each run's copies and findings with `Count(..., distinct=True)` over the joins of both,
copies x findings rows per run, and SQLite grouped them by every column of the run, its manifest
included: a run of 1,000 copies and 1,000 findings made the page take 12 s, 2,000 and 2,000 took
140 s, and an import refused beside such a run (the page shown again) took minutes. Each count is
now a subquery and the page reads none of a run's heavy columns.
"""

import json
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from judging.models import Run
from tests.worlds import a_run, client_as, make_run2_bundle

# Far above what the page needs (0.2 s on the 2-core machine, loaded), far below what the joins
# cost at this size (12 s at 1,000 x 1,000).
PAGE_SECONDS = 4.0


def large_bundle(items: int) -> bytes:
    """A valid run/2 bundle of `items` copies, each reviewed once and with one finding."""
    bundle = make_run2_bundle()
    bundle["copies"] = [{"id": f"c{i}", "task": "t-add", "builder": f"b{i % 3 + 1}", "format": "text",
                         "content": f"def add(a, b):\n    return a + b  # {i}\n", "truth": "known_good"}
                        for i in range(items)]
    bundle["reviews"] = [{"reviewer": "r2", "copy": f"c{i}", "verdict": "fail", "reason": "r"}
                         for i in range(items)]
    bundle["findings"] = [{"id": f"f{i}", "copy": f"c{i}", "text": "no type checks",
                           "raised_by": ["r2"], "proposed_verdict": "confirmed", "truth": "real"}
                          for i in range(items)]
    return json.dumps(bundle).encode()


def timed(request):
    with CaptureQueriesContext(connection) as captured:
        started = time.monotonic()
        response = request()
        seconds = time.monotonic() - started
    return response, seconds, [query["sql"] for query in captured.captured_queries]


def run_queries(sql):
    return [query for query in sql if 'FROM "judging_run"' in query]


@pytest.mark.django_db
def test_the_runs_page_counts_with_subqueries_and_answers_fast_beside_a_run_at_the_bundle_limit(
        host, settings):
    raw = large_bundle(1000)
    run = a_run(host, raw)
    # The run sits at the bundle limit: one more byte would have been refused.
    settings.BLINDJUDGE_MAX_BUNDLE_BYTES = len(raw)
    browser = client_as(host)

    listed, seconds, sql = timed(lambda: browser.get(reverse("host:runs")))
    assert listed.status_code == 200
    row = listed.content.decode().split(f"Run {run.pk}:", 1)[1].split("</tr>", 1)[0]
    assert row.count("<td>1000</td>") == 2  # its copies and its findings
    (runs,) = run_queries(sql)
    assert 'GROUP BY "judging_run"' not in runs  # no grouping over the run's columns
    assert runs.count("SELECT COUNT(") == 2  # a subquery per count
    assert '"judging_run"."manifest"' not in runs and '"judging_run"."bundle_run"' not in runs
    assert seconds < PAGE_SECONDS, f"the runs page took {seconds:.1f} s"

    # An import refused beside it shows the page again, with the same counts, as fast.
    over = SimpleUploadedFile("run.json", raw + b" ", content_type="application/json")
    refused, seconds, sql = timed(lambda: browser.post(reverse("host:run_import"), {"bundle": over}))
    assert refused.status_code == 400
    assert f"exceeds the limit of {len(raw)} bytes" in refused.content.decode()
    assert all('GROUP BY "judging_run"' not in query for query in run_queries(sql))
    assert seconds < PAGE_SECONDS, f"the refused import took {seconds:.1f} s"
    assert Run.objects.count() == 1


@pytest.mark.django_db
def test_the_runs_page_takes_the_same_queries_for_one_run_or_many_and_counts_each_alone(host):
    browser = client_as(host)
    a_run(host)
    _, _, one = timed(lambda: browser.get(reverse("host:runs")))
    second = a_run(host, large_bundle(5))
    third = a_run(host, make_run2_bundle(findings=[]))
    listed, _, three = timed(lambda: browser.get(reverse("host:runs")))
    assert len(three) == len(one)
    text = listed.content.decode()
    row = text.split(f"Run {second.pk}:", 1)[1].split("</tr>", 1)[0]
    assert row.count("<td>5</td>") == 2
    empty = text.split(f"Run {third.pk}:", 1)[1].split("</tr>", 1)[0]
    assert "<td>6</td><td>0</td>" in "".join(empty.split())  # six copies, no findings
