"""A host's evaluation files and options (`ImportRequest`) converted to a `blindjudge.run/2`
bundle: the one place the command line (`import_run --from …`) and the host's import page choose
the importer and call it with the host's options. Converting writes nothing;
`judging.services.run_import` then validates the bundle whole and writes it, or refuses and
writes nothing.

Pure: no Django. `convert_in_process` is the conversion itself. The product never runs it in a
process that serves hosts and judges: judging/importing.py `convert` hands the request to a
child process (`python -m judging.import_worker`) of bounded memory and time, which runs it;
`request_message` is what that child reads, `bundle_bytes` the bundle it answers with and
OUT_OF_MEMORY its exit status when the conversion ran out of memory.

The swebench and inspect importers are imported when used, so either format's absence (or a
fault in it) never stops the others.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import re
from dataclasses import dataclass, field

from content.importers import table
from content.importers.common import (
    ConversionError,
    Families,
    Imported,
    Problems,
    Source,
    parse_family_overrides,
)

FORMATS = ("swebench", "inspect", "jsonl", "csv")


@dataclass
class ImportRequest:
    """What the host gave: the format, its files (each a Source) and its options as text."""

    format: str
    outputs: Source | None = None
    reviews: Source | None = None
    predictions: list[Source] = field(default_factory=list)
    reports: list[Source] = field(default_factory=list)
    dataset: Source | None = None
    logs: list[Source] = field(default_factory=list)
    column_map: str = ""
    values: str = ""
    review_map: str = ""
    builder: str | None = None
    builder_family: str | None = None
    copy_format: str = "text"
    instances: int | None = None
    seed: str = "0"
    instance_ids: list[str] = field(default_factory=list)
    instances_file: Source | None = None
    empty_patch: str = "fail"
    trajectories: list[Source] = field(default_factory=list)
    truth_scorer: str | None = None
    truth_values: str = ""
    review_scorer: str | None = None
    grader: str | None = None  # the review scorer's grader, where the logs name none
    epoch: int = 1
    families: list[str] = field(default_factory=list)
    name: str = ""
    truth_equals: str = ""  # PRED=ANSWER: a table's truth from two columns
    # One table of outputs per builder: the files, and the model of each (in the same order).
    outputs_per_builder: list[Source] = field(default_factory=list)
    per_builder_models: list[str] = field(default_factory=list)
    # How tasks group into the report's resampling units: "" (the format's default), "task" or
    # "none" (each task its own unit), the format's own grouping ("repo": a SWE-bench
    # instance's repository; "eval": an inspect sample's eval task), or a table's COLUMN.
    cluster: str = ""


# The request's files: one each, and lists of them (in this order on the child's input).
SOURCE_FIELDS = ("outputs", "reviews", "dataset", "instances_file")
SOURCE_LISTS = ("predictions", "reports", "logs", "trajectories", "outputs_per_builder")
# Exit status of a child that ran out of memory (it says so on its output too, when it can).
OUT_OF_MEMORY = 3


@dataclass
class Converted:
    """A conversion done in the child (what judging.importing.convert returns): the bundle's
    bytes (what `bundle_bytes` gives) and its summary; `seconds` and `peak_rss_mb` are the
    child's, for the logs and the benchmarks."""

    raw: bytes
    summary: dict
    seconds: float = 0.0
    peak_rss_mb: int = 0
    places: dict[str, str] = field(default_factory=dict)  # as Imported.places


def request_message(request: ImportRequest, max_bundle_bytes: int) -> tuple[bytes, list[bytes]]:
    """What the child (judging/import_worker.py) reads: one line of JSON (the request, each file
    by name and size, and the bundle limit), then each file's bytes in the order the line names
    them."""
    files: list[bytes] = []

    def described(source: Source) -> dict:
        files.append(source.data)
        return {"name": source.name, "bytes": len(source.data)}

    fields = {}
    for item in dataclasses.fields(request):
        value = getattr(request, item.name)
        if item.name in SOURCE_FIELDS:
            value = described(value) if value is not None else None
        elif item.name in SOURCE_LISTS:
            value = [described(source) for source in value]
        fields[item.name] = value
    line = json.dumps({"request": fields, "max_bundle_bytes": max_bundle_bytes},
                      ensure_ascii=False).encode() + b"\n"
    return line, files


def convert_in_process(request: ImportRequest, max_bundle_bytes: int | None = None) -> Imported:
    """The run/2 bundle for the request, converted here, or ConversionError listing every
    problem (what the child runs; `max_bundle_bytes` bounds the texts built from inspect logs)."""
    imported = _converted(request, max_bundle_bytes)
    _group_tasks(imported, _cluster_choice(request))
    # What every importer may have let through, counted once here: copies with nothing in them
    # (an empty output is a builder's answer, imported as a blank copy, and the host is told).
    imported.summary["empty_copies"] = sum(
        1 for copy in imported.bundle.get("copies", []) if not copy.get("content", "").strip())
    return imported


