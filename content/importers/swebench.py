"""SWE-bench predictions, their evaluation reports and the dataset's task statements as a
`blindjudge.run/2` bundle. Pure: no Django.

Inputs, as the SWE-bench harness and its users keep them:
- predictions: JSONL rows `{"instance_id", "model_name_or_path", "model_patch"}` (one file per
  model or mixed, the harness's input and swe-bench/experiments' `all_preds.jsonl`); a file that
  is one JSON value is read too: a list of rows (`[<prediction>, …]`) or a dict keyed by instance
  id (mini-swe-agent's `preds.json`).
- reports, of three kinds, recognised by their keys:
  - the harness's run report (`swebench/harness/reporting.py` `make_run_report`: `resolved_ids`,
    `unresolved_ids`, `error_ids`, `empty_patch_ids`, `submitted_ids`, counts and
    `schema_version`), named `<model with "/" as "__">.<run_id>.json`;
  - swe-bench/experiments' `evaluation/<split>/<run>/results/results.json` (`resolved`,
    `no_generation`, `no_logs`): every predicted instance in none of the lists is unresolved;
    a `no_generation` instance is an empty patch (a prediction of "" when the run's
    predictions hold no row for it) and a `no_logs` one was never evaluated;
  - the harness's per-instance `logs/run_evaluation/<run>/<model>/<instance>/report.json`
    (`{instance_id: {"resolved", "patch_is_None", "patch_exists", "patch_successfully_applied",
    "tests_status"}}`), or the same object unwrapped in a folder named by its instance
    (`logs/<instance>/report.json`, as the experiments' logs and mini-swe-agent runs keep them).
- trajectories (optional): mini-swe-agent's `<instance>/<instance>.traj.json`. Only its `info`
  is used: `exit_status` is counted in the summary, and a `submission` that is not the patch
  its predictions file holds for that instance is refused (the folder mixes two runs).
- dataset: rows with `instance_id`, `problem_statement`, `repo`, as JSONL, a JSON list, or the
  Parquet file the Hugging Face dataset ships (read with pyarrow, an optional extra:
  `pip install 'blindjudge[parquet]'`; the uncompressed size of the columns read is capped
  from the file's own metadata before any is read). Required: predictions do not carry the issue.

Which model a report (or trajectory) belongs to:
- a run report: its file name starts with the model's name as the harness writes it (`/` as
  `__`) and a dot; when several models fit (`a` and `a.b` both prefix `a.b.run.json`), its
  `submitted_ids` decide if exactly one model predicted exactly those ids;
- a per-instance report under the harness's `<model>/<instance>/report.json`: that model;
- otherwise a results.json, a per-instance report or a trajectory belongs to the model of the
  predictions file sharing the deepest folder with it (`<run>/all_preds.jsonl` and
  `<run>/results/results.json`), when that names one model (a trajectory: the model its
  `info.config.model.model_name` names, first);
- with one model only, every report is its. Anything else is refused, by file.
One whole-run report (run report or results.json) per model; per-instance reports may be many.

Truth per copy: `tests_pass` resolved; `tests_fail` unresolved (a patch that did not apply
included); `unknown` when the harness ran nothing useful (`error_ids`, `no_logs`) or the report
does not mention the instance (counted in `not_in_report`, so a stale report shows). An empty
patch (the prediction's `model_patch` empty, or the report says so) is unresolved, as SWE-bench
counts it: `tests_fail`, or `unknown` with `empty_patch="unknown"`. The summary counts both
(`empty_patches`, `harness_errors`, by model).

Which instances: those every model attempted (has a prediction for), then
- `instance_ids` / `instances_file` (one id a line, `#` comments, or a JSON list): exactly
  those; an id some model did not predict is refused, all of them in one problem; or
- `instances=N, seed=S`: each candidate keyed by HMAC-SHA256(key=seed, msg=instance_id), the N
  smallest keys taken, so the sample depends only on the seed and the ids (never on file order)
  and growing N only adds instances.
Only what is imported is checked: the dataset needs a statement for the imported instances
only, and a report naming instances its model did not predict is counted
(`report_ids_not_predicted`), not refused. Instances some model did not attempt are skipped and
counted in `skipped["not attempted by every model"]`.
"""

