"""The benchmark's data, made through the product's own services (never the ORM directly).

Run by bench/run.py in a subprocess whose environment names the database under test:
    python -m bench.fixture setup  --out FIXTURE.json [--items 1000] [--judges 64] [--per-judge 160]
    python -m bench.fixture prefill --fixture FIXTURE.json --phase 1 --judges J01,J02 [--lock]
    python -m bench.fixture reveal --fixture FIXTURE.json
    python -m bench.fixture pairs  --out PAIRS.json [--pairs 200] [--judges 32] [--per-judge 160]
    python -m bench.fixture reasons --fixture FIXTURE.json --out REASONS.json [--per-stratum 40]
        [--judges 32] [--per-judge 160]
Each prints one JSON object (timings, counts) on stdout.

Judges are bound to browser sessions the way the join page binds them (accounts.guards), but
written straight into the session store, so the load client needs no HTML parsing; the host's
browser session is made by Django's test client `force_login`.
"""

import argparse
import hashlib
import json
import os
import secrets
import sys
import time


def admit_judge(session, name: str):
    """Invite and admit one judge as the join page does, and bind a browser session to them the
    way `remember_judge` does (id and credential generation). Returns (judge, session key).
    Shared by every bench that needs judges' cookies (fixture, worst_case, live)."""
    from django.contrib.sessions.backends.db import SessionStore  # noqa: PLC0415 - after setup

    from accounts.guards import JUDGE_SESSION_KEY, judge_binding  # noqa: PLC0415 - after setup
    from judging.services import invitation_create, join_token_exchange  # noqa: PLC0415 - after setup

    invited = invitation_create(session=session, actor="bench", name=name)
    judge = join_token_exchange(token=invited.join_token).judge
    browser = SessionStore()
    browser[JUDGE_SESSION_KEY.format(url_id=session.url_id)] = judge_binding(judge)
    browser.create()
    return judge, browser.session_key

def judges_with_codes(session, count: int, name: str) -> list[dict]:
    """`count` judges admitted to `session` (named `name` and their number), each as the load
    client needs them: pseudonym, id, browser session key and their items' codes in order."""
    from judging.models import Assignment  # noqa: PLC0415 - after setup

    rows = []
    for number in range(1, count + 1):
        judge, session_key = admit_judge(session, f"{name} {number}")
        codes = list(Assignment.objects.filter(judge=judge).order_by("position")
                     .values_list("code", flat=True))
        rows.append({"pseudonym": judge.pseudonym, "pk": judge.pk, "sessionid": session_key,
                     "codes": codes})
    return rows


def _django():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")
    import django  # noqa: PLC0415 - lazy: Django loads only where the script needs the database

    django.setup()


def make_bundle(items: int, *, copy_bytes: int = 2048, reviewers: int = 3) -> dict:
    """A run of `items` copies of about `copy_bytes` each from four builders, each copy reviewed
    by every reviewer (so phase 2 shows `reviewers` rows). Content is code-like text, varied per
    copy so nothing compresses or caches into a special case."""
    truths = ["known_good", "seeded_defect", "tests_pass", "tests_fail", "unknown"]
    formats = ["text", "markdown", "diff"]
    builders = [{"id": f"b{i}", "model": f"builder-model-{i}", "family": f"Lab {i}"} for i in range(4)]
    copies = []
    for i in range(items):
        rng = hashlib.sha256(str(i).encode()).hexdigest()
        lines, size = [], 0
        n = 0
        while size < copy_bytes:
            line = f"def step_{i}_{n}(value):  # {rng[n % 48:(n % 48) + 16]}\n    return value * {n} + {i}\n"
            lines.append(line)
            size += len(line)
            n += 1
        content = "".join(lines)[:copy_bytes]
        fmt = formats[i % 3]
        if fmt == "markdown":
            content = "```python\n" + content[: copy_bytes - 20] + "\n```\n"
        elif fmt == "diff":
            content = "".join("+" + line + "\n" for line in content[: copy_bytes - 80].splitlines())
        copy = {"id": f"c{i:04d}", "builder": f"b{i % 4}", "format": fmt, "content": content,
                "truth": truths[i % 5]}
        if copy["truth"] == "seeded_defect":
            copy["defect"] = "off by one in step 3"
        copies.append(copy)
    reviewer_rows = [{"id": f"r{i}", "model": f"reviewer-model-{i}", "family": f"Review Lab {i}"}
                     for i in range(reviewers)]
    reviews = [{"reviewer": r["id"], "copy": c["id"], "verdict": ("pass", "fail")[(j + k) % 2],
                "reason": f"Step {k} of copy {j} looks {'right' if (j + k) % 2 == 0 else 'wrong'}: "
                          "the loop bound and the return value agree with the task statement. " * 2}
               for j, c in enumerate(copies) for k, r in enumerate(reviewer_rows)]
    return {
        "format": "blindjudge.run/1",
        "run": {"name": f"benchmark run, {items} copies", "task": "Implement the pipeline steps."},
        "builders": builders, "copies": copies, "reviewers": reviewer_rows, "reviews": reviews,
    }


