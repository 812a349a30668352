"""Benchmark: importing evaluation output as hosts have it (issue 27), through the converter child.

    .venv/bin/python bench/import_sources.py                 # both cases, SQLite under var/bench/
    .venv/bin/python bench/import_sources.py --case swebench --swebench-mb 50
    .venv/bin/python bench/import_sources.py --case inspect --logs 20 --samples 136

- swebench: one predictions file of about 50 MB (4 models, each instance's patch ~5 KB, made from
  the real excerpt's patches in tests/data/swebench with the instance ids renumbered), the
  dataset's statements for those instances and one harness run report per model.
- inspect: 20 current inspect-ai logs (zip members Zstandard, method 93, as inspect-ai 0.3.x
  writes them), one model each, 136 samples each, every sample the real sample of
  tests/data/inspect/current/arithmetic_alpha.eval (with its events) under a new id and output.

Each is converted the way the product converts (`judging.importing.convert`: a child process of
limited memory and time) and then written by `run_import`. Timed: the conversion as the serving
process waits for it (wall), the child's own seconds and peak resident memory, the bundle's size,
and `run_import`. The default bundle limit (BLINDJUDGE_MAX_BUNDLE_BYTES, 50 MiB) refuses a bundle
made from 50 MB of patches plus their statements, so the SWE-bench case is run twice: at the
default limit (the refusal, and what it cost) and with the limit raised to 128 MiB.
Results: bench/results/import-sources-<case>-<utc time>.json.
"""

import argparse
import io
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
DATA = ROOT / "tests" / "data"


def _setup_django(max_bundle_bytes: int | None):
    import django  # noqa: PLC0415 - lazy: Django loads only once the limits are in the environment

    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "blindjudge.settings")
    if max_bundle_bytes:
        os.environ["BLINDJUDGE_MAX_BUNDLE_BYTES"] = str(max_bundle_bytes)
    if not os.environ.get("DATABASE_URL"):
        os.environ.setdefault("BLINDJUDGE_DATA_DIR", str(ROOT / "var" / "bench"))
    django.setup()
    from django.core.management import call_command  # noqa: PLC0415 - after setup

    call_command("migrate", verbosity=0)


def swebench_files(megabytes: int, models: int = 4) -> dict:
    """Predictions (one mixed JSONL file), dataset and reports, as bytes, of about `megabytes` MB
    of predictions."""
    real = [json.loads(line) for line in (DATA / "swebench" / "qwen-mini.preds.jsonl").read_text()
            .splitlines() if line.strip()]
    statements = [json.loads(line) for line in (DATA / "swebench" / "dataset.jsonl").read_text()
                  .splitlines() if line.strip()]
    patch_bytes = sum(len(r["model_patch"]) for r in real) / len(real)
    instances = int(megabytes * 1_000_000 / (patch_bytes * 1.05) / models)
    predictions, dataset = io.StringIO(), io.StringIO()
    reports = {}
    for m in range(models):
        model = f"bench-model-{m}"
        resolved, unresolved = [], []
        for i in range(instances):
            iid = f"bench__repo-{i:05d}"
            row = real[(i + m) % len(real)]
            predictions.write(json.dumps({"instance_id": iid, "model_name_or_path": model,
                                          "model_patch": row["model_patch"]}) + "\n")
            (resolved if (i * 7 + m) % 3 == 0 else unresolved).append(iid)
        reports[f"{model}.bench.json"] = json.dumps({
            "schema_version": 2, "resolved_ids": resolved, "unresolved_ids": unresolved,
            "error_ids": [], "empty_patch_ids": [],
            "submitted_ids": resolved + unresolved}).encode()
    for i in range(instances):
        source = statements[i % len(statements)]
        dataset.write(json.dumps({"instance_id": f"bench__repo-{i:05d}", "repo": "bench/repo",
                                  "problem_statement": source["problem_statement"]}) + "\n")
    return {"predictions": predictions.getvalue().encode(), "dataset": dataset.getvalue().encode(),
            "reports": reports, "instances": instances, "models": models}


def inspect_logs(logs: int, samples: int) -> list[tuple[str, bytes]]:
    from backports.zstd import zipfile  # noqa: PLC0415 - lazy: only this case writes Zstandard

    with zipfile.ZipFile(DATA / "inspect" / "current" / "arithmetic_alpha.eval") as real:
        members = {info.filename: real.read(info) for info in real.infolist()}
    header = json.loads(members["header.json"])
    template_name = sorted(m for m in members if m.startswith("samples/"))[0]
    template = json.loads(members[template_name])
    out = []
    for n in range(logs):
        model = f"mockllm/bench-{n:02d}"
        head = {**header, "eval": {**header["eval"], "model": model}}
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_ZSTANDARD) as zf:
            zf.writestr("header.json", json.dumps(head))
            for s in range(1, samples + 1):
                sample = json.loads(json.dumps(template))
                sample["id"], sample["epoch"] = s, 1
                sample["output"]["model"] = model
                choice = sample["output"]["choices"][0]["message"]
                choice["content"] = f"The answer to question {s} by {model} is {s * 7 % 13}."
                sample["output"]["completion"] = choice["content"]
                zf.writestr(f"samples/{s}_epoch_1.json", json.dumps(sample))
        out.append((f"bench-{n:02d}.eval", buffer.getvalue()))
    return out