from __future__ import annotations

import hashlib
import hmac
import io
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

# Outcomes, whatever the report's kind, and the truth each becomes.
PASS, FAIL, EMPTY, ERROR = "resolved", "unresolved", "empty patch", "harness error"
RUN_REPORT_LISTS = (("resolved_ids", PASS), ("unresolved_ids", FAIL), ("error_ids", ERROR),
                    ("empty_patch_ids", EMPTY))
RESULTS_LISTS = (("resolved", PASS), ("no_generation", EMPTY), ("no_logs", ERROR))
EMPTY_PATCH_TRUTHS = {"fail": "tests_fail", "unknown": "unknown"}
NOT_ATTEMPTED = "not attempted by every model"
PARQUET_EXTRA = "pip install 'blindjudge[parquet]'"
DATASET_COLUMNS = ("instance_id", "problem_statement", "repo")


class _Report:
    """One report, parsed: its kind, its outcomes by instance and (run reports) submitted_ids."""

    def __init__(self, source: Source, kind: str, outcomes: dict[str, str], where: dict[str, str],
                 submitted: list | None = None):
        self.source, self.kind, self.outcomes, self.where = source, kind, outcomes, where
        self.submitted = submitted

    @property
    def whole_run(self) -> bool:
        return self.kind in ("run report", "results.json")


def convert(*, predictions: list[Source], reports: list[Source], dataset: Source | None,
            instances: int | None = None, seed: str = "0", families: Families,
            run_name: str = "", instance_ids: list[str] | None = None,
            instances_file: Source | None = None, empty_patch: str = "fail",
            trajectories: list[Source] | None = None, cluster_column: str | None = None) -> Imported:
    """`cluster_column`: the dataset column whose value is each task's cluster (`--cluster
    COLUMN`); by default the task's cluster is its repository (`repo`)."""
    try:
        return _convert(predictions, reports, dataset, instances, seed, families, run_name,
                        list(instance_ids or []), instances_file, empty_patch,
                        list(trajectories or []), cluster_column or "repo")
    except ConversionError:
        raise
    except Exception as error:  # noqa: BLE001 - the contract: nothing but ConversionError leaves
        raise ConversionError([f"swebench: could not convert the input ({type(error).__name__})"])\
            from error


