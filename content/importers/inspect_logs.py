"""inspect-ai evaluation logs (`.json` and `.eval`) turned into a `blindjudge.run/2` bundle.

Pure: no Django; the standard library and backports.zstd (the zipfile and Zstandard of Python
3.14, for the `.eval` members inspect-ai writes).

What a log holds (inspect_ai `src/inspect_ai/log/_log.py`, `_recorders/eval.py`):
- a `.json` log is one EvalLog object: `eval` (`task`, `model`, `scorers`, `model_roles`, …) and
  `samples` (each `id`, `epoch`, `input`, `target`, `output`, `scores`, `events`, …);
- an `.eval` log is a zip: `header.json` (the EvalLog without samples; a log still running has
  only `_journal/start.json`, read instead), one `samples/<id>_epoch_<n>.json` per sample,
  `summaries.json`, `reductions.json` and `_journal/…` (not needed here). Its members are
  deflated (logs of 2024-25) or, since inspect-ai 0.3.x of early 2026, Zstandard (zip method 93).
  A sample may instead be chunked (`_recorders/chunked/format.py`): a folder
  `samples/<id>_epoch_<n>/` of its shell `sample.json` and sequences of JSON lists (`attachments/`,
  `events/`, `messages/`, `calls/`, each `<first index>.json`); the shell, its attachments and
  (for a grader) its events are read. Members under `samples/` in neither layout refuse the log,
  in one line.
A zip is read member by member with hard caps (MAX_MEMBERS, MAX_MEMBER_BYTES, MAX_TOTAL_BYTES,
MAX_RATIO for deflate, MAX_ZSTD_RATIO for zstd), each member streamed in pieces of at most CHUNK
bytes and cut off at its cap, whatever sizes the zip's directory claims: a log is untrusted
bytes, and a zip bomb must cost at most the caps.

The bundle:
- one task per (eval task name, sample id): id `<task>#<id>`, title `<task> #<id>`, cluster the
  eval task name; the statement is the sample input, a string as is or chat messages rendered as a
  transcript (`--- user ---` headings, then the text; images and other non-text parts as
  `[image]`-style placeholders, tool calls as `[tool call] name(arguments)`). Format `text`: the
  input is exactly what the model was given, and markdown would reinterpret it (a `#`, `*` or
  `<tag>` in a prompt would be rendered, not shown), so the judge sees it verbatim.
- one builder per log model (`eval.model`, e.g. `openai/gpt-4o-mini`, its family from `families`);
- one copy per (task, builder): the sample at the chosen `epoch` (other epochs are counted in
  summary `epochs_ignored`); content `output.completion`, else the first choice's message text;
  format `text`, for the same reason as the statement.
- samples are joined across logs by (eval task name, sample id): a sample is kept only when every
  model that ran its eval task has it at that epoch without an `error` (summary `skipped`), so
  each task is judged across the same builders. The same (task, sample, model) in two logs is
  refused.

Truth (`truth_scorer`: the name of a scorer in `sample.scores`; None: every copy `unknown`, and
summary `truth` says so). A score's `value` maps to a truth in this order:
1. `truth_values` exact keys: the value's text (a string as is; true/false for booleans; a number
   as Python writes it, `1`, `0.5`) equal to a key, e.g. {"P": "tests_pass"};
2. `truth_values` threshold keys `>=x`, `>x`, `<=x`, `<x`, `==x` (x a number), tried in the order
   given, for numeric values only (booleans excluded), e.g. {">=0.5": "tests_pass",
   "<0.5": "tests_fail"};
3. the built-in letters and words (case-insensitive): `C`, `correct`, `1`, `true` (and the
   numbers 1, 1.0, boolean true) -> tests_pass; `I`, `incorrect`, `0`, `false` (0, 0.0, false)
   -> tests_fail; `P` (partial) and `N` (no answer) -> unknown;
4. anything else -> unknown, counted in summary `truth_unmapped` (value -> n).
Each `truth_values` value must be a run/2 truth. A dict or list value (a multi-value score) is
refused. A sample without that score is unknown (summary `truth_unscored`).

Reviews (`review_scorer`: a model-graded scorer such as `model_graded_qa`/`model_graded_fact`):
each scored sample becomes a review of its copy under the run's default condition: verdict from
the value (`C`/`correct`/`1`/`true` -> pass, `I`/`incorrect`/`0`/`false` -> fail, anything else,
`P` and `N` included -> abstain), reason = the score's `explanation`. The reviewer is the grader
model, found in this order: the scorer's own `model` option in `eval.scorers`; the eval's
`model_roles["grader"]`; the `model` events inside the scorer's span (or step) in the sample's
events (the model that actually graded, e.g. the evaluated model when no grader was bound); the
`model` of the grading messages in the score's `metadata.grading`. Where the logs name none of
these, `grader` (`--grader MODEL`, for a finished log that cannot be re-run) is the reviewer, its
family found as any model's (the built-in table or `--family`); without it they are refused in
one line for all such samples (what to do: `--grader`, or inspect's `--model-role grader=MODEL`).
Where a log names its grader, `grader` must be that one (one line otherwise). Several grader
models for one score are refused (their grades were combined: no single reviewer).

What reading costs is bounded by the upload (every log of one conversion together), not only by
its bytes: each parsed document (a `.json` log, a `.eval` member) is pre-counted
(content.bundle.json_values_at_least) and refused past MAX_JSON_VALUES values, the upload past
MAX_UPLOAD_JSON_VALUES values or MAX_SAMPLES samples; each sample is reduced, as soon as it is
parsed, to the few fields the conversion reads (its texts rendered, its named scores, its grader
models) and its parsed object dropped before the next is read; and every text built from the
logs (statements, copies, review reasons, `attachment://` references expanded) is counted against
one budget of `max_built_chars` characters for the upload: the conversion stops at the limit,
before building more.

Errors: `file: field: message`, `file:line: …` for JSON syntax, and for a zip member
`file.eval:samples/3_epoch_1.json: field: message`; every problem is collected (but a limit of the
upload stops the conversion where it is passed), and nothing but ConversionError ever leaves
`convert`.
"""