def measure(request) -> dict:
    from blindjudge.errors import Invalid  # noqa: PLC0415 - after setup
    from content.importers.common import ConversionError  # noqa: PLC0415 - after setup
    from content.importers.conversion import bundle_bytes  # noqa: PLC0415 - after setup
    from judging.importing import convert  # noqa: PLC0415 - after setup
    from judging.selectors.commands import host_named  # noqa: PLC0415 - after setup
    from judging.services import run_import  # noqa: PLC0415 - after setup

    started = time.perf_counter()
    try:
        converted = convert(request)
    except ConversionError as error:
        return {"converted": False, "refusal": error.lines()[:3],
                "wait_s": round(time.perf_counter() - started, 3)}
    wait = time.perf_counter() - started
    result = {"converted": True, "wait_s": round(wait, 3), "child_s": converted.seconds,
              "child_peak_rss_mb": converted.peak_rss_mb, "bundle_mb": round(len(converted.raw) / 1e6, 1),
              "summary_tasks": converted.summary.get("tasks")}
    started = time.perf_counter()
    try:
        run = run_import(host=host_named("bench"), raw=bundle_bytes(converted), actor="bench",
                         places=converted.places)
        result.update(imported=True, run=run.pk, copies=run.copies.count())
    except Invalid as error:
        result.update(imported=False, refusal=str(error).splitlines()[:3])
    result["run_import_s"] = round(time.perf_counter() - started, 3)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", choices=("swebench", "inspect", "both"), default="both")
    parser.add_argument("--swebench-mb", type=int, default=50)
    parser.add_argument("--logs", type=int, default=20)
    parser.add_argument("--samples", type=int, default=136)
    parser.add_argument("--max-bundle-mb", type=int, default=0,
                        help="BLINDJUDGE_MAX_BUNDLE_BYTES for this run, in MiB (0: the default)")
    args = parser.parse_args()
    _setup_django(args.max_bundle_mb * 1024 * 1024 if args.max_bundle_mb else None)
    from django.conf import settings  # noqa: PLC0415 - after setup

    from accounts.models import Host  # noqa: PLC0415 - after setup
    from content.importers.common import Source  # noqa: PLC0415 - after setup
    from content.importers.conversion import ImportRequest  # noqa: PLC0415 - after setup
    from judging.services import host_create  # noqa: PLC0415 - after setup

    if not Host.objects.filter(user__username="bench").exists():
        host_create(username="bench")
    record = {"when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "machine": platform.node(), "load_avg": os.getloadavg(),
              "database": settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1],
              "max_bundle_bytes": settings.BLINDJUDGE_MAX_BUNDLE_BYTES,
              "import_memory_mb": settings.BLINDJUDGE_IMPORT_MEMORY_MB, "cases": {}}
    if args.case in ("swebench", "both"):
        files = swebench_files(args.swebench_mb)
        request = ImportRequest(
            format="swebench", predictions=[Source("bench.preds.jsonl", files["predictions"])],
            reports=[Source(name, data) for name, data in files["reports"].items()],
            dataset=Source("bench.dataset.jsonl", files["dataset"]),
            families=[f"bench-model-{m}=Bench Lab" for m in range(files["models"])])
        record["cases"]["swebench"] = {
            "predictions_mb": round(len(files["predictions"]) / 1e6, 1),
            "instances": files["instances"], "models": files["models"], **measure(request)}
    if args.case in ("inspect", "both"):
        logs = inspect_logs(args.logs, args.samples)
        request = ImportRequest(format="inspect", logs=[Source(n, d) for n, d in logs],
                                truth_scorer="match",
                                families=[f"mockllm/bench-{n:02d}=Bench Lab" for n in range(args.logs)])
        record["cases"]["inspect"] = {
            "logs": args.logs, "samples_per_log": args.samples,
            "logs_mb": round(sum(len(d) for _, d in logs) / 1e6, 2), **measure(request)}
    print(json.dumps(record, indent=2))
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M", time.gmtime())
    (RESULTS / f"import-sources-{args.case}-{stamp}.json").write_text(json.dumps(record, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
