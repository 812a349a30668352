"""Each judge's time per item (issue 30 item 4), shown beside their scores: per phase, over their
locked verdicts, the median of the page-measured time and how many answers took under one second,
by the page's measure and by the server's.

A verdict carries two times: `seconds_spent`, measured by the judge's page (the time the item was
shown while the page was visible, summed over visits), and `server_seconds`, the server's interval
between the save that gave the verdict its answer and the judge's previous answer save in the phase
(judging.models.Verdict). The page's time is the one the median and the judge's own review page go
by; the server's catches a page that reports a time it did not spend. Column-wise with numpy, as
the rest of the report: one sort of the locked verdicts, not a pass per judge."""

import numpy as np

from judging.services import QUICK_ANSWER_SECONDS
from reports.loading import ReportData

DWELL_DEFINITION = (
    "per phase, over the judge's locked verdicts: answers, how many there are; median_seconds, the "
    "median of the time the judge's page measured on each item (shown while the page was visible, "
    "summed over visits), null without an answer; under_one_second, answers whose page-measured "
    "time is under one second (the judge's review page marked them \"answered in 0 s — check\" "
    "before the lock); server_under_one_second, answers saved under one second after the judge's "
    "previous answer in the phase by the server's clock (server_seconds; the first answer of a "
    "phase has none), which a page cannot misreport, though saves retried after a lost connection "
    "arrive together and count here too"
)


def judge_dwell(data: ReportData) -> list[dict]:
    """Per judge row, {"1": block, "2": block}: the phase's answers, median page-measured seconds,
    and the answers under one second by the page's and by the server's measure."""
    v = data.verdicts
    n = len(data.judges.rows)
    locked = v.locked
    count = len(v.phase)
    # Group of a verdict: its judge's row and phase, 2j (phase 1) or 2j + 1 (phase 2).
    group = (v.judge * 2 + np.fromiter(v.phase, dtype=np.int64, count=count) - 1)[locked]
    seconds = np.fromiter(v.seconds_spent, dtype=np.float64, count=count)[locked]
    # None (no previous answer) becomes NaN, which is under nothing.
    server = np.fromiter((np.nan if s is None else s for s in v.server_seconds),
                         dtype=np.float64, count=count)[locked]
    answers = np.bincount(group, minlength=2 * n)
    quick = np.bincount(group[seconds < QUICK_ANSWER_SECONDS], minlength=2 * n)
    with np.errstate(invalid="ignore"):
        server_quick = np.bincount(group[server < QUICK_ANSWER_SECONDS], minlength=2 * n)
    # Sorted by group, then time: each group's times are one run, its median in the middle.
    ordered = seconds[np.lexsort((seconds, group))]
    starts = np.concatenate(([0], np.cumsum(answers)[:-1]))
    medians = []
    for g in range(2 * n):
        k, start = int(answers[g]), int(starts[g])
        if k == 0:
            medians.append(None)
        elif k % 2:
            medians.append(float(ordered[start + k // 2]))
        else:
            medians.append(float((ordered[start + k // 2 - 1] + ordered[start + k // 2]) / 2))
    return [
        {str(phase): {"answers": int(answers[2 * j + phase - 1]),
                      "median_seconds": medians[2 * j + phase - 1],
                      "under_one_second": int(quick[2 * j + phase - 1]),
                      "server_under_one_second": int(server_quick[2 * j + phase - 1])}
         for phase in (1, 2)}
        for j in range(n)
    ]