from __future__ import annotations

import io
import json
import re
import zlib
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

# Python 3.14's zipfile and zstd, for 3.11: inspect-ai writes every member with Zstandard (zip
# method 93), which the standard library's zipfile of 3.11 cannot read.
from backports import zstd
from backports.zstd import zipfile

from content.bundle import FORMAT_2, MAX_JSON_VALUES, json_values_at_least
from content.importers.common import (
    ConversionError,
    Families,
    Imported,
    Problems,
    Source,
    place,
    version_refusal,
)
from content.truth import COPY_TRUTHS

# Zip caps: far above any real log's (the largest test log in inspect_ai is under 1 MB, a long
# agentic run some hundreds of MB), and each bounds what one hostile file can cost.
MAX_MEMBERS = 20_000
MAX_MEMBER_BYTES = 256 * 1024 * 1024
MAX_TOTAL_BYTES = 1024 * 1024 * 1024
MAX_RATIO = 200  # JSON compresses 5-20x under deflate; a bomb 1000x (deflate's most)
# Zstandard (zip method 93, what inspect-ai writes since 0.3.x of early 2026) compresses far
# harder: its window is megabytes where deflate's is 32 KB. Measured: inspect's logs 4-11:1 and
# seed000's reviews 26:1 (deflate about the same), but one 40 KB text repeated with small changes
# 100 times (an agent re-reading a file it edits) 437:1 (deflate 6:1), linearly more with more
# repeats; a run of one byte costs zstd a few bytes per 128 KB block, so its bombs reach 32,000:1
# (64 MB of spaces; deflate's most is 1,000:1). A member is refused once it has given more than
# this many bytes per compressed byte: 1 GiB of spaces (32 KB compressed) stops at 64 MB read. A
# bomb kept under the ratio stops at MAX_MEMBER_BYTES, MAX_TOTAL_BYTES and the child process's
# memory limit (judging.importing), like any large log.
MAX_ZSTD_RATIO = 2000
RATIO_FLOOR = 1024 * 1024  # below this, a member's ratio costs nothing worth refusing
CHUNK = 1024 * 1024
# Every text built from one upload's logs (statements, copies, review reasons: `attachment://`
# references expanded where they stand) counts against one budget of this many characters, unless
# the caller gives another (judging.importing gives BLINDJUDGE_MAX_BUNDLE_BYTES: a character is at
# least a byte of the bundle, so texts past it could never be imported). 10,000 messages naming one 100 KB
# attachment made a 1 GB text from a 75 KB log (issue 25 item 2); now the conversion stops there.
MAX_BUILT_CHARS = 64 * 1024 * 1024
# An upload (every log of one conversion together) holds at most this many samples, and its parsed
# documents at most this many JSON values together (one document, a .json log or a .eval member,
# at most content.bundle.MAX_JSON_VALUES): far above a real evaluation's (inspect's largest
# benchmarks run some tens of thousands of samples; a sample of an agentic run some tens of
# thousands of values), and each bounds the time and memory one hostile upload can cost.
MAX_SAMPLES = 100_000
MAX_UPLOAD_JSON_VALUES = 32_000_000

PASS_WORDS = {"c", "correct", "1", "true", "1.0"}
FAIL_WORDS = {"i", "incorrect", "0", "false", "0.0"}
THRESHOLD = re.compile(r"^\s*(>=|<=|==|>|<)\s*(-?\d+(?:\.\d+)?(?:[eE]-?\d+)?)\s*$")


class _Refused(Exception):  # noqa: N818 - an outcome, not a fault
    """A problem that ends reading one file (already added to Problems)."""


class _Stop(Exception):  # noqa: N818 - an outcome, not a fault
    """A limit of the whole upload was passed (already added to Problems): nothing more is read."""


class _TooLong(Exception):  # noqa: N818 - an outcome the conversion reports by place
    """A text built from the logs would pass what is left of the upload's budget."""


class _Budget:
    """The characters the upload's texts may still take (see MAX_BUILT_CHARS)."""

    def __init__(self, limit: int):
        self.limit = self.left = limit

    def check(self, chars: int) -> None:
        if chars > self.left:
            raise _TooLong

    def spend(self, chars: int) -> None:
        self.check(chars)
        self.left -= chars


_MISSING = "missing"  # a sample's `output` absent or null (`_Sample.content`)
_BAD = "bad"  # `scores` not an object, or one score not an object with a value


@dataclass
class _Sample:
    """What the conversion reads of one sample; the parsed sample itself is dropped at once.
    Texts are rendered only for a sample at the chosen epoch that ended without an error."""

    where: str  # the place errors cite
    id: object  # as the log gives it (checked by _sample_id)
    epoch: object
    error: bool
    statement: str | None = None  # the input rendered (None: missing or not a string or chat)
    content: str | None = None  # the output's text (None: no completion; _MISSING: no output)
    scores: dict | str | None = None  # {named scorer: _BAD or {value, reason, grading}}, _BAD
    event_graders: list[str] = field(default_factory=list)  # models in the review scorer's events
    group: str | None = None  # metadata[--cluster KEY] as text; None: the sample has no such key


@dataclass
class _Log:
    source: Source
    task: str
    model: str
    status: object
    scorers: set[str] = field(default_factory=set)  # declared in eval.scorers or scored
    declared_graders: list[str] = field(default_factory=list)  # the review scorer's model option
    role_graders: list[str] = field(default_factory=list)  # eval.model_roles["grader"]
    samples: list[_Sample] = field(default_factory=list)


@dataclass
class _Reading:
    """One conversion's reading: its options, the upload's limits and what they have used."""

    problems: Problems
    epoch: object
    truth_scorer: str | None
    review_scorer: str | None
    budget: _Budget
    values: int = 0
    samples: int = 0
    statements: dict = field(default_factory=dict)  # (task, sample id) -> the statements held
    cluster_key: str | None = None  # --cluster KEY: a sample metadata key grouping the tasks


# --- reading -------------------------------------------------------------------------------------

