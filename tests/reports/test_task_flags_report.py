"""The report's task flags section (issue 29 item 3): per flagged task, the judges who saw it and,
per phase, kind and severity, the share of them who flagged it (k/n, Wilson 95%); locked flags
only; said plainly when there are none or the session did not collect them."""

import csv
import io
import json
import math
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from judging.services import phase_lock, task_flag_record
from reports.build import build_report
from reports.export import FLAG_COLUMNS, to_json
from reports.html import to_html
from reports.render import render_report
from tests.host.test_host_pages import page, url
from tests.worlds import a_run, a_session, advance, answer_all, client_as, codes, invite_and_join
from tests.worlds import make_run2_bundle as run2

SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "reports" / "schemas"
                     / "report-2.schema.json").read_text(encoding="utf-8"))


def wilson(k, n, z=1.959963984540054):
    """The Wilson score interval, written out here."""
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def schema_errors(report):
    validator = Draft202012Validator(SCHEMA, format_checker=Draft202012Validator.FORMAT_CHECKER)
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(report)]


def task_of(judge):
    return {a.item.task.bundle_id for a in judge.assignments.select_related("item__task")}


@pytest.fixture
def flagged(host):
    """Four judges, each given one whole task of two (by task, three copies each): two saw t-add,
    two t-sub. On t-add one flags tests_unfair (severity 2, then 3 in phase 2), the other
    underspecified (2, phase 1 only); on t-sub one judge leaves a phase-2 flag as a draft (never
    locked). Revealed."""
    run = a_run(host, run2())
    session = a_session(run, "open", task_flags=True, by_task=True, items_per_judge=3)
    judges = [invite_and_join(session, name=f"J{n}").judge for n in range(4)]
    by_task = {}
    for judge in judges:
        (task,) = task_of(judge)
        by_task.setdefault(task, []).append(judge)
    assert sorted(len(v) for v in by_task.values()) == [2, 2]
    (a1, a2), (s1, s2) = by_task["t-add"], by_task["t-sub"]
    task_flag_record(judge=a1, code=codes(a1)[0], phase=1, kind="tests_unfair", severity=2,
                     reason="rejects a right answer")
    task_flag_record(judge=a2, code=codes(a2)[1], phase=1, kind="underspecified", severity=2,
                     reason="which overflow?")
    for judge in judges:
        answer_all(judge, 1, "pass", lock=True)
    task_flag_record(judge=a1, code=codes(a1)[2], phase=2, kind="tests_unfair", severity=3,
                     reason="worse than I thought")
    task_flag_record(judge=s1, code=codes(s1)[0], phase=2, kind="other", severity=1,
                     reason="a draft never locked")
    for judge in (a1, a2, s2):
        answer_all(judge, 2, "keep", lock=True)
    return advance(session, "revealed"), {"a1": a1, "a2": a2}


def test_flagged_tasks_with_the_share_of_the_judges_who_saw_them(flagged):
    session, judges = flagged
    report = json.loads(to_json(build_report(session)))
    assert schema_errors(report) == []
    section = report["task_flags"]
    assert section["collected"] is True
    assert section["drafts_left_out"] == 1
    (task,) = section["tasks"]  # t-sub has no locked flag: it is not listed
    assert task["task"] == "t-add"
    assert task["seen_by"] == sorted([judges["a1"].pseudonym, judges["a2"].pseudonym])
    phases = {p["phase"]: p for p in task["phases"]}

    def share(phase, kind=None, severity=None):
        entry = phases[phase]
        if kind is None:
            return entry["flagged"]
        by_kind = next(k for k in entry["by_kind"] if k["kind"] == kind)
        if severity is None:
            return by_kind["flagged"]
        return next(s for s in by_kind["by_severity"] if s["severity"] == severity)["share"]

    assert (share(1)["k"], share(1)["n"]) == (2, 2)
    assert (share(1, "tests_unfair", 2)["k"], share(1, "tests_unfair", 2)["n"]) == (1, 2)
    assert share(1, "tests_unfair", 3)["k"] == 0
    assert share(1, "underspecified", 2)["k"] == 1
    assert share(1, "other")["k"] == 0
    assert (share(2)["k"], share(2)["n"]) == (1, 2)
    assert share(2, "tests_unfair", 3)["k"] == 1 and share(2, "underspecified")["k"] == 0
    low, high = wilson(1, 2)
    half = share(1, "tests_unfair")
    assert (half["rate"], half["low"], half["high"]) == pytest.approx((0.5, low, high), abs=1e-9)
    assert sorted((f["judge"], f["phase"], f["kind"], f["severity"], f["reason"])
                  for f in task["flags"]) == sorted([
        (judges["a1"].pseudonym, 1, "tests_unfair", 2, "rejects a right answer"),
        (judges["a1"].pseudonym, 2, "tests_unfair", 3, "worse than I thought"),
        (judges["a2"].pseudonym, 1, "underspecified", 2, "which overflow?")])
    page = to_html(build_report(session))
    assert 'id="task-flags"' in page and "rejects a right answer" in page
    assert "a draft never locked" not in page
    assert b"a draft never locked" not in to_json(build_report(session))


