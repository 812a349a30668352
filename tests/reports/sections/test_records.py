"""reports.sections.records on hand-made records: the run, the session and the bundle's records
as imported, each review scored by the run's abstention rule beside its truth, the findings with
who raised them under each condition, the truth corrections and the note on what an item is."""

import hashlib
from datetime import UTC, datetime

import pytest

from reports.sections import records
from tests.reports.sections.arrays import (
    a_run,
    a_session,
    builder,
    bundle,
    copy,
    correction,
    finding,
    item,
    report_data,
    review,
    reviewer,
    task,
)

pytestmark = pytest.mark.pure

AT = datetime(2026, 2, 3, 4, 5, 6, tzinfo=UTC)


def world(rule="not_flagged"):
    t1, t2 = task("t1", cluster="k1", title="One"), task("t2", statement="Écrire t2.\n")
    b1, b2 = builder("b1", "gpt-4o", "OpenAI"), builder("b2", "claude", "Anthropic")
    c1 = copy("t1-b1", t1, b1, "seeded_defect", defect="off by one", cluster="k1")
    c2 = copy("t1-b2", t1, b2, "tests_pass", imported_truth="tests_fail")
    c3 = copy("t2-b1", t2, b1, "unknown")
    r1, r2 = reviewer("r1", "gpt-4o-mini", "openai"), reviewer("r2", "qwen", "Alibaba")
    f1 = finding("f1", c1, "real")
    f2 = finding("f2", c2, "false_alarm", imported_truth="real")
    reviews = [review(r1, c1, "fail", guess="gpt-4o"), review(r1, c2, "abstain"),
               review(r2, c2, "pass", condition="told_pass", seal="failed"),
               review(r2, c3, "fail")]
    b = bundle(tasks=[t1, t2], builders=[b1, b2], copies=[c1, c2, c3], reviewers=[r1, r2],
               reviews=reviews, findings=[f1, f2],
               raises=[(f1, r2, "clean"), (f1, r1, "clean"), (f1, r2, "told_pass")],
               corrections=[correction(c2, "tests_fail", "tests_pass", note="rerun", corrected_at=AT),
                            correction(f2, "real", "false_alarm", is_finding=True)],
               run=a_run(abstain_scoring=rule, imported_at=AT,
                         manifest={"canonical": "jcs-rfc8785", "files": []}))
    return report_data(b, items=[item(c1), item(c2)])


def test_the_run_as_imported():
    data = world()
    run = data.bundle.run
    assert records.run(data) == {
        "id": run.pk, "name": "the run", "format": "blindjudge.run/2",
        "record": {"name": "the run"}, "default_condition": "clean",
        "abstain_scoring": "not_flagged", "request_keys": None, "verdict_patterns": None,
        "bundle_sha256": "b" * 64, "manifest": {"canonical": "jcs-rfc8785", "files": []},
        "manifest_sha256": "", "manifest_canonical": "jcs-rfc8785",
        "imported_at": "2026-02-03T04:05:06+00:00"}


def test_the_session_with_an_empty_draw_seed_as_null():
    session = a_session(kind="findings", items_per_judge=2, guests_allowed=True, guest_cap=5,
                        opened_at=AT, draw_seed="", allocation_seed="alloc")
    made = world()
    data = report_data(made.bundle, items=made.items.rows, session=session)
    assert records.session(data) == {
        "id": session.pk, "url_id": "s-1", "kind": "findings", "state": "revealed",
        "created_at": None, "opened_at": "2026-02-03T04:05:06+00:00", "closed_at": None,
        "revealed_at": None, "items_per_judge": 2, "items": 2, "guests_allowed": True,
        "guest_cap": 5, "reviewer_display": "names", "scorecards": False, "draw_seed": None,
        "allocation_seed": "alloc"}
    assert records.session(report_data(data.bundle, session=a_session(draw_seed="d1")))["draw_seed"] == "d1"


