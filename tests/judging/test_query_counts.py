"""Query discipline on the judge's paths and the host's progress page (issue 7).

Each request kind runs the same small number of queries whether the session has 1 item and 1
judge or 50 items and 20 judges, and every lookup those queries make is served by an index. Query
plans are read from the database itself (EXPLAIN QUERY PLAN on SQLite; EXPLAIN with sequential
scans disabled on PostgreSQL, under which only a missing index still gives a Seq Scan); the
detector is first shown to fire on lookups by unindexed columns.
"""

import json
import subprocess
import sys

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import Judge
from judging.enums import SessionKind
from judging.models import Assignment, Verdict
from judging.services import phase_lock
from tests.support.verdicts import verdict_record
from tests.worlds import (
    a_run,
    a_session,
    advance,
    answer_all,
    client_as,
    codes,
    invite_and_join,
    make_run2_bundle,
)

# Queries per request, the same at both sizes. Lower is fine (lower the figure here); higher
# means a judge request started to grow a query.
EXPECTED = {
    # Issue 16: the page's progress (the judge's own times in the phase) is one query more; the
    # item's draft and revision ride in the place statement. A save reads and bumps the item's
    # revision (ItemDraft): two more.
    "item page": 5,
    "copy frame": 3,
    "verdict save (autosave)": 11,
    # A save that changes a verdict (not a new one) writes the judge's row: their last activity,
    # which the host's progress page reads from the row instead of scanning verdicts (issue 32
    # item 2). A new verdict's save stamps it in the write that counts the answer, so no more.
    "verdict save (form, next)": 12,
    "lock": 9,  # the lock reads the answered count kept on the judge row, not the verdicts
    "phase-2 page": 7,
    "scorecard": 3,
    "host progress": 9,  # with the live page's count of each judge's sockets connected now
    "judge's items": 4,
    "review before the lock": 4,
}
# A pairs session's own requests (issue 31), at 2 and 8 tasks of three builders (6 and 24 pairs).
EXPECTED_PAIRS = {"pair page": 7, "pair's side frame": 3, "judge's pairs": 4}
PAIR_SIZES = (2, 8)
SIZES = [(1, 1), (50, 20)]  # (items, judges)


def sized_bundle(items: int) -> bytes:
    copies = [{"id": f"c{i}", "builder": f"b{i % 2}", "format": "text",
               "content": f"def f{i}(x):\n    return x + {i}\n",
               "truth": ("known_good", "seeded_defect")[i % 2]} for i in range(items)]
    return json.dumps({
        "format": "blindjudge.run/1",
        "run": {"name": "sized", "task": "Write f."},
        "builders": [{"id": "b0", "model": "m-zero", "family": "Zero Lab"},
                     {"id": "b1", "model": "m-one", "family": "One Lab"}],
        "copies": copies,
        "reviewers": [{"id": "r1", "model": "rev-one", "family": "Rev Lab"},
                      {"id": "r2", "model": "rev-two", "family": "Rev Lab"}],
        "reviews": [{"reviewer": r, "copy": c["id"], "verdict": "pass", "reason": "looks fine"}
                    for c in copies for r in ("r1", "r2")],
    }).encode("utf-8")


def count(client_call) -> tuple[int, list[str]]:
    with CaptureQueriesContext(connection) as queries:
        response = client_call()
    assert response.status_code in (200, 302), (response.status_code, response.content[:300])
    return len(queries), [q["sql"] for q in queries.captured_queries]


