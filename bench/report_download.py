"""Benchmark: the host's report download, built off the serving process (issue 15).

    python bench/report_download.py                 # both sessions, warm and cold builder, SQLite
    python bench/report_download.py --downloads 20 --repeats 5
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bj_bench_download SECRET_KEY=… \\
        python bench/report_download.py

Two revealed sessions, set up through the product's services in the benchmark's own database
(without DATABASE_URL a SQLite file under var/bench/, never the product's):

- "seed000": seed 000's real data (tests/data/seed000: 180 copies of one builder, 3 reviewers × 3
  conditions = 9 reviewer conditions, 1,620 reviews), imported as `import_run --from jsonl` makes
  it (tests/support/seed000.py), judged by 10 judges of 60 items each, both phases;
- "matrix": 300 tasks × 5 builders (1,500 copies), 10 reviewers each reviewing every copy in 2
  conditions (30,000 reviews), 30 judges of 60 items each, both phases.

Then a real server, as `./bj start` runs it (one Uvicorn process, the same flags), signed in as the
host, and only HTTP GETs of /host/sessions/<id>/report/<format>. Measured:

- `downloads`: one download end to end, request sent to last byte read, per format (median and
  all of `--repeats`), with the builder started and warm; the first download, sent at once after
  the session's page (which starts the builder), is reported apart as `first_download_s`; each
  with the builder's own wall and CPU time (the Server-Timing header);
- `rss`: the serving process's resident memory (VmRSS, /proc) after the host's pages, before and
  after `--downloads` more report downloads (both sessions, every format, in turn), and whether
  numpy or scipy were ever mapped into it (/proc/<pid>/maps);
- `build`: the build alone inside a started builder: `python -m reports.worker` driven directly
  over its pipes (the request written, its answer's header read: build + render, in memory;
  wall and the builder's CPU time), the builder's start with its first build, and its resident
  memory idle after the builds and at its peak;
- the same downloads with BLINDJUDGE_REPORT_BUILDER_IDLE=0, a fresh builder per download (a cold
  Python, Django, numpy and scipy each time): what a one-shot child process would cost.

The load average is recorded with every figure. Results: bench/results/report-download-<database>.json.
"""

import argparse
import json
import os
import platform
import secrets
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "bench" / "results"
FORMATS = ("json", "csv", "jsonl", "html", "anon", "anon-jsonl")
SERVER_START_SECONDS = 60


# --- the data (in a subprocess with Django set up) ------------------------------------------------

def _setup_django():
    import django  # noqa: PLC0415 - lazy: Django loads only where the script needs the database

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "blindjudge.settings")
    if not os.environ.get("DATABASE_URL"):
        os.environ.setdefault("BLINDJUDGE_DATA_DIR", str(ROOT / "var" / "bench"))
    django.setup()


def matrix_bundle(tasks: int = 300, builders: int = 5, reviewers: int = 10) -> dict:
    """A run/2 bundle of tasks × builders copies, every copy reviewed by every reviewer clean and
    told "PASS" (condition told_pass); truths alternate defective/good, one in ten unknown."""
    truths = ["tests_fail", "tests_pass", "tests_fail", "tests_pass", "unknown"]
    bundle = {
        "format": "blindjudge.run/2",
        "run": {"name": f"bench: {tasks} tasks x {builders} builders", "default_condition": "clean"},
        "tasks": [{"id": f"org__repo-{t}", "title": f"org__repo-{t}", "format": "text",
                   "cluster": f"org/repo{t % 12}", "statement": f"Issue {t}: the parser fails."}
                  for t in range(tasks)],
        "builders": [{"id": f"m{m}", "model": f"builder-{m}", "family": f"Builder Lab {m}"}
                     for m in range(builders)],
        "reviewers": [{"id": f"r{r}", "model": f"reviewer-{r}", "family": f"Reviewer Lab {r}"}
                      for r in range(reviewers)],
        "copies": [], "reviews": [],
    }
    n = 0
    for t in range(tasks):
        for m in range(builders):
            copy_id = f"org__repo-{t}-m{m}"
            bundle["copies"].append({
                "id": copy_id, "task": f"org__repo-{t}", "builder": f"m{m}", "format": "diff",
                "content": f"--- a/mod_{t}.py\n+++ b/mod_{t}.py\n@@ -1 +1 @@\n-x = {m}\n+x = {t}\n",
                "truth": truths[(t * 7 + m * 3) % 5]})
            for r in range(reviewers):
                for condition in (None, "told_pass"):
                    n += 1
                    bundle["reviews"].append({
                        "reviewer": f"r{r}", "copy": copy_id, "condition": condition,
                        "verdict": "abstain" if n % 23 == 7 else
                        ("fail" if (n * 31 + t + r) % 3 == 0 else "pass"),
                        "reason": f"review {n}: looks {'wrong' if n % 3 == 0 else 'right'}"})
    return bundle


