"""Order effects: accuracy by the third of each judge's drawn order an item fell in."""

from content.scoring import rate

THIRDS = ("first", "middle", "last")


def order_effects(says_by_phase, right_by_phase, known, thirds) -> dict:
    """Accuracy (share of scored verdicts that match truth) by third of the drawn order.

    says_by_phase, right_by_phase: phase -> judges × items (reports.loading.Verdicts.says and
    .right); known: items of known truth; thirds: judges × items, 0, 1, 2 or -1 (unassigned)."""
    out = {}
    for phase in (1, 2):
        scored = (says_by_phase[phase] >= 0) & known[None, :]
        right = scored & right_by_phase[phase]
        out[str(phase)] = {
            name: rate(int((right & (thirds == t)).sum()), int((scored & (thirds == t)).sum()))
            for t, name in enumerate(THIRDS)
        }
    return out