def setup(items: int, judges: int, per_judge: int | None) -> dict:
    _django()
    from django.conf import settings  # noqa: PLC0415 - after setup
    from django.test import Client  # noqa: PLC0415 - after setup

    from judging.services import (  # noqa: PLC0415 - after setup
        host_create,
        run_import,
        session_create,
        session_open,
    )

    raw = json.dumps(make_bundle(items)).encode("utf-8")
    host = host_create(username=f"bench-{secrets.token_hex(4)}").host
    started = time.perf_counter()
    run = run_import(host=host, raw=raw, actor="bench")
    import_seconds = time.perf_counter() - started
    session = session_create(run=run, kind="copies", actor="bench", rubric="Does the copy do the task?",
                             items_per_judge=per_judge).session
    session = session_open(session=session, actor="bench")
    started = time.perf_counter()
    judge_rows = judges_with_codes(session, judges, "Bench judge")
    join_seconds = time.perf_counter() - started
    host_browser = Client()
    host_browser.force_login(host.user)
    return {
        "url_id": session.url_id, "session_id": session.pk, "run_id": run.pk,
        "items": items, "items_per_judge": per_judge or items, "bundle_bytes": len(raw),
        "import_seconds": import_seconds, "join_seconds": join_seconds,
        "host_sessionid": host_browser.cookies[settings.SESSION_COOKIE_NAME].value,
        "judges": judge_rows,
    }


def prefill(fixture: dict, phase: int, pseudonyms: list[str], lock: bool) -> dict:
    """Answer every item of the named judges in `phase` through item_save, the item page's save (and lock the
    phase through phase_lock when asked), each verdict its own transaction as when a judge saves
    it. (Batching a judge's verdicts in one transaction bloated PostgreSQL's judge table: 160
    versions of one row that no pruning could reclaim while it ran, which then slowed the
    progress page — an artefact, not what judges do.)"""
    _django()
    from accounts.models import Judge  # noqa: PLC0415 - after setup
    from judging.services import item_save, phase_lock  # noqa: PLC0415 - after setup

    started = time.perf_counter()
    saved = 0
    for row in fixture["judges"]:
        if row["pseudonym"] not in pseudonyms:
            continue
        judge = Judge.objects.select_related("session__run").get(pk=row["pk"])
        for index, code in enumerate(row["codes"]):
            value = ("pass", "fail", "keep")[index % 3] if phase == 2 else ("pass", "fail")[index % 2]
            item_save(judge=judge, code=code, phase=phase, value=value, seconds_spent=5)
            saved += 1
        if lock:
            phase_lock(judge=judge, phase=phase)
    return {"verdicts": saved, "seconds": time.perf_counter() - started}


def reveal(fixture: dict) -> dict:
    _django()
    from judging.models import Session, Verdict  # noqa: PLC0415 - after setup
    from judging.services import session_close, session_reveal  # noqa: PLC0415 - after setup

    session = Session.objects.get(pk=fixture["session_id"])
    session = session_close(session=session, actor="bench")
    session_reveal(session=session, actor="bench")
    return {"verdicts": Verdict.objects.filter(assignment__judge__session=session).count()}


def pairs(pair_count: int, judges: int, per_judge: int) -> dict:
    """A pairs session (issue 31) beside the copies one: a run/2 bundle of `pair_count` tasks,
    two builders' copies each (bench/judging_loop.py's), `judges` judges bound to browser
    sessions, each with their pairs' codes and the codes of the copies on either side (a pair's
    frames are fetched by the sides' codes)."""
    _django()
    from bench.judging_loop import pairs_bundle  # noqa: PLC0415 - after setup
    from judging.models import Assignment  # noqa: PLC0415 - after setup
    from judging.services import (  # noqa: PLC0415 - after setup
        host_create,
        run_import,
        session_create,
        session_open,
    )

    raw = json.dumps(pairs_bundle(pair_count)).encode("utf-8")
    host = host_create(username=f"bench-pairs-{secrets.token_hex(4)}").host
    run = run_import(host=host, raw=raw, actor="bench")
    session = session_open(session=session_create(
        run=run, kind="pairs", actor="bench", rubric="Which copy does the task better?",
        items_per_judge=per_judge).session, actor="bench")
    rows = []
    for number in range(1, judges + 1):
        judge, session_key = admit_judge(session, f"Bench pairs judge {number}")
        codes = list(Assignment.objects.filter(judge=judge).order_by("position")
                     .values_list("code", "first_code", "second_code"))
        rows.append({"pseudonym": judge.pseudonym, "pk": judge.pk, "sessionid": session_key,
                     "codes": [c[0] for c in codes],
                     "side_codes": [c[1] for c in codes] + [c[2] for c in codes]})
    return {"url_id": session.url_id, "session_id": session.pk, "pairs": pair_count,
            "judges": rows}


