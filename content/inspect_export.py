"""inspect-ai logs read for matching and written again with added scores: the verdicts back out.

Pure: no Django, standard library only (zipfile, json). reports/interop.py decides what the
scores say (from the revealed report) and which samples they go to; this module reads a log's
samples and writes a NEW log, the original's bytes never touched.

Reading (`read_log`): a `.eval` log (a zip: `header.json`, one `samples/<id>_epoch_<n>.json` per
sample, `summaries.json`, `reductions.json`, `_journal/…`; deflated, or Zstandard as current
inspect-ai writes it) or a `.json` log (one EvalLog object with its `samples`), each member read by
content/importers/inspect_logs.py's own reader and caps (streamed and cut off at its caps,
whatever the zip's directory claims). A log in inspect's chunked sample layout is refused by name
(CHUNKED). What is kept of a
sample: its id, epoch, place, and its output text where it is plain (`plain_output`: the
completion, or the first choice's message content when it is one string and carries no tool
call; an `attachment://` reference resolved), for the caller to check it is the copy imported.

Writing (`write_log`): the log as it was, with, in each sample named in `scores`, the added
scores (each a Score object as inspect-ai writes one: value, answer, explanation, metadata and a
`history` of one ScoreEdit carrying its provenance, which is how inspect-ai's own `edit_score`
records a score added after the run) and, after the sample's events, one `score_edit` event per
added score (what `edit_score` appends); the same scores in the sample's entry of
`summaries.json` (what inspect's log viewer lists); and `eval.metadata[METADATA_KEY]` in the
header. Every other member is written back with the same bytes (compressed with deflate, which
every inspect-ai reads, whatever the original used); a
sample not named is left exactly as it was. A score name already present in a sample is refused,
never overwritten.
"""

from __future__ import annotations

import io
import json
import math
import re
from dataclasses import dataclass, field

# Python 3.14's zipfile, for 3.11: current inspect-ai writes every member with Zstandard (zip
# method 93), which the standard library's zipfile of 3.11 cannot read.
from backports.zstd import zipfile

from content.importers.common import Problems

# The importer's member reader, so both read a log's members the one way: Zstandard across
# frames, each member streamed and cut off at the same caps (size, the log's total, its method's
# ratio), a damaged member refused.
from content.importers.inspect_logs import (
    MAX_MEMBERS,
    MAX_TOTAL_BYTES,
    _read_member,
    _Refused,
)

METADATA_KEY = "blindjudge"  # the header's eval.metadata key the export writes under

# The log format versions this writer was written and tested for (inspect-ai's LOG_SCHEMA_VERSION
# 2, as content/importers/inspect_logs.py reads); a log without the field is read as version 2.
LOG_FORMAT_VERSIONS = (2,)


class ExportError(Exception):
    """A log that cannot be read or written as asked; `lines` name the log (and member)."""

    def __init__(self, lines: list[str]):
        super().__init__("\n".join(lines))
        self.lines = lines


@dataclass
class LogSample:
    id: object  # as the log gives it (an int or a string)
    epoch: object
    where: str  # `log.eval:samples/3_epoch_1.json` or `log.json: samples[2]`
    plain_output: str | None  # the output text where it is plain (module docstring), else None

    @property
    def key(self) -> str:
        """The sample id as the importer writes it into task ids (`<task>#<id>`)."""
        return str(self.id)


@dataclass
class ReadLog:
    name: str
    kind: str  # "eval" or "json"
    task: str
    model: str
    samples: list[LogSample] = field(default_factory=list)


# --- reading -------------------------------------------------------------------------------------

def _member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, where: str, budget: list[int]) -> bytes:
    """A member's bytes, read as the importer reads them (with its caps); ExportError if refused."""
    problems = Problems()
    try:
        return _read_member(zf, info, where, budget, problems)
    except _Refused:
        raise ExportError(problems.items) from None


# inspect's chunked sample layout (a folder `samples/<id>_epoch_<n>/` per sample: its shell
# `sample.json`, and its events, messages and attachments in sequences of chunks): read by the
# importer, not written by this export, which would have to add its score_edit events to the
# chunked event sequences and their index. Refused by name, never half written.
CHUNKED = re.compile(r"^samples/[^/]+/")


def _json(raw: bytes, where: str):
    try:
        return json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise ExportError([f"{where}: not UTF-8 text (byte {exc.start})"]) from None
    except json.JSONDecodeError as exc:
        raise ExportError([f"{where}:{exc.lineno}: not JSON: {exc.msg}"]) from None
    except (RecursionError, ValueError) as exc:
        raise ExportError([f"{where}: not JSON: {type(exc).__name__}"]) from None