def _loads(raw: bytes, where: str, reading: _Reading):
    """One JSON document, its values pre-counted against the document's and the upload's caps."""
    problems = reading.problems
    values = json_values_at_least(raw)
    if values > MAX_JSON_VALUES:
        problems.add(where, f"holds at least {values:,} JSON values; at most {MAX_JSON_VALUES:,} "
                     "are read from one document (a .json log, a sample of a .eval log): "
                     "split the log")
        raise _Refused
    reading.values += values
    if reading.values > MAX_UPLOAD_JSON_VALUES:
        problems.add(where, f"the logs given hold more than {MAX_UPLOAD_JSON_VALUES:,} JSON values "
                     "together; split them into several imports")
        raise _Stop
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        problems.add(where, f"not UTF-8 text (byte {exc.start})")
        raise _Refused from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        problems.add(f"{where}:{exc.lineno}", f"not JSON: {exc.msg} (column {exc.colno})")
    except (RecursionError, ValueError) as exc:
        problems.add(where, f"not JSON: {type(exc).__name__}")
    raise _Refused


class _ZstdFrames:
    """A Zstandard decompressor that reads on across frames: inspect-ai ends a frame every 200 MiB
    of a member's input (inspect_ai/_util/zipfile.py, for its viewer's decoder), and the zipfile's
    own decompressor stops at the end of the first, so a member past 200 MiB would be cut there
    (and refused by its CRC). Each call decompresses at most `max_length` bytes, as the zipfile
    asks, so a member is streamed in bounded pieces whatever it expands to."""

    eof = False  # the member's end is where its compressed bytes end (the zipfile's count)

    def __init__(self):
        self._frame = zstd.ZstdDecompressor()

    @property
    def needs_input(self) -> bool:
        if self._frame.eof:
            return not self._frame.unused_data
        return self._frame.needs_input

    def decompress(self, data: bytes, max_length: int = -1) -> bytes:
        if self._frame.eof:  # the next frame starts with what the last one left over
            data = self._frame.unused_data + data
            self._frame = zstd.ZstdDecompressor()
            if not data:
                return b""
        return self._frame.decompress(data, max_length)


# A damaged member or zip: a bad CRC, a corrupt deflate or zstd stream, an unknown method or
# encryption, a truncated file.
_ZIP_FAULTS = (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, zstd.ZstdError,
               NotImplementedError, RuntimeError, OSError, EOFError, ValueError, OverflowError)


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, where: str, budget: list[int],
                 problems: Problems) -> bytes:
    """The member's bytes, streamed and cut off at its caps whatever its header claims: every
    read decompresses at most CHUNK bytes (deflate and zstd alike), and the member is refused
    once it passes its size cap, what is left of the log's, or its method's ratio."""
    limit = min(MAX_MEMBER_BYTES, budget[0])
    zstandard = info.compress_type == zipfile.ZIP_ZSTANDARD
    ratio = MAX_ZSTD_RATIO if zstandard else MAX_RATIO
    out = bytearray()
    try:
        with zf.open(info) as stream:
            if zstandard:
                stream._decompressor = _ZstdFrames()  # the zipfile's own stops at a frame's end
            while True:
                chunk = stream.read(CHUNK)
                if not chunk:
                    break
                out += chunk
                if len(out) > limit:
                    problems.add(where, f"more than {limit:,} bytes uncompressed; refused "
                                 "(a log member this large is not read)")
                    raise _Refused
                if len(out) > RATIO_FLOOR and len(out) > ratio * max(info.compress_size, 1):
                    problems.add(where, f"compressed more than {ratio}:1; refused as a "
                                 "possible zip bomb")
                    raise _Refused
    except _Refused:
        raise
    except _ZIP_FAULTS as exc:
        problems.add(where, f"cannot be read from the zip: {exc}")
        raise _Refused from None
    budget[0] -= len(out)
    return bytes(out)


# inspect's chunked sample layout (inspect_ai/log/_recorders/chunked/format.py): a sample is a
# folder `samples/<id>_epoch_<n>/` holding its shell `sample.json` (the sample without its
# messages, events, attachments and metadata: id, epoch, input, target, output, scores, error),
# and flat sequences of JSON lists named by the index of their first item, `messages/<start>.json`,
# `events/<start>.json`, `calls/<start>.json`, `attachments/<start>.json` (bare strings, referred to
# as `attachment://<index>`), beside `skeleton.json`, `metadata.json`, `events/stats.json` and
# `events/uuids.json`. One log may mix it with the one-member `samples/<id>_epoch_<n>.json`.
# Read here: the shell, its attachments (texts the shell refers to) and, for the review scorer's
# grader, its events; the rest is not needed.
SHELL = "sample.json"
_UNREAD = object()  # a member refused (its problem added): read on without it
_SEQUENCE_CHUNK = re.compile(r"^(attachments|events)/(\d+)\.json$")


@dataclass
class _Chunked:
    """One chunked sample's members: its shell and the chunks read (by their first index)."""

    prefix: str  # samples/<id>_epoch_<n>
    attachments: list[tuple[int, str]] = field(default_factory=list)
    events: list[tuple[int, str]] = field(default_factory=list)


def _sample_members(names) -> tuple[list[str], list[_Chunked], list[str]]:
    """The log's samples by layout: one-member samples, chunked samples, and members under
    `samples/` in neither layout (a folder without its shell)."""
    monolith, folders = [], defaultdict(list)
    for member in names:
        if not (member.startswith("samples/") and member.endswith(".json")):
            continue
        rest = member[len("samples/"):]
        if "/" not in rest:
            monolith.append(member)
        else:
            folder, _, inner = rest.partition("/")
            folders[folder].append(inner)
    chunked, unknown = [], []
    for folder, inner in folders.items():
        prefix = f"samples/{folder}"
        if SHELL not in inner:
            unknown.extend(f"{prefix}/{name}" for name in inner)
            continue
        sample = _Chunked(prefix)
        for name in inner:
            found = _SEQUENCE_CHUNK.match(name)
            if found:
                getattr(sample, found.group(1)).append((int(found.group(2)), f"{prefix}/{name}"))
        sample.attachments.sort()
        sample.events.sort()
        chunked.append(sample)
    return monolith, chunked, sorted(unknown)