def reasons(run_id: int, per_stratum: int, judges: int, per_judge: int) -> dict:
    """A reasons session (issue 30) on the copies session's run: at most `per_stratum` of the
    run's reviews of each stratum, each an item whose page shows the review to audit beside its
    copy; `judges` judges bound to browser sessions, each with their items' codes."""
    _django()
    from judging.models import Run  # noqa: PLC0415 - after setup
    from judging.services import session_create, session_open  # noqa: PLC0415 - after setup

    session = session_open(session=session_create(
        run=Run.objects.get(pk=run_id), kind="reasons", actor="bench",
        rubric="Is every claim in the review's reason true of the copy?",
        reasons_per_stratum=per_stratum, items_per_judge=per_judge).session, actor="bench")
    return {"url_id": session.url_id, "session_id": session.pk, "items": session.items.count(),
            "judges": judges_with_codes(session, judges, "Bench reasons judge")}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.fixture")
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("setup")
    s.add_argument("--out", required=True)
    s.add_argument("--items", type=int, default=1000)
    s.add_argument("--judges", type=int, default=64)
    s.add_argument("--per-judge", type=int, default=160)
    p = sub.add_parser("prefill")
    p.add_argument("--fixture", required=True)
    p.add_argument("--phase", type=int, choices=(1, 2), required=True)
    p.add_argument("--judges", required=True, help="comma-separated pseudonyms")
    p.add_argument("--lock", action="store_true")
    q = sub.add_parser("pairs")
    q.add_argument("--out", required=True)
    q.add_argument("--pairs", type=int, default=200)
    q.add_argument("--judges", type=int, default=32)
    q.add_argument("--per-judge", type=int, default=160)
    o = sub.add_parser("reasons")
    o.add_argument("--fixture", required=True, help="the setup's FIXTURE.json: its run")
    o.add_argument("--out", required=True)
    o.add_argument("--per-stratum", type=int, default=40)
    o.add_argument("--judges", type=int, default=32)
    o.add_argument("--per-judge", type=int, default=160)
    r = sub.add_parser("reveal")
    r.add_argument("--fixture", required=True)
    args = parser.parse_args(argv)
    if args.command == "pairs":
        result = pairs(args.pairs, args.judges, args.per_judge)
        with open(args.out, "w") as out:
            json.dump(result, out)
        result = {"url_id": result["url_id"], "judges": len(result["judges"])}
    elif args.command == "reasons":
        with open(args.fixture) as source:
            run_id = json.load(source)["run_id"]
        result = reasons(run_id, args.per_stratum, args.judges, args.per_judge)
        with open(args.out, "w") as out:
            json.dump(result, out)
        result = {"url_id": result["url_id"], "items": result["items"],
                  "judges": len(result["judges"])}
    elif args.command == "setup":
        result = setup(args.items, args.judges, args.per_judge or None)
        with open(args.out, "w") as out:
            json.dump(result, out)
        result = {k: v for k, v in result.items() if k not in ("judges", "host_sessionid")}
    else:
        with open(args.fixture) as source:
            fixture = json.load(source)
        if args.command == "prefill":
            result = prefill(fixture, args.phase, args.judges.split(","), args.lock)
        else:
            result = reveal(fixture)
    result["analyze_seconds"] = _analyze()
    json.dump(result, sys.stdout)
    print()


def _analyze() -> float:
    """On PostgreSQL, the tables' statistics brought up to date, as autovacuum does within its
    naptime (a minute) of a bulk write such as this command's. The benchmark measures seconds
    after the write: without this, the planner still thinks the new tables are nearly empty and
    nests loops over them (a save measured 6 ms in the database instead of 0.25)."""
    from django.db import connection  # noqa: PLC0415 - after setup

    if connection.vendor != "postgresql":
        return 0.0
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
