"""Benchmark: building the revealed report, cold and warm, with peak memory.

    .venv/bin/python bench/report.py                       # 2,000 and 200,000 verdicts
    .venv/bin/python bench/report.py --judges 50 --items 100 --runs 5
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bj_bench SECRET_KEY=… .venv/bin/python bench/report.py

The target (issue 5): 200 judges × 500 items, both phases (200,000 verdicts), built in ≤ 2 s warm,
with memory linear in verdicts. `measure_report(judges, items)` sets up one revealed session of
that size in the configured database and returns the figures; `main()` runs it for each size and
writes bench/results/report-<database>.json.

What is timed is `reports.build.build_report(session)` — every query, every statistic (per-judge
McNemar, the 2,000-resample bootstraps, agreement) and the complete dict — on a revealed session.
"cold" is the first build in the process (scipy not yet imported, nothing cached); "warm" is the
median of the next builds. Wall time and the process's CPU time are both given: on a shared,
busy machine the wall time counts other processes' work too (the load average is recorded). Writing
the JSON file is timed beside it, not in it. Peak memory is
tracemalloc's peak over one warm build (Python and numpy allocations), and the process's maximum
resident set size.

The session is set up through the services (import, create, open, join, lock, close, reveal);
only the verdict rows themselves are inserted in bulk — recording 200,000 verdicts one service
call at a time would take the benchmark's whole budget and measures the judge's path, not the
report. Without DATABASE_URL the benchmark uses its own SQLite file under var/bench/, never the
product's.
"""

import argparse
import json
import os
import platform
import resource
import secrets
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
# (judges, items): 2,000, 20,000 and 200,000 verdicts over both phases
SIZES = ((20, 50), (50, 200), (200, 500))


def _setup_django():
    """Configure Django unless the caller (e.g. bench/run.py) already has."""
    import django  # noqa: PLC0415 - lazy: Django loads only where the script needs the database
    from django.conf import settings  # noqa: PLC0415 - after setup

    if settings.configured:
        return
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "blindjudge.settings")
    if not os.environ.get("DATABASE_URL"):
        os.environ.setdefault("BLINDJUDGE_DATA_DIR", str(ROOT / "var" / "bench"))
    django.setup()


def _bundle(items: int, seed: int = 5) -> bytes:
    rng = np.random.default_rng(seed)
    builders = [{"id": f"b{n}", "model": f"model-{n}-2026-01-01", "family": f"Family{n}"}
                for n in range(1, 6)]
    truths = rng.choice(["seeded_defect", "known_good", "tests_fail", "tests_pass", "unknown"],
                        size=items, p=[0.35, 0.35, 0.1, 0.1, 0.1])
    operator = {"seeded_defect": "-", "tests_fail": "-"}
    operator = {"seeded_defect": "-", "tests_fail": "-"}
    copies = [{"id": f"c{n:05d}", "builder": builders[n % 5]["id"], "format": "text",
               "content": f"def f{n}(a, b):\n    return a {operator.get(str(truth), '+')} b\n",
               "truth": str(truth), "cluster": f"fn{n // 5}"}
              for n, truth in enumerate(truths)]
    reviewers = [{"id": f"r{n}", "model": f"reviewer-{n}", "family": f"Lab{n}"} for n in range(1, 4)]
    reviews = [{"reviewer": r["id"], "copy": c["id"],
                "verdict": "fail" if rng.random() < 0.5 else "pass", "reason": "bench",
                "authorship_guess": builders[int(rng.integers(0, 5))]["model"]}
               for r in reviewers for c in copies]
    return json.dumps({
        "format": "blindjudge.run/1", "run": {"name": "bench", "task": "Write f(a, b)."},
        "builders": builders, "copies": copies, "reviewers": reviewers, "reviews": reviews,
        "findings": [],
    }).encode("utf-8")


def setup_session(judges: int, items: int, seed: int = 7):
    """A revealed session: `judges` invited judges, each judging all `items` in both phases."""
    from django.db import transaction  # noqa: PLC0415 - after setup

    from accounts.models import Host  # noqa: PLC0415 - after setup
    from judging.models import Assignment, Verdict  # noqa: PLC0415 - after setup
    from judging.services import (  # noqa: PLC0415 - after setup
        host_create,
        invitation_create,
        join_token_exchange,
        phase_lock,
        run_import,
        session_close,
        session_create,
        session_open,
        session_reveal,
    )

    rng = np.random.default_rng(seed)
    host = Host.objects.filter(user__username="bench").first()
    if host is None:
        # A throwaway account in the benchmark's own database; nobody signs in with it.
        host = host_create(username="bench", password=secrets.token_urlsafe(16)).host
    run = run_import(host=host, raw=_bundle(items), actor="bench")
    session = session_create(run=run, kind="copies", actor="bench", rubric="Right?",
                             preregistration='```rules\n[{"name": "herding", "metric": '
                             '"delta_fleiss_kappa", "op": ">=", "threshold": 0.1, "and": '
                             '{"metric": "delta_recall", "op": "<=", "threshold": 0.0}}]\n```\n',
                             draw_seed=f"{seed:064x}").session
    session = session_open(session=session, actor="bench")
    joined = []
    for n in range(judges):
        token = invitation_create(session=session, actor="bench", name=f"Judge {n}").join_token
        joined.append(join_token_exchange(token=token).judge)
    defective = {c.pk: c.truth in ("seeded_defect", "tests_fail") for c in run.copies.all()}
    rows = list(Assignment.objects.filter(judge__session=session)
                .values_list("pk", "judge_id", "item__copy_id"))
    skill = {j.pk: rng.uniform(0.55, 0.9) for j in joined}
    phase1 = {}
    for phase in (1, 2):
        verdicts = []
        for assignment_pk, judge_pk, copy_pk in rows:
            if phase == 1:
                right = rng.random() < skill[judge_pk]
                phase1[assignment_pk] = right
            else:  # the models move some verdicts, mostly towards truth
                right = phase1[assignment_pk] if rng.random() < 0.85 else rng.random() < 0.7
            says_fail = defective[copy_pk] == right
            seconds = float(rng.integers(5, 120))
            # The server's interval between answers as a real session has it: a number on every
            # verdict, so the report reads and counts a full column (issue 30 item 4).
            verdicts.append(Verdict(assignment_id=assignment_pk, phase=phase,
                                    value="fail" if says_fail else "pass",
                                    kept=phase == 2 and right == phase1[assignment_pk],
                                    seconds_spent=seconds, server_seconds=seconds + 1.5))
        with transaction.atomic():
            Verdict.objects.bulk_create(verdicts, batch_size=5000)
            # item_save keeps each judge's answered count on their row, and the lock reads it;
            # rows inserted in bulk are counted here (every judge answered all their items).
            assigned = Counter(judge_pk for _, judge_pk, _ in rows)
            for judge in joined:
                type(judge).objects.filter(pk=judge.pk).update(
                    **{judge.answered_field(phase): assigned[judge.pk]})
        for judge in joined:
            phase_lock(judge=judge, phase=phase)
    session = session_close(session=session, actor="bench")
    return session_reveal(session=session, actor="bench")


