"""reports.sections.mapping on hand-made data: the judges with their commitments, who was given
which item under which code (the mapping revealed) and every verdict beside the truth, listed by
judge, position, then phase, drafts included."""

from datetime import UTC, datetime

import pytest

from reports.sections import mapping
from tests.reports.sections.arrays import (
    PHASE1_LOCKED,
    a_session,
    builder,
    bundle,
    copy,
    finding,
    item,
    judge,
    report_data,
    task,
)

pytestmark = pytest.mark.pure

T = task("t1")
B1, B2 = builder("b1", "gpt-4o", "OpenAI"), builder("b2", "claude", "Anthropic")
C1, C2, C3 = (copy("t1-b1", T, B1, "seeded_defect"), copy("t1-b2", T, B2, "known_good"),
              copy("t1-b3", T, B2, "unknown"))
BUNDLE = bundle(tasks=[T], builders=[B1, B2], copies=[C1, C2, C3])
JOINED = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)


def test_judges_with_names_groups_and_commitments():
    judges = [judge("J1", github_login="octo", display_name="Octo Cat", identified_by="github",
                    joined_at=JOINED),
              judge("G1", admitted_as="guest", display_name="Guest", locked=(True, False)),
              judge("R1", status="removed", erased_at=JOINED, removed_at=JOINED, locked=(False, False))]
    data = report_data(BUNDLE, judges=judges,
                       session=a_session(protocol={"version": 2, "canonical": "jcs-rfc8785"}))
    rows = mapping.judges(data)
    assert rows[0] == {
        "pseudonym": "J1", "name": "octo", "display_name": "Octo Cat", "github_login": "octo",
        "admitted_as": "invited", "identified_by": "github", "group": "invited", "status": "active",
        "erased": False, "joined_at": "2026-01-01T09:00:00+00:00", "removed_at": None,
        "phase1_locked_at": PHASE1_LOCKED.isoformat(), "phase2_locked_at": "2026-01-01T11:00:00+00:00",
        "commitment": {"sha256": "h" * 64, "salt": "salt", "order_seed": "seed",
                       "canonical": "jcs-rfc8785"}}
    # A guest's name is its display name; an erased judge has none.
    assert (rows[1]["name"], rows[1]["github_login"], rows[1]["group"], rows[1]["phase2_locked_at"]) == (
        "Guest", None, "guest", None)
    assert (rows[2]["name"], rows[2]["display_name"], rows[2]["group"], rows[2]["erased"],
            rows[2]["removed_at"]) == (None, None, "removed", True, "2026-01-01T09:00:00+00:00")


def test_the_assignments_reveal_each_code_s_copy_and_builder_in_drawn_order():
    items = [item(C1), item(C2), item(C3)]
    data = report_data(BUNDLE, items=items, judges=[judge("J1"), judge("J2")],
                       orders={0: [2, 0], 1: [1, 2, 0]})
    assert [(a["judge"], a["position"], a["code"], a["item"], a["copy"], a["builder"])
            for a in mapping.assignments(data)] == [
        ("J1", 1, "J1:t1-b3", "t1-b3", "t1-b3", "b2"), ("J1", 2, "J1:t1-b1", "t1-b1", "t1-b1", "b1"),
        ("J2", 1, "J2:t1-b2", "t1-b2", "t1-b2", "b2"), ("J2", 2, "J2:t1-b3", "t1-b3", "t1-b3", "b2"),
        ("J2", 3, "J2:t1-b1", "t1-b1", "t1-b1", "b1")]


def test_verdicts_listed_by_judge_position_phase_beside_the_truth():
    items = [item(C1), item(C2), item(C3)]
    # In the database's order, shuffled: the section lists them by judge, position, then phase.
    rows = [
        {"judge": 1, "item": 0, "phase": 1, "value": "pass", "locked": True, "reason": "looks fine",
         "seconds_spent": 12, "server_seconds": 7.5, "kept": 0, "created_at": "c", "updated_at": "u"},
        {"judge": 0, "item": 2, "phase": 2, "value": "fail", "locked": True, "kept": 1},
        {"judge": 0, "item": 1, "phase": 1, "value": "fail", "locked": False},
        {"judge": 0, "item": 2, "phase": 1, "value": "pass", "locked": True},
        {"judge": 0, "item": 0, "phase": 1, "value": "fail", "locked": True},
    ]
    data = report_data(BUNDLE, items=items, judges=[judge("J1"), judge("J2")],
                       orders={0: [2, 0, 1], 1: [0]}, verdict_rows=rows)
    listed = mapping.verdicts(data)
    assert [(v["judge"], v["position"], v["phase"], v["item"], v["code"], v["value"], v["locked"],
             v["truth"], v["correct"]) for v in listed] == [
        # Unknown truth: correct is null whatever the verdict.
        ("J1", 1, 1, "t1-b3", "J1:t1-b3", "pass", True, "unknown", None),
        ("J1", 1, 2, "t1-b3", "J1:t1-b3", "fail", True, "unknown", None),
        ("J1", 2, 1, "t1-b1", "J1:t1-b1", "fail", True, "seeded_defect", True),
        # A draft is listed too, scored against truth all the same: fail on a good copy.
        ("J1", 3, 1, "t1-b2", "J1:t1-b2", "fail", False, "known_good", False),
        ("J2", 1, 1, "t1-b1", "J2:t1-b1", "pass", True, "seeded_defect", False),
    ]
    assert [v["kept"] for v in listed] == [False, True, False, False, False]
    assert (listed[-1]["reason"], listed[-1]["seconds_spent"], listed[-1]["server_seconds"],
            listed[-1]["created_at"], listed[-1]["updated_at"]) == ("looks fine", 12, 7.5, "c", "u")
    # The server's interval beside the page's time; None where there was no previous answer.
    assert [v["server_seconds"] for v in listed[:-1]] == [None] * 4


def test_a_findings_session_s_verdicts_are_real_or_false_alarm():
    f1, f2 = finding("f1", C1, "real"), finding("f2", C1, "false_alarm")
    b = bundle(tasks=[T], builders=[B1, B2], copies=[C1, C2, C3], findings=[f1, f2])
    data = report_data(b, items=[item(C1, finding_=f1), item(C1, finding_=f2)],
                       judges=[judge("J1")], grid={1: ["FF"]}, session=a_session(kind="findings"))
    assert [(v["item"], v["value"], v["truth"], v["correct"]) for v in mapping.verdicts(data)] == [
        ("f1", "real", "real", True), ("f2", "real", "false_alarm", False)]
    assert [a["copy"] for a in mapping.assignments(data)] == ["t1-b1", "t1-b1"]


def test_no_verdicts():
    data = report_data(BUNDLE, items=[item(C1)], judges=[judge("J1")])
    assert mapping.verdicts(data) == []
    assert len(mapping.assignments(data)) == 1
