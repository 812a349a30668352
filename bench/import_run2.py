"""Benchmark: importing a run of many tasks (blindjudge.run/2) and opening a session on it.

    .venv/bin/python bench/import_run2.py                      # 300 tasks x 5 models, SQLite
    .venv/bin/python bench/import_run2.py --tasks 50 --runs 3
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bj_bench_import SECRET_KEY=… \
        .venv/bin/python bench/import_run2.py

The target (issue 13): 300 tasks x 5 models (1,500 diffs of about 5 KB, 7,500 reviews) imported
in at most 5 s, and a session on it opened (every copy, task and reason rendered once) in at most
10 s, on this machine. Timed: `run_import` on the bundle's bytes (validation, the manifest and
every row written), `session_create` (items) and `session_open` (renders and the frozen protocol),
each in a fresh run of the measurement; the load average is recorded beside them. Without
DATABASE_URL it uses its own SQLite file under var/bench/, never the product's.

The bundle is SWE-bench-shaped: each task an issue text of about 1.5 KB, each copy a unified diff
of varied lines; each copy reviewed by three reviewers clean and two of them again told "PASS"
(condition told_pass), one reply in twenty without a verdict.
"""

import argparse
import hashlib
import json
import os
import platform
import secrets
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"


def _setup_django():
    import django  # noqa: PLC0415 - lazy: Django loads only where the script needs the database

    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "blindjudge.settings")
    if not os.environ.get("DATABASE_URL"):
        os.environ.setdefault("BLINDJUDGE_DATA_DIR", str(ROOT / "var" / "bench"))
    django.setup()


def _diff(task: int, model: int, size: int) -> str:
    seed = hashlib.sha256(f"{task}/{model}".encode()).hexdigest()
    lines = [f"diff --git a/pkg/mod_{task}.py b/pkg/mod_{task}.py",
             f"--- a/pkg/mod_{task}.py", f"+++ b/pkg/mod_{task}.py", "@@ -10,7 +10,9 @@"]
    n = 0
    while sum(len(line) + 1 for line in lines) < size:
        mark = "+-  "[n % 4]
        lines.append(f"{mark}    value_{n} = compute_{seed[n % 56:n % 56 + 8]}(value_{n - 1}, {model})")
        n += 1
    return "\n".join(lines) + "\n"


def make_bundle(tasks: int, models: int = 5, *, copy_bytes: int = 5000) -> dict:
    truths = ["tests_pass", "tests_fail", "unknown"]
    reviewers = [{"id": f"r{i}", "model": f"reviewer-{i}", "family": f"Reviewer Lab {i}"}
                 for i in range(3)]
    bundle = {
        "format": "blindjudge.run/2",
        "run": {"name": f"bench: {tasks} tasks x {models} models", "default_condition": "clean"},
        "tasks": [{"id": f"org__repo-{t}", "title": f"org__repo-{t}", "format": "text",
                   "cluster": f"org/repo{t % 12}",
                   "statement": (f"Issue {t}: the parser fails on nested input. " * 30)[:1500]}
                  for t in range(tasks)],
        "builders": [{"id": f"m{m}", "model": f"builder-{m}", "family": f"Builder Lab {m}"}
                     for m in range(models)],
        "reviewers": reviewers, "copies": [], "reviews": [],
    }
    for t in range(tasks):
        for m in range(models):
            copy_id = f"org__repo-{t}-m{m}"
            bundle["copies"].append({
                "id": copy_id, "task": f"org__repo-{t}", "builder": f"m{m}", "format": "diff",
                "content": _diff(t, m, copy_bytes), "truth": truths[(t + m) % 3]})
            for r, condition in ((0, None), (1, None), (2, None), (0, "told_pass"),
                                 (1, "told_pass")):
                n = len(bundle["reviews"])
                bundle["reviews"].append({
                    "reviewer": f"r{r}", "copy": copy_id, "condition": condition,
                    "verdict": "abstain" if n % 20 == 7 else ("fail" if (n + t) % 3 == 0 else "pass"),
                    "reason": f"review {n}: the change looks {'wrong' if n % 3 == 0 else 'right'}"})
    return bundle


def measure(tasks: int, models: int) -> dict:
    from accounts.models import Host  # noqa: PLC0415 - after setup
    from judging.services import (  # noqa: PLC0415 - after setup
        host_create,
        run_import,
        session_create,
        session_open,
    )

    raw = json.dumps(make_bundle(tasks, models), ensure_ascii=False).encode("utf-8")
    name = f"bench-import-{os.getpid()}-{time.monotonic_ns()}"
    host = host_create(username=name[:30], password=secrets.token_urlsafe(16)).host
    assert isinstance(host, Host)
    started = time.perf_counter()
    run = run_import(host=host, raw=raw, actor="bench")
    imported = time.perf_counter() - started
    started = time.perf_counter()
    session = session_create(run=run, kind="copies", actor="bench").session
    created = time.perf_counter() - started
    started = time.perf_counter()
    session_open(session=session, actor="bench")
    opened = time.perf_counter() - started
    return {"tasks": tasks, "models": models, "copies": run.copies.count(),
            "reviews": run.reviews.count(), "bundle_bytes": len(raw),
            "import_s": round(imported, 3), "create_s": round(created, 3),
            "open_s": round(opened, 3), "load_average": os.getloadavg()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=300)
    parser.add_argument("--models", type=int, default=5)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    _setup_django()
    from django.core.management import call_command  # noqa: PLC0415 - after setup
    from django.db import connection  # noqa: PLC0415 - after setup

    call_command("migrate", verbosity=0)
    runs = [measure(args.tasks, args.models) for _ in range(args.runs)]
    for figures in runs:
        print(json.dumps(figures))
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"import-run2-{connection.vendor}.json"
    out.write_text(json.dumps({"machine": platform.platform(), "cpus": os.cpu_count(),
                               "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                               "runs": runs}, indent=2) + "\n")
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
