"""Profile the hot requests in one process, with the queries each runs (pyinstrument, bench extra).

    DJANGO_SETTINGS_MODULE=bench.settings BLINDJUDGE_DATA_DIR=DIR \\
        .venv/bin/python -m bench.profile_requests FIXTURE.json [--repeat 200] [--html DIR]

FIXTURE.json is what `python -m bench.fixture setup` wrote for the database in that environment
(pre-fill one judge to the phase-1 lock first to profile the phase-2 page, and others through
phase 1 without the lock for the review page and the locks). Each request kind is sent `--repeat`
times through Django's test client (the whole middleware stack, no server), timed in wall and CPU
time (the process's, which other work on a shared machine does not inflate), and profiled; the
first request's SQL is printed so query counts and plans can be read. `lock` locks phase 1 of each
answered, unlocked judge once (as many requests as there are such judges, each its own). `--pairs
PAIRS.json` (url_id and judges with their pair codes and side codes) adds `pair` (a pairs item
page) and `pairframe` (one side's frame).
"""

import argparse
import cProfile
import json
import os
import pstats
import time

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")
import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from pyinstrument import Profiler  # noqa: E402

from accounts.models import Judge  # noqa: E402
from bench.run import CSRF  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("fixture")
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--html", default=None)
    parser.add_argument("--kinds", default="hello,item,frame,save,phase2,review,progress")
    parser.add_argument("--pairs", default=None)
    parser.add_argument("--cprofile", type=int, default=0,
                        help="also print cProfile's N costliest functions by CPU time (cumulative)")
    args = parser.parse_args()
    fixture = json.load(open(args.fixture))
    pairs = json.load(open(args.pairs)) if args.pairs else None
    url_id = fixture["url_id"]
    judges = fixture["judges"]
    locked = {j.pk for j in Judge.objects.filter(phase1_locked_at__isnull=False)}
    answered = {j.pk for j in Judge.objects.filter(phase1_locked_at__isnull=True,
                                                   phase1_answered=fixture["items_per_judge"])}
    phase1 = next(j for j in judges if j["pk"] not in locked and j["pk"] not in answered)
    phase2 = next((j for j in judges if j["pk"] in locked), None)
    reviewing = [j for j in judges if j["pk"] in answered]
    host = os.environ.get("SITE_URL", "http://127.0.0.1").split("//")[1].split(":")[0]

    clients = {}

    def client_for(sessionid):
        # One client per browser session, made once: a Client builds its own middleware chain,
        # WhiteNoise's scan of the static files included, which would otherwise be most of what
        # is measured.
        if sessionid not in clients:
            client = clients[sessionid] = Client(HTTP_HOST=host, enforce_csrf_checks=True)
            client.cookies["sessionid"] = sessionid
            client.cookies["csrftoken"] = CSRF
        return clients[sessionid]

    counter = {"n": 0}

    def request(kind):
        counter["n"] += 1
        n = counter["n"]
        if kind == "progress":
            return client_for(fixture["host_sessionid"]).get(
                f"/host/sessions/{fixture['session_id']}/judges")
        if kind == "hello":  # the framework's own cost per request, for scale
            return client_for(phase1["sessionid"]).get("/bench/hello")
        if kind in ("pair", "pairframe"):
            judge = pairs["judges"][0]
            client = client_for(judge["sessionid"])
            if kind == "pairframe":
                code = judge["side_codes"][n % len(judge["side_codes"])]
                return client.get(f"/s/{pairs['url_id']}/i/{code}/frame")
            return client.get(f"/s/{pairs['url_id']}/i/{judge['codes'][n % len(judge['codes'])]}/")
        if kind == "review":
            return client_for(reviewing[0]["sessionid"]).get(f"/s/{url_id}/lock/")
        if kind == "lock":
            judge = reviewing.pop()
            return client_for(judge["sessionid"]).post(
                f"/s/{url_id}/lock/", {"confirm": "yes", "phase": "1"}, HTTP_X_CSRFTOKEN=CSRF)
        judge = phase2 if kind == "phase2" else phase1
        code = judge["codes"][n % len(judge["codes"])]
        client = client_for(judge["sessionid"])
        if kind == "frame":
            return client.get(f"/s/{url_id}/i/{code}/frame")
        if kind == "save":
            return client.post(f"/s/{url_id}/i/{code}/", {"verdict": ("pass", "fail")[n % 2], "phase": "1",
                                                          "seconds_spent": str(n)},
                               HTTP_ACCEPT="application/json", HTTP_X_CSRFTOKEN=CSRF)
        return client.get(f"/s/{url_id}/i/{code}/")

    for kind in args.kinds.split(","):
        if kind == "phase2" and phase2 is None:
            print("phase2: no judge has locked phase 1; skipped")
            continue
        if kind == "lock":
            lock_profile(request, reviewing)
            continue
        with CaptureQueriesContext(connection) as queries:
            response = request(kind)
        assert response.status_code == 200, (kind, response.status_code, response.content[:300])
        print(f"\n=== {kind}: {len(queries)} queries")
        for q in queries.captured_queries:
            print(f"  {q['time']}s  {q['sql'][:220]}")
        started, cpu = time.perf_counter(), time.process_time()
        for _ in range(args.repeat):
            request(kind)
        print(f"{kind}: {1000 * (time.perf_counter() - started) / args.repeat:.2f} ms per request, "
              f"{1000 * (time.process_time() - cpu) / args.repeat:.2f} ms CPU "
              f"(in-process, not profiled)")
        profiler = Profiler(interval=0.001)
        started = time.perf_counter()
        profiler.start()
        for _ in range(args.repeat):
            request(kind)
        profiler.stop()
        print(f"{kind}: {1000 * (time.perf_counter() - started) / args.repeat:.2f} ms per request "
              f"(in-process, profiled)")
        print(profiler.output_text(unicode=False, color=False, show_all=False))
        if args.cprofile:
            cpu_profile = cProfile.Profile(time.process_time)
            cpu_profile.enable()
            for _ in range(args.repeat):
                request(kind)
            cpu_profile.disable()
            stats = pstats.Stats(cpu_profile)
            stats.sort_stats("cumulative").print_stats(args.cprofile)
        if args.html:
            os.makedirs(args.html, exist_ok=True)
            with open(os.path.join(args.html, f"{kind}.html"), "w") as out:
                out.write(profiler.output_html())


def lock_profile(request, reviewing):
    """Each answered, unlocked judge locks phase 1 once: timed and profiled together."""
    count = len(reviewing)
    if not count:
        print("lock: no answered, unlocked judge; skipped")
        return
    profiler = Profiler(interval=0.001)
    started, cpu = time.perf_counter(), time.process_time()
    profiler.start()
    with CaptureQueriesContext(connection) as queries:
        for _ in range(count):
            response = request("lock")
            assert response.status_code == 302, (response.status_code, response.content[:300])
    profiler.stop()
    print(f"\n=== lock: {len(queries) / count:.1f} queries per lock")
    print(f"lock: {1000 * (time.perf_counter() - started) / count:.2f} ms per request, "
          f"{1000 * (time.process_time() - cpu) / count:.2f} ms CPU (in-process, profiled, "
          f"{count} locks)")
    print(profiler.output_text(unicode=False, color=False, show_all=False))


if __name__ == "__main__":
    main()
