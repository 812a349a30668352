"""The load benchmark: one command, a real server started the production way, both databases.

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python bench/run.py                    # SQLite default and PostgreSQL, ~15 min
    .venv/bin/python bench/run.py --db sqlite --duration 5

For each database it makes a fresh database, creates a session of --items items of about 2 KB
and --judges judges through the product's services (bench/fixture.py), starts the server the
production way — PostgreSQL + Redis: deploy/serve PORT WORKERS (Uvicorn); SQLite: ./bj start
(Uvicorn, one process) with the benchmark's own data directory — and drives a closed loop,
bounded in time and in count, at each concurrency: the hello-world baseline (bench/urls.py), its
two floors (one database statement; the judge guard alone, what every judge request does first), the
item page, the copy frame, a verdict save (the page's autosave POST), the phase-2 page, the host's
progress view (before any verdict and at >= 10,000), then the locks over judges pre-filled to the
lock. It samples every server process's CPU time and resident memory with psutil, downloads the
report after the reveal (memory after it is reported apart), and writes a JSON file under
bench/results/ and a markdown table on stdout. See bench/README.md.
"""

import argparse
import asyncio
import datetime
import json
import os
import platform
import random
import re
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import aiohttp
import psutil

if __package__ in (None, ""):  # run as a script: bench/run.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import shapes  # noqa: E402
from bench.shapes import PageChanged  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PYTHON = os.environ.get("BENCH_PYTHON") or str(ROOT / ".venv" / "bin" / "python")
CSRF = "benchcsrftoken0123456789abcdefgh"  # a valid 32-character CSRF secret, cookie and header
# ./bj start's Uvicorn options after --host and --port (kept the same by hand: see ./bj).
BJ_START_UVICORN = ["--loop", "uvloop", "--http", "httptools", "--ws", "websockets-sansio",
                    "--lifespan", "off", "--ws-max-size", "4096", "--timeout-graceful-shutdown", "5",
                    "--timeout-keep-alive", "75", "--no-server-header"]
KINDS = ["hello", "item", "frame", "save", "phase2", "progress"]
# What every judge request must do before its own work, measured beside hello (bench/urls.py):
# no judge request can serve more requests a second than these.
FLOORS = ("statement", "admitted")


# --- The server and its processes --------------------------------------------------------------

class ProcessSampler(threading.Thread):
    """Every 50 ms: the resident memory of each server process (peak kept per process, under
    the current label) — the processes are found again each time, so new workers count too."""

    def __init__(self, root_pid):
        super().__init__(daemon=True)
        self.root = psutil.Process(root_pid)
        self.label = "judge traffic"
        self.peaks = {}  # label -> pid -> {"rss_mb", "cmd"}
        self.stopped = threading.Event()

    def processes(self):
        try:
            return [self.root, *self.root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def cpu_seconds(self):
        total = 0.0
        for process in self.processes():
            try:
                times = process.cpu_times()
                total += times.user + times.system
            except psutil.NoSuchProcess:
                pass
        return total

    def run(self):
        while not self.stopped.wait(0.05):
            for process in self.processes():
                try:
                    rss = process.memory_info().rss / 2**20
                    cmd = " ".join(process.cmdline())[:160]
                except psutil.NoSuchProcess:
                    continue
                entry = self.peaks.setdefault(self.label, {}).setdefault(
                    process.pid, {"rss_mb": 0.0, "cmd": cmd})
                entry["rss_mb"] = max(entry["rss_mb"], round(rss, 1))


def http_get(url, cookie=None, timeout=2.0):
    """(status, headers, body) of a GET; status None when nothing answered."""
    # Only ever http://127.0.0.1:PORT/…, built here.
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})  # noqa: S310
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()
    except OSError:
        return None, {}, b""


def http_status(url, cookie=None, timeout=2.0):
    return http_get(url, cookie, timeout)[0]


