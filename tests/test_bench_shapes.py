"""The load benchmark's checks of what each page holds (bench/shapes.py, issue 32 item 4).

Each check passes on the real page as the product serves it today, so a page that changes shape
fails here, not after a benchmark run counted its responses as errors (the copy frame's `<pre`
did that for weeks); and each fires on a page of the wrong shape (the old `<pre` frame, a page
missing its marker), so its silence in a run counts. The last tests show the benchmark itself
stopping, loudly, on such a page: the load loop raises instead of counting, and bench/run.py exits
non-zero naming the page and what was missing.
"""

import asyncio
import json
import re

import pytest
from aiohttp import web
from django.test import Client, RequestFactory

from bench import run, shapes
from bench.shapes import PageChanged
from bench.urls import hello
from content.rendering import frame_document
from judging.enums import SessionKind, SessionState
from judging.models import Assignment
from reports.build import build_report
from reports.render import render_report
from tests.worlds import (
    a_run,
    a_session,
    advance,
    answer_all,
    client_as,
    codes,
    invite_and_join,
    make_run2_bundle,
)

# The copy frame as it was before issue 16 made it rows: what bench/run.py still looked for.
OLD_FRAME = frame_document('<pre class="copy">def add(a, b):\n    return a + b\n</pre>').encode()


def check(shape, response):
    return shape.check(response.status_code, response.headers, response.content, "test")


@pytest.mark.django_db
def test_every_check_passes_on_the_pages_as_they_are_today(host, open_session):
    session = open_session
    judge, other = (invite_and_join(session, name).judge for name in ("Ann", "Bo"))
    client, url_id = client_as(judge), session.url_id
    assert check(shapes.hello(), hello(RequestFactory().get("/bench/hello"))) is None
    for code in codes(judge):  # text, diff and markdown copies
        assert check(shapes.item(code, 1), client.get(f"/s/{url_id}/i/{code}/")) is None
        assert check(shapes.frame(), client.get(f"/s/{url_id}/i/{code}/frame")) is None
        assert check(shapes.save(), client.post(
            f"/s/{url_id}/i/{code}/", {"verdict": "pass", "phase": "1", "reason": "",
                                      "seconds_spent": "1"}, HTTP_ACCEPT="application/json")) is None
    assert check(shapes.review(1), client.get(f"/s/{url_id}/lock/")) is None
    assert check(shapes.lock(url_id, 1), client.post(f"/s/{url_id}/lock/",
                                                     {"confirm": "yes", "phase": "1"})) is None
    code = codes(judge)[0]
    assert check(shapes.item(code, 2), client.get(f"/s/{url_id}/i/{code}/")) is None
    answer_all(judge, 2)
    assert check(shapes.review(2), client.get(f"/s/{url_id}/lock/")) is None
    answer_all(other, 1)
    progress = client_as(host).get(f"/host/sessions/{session.pk}/judges")
    assert check(shapes.progress(2), progress) is None


@pytest.mark.django_db
def test_the_floors_answer_under_the_judging_loops_prefix_and_admit_only_the_judge(open_session,
                                                                                  settings):
    """The floors (bench/urls.py) are routed ahead of the product's /s/ pages, and `admitted` is
    the judge guard itself: the judge named, a browser without a judge refused as every judge page
    refuses it."""
    settings.ROOT_URLCONF = "bench.urls"
    judge = invite_and_join(open_session, "Ann").judge
    url_id = open_session.url_id
    assert check(shapes.statement(), Client().get(f"/s/{url_id}/bench/statement")) is None
    admitted = client_as(judge).get(f"/s/{url_id}/bench/admitted")
    assert check(shapes.admitted(judge.pseudonym), admitted) is None
    assert Client().get(f"/s/{url_id}/bench/admitted").status_code == 404
    with pytest.raises(PageChanged, match="missing 'admitted someone else'"):
        check(shapes.admitted("someone else"), admitted)


@pytest.mark.django_db
def test_the_pair_checks_pass_on_a_pairs_session_today(host):
    session = a_session(a_run(host, make_run2_bundle()), SessionState.OPEN, kind=SessionKind.PAIRS)
    judge = invite_and_join(session, "Ann").judge
    client, url_id = client_as(judge), session.url_id
    for code, first, second in Assignment.objects.filter(judge=judge).values_list(
            "code", "first_code", "second_code"):
        assert check(shapes.pair(code), client.get(f"/s/{url_id}/i/{code}/")) is None
        for side in (first, second):
            assert check(shapes.frame(), client.get(f"/s/{url_id}/i/{side}/frame")) is None
    with pytest.raises(PageChanged):  # a copies item page is not a pair's
        check(shapes.pair(code), client.get(f"/s/{url_id}/i/{first}/"))


@pytest.mark.django_db
def test_the_reason_check_passes_on_a_reasons_session_today_and_fires_on_a_copies_item(host,
                                                                                    open_session):
    session = a_session(open_session.run, SessionState.OPEN, kind=SessionKind.REASONS)
    judge = invite_and_join(session, "Ann").judge
    client, url_id = client_as(judge), session.url_id
    for code in codes(judge):
        assert check(shapes.reason(code), client.get(f"/s/{url_id}/i/{code}/")) is None
    copies_judge = invite_and_join(open_session, "Bo").judge
    code = codes(copies_judge)[0]
    with pytest.raises(PageChanged, match="missing '<section class=\"review-audited\"'"):
        check(shapes.reason(code), client_as(copies_judge).get(f"/s/{open_session.url_id}/i/{code}/"))