def _read_eval(source: Source, reading: _Reading) -> _Log:
    name, problems = source.name, reading.problems
    try:
        zf = zipfile.ZipFile(io.BytesIO(source.data))
        infos = zf.infolist()
    except _ZIP_FAULTS as exc:
        problems.add(name, f"not a readable .eval zip: {exc}")
        raise _Refused from None
    if len(infos) > MAX_MEMBERS:
        problems.add(name, f"{len(infos):,} zip members; at most {MAX_MEMBERS:,} are read")
        raise _Refused
    by_name = {}
    for info in infos:
        by_name.setdefault(info.filename, info)
    budget = [MAX_TOTAL_BYTES]
    header_name = "header.json" if "header.json" in by_name else "_journal/start.json"
    if header_name not in by_name:
        problems.add(name, "no header.json (nor _journal/start.json): not an inspect .eval log")
        raise _Refused
    monolith, chunked, unknown = _sample_members(by_name)
    if unknown:
        # One refusal for the log, never one confusing error per member.
        problems.add(name, f"{len(unknown):,} members under samples/ in a layout this importer "
                     f"does not read (the first: {unknown[0]}): neither a sample of its own "
                     "(samples/<id>_epoch_<n>.json) nor a chunked sample's folder with its "
                     "sample.json; nothing of this log was read")
        raise _Refused
    header = _loads(_read_member(zf, by_name[header_name], f"{name}:{header_name}", budget,
                                 problems), f"{name}:{header_name}", reading)
    if not isinstance(header, dict):
        problems.add(f"{name}:{header_name}", "expected a JSON object")
        raise _Refused
    log = _log_of(source, header, reading)
    del header
    samples = [(_member_order(member), member, None) for member in monolith]
    samples += [(_member_order(f"{sample.prefix}.json"), f"{sample.prefix}/{SHELL}", sample)
                for sample in chunked]
    samples.sort(key=lambda item: item[:2])
    _count_samples(source, len(samples), reading)

    def member_json(member: str):
        """The member parsed, or _UNREAD when it was refused (its problem added); _Refused once
        the log's bytes are spent (nothing more of it is read)."""
        where = f"{name}:{member}"
        try:
            return _loads(_read_member(zf, by_name[member], where, budget, problems), where,
                          reading)
        except _Refused:
            if budget[0] <= 0:
                raise
            return _UNREAD

    for _, member, folder in samples:
        where = f"{name}:{member}"
        data = member_json(member)
        if data is _UNREAD:
            continue
        if not isinstance(data, dict):
            problems.add(where, "expected a JSON object (a sample)")
            continue
        if folder is None:
            log.samples.append(_extract(log, data, where, reading))
        else:
            log.samples.append(_extract_chunked(log, data, where, folder, member_json, reading))
        del data  # one parsed sample at a time
    return log


def _extract_chunked(log: _Log, shell: dict, where: str, folder: _Chunked, member_json,
                     reading: _Reading) -> _Sample:
    """A chunked sample: its shell, with the texts it refers to from its attachments sequence and,
    for the review scorer's grader, the models of its events sequence."""
    wanted = shell.get("epoch", 1) == reading.epoch and not shell.get("error")
    attachments = {}
    if wanted:
        for start, member in folder.attachments:
            texts = member_json(member)
            if texts is _UNREAD:
                continue
            if not isinstance(texts, list):
                reading.problems.add(f"{log.source.name}:{member}",
                                     "expected a JSON list (of attachments)")
                continue
            for index, text in enumerate(texts, start=start):
                attachments[str(index)] = text
            del texts
    sample = _extract(log, {**shell, "attachments": attachments, "events": None}, where, reading)
    if wanted and reading.review_scorer and not (log.declared_graders or log.role_graders):
        def chunks() -> Iterator[list]:
            for _, member in folder.events:
                events = member_json(member)
                if events is _UNREAD:
                    continue
                if isinstance(events, list):
                    yield events
                else:
                    reading.problems.add(f"{log.source.name}:{member}",
                                         "expected a JSON list (of events)")
        sample.event_graders = _event_graders(chunks(), reading.review_scorer)
    return sample


def _member_order(member: str):
    # samples/<id>_epoch_<n>.json: numeric ids in number order, as inspect lists them.
    stem = member[len("samples/"):-len(".json")]
    sample_id, _, epoch = stem.rpartition("_epoch_")
    return (0, int(sample_id), "") if sample_id.isdigit() else (1, 0, sample_id), epoch


def _read_json(source: Source, reading: _Reading) -> _Log:
    problems = reading.problems
    data = _loads(source.data, source.name, reading)
    if not isinstance(data, dict):
        problems.add(source.name, "expected a JSON object (an inspect EvalLog)")
        raise _Refused
    samples = data.get("samples")
    if samples is None:
        samples = []
    if not isinstance(samples, list):
        problems.add(place(source, None, "samples"), "expected a list")
        raise _Refused
    log = _log_of(source, data, reading)
    del data
    _count_samples(source, len(samples), reading)
    for i, sample in enumerate(samples):
        samples[i] = None  # each parsed sample is dropped once read
        where = f"{source.name}: samples[{i}]"
        if not isinstance(sample, dict):
            problems.add(where, "expected a JSON object (a sample)")
            continue
        log.samples.append(_extract(log, sample, where, reading))
    return log


def _count_samples(source: Source, samples: int, reading: _Reading) -> None:
    reading.samples += samples
    if reading.samples > MAX_SAMPLES:
        reading.problems.add(source.name, f"more than {MAX_SAMPLES:,} samples in the logs given; "
                             "split them into several imports")
        raise _Stop


# The log format versions this importer was written and tested for: 2, which every committed
# log in tests/data/inspect is and inspect-ai writes (its LOG_SCHEMA_VERSION). Version 1 kept a
# sample's one score under `score`, which this importer does not read; inspect-ai itself refuses
# later ones ("Unable to read version 3 of log format"). A log without the field is read as
# inspect-ai reads it, as its current version.
LOG_FORMAT_VERSIONS = (2,)