def _open_zip(name: str, data: bytes) -> zipfile.ZipFile:
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        count = len(zf.infolist())
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError,
            NotImplementedError, RuntimeError, OverflowError) as exc:
        raise ExportError([f"{name}: not a readable .eval zip ({exc})"]) from None
    if count > MAX_MEMBERS:
        raise ExportError([f"{name}: {count:,} zip members; at most {MAX_MEMBERS:,} are read"])
    return zf


def _header_of(name: str, header) -> tuple[str, str]:
    if not isinstance(header, dict):
        raise ExportError([f"{name}: not an inspect log (expected a JSON object)"])
    version = header.get("version", LOG_FORMAT_VERSIONS[-1])
    if isinstance(version, bool) or version not in LOG_FORMAT_VERSIONS:
        raise ExportError([f"{name}: version: log format version {version!r}: this export writes "
                           "version 2"])
    evaluation = header.get("eval")
    task = evaluation.get("task") if isinstance(evaluation, dict) else None
    model = evaluation.get("model") if isinstance(evaluation, dict) else None
    if not (isinstance(task, str) and task.strip() and isinstance(model, str) and model.strip()):
        raise ExportError([f"{name}: eval: no task and model: not an inspect log"])
    return task.strip(), model.strip()


def _attachment(text: str, attachments) -> str:
    if text.startswith("attachment://") and isinstance(attachments, dict):
        found = attachments.get(text[len("attachment://"):])
        if isinstance(found, str):
            return found
    return text


def plain_output(sample: dict) -> str | None:
    """The sample's output text where it is plain (module docstring); None otherwise."""
    output = sample.get("output")
    if not isinstance(output, dict):
        return None
    attachments = sample.get("attachments")
    completion = output.get("completion")
    if isinstance(completion, str) and completion:
        return _attachment(completion, attachments)
    choices = output.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        if (isinstance(message, dict) and isinstance(message.get("content"), str)
                and not message.get("tool_calls")):
            return _attachment(message["content"], attachments)
    return None


def _sample(data, where: str) -> LogSample:
    if not isinstance(data, dict):
        raise ExportError([f"{where}: expected a JSON object (a sample)"])
    return LogSample(data.get("id"), data.get("epoch", 1), where, plain_output(data))


def read_log(name: str, data: bytes) -> ReadLog:
    """The log's task, model and samples (module docstring); ExportError when it cannot be read."""
    if data[:4] == b"PK\x03\x04" or name.lower().endswith(".eval"):
        zf = _open_zip(name, data)
        members = {info.filename: info for info in zf.infolist()}
        if any(CHUNKED.match(member) for member in members):
            raise ExportError([f"{name}: samples in inspect's chunked layout "
                               "(samples/<id>_epoch_<n>/…), which this export does not write"])
        if "header.json" not in members:
            raise ExportError([f"{name}: no header.json: not a finished inspect .eval log"])
        budget = [MAX_TOTAL_BYTES]
        task, model = _header_of(name, _json(_member(zf, members["header.json"],
                                                     f"{name}:header.json", budget),
                                             f"{name}:header.json"))
        log = ReadLog(name, "eval", task, model)
        for member in members:
            if member.startswith("samples/") and member.endswith(".json"):
                where = f"{name}:{member}"
                log.samples.append(_sample(_json(_member(zf, members[member], where, budget),
                                                 where), where))
        return log
    document = _json(data, name)
    task, model = _header_of(name, document)
    samples = document.get("samples") or []
    if not isinstance(samples, list):
        raise ExportError([f"{name}: samples: expected a list"])
    log = ReadLog(name, "json", task, model)
    log.samples = [_sample(sample, f"{name}: samples[{i}]") for i, sample in enumerate(samples)]
    return log


# --- the added scores ----------------------------------------------------------------------------

def added_score(*, value, answer: str | None, explanation: str | None, metadata: dict,
                author: str, timestamp: str, reason: str, provenance: dict) -> dict:
    """A Score as inspect-ai writes one that was added after the run (its `edit_score`): the
    score's fields, and a history of one ScoreEdit with the same fields and its provenance (who,
    when, why, and `provenance` as its metadata). A NaN value is inspect's "unscored" (left out of
    metrics); it is written as the JSON constant NaN, as inspect-ai writes it."""
    edit = {"value": value, "answer": answer, "explanation": explanation, "metadata": metadata,
            "provenance": {"timestamp": timestamp, "author": author, "reason": reason,
                           "metadata": provenance}}
    return {"value": value, "answer": answer, "explanation": explanation, "metadata": metadata,
            "history": [edit]}