# The grouping each importer gives its tasks as their cluster, which --cluster names to keep it.
FORMAT_CLUSTERS = {"swebench": "repo", "inspect": "eval"}
EACH_TASK = ("task", "none")


def _cluster_choice(request: ImportRequest) -> str:
    """What --cluster does to the converted tasks: "keep" the importer's grouping (a table's
    cluster column, SWE-bench's repository or a dataset COLUMN, inspect's eval task or a sample
    metadata KEY, which the importer reads: _cluster_column), or make each "task" its own unit."""
    choice = request.cluster.strip()
    if not choice:
        # A table's cluster column is the host's own data; the other formats' groupings are few
        # and large (one repository, one eval task), too few units to resample (issue 28).
        return "keep" if request.format in ("jsonl", "csv") else "task"
    return "task" if choice in EACH_TASK else "keep"


def _cluster_column(request: ImportRequest) -> str | None:
    """The column or key --cluster names for the importer to read; None for the importer's own
    grouping or each task alone."""
    choice = request.cluster.strip()
    if not choice or choice in EACH_TASK or choice == FORMAT_CLUSTERS.get(request.format):
        return None
    return choice


def _group_tasks(imported: Imported, choice: str) -> None:
    """Tasks grouped as chosen; the summary says into how many resampling units."""
    tasks = imported.bundle.get("tasks", [])
    if choice == "task":
        for task in tasks:
            task.pop("cluster", None)
    clusters = {task.get("cluster") or f"task {task['id']}" for task in tasks}
    imported.summary["units"] = {
        "by": "cluster" if any(task.get("cluster") for task in tasks) else "task",
        "count": len(clusters)}


def _converted(request: ImportRequest, max_bundle_bytes: int | None) -> Imported:
    problems = Problems()
    overrides = parse_family_overrides(request.families, problems)
    problems.raise_if_any()
    families = Families(overrides)
    if request.format in ("jsonl", "csv"):
        return _table(request, families)
    if request.format == "swebench":
        swebench = _importer("swebench")
        return swebench.convert(predictions=request.predictions, reports=request.reports,
                                dataset=request.dataset, instances=request.instances,
                                cluster_column=_cluster_column(request),
                                seed=request.seed, families=families, run_name=request.name,
                                instance_ids=request.instance_ids,
                                instances_file=request.instances_file,
                                empty_patch=request.empty_patch,
                                trajectories=request.trajectories)
    if request.format == "inspect":
        inspect_logs = _importer("inspect_logs")
        return inspect_logs.convert(logs=request.logs, truth_scorer=request.truth_scorer,
                                    truth_values=_truth_values(request.truth_values),
                                    review_scorer=request.review_scorer, epoch=request.epoch,
                                    families=families, run_name=request.name,
                                    grader=request.grader, cluster_key=_cluster_column(request),
                                    **({"max_built_chars": max_bundle_bytes}
                                       if max_bundle_bytes else {}))
    raise ConversionError([f'--from: "{request.format}" is not one of {", ".join(FORMATS)}'])


def bundle_bytes(imported: Imported | Converted) -> bytes:
    if isinstance(imported, Converted):
        return imported.raw
    text = json.dumps(imported.bundle, ensure_ascii=False)
    try:
        return text.encode()
    except UnicodeEncodeError:
        # A lone surrogate (valid JSON, not text) has no UTF-8 bytes: written as its JSON escape,
        # the validator then refuses it by place, as it does in a bundle given as is.
        return json.dumps(imported.bundle).encode()


# A validator's problem starts with the place in the bundle: `copies[3].content: …`.
_BUNDLE_PLACE = re.compile(r"(\w+\[\d+\])(\.\w+)?(?=: )")


def at_host_places(errors: list[str], places: dict[str, str]) -> list[str]:
    """The bundle validator's problems, each that names a text the conversion took from the
    host's files named by that file's place instead (`copies[3].content: contains a NUL byte …`
    -> `preds.jsonl:4: model_patch: contains a NUL byte …`); the others as they are."""
    if not places:
        return list(errors)
    out = []
    for error in errors:
        found = _BUNDLE_PLACE.match(error)
        if found and found.group(0) in places:
            error = places[found.group(0)] + error[found.end():]
        elif found and found.group(1) in places:
            error = f"{places[found.group(1)]}: {error}"
        out.append(error)
    return out


def _importer(module: str):
    try:
        return importlib.import_module(f"content.importers.{module}")
    except ImportError:
        raise ConversionError([f"--from: the {module} importer is not part of this install"]) \
            from None


