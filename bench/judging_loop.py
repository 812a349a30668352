"""The judging loop's speed (issue 16): from a verdict key to the next item shown with its copy's
frame loaded, in real Chromium, over N items (target: p95 <= 150 ms).

    python bench/judging_loop.py [--items 50] [--read-ms 600] [--port 8793] [--label loop]

It makes a fresh data directory (SQLite), seeds one open copies session of N+1 items through the
product's services (bench/fixture.py's bundle and judge admission), starts `./bj start` (Uvicorn,
one process, as a small deployment runs it) and drives Debian's Chromium (headless) as one judge:
on each item it waits `--read-ms` (a judge reads before deciding; the page fetches the next item
meanwhile, which is the point), presses the verdict key and times, inside the page, from the
key's `keydown` to the page's "item shown" signal (judge.js's `blindjudge:item-shown`, sent when
the new item is on screen and its frame has fired `load`). With one key per decision off (a
server without the setting) the key picks and Enter moves on: the time is then from Enter.
With `--kind pairs` the session is a pairs session of N+1 pairs (a run/2 bundle of N+1 tasks,
two builders' copies of each, the copies as above): the time runs to the next pair on screen with
both its frames loaded (the same event, sent once both have fired `load`).
Results: bench/results/judging-loop-<label>-<UTC>.json.
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# The desktop browser a judge runs, not the test suite's headless shell: this measures their loop.
CHROMIUM = "/usr/bin/chromium"
# The page's own clock: keydown's timestamp, and the moment the next item's frame is shown loaded.
WATCH_JS = """() => {
  window.__loop = {keyAt: null, shown: []};
  document.addEventListener('keydown', (e) => { window.__loop.keyAt = performance.now(); }, true);
  document.addEventListener('blindjudge:item-shown', (e) => {
    window.__loop.shown.push({code: e.detail.code, ms: performance.now() - window.__loop.keyAt});
  });
}"""


def pairs_bundle(pairs: int) -> dict:
    """A run/2 bundle of `pairs` tasks, each with two builders' copies (make_bundle's content)."""
    from bench.fixture import make_bundle  # noqa: PLC0415 - after setup: the seed step runs it

    copies = make_bundle(2 * pairs, reviewers=0)["copies"]
    return {
        "format": "blindjudge.run/2",
        "run": {"name": f"benchmark pairs, {pairs} tasks", "default_condition": "clean"},
        "tasks": [{"id": f"t{t:04d}", "statement": f"Implement step {t} of the pipeline."}
                  for t in range(pairs)],
        "builders": [{"id": f"b{i}", "model": f"builder-model-{i}", "family": f"Lab {i}"}
                     for i in range(2)],
        "copies": [{**c, "task": f"t{n // 2:04d}", "builder": f"b{n % 2}"}
                   for n, c in enumerate(copies)],
        "reviewers": [], "reviews": [],
    }


def seed(out: str, items: int, kind: str = "copies") -> None:
    """Through the product's services: a bundle of `items` copies, an open copies session where
    the one judge gets every item, the judge's browser session."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")
    import django  # noqa: PLC0415 - lazy: Django loads only where the script needs the database

    django.setup()

    from bench.fixture import admit_judge, make_bundle  # noqa: PLC0415 - after setup
    from judging.services import (  # noqa: PLC0415 - after setup
        host_create,
        run_import,
        session_create,
        session_open,
    )

    bundle = pairs_bundle(items) if kind == "pairs" else make_bundle(items, reviewers=2)
    raw = json.dumps(bundle).encode("utf-8")
    host = host_create(username="loop-bench").host
    run = run_import(host=host, raw=raw, actor="bench")
    session = session_create(run=run, kind=kind, actor="bench", rubric="Is it right?",
                             items_per_judge=items).session
    session = session_open(session=session, actor="bench")
    judge, session_key = admit_judge(session, "Loop judge")
    first = judge.assignments.order_by("position").values_list("code", flat=True).first()
    Path(out).write_text(json.dumps({"url_id": session.url_id, "sessionid": session_key,
                                     "first_code": first, "items": items}))