def revealed_session(host, raw: bytes, *, judges: int, per_judge: int, seed: int):
    """A revealed copies session on the bundle `raw`: `judges` invited judges of `per_judge`
    items each, every item judged in both phases (verdict rows in bulk, as bench/report.py does:
    the judges' path is not what is measured), every phase locked through the service."""
    import numpy as np  # noqa: PLC0415 - lazy: only the set-up uses it
    from django.db import transaction  # noqa: PLC0415 - after setup

    from judging.models import Assignment, Verdict  # noqa: PLC0415 - after setup
    from judging.services import (  # noqa: PLC0415 - after setup
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
    run = run_import(host=host, raw=raw, actor="bench")
    session = session_create(run=run, kind="copies", actor="bench", rubric="Right?",
                             items_per_judge=per_judge, draw_seed=f"{seed:064x}").session
    session = session_open(session=session, actor="bench")
    joined = [join_token_exchange(token=invitation_create(
        session=session, actor="bench", name=f"Judge {n}").join_token).judge for n in range(judges)]
    defective = {c.pk: c.truth in ("seeded_defect", "tests_fail") for c in run.copies.all()}
    rows = list(Assignment.objects.filter(judge__session=session)
                .values_list("pk", "judge_id", "item__copy_id"))
    skill = {j.pk: rng.uniform(0.55, 0.9) for j in joined}
    first = {}
    for phase in (1, 2):
        verdicts = []
        for assignment_pk, judge_pk, copy_pk in rows:
            if phase == 1:
                right = first[assignment_pk] = bool(rng.random() < skill[judge_pk])
            else:
                right = first[assignment_pk] if rng.random() < 0.85 else bool(rng.random() < 0.7)
            verdicts.append(Verdict(assignment_id=assignment_pk, phase=phase,
                                    value="fail" if defective[copy_pk] == right else "pass",
                                    kept=phase == 2 and right == first[assignment_pk],
                                    seconds_spent=float(rng.integers(5, 120))))
        with transaction.atomic():
            Verdict.objects.bulk_create(verdicts, batch_size=5000)
        for judge in joined:
            phase_lock(judge=judge, phase=phase)
    session = session_close(session=session, actor="bench")
    return session_reveal(session=session, actor="bench")


def setup() -> dict:
    """Both sessions and a signed-in host's cookie; printed as JSON by `setup` (its own process)."""
    _setup_django()
    from django.conf import settings  # noqa: PLC0415 - after setup
    from django.core.management import call_command  # noqa: PLC0415 - after setup
    from django.db import connection  # noqa: PLC0415 - after setup
    from django.test import Client  # noqa: PLC0415 - after setup

    from judging.services import host_create  # noqa: PLC0415 - after setup
    from tests.support.seed000 import seed_bundle  # noqa: PLC0415 - after setup

    call_command("migrate", verbosity=0, interactive=False)
    # The production settings serve static files from collectstatic's manifest, as ./bj start does.
    call_command("collectstatic", verbosity=0, interactive=False)
    host = host_create(username=f"bench-{secrets.token_hex(4)}",
                       password=secrets.token_urlsafe(16)).host
    started = time.perf_counter()
    seed = revealed_session(host, json.dumps(seed_bundle()).encode("utf-8"), judges=10,
                            per_judge=60, seed=11)
    seed_s = time.perf_counter() - started
    started = time.perf_counter()
    matrix = revealed_session(host, json.dumps(matrix_bundle()).encode("utf-8"), judges=30,
                              per_judge=60, seed=13)
    matrix_s = time.perf_counter() - started
    browser = Client()
    browser.force_login(host.user)
    return {"database": connection.vendor,
            "sessions": {"seed000": seed.pk, "matrix": matrix.pk},
            "setup_s": {"seed000": round(seed_s, 2), "matrix": round(matrix_s, 2)},
            "cookie": f"{settings.SESSION_COOKIE_NAME}={browser.cookies[settings.SESSION_COOKIE_NAME].value}"}


# --- the measurements (this process: no Django) -------------------------------------------------

# The server as ./bj start runs it (one Uvicorn process), flag for flag; checked against bj below.
SERVER_FLAGS = ["--loop", "uvloop", "--http", "httptools", "--ws", "websockets-sansio",
                "--lifespan", "off", "--ws-max-size", "4096", "--timeout-graceful-shutdown", "5",
                "--timeout-keep-alive", "75", "--no-server-header"]


def load() -> float:
    return round(os.getloadavg()[0], 2)


def bench_env(extra: dict | None = None) -> dict:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "blindjudge.settings", "PYTHONUNBUFFERED": "1"}
    if not env.get("DATABASE_URL"):
        env.setdefault("BLINDJUDGE_DATA_DIR", str(ROOT / "var" / "bench"))
    env.update(extra or {})
    return env


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def mapped(pid: int) -> list[str]:
    maps = Path(f"/proc/{pid}/maps").read_text()
    return [name for name in ("numpy", "scipy") if f"/{name}/" in maps or f"/{name}.libs/" in maps]


