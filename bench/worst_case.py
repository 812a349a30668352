"""The worst-case corpus (issue 12): hostile copies at today's limits, rendered and served.

    python bench/worst_case.py render                 # normalise + render each copy, in process
    python bench/worst_case.py serve --pg-url URL     # a real server: time to first byte, p50s
    python bench/worst_case.py seed --out FIXTURE     # (run by `serve`, in its own process)
    python bench/worst_case.py inputs                 # inputs that cost memory: time, peak RSS
    python bench/worst_case.py runs                   # the host's runs page beside a run at the
                                                      # bundle limit, served on SQLite
    python bench/worst_case.py joins                  # guest joins at 5,000 and 80,000 items and
                                                      # 40 wrong sign-ins at once, beside another
                                                      # session's saves, served on SQLite

`render` measures, per copy, the work done when a session opens (normalise + copy_html +
frame_document) and the frame's size against its copy's; the targets: at most 2 s per copy and a
frame of at most 4 x the copy + 64 KB. `serve` imports a bundle holding the corpus through the
product's services, opens a session, admits judges (bench/fixture.py's way), starts
`deploy/serve PORT 1` (Uvicorn, production settings) on a fresh PostgreSQL database, and then
only sends HTTP GETs: each worst-case frame's time to first byte against the 2 KB copy's
(target: within 1.5 x), and another judge's item page p50 idle and while four worst-case frames
are being fetched at once (target: within 2 x). `joins` (issue 25 items 3 and 4) seeds, in its
own process and through the product's services, a session of 5,000 and one of 80,000 items (every
judge given every item, guests allowed) and another session whose admitted judge then saves
verdicts in a loop over HTTP, starts `deploy/serve PORT 1` on the embedded default (SQLite), and
sends at once 40 guest joins to the first, 4 to the second (each from its own address, as nginx
forwards it), then 40 wrong-password sign-ins (from one address; then from 40): the other judge's
save latency idle and during each burst, its failures, and what each join or sign-in was answered.
Results: bench/results/worst-case-*.json.
"""

import argparse
import datetime
import json
import os
import platform
import secrets
import shutil
import statistics
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MAX_COPY_BYTES = 5 * 1024 * 1024  # BLINDJUDGE_MAX_COPY_BYTES's default (blindjudge/settings.py)
BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f"