def _convert(predictions, reports, dataset, instances, seed, families, run_name, instance_ids,
             instances_file, empty_patch, trajectories, cluster_column) -> Imported:
    problems = Problems()
    if not predictions:
        problems.add("predictions", "no predictions file given")
    if not reports:
        problems.add("reports", "no report given (the harness's <model>.<run_id>.json, an "
                     "experiments results.json or per-instance report.json files)")
    if dataset is None:
        problems.add("dataset", "no dataset file given: every task needs its problem_statement, "
                     "which predictions do not carry; pass the SWE-bench dataset (JSONL, JSON "
                     "or Parquet)")
    if instances is not None and (not isinstance(instances, int) or isinstance(instances, bool)
                                  or instances < 1):
        problems.add("--instances", f"must be a positive whole number, not {instances!r}")
    if not isinstance(seed, str):
        problems.add("--seed", "must be text")
    if empty_patch not in EMPTY_PATCH_TRUTHS:
        problems.add("--empty-patch", f"must be fail or unknown, not {empty_patch!r}")
    every_source = [*predictions, *reports, *trajectories,
                    *([dataset] if dataset else []), *([instances_file] if instances_file else [])]
    total = sum(len(s.data) for s in every_source
                if isinstance(s, Source) and isinstance(s.data, bytes | bytearray))
    if total > MAX_TOTAL_BYTES:
        problems.add("input", f"{total:,} bytes in all; at most {MAX_TOTAL_BYTES:,} are read")
    wanted = _wanted_ids(instance_ids, instances_file, problems)
    if wanted is not None and instances is not None:
        problems.add("--instances", "draws a sample; --instance-ids and --instances-file name "
                     "the instances: give one or the other")
    problems.raise_if_any()

    # --- predictions: (model, instance) -> (patch, where) ------------------------------------
    preds: dict[str, dict[str, tuple[str, str]]] = {}
    duplicates_dropped = 0
    folder_of: dict[str, set[tuple[str, ...]]] = {}  # model -> folders of its predictions files
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
            folder_of.setdefault(model, set()).add(_folder(source.name))
            seen = preds.setdefault(model, {}).get(iid)
            if seen is not None:
                if seen[0] != patch:
                    problems.add(f"{where}: model_patch", f"a second, different prediction for "
                                 f"{model} / {iid} (the first is at {seen[1]})")
                duplicates_dropped += 1
                continue  # the same patch twice (a re-run merged in) is harmless
            preds[model][iid] = (patch, where)

    # --- reports ------------------------------------------------------------------------------
    parsed = []
    for source in reports:
        report = _report(source, problems)
        if report is not None:
            parsed.append(report)
    reports_of = _match_reports(parsed, preds, folder_of, problems)
    every_report_read = len(parsed) == len(reports)
    for model in sorted(preds):
        if model not in reports_of and parsed and every_report_read:
            problems.add("reports", f'no run report for model "{model}" (expected a file named '
                         f"{_file_stem(model)}.<run_id>.json)")
    outcome_of: dict[str, dict[str, tuple[str, str]]] = {}  # model -> iid -> (outcome, where)
    rest_fails: set[str] = set()  # models whose results.json makes every unlisted instance fail
    for model, model_reports in reports_of.items():
        outcome_of[model] = {}
        for report in model_reports:
            if report.kind == "results.json":
                rest_fails.add(model)
            for iid, outcome in report.outcomes.items():
                where = report.where[iid]
                seen = outcome_of[model].get(iid)
                if seen is not None and seen[0] != outcome:
                    problems.add(where, f'"{iid}" is also {seen[0]} at {seen[1]}')
                    continue
                outcome_of[model][iid] = (outcome, where)
                if outcome == EMPTY and iid not in preds[model] and report.kind == "results.json":
                    # no_generation: the model ran and produced nothing; the run's predictions
                    # often hold no row for it.
                    preds[model][iid] = ("", where)

    family_of = {model: families.of(model) for model in sorted(preds)}
    families.check(problems)
    problems.raise_if_any()

    # --- instances: the ones every model attempted, chosen by id or sampled reproducibly -----
    every = set.intersection(*(set(p) for p in preds.values())) if preds else set()
    attempted_by_some = set().union(*(set(p) for p in preds.values())) if preds else set()
    skipped = Counter()
    if attempted_by_some - every:
        skipped[NOT_ATTEMPTED] = len(attempted_by_some - every)
    if wanted is not None:
        missing = [iid for iid in wanted if iid not in every]
        if missing:
            shown = "; ".join(
                f"{iid} (no prediction from {', '.join(m for m in sorted(preds) if iid not in preds[m])})"
                for iid in missing[:20])
            more = f"; and {len(missing) - 20} more" if len(missing) > 20 else ""
            raise ConversionError([f"--instance-ids: {len(missing)} of the {len(wanted)} ids "
                                   f"named are not predicted by every model: {shown}{more}"])
        chosen = sorted(wanted)
        if len(every) > len(chosen):
            skipped["not named"] = len(every) - len(chosen)
    else:
        chosen = sorted(every)
        if instances is not None and instances < len(chosen):
            chosen = sorted(sorted(chosen, key=lambda iid: _sample_key(seed, iid))[:instances])
            skipped["not sampled"] = len(every) - instances
    if not chosen:
        raise ConversionError(["predictions: no instance was attempted by every model "
                               f"({len(preds)} models); nothing to import"])

    # --- the dataset: a statement for every instance imported --------------------------------
    statements = _statements(dataset, set(chosen), problems, cluster_column)
    for iid in chosen if statements is not None else []:
        if iid not in statements:
            for model in sorted(preds):
                problems.add(f"{preds[model][iid][1]}: instance_id", f'"{iid}" has no '
                             f"problem_statement in {dataset.name}")
    exit_statuses = _trajectories(trajectories, preds, folder_of, set(chosen), problems)
    problems.raise_if_any()

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
            places[f"tasks[{len(tasks)}].cluster"] = f"{where}: {cluster_column}"
        tasks.append(task)
    copies = []
    by_truth = Counter()
    not_in_report, empty_patches, harness_errors, not_predicted = (Counter(), Counter(),
                                                                   Counter(), Counter())
    builders_summary = {}
    for model in models:
        for iid in outcome_of.get(model, {}):
            if iid not in preds[model]:
                not_predicted[model] += 1
        n = 0
        for iid in chosen:
            patch, where = preds[model][iid]
            places[f"copies[{len(copies)}]"] = where
            places[f"copies[{len(copies)}].content"] = f"{where}: model_patch"
            outcome = outcome_of.get(model, {}).get(iid, (None,))[0]
            if patch.strip() == "":
                outcome = EMPTY  # nothing to test, whatever the report says
            if outcome is None and model in rest_fails:
                outcome = FAIL  # results.json lists the resolved; the rest of a run failed
            if outcome == PASS:
                truth = "tests_pass"
            elif outcome == FAIL:
                truth = "tests_fail"
            elif outcome == EMPTY:
                truth = EMPTY_PATCH_TRUTHS[empty_patch]
                empty_patches[model] += 1
            elif outcome == ERROR:
                truth = "unknown"
                harness_errors[model] += 1
            else:
                truth = "unknown"
                not_in_report[model] += 1
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
        "empty_patches": dict(empty_patches),
        "empty_patch": empty_patch,
        "harness_errors": dict(harness_errors),
        "report_ids_not_predicted": dict(not_predicted),
        "reports": {m: _reports_read(rs) for m, rs in sorted(reports_of.items())},
        "trajectories": exit_statuses,
        "sample": {"instances": instances, "seed": seed, "of": len(every)}
        if instances is not None else None,
        "instance_ids": len(chosen) if wanted is not None else None,
    }
    return Imported(bundle=bundle, summary=summary, places=places)


