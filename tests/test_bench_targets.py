"""The benchmark's table against the baseline (bench/run.py, issue 32 item 1): each judge request's
requests a second as a share of hello-world's in the same run, and of the guard's floor
(`admitted`: what every judge request does before its own work), at the highest concurrency."""

import json
from pathlib import Path

import pytest

from bench import run

RESULTS = Path(run.__file__).resolve().parent / "results"

pytestmark = pytest.mark.pure


def cell(kind, concurrency, rps, p99=10.0, errors=0):
    return {"kind": kind, "concurrency": concurrency, "rps": rps, "p99_ms": p99, "errors": errors,
            "p50_ms": 1.0, "p95_ms": 2.0, "server_cpu_ms_per_request": 1.0, "load": [0.5]}


def test_each_judge_request_is_measured_against_hello_and_against_the_guards_floor():
    cells = [cell("hello", 1, 500.0), cell("admitted", 1, 400.0), cell("item", 1, 300.0),
             cell("hello", 32, 1000.0), cell("statement", 32, 700.0), cell("admitted", 32, 500.0),
             cell("item", 32, 300.0, p99=25.0), cell("frame", 32, 450.0, errors=1)]
    rows = {row["kind"]: row for row in run.verdicts_against_targets({"cells": cells})}
    assert list(rows) == ["statement", "admitted", "item", "frame"]  # the top concurrency's only
    assert (rows["item"]["rps_vs_baseline"], rows["item"]["rps_vs_admitted"]) == (0.3, 0.6)
    assert (rows["frame"]["rps_vs_baseline"], rows["frame"]["rps_vs_admitted"]) == (0.45, 0.9)
    assert rows["statement"]["rps_vs_admitted"] == 1.4 and rows["admitted"]["floor"]
    # The target is still hello's: 60 % of its requests a second, p99 within twice, no error.
    assert not rows["item"]["meets"] and rows["item"]["p99_vs_baseline"] == 2.5
    assert not rows["frame"]["meets"]  # an error
    passing = run.verdicts_against_targets({"cells": [cell("hello", 8, 100.0), cell("item", 8, 60.0)]})
    assert passing[0]["meets"] and passing[0]["rps_vs_admitted"] is None  # a run without floors


def test_the_markdown_table_has_the_floors_share_and_a_dash_where_a_run_had_no_floor():
    """Rebuilt from two recorded runs: one with the floors (their rows computed again, as `--show`
    does not), one from before them."""
    with_floors = json.loads((RESULTS / "20261206T1143-reasons-prepared.json").read_text())
    for db in with_floors["databases"]:
        db["targets"] = run.verdicts_against_targets(db)
    lines = run.markdown(with_floors).splitlines()
    header = next(line for line in lines if line.startswith("| against the baseline"))
    assert header.endswith("| req/s of the guard's floor |")
    db = with_floors["databases"][0]
    item = next(row for row in db["targets"] if row["kind"] == "item")
    assert 0 < item["rps_vs_baseline"] < item["rps_vs_admitted"]
    assert f"| item | {item['rps_vs_baseline']} | {item['p99_vs_baseline']} | 0 | NO | " \
           f"{item['rps_vs_admitted']} |" in lines
    assert any(line.startswith("| admitted |") and line.endswith("| (a floor) | 1.0 |")
               for line in lines)
    before = json.loads((RESULTS / "20261205T2317-one-call-csrf.json").read_text())
    lines = run.markdown(before).splitlines()
    assert any(line.startswith("| item |") and line.endswith("| NO | – |") for line in lines)