def measure(host, items: int, judges: int) -> dict:
    """Queries of every request kind for the first judge of a fresh session of this size (the
    other judges have answered phase 1, so the tables hold rows that are not the judge's)."""
    session = a_session(a_run(host, sized_bundle(items)), "open", scorecards=True)
    everyone = [invite_and_join(session, name=f"Judge {n}").judge for n in range(judges)]
    for other in everyone[1:]:
        answer_all(other, 1)
    judge = everyone[0]
    own = codes(judge)
    middle = own[len(own) // 2]
    client = client_as(judge)
    page = f"/s/{session.url_id}/i/{middle}/"
    host_client = client_as(host)
    measured, sql = {}, {}

    def take(kind, call):
        measured[kind], sql[kind] = count(call)

    take("item page", lambda: client.get(page))
    take("copy frame", lambda: client.get(page + "frame"))
    take("verdict save (autosave)", lambda: client.post(
        page, {"verdict": "fail", "phase": "1", "seconds_spent": "3"}, HTTP_ACCEPT="application/json"))
    take("verdict save (form, next)", lambda: client.post(
        page, {"verdict": "pass", "phase": "1", "seconds_spent": "4", "go": "next"}))
    take("host progress", lambda: host_client.get(f"/host/sessions/{session.pk}/judges"))
    take("judge's items", lambda: client.get(f"/s/{session.url_id}/"))
    answer_all(judge, 1)
    take("review before the lock", lambda: client.get(f"/s/{session.url_id}/lock/"))
    take("lock", lambda: client.post(f"/s/{session.url_id}/lock/", {"confirm": "yes", "phase": "1"}))
    take("phase-2 page", lambda: client.get(page))
    answer_all(judge, 2)
    phase_lock(judge=Judge.objects.get(pk=judge.pk), phase=2)
    advance(session, "revealed")
    take("scorecard", lambda: client.get(f"/s/{session.url_id}/scorecard/"))
    return {"counts": measured, "sql": sql}


@pytest.mark.django_db
def test_each_judge_request_and_the_progress_page_run_a_constant_small_number_of_queries(host):
    small, large = (measure(host, items, judges)["counts"] for items, judges in SIZES)
    assert small == large, f"query counts grow with the session: {small} vs {large}"
    assert small == EXPECTED


def pairs_bundle(tasks: int) -> bytes:
    """Three builders, each with one copy of each of `tasks` tasks: three pairs a task."""
    return json.dumps(make_run2_bundle(
        tasks=[{"id": f"t{n}", "title": f"task {n}", "statement": f"Write f{n}."}
               for n in range(tasks)],
        copies=[{"id": f"c{n}-{builder}", "task": f"t{n}", "builder": builder, "format": "text",
                 "content": f"def f{n}(x):\n    return x + {n}  # {builder}\n",
                 "truth": "tests_pass"} for n in range(tasks) for builder in ("b1", "b2", "b3")],
        reviews=[], findings=[])).encode("utf-8")


def measure_pairs(host, tasks: int) -> dict:
    session = a_session(a_run(host, pairs_bundle(tasks)), "open", kind=SessionKind.PAIRS)
    judge = invite_and_join(session, "Ann").judge
    client = client_as(judge)
    pairs = list(Assignment.objects.filter(judge=judge).order_by("position")
                 .values_list("code", "first_code"))
    assert len(pairs) == 3 * tasks
    code, side = pairs[len(pairs) // 2]
    return {"pair page": count(lambda: client.get(f"/s/{session.url_id}/i/{code}/"))[0],
            "pair's side frame": count(lambda: client.get(f"/s/{session.url_id}/i/{side}/frame"))[0],
            "judge's pairs": count(lambda: client.get(f"/s/{session.url_id}/"))[0]}


@pytest.mark.django_db
def test_a_pairs_session_s_requests_run_a_constant_small_number_of_queries(host):
    small, large = (measure_pairs(host, tasks) for tasks in PAIR_SIZES)
    assert small == large, f"query counts grow with the session: {small} vs {large}"
    assert small == EXPECTED_PAIRS


# --- Indexes ---------------------------------------------------------------------------------

def unindexed_lookups(sql: str) -> list[str]:
    """Plan steps of `sql` that read a whole table or a whole index instead of looking rows up
    by an index: SQLite's `SCAN table` (a lookup is `SEARCH`); PostgreSQL's Seq Scan, or an Index
    Scan without an Index Cond (with sequential scans off, the planner walks a whole index
    instead)."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("EXPLAIN QUERY PLAN " + sql)
            details = [row[-1] for row in cursor.fetchall()]
            return [d for d in details if d.startswith("SCAN ") and d != "SCAN CONSTANT ROW"]
        # Joins as lookups: on a test's few rows the planner may prefer to walk a whole index
        # in a merge or hash join, and whether it did depended on the statistics earlier tests'
        # committed rows left behind (the order the tests ran in). Nested loops show what each
        # lookup uses; a lookup with no index still shows as a scan without an Index Cond.
        cursor.execute("SET LOCAL enable_mergejoin = off")
        cursor.execute("SET LOCAL enable_hashjoin = off")
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql)
        plan = cursor.fetchone()[0]
        plan = json.loads(plan) if isinstance(plan, str) else plan
    found = []

    def walk(node):
        kind = node["Node Type"]
        if kind == "Seq Scan" or (kind in ("Index Scan", "Index Only Scan")
                                  and "Index Cond" not in node):
            found.append(f"{kind} on {node.get('Relation Name')} {node.get('Filter', '')}")
        for child in node.get("Plans", []):
            walk(child)

    walk(plan[0]["Plan"])
    return found


def plan_of(queryset) -> str:
    with CaptureQueriesContext(connection) as queries:
        list(queryset)
    return queries.captured_queries[-1]["sql"]


@pytest.mark.django_db
def test_the_index_check_flags_a_lookup_by_an_unindexed_column(invited_judge):
    """The detector, shown to fire: neither a verdict's reason nor an assignment's order key has
    an index, and a lookup by either is reported."""
    assert unindexed_lookups(plan_of(Verdict.objects.filter(reason="x")))
    assert unindexed_lookups(plan_of(Assignment.objects.filter(order_key="x")))
    assert not unindexed_lookups(plan_of(Assignment.objects.filter(judge=invited_judge, code="x")))


@pytest.mark.django_db
def test_every_lookup_on_the_judge_paths_and_the_progress_page_uses_an_index(host):
    sql = measure(host, *SIZES[1])["sql"]
    problems = {}
    for kind, statements in sql.items():
        for statement in statements:
            if not statement.lstrip().upper().startswith(("SELECT", "UPDATE", "DELETE")):
                continue
            found = unindexed_lookups(statement)
            if found:
                problems.setdefault(kind, []).append((statement[:300], found))
    assert not problems


@pytest.mark.django_db
def test_the_progress_counts_on_the_judge_row_match_the_verdicts(invited_judge):
    """Saving again, keeping in phase 2 and changing a value add no count; new verdicts do."""
    own = codes(invited_judge)
    verdict_record(judge=invited_judge, code=own[0], phase=1, value="pass")
    verdict_record(judge=invited_judge, code=own[0], phase=1, value="fail", seconds_spent=9)
    verdict_record(judge=invited_judge, code=own[1], phase=1, value="pass")
    invited_judge.refresh_from_db()
    assert (invited_judge.phase1_answered, invited_judge.phase2_answered) == (2, 0)
    answer_all(invited_judge, 1)
    phase_lock(judge=invited_judge, phase=1)
    verdict_record(judge=invited_judge, code=own[0], phase=2, value="keep")
    verdict_record(judge=invited_judge, code=own[0], phase=2, value="pass")
    invited_judge.refresh_from_db()
    actual = {phase: Verdict.objects.filter(assignment__judge=invited_judge, phase=phase).count()
              for phase in (1, 2)}
    assert (invited_judge.phase1_answered, invited_judge.phase2_answered) == (
        actual[1], actual[2]) == (len(own), 1)


# --- Memory: what a judge-serving process loads ------------------------------------------------

def modules_after(code: str) -> set[str]:
    script = ("import django, json, sys; django.setup(); " + code +
              "; print(json.dumps(sorted(m.split('.')[0] for m in sys.modules)))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True, env={**__import__("os").environ,
                                           "DJANGO_SETTINGS_MODULE": "blindjudge.settings_test"})
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_a_process_serving_judges_loads_neither_numpy_nor_scipy():
    """numpy (~15 MB resident per process) and scipy load where reports are built, never in a
    process that has only loaded the application and its URLs. The check is first shown to see
    numpy once the report builder is imported."""
    assert "numpy" in modules_after("import reports.build")
    loaded = modules_after("import blindjudge.asgi; from django.urls import resolve; "
                           "resolve('/host/'); resolve('/s/x/i/y/')")
    assert not loaded & {"numpy", "scipy"}