def measure_report(judges: int, items: int, *, runs: int = 3) -> dict:
    """Set up a revealed session of judges × items (both phases) and time build_report on it.

    Returns {"judges", "items", "verdicts", "setup_s", "cold_s", "cold_cpu_s", "warm_s" (median
    wall time), "warm_runs_s", "warm_cpu_s" (median process CPU time), "load_average_1min",
    "json_s", "json_bytes", "peak_tracemalloc_bytes", "max_rss_bytes", "database"}.
    "cold_s" is a cold build only when this is the process's first report.
    """
    _setup_django()
    from django.core.management import call_command  # noqa: PLC0415 - after setup
    from django.db import connection  # noqa: PLC0415 - after setup

    from reports.build import build_report  # noqa: PLC0415 - after setup

    call_command("migrate", verbosity=0, interactive=False)  # a no-op on a migrated database
    from reports.export import to_json  # noqa: PLC0415 - after setup

    started = time.perf_counter()
    session = setup_session(judges, items)
    setup_s = time.perf_counter() - started
    cold_scipy = "scipy" not in sys.modules

    started, started_cpu = time.perf_counter(), time.process_time()
    report = build_report(session)
    cold_s, cold_cpu = time.perf_counter() - started, time.process_time() - started_cpu
    warm, warm_cpu = [], []
    for _ in range(runs):
        del report  # as a server would: the previous report is gone before the next is built
        started, started_cpu = time.perf_counter(), time.process_time()
        report = build_report(session)
        warm.append(time.perf_counter() - started)
        warm_cpu.append(time.process_time() - started_cpu)
    started = time.perf_counter()
    data = to_json(report)
    json_s = time.perf_counter() - started
    del report
    tracemalloc.start()
    build_report(session)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux reports KiB
    return {
        "judges": judges, "items": items, "verdicts": 2 * judges * items,
        "database": connection.vendor, "setup_s": round(setup_s, 2),
        "cold_s": round(cold_s, 3), "cold_includes_scipy_import": cold_scipy,
        "cold_cpu_s": round(cold_cpu, 3),
        "warm_s": round(statistics.median(warm), 3), "warm_runs_s": [round(t, 3) for t in warm],
        "warm_cpu_s": round(statistics.median(warm_cpu), 3),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "json_s": round(json_s, 3), "json_bytes": len(data),
        "peak_tracemalloc_bytes": peak, "max_rss_bytes": rss,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--judges", type=int, help="one size only, in this process: judges")
    parser.add_argument("--items", type=int, help="one size only, in this process: items")
    parser.add_argument("--runs", type=int, default=3, help="warm builds to take the median of")
    parser.add_argument("--no-write", action="store_true", help="print only; write no result file")
    args = parser.parse_args(argv)
    _setup_django()
    from django.db import connection  # noqa: PLC0415 - after setup

    if args.judges and args.items:
        sizes_results = [measure_report(args.judges, args.items, runs=args.runs)]
        print(json.dumps(sizes_results[0]), flush=True)
    else:
        # Each size in a fresh process, so that its first build is a cold one (scipy not yet
        # imported) and one size's memory does not count against the next.
        sizes_results = []
        for judges, items in SIZES:
            child = subprocess.run(  # noqa: S603 - our own interpreter and script, fixed arguments
                [sys.executable, str(Path(__file__).resolve()), "--judges", str(judges),
                 "--items", str(items), "--runs", str(args.runs), "--no-write"],
                check=True, capture_output=True, text=True, cwd=ROOT)
            figures = json.loads(child.stdout.strip().splitlines()[-1])
            sizes_results.append(figures)
            print(json.dumps(figures), flush=True)
    if not args.no_write:
        RESULTS.mkdir(parents=True, exist_ok=True)
        out = RESULTS / f"report-{connection.vendor}.json"
        out.write_text(json.dumps({
            "benchmark": "bench/report.py", "target": "200 judges x 500 items warm <= 2 s",
            "python": platform.python_version(), "machine": platform.machine(),
            "cpus": os.cpu_count(), "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "results": sizes_results,
        }, indent=2) + "\n")
        print(f"wrote {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
