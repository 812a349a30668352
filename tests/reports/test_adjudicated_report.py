"""The report's adjudicated section (issue 29 item 2): the run's adjudications beside the truth,
never over it; every judge and reviewer scored again on adjudicated items alone, apart; the
adjudication's protocol and commitment verified by verify_report like the session's own."""

import copy
import csv
import io
import json

import pytest

from blindjudge.errors import Conflict
from content.scoring import rate
from judging.enums import SessionKind, SessionState
from judging.services import item_save, phase_lock
from reports.build import build_report
from reports.export import to_csv, to_jsonl
from reports.html import to_html
from reports.verify import verify
from tests.judging.test_adjudication import unknown_bundle
from tests.reports.test_report_jsonl import ROW_SCHEMA_PATH, row_errors
from tests.worlds import a_run, a_session, advance, answer_all, invite_and_join


def adjudicated_bundle():
    """unknown_bundle() with reviews of c6 (of unknown truth): r1 passes it, r2 fails it."""
    bundle = unknown_bundle()
    bundle["reviews"] += [{"reviewer": "r1", "copy": "c6", "verdict": "pass", "reason": "ok"},
                          {"reviewer": "r2", "copy": "c6", "verdict": "fail", "reason": "bad"}]
    return bundle


def judged(session, verdicts_by_copy):
    """One judge who answers each copy (or finding) by its bundle id, in both phases."""
    judge = invite_and_join(session, f"Judge {session.pk}").judge
    for code, key in judge.assignments.values_list("code", "item__key"):
        item_save(judge=judge, code=code, phase=1, value=verdicts_by_copy[key])
    phase_lock(judge=judge, phase=1)
    answer_all(judge, 2, "keep", lock=True)
    return judge


def adjudicate(session, answers):
    judge = invite_and_join(session, "Ada").judge
    for code, key in judge.assignments.values_list("code", "item__key"):
        item_save(judge=judge, code=code, phase=1, value=answers[key], reason=f"why {key}")
    phase_lock(judge=judge, phase=1)
    return judge


@pytest.fixture
def world(host):
    run = a_run(host, adjudicated_bundle())
    copies = a_session(run, SessionState.OPEN)
    findings = a_session(run, SessionState.OPEN, kind=SessionKind.FINDINGS)
    fails_c6 = {f"c{n}": "pass" for n in range(1, 7)} | {"c6": "fail"}
    passes_all = {f"c{n}": "pass" for n in range(1, 7)}
    j1, j2 = judged(copies, fails_c6), judged(copies, passes_all)
    f1 = judged(findings, {"f1": "real", "f2": "real", "f3": "false_alarm"})
    adjudication = a_session(run, SessionState.OPEN, kind=SessionKind.ADJUDICATION,
                             unknown_copies=True)
    adjudicate(adjudication, {"finding:f2": "real", "finding:f3": "cannot_tell", "copy:c6": "fail"})
    copies, findings = (advance(s, SessionState.REVEALED) for s in (copies, findings))
    return {"copies": copies, "findings": findings, "adjudication": adjudication,
            "judges": (j1, j2, f1)}


def test_an_unrevealed_adjudication_is_listed_and_not_used(world):
    section = build_report(world["copies"])["adjudicated"]
    (entry,) = section["adjudications"]
    assert entry["used"] is False and "not revealed yet" in entry["why"]
    assert section["items"] == [] and section["scores"] is None
    assert f"session {world['adjudication'].pk} is not revealed yet" in section["why"]


def test_judges_and_reviewers_are_scored_on_adjudicated_items_alone(world):
    advance(world["adjudication"], SessionState.REVEALED)
    report = build_report(world["copies"])
    section = report["adjudicated"]
    (entry,) = section["adjudications"]
    assert entry["used"] and entry["adjudicator"] == "J01"
    assert entry["outside_the_matrix"]["status"] == "declared, not checked"
    assert entry["opened_after_reveal"] is False
    assert [j["name"] for j in entry["judges"]] == [None]
    # Beside the truth, never over it: c6 stays unknown everywhere else in the report.
    assert {c["id"]: c["truth"] for c in report["copies"]}["c6"] == "unknown"
    items = {i["item"]: i for i in section["items"]}
    assert items["copy:c6"]["reads"].startswith("unknown, adjudicated fail (")
    assert items["finding:f3"]["reads"].startswith("unknown, cannot tell (")
    assert items["finding:f2"]["reason"] == "why finding:f2"
    scores = section["scores"]
    assert (scores["copies_decided"], scores["findings_decided"]) == (1, 1)
    # Written out: on c6 alone (adjudicated fail), J01 failed it and J02 passed it.
    by_judge = {j["judge"]: j["phases"]["1"]["current"] for j in scores["judges"]}
    assert by_judge["J01"]["recall"] == rate(1, 1) and by_judge["J02"]["recall"] == rate(0, 1)
    assert by_judge["J01"]["tnr"] == rate(0, 0)
    # The main scores count no adjudicated item: c6 is unknown there.
    main = {j["judge"]: j["phases"]["1"]["current"] for j in report["scores"]["judges"]}
    assert main["J01"]["unknown_truth"] == 1
    reviewers = {r["reviewer"]: r["groups"] for r in scores["reviewers"]}
    r1 = next(iter(reviewers["r1"].values()))["current"]
    r2 = next(iter(reviewers["r2"].values()))["current"]
    assert (r1["recall"]["k"], r1["recall"]["n"]) == (0, 1)
    assert (r2["recall"]["k"], r2["recall"]["n"]) == (1, 1)
    assert verify(report)[0] == []