def _reports_read(reports: list[_Report]) -> str:
    whole = [place(r.source) for r in reports if r.whole_run]
    each = len(reports) - len(whole)
    return ", ".join(whole + ([f"{each} per-instance report.json"] if each else []))


def _sample_key(seed: str, instance_id: str) -> str:
    return hmac.new(seed.encode("utf-8", "surrogatepass"), instance_id.encode("utf-8",
                    "surrogatepass"), hashlib.sha256).hexdigest()


def _file_stem(model: str) -> str:
    return model.replace("/", "__")


def _parts(name: str) -> list[str]:
    return [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]


def _folder(name: str) -> tuple[str, ...]:
    return tuple(_parts(name)[:-1])


def _wanted_ids(instance_ids: list[str], instances_file: Source | None,
                problems: Problems) -> list[str] | None:
    """The instances the host named (`--instance-ids`, `--instances-file`), in order, once each;
    None when they named none."""
    if not instance_ids and instances_file is None:
        return None
    named = []
    for entry in instance_ids:
        if not isinstance(entry, str):
            problems.add("--instance-ids", f"must be text, not {_kind(entry)}")
            continue
        named.extend(x for x in entry.replace(",", " ").split() if x)
    if instances_file is not None:
        text = _decode(instances_file, problems)
        if text is not None and text.lstrip().startswith("["):
            value = _whole(instances_file, text, problems)
            if value is not _UNREADABLE:
                if isinstance(value, list) and all(isinstance(x, str) and x.strip()
                                                   for x in value):
                    named.extend(x.strip() for x in value)
                else:
                    problems.add(place(instances_file), "a JSON list of instance ids (text), or "
                                 "one id a line")
        elif text is not None:
            for n, line in enumerate(text.splitlines(), 1):
                entry = line.split("#", 1)[0].strip()
                if not entry:
                    continue
                if any(c.isspace() for c in entry) or entry.startswith(("{", '"')):
                    problems.add(place(instances_file, n), "one instance id a line (e.g. "
                                 "astropy__astropy-12907)")
                    continue
                named.append(entry)
    if not named and not problems:
        problems.add("--instance-ids", "names no instance")
    return list(dict.fromkeys(named))


