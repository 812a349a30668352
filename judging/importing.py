"""From a host's evaluation files to a `blindjudge.run/2` bundle: the one place the command line
(`import_run --from …`) and the host's import page choose the importer and call it with the
host's options. Converting writes nothing; `judging.services.run_import` then validates the
bundle whole and writes it, or refuses and writes nothing.

`convert` converts in a child process (`python -m judging.import_worker`, see there for the
protocol), never in the process that serves hosts and judges: a few hundred kilobytes of log can
ask for gigabytes (issue 25 item 2), and the child's address space is limited to
BLINDJUDGE_IMPORT_MEMORY_MB, its time to BLINDJUDGE_IMPORT_TIMEOUT seconds. A child that runs out
of either is refused with a ConversionError that says which; the serving process holds only the
files it was given and the bundle's bytes. Starting the child costs a Python start and the
importers' imports: about 0.15 s on the 2-core machine (bench/README.md).
`convert_in_process` is the conversion itself, which the child runs.

The swebench and inspect importers are imported when used, so either format's absence (or a
fault in it) never stops the others.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import logging
import os
import select
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field

from django.conf import settings

from content.importers import table
from content.importers.common import (
    ConversionError,
    Families,
    Imported,
    Problems,
    Source,
    parse_family_overrides,
)

logger = logging.getLogger(__name__)

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
    epoch: int = 1
    families: list[str] = field(default_factory=list)
    name: str = ""


# The request's files: one each, and lists of them (in this order on the child's input).
SOURCE_FIELDS = ("outputs", "reviews", "dataset")
SOURCE_LISTS = ("predictions", "reports", "logs")
# The child: our own interpreter and module (tests put a stand-in here).
WORKER = ("-m", "judging.import_worker")
# Exit status of a child that ran out of memory (it says so on its output too, when it can).
OUT_OF_MEMORY = 3
# The child's answer line (the summary) is far smaller; its body is the bundle.
MAX_ANSWER_HEADER_BYTES = 16 * 1024 * 1024
CHUNK_BYTES = 256 * 1024


@dataclass
class Converted:
    """A conversion done in the child: the bundle's bytes (what `bundle_bytes` gives) and its
    summary; `seconds` and `peak_rss_mb` are the child's, for the logs and the benchmarks."""

    raw: bytes
    summary: dict
    seconds: float = 0.0
    peak_rss_mb: int = 0


def convert(request: ImportRequest) -> Converted:
    """The run/2 bundle for the request, converted in a child process of limited memory and time
    (see the module docstring), or ConversionError listing every problem. Blocks the calling
    thread until the child answers: call it from a synchronous view or a command."""
    memory_mb = settings.BLINDJUDGE_IMPORT_MEMORY_MB
    timeout = settings.BLINDJUDGE_IMPORT_TIMEOUT
    what = "logs" if request.format == "inspect" else "files"
    header, files = request_message(request, settings.BLINDJUDGE_MAX_BUNDLE_BYTES)
    env = dict(os.environ)
    env.setdefault("DJANGO_SETTINGS_MODULE", settings.SETTINGS_MODULE or "blindjudge.settings")
    deadline = time.monotonic() + timeout
    try:
        process = subprocess.Popen(  # noqa: S603 - our own interpreter and module, fixed arguments
            [sys.executable, *WORKER, "--memory-mb", str(memory_mb)], cwd=settings.BASE_DIR,
            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None, close_fds=True)
    except OSError as error:
        logger.error("the import converter could not be started: %s", error)
        raise ConversionError(["the converter could not be started; the server's log says more"]) \
            from None
    writer = threading.Thread(target=_send, args=(process.stdin, [header, *files]), daemon=True,
                              name=f"import-converter-{process.pid}-input")
    writer.start()
    try:
        answer = _receive(process, deadline, settings.BLINDJUDGE_MAX_BUNDLE_BYTES)
    except TimeoutError:
        raise ConversionError([f"the conversion of the {what} took longer than {timeout} s "
                               "(BLINDJUDGE_IMPORT_TIMEOUT) and was stopped; nothing was "
                               f"imported: split the {what} into several imports, or ask the "
                               "server's administrator to raise the limit"]) from None
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        process.stdout.close()
        writer.join(timeout=5)
    status = process.returncode
    newline = answer.find(b"\n")
    line = bytes(answer[:newline]) if newline >= 0 else b""
    body = bytes(memoryview(answer)[newline + 1:]) if newline >= 0 else b""
    del answer  # the bundle is held once, as bytes, from here on
    try:
        head = json.loads(line) if line else {}
    except ValueError:
        head = {}
    if not isinstance(head, dict):
        head = {}
    if head.get("memory") or status == OUT_OF_MEMORY:
        raise ConversionError([f"the {what} need more than {memory_mb:,} MB of memory to convert "
                               "(BLINDJUDGE_IMPORT_MEMORY_MB) and were refused; nothing was "
                               f"imported: split the {what} into several imports, or ask the "
                               "server's administrator to raise the limit"])
    if head.get("ok") is True and isinstance(head.get("bytes"), int) \
            and len(body) == head["bytes"] and isinstance(head.get("summary"), dict):
        return Converted(raw=body, summary=head["summary"], seconds=head.get("seconds", 0.0),
                         peak_rss_mb=head.get("peak_rss_mb", 0))
    if head.get("ok") is False and isinstance(head.get("errors"), list) and head["errors"]:
        raise ConversionError([str(line) for line in head["errors"]], int(head.get("more") or 0))
    logger.error("the import converter (pid %s) answered out of protocol or stopped before "
                 "answering (exit status %s; %s)", process.pid, status,
                 head.get("failed", "no answer"))
    raise ConversionError([f"the conversion of the {what} failed (exit status {status}); nothing "
                           "was imported, and the server's log says more"])


def request_message(request: ImportRequest, max_bundle_bytes: int) -> tuple[bytes, list[bytes]]:
    """What the child reads: one line of JSON (the request, each file by name and size, and the
    bundle limit), then each file's bytes in the order the line names them."""
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


def _send(stream, pieces: list[bytes]) -> None:
    """Write the request to the child's input and close it (a child that died or answered
    early stops reading: the rest is not needed)."""
    try:
        for piece in pieces:
            stream.write(piece)
        stream.close()
    except (OSError, ValueError):
        pass


def _receive(process: subprocess.Popen, deadline: float, max_bundle_bytes: int) -> bytearray:
    """Everything the child writes until it closes its output; TimeoutError past the deadline,
    and no more than its answer may hold (the rest is not read)."""
    fd = process.stdout.fileno()
    poller = select.poll()  # not select(): a busy server's descriptors pass 1024
    poller.register(fd, select.POLLIN | select.POLLHUP)
    limit = MAX_ANSWER_HEADER_BYTES + max_bundle_bytes
    received = bytearray()
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        if not poller.poll(remaining * 1000):
            continue
        chunk = os.read(fd, CHUNK_BYTES)
        if not chunk:
            return received
        received += chunk
        if len(received) > limit:
            return bytearray()  # out of protocol: refused below as a failure


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
                                    **({"max_built_chars": max_bundle_bytes}
                                       if max_bundle_bytes else {}))
    raise ConversionError([f'--from: "{request.format}" is not one of {", ".join(FORMATS)}'])


def bundle_bytes(imported: Imported | Converted) -> bytes:
    if isinstance(imported, Converted):
        return imported.raw
    return json.dumps(imported.bundle, ensure_ascii=False).encode()


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