def _fill(unit: str, limit: int = MAX_COPY_BYTES) -> str:
    return unit * (limit // len(unit.encode("utf-8")))


def _ordinary(size: int = 2048) -> str:
    line = "def step(value, n):  # adds n, then doubles: the task's second rule\n    return 2 * (value + n)\n"
    return (line * (size // len(line) + 1))[:size]


_PYTHON = (
    'def total(basket, rate=0.2):  # the subtotal, then the tax\n'
    '    """Sum the basket\'s prices; "rate" is the tax."""\n'
    '    subtotal = sum(item.price * item.quantity for item in basket if item.quantity > 0)\n'
    "    return round(subtotal * (1 + rate), 2), len(basket), {'ok': True, 'n': 0x1F}\n"
)


def _python_diff(size: int) -> str:
    header = "diff --git a/shop/total.py b/shop/total.py\n--- a/shop/total.py\n+++ b/shop/total.py\n"
    lines = ("+" + _PYTHON.replace("\n", "\n+")).removesuffix("+")
    body = _fill(lines, size - len(header) - 40)
    count = body.count("\n")
    return f"{header}@@ -0,0 +1,{count} @@\n{body}"


def _python_fences(size: int) -> str:
    block = "Some prose about the change.\n\n```python\n" + _PYTHON * 4 + "```\n\n"
    return _fill(block, size)


def _blank_python_diff(lines: int) -> str:
    header = "diff --git a/shop/blank.py b/shop/blank.py\n--- a/shop/blank.py\n+++ b/shop/blank.py\n"
    return f"{header}@@ -0,0 +1,{lines} @@\n" + ("+" + " " * 24 + "\n") * lines


def corpus() -> dict[str, tuple[str, str]]:
    """name -> (format, content). Every copy within BLINDJUDGE_MAX_COPY_BYTES; markdown ones
    within MARKDOWN_RENDER_LIMIT where the point is the markdown renderer."""
    diff_line = "+    total = sum(item.price * item.quantity for item in basket)  # subtotal\n"
    return {
        "ordinary 2 KB (baseline)": ("text", _ordinary()),
        "markdown table, 24,000 rows (96 KB)": ("markdown", "|a|\n|-|\n" + "|x|\n" * 24000),
        "16,666 links in one paragraph": ("markdown", "[a](b)" * 16666),
        "5 MB of U+200B": ("text", _fill("\u200b")),
        "5 MB of U+200B, markdown": ("markdown", _fill("\u200b")),
        "5 MB of bidi controls, cycling": ("text", _fill(BIDI)),
        "5 MB of bidi controls, one repeated": ("text", _fill("\u202e")),
        "5 MB of mixed-script tokens": ("text", _fill("p\u0430ypal " * 10 + "\n")),
        "5 MB of mixed-script tokens, markdown": ("markdown", _fill("p\u0430ypal " * 10 + "\n")),
        "blockquote nested 50,000 deep": ("markdown", ">" * 50000 + " deep\n"),
        "list nested 300 deep": ("markdown", "".join(" " * (2 * i) + "- x\n" for i in range(300))),
        "5 MB diff": ("diff", "@@ -1,0 +1,70000 @@\n" + _fill(diff_line, MAX_COPY_BYTES - 100)),
        "5 MB diff of alternating one-character lines": ("diff", _fill("+\n-\n")),
        "5 MB of zero-width space between letters": ("text", _fill("a\u200b")),
        # Issue 16: syntax highlighting at its limits (content.rendering.HIGHLIGHT_MAX_CHARACTERS for
        # a diff; a markdown copy's fences within MARKDOWN_RENDER_LIMIT).
        "Python diff at the highlighting limit (128 KB)": ("diff", _python_diff(128 * 1024)),
        "markdown of Python fences (96 KB)": ("markdown", _python_fences(96 * 1024)),
        # Issue 25: lexers that backtrack. A fence naming maple (exponential: each more `\a`
        # doubles it), a unit file in a patch (the systemd lexer, by its name), and whitespace-only
        # lines under the lines' limit (Pygments' own Python lexer: quadratic).
        "markdown: a maple fence, a quote then 25 backslash-a (79 bytes)": (
            "markdown", "The answers:\n\n```maple\n\"" + "\\a" * 25 + "\n```\n"),
        "diff of x.service, a line of 500 spaces": (
            "diff", "--- a/x.service\n+++ b/x.service\n@@ -0,0 +1,2 @@\n+[Unit]\n+" + " " * 500 + "\n"),
        "Python diff of 4,900 whitespace-only lines (127 KB)": ("diff", _blank_python_diff(4900)),
    }


def _frame_bound(source_bytes: int) -> int:
    return 4 * source_bytes + 64 * 1024


def render(repeat: int) -> dict:
    from content.normalise import normalise  # noqa: PLC0415 - after sys.path
    from content.rendering import copy_html, frame_document  # noqa: PLC0415 - after sys.path

    rows = []
    for name, (fmt, content) in corpus().items():
        times = []
        for _ in range(repeat):
            started = time.perf_counter()
            frame = frame_document(copy_html(normalise(content, fmt, []), fmt))
            times.append(time.perf_counter() - started)
        source = len(content.encode("utf-8"))
        size = len(frame.encode("utf-8"))
        row = {"copy": name, "format": fmt, "source_bytes": source, "frame_bytes": size,
               "frame_over_source": round(size / source, 2), "frame_bound": _frame_bound(source),
               "render_s": round(min(times), 3), "fell_back_to_text": 'class="note' in frame[:6000],
               "within_time": min(times) <= 2.0, "within_size": size <= _frame_bound(source)}
        rows.append(row)
        print(f"{name:48} {fmt:8} {source:>9} B -> {size:>9} B ({row['frame_over_source']:>5}x) "
              f"{row['render_s']:6.3f} s {'ok' if row['within_time'] and row['within_size'] else 'MISSED'}",
              file=sys.stderr, flush=True)
    return {"copies": rows, "all_within_target": all(r["within_time"] and r["within_size"] for r in rows)}


# --- Inputs that cost the server memory or hold its limits (issue 25) ---------------------------

_INSPECT = (
    "from pathlib import Path\n"
    "from content.importers.common import ConversionError, Families, Source\n"
    "from tests.support.hostile_logs import attachment_bomb, large_legal_log\n")
_CONVERT_HERE = (
    "from content.importers.inspect_logs import convert\n"
    "started = time.perf_counter()\n"
    "try:\n"
    "    done = convert(logs=[Source('log.eval', raw)], truth_scorer='match', truth_values=None,\n"
    "                   review_scorer=None, families=Families(), max_built_chars=50 * 2**20)\n"
    "    outcome = f'{len(raw) // 1024:,} KB log: converted, {done.summary[\"tasks\"]:,} tasks'\n"
    "except ConversionError as refused:\n"
    "    outcome = f'{len(raw) // 1024:,} KB log: refused: {refused.errors[0][:90]}'\n")
_CONVERT_CHILD = (
    "import os\n"
    "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'bench.settings')\n"
    "from content.importers.conversion import ImportRequest\n"
    "from judging.importing import convert\n"
    "request = ImportRequest(format='inspect', logs=[Source('log.eval', raw)], "
    "truth_scorer='match')\n"
    "started = time.perf_counter()\n"
    "try:\n"
    "    done = convert(request)\n"
    "    outcome = (f'converted, {done.summary[\"tasks\"]:,} tasks in the child in '\n"
    "               f'{done.seconds} s, peak {done.peak_rss_mb} MB')\n"
    "except ConversionError as refused:\n"
    "    outcome = f'refused: {refused.errors[0][:60]}'\n"
    "child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024\n"
    "outcome += f'; the child peaked at {child} MB'\n")

# Each case runs in a child process of its own, so its peak resident memory (ru_maxrss) is its
# own: (what it does, Python source run after the project is importable).
INPUT_CASES = {
    "bundle of 20 MB of empty objects (validate)": (
        "from content.bundle import BundleError, validate_bundle\n"
        "raw = b'{\"format\": \"blindjudge.run/1\", \"builders\": [' + b'{},' * 7_000_000 + b'{}]}'\n"
        "try:\n    validate_bundle(raw, max_bundle_bytes=50 * 2**20, max_copy_bytes=5 * 2**20)\n"
        "except BundleError as refused:\n    outcome = refused.errors[0][:80]\n"),
    "report intervals, 80,000 copies each its own cluster, 8 judges (clustered_ratios)": (
        "import numpy as np\nfrom reports.stats import clustered_ratios\n"
        "rows = np.ones((8, 80_000))\n"
        "points, *_ = clustered_ratios(rows, rows, range(80_000), resamples=2000, seed=1)\n"
        "outcome = f'points {points[0]}'\n"),
    # Issue 25 item 2: inspect logs (tests/support/hostile_logs.py builds them), converted as the
    # product converts them (the texts' budget: the 50 MiB bundle limit), here in the process...
    "inspect .eval of 75 KB: 10,000 messages naming one 100 KB attachment (convert)": (
        _INSPECT + "raw = attachment_bomb(samples=1, messages=10_000)\n" + _CONVERT_HERE),
    "inspect .eval of 2.9 MB: 40 samples of 150 such messages, 15 MB of text each (convert)": (
        _INSPECT + "raw = attachment_bomb(samples=40, messages=150)\n" + _CONVERT_HERE),
    "inspect .eval of 12 MB, legal: 1,000 samples of 16 KB (convert)": (
        _INSPECT + "raw = large_legal_log(samples=1_000, statement_kb=16)\n" + _CONVERT_HERE),
    # ...and through judging.importing.convert, which converts in a child process: the peak here
    # is the asking (serving) process's, the child's is in the outcome; the 21 KB real log's time
    # is what a conversion's child costs to start.
    "inspect .eval of 21 KB, the real popularity log (judging.importing.convert, a child)": (
        _INSPECT + "raw = (Path('tests/data/inspect') / "
        "'2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval').read_bytes()\n"
        + _CONVERT_CHILD),
    "inspect .eval of 2.9 MB, the 40-sample attachment bomb (judging.importing.convert, a child)": (
        _INSPECT + "raw = attachment_bomb(samples=40, messages=150)\n" + _CONVERT_CHILD),
    "inspect .eval of 12 MB, legal, 1,000 samples (judging.importing.convert, a child)": (
        _INSPECT + "raw = large_legal_log(samples=1_000, statement_kb=16)\n" + _CONVERT_CHILD),
}
_INPUT_RUNNER = """
import os, resource, sys, time
sys.path.insert(0, {root!r})
os.chdir({root!r})
started = time.perf_counter()
outcome = "done"
{body}
peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
print(round(time.perf_counter() - started, 3), peak_mb, outcome, sep="\\t")
"""


def inputs() -> dict:
    import subprocess  # noqa: PLC0415 - lazy: only this part starts processes

    rows = []
    for name, body in INPUT_CASES.items():
        script = _INPUT_RUNNER.format(root=str(ROOT), body=body)
        result = subprocess.run([sys.executable, "-c", script],  # noqa: S603 - our own cases
                                capture_output=True, text=True, timeout=1800)
        if result.returncode:
            rows.append({"case": name, "failed": result.stderr[-400:]})
            continue
        seconds, peak_mb, outcome = result.stdout.strip().split("\t", 2)
        rows.append({"case": name, "seconds": float(seconds), "peak_rss_mb": int(peak_mb),
                     "outcome": outcome})
        print(f"{name:84} {float(seconds):8.2f} s {int(peak_mb):6} MB  {outcome}", file=sys.stderr,
              flush=True)
    return {"inputs": rows}


# --- Serving ------------------------------------------------------------------------------------

# The copies the serving part imports: one bundle must stay within BLINDJUDGE_MAX_BUNDLE_BYTES
# (50 MB), so the variants of a case (markdown twins, one repeated bidi control) are left out.
SERVED = (
    "ordinary 2 KB (baseline)", "markdown table, 24,000 rows (96 KB)",
    "16,666 links in one paragraph", "5 MB of U+200B", "5 MB of bidi controls, cycling",
    "5 MB of mixed-script tokens", "blockquote nested 50,000 deep", "list nested 300 deep",
    "5 MB diff", "5 MB diff of alternating one-character lines",
    "5 MB of zero-width space between letters",
)


def seed(out: str, judges: int) -> None:
    """Through the product's services: import the corpus, create and open a session, admit
    judges and bind each to a browser session (as bench/fixture.py does)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")
    import django  # noqa: PLC0415 - lazy: Django loads only where the script needs the database

    django.setup()

    from bench.fixture import admit_judge  # noqa: PLC0415 - after setup
    from judging.models import Assignment  # noqa: PLC0415 - after setup
    from judging.services import (  # noqa: PLC0415 - after setup
        host_create,
        run_import,
        session_create,
        session_open,
    )

    names = list(corpus())
    copies = [{"id": f"c{i:02d}", "builder": f"b{i % 2}", "format": fmt, "content": content,
               "truth": "known_good"} for i, (fmt, content) in enumerate(corpus().values())
              if names[i] in SERVED]
    bundle = {"format": "blindjudge.run/1",
              "run": {"name": "worst-case corpus", "task": "Render hostile copies."},
              "builders": [{"id": "b0", "model": "m0", "family": "f0"},
                           {"id": "b1", "model": "m1", "family": "f1"}],
              "copies": copies, "reviewers": [], "reviews": []}
    raw = json.dumps(bundle, ensure_ascii=False).encode("utf-8")
    host = host_create(username=f"worst-{secrets.token_hex(4)}").host
    run = run_import(host=host, raw=raw, actor="bench")
    session = session_create(run=run, kind="copies", actor="bench", rubric="Is it right?").session
    started = time.perf_counter()
    session = session_open(session=session, actor="bench")
    open_seconds = time.perf_counter() - started
    rows = []
    for number in range(1, judges + 1):
        judge, session_key = admit_judge(session, f"Worst judge {number}")
        codes = {names[int(copy_id[1:])]: code for code, copy_id in Assignment.objects.filter(
            judge=judge).values_list("code", "item__copy__bundle_id")}
        rows.append({"sessionid": session_key, "codes": codes})
    Path(out).write_text(json.dumps({"url_id": session.url_id, "open_seconds": open_seconds,
                                     "bundle_bytes": len(raw), "judges": rows}))


# What Chromium sends: the frames are stored compressed and sent as stored to such a client.
BROWSER_ACCEPT_ENCODING = "gzip, deflate, br, zstd"


def _get(url: str, cookie: str) -> tuple[float, float, int]:
    """(time to first byte, total time, bytes on the wire) of one GET, as a browser asks for it
    (the body is read whole, never decompressed: a judge's browser does that on its own machine)."""
    request = urllib.request.Request(url, headers={  # noqa: S310 - our own server
        "Cookie": cookie, "Accept-Encoding": BROWSER_ACCEPT_ENCODING})
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=600) as response:  # noqa: S310 - our own server
        first = response.read(1)
        ttfb = time.perf_counter() - started
        rest = response.read()
    return ttfb, time.perf_counter() - started, len(first) + len(rest)


def serve(args) -> dict:
    from bench.run import Server, database_env, fresh_postgres, run_python  # noqa: PLC0415 - after sys.path

    work = Path(args.work_dir)
    shutil.rmtree(work, ignore_errors=True)
    (work / "data").mkdir(parents=True)
    env = database_env("postgres", args, args.port, work)
    out = {"postgres_settings": fresh_postgres(args.pg_url), "load_at_start": os.getloadavg()}
    run_python(["manage.py", "migrate", "--no-input", "-v0"], env, "migrate")
    run_python(["manage.py", "collectstatic", "--no-input", "-v0"], env, "collectstatic")
    fixture_path = work / "fixture.json"
    run_python(["bench/worst_case.py", "seed", "--out", str(fixture_path), "--judges", "6"], env, "seed")
    fixture = json.loads(fixture_path.read_text())
    out["session_open_s"] = round(fixture["open_seconds"], 3)
    base = f"http://127.0.0.1:{args.port}"
    server = Server([str(ROOT / "deploy" / "serve"), str(args.port), str(args.workers)], env,
                    work / "server.log", base)
    server.wait_ready("/bench/hello")
    try:
        judges = fixture["judges"]
        url_id = fixture["url_id"]

        def frame_url(name, judge=0):
            return f"{base}/s/{url_id}/i/{judges[judge]['codes'][name]}/frame"

        def cookie(judge):
            return f"sessionid={judges[judge]['sessionid']}"

        baseline = "ordinary 2 KB (baseline)"
        ttfb = {}
        for name in SERVED:
            samples = [_get(frame_url(name), cookie(0)) for _ in range(args.samples)]
            ttfb[name] = {"ttfb_ms_p50": round(1000 * statistics.median(s[0] for s in samples), 1),
                          "total_ms_p50": round(1000 * statistics.median(s[1] for s in samples), 1),
                          "bytes": samples[0][2]}
            print(f"{name:48} ttfb {ttfb[name]['ttfb_ms_p50']:>9} ms  total "
                  f"{ttfb[name]['total_ms_p50']:>9} ms  {ttfb[name]['bytes']:>10} B", file=sys.stderr,
                  flush=True)
        base_ttfb = ttfb[baseline]["ttfb_ms_p50"]
        for row in ttfb.values():
            row["ttfb_over_baseline"] = round(row["ttfb_ms_p50"] / base_ttfb, 2)
            row["within_1_5x"] = row["ttfb_ms_p50"] <= 1.5 * base_ttfb
        out["frames"] = ttfb

        item_url = f"{base}/s/{url_id}/i/{judges[1]['codes'][baseline]}/"

        def item_p50(count):
            return 1000 * statistics.median(_get(item_url, cookie(1))[1] for _ in range(count))

        idle = item_p50(args.samples * 3)
        heavy = sorted(ttfb, key=lambda n: -ttfb[n]["bytes"])[:4]

        def item_p50_while_fetching(names):
            """The item page's p50 while four other clients fetch these frames back to back."""
            stop = threading.Event()

            def fetch_forever(name, judge):
                while not stop.is_set():
                    _get(frame_url(name, judge), cookie(judge))

            threads = [threading.Thread(target=fetch_forever, args=(name, 2 + k), daemon=True)
                       for k, name in enumerate(names)]
            for thread in threads:
                thread.start()
            time.sleep(0.5)
            p50 = item_p50(args.samples * 3)
            stop.set()
            for thread in threads:
                thread.join(timeout=600)
            return p50

        loaded = item_p50_while_fetching(heavy)
        # The control: four clients fetching the 2 KB copy's frame as fast. What the worst cases
        # cost beyond it is theirs; the rest is four busy clients on one server process.
        ordinary = item_p50_while_fetching([baseline] * 4)
        out["item_page"] = {"idle_p50_ms": round(idle, 1), "under_four_frames_p50_ms": round(loaded, 1),
                            "ratio": round(loaded / idle, 2), "within_2x": loaded <= 2 * idle,
                            "under_four_ordinary_frames_p50_ms": round(ordinary, 1),
                            "worst_over_ordinary": round(loaded / ordinary, 2),
                            "frames_fetched_meanwhile": heavy}
        print(f"item page p50 idle {idle:.1f} ms, while four worst frames are fetched {loaded:.1f} ms, "
              f"while four 2 KB frames are {ordinary:.1f} ms", file=sys.stderr, flush=True)
    finally:
        server.stop()
    return out


# --- The host's runs page beside a run at the bundle limit (issue 25 low 10) ---------------------

def large_run_bundle(limit: int) -> bytes:
    """A valid run/2 bundle of as many small records as fit in `limit` bytes: each copy reviewed
    once and with one finding, so the manifest (a hash per record) is as large as a bundle allows."""
    def item(i):
        return ({"id": f"c{i}", "task": "t", "builder": f"b{i % 2}", "format": "text",
                 "content": f"return a + b  # {i}", "truth": "known_good"},
                {"reviewer": "r", "copy": f"c{i}", "verdict": "fail", "reason": "r"},
                {"id": f"f{i}", "copy": f"c{i}", "text": "no type checks", "raised_by": ["r"],
                 "proposed_verdict": "confirmed", "truth": "real"})

    def bundle(count):
        items = [item(i) for i in range(count)]
        return json.dumps({
            "format": "blindjudge.run/2", "run": {"name": "runs page at the bundle limit"},
            "tasks": [{"id": "t", "statement": "Write add(a, b)."}],
            "builders": [{"id": "b0", "model": "m0", "family": "f0"},
                         {"id": "b1", "model": "m1", "family": "f1"}],
            "reviewers": [{"id": "r", "model": "m2", "family": "f2"}],
            "copies": [c for c, _, _ in items], "reviews": [r for _, r, _ in items],
            "findings": [f for _, _, f in items]}).encode("utf-8")

    per_item = len(bundle(1000)) / 1000
    raw = bundle(int(limit / per_item * 0.995))
    while len(raw) > limit:
        raw = bundle(int(len(json.loads(raw)["copies"]) * 0.99))
    return raw


def runs_seed(out: str) -> None:
    """A host and a run at the bundle limit, through the product's services; the host's browser
    session for the server's runs page."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")
    import django  # noqa: PLC0415 - lazy: Django loads only where the script needs the database

    django.setup()
    from django.conf import settings  # noqa: PLC0415 - after setup
    from django.test import Client  # noqa: PLC0415 - after setup

    from judging.services import host_create, run_import  # noqa: PLC0415 - after setup

    raw = large_run_bundle(settings.BLINDJUDGE_MAX_BUNDLE_BYTES)
    host = host_create(username=f"runs-{secrets.token_hex(4)}").host
    started = time.perf_counter()
    run = run_import(host=host, raw=raw, actor="bench")
    import_seconds = time.perf_counter() - started
    browser = Client()
    browser.force_login(host.user)
    Path(out).write_text(json.dumps({
        "run_id": run.pk, "bundle_bytes": len(raw), "limit": settings.BLINDJUDGE_MAX_BUNDLE_BYTES,
        "copies": run.copies.count(), "findings": run.findings.count(),
        "manifest_bytes": len(json.dumps(run.manifest)), "import_seconds": round(import_seconds, 1),
        "host_sessionid": browser.cookies[settings.SESSION_COOKIE_NAME].value}))


def _fresh_sqlite(args, name: str) -> tuple[Path, dict, dict]:
    """A new data folder under the work dir, its environment for the embedded default, migrated
    and with static files collected; and the results dict, with the load at the start."""
    from bench.run import database_env, run_python  # noqa: PLC0415 - after sys.path

    work = Path(args.work_dir) / name
    shutil.rmtree(work, ignore_errors=True)
    (work / "data").mkdir(parents=True)
    env = database_env("sqlite", args, args.port, work)
    out = {"database": "sqlite", "load_at_start": os.getloadavg()}
    run_python(["manage.py", "migrate", "--no-input", "-v0"], env, "migrate")
    run_python(["manage.py", "collectstatic", "--no-input", "-v0"], env, "collectstatic")
    return work, env, out


def runs_page(args) -> dict:
    """The host's runs page, served by `deploy/serve PORT 1` on SQLite (where the page grouped a
    run's every column, its manifest included), beside a run at the bundle limit."""
    from bench.run import Server, run_python  # noqa: PLC0415 - after sys.path

    work, env, out = _fresh_sqlite(args, "runs-page")
    fixture_path = work / "fixture.json"
    run_python(["bench/worst_case.py", "runs-seed", "--out", str(fixture_path)], env, "runs-seed")
    fixture = json.loads(fixture_path.read_text())
    out["run"] = {k: v for k, v in fixture.items() if k != "host_sessionid"}
    base = f"http://127.0.0.1:{args.port}"
    server = Server([str(ROOT / "deploy" / "serve"), str(args.port), "1"], env,
                    work / "server.log", base)
    server.wait_ready("/bench/hello")
    try:
        cookie = f"sessionid={fixture['host_sessionid']}"
        samples = [_get(f"{base}/host/", cookie) for _ in range(args.samples)]
        out["runs_page"] = {"total_ms_p50": round(1000 * statistics.median(s[1] for s in samples), 1),
                            "total_ms_max": round(1000 * max(s[1] for s in samples), 1),
                            "bytes": samples[0][2], "within_1_s": max(s[1] for s in samples) <= 1.0}
        print(f"runs page beside a run of {fixture['bundle_bytes']:,} bytes "
              f"({fixture['copies']:,} copies, {fixture['findings']:,} findings, manifest "
              f"{fixture['manifest_bytes']:,} bytes): p50 {out['runs_page']['total_ms_p50']} ms, "
              f"max {out['runs_page']['total_ms_max']} ms", file=sys.stderr, flush=True)
    finally:
        server.stop()
    return out


# --- Joins and sign-ins beside another session's saves (issue 25 items 3 and 4) -----------------

JOIN_SIZES = {5000: 40, 80000: 4}  # items in the session: guest joins sent at once (the finding's)
SIGNIN_BURST = 40
_STRONG = "Bench-host-password-9f3!"


def small_copies_bundle(items: int, name: str) -> bytes:
    """A run/1 bundle of `items` small copies (a few dozen bytes each) from two builders."""
    copies = [{"id": f"c{i:05d}", "builder": f"b{i % 2}", "format": "text",
               "content": f"def add_{i}(a, b):\n    return a + b  # step {i}\n",
               "truth": "known_good"} for i in range(items)]
    return json.dumps({"format": "blindjudge.run/1", "run": {"name": name, "task": "Write add."},
                       "builders": [{"id": "b0", "model": "alpha-model", "family": "Alpha Lab"},
                                    {"id": "b1", "model": "beta-model", "family": "Beta Lab"}],
                       "copies": copies}).encode("utf-8")


def _sizes(text: str) -> dict[int, int]:
    """"5000:40,80000:4" -> {5000: 40, 80000: 4}."""
    return {int(items): int(burst) for items, burst in
            (pair.split(":") for pair in text.split(","))}


def joins_seed(out: str, sizes: dict[int, int]) -> None:
    """Through the product's services: a session of each size (every judge given every
    item), open, guests allowed; another session of 20 items with one judge admitted (bound to a
    browser session as bench/fixture.py binds one), whose saves are timed; a host whose password
    the sign-in burst gets wrong."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")
    import django  # noqa: PLC0415 - lazy: Django loads only where the script needs the database

    django.setup()
    from bench.fixture import admit_judge, make_bundle  # noqa: PLC0415 - after setup
    from judging.models import Assignment  # noqa: PLC0415 - after setup
    from judging.services import (  # noqa: PLC0415 - after setup
        guests_configure,
        host_create,
        run_import,
        session_create,
        session_open,
    )

    host = host_create(username=f"joins-{secrets.token_hex(4)}", password=_STRONG).host
    sessions = {}
    for items, burst in sizes.items():
        raw = small_copies_bundle(items, f"joins at {items:,} items")
        started = time.perf_counter()
        run = run_import(host=host, raw=raw, actor="bench")
        imported = time.perf_counter()
        session = session_create(run=run, kind="copies", actor="bench", rubric="Is it right?",
                                 items_per_judge=None).session
        session = session_open(session=session, actor="bench")
        opened = time.perf_counter()
        code = guests_configure(session=session, actor="bench", allow=True,
                                cap=burst + 10).guest_code
        sessions[str(items)] = {"url_id": session.url_id, "guest_code": code, "burst": burst,
                                "bundle_bytes": len(raw),
                                "import_s": round(imported - started, 1),
                                "open_s": round(opened - imported, 1)}
        print(f"seeded {items:,} items: import {imported - started:.1f} s, open "
              f"{opened - imported:.1f} s", file=sys.stderr, flush=True)
    run = run_import(host=host, raw=json.dumps(make_bundle(20)).encode("utf-8"), actor="bench")
    other = session_create(run=run, kind="copies", actor="bench", rubric="Is it right?",
                           items_per_judge=None).session
    other = session_open(session=other, actor="bench")
    judge, session_key = admit_judge(other, "Saving judge")
    codes = list(Assignment.objects.filter(judge=judge).order_by("position")
                 .values_list("code", flat=True))
    Path(out).write_text(json.dumps({
        "host_username": host.user.username, "sessions": sessions,
        "other": {"url_id": other.url_id, "sessionid": session_key, "codes": codes}}))


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # a 302 is the answer measured, not a page to follow


_OPENER = urllib.request.build_opener(_NoRedirect)
CSRF = "benchcsrftoken0123456789abcdefgh"  # bench/run.py's: a valid 32-character CSRF secret


def _post(url: str, data: dict, cookie: str = "", address: str = "", accept: str = "") -> dict:
    """One form POST as a browser sends it (CSRF cookie and header), from `address` as nginx
    would forward it (deploy/serve trusts X-Forwarded-For from 127.0.0.1): start and end times,
    status, and the body's first 64 KB."""
    headers = {"Cookie": f"csrftoken={CSRF}" + (f"; {cookie}" if cookie else ""),
               "X-CSRFToken": CSRF, "Accept": accept or "text/html",
               "Content-Type": "application/x-www-form-urlencoded"}
    if address:
        headers["X-Forwarded-For"] = address
    request = urllib.request.Request(url, data=urllib.parse.urlencode(data).encode(),  # noqa: S310
                                     headers=headers, method="POST")
    started = time.perf_counter()
    try:
        with _OPENER.open(request, timeout=600) as response:
            status, body = response.status, response.read(65536)
    except urllib.error.HTTPError as error:
        status, body = error.code, error.read(65536)
    except OSError as error:
        status, body = None, str(error).encode()
    return {"start": started, "end": time.perf_counter(), "status": status,
            "body": body.decode("utf-8", "replace")}


class _Saver(threading.Thread):
    """The other session's judge, saving a verdict in a loop (the page's autosave POST), each
    save timed."""

    def __init__(self, base: str, other: dict):
        super().__init__(daemon=True)
        self.base, self.other = base, other
        self.stop = threading.Event()
        self.saves: list[dict] = []

    def run(self):
        n = 0
        while not self.stop.is_set():
            code = self.other["codes"][n % len(self.other["codes"])]
            done = _post(f"{self.base}/s/{self.other['url_id']}/i/{code}/",
                         {"verdict": ("pass", "fail")[n % 2], "phase": "1", "reason": "",
                          "seconds_spent": str(n + 1)},
                         cookie=f"sessionid={self.other['sessionid']}", accept="application/json")
            done["ok"] = done["status"] == 200 and '"saved": true' in done["body"]
            self.saves.append(done)
            n += 1
            time.sleep(0.05)  # a judge's autosave, not a flood: about 20 a second at most


def _latency(rows: list[dict]) -> dict:
    if not rows:
        return {"saves": 0}
    ms = sorted(1000 * (r["end"] - r["start"]) for r in rows)
    return {"saves": len(rows), "p50_ms": round(statistics.median(ms), 1),
            "p95_ms": round(ms[min(len(ms) - 1, int(0.95 * len(ms)))], 1), "max_ms": round(ms[-1], 1),
            "failed": sum(not r["ok"] for r in rows),
            "failures": sorted({f"{r['status']}: {r['body'][:120]}" for r in rows if not r["ok"]})[:5]}


def _beside_saves(base: str, other: dict, burst) -> dict:
    """Run `burst()` (a list of timed requests sent at once) while the other judge saves: the
    saves' latency idle (the 3 s before) and during the burst (saves overlapping it)."""
    saver = _Saver(base, other)
    saver.start()
    time.sleep(3)
    began = time.perf_counter()
    requests = burst()
    ended = max(r["end"] for r in requests)
    time.sleep(2)
    saver.stop.set()
    saver.join(timeout=120)
    idle = [r for r in saver.saves if r["end"] < began]
    during = [r for r in saver.saves if r["start"] < ended and r["end"] > began]
    return {"burst_s": round(ended - began, 2), "requests": requests,
            "saves_idle": _latency(idle), "saves_during": _latency(during)}


def _at_once(count: int, send) -> list[dict]:
    """`count` requests sent at once, each from its own thread (`send(k)`), released together."""
    barrier = threading.Barrier(count)
    results: list[dict | None] = [None] * count

    def one(k):
        barrier.wait()
        results[k] = send(k)

    threads = [threading.Thread(target=one, args=(k,), daemon=True) for k in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=900)
    return [r for r in results if r is not None]


SIGNIN_OUTCOMES = {  # words of each answer (accounts/throttle.py, allauth) -> what happened
    "under way at once": "refused: too many under way (BLINDJUDGE_SIGNIN_CONCURRENT)",
    "Too many failed sign-ins from your network": "refused: address limit",
    "Too many wrong passwords for this username": "refused: username-from-address limit",
    "waits a little between tries": "refused: username slowed",
    "are not correct": "checked: wrong password",
}


def _signin_outcome(row: dict) -> str:
    return next((what for words, what in SIGNIN_OUTCOMES.items() if words in row["body"]),
                f"other: {row['status']}")


def joins(args) -> dict:
    """Guest joins at 5,000 and 80,000 items, and wrong-password sign-ins, sent at once to
    `deploy/serve PORT 1` on the embedded default (SQLite), each beside another session's judge
    saving verdicts in a loop."""
    import subprocess  # noqa: PLC0415 - lazy: only this part starts processes

    from bench.run import Server, run_python  # noqa: PLC0415 - after sys.path

    work, env, out = _fresh_sqlite(args, "joins")
    fixture_path = work / "fixture.json"
    started = time.perf_counter()
    run_python(["bench/worst_case.py", "joins-seed", "--out", str(fixture_path), "--sizes",
                args.sizes], env, "joins-seed")
    out["seed_s"] = round(time.perf_counter() - started, 1)
    fixture = json.loads(fixture_path.read_text())
    out["sessions"] = {k: {f: v for f, v in row.items() if f != "guest_code"}
                       for k, row in fixture["sessions"].items()}
    base = f"http://127.0.0.1:{args.port}"
    server = Server([str(ROOT / "deploy" / "serve"), str(args.port), "1"], env,
                    work / "server.log", base)
    server.wait_ready("/bench/hello")
    out["uptime_before"] = subprocess.run(["uptime"], capture_output=True, text=True,  # noqa: S607
                                          check=False).stdout.strip()
    try:
        out["joins"] = {}
        for number, (items, row) in enumerate(fixture["sessions"].items()):
            def join(k, row=row, number=number):
                return _post(f"{base}/guest/", {"code": row["guest_code"], "name": f"Guest {k}"},
                             address=f"10.{20 + number}.{k // 250}.{k % 250 + 1}")

            measured = _beside_saves(base, fixture["other"],
                                     lambda row=row, join=join: _at_once(row["burst"], join))
            requests = measured.pop("requests")
            ms = sorted(1000 * (r["end"] - r["start"]) for r in requests)
            measured["joins"] = {
                "sent": len(requests), "admitted": sum(r["status"] == 302 for r in requests),
                "statuses": dict(sorted(_count(str(r["status"]) for r in requests).items())),
                "p50_ms": round(statistics.median(ms), 1), "max_ms": round(ms[-1], 1)}
            out["joins"][items] = measured
            print(f"{row['burst']} joins at {int(items):,} items: {measured['joins']}, the other "
                  f"session's saves idle {measured['saves_idle']}, during "
                  f"{measured['saves_during']}", file=sys.stderr, flush=True)
        out["signins"] = {}
        # From one address (one username, then a different one each), and, for contrast, from
        # 40 addresses: no per-address limit holds those back, so each hashes a password.
        for number, (variant, username, address) in enumerate((
                ("one address, one username", lambda k: fixture["host_username"], lambda k: 1),
                ("one address, 40 usernames", lambda k: f"nobody-{k}", lambda k: 1),
                ("40 addresses, one username", lambda k: fixture["host_username"],
                 lambda k: k + 1))):
            def sign_in(k, username=username, address=address, number=number):
                return _post(f"{base}/accounts/login/",
                             {"login": username(k), "password": f"wrong-{k}"},
                             address=f"10.40.{number}.{address(k)}")

            measured = _beside_saves(base, fixture["other"],
                                     lambda sign_in=sign_in: _at_once(SIGNIN_BURST, sign_in))
            requests = measured.pop("requests")
            ms = sorted(1000 * (r["end"] - r["start"]) for r in requests)
            measured["signins"] = {
                "sent": len(requests),
                "outcomes": dict(sorted(_count(_signin_outcome(r) for r in requests).items())),
                "p50_ms": round(statistics.median(ms), 1), "max_ms": round(ms[-1], 1)}
            out["signins"][variant] = measured
            print(f"{SIGNIN_BURST} wrong sign-ins ({variant}): {measured['signins']}, saves during "
                  f"{measured['saves_during']}", file=sys.stderr, flush=True)
    finally:
        out["uptime_after"] = subprocess.run(["uptime"], capture_output=True, text=True,  # noqa: S607
                                             check=False).stdout.strip()
        server.stop()
    log = (work / "server.log").read_text(errors="replace")
    out["server_log"] = {"database_is_locked": log.count("database is locked"),
                         "tracebacks": log.count("Traceback")}
    return out


def _count(values) -> dict:
    counts: dict = {}
    for value in values:
        counts[value] = counts.get(value, 0) + 1
    return counts


def main(argv=None):
    parser = argparse.ArgumentParser(prog="bench/worst_case.py")
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("render")
    r.add_argument("--repeat", type=int, default=1)
    r.add_argument("--label", default="render")
    s = sub.add_parser("serve")
    s.add_argument("--pg-url", default=os.environ.get(
        "BENCH_PG_URL", "postgres://postgres@127.0.0.1:5432/blindjudge_bench_worst"))
    s.add_argument("--redis-url", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"))
    s.add_argument("--port", type=int, default=8790)
    s.add_argument("--samples", type=int, default=5)
    s.add_argument("--workers", type=int, default=1, help="Uvicorn processes (deploy/serve PORT N)")
    s.add_argument("--work-dir", default=str(ROOT / "var" / "bench-worst-case"))
    s.add_argument("--label", default="serve")
    i = sub.add_parser("inputs")
    i.add_argument("--label", default="inputs")
    d = sub.add_parser("seed")
    d.add_argument("--out", required=True)
    d.add_argument("--judges", type=int, default=6)
    p = sub.add_parser("runs", help="the host's runs page beside a run at the bundle limit (SQLite)")
    p.add_argument("--port", type=int, default=8792)
    p.add_argument("--samples", type=int, default=5)
    p.add_argument("--work-dir", default=str(ROOT / "var" / "bench-worst-case"))
    p.add_argument("--label", default="runs")
    e = sub.add_parser("runs-seed")
    e.add_argument("--out", required=True)
    j = sub.add_parser("joins", help="guest joins at 5,000 and 80,000 items and wrong sign-ins, "
                                     "beside another session's saves (SQLite)")
    j.add_argument("--port", type=int, default=8793)
    j.add_argument("--work-dir", default=str(ROOT / "var" / "bench-worst-case"))
    j.add_argument("--label", default="joins")
    default_sizes = ",".join(f"{items}:{burst}" for items, burst in JOIN_SIZES.items())
    j.add_argument("--sizes", default=default_sizes,
                   help="items:joins sent at once, comma-separated (default: %(default)s)")
    k = sub.add_parser("joins-seed")
    k.add_argument("--out", required=True)
    k.add_argument("--sizes", default=default_sizes)
    args = parser.parse_args(argv)
    if args.command == "seed":
        seed(args.out, args.judges)
        return
    if args.command == "runs-seed":
        runs_seed(args.out)
        return
    if args.command == "joins-seed":
        joins_seed(args.out, _sizes(args.sizes))
        return
    started = datetime.datetime.now(datetime.UTC)
    result = {"bench": f"worst_case {args.command}", "started_at": f"{started:%Y-%m-%d %H:%M:%S UTC}",
              "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                          "load_before": os.getloadavg()}}
    result.update({"render": lambda: render(args.repeat), "inputs": inputs,
                   "serve": lambda: serve(args), "runs": lambda: runs_page(args),
                   "joins": lambda: joins(args)}[args.command]())
    result["machine"]["load_after"] = os.getloadavg()
    path = ROOT / "bench" / "results" / f"worst-case-{args.label}-{started:%Y%m%dT%H%M}.json"
    path.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")
    print(path, file=sys.stderr)


if __name__ == "__main__":
    main()
