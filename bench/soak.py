"""The hour-long mixed run (issue 32, item 3): does a serving process stay small and flat?

    .venv/bin/python bench/soak.py --db sqlite              # an hour on the embedded default
    .venv/bin/python bench/soak.py --db postgres --minutes 60
    .venv/bin/python bench/soak.py --db sqlite --minutes 3  # a quick look

A run clears its --work-dir (default var/bench-soak-<db>) and, on PostgreSQL, drops and makes its
--pg-url's database: two runs at once on one database each need their own of both.

The server is started the production way (SQLite: the Uvicorn ./bj start execs, one process;
PostgreSQL + Redis: deploy/serve PORT 2), on a fresh database holding a session of --items items
for --judges judges (bench/fixture.py) and a small revealed session whose report is downloaded.
For --minutes it carries, at once:

- judge traffic: --clients judges in a loop of item page, copy frame and a verdict save, with a
  pause of 0-2 x --think seconds between requests, every response's shape checked
  (bench/shapes.py: a page of another shape stops the run);
- live dashboards: --dashboards host sockets on the judged session, read for the whole run and
  pinged as the page pings them (a socket that falls silent is closed by the server), and the
  host's progress page every 5 s;
- report downloads: the revealed session's report every --download-every seconds, JSON, CSV and
  HTML in turn;
- imports: the seed tables (tests/data/seed000: 180 copies, 1,620 reviews) through the host's
  import page every --import-every seconds (their conversion runs in a child process).

Every minute it samples each server process's resident memory (psutil). The result: per process
the series, its peak, its last sample and the least-squares slope of its last 40 minutes (never
minute 0, the start-up) in MB per 10 minutes, against issue 32's targets (<= 120 MB after the
run; slope < 1 MB per 10 minutes), in bench/results/soak-<db>-<UTC time>.json and a summary on
stdout. Nothing is asserted: figures.
"""

import argparse
import asyncio
import datetime
import itertools
import json
import os
import random
import shutil
import signal
import sys
import time
from pathlib import Path

import aiohttp
import psutil
from websockets.asyncio.client import connect

if __package__ in (None, ""):  # run as a script: bench/soak.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import shapes  # noqa: E402
from bench.run import (  # noqa: E402
    BJ_START_UVICORN,
    CSRF,
    PYTHON,
    ROOT,
    Server,
    database_env,
    free_port,
    fresh_postgres,
    log,
    now,
    run_python,
)
from bench.shapes import PageChanged  # noqa: E402
from tests.support.seed_tables import SEED_TABLE_FIELDS  # noqa: E402

SEED = ROOT / "tests" / "data" / "seed000"
SEED_FIELDS = {**SEED_TABLE_FIELDS, "again": "on"}  # the same tables again each time
PING_SECONDS = 25  # judging.live.PING_SECONDS: static/live/socket.js pings this often
TARGET_MB, TARGET_SLOPE_MB_PER_10_MIN, SLOPE_WINDOW_MINUTES = 120.0, 1.0, 40


def slope_per_10_minutes(samples):
    """Least-squares slope of (minutes, MB) samples, in MB per 10 minutes (None under 2)."""
    if len(samples) < 2:
        return None
    xs, ys = [s[0] for s in samples], [s[1] for s in samples]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    spread = sum((x - mx) ** 2 for x in xs)
    return round(10 * sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / spread, 3)


