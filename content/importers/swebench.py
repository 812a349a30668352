"""SWE-bench predictions, the harness's run reports and the dataset's task statements as a
`blindjudge.run/2` bundle. Pure: no Django.

Inputs, as the SWE-bench harness and its users have them:
- predictions: JSONL rows `{"instance_id", "model_name_or_path", "model_patch"}` (one file per
  model or mixed); a file that is one JSON value is read too, as SWE-bench's older layouts are: a
  list of rows (`[<prediction>, …]`) or a dict keyed by instance id (`preds.json`).
- reports: the harness's run report, one per model (`swebench/harness/reporting.py`
  `make_run_report`: `resolved_ids`, `unresolved_ids`, `error_ids`, `empty_patch_ids`,
  `completed_ids`, `incomplete_ids`, `submitted_ids`, counts and `schema_version`). The report
  does not name its model; the harness names the file `<model with "/" as "__">.<run_id>.json`.
- dataset: JSONL rows (or a JSON list) with `instance_id`, `problem_statement`, `repo`, as the
  SWE-bench datasets are exported. Required: every task needs its statement and predictions do
  not carry it (the real world has no other source; a prediction file never holds the issue).

Matching a report to its model: a report belongs to a model when its file name (the last path
part) starts with the model's name as the harness writes it (`/` replaced by `__`) followed by a
dot. When several models match (`a` and `a.b` both prefix `a.b.run.json`) the report's
`submitted_ids` decides if exactly one of them has predictions for exactly those ids; otherwise the
report is refused as ambiguous. A lone report beside a lone model is that model's whatever its
name (hosts rename files). Two reports for one model, a report matching no model, and a model
without a report are refused.

Truth per copy: `tests_pass` if the instance is in `resolved_ids`, `tests_fail` in
`unresolved_ids`, `unknown` in `error_ids` or `empty_patch_ids` (the harness ran nothing useful)
and `unknown` when the report does not mention the instance at all (counted in summary
`not_in_report`, so a stale report shows). A prediction whose patch is empty is `unknown` whatever
the report says.

Sampling (`instances=N, seed=S`): the candidates are the instances every model attempted (has a
prediction for); each is keyed by HMAC-SHA256(key=seed, msg=instance_id) and the N smallest keys
are taken, so the sample depends only on the seed and the ids (never on file order or Python's
random state) and growing N only adds instances. Instances some model did not attempt are
skipped and counted in summary `skipped["not attempted by every model"]`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections import Counter

from content.bundle import FORMAT_2
from content.importers.common import (
    ConversionError,
    Families,
    Imported,
    Problems,
    Source,
    place,
    version_refusal,
)

# The bundle downstream is capped at BLINDJUDGE_MAX_BUNDLE_BYTES (50 MiB by default); inputs larger
# than this cannot make a bundle that fits, so they are refused before any parsing.
MAX_INPUT_BYTES = 64 * 1024 * 1024
MAX_TOTAL_BYTES = 256 * 1024 * 1024

# The run report's schema_version this importer was written and tested for (the harness's
# make_run_report writes 2; tests/data/swebench holds two such reports). A report without the
# field, with the same keys, is read.
REPORT_SCHEMA_VERSIONS = (2,)

REPORT_TRUTH = (
    ("resolved_ids", "tests_pass"),
    ("unresolved_ids", "tests_fail"),
    ("error_ids", "unknown"),
    ("empty_patch_ids", "unknown"),
)
NOT_ATTEMPTED = "not attempted by every model"


def convert(*, predictions: list[Source], reports: list[Source], dataset: Source | None,
            instances: int | None = None, seed: str = "0", families: Families,
            run_name: str = "") -> Imported:
    try:
        return _convert(predictions, reports, dataset, instances, seed, families, run_name)
    except ConversionError:
        raise
    except Exception as error:  # noqa: BLE001 - the contract: nothing but ConversionError leaves
        raise ConversionError([f"swebench: could not convert the input ({type(error).__name__})"])\
            from error


def _convert(predictions, reports, dataset, instances, seed, families, run_name) -> Imported:
    problems = Problems()
    if not predictions:
        problems.add("predictions", "no predictions file given")
    if not reports:
        problems.add("reports", "no run report given (the harness's <model>.<run_id>.json)")
    if dataset is None:
        problems.add("dataset", "no dataset file given: every task needs its problem_statement, "
                     "which predictions do not carry; pass the SWE-bench dataset JSONL")
    if instances is not None and (not isinstance(instances, int) or isinstance(instances, bool)
                                  or instances < 1):
        problems.add("--instances", f"must be a positive whole number, not {instances!r}")
    if not isinstance(seed, str):
        problems.add("--seed", "must be text")
    total = sum(len(s.data) for s in [*predictions, *reports, *([dataset] if dataset else [])]
                if isinstance(s, Source) and isinstance(s.data, bytes | bytearray))
    if total > MAX_TOTAL_BYTES:
        problems.add("input", f"{total:,} bytes in all; at most {MAX_TOTAL_BYTES:,} are read")
    problems.raise_if_any()

    # --- predictions: (model, instance) -> (patch, where) ------------------------------------
    preds: dict[str, dict[str, tuple[str, str]]] = {}
    duplicates_dropped = 0
    for source in predictions:
        for where, row in _rows(source, problems, keyed_field="instance_id"):
            iid = _text(row, "instance_id", where, problems)
            model = _text(row, "model_name_or_path", where, problems)
            patch = row.get("model_patch")
            if patch is None:
                patch = ""  # the harness itself treats a null patch as empty (reporting.py)
            elif not isinstance(patch, str):
                problems.add(f"{where}: model_patch", f"must be text, not {_kind(patch)}")
                continue
            if iid is None or model is None:
                continue
            seen = preds.setdefault(model, {}).get(iid)
            if seen is not None:
                if seen[0] != patch:
                    problems.add(f"{where}: model_patch", f"a second, different prediction for "
                                 f"{model} / {iid} (the first is at {seen[1]})")
                duplicates_dropped += 1
                continue  # the same patch twice (a re-run merged in) is harmless
            preds[model][iid] = (patch, where)

    # --- dataset ------------------------------------------------------------------------------
    statements: dict[str, tuple[str, str, str]] = {}  # id -> (statement, repo, where)
    for where, row in _rows(dataset, problems, keyed_field="instance_id"):
        iid = _text(row, "instance_id", where, problems)
        statement = _text(row, "problem_statement", where, problems)
        repo = row.get("repo", "")
        if not isinstance(repo, str):
            problems.add(f"{where}: repo", f"must be text, not {_kind(repo)}")
            repo = ""
        if iid is None or statement is None:
            continue
        if iid in statements:
            problems.add(f"{where}: instance_id", f'"{iid}" appears twice in the dataset')
            continue
        statements[iid] = (statement, repo, where)

    # --- reports ------------------------------------------------------------------------------
    parsed_reports = []
    for source in reports:
        report = _report(source, problems)
        if report is not None:
            parsed_reports.append((source, report))
    report_of = _match_reports(parsed_reports, preds, problems)

    # A report refused for what it holds is said once, by its file: that model's missing report
    # is the same problem, not another.
    every_report_read = len(parsed_reports) == len(reports)
    for model in sorted(preds):
        if model not in report_of and parsed_reports and every_report_read:
            problems.add("reports", f'no run report for model "{model}" (expected a file named '
                         f'{_file_stem(model)}.<run_id>.json)')
    truth_of: dict[str, dict[str, str]] = {}
    for model, (source, report) in report_of.items():
        truth_of[model] = {}
        for key, truth in REPORT_TRUTH:
            for iid in report.get(key, []):
                if iid not in preds[model]:
                    problems.add(f"{place(source)}: {key}", f'names "{iid}", which has no '
                                 f"prediction from {model}")
                    continue
                if iid in truth_of[model] and truth_of[model][iid] != truth:
                    problems.add(f"{place(source)}: {key}", f'"{iid}" is also in another '
                                 "outcome list of this report")
                    continue
                truth_of[model][iid] = truth

    for model in sorted(preds):
        for iid, (_, where) in sorted(preds[model].items()):
            if iid not in statements and dataset is not None:
                problems.add(f"{where}: instance_id", f'"{iid}" has no problem_statement in '
                             f"{dataset.name}")

    family_of = {model: families.of(model) for model in sorted(preds)}
    families.check(problems)
    problems.raise_if_any()

    # --- instances: the ones every model attempted, sampled reproducibly -------------------
    every = set.intersection(*(set(p) for p in preds.values())) if preds else set()
    attempted_by_some = set().union(*(set(p) for p in preds.values())) if preds else set()
    skipped = Counter()
    if attempted_by_some - every:
        skipped[NOT_ATTEMPTED] = len(attempted_by_some - every)
    chosen = sorted(every)
    if instances is not None and instances < len(chosen):
        chosen = sorted(sorted(chosen, key=lambda iid: _sample_key(seed, iid))[:instances])
        skipped["not sampled"] = len(every) - instances
    if not chosen:
        raise ConversionError(["predictions: no instance was attempted by every model "
                               f"({len(preds)} models); nothing to import"])

    # --- the bundle ---------------------------------------------------------------------------
    models = sorted(preds)
    builder_id = {model: f"b{n}" for n, model in enumerate(models, 1)}
    tasks = []
    places = {}
    for iid in chosen:
        statement, repo, where = statements[iid]
        places[f"tasks[{len(tasks)}].statement"] = f"{where}: problem_statement"
        places[f"tasks[{len(tasks)}].id"] = places[f"tasks[{len(tasks)}].title"] = \
            f"{where}: instance_id"
        task = {"id": iid, "title": iid, "statement": statement,
                # SWE-bench statements are GitHub issue bodies: markdown with raw HTML comments,
                # `\r\n`, pasted tracebacks and templates. Rendered as markdown they lose
                # characters (`<!-- -->` blocks vanish, `__init__` turns bold) and judges would
                # read something other than what the builders were given, so they are shown as
                # preformatted text, exactly as given.
                "format": "text"}
        if repo:
            task["cluster"] = repo
        tasks.append(task)
    copies = []
    by_truth = Counter()
    not_in_report = Counter()
    builders_summary = {}
    for model in models:
        n = 0
        for iid in chosen:
            patch, where = preds[model][iid]
            places[f"copies[{len(copies)}]"] = where
            places[f"copies[{len(copies)}].content"] = f"{where}: model_patch"
            truth = truth_of.get(model, {}).get(iid)
            if truth is None:
                truth = "unknown"
                not_in_report[model] += 1
            if patch.strip() == "":
                truth = "unknown"  # nothing to test, whatever the report says
            copies.append({"id": f"{builder_id[model]}-{iid}", "task": iid,
                           "builder": builder_id[model], "format": "diff", "content": patch,
                           "truth": truth})
            by_truth[truth] += 1
            n += 1
        builders_summary[model] = n
    bundle = {
        "format": FORMAT_2,
        "run": {"name": run_name or f"SWE-bench: {len(tasks)} instances x {len(models)} models"},
        "tasks": tasks,
        "builders": [{"id": builder_id[m], "model": m, "family": family_of[m]} for m in models],
        "copies": copies,
    }
    summary = {
        "tasks": len(tasks),
        "builders": builders_summary,
        "copies_by_truth": dict(sorted(by_truth.items())),
        "reviews": {},
        "skipped": dict(skipped),
        "not_in_report": dict(not_in_report),
        "duplicates_dropped": duplicates_dropped,
        "reports": {m: place(s) for m, (s, _) in sorted(report_of.items())},
        "sample": {"instances": instances, "seed": seed, "of": len(every)}
        if instances is not None else None,
    }
    return Imported(bundle=bundle, summary=summary, places=places)


def _sample_key(seed: str, instance_id: str) -> str:
    return hmac.new(seed.encode("utf-8", "surrogatepass"), instance_id.encode("utf-8",
                    "surrogatepass"), hashlib.sha256).hexdigest()


def _file_stem(model: str) -> str:
    return model.replace("/", "__")


def _match_reports(parsed, preds, problems) -> dict:
    if len(parsed) == 1 and len(preds) == 1:
        return {next(iter(preds)): parsed[0]}
    out: dict[str, tuple] = {}
    for source, report in parsed:
        basename = source.name.replace("\\", "/").rsplit("/", 1)[-1]
        candidates = [m for m in preds if basename.startswith(_file_stem(m) + ".")]
        if len(candidates) > 1:
            submitted = report.get("submitted_ids")
            if isinstance(submitted, list):
                candidates = [m for m in candidates if set(preds[m]) == set(submitted)]
        if not candidates and not preds:
            problems.add(place(source), "no valid predictions to match this report to")
            continue
        if not candidates:
            names = ", ".join(f"{_file_stem(m)}.<run_id>.json" for m in sorted(preds))
            problems.add(place(source), f"matches no model's predictions: a report is named "
                         f"<model>.<run_id>.json, here one of {names}")
            continue
        if len(candidates) > 1:
            problems.add(place(source), "ambiguous: its name fits models "
                         f"{', '.join(sorted(candidates))} and its submitted_ids do not "
                         "decide; rename it <model>.<run_id>.json for one model")
            continue
        model = candidates[0]
        if model in out:
            problems.add(place(source), f"a second run report for {model} (the first is "
                         f"{place(out[model][0])}); pass one report per model")
            continue
        out[model] = (source, report)
    return out


def _report(source: Source, problems: Problems) -> dict | None:
    value = _json_document(source, problems)
    if value is _UNREADABLE:
        return None
    if not isinstance(value, dict):
        problems.add(place(source), f"a run report is a JSON object, not {_kind(value)}")
        return None
    if not any(key in value for key, _ in REPORT_TRUTH):
        problems.add(place(source), "not a SWE-bench run report: none of resolved_ids, "
                     "unresolved_ids, error_ids, empty_patch_ids")
        return None
    if "schema_version" in value:
        refusal = version_refusal("run report schema_version", value["schema_version"],
                                  REPORT_SCHEMA_VERSIONS)
        if refusal:
            problems.add(f"{place(source)}: schema_version", refusal)
            return None
    out = {}
    ok = True
    for key in [k for k, _ in REPORT_TRUTH] + ["submitted_ids"]:
        ids = value.get(key)
        if ids is None:
            continue
        if not isinstance(ids, list) or not all(isinstance(i, str) and i for i in ids):
            problems.add(f"{place(source)}: {key}", "must be a list of instance ids (text)")
            ok = False
            continue
        out[key] = ids
    return out if ok else None


_UNREADABLE = object()  # the problem is already listed (JSON `null` is a value like any other)


def _json_document(source: Source, problems: Problems):
    text = _decode(source, problems)
    return _UNREADABLE if text is None else _whole(source, text, problems)


def _decode(source, problems: Problems) -> str | None:
    if not isinstance(source, Source) or not isinstance(source.data, bytes | bytearray):
        problems.add(getattr(source, "name", "input"), "not a file of bytes")
        return None
    if len(source.data) > MAX_INPUT_BYTES:
        problems.add(place(source), f"{len(source.data):,} bytes; at most {MAX_INPUT_BYTES:,} "
                     "are read from one file (the bundle they make must fit its own limit)")
        return None
    try:
        text = bytes(source.data).decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = bytes(source.data)[:error.start].count(b"\n") + 1
        problems.add(place(source, line), "not UTF-8 text")
        return None
    if "\x00" in text:
        line = text[:text.index("\x00")].count("\n") + 1
        problems.add(place(source, line), "holds a NUL character: not a text file")
        return None
    return text


def _rows(source, problems: Problems, keyed_field: str):
    """(where, row) for each object in a JSONL file, a JSON list, or a dict keyed by id."""
    text = _decode(source, problems)
    if text is None:
        return
    stripped = text.lstrip()
    if stripped.startswith("["):
        value = _whole(source, text, problems)
        if value is _UNREADABLE:
            return
        for n, row in enumerate(value):
            where = f"{place(source)}: [{n}]"
            if isinstance(row, dict):
                yield where, row
            else:
                problems.add(where, f"a row is a JSON object, not {_kind(row)}")
        return
    lines = text.split("\n")
    first = next((line for line in lines if line.strip()), "")
    if stripped.startswith("{") and _is_keyed_dict(first, text, keyed_field):
        value = _whole(source, text, problems)
        if isinstance(value, dict):
            for key, row in value.items():
                where = f"{place(source)}: {key}"
                if not isinstance(row, dict):
                    problems.add(where, f"a prediction is a JSON object, not {_kind(row)}")
                    continue
                if keyed_field not in row:
                    row = {**row, keyed_field: key}
                yield where, row
        return
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            problems.add(place(source, n), f"malformed JSON: {error.msg}")
            continue
        except RecursionError:
            problems.add(place(source, n), "malformed JSON: nested too deeply")
            continue
        if not isinstance(row, dict):
            problems.add(place(source, n), f"a line is a JSON object, not {_kind(row)}")
            continue
        yield place(source, n), row


def _is_keyed_dict(first_line: str, text: str, keyed_field: str) -> bool:
    """A whole-file JSON object (preds.json: {instance_id: prediction}) rather than JSONL."""
    try:
        row = json.loads(first_line)
        # A complete first line is JSONL, unless it is the whole keyed dict on one line.
        return (isinstance(row, dict) and keyed_field not in row and bool(row)
                and all(isinstance(v, dict) for v in row.values()) and first_line.strip()
                == text.strip())
    except (json.JSONDecodeError, RecursionError):
        pass
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return False
    return isinstance(value, dict) and all(isinstance(v, dict) for v in value.values())


def _whole(source, text, problems):
    """The file's one JSON value, or _UNREADABLE after listing why not."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        problems.add(place(source, error.lineno), f"malformed JSON: {error.msg}")
    except RecursionError:
        problems.add(place(source), "malformed JSON: nested too deeply")
    return _UNREADABLE


def _text(row: dict, name: str, where: str, problems: Problems) -> str | None:
    value = row.get(name)
    if value is None:
        problems.add(f"{where}: {name}", "missing")
        return None
    if not isinstance(value, str):
        problems.add(f"{where}: {name}", f"must be text, not {_kind(value)}")
        return None
    if not value.strip():
        problems.add(f"{where}: {name}", "empty")
        return None
    return value


def _kind(value) -> str:
    return {dict: "an object", list: "a list", str: "text", bool: "true/false", int: "a number",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)
