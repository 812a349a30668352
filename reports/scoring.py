"""Which judges the report scores together (the groups it keeps apart). How a verdict is scored
is content.scoring's, shared with the judge's own scorecard.
"""

from accounts.enums import AdmittedAs, JudgeStatus

# The groups of judges the report keeps apart, in the order it lists them.
GROUPS = ("invited", "guest", "self_blinded_host", "removed")
MAIN_GROUP = "invited"  # decision rules are evaluated on this group's pooled figures


def judge_group(judge) -> str:
    """Reported apart: removed judges, the host (self-blinded), guests; invited judges are main."""
    if judge.status == JudgeStatus.REMOVED:
        return "removed"
    return {AdmittedAs.HOST: "self_blinded_host", AdmittedAs.GUEST: "guest"}.get(
        judge.admitted_as, "invited"
    )