def _log_of(source: Source, header: dict, reading: _Reading) -> _Log:
    """The log's task, model and what its `eval` says of the scorers (the rest is not kept)."""
    problems = reading.problems
    refusal = version_refusal("log format version", header.get("version", LOG_FORMAT_VERSIONS[-1]),
                              LOG_FORMAT_VERSIONS)
    if refusal:
        problems.add(place(source, None, "version"), refusal)
        raise _Refused
    evaluation = header.get("eval")
    if not isinstance(evaluation, dict):
        problems.add(place(source, None, "eval"), "missing: not an inspect log (no eval object)")
        raise _Refused
    task, model = evaluation.get("task"), evaluation.get("model")
    bad = False
    for key, value in (("eval.task", task), ("eval.model", model)):
        if not isinstance(value, str) or not value.strip():
            problems.add(place(source, None, key), "missing or not a non-empty string")
            bad = True
    if bad:
        raise _Refused
    log = _Log(source, task.strip(), model.strip(), header.get("status"))
    for scorer in evaluation.get("scorers") or []:
        if isinstance(scorer, dict) and isinstance(scorer.get("name"), str):
            log.scorers.add(scorer["name"])
    if reading.review_scorer:
        for declared in evaluation.get("scorers") or []:
            if isinstance(declared, dict) and declared.get("name") == reading.review_scorer:
                options = declared.get("options")
                if isinstance(options, dict) and _model_name(options.get("model")):
                    log.declared_graders = sorted(set(_model_name(options.get("model"))))
                    break
        roles = evaluation.get("model_roles")
        if isinstance(roles, dict):
            log.role_graders = _model_name(roles.get("grader"))
    return log


def _read_log(source: Source, reading: _Reading) -> _Log:
    is_zip = source.data[:4] == b"PK\x03\x04" or source.name.lower().endswith(".eval")
    log = (_read_eval if is_zip else _read_json)(source, reading)
    if not log.samples:
        reading.problems.add(place(source, None, "samples"),
                             f"the log has no samples (status {log.status!r}); nothing to judge")
        raise _Refused
    return log


def _extract(log: _Log, data: dict, where: str, reading: _Reading) -> _Sample:
    """The few fields of a parsed sample that the conversion reads, its texts built within the
    upload's budget (a text that would pass it stops the conversion: _Stop)."""
    sample = _Sample(where, data.get("id"), data.get("epoch", 1), bool(data.get("error")))
    scores = data.get("scores")
    if isinstance(scores, dict):
        log.scorers.update(k for k in scores if isinstance(k, str))
    if sample.epoch != reading.epoch or sample.error:
        return sample  # counted, never shown: nothing more is read
    if reading.cluster_key:
        metadata = data.get("metadata")
        value = metadata.get(reading.cluster_key) if isinstance(metadata, dict) else None
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            sample.group = str(value)
    attachments = data.get("attachments")
    attachments = attachments if isinstance(attachments, dict) else {}
    budget = reading.budget
    field_name = "input"
    try:
        raw_input = data.get("input")
        statement = (_attachment(raw_input, attachments) if isinstance(raw_input, str)
                     else _transcript(raw_input, attachments, budget)
                     if isinstance(raw_input, list) else None)
        if statement is not None:
            sample.statement = _held_statement(log, sample, statement, reading)
        field_name = "output"
        if "output" not in data or data["output"] is None:
            sample.content = _MISSING
        else:
            sample.content = _completion(data["output"], attachments, budget)
            if sample.content is not None:
                budget.spend(len(sample.content))
        field_name = "scores"
        if scores is not None:
            sample.scores = _scores(scores, attachments, reading) \
                if isinstance(scores, dict) else _BAD
    except _TooLong:
        reading.problems.add(f"{where}: {field_name}", "the texts built from the logs given (their "
                             f"attachments expanded) pass {budget.limit:,} characters here: more "
                             "than a run may hold; split the logs into several imports")
        raise _Stop from None
    if reading.review_scorer and isinstance(data.get("events"), list):
        sample.event_graders = _event_graders([data["events"]], reading.review_scorer)
    return sample


def _held_statement(log: _Log, sample: _Sample, statement: str, reading: _Reading) -> str:
    """The statement, counted once per (task, sample id): every model's log of a task repeats
    its input, and the run shows it once."""
    held = reading.statements.setdefault((log.task, str(sample.id)), [])
    for same in held:
        if same == statement:
            return same
    reading.budget.spend(len(statement))
    held.append(statement)
    return statement


def _scores(scores: dict, attachments: dict, reading: _Reading) -> dict:
    """The named scorers' scores (value, reason, grading models); the rest is not kept."""
    out = {}
    for scorer in {reading.truth_scorer, reading.review_scorer} - {None}:
        if scorer not in scores:
            continue
        score = scores[scorer]
        if not isinstance(score, dict) or "value" not in score:
            out[scorer] = _BAD
            continue
        value = score["value"]
        kept = {"value": [] if isinstance(value, (dict, list)) else value, "reason": None,
                "grading": []}
        if scorer == reading.review_scorer:
            explanation = score.get("explanation")
            if isinstance(explanation, str) and explanation:
                kept["reason"] = _attachment(explanation, attachments)
                reading.budget.spend(len(kept["reason"]))
            metadata = score.get("metadata")
            grading = metadata.get("grading") if isinstance(metadata, dict) else None
            if isinstance(grading, list):
                kept["grading"] = sorted({m for message in grading if isinstance(message, dict)
                                          and message.get("role") == "assistant"
                                          for m in _model_name(message.get("model"))})
        out[scorer] = kept
    return out


