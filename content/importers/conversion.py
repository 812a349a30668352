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
    truth_scorer: str | None = None
    truth_values: str = ""
    review_scorer: str | None = None
    grader: str | None = None  # the review scorer's grader, where the logs name none
    epoch: int = 1
    families: list[str] = field(default_factory=list)
    name: str = ""


# The request's files: one each, and lists of them (in this order on the child's input).
SOURCE_FIELDS = ("outputs", "reviews", "dataset")
SOURCE_LISTS = ("predictions", "reports", "logs")
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
                                seed=request.seed, families=families, run_name=request.name)
    if request.format == "inspect":
        inspect_logs = _importer("inspect_logs")
        return inspect_logs.convert(logs=request.logs, truth_scorer=request.truth_scorer,
                                    truth_values=_truth_values(request.truth_values),
                                    review_scorer=request.review_scorer, epoch=request.epoch,
                                    families=families, run_name=request.name,
                                    grader=request.grader,
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
    if request.outputs is None:
        raise ConversionError(["outputs: name the table of outputs"])
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
    problems.raise_if_any()
    return table.convert(outputs=request.outputs, table_format=request.format,
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
    return lines