class Server:
    """A server process group we started, with its sampler; stopped by its own process group."""

    def __init__(self, command, env, log_path, base):
        self.base = base
        self.log_path = log_path
        self.started = time.perf_counter()
        self.log = open(log_path, "w")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=self.log,  # noqa: S603
                                        stderr=subprocess.STDOUT, start_new_session=True)
        self.exec_at = None
        self.first_answer_at = None

    def wait_ready(self, path, marker=None, timeout=180):
        """Poll until `path` answers 200. `marker` names the server program: for a launcher that
        execs it (./bj start), the time it appears in the process's command line is noted, so the
        cold start of the server itself is told apart from the launcher's set-up steps."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited with {self.process.returncode}; see {self.log_path}")
            if marker and self.exec_at is None:
                try:
                    if marker in " ".join(psutil.Process(self.process.pid).cmdline()):
                        self.exec_at = time.perf_counter()
                except psutil.NoSuchProcess:
                    pass
            if (self.exec_at or not marker) and http_status(self.base + path) == 200:
                self.first_answer_at = time.perf_counter()
                self.sampler = ProcessSampler(self.process.pid)
                self.sampler.start()
                return
            time.sleep(0.01)
        raise RuntimeError(f"server not ready after {timeout} s; see {self.log_path}")

    def cold_start(self):
        return {
            "launch_to_first_answer_s": round(self.first_answer_at - self.started, 3),
            "server_start_to_first_answer_s": round(
                self.first_answer_at - (self.exec_at or self.started), 3),
        }

    def stop(self):
        if hasattr(self, "sampler"):  # started once the server answered
            self.sampler.stopped.set()
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=20)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.log.close()


# --- Closed-loop load ----------------------------------------------------------------------------

def percentile(sorted_values, fraction):
    if not sorted_values:
        return None
    index = min(len(sorted_values) - 1, max(0, round(fraction * len(sorted_values) + 0.5) - 1))
    return sorted_values[index]


async def drive(base, make_request, concurrency, duration, max_requests, warmup, cpu_probe):
    """`concurrency` clients, each sending its next request as soon as the last one answers.
    Requests answered inside the measured window (after `warmup` s, for `duration` s or until
    `max_requests` answers) count. make_request(client, n) -> (method, path, headers, data,
    shape) or None when that client has nothing more to send; shape: a bench.shapes.Shape, whose
    check counts a failure under load as an error and raises PageChanged for a response of the
    wrong shape, which ends the cell at once and is raised here (warm-up answers are checked
    too)."""
    connector = aiohttp.TCPConnector(limit=0, force_close=False)
    timeout = aiohttp.ClientTimeout(total=60)
    latencies, errors, error_samples = [], 0, []
    state = {"recording": False, "done": False, "changed": None}
    window_full = asyncio.Event()

    async with aiohttp.ClientSession(base_url=base, connector=connector, timeout=timeout,
                                     cookie_jar=aiohttp.DummyCookieJar()) as http:
        async def client(number):
            nonlocal errors
            n = 0
            while not state["done"]:
                spec = make_request(number, n)
                n += 1
                if spec is None:
                    return
                method, path, headers, data, shape = spec
                started = time.perf_counter()
                try:
                    async with http.request(method, path, headers=headers, data=data,
                                            allow_redirects=False) as response:
                        body = await response.read()
                        problem = shape.check(response.status, response.headers, body,
                                              f"{method} {path}")
                except (TimeoutError, aiohttp.ClientError) as error:
                    problem = f"{type(error).__name__}: {error}"
                except PageChanged as changed:
                    state["changed"] = state["changed"] or changed
                    state["done"] = True
                    window_full.set()
                    return
                elapsed = time.perf_counter() - started
                if not state["recording"] or state["done"]:
                    continue
                if problem:
                    errors += 1
                    if len(error_samples) < 5:
                        error_samples.append(problem[:300])
                else:
                    latencies.append(elapsed)
                if len(latencies) + errors >= max_requests:
                    window_full.set()

        tasks = [asyncio.create_task(client(i)) for i in range(concurrency)]
        await asyncio.sleep(warmup)
        cpu_before = cpu_probe()
        state["recording"] = True
        started = time.perf_counter()
        everyone_done = asyncio.ensure_future(asyncio.gather(*tasks))
        waiter = asyncio.ensure_future(window_full.wait())
        await asyncio.wait([waiter, everyone_done], timeout=duration,
                           return_when=asyncio.FIRST_COMPLETED)
        state["done"] = True
        window = time.perf_counter() - started
        cpu_after = cpu_probe()
        waiter.cancel()
        await asyncio.wait_for(everyone_done, timeout=70)
    if state["changed"] is not None:
        raise state["changed"]
    latencies.sort()
    answered = len(latencies) + errors
    return {
        "requests": answered, "errors": errors, "error_samples": error_samples,
        "seconds": round(window, 2),
        "rps": round(answered / window, 1) if window else None,
        "p50_ms": _ms(percentile(latencies, 0.50)), "p95_ms": _ms(percentile(latencies, 0.95)),
        "p99_ms": _ms(percentile(latencies, 0.99)),
        "mean_ms": _ms(statistics.fmean(latencies)) if latencies else None,
        "server_cpu_ms_per_request": round(1000 * (cpu_after - cpu_before) / answered, 2)
        if answered else None,
    }


def _ms(seconds):
    return None if seconds is None else round(1000 * seconds, 1)


class Traffic:
    """Request makers for each kind, over the fixture's judges."""

    def __init__(self, fixture, phase1_judges, phase2_judges, pairs=None, reasons=None):
        self.fixture = fixture
        self.pairs = pairs
        self.reasons = reasons
        self.url_id = fixture["url_id"]
        self.phase1 = phase1_judges
        self.phase2 = phase2_judges
        self.random = random.Random(7)

    @staticmethod
    def cookie(sessionid):
        return {"Cookie": f"sessionid={sessionid}; csrftoken={CSRF}"}

    def _judge(self, group, client):
        return group[client % len(group)]

    def maker(self, kind):
        url_id = self.url_id

        def hello(client, n):
            return "GET", "/bench/hello", {}, None, shapes.hello()

        def statement(client, n):
            return "GET", f"/s/{url_id}/bench/statement", {}, None, shapes.statement()

        def admitted(client, n):
            judge = self._judge(self.phase1, client)
            return ("GET", f"/s/{url_id}/bench/admitted", self.cookie(judge["sessionid"]), None,
                    shapes.admitted(judge["pseudonym"]))

        def item(client, n, group=None, phase=1):
            judge = self._judge(group or self.phase1, client)
            code = self.random.choice(judge["codes"])
            return ("GET", f"/s/{url_id}/i/{code}/", self.cookie(judge["sessionid"]), None,
                    shapes.item(code, phase))

        def frame(client, n):
            judge = self._judge(self.phase1, client)
            code = self.random.choice(judge["codes"])
            return ("GET", f"/s/{url_id}/i/{code}/frame", self.cookie(judge["sessionid"]), None,
                    shapes.frame())

        def save(client, n):
            judge = self._judge(self.phase1, client)
            code = self.random.choice(judge["codes"])
            headers = {**self.cookie(judge["sessionid"]), "X-CSRFToken": CSRF,
                       "Accept": "application/json"}
            data = {"verdict": self.random.choice(("pass", "fail")), "phase": "1", "reason": "",
                    "seconds_spent": str(n + 1)}
            return ("POST", f"/s/{url_id}/i/{code}/", headers, data, shapes.save())

        def phase2(client, n):
            return item(client, n, group=self.phase2, phase=2)

        def review(client, n):
            # The phase-1 judges, every item answered after the pre-fill, not locked yet.
            judge = self._judge(self.phase1, client)
            return ("GET", f"/s/{url_id}/lock/", self.cookie(judge["sessionid"]), None,
                    shapes.review(1))

        def pair(client, n):
            judge = self._judge(self.pairs["judges"], client)
            code = self.random.choice(judge["codes"])
            return ("GET", f"/s/{self.pairs['url_id']}/i/{code}/", self.cookie(judge["sessionid"]),
                    None, shapes.pair(code))

        def pairframe(client, n):
            judge = self._judge(self.pairs["judges"], client)
            code = self.random.choice(judge["side_codes"])
            return ("GET", f"/s/{self.pairs['url_id']}/i/{code}/frame",
                    self.cookie(judge["sessionid"]), None, shapes.frame())

        def reason(client, n):
            judge = self._judge(self.reasons["judges"], client)
            code = self.random.choice(judge["codes"])
            return ("GET", f"/s/{self.reasons['url_id']}/i/{code}/",
                    self.cookie(judge["sessionid"]), None, shapes.reason(code))

        def progress(client, n):
            return ("GET", f"/host/sessions/{self.fixture['session_id']}/judges",
                    {"Cookie": f"sessionid={self.fixture['host_sessionid']}"}, None,
                    shapes.progress(len(self.fixture["judges"])))

        return {"hello": hello, "statement": statement, "admitted": admitted, "item": item,
                "frame": frame, "save": save, "phase2": phase2, "review": review,
                "progress": progress, "pair": pair, "pairframe": pairframe,
                "reason": reason}[kind]

    def locks(self, judges, phase):
        """One lock POST of `phase` per judge (the phase the review form names), each judge once,
        handed out in turn to whichever client is free."""
        queue = list(judges)

        def lock(client, n):
            if not queue:
                return None
            judge = queue.pop()
            headers = {**self.cookie(judge["sessionid"]), "X-CSRFToken": CSRF}
            return ("POST", f"/s/{self.url_id}/lock/", headers, {"confirm": "yes", "phase": str(phase)},
                    shapes.lock(self.url_id, phase))
        return lock


