"""reports.sections.dwell on hand-made data: each judge's median page-measured time per item and
the answers under one second (by the page's measure and by the server's), per phase, over locked
verdicts only, against the same figures worked out here with the standard library."""

import random
import statistics

import pytest

from reports.sections.dwell import judge_dwell
from tests.reports.sections.arrays import builder, bundle, copy, item, judge, report_data, task

pytestmark = pytest.mark.pure

T = task("t1")
B1 = builder("b1", "gpt-4o", "OpenAI")
COPIES = [copy(f"t1-c{n}", T, B1, ("seeded_defect", "known_good")[n % 2]) for n in range(9)]
BUNDLE = bundle(tasks=[T], builders=[B1], copies=COPIES)


def expected(rows: list[dict], judges: int) -> list[dict]:
    """The figures, straight from the definition, one judge and phase at a time."""
    out = []
    for j in range(judges):
        entry = {}
        for phase in (1, 2):
            mine = [r for r in rows if r["judge"] == j and r["phase"] == phase and r["locked"]]
            seconds = [r["seconds_spent"] for r in mine]
            entry[str(phase)] = {
                "answers": len(mine),
                "median_seconds": statistics.median(seconds) if seconds else None,
                "under_one_second": sum(1 for s in seconds if s < 1),
                "server_under_one_second": sum(1 for r in mine if r.get("server_seconds") is not None
                                               and r["server_seconds"] < 1),
            }
        out.append(entry)
    return out


def test_the_figures_of_a_small_session_worked_out_by_hand():
    items = [item(c) for c in COPIES[:4]]
    rows = [
        # J1, phase 1: 0.4, 3, 10 and 20 s (even: the mean of 3 and 10), two under a second by
        # the server (0.2 and 0.9; the first answer has none, 1.0 is not under one).
        {"judge": 0, "item": 0, "phase": 1, "value": "pass", "locked": True, "seconds_spent": 10.0},
        {"judge": 0, "item": 1, "phase": 1, "value": "fail", "locked": True, "seconds_spent": 0.4,
         "server_seconds": 0.2},
        {"judge": 0, "item": 2, "phase": 1, "value": "pass", "locked": True, "seconds_spent": 3.0,
         "server_seconds": 0.9},
        {"judge": 0, "item": 3, "phase": 1, "value": "pass", "locked": True, "seconds_spent": 20.0,
         "server_seconds": 1.0},
        # J1, phase 2: one locked answer, one draft (never counted, however quick).
        {"judge": 0, "item": 0, "phase": 2, "value": "pass", "locked": True, "seconds_spent": 0.99,
         "server_seconds": 45.0},
        {"judge": 0, "item": 1, "phase": 2, "value": "pass", "locked": False, "seconds_spent": 0.1,
         "server_seconds": 0.1},
        # J2: drafts only.
        {"judge": 1, "item": 0, "phase": 1, "value": "pass", "locked": False, "seconds_spent": 0.0},
    ]
    data = report_data(BUNDLE, items=items, judges=[judge("J1"), judge("J2")], verdict_rows=rows)
    assert judge_dwell(data) == [
        {"1": {"answers": 4, "median_seconds": 6.5, "under_one_second": 1,
               "server_under_one_second": 2},
         "2": {"answers": 1, "median_seconds": 0.99, "under_one_second": 1,
               "server_under_one_second": 0}},
        {"1": {"answers": 0, "median_seconds": None, "under_one_second": 0,
               "server_under_one_second": 0},
         "2": {"answers": 0, "median_seconds": None, "under_one_second": 0,
               "server_under_one_second": 0}},
    ]


@pytest.mark.parametrize("seed", range(5))
def test_random_sessions_match_the_definition(seed):
    rng = random.Random(seed)
    n_judges, items = rng.randint(1, 6), [item(c) for c in COPIES]
    rows = []
    for j in range(n_judges):
        for phase in (1, 2):
            for i in rng.sample(range(len(items)), rng.randint(0, len(items))):
                rows.append({
                    "judge": j, "item": i, "phase": phase, "value": rng.choice(("pass", "fail")),
                    "locked": rng.random() < 0.8,
                    "seconds_spent": rng.choice((0.0, 0.5, 0.999, 1.0, rng.uniform(0, 120))),
                    "server_seconds": rng.choice((None, 0.0, 0.3, 1.0, rng.uniform(0, 60))),
                })
    rng.shuffle(rows)  # the database's order is none in particular
    data = report_data(BUNDLE, items=items, judges=[judge(f"J{j}") for j in range(n_judges)],
                       verdict_rows=rows)
    assert judge_dwell(data) == expected(rows, n_judges)


def test_no_judge_no_figures():
    assert judge_dwell(report_data(BUNDLE, items=[item(COPIES[0])], judges=[])) == []