def test_tasks_builders_copies_and_reviewers_as_imported():
    data = world()
    assert records.tasks(data) == [
        {"id": "t1", "title": "One", "format": "text", "cluster": "k1", "statement": "Write t1.",
         "statement_sha256": hashlib.sha256(b"Write t1.").hexdigest(), "copies": 2},
        {"id": "t2", "title": "", "format": "text", "cluster": None, "statement": "Écrire t2.\n",
         "statement_sha256": hashlib.sha256("Écrire t2.\n".encode()).hexdigest(), "copies": 1}]
    assert records.builders(data) == [{"id": "b1", "model": "gpt-4o", "family": "OpenAI"},
                                      {"id": "b2", "model": "claude", "family": "Anthropic"}]
    assert [(c["id"], c["task"], c["builder"], c["truth"], c["imported_truth"], c["defect"],
             c["cluster"]) for c in records.copies(data)] == [
        ("t1-b1", "t1", "b1", "seeded_defect", "seeded_defect", "off by one", "k1"),
        ("t1-b2", "t1", "b2", "tests_pass", "tests_fail", "", None),
        ("t2-b1", "t2", "b1", "unknown", "unknown", "", None)]
    assert records.reviewers(data) == [{"id": "r1", "model": "gpt-4o-mini", "family": "openai"},
                                       {"id": "r2", "model": "qwen", "family": "Alibaba"}]


@pytest.mark.parametrize("rule, abstain_scored_as, abstain_correct", [
    ("not_flagged", "pass", True),  # a pass on a tests_pass copy is right
    ("excluded", None, None),
])
def test_reviews_scored_by_the_run_s_rule(rule, abstain_scored_as, abstain_correct):
    reviews = records.reviews(world(rule))
    picked = [(r["reviewer"], r["copy"], r["condition"], r["default_condition"], r["verdict"],
               r["scored_as"], r["truth"], r["correct"], r["same_family"], r["seal"],
               r["authorship_guess"]) for r in reviews]
    assert picked == [
        # r1's family "openai" is b1's "OpenAI", case-folded: its own family's copy.
        ("r1", "t1-b1", "clean", True, "fail", "fail", "seeded_defect", True, True, "sealed", "gpt-4o"),
        ("r1", "t1-b2", "clean", True, "abstain", abstain_scored_as, "tests_pass", abstain_correct,
         False, "sealed", None),
        ("r2", "t1-b2", "told_pass", False, "pass", "pass", "tests_pass", True, False, "failed", None),
        # Unknown truth: never right or wrong.
        ("r2", "t2-b1", "clean", True, "fail", "fail", "unknown", None, False, "sealed", None),
    ]
    assert all(r["seal_reason"] is None and r["request_sha256"] is None for r in reviews)


def test_findings_with_who_raised_them_and_the_corrections():
    data = world()
    assert [(f["id"], f["copy"], f["raised_by"], f["raised_by_conditions"], f["truth"],
             f["imported_truth"]) for f in records.findings(data)] == [
        ("f1", "t1-b1", ["r1", "r2"],
         [{"reviewer": "r1", "condition": "clean"}, {"reviewer": "r2", "condition": "clean"},
          {"reviewer": "r2", "condition": "told_pass"}], "real", "real"),
        ("f2", "t1-b2", [], [], "false_alarm", "real")]
    assert records.truth_corrections(data) == [
        {"item": "t1-b2", "old_truth": "tests_fail", "new_truth": "tests_pass", "note": "rerun",
         "corrected_at": "2026-02-03T04:05:06+00:00"},
        {"item": "f2", "old_truth": "real", "new_truth": "false_alarm", "note": "",
         "corrected_at": None}]


def test_the_note_says_what_an_item_is():
    b = world().bundle
    assert records.session_kind_note(report_data(b, session=a_session(kind="copies"))) == (
        "items are copies; a verdict of fail on a defective copy is a catch")
    assert records.session_kind_note(report_data(b, session=a_session(kind="findings"))) == (
        "items are findings; a verdict of real on a real finding is a catch")