def _event_graders(chunks: Iterable[list], scorer: str) -> list[str]:
    """The models of the `model` events inside the scorer's span (or step); the events come in
    order, in one list (a sample of its own) or several (a chunked sample's events sequence)."""
    models, inside, span = set(), False, None
    for event in (event for events in chunks for event in events):
        if not isinstance(event, dict):
            continue
        kind = event.get("event")
        if kind == "span_begin" and event.get("type") == "scorer" and event.get("name") == scorer:
            inside, span = True, event.get("id")
        elif kind == "span_end" and inside and event.get("id") == span:
            inside = False
        elif kind == "step" and event.get("type") == "scorer" and event.get("name") == scorer:
            inside = event.get("action", "begin") == "begin"
        elif kind == "model" and inside:
            models.update(_model_name(event.get("model")))
    return sorted(models)


# --- rendering -----------------------------------------------------------------------------------

def _attachment(text: str, attachments: dict) -> str:
    # .eval logs store long texts once, as attachment://<hash> references. The text returned is
    # the attachment itself (nothing copied): its caller counts it against the budget.
    if text.startswith("attachment://"):
        found = attachments.get(text[len("attachment://"):])
        if isinstance(found, str):
            return found
    return text


def _content_text(content, attachments: dict, budget: _Budget, used: int = 0) -> str | None:
    """A message's content as text: a string, or its text parts with placeholders for the rest.
    Each part is measured as it is expanded (`used`: characters already taken by the text this
    one is part of): past the budget, _TooLong, before anything is joined."""
    if isinstance(content, str):
        text = _attachment(content, attachments)
        budget.check(used + len(text))
        return text
    if not isinstance(content, list):
        return None
    parts = []
    for part in content:
        if isinstance(part, str):
            parts.append(_attachment(part, attachments))
        elif isinstance(part, dict):
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("text"), str):
                parts.append(_attachment(part["text"], attachments))
            elif kind == "reasoning":
                continue  # the model's hidden reasoning is not what it answered
            else:
                parts.append(f"[{kind if isinstance(kind, str) else 'content'}]")
        else:
            continue
        # The parts are references to the attachments (nothing copied yet): measured before joined.
        used += len(parts[-1]) + 1
        budget.check(used)
    return "\n".join(parts)


def _tool_calls(message: dict) -> list[str]:
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return []
    out = []
    for call in calls:
        if isinstance(call, dict):
            name = call.get("function") if isinstance(call.get("function"), str) else "tool"
            try:
                args = json.dumps(call.get("arguments"), ensure_ascii=False, sort_keys=True)
            except (TypeError, ValueError):
                args = "…"
            out.append(f"[tool call] {name}({args})")
    return out


def _transcript(messages: list, attachments: dict, budget: _Budget) -> str | None:
    """The chat as one text, each message under its role; stops (raising _TooLong) once it
    would pass what is left of the budget, before building more."""
    blocks, total = [], 0
    for message in messages:
        if not isinstance(message, dict):
            return None
        role = message.get("role") if isinstance(message.get("role"), str) else "message"
        text = _content_text(message.get("content"), attachments, budget, total)
        if text is None:
            return None
        lines = [text, *_tool_calls(message)]
        total += sum(len(line) + 1 for line in lines) + len(role) + 10
        budget.check(total)
        blocks.append(f"--- {role} ---\n" + "\n".join(line for line in lines if line))
    return "\n\n".join(blocks)


def _completion(output, attachments: dict, budget: _Budget) -> str | None:
    if not isinstance(output, dict):
        return None
    completion = output.get("completion")
    if isinstance(completion, str) and completion:
        return _attachment(completion, attachments)
    choices = output.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        if isinstance(message, dict):
            text = _content_text(message.get("content"), attachments, budget)
            if text is not None:
                lines = [text, *_tool_calls(message)]
                budget.check(sum(len(line) + 1 for line in lines))
                return "\n".join(line for line in lines if line)
    if isinstance(completion, str) or choices == []:
        return ""  # the model produced nothing: an empty copy, still judged
    return None


# --- scores --------------------------------------------------------------------------------------

def _value_text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _default_verdict(value) -> str | None:
    """'pass', 'fail' or None from the built-in letters, words and 0/1."""
    if isinstance(value, bool):
        return "pass" if value else "fail"
    if isinstance(value, (int, float)):
        return "pass" if value == 1 else "fail" if value == 0 else None
    if isinstance(value, str):
        word = value.strip().lower()
        return "pass" if word in PASS_WORDS else "fail" if word in FAIL_WORDS else None
    return None


@dataclass
class _TruthMap:
    exact: dict[str, str]
    thresholds: list[tuple[str, float, str]]

    def truth(self, value) -> str | None:
        text = _value_text(value)
        if text in self.exact:
            return self.exact[text]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            for op, bound, truth in self.thresholds:
                if {">=": value >= bound, ">": value > bound, "<=": value <= bound,
                        "<": value < bound, "==": value == bound}[op]:
                    return truth
        verdict = _default_verdict(value)
        if verdict is not None:
            return "tests_pass" if verdict == "pass" else "tests_fail"
        if isinstance(value, str) and value.strip().upper() in ("P", "N"):
            return "unknown"
        return None


def _truth_map(truth_values, problems: Problems) -> _TruthMap:
    exact, thresholds = {}, []
    if truth_values is None:
        return _TruthMap(exact, thresholds)
    if not isinstance(truth_values, dict):
        problems.add("truth_values", "expected a mapping of score value to truth")
        return _TruthMap(exact, thresholds)
    for key, truth in truth_values.items():
        if truth not in COPY_TRUTHS:
            problems.add("truth_values", f"{key!r}: {truth!r} is not a truth; use one of "
                         + ", ".join(COPY_TRUTHS))
            continue
        match = THRESHOLD.match(str(key))
        if match:
            thresholds.append((match.group(1), float(match.group(2)), truth))
        else:
            exact[str(key)] = truth
    return _TruthMap(exact, thresholds)