class Soak:
    def __init__(self, args, base, fixture, downloads_fixture, root_pid):
        self.args, self.base, self.fixture, self.downloads = args, base, fixture, downloads_fixture
        self.root = psutil.Process(root_pid)
        self.random = random.Random(11)
        self.counts = {}  # kind -> {"ok": n, "errors": n, "samples": [...]}
        self.series = {}  # pid -> {"cmd", "samples": [(minute, MB)]}
        self.started = time.perf_counter()
        self.done = asyncio.Event()

    def count(self, kind, problem=None):
        entry = self.counts.setdefault(kind, {"ok": 0, "errors": 0, "error_samples": []})
        if problem is None:
            entry["ok"] += 1
        else:
            entry["errors"] += 1
            if len(entry["error_samples"]) < 5:
                entry["error_samples"].append(str(problem)[:300])

    async def fetch(self, http, kind, method, path, shape, **options):
        try:
            async with http.request(method, path, allow_redirects=False, **options) as response:
                body = await response.read()
                problem = shape.check(response.status, response.headers, body, f"{method} {path}")
        except (TimeoutError, aiohttp.ClientError) as error:
            problem = f"{type(error).__name__}: {error}"
        self.count(kind, problem)

    def judge_cookie(self, judge):
        return {"Cookie": f"sessionid={judge['sessionid']}; csrftoken={CSRF}"}

    @property
    def host_cookie(self):
        return {"Cookie": f"sessionid={self.fixture['host_sessionid']}; csrftoken={CSRF}"}

    async def pause(self, seconds):
        try:
            await asyncio.wait_for(self.done.wait(), seconds)
        except TimeoutError:
            pass

    async def judge(self, http, number):
        judge = self.fixture["judges"][number % len(self.fixture["judges"])]
        url_id = self.fixture["url_id"]
        for n in itertools.count():
            if self.done.is_set():
                return
            code = self.random.choice(judge["codes"])
            await self.fetch(http, "item", "GET", f"/s/{url_id}/i/{code}/", shapes.item(code, 1),
                             headers=self.judge_cookie(judge))
            await self.fetch(http, "frame", "GET", f"/s/{url_id}/i/{code}/frame", shapes.frame(),
                             headers=self.judge_cookie(judge))
            await self.pause(self.random.uniform(0, 2 * self.args.think))
            await self.fetch(http, "save", "POST", f"/s/{url_id}/i/{code}/", shapes.save(),
                             headers={**self.judge_cookie(judge), "X-CSRFToken": CSRF,
                                      "Accept": "application/json"},
                             data={"verdict": self.random.choice(("pass", "fail")), "phase": "1",
                                   "reason": "", "seconds_spent": str(n + 1)})
            await self.pause(self.random.uniform(0, 2 * self.args.think))

    async def dashboard(self):
        path = f"/ws/host/sessions/{self.fixture['session_id']}/"
        frames = 0
        while not self.done.is_set():
            try:
                async with connect(self.base.replace("http://", "ws://") + path, origin=self.base,
                                   additional_headers=self.host_cookie, open_timeout=30,
                                   max_queue=None) as socket:
                    self.count("dashboard socket opened")
                    pinged = time.monotonic()
                    while not self.done.is_set():
                        if time.monotonic() - pinged >= PING_SECONDS:  # as the page does
                            await socket.send(json.dumps({"type": "ping"}))
                            pinged = time.monotonic()
                        try:
                            await asyncio.wait_for(socket.recv(), 1)
                            frames += 1
                        except TimeoutError:
                            continue
            except Exception as error:  # noqa: BLE001 - counted; the dashboard reconnects
                self.count("dashboard socket opened", f"{type(error).__name__}: {error}")
                await self.pause(1)
        self.counts.setdefault("dashboard frames", {"ok": 0, "errors": 0, "error_samples": []})
        self.counts["dashboard frames"]["ok"] += frames

    async def progress(self, http):
        path = f"/host/sessions/{self.fixture['session_id']}/judges"
        while not self.done.is_set():
            await self.fetch(http, "progress", "GET", path,
                             shapes.progress(len(self.fixture["judges"])), headers=self.host_cookie)
            await self.pause(5)

    async def report_downloads(self, http):
        formats = itertools.cycle(("json", "csv", "html"))
        path = f"/host/sessions/{self.downloads['session_id']}/report/"
        cookie = {"Cookie": f"sessionid={self.downloads['host_sessionid']}"}
        while not self.done.is_set():
            fmt = next(formats)
            await self.fetch(http, f"report {fmt}", "GET", path + fmt, shapes.report(fmt),
                             headers=cookie, timeout=aiohttp.ClientTimeout(total=300))
            await self.pause(self.args.download_every)

    async def imports(self, http):
        for n in itertools.count():
            if self.done.is_set():
                return
            form = aiohttp.FormData({**SEED_FIELDS, "name": f"soak import {n}",
                                     "csrfmiddlewaretoken": CSRF})
            for field, name in (("outputs", "items-v1.jsonl"), ("reviews", "reviews-v1.jsonl")):
                form.add_field(field, (SEED / name).read_bytes(), filename=name)
            # A good import answers 303 to the new run's page.
            await self.fetch(http, "import", "POST", "/host/runs/import",
                             shapes.Shape("import", status=303), headers=self.host_cookie,
                             data=form, timeout=aiohttp.ClientTimeout(total=300))
            await self.pause(self.args.import_every)

    async def sampler(self):
        while True:
            minute = round((time.perf_counter() - self.started) / 60, 2)
            for process in [self.root, *self.root.children(recursive=True)]:
                try:
                    rss = round(process.memory_info().rss / 2**20, 1)
                    cmd = " ".join(process.cmdline())[:160]
                except psutil.NoSuchProcess:
                    continue
                entry = self.series.setdefault(process.pid, {"cmd": cmd, "samples": []})
                entry["samples"].append((minute, rss))
            log(f"minute {minute:.0f}: " + ", ".join(
                f"{pid} {entry['samples'][-1][1]} MB" for pid, entry in self.series.items()
                if entry["samples"][-1][0] == minute) + "; " + ", ".join(
                f"{kind} {c['ok']}/{c['errors']}" for kind, c in sorted(self.counts.items())))
            if self.done.is_set():
                return
            await self.pause(60)

    async def run(self):
        connector = aiohttp.TCPConnector(limit=0)
        async with aiohttp.ClientSession(base_url=self.base, connector=connector,
                                         timeout=aiohttp.ClientTimeout(total=60),
                                         cookie_jar=aiohttp.DummyCookieJar()) as http:
            tasks = [asyncio.create_task(self.judge(http, n)) for n in range(self.args.clients)]
            tasks += [asyncio.create_task(self.dashboard()) for _ in range(self.args.dashboards)]
            tasks += [asyncio.create_task(self.progress(http)),
                      asyncio.create_task(self.report_downloads(http)),
                      asyncio.create_task(self.imports(http))]
            sampler = asyncio.create_task(self.sampler())
            stopper = asyncio.create_task(asyncio.sleep(60 * self.args.minutes))
            pending = {*tasks, stopper}
            while not self.done.is_set():
                finished, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for task in finished:
                    if task is not stopper and task.exception() is not None:
                        self.done.set()  # a page changed shape: stop, and say so below
                        await asyncio.gather(*pending, return_exceptions=True)
                        raise task.exception()
                if stopper in finished:
                    self.done.set()
            await asyncio.gather(*pending, return_exceptions=True)
            await sampler

    def summary(self):
        processes = []
        for pid, entry in self.series.items():
            samples = entry["samples"]
            last = samples[-1][0]
            # Minute 0 is the start-up (the first pages' imports and caches), never in the window.
            window = [s for s in samples if s[0] >= max(1.0, last - SLOPE_WINDOW_MINUTES)] or samples[-1:]
            serving = "uvicorn" in entry["cmd"] or "spawn_main" in entry["cmd"]
            processes.append({
                "pid": pid, "cmd": entry["cmd"], "serving": serving,
                "first_mb": samples[0][1], "peak_mb": max(s[1] for s in samples),
                "last_mb": samples[-1][1],
                "slope_mb_per_10_min_last_40": slope_per_10_minutes(window),
                "window_minutes": round(window[-1][0] - window[0][0], 1),
                "samples": samples,
            })
        return processes


