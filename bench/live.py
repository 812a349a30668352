"""Live-event load benchmark against the real deployment.

Starts what deploy/ ships: PROCESSES × `deploy/serve PORT 1` (Uvicorn, production settings) behind
Debian's nginx running deploy/nginx/blindjudge.conf (the same generated config as the scale-out
test, tests/support/deployment.py), on a fresh PostgreSQL database and the Redis channel layer. Seeds one
open session with SOCKETS judges, opens one websocket per judge and the host's dashboard socket
(all through nginx), then POSTs phase-1 verdicts through nginx at RATE per second for DURATION
seconds, spread over the judges.

Measured, per verdict:
- host delivery: from just before the verdict's POST is sent until the host's socket receives the
  judge's row showing that answer (HTTP handling, commit, event, Redis, the host's process
  re-reading the row, nginx);
- judge delivery: the same until that judge's own socket receives the "saved" event;
- HTTP: the POST's response time.
Reported as p50/p95/p99 (ms), with sockets requested, opened, held at the end and the most held at
once. The result goes to bench/results/live-<UTC time>.json.

    .venv/bin/python bench/live.py [--sockets 500] [--rate 50] [--duration 30] [--processes 2]

Needs PostgreSQL (DATABASE_URL: a server where the role may create databases; default
postgres://postgres@127.0.0.1:5432/postgres), Redis (REDIS_URL, default redis://127.0.0.1:6379/0)
and nginx. The database BENCH_DB (default blindjudge_bench_live) is dropped and created afresh.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import platform
import resource
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlencode, urlsplit, urlunsplit

import psycopg
from websockets.asyncio.client import connect

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support.deployment import Nginx, ServeProcess, free_port, wait_for_http  # noqa: E402

AIM = {"sockets": 500, "rate": 50, "processes": 2, "p99_ms": 100}


def percentiles(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    ordered = sorted(values)

    def at(q):
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)

    return {"n": len(ordered), "p50": at(0.50), "p95": at(0.95), "p99": at(0.99),
            "max": round(ordered[-1], 2), "mean": round(sum(ordered) / len(ordered), 2)}


def database_url(admin_url: str, name: str) -> str:
    parts = urlsplit(admin_url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


def recreate_database(admin_url: str, name: str):
    with psycopg.connect(admin_url.replace("postgres://", "postgresql://", 1), autocommit=True) as db:
        db.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        db.execute(f'CREATE DATABASE "{name}"')


def drop_database(admin_url: str, name: str):
    with psycopg.connect(admin_url.replace("postgres://", "postgresql://", 1), autocommit=True) as db:
        db.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def seed(sockets: int) -> dict:
    """One host, the demo run, an open copies session and `sockets` admitted judges, each with a
    browser session (cookie) as the join page leaves it."""
    import django  # noqa: PLC0415 - lazy: Django loads only where the script needs the database

    django.setup()
    from django.conf import settings  # noqa: PLC0415 - after setup
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY  # noqa: PLC0415 - after setup
    from django.contrib.sessions.backends.db import SessionStore  # noqa: PLC0415 - after setup

    from bench.fixture import admit_judge  # noqa: PLC0415 - after setup
    from judging.demo import DEMO_RUBRIC, demo_bundle  # noqa: PLC0415 - after setup
    from judging.models import Assignment  # noqa: PLC0415 - after setup
    from judging.services import (  # noqa: PLC0415 - after setup
        host_create,
        run_import,
        session_create,
        session_open,
    )

    host = host_create(username="bench-host").host
    run = run_import(host=host, raw=json.dumps(demo_bundle()).encode("utf-8"), actor="bench")
    session = session_open(session=session_create(run=run, kind="copies", actor="bench",
                                                  rubric=DEMO_RUBRIC).session, actor="bench")
    store = SessionStore()
    store[SESSION_KEY] = str(host.user.pk)
    store[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    store[HASH_SESSION_KEY] = host.user.get_session_auth_hash()
    store.create()
    cookie = settings.SESSION_COOKIE_NAME
    judges = []
    for index in range(sockets):
        judge, session_key = admit_judge(session, f"Bench judge {index + 1}")
        codes = list(Assignment.objects.filter(judge=judge).order_by("position")
                     .values_list("code", flat=True))
        judges.append({"number": judge.number, "cookie": f"{cookie}={session_key}",
                       "codes": codes})
    return {"session_id": session.pk, "url_id": session.url_id,
            "host_cookie": f"{cookie}={store.session_key}", "judges": judges}


class Run:
    def __init__(self, base: str, world: dict, args):
        self.base, self.world, self.args = base, world, args
        self.ws_base = base.replace("http://", "ws://", 1)
        self.pending_host: dict[tuple[int, int], float] = {}  # (judge number, answer count) -> t0
        self.pending_judge: dict[tuple[int, str], float] = {}  # (judge number, code) -> t0
        self.answered: dict[int, int] = {}
        self.host_ms, self.judge_ms, self.http_ms, self.host_after_ack_ms = [], [], [], []
        self.acked_at: dict[tuple[int, int], float] = {}
        self.open_now = 0
        self.most_held = 0
        self.opened = 0
        self.refused = 0
        self.closed_early = 0
        self.sent = 0
        self.acknowledged = 0
        self.errors: dict[str, int] = {}
        self.csrf = secrets.token_hex(16)  # a CSRF secret of our own (cookie and form agree)

    # --- sockets -----------------------------------------------------------------------------

    async def host_socket(self, ready: asyncio.Event, done: asyncio.Event):
        async with connect(f"{self.ws_base}/ws/host/sessions/{self.world['session_id']}/",
                           origin=self.base, additional_headers={"Cookie": self.world["host_cookie"]},
                           open_timeout=30, max_queue=None) as socket:
            assert json.loads(await socket.recv())["type"] == "snapshot"
            ready.set()
            while not done.is_set():
                try:
                    frame = json.loads(await asyncio.wait_for(socket.recv(), 0.5))
                except TimeoutError:
                    continue
                now = time.perf_counter()
                if frame.get("type") != "judge":
                    continue
                row = frame["judge"]
                for count in range(1, row["answered1"] + 1):
                    started = self.pending_host.pop((row["number"], count), None)
                    if started is not None:
                        self.host_ms.append((now - started) * 1000)
                        acked = self.acked_at.get((row["number"], count))
                        if acked is not None:
                            self.host_after_ack_ms.append((now - acked) * 1000)

    async def judge_socket(self, judge: dict, done: asyncio.Event):
        try:
            socket = await connect(f"{self.ws_base}/ws/s/{self.world['url_id']}/", origin=self.base,
                                   additional_headers={"Cookie": judge["cookie"]}, open_timeout=60)
        except Exception as error:  # noqa: BLE001 - counted, reported
            self.refused += 1
            response = getattr(error, "response", None)
            what = f"socket: {type(error).__name__}" + (
                f" {response.status_code}" if response is not None else "")
            self.errors[what] = self.errors.get(what, 0) + 1
            return
        self.opened += 1
        self.open_now += 1
        self.most_held = max(self.most_held, self.open_now)
        try:
            while not done.is_set():
                try:
                    frame = json.loads(await asyncio.wait_for(socket.recv(), 1))
                except TimeoutError:
                    continue
                now = time.perf_counter()
                if frame.get("type") == "saved":
                    started = self.pending_judge.pop((judge["number"], frame["code"]), None)
                    if started is not None:
                        self.judge_ms.append((now - started) * 1000)
        except Exception as error:  # noqa: BLE001 - a socket that dropped before the end
            self.closed_early += 1
            close = getattr(error, "rcvd", None)
            what = f"dropped: {type(error).__name__}" + (f" {close.code}" if close is not None else "")
            self.errors[what] = self.errors.get(what, 0) + 1
        finally:
            self.open_now -= 1
            await socket.close()

    # --- verdicts ----------------------------------------------------------------------------

    def post_verdict(self, judge: dict, code: str) -> tuple[int, float, float]:
        port = urlsplit(self.base).port
        body = urlencode({"verdict": "pass", "phase": "1", "seconds_spent": "1", "go": "stay",
                          "csrfmiddlewaretoken": self.csrf})
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        started = time.perf_counter()
        connection.request("POST", f"/s/{self.world['url_id']}/i/{code}/", body=body, headers={
            "Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json",
            "Origin": self.base, "Cookie": f"{judge['cookie']}; csrftoken={self.csrf}"})
        response = connection.getresponse()
        response.read()
        connection.close()
        return response.status, started, time.perf_counter()

    async def drive(self, loop, pool):
        judges = self.world["judges"]
        total = int(self.args.rate * self.args.duration)
        capacity = sum(len(j["codes"]) for j in judges)
        total = min(total, capacity)
        start = time.perf_counter()
        tasks = []

        async def one(index):
            judge = judges[index % len(judges)]
            position = index // len(judges)
            code = judge["codes"][position]
            count = position + 1
            t0 = time.perf_counter()
            self.pending_host[(judge["number"], count)] = t0
            self.pending_judge[(judge["number"], code)] = t0
            self.sent += 1
            try:
                status, _, finished = await loop.run_in_executor(pool, self.post_verdict, judge, code)
            except Exception as error:  # noqa: BLE001 - counted, reported
                self.errors[f"http: {type(error).__name__}"] = self.errors.get(
                    f"http: {type(error).__name__}", 0) + 1
                return
            if status == 200:
                self.acknowledged += 1
                self.http_ms.append((finished - t0) * 1000)
                self.acked_at[(judge["number"], count)] = finished
            else:
                self.errors[f"http {status}"] = self.errors.get(f"http {status}", 0) + 1

        for index in range(total):
            delay = start + index / self.args.rate - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one(index)))
        await asyncio.gather(*tasks)
        return time.perf_counter() - start, total

    async def main(self):
        loop = asyncio.get_running_loop()
        done = asyncio.Event()
        ready = asyncio.Event()
        host_task = asyncio.create_task(self.host_socket(ready, done))
        await asyncio.wait_for(ready.wait(), 60)
        opening = time.perf_counter()
        judge_tasks = []
        for batch in range(0, len(self.world["judges"]), 50):
            for judge in self.world["judges"][batch:batch + 50]:
                judge_tasks.append(asyncio.create_task(self.judge_socket(judge, done)))
            await asyncio.sleep(0.2)
        deadline = time.monotonic() + 120
        while self.opened + self.refused < len(self.world["judges"]) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        opened_in = time.perf_counter() - opening
        await asyncio.sleep(2)  # let the connect events settle before measuring
        with ThreadPoolExecutor(max_workers=64) as pool:
            elapsed, total = await self.drive(loop, pool)
        settle = time.monotonic() + 10
        while (self.pending_host or self.pending_judge) and time.monotonic() < settle:
            await asyncio.sleep(0.05)
        held_at_end = self.open_now
        done.set()
        await asyncio.gather(host_task, *judge_tasks, return_exceptions=True)
        return {"elapsed_s": round(elapsed, 2), "verdicts_planned": total, "opened_in_s": round(opened_in, 2),
                "held_at_end": held_at_end}


def main():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 16384), hard))  # a socket is a file
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sockets", type=int, default=AIM["sockets"])
    parser.add_argument("--rate", type=float, default=AIM["rate"], help="verdicts per second")
    parser.add_argument("--duration", type=float, default=30, help="seconds of verdicts")
    parser.add_argument("--processes", type=int, default=AIM["processes"], help="deploy/serve processes")
    parser.add_argument("--out", default="")
    args = parser.parse_args()

    admin_url = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    name = os.environ.get("BENCH_DB", "blindjudge_bench_live")
    redis_url = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")
    folder = Path(tempfile.mkdtemp(prefix="blindjudge-bench-live-"))
    nginx_port = free_port()
    base = f"http://127.0.0.1:{nginx_port}"
    env = {key: value for key, value in os.environ.items() if not key.startswith("BLINDJUDGE_TEST")}
    env.update({
        "DJANGO_SETTINGS_MODULE": "blindjudge.settings",  # production settings, not the tests'
        "DATABASE_URL": database_url(admin_url, name), "REDIS_URL": redis_url,
        "REDIS_CHANNEL_PREFIX": f"bench-{secrets.token_hex(4)}", "SECRET_KEY": secrets.token_urlsafe(50),
        "SITE_URL": base, "ALLOWED_HOSTS": "127.0.0.1", "STATIC_ROOT": str(folder / "static"),
        "VENV": sys.prefix, "LOG_LEVEL": "ERROR",
        # A connection pool per process, as deploy/README.md recommends for PostgreSQL.
        "DB_POOL_MAX_SIZE": os.environ.get("DB_POOL_MAX_SIZE", "20"),
        # Every simulated judge connects from 127.0.0.1; real judges each have their own address,
        # so the per-address limit on websocket openings is lifted here.
        "BLINDJUDGE_WS_OPEN_BURST": "100000",
    })
    os.environ.update(env)
    load_before = list(os.getloadavg())
    recreate_database(admin_url, name)
    servers, nginx = [], None
    try:
        manage = [sys.executable, "manage.py"]
        # S603: fixed argv, our own interpreter and manage.py.
        subprocess.run([*manage, "migrate", "--no-input", "-v0"], cwd=ROOT, env=env, check=True)  # noqa: S603
        subprocess.run([*manage, "collectstatic", "--no-input", "-v0"],  # noqa: S603
                       cwd=ROOT, env=env, check=True)
        seeding = time.perf_counter()
        world = seed(args.sockets)
        print(f"seeded {args.sockets} judges in {time.perf_counter() - seeding:.1f}s", flush=True)
        servers = [ServeProcess(port=free_port(), env=env, log_path=folder / f"serve-{i}.log")
                   for i in range(args.processes)]
        for server in servers:
            server.start(wait=False)
        for server in servers:
            wait_for_http(f"http://127.0.0.1:{server.port}/guest/", alive=server.alive)
        nginx = Nginx(port=nginx_port, upstreams=[s.port for s in servers], static_root=folder / "static",
                      folder=folder / "nginx").start()
        run = Run(base, world, args)
        outcome = asyncio.run(run.main())
    finally:
        if nginx is not None:
            nginx.stop()
        for server in servers:
            server.stop()
        logs = {f"serve-{i}": s.log()[-2000:] for i, s in enumerate(servers) if s.log().strip()}
        try:
            drop_database(admin_url, name)
        except Exception as error:  # noqa: BLE001
            print(f"could not drop {name}: {error}", file=sys.stderr)
        shutil.rmtree(folder, ignore_errors=True)

    host = percentiles(run.host_ms)
    result = {
        "benchmark": "live",
        "when": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "platform": platform.platform(), "load_average_before": load_before,
                    "load_average_after": list(os.getloadavg()),
                    "note": "everything on one machine: servers, nginx, PostgreSQL, Redis and this client"},
        "deployment": {"processes": args.processes, "server": "deploy/serve PORT 1 (Uvicorn)",
                       "db_pool_max": int(env["DB_POOL_MAX_SIZE"]),
                       "proxy": "nginx, deploy/nginx/blindjudge.conf", "database": "PostgreSQL",
                       "channel_layer": "channels_redis"},
        "parameters": {"sockets": args.sockets, "rate_per_s": args.rate, "duration_s": args.duration},
        "sockets": {"requested": args.sockets, "opened": run.opened, "refused": run.refused,
                    "most_held": run.most_held + 1, "held_at_end": outcome["held_at_end"] + 1,
                    "dropped_early": run.closed_early, "opened_in_s": outcome["opened_in_s"],
                    "note": "judge sockets plus the host's one"},
        "verdicts": {"planned": outcome["verdicts_planned"], "sent": run.sent,
                     "acknowledged": run.acknowledged, "achieved_rate_per_s":
                     round(run.sent / outcome["elapsed_s"], 2) if outcome["elapsed_s"] else None,
                     "errors": run.errors, "http_ms": percentiles(run.http_ms)},
        "host_delivery_ms": {**host, "undelivered": len(run.pending_host)},
        "host_delivery_after_ack_ms": percentiles(run.host_after_ack_ms),
        "judge_delivery_ms": {**percentiles(run.judge_ms), "undelivered": len(run.pending_judge)},
        "aim": AIM,
    }
    result["aim_met"] = bool(
        args.sockets >= AIM["sockets"] and args.rate >= AIM["rate"] and args.processes == AIM["processes"]
        and run.opened == args.sockets and not run.pending_host and host.get("p99", 1e9) <= AIM["p99_ms"])
    if logs and (run.errors or run.pending_host or run.closed_early):
        result["server_log_tails"] = logs
    out = Path(args.out) if args.out else ROOT / "bench" / "results" / (
        "live-" + result["when"].replace(":", "").replace("-", "") + ".json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: result[k] for k in ("sockets", "verdicts", "host_delivery_ms", "judge_delivery_ms",
                                              "aim_met")}, indent=2))
    print(f"written to {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")


if __name__ == "__main__":
    main()