def _score(sample: _Sample, scorer: str, problems: Problems):
    """(found, score) for `scorer` in the sample; a malformed one is a problem."""
    scores = sample.scores
    if scores is None:
        return False, None
    if scores is _BAD:
        problems.add(f"{sample.where}: scores", "expected an object of scorer name -> score")
        return False, None
    if scorer not in scores:
        return False, None
    score = scores[scorer]
    if score is _BAD:
        problems.add(f"{sample.where}: scores.{scorer}", "expected a score object with a value")
        return False, None
    if isinstance(score["value"], (dict, list)):
        problems.add(f"{sample.where}: scores.{scorer}.value",
                     "a multi-value score; name a scorer with one value")
        return False, None
    return True, score


def _model_name(value) -> list[str]:
    if isinstance(value, str) and value.strip():
        return [value.strip()]
    if isinstance(value, dict):  # a ModelConfig: {"model": ..., "config": ...}
        return _model_name(value.get("model"))
    if isinstance(value, list):
        return [m for v in value for m in _model_name(v)]
    return []


def _grader(log: _Log, sample: _Sample, score: dict) -> list[str]:
    """The grader model(s) the log names for the review score (see the module docstring)."""
    return log.declared_graders or log.role_graders or sample.event_graders or score["grading"]


# --- conversion ----------------------------------------------------------------------------------

def _grader_problems(problems: Problems, scorer: str | None, grader: str | None,
                     ungraded: Counter[str], contradicted: Counter[str]) -> None:
    """One line for every review score whose grader the logs do not name, one for those whose
    grader they name otherwise than --grader: a real log of 136 samples in four models' logs said
    it 544 times."""
    if ungraded:
        logs = list(ungraded)
        where = ", ".join(logs[:3]) + (f" and {len(logs) - 3} other logs" if len(logs) > 3 else "")
        samples = sum(ungraded.values())
        problems.add(f"{where}: scores.{scorer}",
                     f"the {'log does' if len(logs) == 1 else 'logs do'} not name the grader "
                     f"model of {samples:,} sample{'s' if samples > 1 else ''} (no model option "
                     "in eval.scorers, no grader in eval.model_roles, no model event in the "
                     "scorer's events, no model in metadata.grading); name it with --grader "
                     "MODEL (and its organisation with --family MODEL=ORG if it is not a known "
                     "model), or re-run inspect with --model-role grader=MODEL")
    for named, samples in sorted(contradicted.items()):
        problems.add("--grader", f"the logs name {named} as the grader of {samples:,} "
                     f"sample{'s' if samples > 1 else ''}' {scorer} scores, not {grader}: "
                     "--grader names the grader only where the logs do not; leave it out")


def _sample_id(sample: _Sample, problems: Problems):
    sample_id = sample.id
    if isinstance(sample_id, bool) or not isinstance(sample_id, (str, int)) or sample_id == "":
        problems.add(f"{sample.where}: id", "missing or not a string or integer")
        return None
    return str(sample_id)


def convert(*, logs: list[Source], truth_scorer: str | None, truth_values: dict[str, str] | None,
            review_scorer: str | None, epoch: int = 1, families: Families,
            run_name: str = "", max_built_chars: int = MAX_BUILT_CHARS,
            grader: str | None = None, cluster_key: str | None = None) -> Imported:
    """The logs as a run/2 bundle; `max_built_chars` bounds every text built from them together
    (MAX_BUILT_CHARS); `grader` is the review scorer's grader model where the logs name none."""
    try:
        return _convert(logs=logs, truth_scorer=truth_scorer, truth_values=truth_values,
                        review_scorer=review_scorer, epoch=epoch, families=families,
                        run_name=run_name, max_built_chars=max_built_chars, grader=grader,
                        cluster_key=cluster_key)
    except ConversionError:
        raise
    except Exception as exc:  # noqa: BLE001 - the contract: nothing but ConversionError leaves
        raise ConversionError([f"logs: could not be converted ({type(exc).__name__}: {exc})"]) \
            from exc