def prepare(db, args, work):
    env = database_env(db, args, args.port, work)
    out = {"database": db}
    if db == "postgres":
        out["postgres_settings"] = fresh_postgres(args.pg_url)
    run_python(["manage.py", "migrate", "--no-input", "-v0"], env, "migrate")
    run_python(["manage.py", "collectstatic", "--no-input", "-v0"], env, "collectstatic")
    judged, revealed = work / "fixture.json", work / "downloads.json"
    out["setup"] = run_python(["-m", "bench.fixture", "setup", "--out", str(judged), "--items",
                               str(args.items), "--judges", str(args.judges), "--per-judge",
                               str(args.items)], env, "setup")
    run_python(["-m", "bench.fixture", "setup", "--out", str(revealed), "--items", "120",
                "--judges", "4", "--per-judge", "120"], env, "setup (downloads)")
    downloads = json.loads(revealed.read_text())
    names = ",".join(j["pseudonym"] for j in downloads["judges"])
    run_python(["-m", "bench.fixture", "prefill", "--fixture", str(revealed), "--phase", "1",
                "--judges", names, "--lock"], env, "prefill (downloads)")
    run_python(["-m", "bench.fixture", "reveal", "--fixture", str(revealed)], env, "reveal")
    return env, out, json.loads(judged.read_text()), downloads


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--minutes", type=float, default=60)
    parser.add_argument("--items", type=int, default=400)
    parser.add_argument("--judges", type=int, default=32)
    parser.add_argument("--clients", type=int, default=16, help="judges answering at once")
    parser.add_argument("--think", type=float, default=0.25, help="mean pause, seconds")
    parser.add_argument("--dashboards", type=int, default=2)
    parser.add_argument("--download-every", type=float, default=120, help="seconds")
    parser.add_argument("--import-every", type=float, default=300, help="seconds")
    parser.add_argument("--workers", type=int, default=2, help="Uvicorn workers on PostgreSQL")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--pg-url", default="postgres://postgres@127.0.0.1:5432/bench_bj_soak")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--work-dir", default=None)
    args = parser.parse_args(argv)
    # Stopped by a signal, the run still stops the server it started (its own process group).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    args.port = args.port or free_port()
    work = Path(args.work_dir or ROOT / "var" / f"bench-soak-{args.db}")
    shutil.rmtree(work, ignore_errors=True)
    (work / "data").mkdir(parents=True)
    log(f"[{args.db}] preparing the database and the sessions")
    env, out, fixture, downloads = prepare(args.db, args, work)
    base = f"http://127.0.0.1:{args.port}"
    if args.db == "sqlite":
        command = [PYTHON, "-m", "uvicorn", "blindjudge.asgi:application", "--host", "127.0.0.1",
                   "--port", str(args.port), *BJ_START_UVICORN]
        env["MALLOC_ARENA_MAX"] = env.get("MALLOC_ARENA_MAX", "2")  # as ./bj start sets it
        out["server"] = "Uvicorn as ./bj start runs it (one process)"
    else:
        command = [str(ROOT / "deploy" / "serve"), str(args.port), str(args.workers)]
        out["server"] = f"deploy/serve {args.port} {args.workers}"
    out.update(started_at=now(), load_at_start=os.getloadavg(),
               settings={k: v for k, v in vars(args).items() if k not in ("pg_url", "redis_url")})
    server = Server(command, env, work / "server.log", base)
    try:
        server.wait_ready("/bench/hello")
        soak = Soak(args, base, fixture, downloads, server.process.pid)
        log(f"[{args.db}] {out['server']}: {args.minutes} minutes of mixed traffic")
        try:
            asyncio.run(soak.run())
        except PageChanged as changed:
            raise SystemExit(f"bench/soak.py: stopped: {changed}") from None
    finally:
        server.stop()
    out.update(finished_at=now(), load_at_end=os.getloadavg(), requests=soak.counts,
               processes=soak.summary())
    log_text = (work / "server.log").read_text(errors="replace")
    out["server_log_tracebacks"] = log_text.count("Traceback")
    results = ROOT / "bench" / "results"
    path = results / f"soak-{args.db}-{datetime.datetime.now(datetime.UTC):%Y%m%dT%H%M}.json"
    path.write_text(json.dumps(out, indent=1))
    print(f"\n{args.db}, {out['server']}, {out['started_at']} to {out['finished_at']}, load at "
          f"start {out['load_at_start'][0]:.2f}:")
    for kind, c in sorted(soak.counts.items()):
        print(f"  {kind}: {c['ok']} answered, {c['errors']} errors {c['error_samples'][:2]}")
    for p in out["processes"]:
        slope = p["slope_mb_per_10_min_last_40"]
        verdict = ""
        if p["serving"]:
            verdict = ("meets" if p["last_mb"] <= TARGET_MB and slope is not None
                       and slope < TARGET_SLOPE_MB_PER_10_MIN else "MISSES") + " issue 32's item 3"
        print(f"  pid {p['pid']} ({p['cmd'][:60]}): first {p['first_mb']} MB, peak {p['peak_mb']} MB, "
              f"last {p['last_mb']} MB, slope {slope} MB/10 min over the last "
              f"{p['window_minutes']} min {verdict}")
    print(f"  tracebacks in the server log: {out['server_log_tracebacks']}")
    log(f"results: {path}")


if __name__ == "__main__":
    main()