def test_no_flags_and_no_collection_are_said_apart(host):
    run = a_run(host, run2())
    for task_flags, words in ((True, "No judge flagged a task."),
                              (False, "This session did not collect task flags.")):
        session = a_session(run, "open", task_flags=task_flags)
        judge = invite_and_join(session, name="Quiet").judge
        answer_all(judge, 1, "pass")
        phase_lock(judge=judge, phase=1)
        session = advance(session, "revealed")
        report = json.loads(to_json(build_report(session)))
        assert schema_errors(report) == []
        assert (report["task_flags"]["collected"], report["task_flags"]["tasks"],
                report["task_flags"]["note"]) == (task_flags, [], words)
        assert words in to_html(build_report(session))


def test_the_flags_csv_has_a_row_per_locked_flag(flagged, host):
    """Task flags are not verdicts, so they have a CSV of their own: one row per locked flag (the
    draft left out), judges as pseudonyms, by judge then phase, offered beside the verdicts."""
    session, judges = flagged
    a1, a2 = judges["a1"].pseudonym, judges["a2"].pseudonym
    text = render_report(build_report(session), "flags").decode("utf-8")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows[0] == FLAG_COLUMNS == ["judge", "group", "phase", "task", "kind", "severity",
                                       "reason"]
    assert rows[1:] == sorted([
        [a1, "invited", "1", "t-add", "tests_unfair", "2", "rejects a right answer"],
        [a1, "invited", "2", "t-add", "tests_unfair", "3", "worse than I thought"],
        [a2, "invited", "1", "t-add", "underspecified", "2", "which overflow?"]])
    # (The download itself, through the report builder: tests/host/test_host_pages.py.)
    assert url("report", session_id=session.pk, fmt="flags") in page(
        client_as(host).get(url("session", session_id=session.pk)))


def test_a_formula_in_a_flags_reason_is_neutralised_and_no_flags_is_a_header(host):
    session = a_session(a_run(host, run2()), "open", task_flags=True)
    judge = invite_and_join(session, name="Formula").judge
    task_flag_record(judge=judge, code=codes(judge)[0], phase=1, kind="other", severity=1,
                     reason="=HYPERLINK(\"http://x\")")
    answer_all(judge, 1, "pass", lock=True)
    rows = list(csv.reader(io.StringIO(
        render_report(build_report(advance(session, "revealed")), "flags").decode(), newline="")))
    assert rows[1][-1] == "'=HYPERLINK(\"http://x\")"
    # A session that collected none: the header alone, and no link on its page.
    plain = a_session(a_run(host, run2()), "open")
    answer_all(invite_and_join(plain).judge, 1, "pass", lock=True)
    plain = advance(plain, "revealed")
    assert render_report(build_report(plain), "flags").decode() == ",".join(FLAG_COLUMNS) + "\r\n"
    assert url("report", session_id=plain.pk, fmt="flags") not in page(
        client_as(host).get(url("session", session_id=plain.pk)))