def _convert(*, logs, truth_scorer, truth_values, review_scorer, epoch, families, run_name,
             max_built_chars, grader, cluster_key=None):
    problems = Problems()
    if not logs:
        problems.add("logs", "no log given")
        problems.raise_if_any()
    given_grader = grader.strip() if isinstance(grader, str) and grader.strip() else None
    if given_grader and not review_scorer:
        problems.add("--grader", "given without a review scorer; name one with --review-scorer")
    if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:
        problems.add("epoch", f"{epoch!r} is not an epoch (1, 2, …)")
    truth_map = _truth_map(truth_values, problems)
    if truth_values and not truth_scorer:
        problems.add("truth_values", "given without a truth scorer; name one")

    reading = _Reading(problems, epoch, truth_scorer, review_scorer, _Budget(max_built_chars),
                       cluster_key=cluster_key)
    ungrouped = 0  # samples kept whose metadata has no --cluster key
    read: list[_Log] = []
    for source in logs:
        try:
            read.append(_read_log(source, reading))
        except _Refused:
            continue
        except _Stop:
            problems.raise_if_any()
    for log in read:
        present = sorted(log.scorers)
        for role, name in (("truth scorer", truth_scorer), ("review scorer", review_scorer)):
            if name and name not in present:
                problems.add(place(log.source, None, "scores"),
                             f"no scorer {name!r} (the {role}); scorers present: "
                             + (", ".join(present) or "none"))
    problems.raise_if_any()

    # Which models ran each eval task: a sample is kept only when all of them have it.
    models_of_task: dict[str, set[str]] = defaultdict(set)
    for log in read:
        models_of_task[log.task].add(log.model)

    chosen: dict[tuple[str, str, str], tuple[_Log, _Sample]] = {}
    skipped: Counter[str] = Counter()
    epochs_ignored = 0
    for log in read:
        for sample in log.samples:
            sample_id = _sample_id(sample, problems)
            if sample_id is None:
                continue
            sample_epoch = sample.epoch
            if sample_epoch != epoch:
                epochs_ignored += 1
                continue
            if sample.error:
                # A sample that crashed has no answer worth judging; its empty output would
                # read as the model's.
                skipped["sample ended in an error"] += 1
                continue
            key = (log.task, sample_id, log.model)
            if key in chosen:
                problems.add(sample.where, f"{log.task} #{sample_id} epoch {epoch} by "
                             f"{log.model} is also in {chosen[key][1].where}; give each once")
                continue
            chosen[key] = (log, sample)

    by_task: dict[tuple[str, str], dict[str, tuple[_Log, _Sample]]] = defaultdict(dict)
    for (task, sample_id, model), pair in chosen.items():
        by_task[(task, sample_id)][model] = pair
    kept = []
    for (task, sample_id), by_model in by_task.items():
        if set(by_model) != models_of_task[task]:
            skipped["sample not run by every model of its task"] += 1
            continue
        kept.append((task, sample_id, by_model))
    if not kept:
        problems.add("logs", f"no sample at epoch {epoch} run by every model of its task")
    kept.sort(key=lambda item: (item[0], _member_order(f"samples/{item[1]}_epoch_.json")))

    tasks, copies, reviews = [], [], []
    builders: dict[str, dict] = {}
    reviewers: dict[str, dict] = {}
    truth_unmapped: Counter[str] = Counter()
    truth_unscored = 0
    # The review scores whose grader the logs do not name, by log; those whose grader the logs
    # name otherwise than --grader, by the models named: each said once, never once per sample.
    ungraded: Counter[str] = Counter()
    contradicted: Counter[str] = Counter()
    places: dict[str, str] = {}  # Imported.places: a sample's place is `log: samples[i]` or
    # `file.eval:samples/<id>_epoch_<n>.json`
    for task, sample_id, by_model in kept:
        task_id = f"{task}#{sample_id}"
        statement = None
        statement_where = None
        group = None
        for model in sorted(by_model):
            log, sample = by_model[model]
            if statement is None:
                statement, statement_where = sample.statement, sample.where
                group = sample.group
                if statement is None:
                    problems.add(f"{sample.where}: input",
                                 "missing or not a string or a list of chat messages")
                elif not statement.strip():
                    problems.add(f"{sample.where}: input", "empty: no statement to show")
            content = sample.content
            if content is _MISSING:
                problems.add(f"{sample.where}: output", "missing: the sample has no output")
                continue
            if content is None:
                problems.add(f"{sample.where}: output",
                             "no completion and no choice with a message")
                continue
            if model not in builders:
                family = families.of(model)
                builders[model] = {"id": model, "model": model, "family": family or "?"}
            truth = "unknown"
            if truth_scorer:
                found, score = _score(sample, truth_scorer, problems)
                if not found:
                    truth_unscored += 1
                else:
                    mapped = truth_map.truth(score["value"])
                    if mapped is None:
                        truth_unmapped[_value_text(score["value"])] += 1
                    truth = mapped or "unknown"
            copy_id = f"{task_id}/{model}"
            places[f"copies[{len(copies)}]"] = sample.where
            places[f"copies[{len(copies)}].content"] = f"{sample.where}: output"
            copies.append({"id": copy_id, "task": task_id, "builder": model, "format": "text",
                           "content": content, "truth": truth})
            if review_scorer:
                found, score = _score(sample, review_scorer, problems)
                if not found:
                    skipped["copy not scored by the review scorer"] += 1
                    continue
                graders = _grader(log, sample, score)
                if not graders and given_grader:
                    graders = [given_grader]  # the host's word for a finished log
                elif not graders:
                    ungraded[log.source.name] += 1
                    continue
                elif given_grader and graders != [given_grader]:
                    contradicted[", ".join(graders)] += 1
                    continue
                if len(graders) > 1:
                    problems.add(f"{sample.where}: scores.{review_scorer}",
                                 f"graded by several models ({', '.join(graders)}), their "
                                 "grades combined: not one reviewer")
                    continue
                grader = graders[0]
                if grader not in reviewers:
                    family = families.of(grader)
                    reviewers[grader] = {"id": grader, "model": grader, "family": family or "?"}
                verdict = _default_verdict(score["value"]) or "abstain"
                review = {"reviewer": grader, "copy": copy_id, "verdict": verdict}
                if score["reason"]:
                    review["reason"] = score["reason"]
                places[f"reviews[{len(reviews)}]"] = sample.where
                places[f"reviews[{len(reviews)}].reason"] = \
                    f"{sample.where}: scores.{review_scorer}.explanation"
                reviews.append(review)
        if statement:
            places[f"tasks[{len(tasks)}]"] = statement_where
            places[f"tasks[{len(tasks)}].statement"] = f"{statement_where}: input"
            if cluster_key and group is None:
                ungrouped += 1
            tasks.append({"id": task_id, "statement": statement, "format": "text",
                          "title": f"{task} #{sample_id}",
                          "cluster": (group or "") if cluster_key else task})
    ungraded = Counter({s.name: ungraded[s.name] for s in logs if s.name in ungraded})  # given order
    _grader_problems(problems, review_scorer, given_grader, ungraded, contradicted)
    if ungrouped:
        problems.add("--cluster", f'{ungrouped} samples have no metadata "{cluster_key}" (a '
                     "sample metadata key, or task, none or eval)")
    families.check(problems)
    problems.raise_if_any()

    names = sorted({task for task, _, _ in kept})
    bundle = {
        "format": FORMAT_2,
        "run": {"name": run_name.strip() or "inspect: " + ", ".join(names)},
        "tasks": tasks,
        "builders": list(builders.values()),
        "copies": copies,
    }
    if reviewers:
        bundle["reviewers"] = list(reviewers.values())
        bundle["reviews"] = reviews
    summary = {
        "tasks": len(tasks),
        "builders": dict(Counter(c["builder"] for c in copies)),
        "copies_by_truth": dict(Counter(c["truth"] for c in copies)),
        "reviews": dict(Counter(f"{r['reviewer']} / clean" for r in reviews)),
        "skipped": dict(skipped),
        "logs": len(read),
        "epoch": epoch,
        "epochs_ignored": epochs_ignored,
        "truth": (f"from scorer {truth_scorer!r}" if truth_scorer
                  else "no truth scorer named: every copy's truth is unknown"),
        "truth_unmapped": dict(truth_unmapped),
        "truth_unscored": truth_unscored,
    }
    return Imported(bundle=bundle, summary=summary, places=places)