def _edit_event(name: str, score: dict, working_start) -> dict:
    """The `score_edit` event inspect-ai's edit_score appends to a sample's events."""
    edit = score["history"][-1]
    return {"event": "score_edit", "timestamp": edit["provenance"]["timestamp"],
            "working_start": working_start, "score_name": name, "edit": edit}


def _add(sample: dict, scores: dict[str, dict], where: str, *, events: bool) -> dict:
    present = sample.get("scores")
    if present is None:
        present = {}
    if not isinstance(present, dict):
        raise ExportError([f"{where}: scores: expected an object of scorer name -> score"])
    clash = sorted(set(present) & set(scores))
    if clash:
        raise ExportError([f"{where}: scores: already has {', '.join(clash)}; exported logs are "
                           "made from the originals, never from an export"])
    sample["scores"] = {**present, **scores}
    if events:
        log_events = sample.get("events")
        if not isinstance(log_events, list):
            log_events = []
        last = log_events[-1].get("working_start") if log_events and isinstance(
            log_events[-1], dict) else None
        start = last if isinstance(last, (int, float)) and math.isfinite(last) else 0.0
        sample["events"] = [*log_events, *(_edit_event(name, score, start)
                                           for name, score in scores.items())]
    return sample


def _with_metadata(header: dict, metadata: dict) -> dict:
    evaluation = header["eval"]
    existing = evaluation.get("metadata")
    evaluation["metadata"] = {**(existing if isinstance(existing, dict) else {}),
                              METADATA_KEY: metadata}
    return header


def _dumps(value) -> bytes:
    # NaN stays the JSON constant inspect-ai writes and reads (an unscored value).
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


def write_log(name: str, data: bytes, scores: dict[tuple[str, object], dict[str, dict]],
              metadata: dict) -> bytes:
    """The log `data` again, with `scores[(sample key, epoch)]` added to those samples and
    `metadata` under the header's eval.metadata (module docstring). ExportError when a sample
    named is not in the log or already has one of the names."""
    wanted = dict(scores)
    if data[:4] == b"PK\x03\x04" or name.lower().endswith(".eval"):
        out = _write_eval(name, data, wanted, metadata)
    else:
        document = _json(data, name)
        _header_of(name, document)
        for i, sample in enumerate(document.get("samples") or []):
            key = (str(sample.get("id")), sample.get("epoch", 1))
            if key in wanted:
                _add(sample, wanted.pop(key), f"{name}: samples[{i}]", events=True)
        _with_metadata(document, metadata)
        out = json.dumps(document, ensure_ascii=False, indent=2).encode("utf-8")
    if wanted:
        raise ExportError([f"{name}: no sample {key} epoch {epoch}" for key, epoch in wanted])
    return out


def _write_eval(name: str, data: bytes, wanted: dict, metadata: dict) -> bytes:
    zf = _open_zip(name, data)
    budget = [MAX_TOTAL_BYTES]
    added = {}  # (key, epoch) -> its scores, for summaries.json
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as written:
        for info in zf.infolist():
            where = f"{name}:{info.filename}"
            raw = _member(zf, info, where, budget)
            if info.filename == "header.json":
                header = _json(raw, where)
                _header_of(name, header)
                raw = _dumps(_with_metadata(header, metadata))
            elif info.filename.startswith("samples/") and info.filename.endswith(".json"):
                sample = _json(raw, where)
                key = (str(sample.get("id")), sample.get("epoch", 1)) \
                    if isinstance(sample, dict) else None
                if key in wanted:
                    added[key] = wanted.pop(key)
                    raw = _dumps(_add(sample, added[key], where, events=True))
            elif info.filename == "summaries.json":
                raw = _summaries(raw, where, {**wanted, **added})
            entry = zipfile.ZipInfo(info.filename, date_time=info.date_time)
            entry.compress_type = zipfile.ZIP_DEFLATED
            entry.external_attr = info.external_attr
            written.writestr(entry, raw)
    return buffer.getvalue()


def _summaries(raw: bytes, where: str, scores: dict) -> bytes:
    """summaries.json (a list of sample summaries) with the added scores in their entries."""
    summaries = _json(raw, where)
    if not isinstance(summaries, list):
        return raw
    for summary in summaries:
        if isinstance(summary, dict):
            key = (str(summary.get("id")), summary.get("epoch", 1))
            if key in scores:
                _add(summary, scores[key], where, events=False)
    return _dumps(summaries)
