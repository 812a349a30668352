"""The "sample" section: what the frozen protocol and the invitations planned beside what was
achieved (judges joined and locked, verdicts locked and paired, judges by group, the judges who
joined and gave no verdict)."""

from collections import Counter

from reports.loading import CLASS_CODES, ReportData
from reports.scoring import GROUPS

NOTE = ("planned: what the frozen protocol and the invitations fix (guests are not planned; a guest "
        "cap is a ceiling); a power calculation the host made belongs in the preregistration text")


def sample(data: ReportData) -> dict:
    judges, groups = data.judges.rows, data.judges.groups
    says, paired = data.verdicts.says, data.verdicts.paired
    current_class = data.items.classes["current"]
    defective = current_class == CLASS_CODES["defective"]
    good = current_class == CLASS_CODES["good"]
    known = current_class >= 0
    n_items = len(data.items.rows)
    planned_per_judge = data.session.items_per_judge or n_items
    by_group_and_identity = {g: Counter() for g in GROUPS if g in groups}
    for judge, group in zip(judges, groups, strict=True):
        by_group_and_identity[group][judge.identified_by] += 1
    # A judge with no locked verdict in either phase (a guest who joined and left; drafts never
    # count): their scores are all 0/0, so the HTML page lists them apart, out of its plots.
    gave = ((says[1] >= 0).any(axis=1) | (says[2] >= 0).any(axis=1)).tolist()
    return {
        "planned": {
            "items": n_items, "items_per_judge": planned_per_judge,
            "judges_invited": data.invitations,
            "verdicts_per_phase": data.invitations * planned_per_judge,
        },
        "achieved": {
            "judges_joined": len(judges),
            "judges_locked_phase1": sum(1 for j in judges if j.phase1_locked_at),
            "judges_locked_both": sum(1 for j in judges if j.phase1_locked_at and j.phase2_locked_at),
            "locked_verdicts": {"1": int((says[1] >= 0).sum()), "2": int((says[2] >= 0).sum())},
            "paired_verdicts": {
                "defective": int((paired & defective[None, :]).sum()),
                "good": int((paired & good[None, :]).sum()),
                "unknown": int((paired & ~known[None, :]).sum()),
            },
            "judges_by_group": {g: groups.count(g) for g in GROUPS if g in groups},
            "judges_by_group_and_identity": {
                g: dict(identities) for g, identities in by_group_and_identity.items()
            },
            "judges_without_verdicts": [j.pseudonym for j, g in zip(judges, gave, strict=True)
                                        if not g],
        },
        "note": NOTE,
    }