# --- Setting up one database ----------------------------------------------------------------

def run_python(args, env, what):
    started = time.perf_counter()
    done = subprocess.run([PYTHON, *args], cwd=ROOT, env=env, capture_output=True,  # noqa: S603
                          text=True)
    if done.returncode:
        raise RuntimeError(f"{what} failed:\n{done.stdout}\n{done.stderr}")
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    result = json.loads(lines[-1]) if lines else {}
    result["wall_seconds"] = round(time.perf_counter() - started, 2)
    return result


def fresh_postgres(url):
    import psycopg  # noqa: PLC0415 - lazy: only the PostgreSQL runs need the driver

    name = url.rsplit("/", 1)[1]
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", name):
        raise SystemExit(f"--pg-url: database name {name!r} must be a plain lower-case identifier")
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.execute(f"CREATE DATABASE {name}")
        settings = dict(admin.execute(
            "SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', "
            "'full_page_writes', 'server_version')").fetchall())
    return settings


def database_env(db, args, port, work):
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE")}
    env.update(DJANGO_SETTINGS_MODULE="bench.settings", SITE_URL=f"http://127.0.0.1:{port}",
               BLINDJUDGE_DATA_DIR=str(work / "data"), PYTHONDONTWRITEBYTECODE="1",
               LOG_LEVEL="WARNING")
    if db == "postgres":
        env.update(DATABASE_URL=args.pg_url, REDIS_URL=args.redis_url,
                   SECRET_KEY=secrets.token_urlsafe(50),
                   DB_POOL_MAX_SIZE=os.environ.get("DB_POOL_MAX_SIZE", "8"))
    return env


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def bench_database(db, args, results_dir):
    port = (args.port + (0 if db == "sqlite" else 1)) if args.port else free_port()
    work = Path(args.work_dir) / db
    shutil.rmtree(work, ignore_errors=True)
    (work / "data").mkdir(parents=True)
    env = database_env(db, args, port, work)
    out = {"database": db, "started_at": now(), "load_at_start": os.getloadavg()}
    if db == "postgres":
        out["postgres_settings"] = fresh_postgres(args.pg_url)
    run_python(["manage.py", "migrate", "--no-input", "-v0"], env, "migrate")
    if db == "postgres" or args.server == "uvicorn":  # ./bj start collects static files itself
        run_python(["manage.py", "collectstatic", "--no-input", "-v0"], env, "collectstatic")
    fixture_path = work / "fixture.json"
    log(f"[{db}] creating {args.items} items and {args.judges} judges")
    out["setup"] = run_python(["-m", "bench.fixture", "setup", "--out", str(fixture_path),
                               "--items", str(args.items), "--judges", str(args.judges),
                               "--per-judge", str(args.per_judge)], env, "setup")
    fixture = json.loads(fixture_path.read_text())
    if args.pairs:
        pairs_path = work / "pairs.json"
        log(f"[{db}] creating a pairs session of {args.pairs} pairs for {len(fixture['judges']) // 2} judges")
        out["pairs_setup"] = run_python(
            ["-m", "bench.fixture", "pairs", "--out", str(pairs_path), "--pairs", str(args.pairs),
             "--judges", str(max(1, len(fixture["judges"]) // 2)),
             "--per-judge", str(min(args.per_judge, args.pairs))], env, "pairs")
        fixture["pairs"] = json.loads(pairs_path.read_text())
    if args.reasons:
        reasons_path = work / "reasons.json"
        log(f"[{db}] creating a reasons session of up to {args.reasons} reviews a stratum for "
            f"{len(fixture['judges']) // 2} judges")
        out["reasons_setup"] = run_python(
            ["-m", "bench.fixture", "reasons", "--fixture", str(fixture_path), "--out",
             str(reasons_path), "--per-stratum", str(args.reasons),
             "--judges", str(max(1, len(fixture["judges"]) // 2)),
             "--per-judge", str(args.per_judge)], env, "reasons")
        fixture["reasons"] = json.loads(reasons_path.read_text())

    base = f"http://127.0.0.1:{port}"
    if db == "sqlite" and args.server == "uvicorn":
        # The server ./bj start execs, without its install, migrate and demo steps (seconds that
        # --smoke has not got to spare; its venv is the one running this).
        command = [PYTHON, "-m", "uvicorn", "blindjudge.asgi:application", "--host", "127.0.0.1",
                   "--port", str(port), *BJ_START_UVICORN]
        env["MALLOC_ARENA_MAX"] = env.get("MALLOC_ARENA_MAX", "2")
        out["server"] = "Uvicorn as ./bj start runs it (one process, SQLite file in the bench's data dir)"
        marker = None
    elif db == "sqlite":
        command = [str(ROOT / "bj"), "start"]
        out["server"] = "./bj start (Uvicorn, one process, SQLite file in the bench's data dir)"
        marker = "uvicorn"
    else:
        command = [str(ROOT / "deploy" / "serve"), str(port), str(args.workers)]
        out["server"] = f"deploy/serve {port} {args.workers} (Uvicorn, {args.workers} workers)"
        marker = None
    log(f"[{db}] starting {out['server']}")
    server = Server(command, env, work / "server.log", base)
    try:
        server.wait_ready("/bench/hello", marker=marker)
        load(db, args, out, env, work, fixture, fixture_path, server, base)
    finally:
        server.stop()
    log_text = (work / "server.log").read_text(errors="replace")
    out["database_is_locked_in_log"] = log_text.count("database is locked")
    out["server_log_errors"] = len(re.findall(r"Traceback|ERROR", log_text))
    out["report_build"] = report_build(env) if args.report_build else {"skipped": "--no-report-build"}
    return out


def load(db, args, out, env, work, fixture, fixture_path, server, base):
    """Every cell against the started server, in order (bench_database stops the server)."""
    judges = fixture["judges"]
    half = len(judges) // 2
    phase1, phase2 = judges[:half], judges[half:]
    names = lambda group: ",".join(j["pseudonym"] for j in group)  # noqa: E731
    out["cold_start"] = server.cold_start()
    first_page = time.perf_counter()
    status = http_status(base + f"/s/{fixture['url_id']}/i/{judges[0]['codes'][0]}/",
                         cookie=f"sessionid={judges[0]['sessionid']}")
    out["cold_start"]["first_item_page_s"] = round(time.perf_counter() - first_page, 3)
    out["cold_start"]["first_item_page_status"] = status

    traffic = Traffic(fixture, phase1, phase2, pairs=fixture.get("pairs"),
                      reasons=fixture.get("reasons"))
    cells = out["cells"] = []

    def cell(kind, concurrency, maker=None, label=None, duration=None, max_requests=None,
             warmup=None):
        result = asyncio.run(drive(base, maker or traffic.maker(kind), concurrency,
                                   duration or args.duration, max_requests or args.max_requests,
                                   args.warmup if warmup is None else warmup,
                                   server.sampler.cpu_seconds))
        result.update(kind=label or kind, concurrency=concurrency, at=now(),
                      load=[round(x, 2) for x in os.getloadavg()])
        cells.append(result)
        log(f"[{db}] {result['kind']:>15} c={concurrency:<3} p50 {result['p50_ms']} "
            f"p99 {result['p99_ms']} ms, {result['rps']} req/s, {result['errors']} errors, "
            f"cpu {result['server_cpu_ms_per_request']} ms/req")

    cell("progress", 1, label="progress@0")
    for concurrency in args.concurrency:
        cell("hello", concurrency)
        for kind in ((*FLOORS, "item", "frame", "save") + (("pair", "pairframe") if traffic.pairs else ())
                     + (("reason",) if traffic.reasons else ())):
            cell(kind, concurrency)
    log(f"[{db}] pre-filling verdicts (services)")
    prefills = [(["-m", "bench.fixture", "prefill", "--fixture", str(fixture_path), "--phase", "1",
                  "--judges", names(phase2), "--lock"], env, "prefill phase 2 judges"),
                (["-m", "bench.fixture", "prefill", "--fixture", str(fixture_path), "--phase", "1",
                  "--judges", names(phase1)], env, "prefill phase 1 judges")]
    if db == "postgres":  # two writers at once is PostgreSQL's normal day; SQLite takes turns
        with ThreadPoolExecutor(2) as pool:
            out["prefill"] = list(pool.map(lambda job: run_python(*job), prefills))
    else:
        out["prefill"] = [run_python(*job) for job in prefills]
    out["verdicts_for_progress"] = sum(p["verdicts"] for p in out["prefill"])
    for concurrency in args.concurrency:
        cell("phase2", concurrency)
        cell("review", concurrency)
        cell("progress", concurrency, label=progress_label(out["verdicts_for_progress"]))
    # Locks: each judge locks once. Phase 1 of the phase-1 judges all at once (32), then phase 2
    # of the phase-2 judges, pre-filled to the lock, one at a time and eight at a time.
    cell("lock", len(phase1), maker=traffic.locks(phase1, 1), label="lock (phase 1)",
         duration=60, max_requests=len(phase1), warmup=0)
    out["prefill"].append(run_python(
        ["-m", "bench.fixture", "prefill", "--fixture", str(fixture_path), "--phase", "2",
         "--judges", names(phase2)], env, "prefill phase 2"))
    solo = max(1, len(phase2) // 4)
    cell("lock", 1, maker=traffic.locks(phase2[:solo], 2), label="lock (phase 2)", duration=60,
         max_requests=solo, warmup=0)
    cell("lock", min(8, len(phase2) - solo), maker=traffic.locks(phase2[solo:], 2),
         label="lock (phase 2)", duration=60, max_requests=len(phase2) - solo, warmup=0)

    out["rss_mb"] = {"judge traffic": server.sampler.peaks.get("judge traffic", {})}
    out["reveal"] = run_python(["-m", "bench.fixture", "reveal", "--fixture", str(fixture_path)],
                               env, "reveal")
    server.sampler.label = "after report download"
    downloads = []
    for _ in range(args.downloads):
        started = time.perf_counter()
        path = f"/host/sessions/{fixture['session_id']}/report/json"
        status, headers, body = http_get(base + path, cookie=f"sessionid={fixture['host_sessionid']}",
                                         timeout=300)
        seconds = round(time.perf_counter() - started, 3)
        problem = "no answer" if status is None else shapes.report("json").check(
            status, headers, body, f"GET {path}")  # or stops the run: a report of another shape
        downloads.append({"status": status, "seconds": seconds, "problem": problem})
    time.sleep(0.3)
    out["report_download"] = downloads
    out["rss_mb"]["after report download"] = server.sampler.peaks.get("after report download", {})


def report_build(env):
    """Report-building times from bench/report.py (another part of the benchmark), if present."""
    if not (ROOT / "bench" / "report.py").exists():
        return {"skipped": "bench/report.py is missing"}
    code = ("import json, django; django.setup(); from bench.report import measure_report; "
            "print(json.dumps({'2000': measure_report(2, 500), '200000': measure_report(200, 500)}))")
    try:
        return run_python(["-c", code], env, "report build")
    except RuntimeError as error:
        return {"failed": str(error)[-2000:]}


def install_size():
    """Installed size of the runtime dependencies: every distribution the product's own
    requirements pull in (extras left out), summed from their installed files."""
    code = r"""
import json, re
from importlib import metadata
from packaging.requirements import Requirement
seen, todo, total, files = set(), [("blindjudge", frozenset())], 0, 0
while todo:
    name, extras = todo.pop()
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        continue
    key = re.sub(r"[-_.]+", "-", dist.metadata["Name"]).lower()
    if key in seen:
        continue
    seen.add(key)
    for spec in dist.requires or []:
        req = Requirement(spec)
        if req.marker and not any(req.marker.evaluate({"extra": e}) for e in (extras or {""})):
            continue
        todo.append((req.name, frozenset(req.extras)))
    if key == "blindjudge":
        continue
    for f in dist.files or []:
        try:
            total += f.locate().stat().st_size
            files += 1
        except OSError:
            pass
print(json.dumps({"packages": len(seen) - 1, "megabytes": round(total / 1e6, 1), "files": files,
                  "names": sorted(seen - {"blindjudge"})}))
"""
    try:
        return run_python(["-c", code], os.environ.copy(), "install size")
    except RuntimeError as error:
        return {"failed": str(error)[-1000:]}


# --- Output ----------------------------------------------------------------------------------

def now():
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def log(message):
    print(f"{datetime.datetime.now(datetime.UTC):%H:%M:%S} {message}", file=sys.stderr, flush=True)


def progress_label(verdicts: int) -> str:
    """The progress view's cell once the verdicts are in: "progress@10k" at the full run's
    10,000 and more, else the count (--smoke's few)."""
    return "progress@10k" if verdicts >= 10_000 else f"progress@{verdicts}"


def verdicts_against_targets(db_result):
    """Each judge kind at the highest concurrency against the baseline of the same run."""
    cells = db_result["cells"]
    top = max(c["concurrency"] for c in cells if c["kind"] == "hello")
    hello = next(c for c in cells if c["kind"] == "hello" and c["concurrency"] == top)
    # What every judge request does before its own work (the guard: FLOORS), in the same run:
    # a judge request's pace against it is the share its own work leaves (bench/README.md, "The
    # floors").
    admitted = next((c for c in cells if c["kind"] == "admitted" and c["concurrency"] == top), None)
    rows = []
    full = progress_label(db_result.get("verdicts_for_progress", 10_000))
    for kind in (*FLOORS, "item", "frame", "save", "pair", "pairframe", "reason", "phase2", "review", full,
                 "lock (phase 1)"):
        c = next((c for c in cells if c["kind"] == kind and c["concurrency"] == top), None)
        if not c:
            continue
        rows.append({
            "kind": kind, "concurrency": top, "floor": kind in FLOORS,
            "rps_vs_baseline": round(c["rps"] / hello["rps"], 2),
            "rps_vs_admitted": round(c["rps"] / admitted["rps"], 2) if admitted else None,
            "p99_vs_baseline": round(c["p99_ms"] / hello["p99_ms"], 2) if c["p99_ms"] else None,
            "errors": c["errors"],
            # Issue 32: 60 % of hello's requests per second, p99 at most twice hello's.
            "meets": c["rps"] >= 0.6 * hello["rps"] and c["p99_ms"] is not None
            and c["p99_ms"] <= 2 * hello["p99_ms"] and c["errors"] == 0,
        })
    return rows


def target_rows(db):
    """Issue 7's targets that one database's run can answer, each with the figure measured."""
    cells = {(c["kind"], c["concurrency"]): c for c in db["cells"]}
    rows = []

    def add(target, figure, met):
        rows.append((target, figure, "met" if met else "missed"))

    for kind in ("item", "save"):
        c = cells.get((kind, 1))
        if c:
            add(f"{kind}, one judge alone: p50 <= 10 ms", f"{c['p50_ms']} ms", c["p50_ms"] <= 10)
    empty = cells.get(("progress@0", 1))
    full = cells.get((progress_label(db.get("verdicts_for_progress", 10_000)), 1))
    if empty:
        add("progress page p50 <= 10 ms", f"{empty['p50_ms']} ms (no verdict)", empty["p50_ms"] <= 10)
    if empty and full:
        ratio = full["p50_ms"] / empty["p50_ms"]
        add(f"progress at {db.get('verdicts_for_progress', '10,000+')} verdicts within 1.5x of none",
            f"{full['p50_ms']} / {empty['p50_ms']} ms = {ratio:.2f}x", ratio <= 1.5)
    for row in (row for row in db["targets"] if not row.get("floor")):  # floors are no target
        add(f"{row['kind']} at {row['concurrency']}: >= 60% of baseline req/s, p99 <= 2x, 0 errors",
            f"{row['rps_vs_baseline']:.0%} of req/s, p99 {row['p99_vs_baseline']}x, "
            f"{row['errors']} errors", row["meets"])
    add("no 'database is locked'", f"{db['database_is_locked_in_log']} in the server log",
        db["database_is_locked_in_log"] == 0)
    add(f"import of {db['setup']['items']:,} x 2 KB (1,000: <= 1 s)",
        f"{db['setup']['import_seconds']:.2f} s",
        db["setup"]["import_seconds"] <= 1)
    judge_peak = max(p["rss_mb"] for p in db["rss_mb"]["judge traffic"].values())
    add("a judge-serving process <= 120 MB resident", f"{judge_peak} MB peak", judge_peak <= 120)
    cold = db["cold_start"]["server_start_to_first_answer_s"]
    add("cold start to first answer <= 3 s", f"{cold} s", cold <= 3)
    return rows


def markdown(result):
    lines = [f"Run {result['started_at']} on {result['machine']['cpus']} cores, "
             f"{result['machine']['platform']}; {result['duration']} s per cell."]
    for db in result["databases"]:
        lines += ["", f"### {db['database']}: {db['server']}", "",
                  "| request | conc. | p50 / p95 / p99 ms | req/s | errors | server CPU ms/req | load |",
                  "|---|---|---|---|---|---|---|"]
        for c in db["cells"]:
            lines.append(f"| {c['kind']} | {c['concurrency']} | {c['p50_ms']} / {c['p95_ms']} / "
                         f"{c['p99_ms']} | {c['rps']} | {c['errors']} | "
                         f"{c['server_cpu_ms_per_request']} | {c['load'][0]} |")
        lines += ["", "| against the baseline (highest concurrency) | req/s ratio | p99 ratio | "
                      "errors | meets | req/s of the guard's floor |", "|---|---|---|---|---|---|"]
        for row in db["targets"]:
            meets = "(a floor)" if row.get("floor") else "yes" if row["meets"] else "NO"
            of_floor = row.get("rps_vs_admitted")  # None: no floor in the run (before 2026-12-06)
            lines.append(f"| {row['kind']} | {row['rps_vs_baseline']} | {row['p99_vs_baseline']} | "
                         f"{row['errors']} | {meets} | {'–' if of_floor is None else of_floor} |")
        for label, peaks in db["rss_mb"].items():
            shown = ", ".join(f"{p['rss_mb']} MB ({_short(p['cmd'])})" for p in peaks.values())
            lines.append(f"\nPeak RSS, {label}: {shown}")
        setup = db["setup"]
        lines.append(f"\nImport of {setup['items']} x 2 KB items: {setup['import_seconds']:.2f} s; "
                     f"cold start {db['cold_start']}; "
                     f"report download after reveal {db['report_download']}; "
                     f"'database is locked' in the server log: {db['database_is_locked_in_log']}; "
                     f"report build: {db['report_build']}")
    for db in result["databases"]:
        lines += ["", f"Targets, {db['database']}:", "", "| target | measured | |", "|---|---|---|"]
        lines += [f"| {t} | {f} | {m} |" for t, f, m in target_rows(db)]
    size = result["install_size"]
    if size:
        lines.append(f"\nRuntime install: {size.get('megabytes')} MB in {size.get('packages')} packages.")
    return "\n".join(lines)


PEER_KINDS = {"get": "item", "post": "save", "project": "progress@0"}


def peer_table(result, peer_path):
    """Label Studio's results (the peer benchmark's JSON lines, bench/README.md) beside ours: for
    the same request kind and concurrency, our req/s over theirs and their p50 over ours."""
    peer = [json.loads(line) for line in Path(peer_path).read_text().splitlines() if line.strip()]
    peer = [r for r in peer if r.get("phase") == "load"]
    lines = ["", f"### Label Studio on this machine ({peer[0]['ts'][:16]} UTC onwards), beside ours",
             "", "| request | conc. | Label Studio p50 / p95 / p99 ms, req/s | "
             + " | ".join(f"blindjudge {db['database']}" for db in result["databases"])
             + " | " + " | ".join(f"ratio {db['database']} (req/s; p50)" for db in result["databases"])
             + " |", "|---|---|---|" + "---|" * (2 * len(result["databases"]))]
    for row in peer:
        kind = PEER_KINDS.get(row["kind"])
        ours = [next((c for c in db["cells"] if c["kind"] == kind and c["concurrency"] == row["conc"]),
                     None) for db in result["databases"]]
        shown = [f"{c['p50_ms']} / {c['p95_ms']} / {c['p99_ms']}, {c['rps']}" if c else "–" for c in ours]
        ratios = [f"{c['rps'] / row['rps']:.1f}x; {row['p50_ms'] / c['p50_ms']:.1f}x" if c else "–"
                  for c in ours]
        lines.append(f"| {kind} (LS {row['kind']}) | {row['conc']} | {row['p50_ms']} / {row['p95_ms']} / "
                     f"{row['p99_ms']}, {row['rps']} | " + " | ".join(shown) + " | "
                     + " | ".join(ratios) + " |")
    return "\n".join(lines)


def _short(cmd):
    if "multiprocessing" in cmd:
        return "uvicorn worker" if "spawn_main" in cmd else "helper"
    if "uvicorn" in cmd:
        return "uvicorn supervisor"
    if "daphne" in cmd:
        return "daphne"
    return cmd[:40]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", default="sqlite,postgres")
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--judges", type=int, default=64)
    parser.add_argument("--per-judge", type=int, default=160,
                        help="items per judge (64 x 160 gives the >= 10,000 verdicts the "
                             "progress view is measured at)")
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument("--duration", type=float, default=10.0, help="measured seconds per cell")
    parser.add_argument("--warmup", type=float, default=1.0, help="unmeasured seconds per cell")
    parser.add_argument("--max-requests", type=int, default=20000, help="per cell")
    parser.add_argument("--workers", type=int, default=2, help="Uvicorn workers on PostgreSQL")
    parser.add_argument("--port", type=int, default=8790, help="0: a free port")
    parser.add_argument("--server", choices=("bj", "uvicorn"), default="bj",
                        help="SQLite's server: ./bj start, or the Uvicorn it execs started directly")
    parser.add_argument("--downloads", type=int, default=3, help="report downloads after the reveal")
    parser.add_argument("--no-report-build", dest="report_build", action="store_false",
                        help="leave out bench/report.py's report builds (200,000 verdicts)")
    parser.add_argument("--no-install-size", dest="install_size", action="store_false")
    parser.add_argument("--smoke", action="store_true",
                        help="CI's run (.ci/run): SQLite, 8 judges of 20 items, 0.5 s cells at 1 "
                             "and 8 clients, no report build, under a minute; every response's "
                             "shape checked, the figures printed, nothing asserted")
    parser.add_argument("--pairs", type=int, default=200,
                        help="pairs in a pairs session beside the copies one, its item page and "
                             "frames measured after the frame (0: none)")
    parser.add_argument("--reasons", type=int, default=40,
                        help="reviews of each stratum in a reasons session on the run, its item page "
                             "measured after the pairs (0: none)")
    parser.add_argument("--pg-url", default="postgres://postgres@127.0.0.1:5432/bench_bj")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--work-dir", default=str(ROOT / "var" / "bench"))
    parser.add_argument("--out", default=None, help="JSON file (default bench/results/DATE.json)")
    parser.add_argument("--show", default=None, metavar="RESULT.json",
                        help="print the tables of an earlier run instead of running")
    parser.add_argument("--peer", default=None, metavar="RESULTS.jsonl",
                        help="Label Studio's results (JSON lines, bench/README.md) to compare with")
    args = parser.parse_args(argv)
    if args.smoke:
        args.db, args.items, args.judges, args.per_judge = "sqlite", 40, 8, 20
        args.concurrency, args.duration, args.warmup = "1,8", 0.5, 0.2
        args.port, args.downloads, args.report_build, args.install_size = 0, 1, False, False
        args.server = "uvicorn"
        args.pairs = 20
        args.reasons = 5
        args.work_dir = str(ROOT / "var" / "bench-smoke")
        args.out = args.out or str(Path(args.work_dir) / "result.json")
    if args.show:
        result = json.loads(Path(args.show).read_text())
        print(markdown(result))
        if args.peer:
            print(peer_table(result, args.peer))
        return
    args.concurrency = [int(c) for c in args.concurrency.split(",")]
    result = {
        "started_at": now(), "duration": args.duration, "warmup": args.warmup,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version(),
                    "memory_gb": round(psutil.virtual_memory().total / 2**30, 1)},
        "settings": {k: v for k, v in vars(args).items() if k not in ("pg_url", "redis_url")},
        "install_size": install_size() if args.install_size else {},
        "databases": [],
    }
    for db in args.db.split(","):
        try:
            db_result = bench_database(db.strip(), args, ROOT / "bench" / "results")
        except PageChanged as changed:
            # The benchmark no longer measures what it says: stop, loudly (bench/shapes.py).
            log(f"[{db}] {changed}")
            raise SystemExit(f"bench/run.py: stopped: {changed.page} changed shape "
                             f"({changed.request}): {changed.problem}. Update bench/shapes.py "
                             "to what the page holds now.") from None
        db_result["targets"] = verdicts_against_targets(db_result)
        result["databases"].append(db_result)
    result["finished_at"] = now()
    out = Path(args.out) if args.out else (
        ROOT / "bench" / "results" / f"{datetime.datetime.now(datetime.UTC):%Y%m%dT%H%M}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    print(markdown(result))
    if args.peer:
        print(peer_table(result, args.peer))
    log(f"results: {out}")


if __name__ == "__main__":
    main()