@pytest.mark.django_db
def test_the_report_checks_pass_on_each_format_of_a_revealed_report_and_fire_on_another(host,
                                                                                          open_session):
    """The bytes the download streams are render_report's (tests/reports/test_offprocess.py)."""
    answer_all(invite_and_join(open_session, "Ann").judge, 1)
    report = build_report(advance(open_session, SessionState.REVEALED))
    for fmt in ("json", "csv", "html"):
        assert shapes.report(fmt).check(200, {}, render_report(report, fmt)) is None
    with pytest.raises(PageChanged, match="JSON field 'schema' is 'blindjudge.report/1'"):
        shapes.report("json").check(200, {}, json.dumps({"schema": "blindjudge.report/1"}).encode())
    with pytest.raises(PageChanged, match="missing 'rater_kind,rater"):
        shapes.report("csv").check(200, {}, render_report(report, "jsonl"))
    without_policy = render_report(report, "html").replace(b'http-equiv="Content-Security-Policy"', b"")
    with pytest.raises(PageChanged, match="Content-Security-Policy"):
        shapes.report("html").check(200, {}, without_policy)


@pytest.mark.pure
def test_the_frame_check_fires_on_the_old_pre_frame():
    with pytest.raises(PageChanged) as changed:
        shapes.frame().check(200, {}, OLD_FRAME, "GET /s/x/i/ABC/frame")
    assert changed.value.page == "the copy frame"
    assert "missing '<span class=\"r'" in str(changed.value)
    assert "GET /s/x/i/ABC/frame" in str(changed.value)


@pytest.mark.django_db
def test_each_check_fires_on_its_page_with_a_marker_taken_out(host, open_session):
    session = open_session
    judge = invite_and_join(session, "Ann").judge
    client, url_id, code = client_as(judge), session.url_id, codes(judge)[0]
    item = client.get(f"/s/{url_id}/i/{code}/").content
    for marker in shapes.item(code, 1).contains:
        with pytest.raises(PageChanged, match=re.escape(repr(marker.decode()))):
            shapes.item(code, 1).check(200, {}, item.replace(marker, b""))
    with pytest.raises(PageChanged, match="the item page .phase 2. changed shape: missing"):
        shapes.item(code, 2).check(200, {}, item)  # a phase-1 page where phase 2 is asked for
    with pytest.raises(PageChanged, match="missing the JSON field 'saved_at'"):
        shapes.save().check(200, {}, json.dumps({"saved": True, "revision": 1}).encode())
    with pytest.raises(PageChanged, match="'saved' is False"):
        shapes.save().check(200, {}, b'{"saved": false, "revision": 1, "saved_at": "x"}')
    with pytest.raises(PageChanged, match="not a JSON answer"):
        shapes.save().check(200, {}, item)
    with pytest.raises(PageChanged, match="redirect to '/s/elsewhere/'"):
        shapes.lock(url_id, 1).check(302, {"Location": "/s/elsewhere/"}, b"")
    answer_all(judge, 1)
    review = client.get(f"/s/{url_id}/lock/").content
    with pytest.raises(PageChanged, match="name=\"confirm\""):
        shapes.review(1).check(200, {}, review.replace(b'name="confirm"', b'name="other"'))
    progress = client_as(host).get(f"/host/sessions/{session.pk}/judges").content
    with pytest.raises(PageChanged, match="1 of '<tr data-judge=\"', expected 2"):
        shapes.progress(2).check(200, {}, progress)


@pytest.mark.pure
def test_a_server_failing_under_load_is_counted_and_any_other_status_is_a_changed_page():
    assert "status 503" in shapes.frame().check(503, {}, b"busy")
    assert "status 500" in shapes.save().check(500, {}, b"database is locked")
    with pytest.raises(PageChanged, match="status 404, expected 200"):
        shapes.frame().check(404, {}, b"no such page")
    with pytest.raises(PageChanged, match="status 403, expected 200"):
        shapes.save().check(403, {}, b"CSRF")


def test_the_load_loop_stops_on_a_page_of_the_wrong_shape_instead_of_counting_it():
    """bench/run.py's drive against a server that serves the old frame: PageChanged, raised in
    the warm-up already, not a cell of errors."""
    async def serve_and_drive():
        async def old_frame(request):
            return web.Response(body=OLD_FRAME, content_type="text/html")

        app = web.Application()
        app.router.add_get("/frame", old_frame)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]
        try:
            await run.drive(f"http://127.0.0.1:{port}",
                            lambda client, n: ("GET", "/frame", {}, None, shapes.frame()),
                            concurrency=2, duration=5, max_requests=1000, warmup=0.2,
                            cpu_probe=lambda: 0.0)
        finally:
            await runner.cleanup()

    with pytest.raises(PageChanged, match="the copy frame changed shape .GET /frame."):
        asyncio.run(serve_and_drive())


def test_the_benchmark_exits_non_zero_naming_the_page_and_what_was_missing(monkeypatch, tmp_path):
    def stale(db, args, results_dir):
        shapes.frame().check(200, {}, OLD_FRAME, "GET /s/x/i/ABC/frame")

    monkeypatch.setattr(run, "bench_database", stale)
    with pytest.raises(SystemExit) as stopped:
        run.main(["--db", "sqlite", "--no-install-size", "--out", str(tmp_path / "r.json")])
    message = str(stopped.value.code)
    assert message.startswith("bench/run.py: stopped: the copy frame changed shape")
    assert "GET /s/x/i/ABC/frame" in message and "missing '<span class=\"r'" in message
    assert not (tmp_path / "r.json").exists()