class Server:
    """`python -m uvicorn blindjudge.asgi:application` with ./bj start's flags, one process."""

    def __init__(self, env_extra: dict, log: Path):
        bj = (ROOT / "bj").read_text()
        missing = [flag for flag in SERVER_FLAGS if flag not in bj]
        assert not missing, f"./bj start no longer passes {missing}: update bench/report_download.py"
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = open(log, "wb")  # noqa: SIM115 - closed in stop()
        env = bench_env({"SITE_URL": self.base, "ALLOWED_HOSTS": "127.0.0.1",
                         "MALLOC_ARENA_MAX": os.environ.get("MALLOC_ARENA_MAX", "2"), **env_extra})
        self.process = subprocess.Popen(  # noqa: S603 - our interpreter, fixed arguments
            [sys.executable, "-m", "uvicorn", "blindjudge.asgi:application", "--host", "127.0.0.1",
             "--port", str(self.port), *SERVER_FLAGS], cwd=ROOT, env=env,
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + SERVER_START_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited; see {log}")
            try:
                with urllib.request.urlopen(self.base + "/guest/", timeout=5) as answer:  # noqa: S310
                    if answer.status == 200:
                        return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"the server did not answer in {SERVER_START_SECONDS} s; see {log}")

    def get(self, path: str, cookie: str) -> tuple[float, int, dict, int]:
        """(seconds from sending the request to its last byte, status, headers, body bytes)."""
        request = urllib.request.Request(self.base + path, headers={"Cookie": cookie})  # noqa: S310
        started = time.perf_counter()
        with urllib.request.urlopen(request, timeout=120) as answer:  # noqa: S310
            size = 0
            while chunk := answer.read(1 << 20):
                size += len(chunk)
            elapsed = time.perf_counter() - started
            return elapsed, answer.status, {k.lower(): v for k, v in answer.headers.items()}, size

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()


