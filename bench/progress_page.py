"""The host's progress page ("Judges & progress") timed in one process through Django's test
client (the whole middleware stack, no server), for comparing two versions of its code.

    export DJANGO_SETTINGS_MODULE=bench.settings BLINDJUDGE_DATA_DIR=DIR
    .venv/bin/python manage.py migrate && .venv/bin/python manage.py collectstatic --no-input
    .venv/bin/python -m bench.fixture setup --out FIXTURE.json --items 1000 --judges 64
    .venv/bin/python -m bench.progress_page FIXTURE.json [--repeat 200]
    .venv/bin/python -m bench.progress_page FIXTURE.json --fill 102400   # verdicts first, in bulk

Run it from two checkouts against the same data directory, alternately, to compare them; it
prints one JSON line: verdicts in the session, rows drawn, p50, p90 and the fastest request of
the page, and the same of the live dashboard's snapshot (what the host's socket sends when it
connects or refreshes: host.consumers.HostLiveConsumer._snapshot), in milliseconds.

`--fill N` first tops the session up to N verdicts the way item_save leaves them (a verdict and
its draft row per item and phase, the judge's answered counts and last-activity stamp, phase 1
locked before phase 2), inserted in bulk: phase 1 of every judge's items in their order, one
position at a time across the judges, then phase 2. 100,000 saves through item_save would take
the better part of an hour; the page reads the same rows either way. Give the fixture items
enough for N (64 judges x 800 items per judge x 2 phases = 102,400).
"""

import argparse
import json
import os
import statistics
import time
from types import SimpleNamespace

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")
import django  # noqa: E402

django.setup()

from django.test import Client  # noqa: E402

from accounts.models import Host  # noqa: E402


def fill(session_id: int, target: int) -> int:
    """Top the session up to `target` verdicts in bulk (module docstring); returns the count."""
    from django.db import transaction  # noqa: PLC0415 - after setup
    from django.db.models import Count, Max, Q  # noqa: PLC0415 - after setup
    from django.utils import timezone  # noqa: PLC0415 - after setup

    from accounts.models import Judge  # noqa: PLC0415 - after setup
    from judging.models import Assignment, ItemDraft, Verdict  # noqa: PLC0415 - after setup

    assignments = list(Assignment.objects.filter(judge__session_id=session_id)
                       .values_list("pk", "judge_id", "position"))
    wanted = sorted(((phase, position, judge, pk) for pk, judge, position in assignments
                     for phase in (1, 2)))[:target]
    have = set(Verdict.objects.filter(assignment__judge__session_id=session_id)
               .values_list("assignment_id", "phase"))
    new = [(pk, phase) for phase, _, _, pk in wanted if (pk, phase) not in have]
    with transaction.atomic():
        Verdict.objects.bulk_create(
            [Verdict(assignment_id=pk, phase=phase, value=("pass", "fail")[pk % 2], seconds_spent=5,
                     answered_at=timezone.now()) for pk, phase in new], batch_size=5000)
        ItemDraft.objects.bulk_create([ItemDraft(assignment_id=pk, phase=phase, revision=1)
                                       for pk, phase in new], batch_size=5000, ignore_conflicts=True)
        judges = Judge.objects.filter(session_id=session_id)
        counts = judges.annotate(
            one=Count("assignments__verdicts", filter=Q(assignments__verdicts__phase=1)),
            two=Count("assignments__verdicts", filter=Q(assignments__verdicts__phase=2)),
            latest=Max("assignments__verdicts__updated_at"))
        stamped = any(f.name == "last_acted_at" for f in Judge._meta.concrete_fields)
        for judge in counts:
            fields = {"phase1_answered": judge.one, "phase2_answered": judge.two}
            if judge.two and not judge.phase1_locked_at:  # phase 2 opens at the phase-1 lock
                Verdict.objects.filter(assignment__judge=judge, phase=1, locked=False).update(locked=True)
                fields["phase1_locked_at"] = timezone.now()
            if stamped and judge.latest:
                fields["last_acted_at"] = judge.latest
            Judge.objects.filter(pk=judge.pk).update(**fields)
    return Verdict.objects.filter(assignment__judge__session_id=session_id).count()


def timed(call, repeat: int) -> dict:
    """Wall time p50, p90 and fastest, and the process's CPU time p50 (user + system: less
    moved by other work on a shared machine than the wall time), in milliseconds."""
    times, cpu = [], []
    for _ in range(repeat):
        started, cpu_started = time.perf_counter(), time.process_time()
        call()
        times.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - cpu_started) * 1000)
    times.sort()
    return {"p50_ms": round(statistics.median(times), 2),
            "p90_ms": round(times[int(0.9 * len(times))], 2), "min_ms": round(times[0], 2),
            "cpu_p50_ms": round(statistics.median(cpu), 2)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("fixture")
    parser.add_argument("--repeat", type=int, default=200)
    parser.add_argument("--fill", type=int, default=None, metavar="N",
                        help="first top the session up to N verdicts, in bulk")
    args = parser.parse_args()
    fixture = json.load(open(args.fixture))
    from judging.models import Verdict  # noqa: PLC0415 - after setup

    if args.fill is not None:
        fill(fixture["session_id"], args.fill)
    verdicts = Verdict.objects.filter(assignment__judge__session_id=fixture["session_id"]).count()
    client = Client(SERVER_NAME="127.0.0.1")
    client.force_login(Host.objects.get(runs__pk=fixture["run_id"]).user)
    url = f"/host/sessions/{fixture['session_id']}/judges"
    page = client.get(url)
    assert page.status_code == 200, page.status_code
    page_times = timed(lambda: client.get(url), args.repeat)
    # The live dashboard's snapshot, built by the socket's own method (outside its event loop).
    from host.consumers import HostLiveConsumer  # noqa: PLC0415 - after setup

    consumer = SimpleNamespace(session_id=fixture["session_id"])
    snapshot_times = timed(lambda: HostLiveConsumer._snapshot(consumer), args.repeat)
    print(json.dumps({"verdicts": verdicts, "rows": page.content.count(b"<tr data-judge="),
                      **page_times, "snapshot": snapshot_times,
                      "load": [round(x, 2) for x in os.getloadavg()]}))


if __name__ == "__main__":
    main()