def _match_reports(parsed: list[_Report], preds, folder_of, problems) -> dict[str, list]:
    """model -> its reports (see the module docstring for the rules)."""
    out: dict[str, list[_Report]] = {}
    whole: dict[str, _Report] = {}
    for report in parsed:
        source = report.source
        if not preds:
            problems.add(place(source), "no valid predictions to match this report to")
            continue
        model = None
        if len(preds) == 1:
            model = next(iter(preds))
        elif report.kind == "run report":
            basename = _parts(source.name)[-1] if _parts(source.name) else source.name
            candidates = [m for m in preds if basename.startswith(_file_stem(m) + ".")]
            if len(candidates) > 1 and isinstance(report.submitted, list):
                candidates = [m for m in candidates if set(preds[m]) == set(report.submitted)]
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
        else:
            parts = _parts(source.name)
            if report.kind == "report.json" and len(parts) >= 3:
                model = next((m for m in preds if _file_stem(m) == parts[-3]), None)
            if model is None:
                model = _nearest_model(_folder(source.name), folder_of)
            if model is None:
                problems.add(place(source), f"cannot tell which model's {report.kind} this is: "
                             "its folder is not beside one model's predictions (give each "
                             "run's folder with --run-dir, or import one model's files at a "
                             "time)")
                continue
        if report.whole_run:
            if model in whole:
                problems.add(place(source), f"a second run report for {model} (the first is "
                             f"{place(whole[model].source)}); pass one report per model")
                continue
            whole[model] = report
        out.setdefault(model, []).append(report)
    return out


def _nearest_model(folder: tuple[str, ...], folder_of: dict[str, set]) -> str | None:
    """The one model whose predictions file shares the deepest folder with `folder` (at least
    one folder in common), or None."""
    def shared(a, b):
        n = 0
        while n < min(len(a), len(b)) and a[n] == b[n]:
            n += 1
        return n

    depth = {m: max(shared(folder, f) for f in folders) for m, folders in folder_of.items()}
    best = max(depth.values(), default=0)
    winners = [m for m, d in depth.items() if d == best]
    return winners[0] if best > 0 and len(winners) == 1 else None


def _report(source: Source, problems: Problems) -> _Report | None:
    value = _json_document(source, problems)
    if value is _UNREADABLE:
        return None
    if not isinstance(value, dict):
        problems.add(place(source), f"a report is a JSON object, not {_kind(value)}")
        return None
    if any(key in value for key, _ in RUN_REPORT_LISTS):
        return _run_report(source, value, problems)
    if isinstance(value.get("resolved"), list) and ("no_generation" in value
                                                    or "no_logs" in value):
        return _lists_report(source, value, "results.json", RESULTS_LISTS, problems)
    if isinstance(value.get("resolved"), bool):  # a per-instance report, unwrapped
        parts = _parts(source.name)
        if len(parts) < 2:
            problems.add(place(source), "a per-instance report without its instance id: the "
                         "harness keeps it as {instance_id: {…}}, the experiments' logs in a "
                         "folder named by the instance (logs/<instance_id>/report.json); give "
                         "it with its folder")
            return None
        value = {parts[-2]: value}
    if value and all(isinstance(v, dict) and isinstance(v.get("resolved"), bool)
                     for v in value.values()):
        outcomes, where = {}, {}
        for iid, entry in value.items():
            if entry.get("patch_is_None") is True or entry.get("patch_exists") is False:
                outcomes[iid] = EMPTY
            else:
                outcomes[iid] = PASS if entry["resolved"] else FAIL
            where[iid] = f"{place(source)}: resolved"
        return _Report(source, "report.json", outcomes, where)
    problems.add(place(source), "not a SWE-bench report: none of a harness run report "
                 "(resolved_ids, unresolved_ids, error_ids, empty_patch_ids), an experiments "
                 "results.json (resolved, no_generation, no_logs) or a per-instance report.json "
                 "({instance_id: {resolved, …}})")
    return None


