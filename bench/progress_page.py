"""The host's progress page ("Judges & progress") timed in one process through Django's test
client (the whole middleware stack, no server), for comparing two versions of its code.

    export DJANGO_SETTINGS_MODULE=bench.settings BLINDJUDGE_DATA_DIR=DIR
    .venv/bin/python manage.py migrate && .venv/bin/python manage.py collectstatic --no-input
    .venv/bin/python -m bench.fixture setup --out FIXTURE.json --items 1000 --judges 64
    .venv/bin/python -m bench.progress_page FIXTURE.json [--repeat 200]

Run it from two checkouts against the same data directory, alternately, to compare them; it
prints one JSON line: rows drawn, p50, p90 and the fastest request, in milliseconds.
"""

import argparse
import json
import os
import statistics
import time

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings")
import django  # noqa: E402

django.setup()

from django.test import Client  # noqa: E402

from accounts.models import Host  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("fixture")
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    fixture = json.load(open(args.fixture))
    client = Client(SERVER_NAME="127.0.0.1")
    client.force_login(Host.objects.get(runs__pk=fixture["run_id"]).user)
    url = f"/host/sessions/{fixture['session_id']}/judges"
    page = client.get(url)
    assert page.status_code == 200, page.status_code
    times = []
    for _ in range(args.repeat):
        started = time.perf_counter()
        client.get(url)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    print(json.dumps({"rows": page.content.count(b"<tr data-judge="),
                      "p50_ms": round(statistics.median(times), 2),
                      "p90_ms": round(times[int(0.9 * len(times))], 2), "min_ms": round(times[0], 2)}))


if __name__ == "__main__":
    main()
