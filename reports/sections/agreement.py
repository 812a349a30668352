"""Agreement among a group's judges in each phase, and its change: reported, never used to decide."""

from collections import Counter

import numpy as np

from reports import stats
from reports.sections.common import finite

AGREEMENT_LABEL = "reported, never used to decide"


def agreement(says1, says2) -> dict:
    """Fleiss' kappa and Krippendorff's alpha among the same raters in each phase.

    says1, says2: raters × items, -1 where a rater gave no verdict, else 0 or 1. Fleiss' kappa
    needs the same number of raters on every item: it is taken over the items rated by the most
    common number of raters (at least two), the same items in both phases."""
    result = {"label": AGREEMENT_LABEL}
    counts = [((s == 0).sum(axis=0), (s == 1).sum(axis=0)) for s in (says1, says2)]
    raters_per_item = counts[0][0] + counts[0][1]
    usable = raters_per_item[raters_per_item >= 2]
    modal = int(Counter(usable.tolist()).most_common(1)[0][0]) if usable.size else 0
    subjects = (raters_per_item == modal) if modal else np.zeros_like(raters_per_item, dtype=bool)
    for phase, (says, (passes, fails)) in enumerate(zip((says1, says2), counts, strict=True), 1):
        if subjects.any():
            matrix = np.stack([passes[subjects], fails[subjects]], axis=1)
            kappa = finite(stats.fleiss_kappa(matrix))
        else:
            kappa = None
        codes = np.where(says >= 0, says, np.nan).astype(float)
        alpha = finite(stats.krippendorff_alpha(codes)) if codes.size else None
        result[f"phase{phase}"] = {"fleiss_kappa": kappa, "krippendorff_alpha": alpha}
    result["fleiss_items"] = int(subjects.sum())
    result["fleiss_raters_per_item"] = modal or None

    def delta(key):
        a, b = result["phase1"][key], result["phase2"][key]
        return None if a is None or b is None else b - a

    result["delta_fleiss_kappa"] = delta("fleiss_kappa")
    result["delta_krippendorff_alpha"] = delta("krippendorff_alpha")
    return result