def test_a_findings_session_is_scored_on_its_adjudicated_findings(world):
    advance(world["adjudication"], SessionState.REVEALED)
    section = build_report(world["findings"])["adjudicated"]
    (judge,) = section["scores"]["judges"]
    # f2 adjudicated real, judged real; f3 cannot tell: unknown, not scored.
    assert judge["phases"]["1"]["current"]["recall"] == rate(1, 1)
    assert judge["phases"]["1"]["current"]["tnr"] == rate(0, 0)


def test_an_adjudication_opened_after_a_reveal_is_marked(host):
    run = a_run(host, adjudicated_bundle())
    copies = a_session(run, SessionState.OPEN)
    judged(copies, {f"c{n}": "pass" for n in range(1, 7)})
    copies = advance(copies, SessionState.REVEALED)
    adjudication = a_session(run, SessionState.OPEN, kind=SessionKind.ADJUDICATION,
                             unknown_copies=True)
    adjudicate(adjudication, {"finding:f2": "real", "finding:f3": "real", "copy:c6": "pass"})
    advance(adjudication, SessionState.REVEALED)
    section = build_report(copies)["adjudicated"]
    (entry,) = section["adjudications"]
    assert entry["opened_after_reveal"] is True
    assert entry["revealed_before"][0]["session"] == copies.pk
    assert all(item["opened_after_reveal"] for item in section["items"])


def test_verify_report_checks_the_adjudications_hashes(world):
    advance(world["adjudication"], SessionState.REVEALED)
    report = build_report(world["copies"])
    problems, checks = verify(report)
    assert problems == []
    tampered = copy.deepcopy(report)
    entry = tampered["adjudicated"]["adjudications"][0]
    entry["protocol"]["frozen"]["rubric"] = "changed after the fact"
    assert any("adjudicated" in p and "protocol.sha256" in p for p in verify(tampered)[0])
    tampered = copy.deepcopy(report)
    entry = tampered["adjudicated"]["adjudications"][0]
    first, second = entry["assignments"][0], entry["assignments"][1]
    first["code"], second["code"] = second["code"], first["code"]
    assert any("adjudicated" in p and "commitment" in p for p in verify(tampered)[0])


def test_an_adjudication_has_no_report_of_its_own(world):
    revealed = advance(world["adjudication"], SessionState.REVEALED)
    with pytest.raises(Conflict, match="no report of its own"):
        build_report(revealed)


def test_the_html_report_shows_the_answers_beside_the_truth_and_the_scores_apart(world):
    advance(world["adjudication"], SessionState.REVEALED)
    html = to_html(build_report(world["copies"]))
    section = html[html.index('<h2 id="adjudicated">'):]
    section = section[:section.index("</section>")]
    assert "unknown, adjudicated fail (" in section and "unknown, cannot tell (" in section
    assert "declared, not checked" in section and "why copy:c6" in section
    assert "Judges on adjudicated items alone" in section
    assert "100% (1/1)" in section and "0% (0/1)" in section


def test_the_exports_carry_each_items_adjudicated_answer_beside_its_truth(world):
    """The CSV and JSON Lines rows: `adjudicated` is the used adjudication's answer on the row's
    item (a human row's copy or finding, a model row's copy), beside `truth`, which stays as it
    was; null where nothing was adjudicated, and everywhere before the adjudication is revealed."""
    def rows(session):
        return [json.loads(line) for line in to_jsonl(build_report(session)).decode().splitlines()]

    assert {r["adjudicated"] for s in ("copies", "findings") for r in rows(world[s])} == {None}
    advance(world["adjudication"], SessionState.REVEALED)
    copies = rows(world["copies"])
    # c6 adjudicated fail: both judges' rows on it, and both reviewers' reviews of it.
    assert {(r["rater_kind"], r["copy"], r["adjudicated"], r["truth"]) for r in copies
            if r["adjudicated"] is not None} == {("human", "c6", "fail", "unknown"),
                                                  ("model", "c6", "fail", "unknown")}
    assert sum(r["adjudicated"] == "fail" for r in copies) == 2 * 2 + 2  # 2 judges × 2 phases
    findings = rows(world["findings"])
    human = {(r["item"], r["phase"]): r["adjudicated"] for r in findings if r["rater_kind"] == "human"}
    assert {item: human[(item, 1)] for item in ("f1", "f2", "f3")} == {
        "f1": None, "f2": "real", "f3": "cannot_tell"}
    assert {r["copy"]: r["adjudicated"] for r in findings if r["rater_kind"] == "model"
            and r["adjudicated"] is not None} == {"c6": "fail"}
    schema = json.loads(ROW_SCHEMA_PATH.read_text(encoding="utf-8"))
    assert [error for r in copies + findings for error in row_errors(schema, r)] == []
    cells = list(csv.DictReader(io.StringIO(to_csv(build_report(world["findings"])), newline="")))
    assert [c["adjudicated"] for c in cells] == [r["adjudicated"] or "" for r in findings]