def measure(base: str, fixture: dict, read_ms: int, kind: str = "copies") -> dict:
    from playwright.sync_api import sync_playwright  # noqa: PLC0415 - lazy: only the driver needs it

    if not os.access(CHROMIUM, os.X_OK):
        sys.exit(f"the judging loop is measured in Debian's Chromium at {CHROMIUM}: apt-get install chromium")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True)
        context = browser.new_context(viewport={"width": 1440, "height": 900})
        context.add_cookies([{"name": "sessionid", "value": fixture["sessionid"], "url": base}])
        page = context.new_page()
        page.goto(f"{base}/s/{fixture['url_id']}/i/{fixture['first_code']}/")
        page.wait_for_load_state("load")
        page.evaluate(WATCH_JS)
        one_key = page.locator("#item-top").get_attribute("data-one-key") == "1"
        moves = fixture["items"] - 1  # the last item's key leads to the review, not an item
        for index in range(moves):
            page.wait_for_timeout(read_ms)
            key = "1" if index % 3 else "2"
            if one_key:
                page.keyboard.press(key)
            else:
                page.keyboard.press(key)
                page.keyboard.press("Enter")
            page.wait_for_function("(n) => window.__loop.shown.length >= n", arg=index + 1,
                                   timeout=30_000)
        shown = page.evaluate("window.__loop.shown")
        codes = [row["code"] for row in shown]
        browser.close()
    times = sorted(row["ms"] for row in shown)
    assert len(set(codes)) == len(codes) == moves, "each key showed a new item"
    return {"kind": kind, "one_key": one_key, "moves": moves, "read_ms": read_ms,
            "key_to_next_frame_loaded_ms": {
                "p50": round(statistics.median(times), 1),
                "p95": round(times[min(len(times) - 1, int(0.95 * len(times)))], 1),
                "max": round(times[-1], 1), "min": round(times[0], 1)},
            "target_p95_ms": 150,
            "target_met": times[min(len(times) - 1, int(0.95 * len(times)))] <= 150}


def _python(args, env):
    done = subprocess.run([sys.executable, *args], cwd=ROOT, env=env,  # noqa: S603 - our own scripts
                          capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{args} failed:\n{done.stdout}\n{done.stderr}")


def _wait_ready(url, server, seconds=120):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with {server.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - our own server
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.1)
    raise SystemExit(f"the server did not answer {url} in {seconds} s")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="bench/judging_loop.py")
    parser.add_argument("command", nargs="?", default="run", choices=["run", "seed"])
    parser.add_argument("--items", type=int, default=50)
    parser.add_argument("--kind", choices=["copies", "pairs"], default="copies")
    parser.add_argument("--read-ms", type=int, default=600)
    parser.add_argument("--port", type=int, default=8793)
    parser.add_argument("--work-dir", default=str(ROOT / "var" / "bench-judging-loop"))
    parser.add_argument("--label", default="loop")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    if args.command == "seed":
        seed(args.out, args.items, args.kind)
        return

    started = datetime.datetime.now(datetime.UTC)
    result = {"bench": "judging_loop", "started_at": f"{started:%Y-%m-%d %H:%M:%S UTC}",
              "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                          "load_before": os.getloadavg()},
              "server": "./bj start (Uvicorn, one process, SQLite file in the bench's data dir)",
              "browser": "Debian's Chromium, headless, 1440 x 900"}
    work = Path(args.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    (work / "data").mkdir(parents=True)
    base = f"http://127.0.0.1:{args.port}"
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE")}
    env.update(DJANGO_SETTINGS_MODULE="bench.settings", SITE_URL=base,
               BLINDJUDGE_DATA_DIR=str(work / "data"), PYTHONDONTWRITEBYTECODE="1",
               LOG_LEVEL="WARNING", VENV=sys.prefix)
    _python(["manage.py", "migrate", "--no-input", "-v0"], env)
    fixture_path = work / "fixture.json"
    # One more item than moves: N keys each lead to a next item.
    _python(["bench/judging_loop.py", "seed", "--out", str(fixture_path), "--items",
             str(args.items + 1), "--kind", args.kind], env)
    fixture = json.loads(fixture_path.read_text())
    with open(work / "server.log", "w") as log:
        server = subprocess.Popen([str(ROOT / "bj"), "start"], cwd=ROOT, env=env, stdout=log,  # noqa: S603
                                  stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_ready(base + "/bench/hello", server)
        result.update(measure(base, fixture, args.read_ms, args.kind))
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # the group this script started, and only it
        server.wait(timeout=20)
    result["machine"]["load_after"] = os.getloadavg()
    path = ROOT / "bench" / "results" / f"judging-loop-{args.label}-{started:%Y%m%dT%H%M}.json"
    path.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result["key_to_next_frame_loaded_ms"]), path, file=sys.stderr)


if __name__ == "__main__":
    main()
