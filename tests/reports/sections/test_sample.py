"""reports.sections.sample on hand-made data: the planned sample (items, items per judge,
invitations) beside the achieved one (judges joined and locked, locked and paired verdicts by
truth class, judges by group and identity, the judges who joined and gave no verdict)."""

import pytest

from reports.sections.sample import NOTE, sample
from tests.reports.sections.arrays import a_session, builder, bundle, copy, item, judge, report_data, task

pytestmark = pytest.mark.pure

T = task("t1")
B = builder("b1", "gpt-4o", "OpenAI")
COPIES = [copy("c1", T, B, "seeded_defect"), copy("c2", T, B, "known_good"),
          copy("c3", T, B, "unknown"), copy("c4", T, B, "tests_fail")]


def test_planned_beside_achieved_by_hand():
    judges = [judge("J1"), judge("J2", identified_by="github"), judge("G1", admitted_as="guest"),
              judge("H", admitted_as="host", locked=(True, False)),
              judge("R", status="removed", locked=(False, False))]
    grid = {1: ["FPFF", "FP.P", "Pp..", "F...", "f..."],
            2: ["FPPF", "PP.p", "P...", "....", "...."]}
    data = report_data(bundle(tasks=[T], builders=[B], copies=COPIES),
                       items=[item(c) for c in COPIES], judges=judges, grid=grid, invitations=6)
    assert sample(data) == {
        # items_per_judge unset: every item; six invitations × four items.
        "planned": {"items": 4, "items_per_judge": 4, "judges_invited": 6, "verdicts_per_phase": 24},
        "achieved": {
            "judges_joined": 5,
            "judges_locked_phase1": 4,  # the removed judge locked nothing
            "judges_locked_both": 3,  # the host locked phase 1 only
            # Locked only (lower case is a draft): phase 1 4 + 3 + 1 + 1; phase 2 4 + 2 + 1.
            "locked_verdicts": {"1": 9, "2": 7},
            # Locked in both phases: J1 on c1, c2, c3, c4; J2 on c1, c2 (c4 a draft in phase 2);
            # G1 on c1. Defective c1 ×3 and c4 ×1, good c2 ×2, unknown c3 ×1.
            "paired_verdicts": {"defective": 4, "good": 2, "unknown": 1},
            "judges_by_group": {"invited": 2, "guest": 1, "self_blinded_host": 1, "removed": 1},
            "judges_by_group_and_identity": {
                "invited": {"token": 1, "github": 1}, "guest": {"token": 1},
                "self_blinded_host": {"token": 1}, "removed": {"token": 1}},
            # R's one verdict is a draft: it joined and gave none that counts.
            "judges_without_verdicts": ["R"],
        },
        "note": NOTE,
    }


def test_items_per_judge_plans_the_verdicts_and_absent_groups_are_not_listed():
    data = report_data(bundle(tasks=[T], builders=[B], copies=COPIES),
                       items=[item(c) for c in COPIES], judges=[judge("J1", locked=(False, False))],
                       session=a_session(items_per_judge=3), invitations=2)
    section = sample(data)
    assert section["planned"] == {"items": 4, "items_per_judge": 3, "judges_invited": 2,
                                  "verdicts_per_phase": 6}
    assert section["achieved"]["judges_by_group"] == {"invited": 1}
    assert section["achieved"]["judges_locked_phase1"] == section["achieved"]["judges_locked_both"] == 0
    assert section["achieved"]["locked_verdicts"] == {"1": 0, "2": 0}
    assert section["achieved"]["judges_without_verdicts"] == ["J1"]


def test_a_judge_who_locked_one_phase_gave_verdicts_and_one_who_locked_none_did_not():
    """A guest who joined and left, a judge who drafted and never locked: listed, by order of
    admission; a judge who locked phase 1 alone is not (their verdicts are scored)."""
    judges = [judge("J1"), judge("G1", admitted_as="guest", locked=(False, False)),
              judge("J2", locked=(True, False)), judge("J3", locked=(False, False))]
    grid = {1: ["FP", "..", "PF", "fp"], 2: ["FF", "..", "..", ".."]}
    data = report_data(bundle(tasks=[T], builders=[B], copies=COPIES[:2]),
                       items=[item(c) for c in COPIES[:2]], judges=judges, grid=grid)
    assert sample(data)["achieved"]["judges_without_verdicts"] == ["G1", "J3"]


def test_no_judge_and_no_item():
    data = report_data(bundle(tasks=[], builders=[], copies=[]))
    achieved = sample(data)["achieved"]
    assert sample(data)["planned"] == {"items": 0, "items_per_judge": 0, "judges_invited": 0,
                                       "verdicts_per_phase": 0}
    assert achieved == {"judges_joined": 0, "judges_locked_phase1": 0, "judges_locked_both": 0,
                        "locked_verdicts": {"1": 0, "2": 0},
                        "paired_verdicts": {"defective": 0, "good": 0, "unknown": 0},
                        "judges_by_group": {}, "judges_by_group_and_identity": {},
                        "judges_without_verdicts": []}