def build_ms(headers: dict) -> dict:
    """The builder's own figures from the download's Server-Timing header: {"build": wall ms,
    "build-cpu": CPU ms}."""
    timings = {}
    for part in headers.get("server-timing", "").split(","):
        name, _, duration = part.strip().partition(";dur=")
        if duration:
            timings[name] = float(duration)
    return timings


def measure_server(fixture: dict, *, cold: bool, repeats: int, downloads: int) -> dict:
    """Downloads through a real server: per session and format, `repeats` end-to-end times; then
    (warm only) the server's resident memory before and after `downloads` more downloads."""
    extra = {"BLINDJUDGE_REPORT_BUILDER_IDLE": "0"} if cold else {}
    RESULTS.mkdir(parents=True, exist_ok=True)
    server = Server(extra, RESULTS / f"report-download-{'cold' if cold else 'warm'}.log.tmp")
    cookie, sessions = fixture["cookie"], fixture["sessions"]
    out = {"builder": "a new builder per download (BLINDJUDGE_REPORT_BUILDER_IDLE=0)" if cold
           else "one builder, started by the first download and reused", "downloads": {}}
    try:
        # Pages first, as a host would come: the runs, then the revealed session's page (whose
        # report links are there; it starts a builder unless the idle limit is 0).
        server.get("/host/", cookie)
        server.get(f"/host/sessions/{sessions['seed000']}/", cookie)
        out["rss_kib_after_pages"] = rss_kib(server.process.pid)
        if not cold:
            # At once, not after the second or so a person takes: the builder is still starting.
            seconds, status, headers, _ = server.get(
                f"/host/sessions/{sessions['seed000']}/report/json", cookie)
            out["first_download_s"] = {
                "report": "seed000/json", "when": "at once after the session's page",
                "seconds": round(seconds, 3), "build_ms": build_ms(headers),
                "load_average_1min": load()}
        for name, session_id in sessions.items():
            for fmt in FORMATS:
                times, builds, loads, size = [], [], [], None
                for _ in range(repeats):
                    seconds, status, headers, size = server.get(
                        f"/host/sessions/{session_id}/report/{fmt}", cookie)
                    assert status == 200, (name, fmt, status)
                    times.append(seconds)
                    builds.append(build_ms(headers))
                    loads.append(load())
                out["downloads"][f"{name}/{fmt}"] = {
                    "median_s": round(statistics.median(times), 3),
                    "all_s": [round(t, 3) for t in times], "build_ms": builds, "bytes": size,
                    "load_average_1min": loads}
                print(json.dumps({"server": "cold" if cold else "warm", "report": f"{name}/{fmt}",
                                  **out["downloads"][f"{name}/{fmt}"]}), flush=True)
        if not cold:
            before = rss_kib(server.process.pid)
            for n in range(downloads):
                name = ("seed000", "matrix")[n % 2]
                server.get(f"/host/sessions/{sessions[name]}/report/{FORMATS[(n // 2) % 4]}", cookie)
            after = rss_kib(server.process.pid)
            out["rss"] = {"kib_after_pages": out["rss_kib_after_pages"],
                          "kib_before_downloads": before, "downloads": downloads,
                          "kib_after_downloads": after, "growth_kib": after - before,
                          "growth_kib_from_pages": after - out["rss_kib_after_pages"],
                          "load_average_1min": load()}
            print(json.dumps({"server": "warm", "rss": out["rss"]}), flush=True)
        out["numpy_or_scipy_mapped_in_server"] = mapped(server.process.pid)
    finally:
        server.stop()
    return out


