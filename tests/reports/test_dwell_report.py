"""Dwell time in the report (issue 30 item 4), end to end from item_save: every verdict row
carries the server's interval beside the page's time, and each judge's scores carry, per phase,
the median page-measured time per item and the answers under one second by either measure, in
the JSON (valid against the schema) and in the HTML report's judges section; the figures checked
against the stored verdicts, worked out here with the standard library."""

import html
import json
import re
import statistics
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from judging.models import Verdict
from judging.services import phase_lock
from reports.build import build_report
from reports.export import to_json
from reports.html import to_html
from tests.support.clock import pinned_answer_clock
from tests.support.verdicts import verdict_record
from tests.worlds import a_run, a_session, advance, codes, invite_and_join

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "reports" / "schemas"
                     / "report-2.schema.json").read_text(encoding="utf-8"))


@pytest.fixture
def revealed(host):
    """Three judges answering at different paces under a stepping server clock: J01 reads each
    item at length, J02 answers some in under a second (by the page, and by the server), J03
    locks phase 1 and leaves phase 2 as drafts (never counted)."""
    session = a_session(a_run(host), "open")
    judges = [invite_and_join(session, name=name).judge for name in ("Ada", "Bo", "Cy")]
    paces = [(35.0, 12.5, 80.25), (0.2, 0.9, 5.0), (3.0, 0.0, 44.0)]
    with pinned_answer_clock(steps=(0.5, 4.0, 0.25, 30.0)):
        for judge, pace in zip(judges, paces, strict=True):
            own = codes(judge)
            for n, code in enumerate(own):
                verdict_record(judge=judge, code=code, phase=1, value=("pass", "fail")[n % 2],
                               seconds_spent=pace[n % len(pace)])
            phase_lock(judge=judge, phase=1)
            for n, code in enumerate(own):
                verdict_record(judge=judge, code=code, phase=2, value="keep",
                               seconds_spent=pace[(n + 1) % len(pace)] / 2)
            if judge is not judges[2]:
                phase_lock(judge=judge, phase=2)
    return advance(session, "revealed"), judges


def expected_dwell(judge) -> dict:
    out = {}
    for phase in (1, 2):
        rows = list(Verdict.objects.filter(assignment__judge=judge, phase=phase, locked=True)
                    .values_list("seconds_spent", "server_seconds"))
        out[str(phase)] = {
            "answers": len(rows),
            "median_seconds": statistics.median(s for s, _ in rows) if rows else None,
            "under_one_second": sum(1 for s, _ in rows if s < 1),
            "server_under_one_second": sum(1 for _, server in rows
                                           if server is not None and server < 1),
        }
    return out


def test_each_verdict_row_carries_the_servers_interval_and_each_judge_the_dwell_figures(revealed):
    session, judges = revealed
    report = json.loads(to_json(build_report(session)))
    validator = Draft202012Validator(SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER)
    assert [e.message for e in validator.iter_errors(report)] == []

    stored = {(v.assignment.judge.pseudonym, v.assignment.code, v.phase): v.server_seconds
              for v in Verdict.objects.filter(assignment__judge__session=session)
              .select_related("assignment__judge")}
    listed = {(v["judge"], v["code"], v["phase"]): v["server_seconds"] for v in report["verdicts"]}
    assert listed == stored
    # The first answer of each judge's phase has none; every other one is a step of the clock.
    assert sum(1 for s in listed.values() if s is None) == 2 * len(judges)
    assert {s for s in listed.values() if s is not None} <= {0.5, 4.0, 0.25, 30.0}
    for v in report["verdicts"]:  # beside the page's time, in that order
        keys = list(v)
        assert keys.index("server_seconds") == keys.index("seconds_spent") + 1

    dwell = {s["judge"]: s["dwell"] for s in report["scores"]["judges"]}
    assert dwell == {judge.pseudonym: expected_dwell(judge) for judge in judges}
    # The world is not trivial: quick answers by each measure, and J03's drafts left out.
    ada, bo, cy = (dwell[j.pseudonym] for j in judges)
    assert ada["1"]["under_one_second"] == 0 and bo["1"]["under_one_second"] > 0
    assert bo["1"]["server_under_one_second"] > 0
    assert cy["2"] == {"answers": 0, "median_seconds": None, "under_one_second": 0,
                       "server_under_one_second": 0}
    assert "page" in report["scores"]["definitions"]["dwell"]
    assert "server" in report["scores"]["definitions"]["dwell"]


def test_the_html_reports_judges_section_has_the_time_per_item_table(revealed):
    session, judges = revealed
    report = build_report(session)
    page = to_html(report)
    section = page[page.index('<h2 id="judges">'):]
    section = section[:section.index("</section>")]
    assert "<h3>Time per item</h3>" in section
    rows = [" ".join(html.unescape(re.sub(r"<[^>]+>", " ", r)).split())
            for r in re.findall(r"<tr>.*?</tr>", section[section.index("Time per item"):],
                                flags=re.S)]
    header, *body = rows[:1 + 5]
    assert header == ("Judge Group Phase Locked answers Median time per item (page) Under 1 s "
                      "(page) Under 1 s after the previous answer (server)")
    shown = []
    for judge in judges:
        for phase, block in expected_dwell(judge).items():
            if block["answers"]:  # a phase without locked answers has no row
                shown.append(f"{judge.pseudonym} Invited {phase} {block['answers']} "
                             f"{block['median_seconds']:.1f} s {block['under_one_second']} "
                             f"{block['server_under_one_second']}")
    assert body == shown