def _table(request: ImportRequest, families: Families) -> Imported:
    if request.outputs is None and not request.outputs_per_builder:
        raise ConversionError(["outputs: name the table of outputs (or one per builder)"])
    if len(request.per_builder_models) != len(request.outputs_per_builder):
        raise ConversionError(["--outputs-per-builder: give each file as MODEL=FILE"])
    problems = Problems()
    maps = {}
    for key, text, parse in (("map", request.column_map, table.parse_map),
                             ("values", request.values, table.parse_value_maps),
                             ("review_map", request.review_map, table.parse_map)):
        try:
            maps[key] = parse(text)
        except ConversionError as error:
            for line in error.lines():
                problems.add(f"--{key.replace('_', '-')}", line.split(": ", 1)[-1])
    truth_equals = None
    if request.truth_equals.strip():
        pred, equals, answer = request.truth_equals.partition("=")
        if not equals or not pred.strip() or not answer.strip():
            problems.add("--truth-equals", f'"{request.truth_equals}" is not PRED=ANSWER (two '
                         "column names)")
        else:
            truth_equals = (pred.strip(), answer.strip())
    column = _cluster_column(request)
    if column and "map" in maps:  # --cluster COLUMN: the column it names, unless mapped otherwise
        mapped = maps["map"].setdefault("cluster", column)
        if mapped != column:
            problems.add("--cluster", f'"{column}", but --map reads the cluster from column '
                         f'"{mapped}": give one')
    problems.raise_if_any()
    return table.convert(outputs=request.outputs, table_format=request.format,
                         truth_equals=truth_equals,
                         per_builder=list(zip(request.per_builder_models,
                                              request.outputs_per_builder, strict=True)),
                         column_map=maps["map"], value_maps=maps["values"],
                         builder=request.builder, builder_family=request.builder_family,
                         reviews=request.reviews, review_column_map=maps["review_map"],
                         families=families, run_name=request.name,
                         copy_format=request.copy_format)


def _truth_values(text: str) -> dict[str, str] | None:
    """`C=tests_pass,I=tests_fail` as a dict (None when not given)."""
    if not text.strip():
        return None
    out, problems = {}, Problems()
    for pair in text.split(","):
        value, sep, truth = pair.rpartition("=")  # a value may be ">=0.5"
        if not sep or not value.strip() or not truth.strip():
            problems.add("--truth-values", f'"{pair}" is not VALUE=TRUTH')
        else:
            out[value.strip()] = truth.strip()
    problems.raise_if_any()
    return out


def summary_lines(summary: dict) -> list[str]:
    """The conversion's summary as the lines the command prints and the page shows."""
    lines = [f"tasks: {summary.get('tasks', 0)}"]
    builders = summary.get("builders", {})
    lines.append("builders: " + (", ".join(f"{m} ({n} copies)" for m, n in
                                           sorted(builders.items())) or "none"))
    truth = summary.get("copies_by_truth", {})
    lines.append("copies by truth: " + (", ".join(f"{t} {n}" for t, n in sorted(truth.items()))
                                         or "none"))
    reviews = summary.get("reviews", {})
    abstentions = summary.get("abstentions", {})
    if reviews:
        lines.append("reviews by reviewer and condition:")
        for key, n in sorted(reviews.items()):
            held = abstentions.get(key)
            lines.append(f"  {key}: {n}" + (f" ({held} abstentions)" if held else ""))
    else:
        lines.append("reviews: none")
    for reason, n in sorted(summary.get("skipped", {}).items()):
        lines.append(f"skipped: {reason}: {n}")
    # What the importer decided that changes what is judged or scored, said where the host
    # reads it, not only under --json (issue 27 item 5).
    for model, n in sorted(summary.get("not_in_report", {}).items()):
        lines.append(f"truth unknown: {n} of {model}'s predictions are not in its run report "
                     "(a stale report?)")
    unmapped = summary.get("truth_unmapped", {})
    if unmapped:
        values = ", ".join(f"{value} ({n})" for value, n in sorted(unmapped.items()))
        lines.append(f"truth unknown: {sum(unmapped.values())} copies scored with values no "
                     f"--truth-values rule maps: {values}")
    if summary.get("truth_unscored"):
        lines.append(f"truth unknown: {summary['truth_unscored']} copies the truth scorer did "
                     "not score")
    empty_rule = summary.get("empty_patch", "fail")
    for model, n in sorted(summary.get("empty_patches", {}).items()):
        lines.append(f"empty patches of {model}: {n}, counted as "
                     + ("not resolved (tests_fail)" if empty_rule == "fail" else "unknown"))
    for model, n in sorted(summary.get("harness_errors", {}).items()):
        lines.append(f"truth unknown: {n} of {model}'s instances ended in a harness error")
    for model, n in sorted(summary.get("report_ids_not_predicted", {}).items()):
        lines.append(f"ignored: {model}'s report names {n} instances it has no prediction for")
    if summary.get("empty_copies"):
        lines.append(f"empty outputs imported as blank copies: {summary['empty_copies']}")
    if summary.get("duplicates_dropped"):
        lines.append(f"exact duplicates dropped: {summary['duplicates_dropped']}")
    units = summary.get("units")
    if units:
        lines.append(f"resampling units: {units['count']} "
                     + ("clusters" if units["by"] == "cluster" else "tasks (each its own unit)"))
    if summary.get("epochs_ignored"):
        lines.append(f"samples of other epochs not imported: {summary['epochs_ignored']} "
                     f"(epoch {summary.get('epoch', 1)} is)")
    return lines