def measure_builds(fixture: dict, repeats: int) -> dict:
    """The build alone inside a started builder: `python -m reports.worker` driven over its pipes
    as the server drives it (single-threaded BLAS, as reports/offprocess.py starts it); timed
    from writing the request to reading its header (the report built and rendered, in memory)."""
    env = bench_env({name: os.environ.get(name, "1") for name in
                     ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")})
    started = time.perf_counter()
    builder = subprocess.Popen(  # noqa: S603 - our interpreter, fixed arguments
        [sys.executable, "-m", "reports.worker", "--idle", "600"], cwd=ROOT, env=env,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    out = {}
    try:
        for name, session_id in fixture["sessions"].items():
            for fmt in FORMATS:
                times, cpu, loads = [], [], []
                for _ in range(repeats + 1):  # the first of each is a warm-up, not counted
                    sent = time.perf_counter()
                    builder.stdin.write(json.dumps({"session": session_id, "format": fmt}).encode() + b"\n")
                    builder.stdin.flush()
                    header = json.loads(builder.stdout.readline())
                    times.append(time.perf_counter() - sent)
                    cpu.append(header["build_cpu_s"])
                    loads.append(load())
                    builder.stdout.read(header["bytes"])
                    if "start_and_first_build_s" not in out:
                        out["start_and_first_build_s"] = round(time.perf_counter() - started, 3)
                out[f"{name}/{fmt}"] = {"median_s": round(statistics.median(times[1:]), 3),
                                        "all_s": [round(t, 3) for t in times[1:]],
                                        "median_cpu_s": round(statistics.median(cpu[1:]), 3),
                                        "bytes": header["bytes"],
                                        "load_average_1min": loads[1:]}
                print(json.dumps({"builder": f"{name}/{fmt}", **out[f"{name}/{fmt}"]}), flush=True)
        time.sleep(2)  # the builder gives memory back after its last answer
        status = Path(f"/proc/{builder.pid}/status").read_text()
        kib = {line.split(":")[0]: int(line.split()[1]) for line in status.splitlines()
               if line.startswith(("VmRSS:", "VmHWM:"))}
        out["builder_memory_kib"] = {"resident_idle_after_builds": kib["VmRSS"], "peak": kib["VmHWM"]}
    finally:
        builder.stdin.close()
        builder.wait(timeout=60)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", nargs="?", choices=["all", "setup"], default="all")
    parser.add_argument("--repeats", type=int, default=5, help="downloads (builds) per report and format")
    parser.add_argument("--cold-repeats", type=int, default=3, help="the same with a new builder each")
    parser.add_argument("--downloads", type=int, default=20, help="downloads between the RSS readings")
    parser.add_argument("--fixture", help="a `setup` output to reuse instead of making the sessions")
    parser.add_argument("--no-write", action="store_true", help="print only; write no result file")
    args = parser.parse_args(argv)
    if args.command == "setup":
        print(json.dumps(setup()))
        return 0
    if args.fixture:
        fixture = json.loads(Path(args.fixture).read_text())
    else:
        made = subprocess.run(  # noqa: S603 - our interpreter and script, fixed arguments
            [sys.executable, str(Path(__file__).resolve()), "setup"], cwd=ROOT, env=bench_env(),
            check=True, capture_output=True, text=True)
        fixture = json.loads(made.stdout.strip().splitlines()[-1])
    print(json.dumps({"fixture": fixture["sessions"], "setup_s": fixture.get("setup_s")}), flush=True)
    results = {
        "benchmark": "bench/report_download.py",
        "targets": {"download_end_to_end_s": {"seed000": 1.0, "matrix": 3.0},
                    "build_in_a_started_builder_s": {"seed000": 0.5, "matrix": 2.0},
                    "server_rss_growth_after_20_downloads_kib": 5 * 1024},
        "database": fixture["database"], "python": platform.python_version(),
        "machine": platform.machine(), "cpus": os.cpu_count(),
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "load_average_at_start": os.getloadavg(),
        "build": measure_builds(fixture, args.repeats),
        "warm": measure_server(fixture, cold=False, repeats=args.repeats, downloads=args.downloads),
        "cold": measure_server(fixture, cold=True, repeats=args.cold_repeats, downloads=0),
        "load_average_at_end": os.getloadavg(),
    }
    if not args.no_write:
        out = RESULTS / f"report-download-{fixture['database']}.json"
        out.write_text(json.dumps(results, indent=2) + "\n")
        print(f"wrote {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