def _run_report(source: Source, value: dict, problems: Problems) -> _Report | None:
    if "schema_version" in value:
        refusal = version_refusal("run report schema_version", value["schema_version"],
                                  REPORT_SCHEMA_VERSIONS)
        if refusal:
            problems.add(f"{place(source)}: schema_version", refusal)
            return None
    report = _lists_report(source, value, "run report", RUN_REPORT_LISTS, problems)
    submitted = value.get("submitted_ids")
    if submitted is not None and (not isinstance(submitted, list)
                                  or not all(isinstance(i, str) and i for i in submitted)):
        problems.add(f"{place(source)}: submitted_ids", "must be a list of instance ids (text)")
        return None
    if report is not None:
        report.submitted = submitted
    return report


def _lists_report(source, value, kind, lists, problems) -> _Report | None:
    outcomes, where, ok = {}, {}, True
    for key, outcome in lists:
        ids = value.get(key)
        if ids is None:
            continue
        if not isinstance(ids, list) or not all(isinstance(i, str) and i for i in ids):
            problems.add(f"{place(source)}: {key}", "must be a list of instance ids (text)")
            ok = False
            continue
        for iid in ids:
            if iid in outcomes and outcomes[iid] != outcome:
                problems.add(f"{place(source)}: {key}", f'"{iid}" is also in another '
                             "outcome list of this report")
                ok = False
                continue
            outcomes[iid] = outcome
            where[iid] = f"{place(source)}: {key}"
    return _Report(source, kind, outcomes, where) if ok else None


def _trajectories(trajectories, preds, folder_of, chosen, problems) -> dict:
    """model -> {exit_status: count} over the imported instances' trajectories; a submission
    that is not the patch the predictions hold is a problem."""
    counts: dict[str, Counter] = {}
    for source in trajectories:
        value = _json_document(source, problems)
        if value is _UNREADABLE:
            continue
        info = value.get("info") if isinstance(value, dict) else None
        if not isinstance(info, dict):
            problems.add(place(source), "not a mini-swe-agent trajectory: no info object")
            continue
        parts = _parts(source.name)
        iid = value.get("instance_id")
        if not isinstance(iid, str) or not iid:
            name = parts[-1] if parts else ""
            iid = name[:-len(".traj.json")] if name.endswith(".traj.json") else None
        if not iid:
            problems.add(place(source), "names no instance (instance_id, or a file named "
                         "<instance_id>.traj.json)")
            continue
        if iid not in chosen:
            continue
        config = info.get("config")
        named = (config.get("model") or {}).get("model_name") if isinstance(config, dict) \
            and isinstance(config.get("model"), dict) else None
        model = named if named in preds else (next(iter(preds)) if len(preds) == 1 else
                                              _nearest_model(_folder(source.name), folder_of))
        if model is None:
            problems.add(place(source), "cannot tell which model's trajectory this is")
            continue
        submission = info.get("submission")
        patch, where = preds[model][iid]
        if isinstance(submission, str) and submission != patch:
            problems.add(f"{place(source)}: info.submission", f"is not the patch {where} holds "
                         f"for {iid}: the trajectory and the predictions are of different runs")
            continue
        status = info.get("exit_status")
        counts.setdefault(model, Counter())[status if isinstance(status, str) else "none"] += 1
    return {m: dict(sorted(c.items())) for m, c in sorted(counts.items())}


def _statements(dataset: Source | None, chosen: set[str], problems: Problems,
                cluster_column: str = "repo") -> dict | None:
    """instance id -> (statement, cluster, where), for the imported instances; None when the
    file itself was refused (its problem is listed, not one per instance). The cluster is the
    row's `cluster_column` (its repository unless the host named another column), as text."""
    statements: dict[str, tuple[str, str, str]] = {}
    if dataset is None:
        return statements
    rows = _parquet_rows(dataset, problems, cluster_column) if _is_parquet(dataset) else \
        _rows(dataset, problems, keyed_field="instance_id")
    lacking = 0
    seen = set()
    before = len(problems.items) + problems.more
    read = 0
    for where, row in rows:
        read += 1
        iid = _text(row, "instance_id", where, problems)
        if iid is None:
            continue
        if iid in seen:
            problems.add(f"{where}: instance_id", f'"{iid}" appears twice in the dataset')
            continue
        seen.add(iid)
        if iid not in chosen:
            continue  # only what is imported is checked
        statement = _text(row, "problem_statement", where, problems)
        cluster = row.get(cluster_column, "")
        if cluster_column != "repo" and cluster_column not in row:
            lacking += 1
        if isinstance(cluster, int | float) and not isinstance(cluster, bool):
            cluster = str(cluster)  # a dataset's `version` column may be read as a number
        if cluster is None:
            cluster = ""
        if not isinstance(cluster, str):
            problems.add(f"{where}: {cluster_column}", f"must be text, not {_kind(cluster)}")
            cluster = ""
        if statement is not None:
            statements[iid] = (statement, cluster, where)
    if lacking:
        problems.add(place(dataset), f'{lacking} of the imported instances\' rows have no column '
                     f'"{cluster_column}" (named by --cluster)')
    if not read and len(problems.items) + problems.more > before:
        return None
    return statements


def _is_parquet(source) -> bool:
    data = getattr(source, "data", b"")
    return isinstance(data, bytes | bytearray) and len(data) >= 8 and data[:4] == b"PAR1" \
        and data[-4:] == b"PAR1"


def _parquet_rows(source: Source, problems: Problems, cluster_column: str = "repo"):
    """(where, row) for each row of a Parquet dataset (the file the Hugging Face dataset
    ships), reading only the columns used, after checking their uncompressed size in the
    file's own metadata."""
    if len(source.data) > MAX_INPUT_BYTES:
        problems.add(place(source), f"{len(source.data):,} bytes; at most {MAX_INPUT_BYTES:,} "
                     "are read from one file (the bundle they make must fit its own limit)")
        return
    try:
        import pyarrow.parquet  # noqa: PLC0415 - lazy: an optional extra, only for Parquet datasets
    except ImportError:
        problems.add(place(source), "a Parquet dataset needs pyarrow, which is not installed: "
                     f"{PARQUET_EXTRA} (or give the dataset as JSONL)")
        return
    try:
        parquet = pyarrow.parquet.ParquetFile(io.BytesIO(bytes(source.data)))
        names = parquet.schema_arrow.names
        missing = [c for c in DATASET_COLUMNS[:2] if c not in names]
        if missing:
            problems.add(place(source), f"no column {' or '.join(missing)} (a SWE-bench dataset "
                         f"has {', '.join(DATASET_COLUMNS)})")
            return
        columns = [c for c in (*DATASET_COLUMNS, cluster_column) if c in names]
        columns = list(dict.fromkeys(columns))
        metadata = parquet.metadata
        wanted = {parquet.schema_arrow.get_field_index(c) for c in columns}
        size = sum(metadata.row_group(g).column(c).total_uncompressed_size
                   for g in range(metadata.num_row_groups) for c in range(metadata.num_columns)
                   if c in wanted)
        if size > MAX_INPUT_BYTES:
            problems.add(place(source), f"its columns {', '.join(columns)} hold {size:,} bytes "
                         f"uncompressed; at most {MAX_INPUT_BYTES:,} are read")
            return
        rows = parquet.read(columns=columns).to_pylist()
    except Exception as error:  # noqa: BLE001 - pyarrow's errors (ArrowInvalid, OSError, …)
        problems.add(place(source), f"not a readable Parquet file ({type(error).__name__})")
        return
    for n, row in enumerate(rows):
        yield f"{place(source)}: [{n}]", row


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
