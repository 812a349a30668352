"""Run bundles (formats ``blindjudge.run/1`` and ``blindjudge.run/2``): whole-bundle validation,
seal checks, run manifest, and the one normalised shape the importer writes from.

Pure: no Django, no database. ``validate_bundle`` checks a bundle's raw bytes completely before
anything is written and either returns a ``ValidatedBundle`` or raises ``BundleError`` holding every
problem found, each naming its place (``copies[3].builder: unknown builder "b9"``). It never raises
anything else, whatever the bytes. The published structural contracts are
``content/schemas/run-bundle-1.schema.json`` and ``run-bundle-2.schema.json`` (JSON Schema draft
2020-12; ``schema(format)``), documented field by field in docs/bundle-format.md; the rules a
schema cannot express are checked here:

- ids unique within builders, copies, reviewers, findings (and tasks, run/2);
- every reference names a record: ``copies[].builder``, ``reviews[].reviewer``, ``reviews[].copy``,
  ``findings[].copy``, ``findings[].raised_by[]`` (and ``copies[].task``, run/2);
- ``verdict_patterns`` (the host's, for the content seal check): each name a label used by no
  built-in pattern and no other entry, each pattern a regex RE2 accepts (content.content_verdicts);
- run/1: a reviewer reviews a copy at most once; a ``raised_by`` id names a reviewer (it need not
  have reviewed the copy: bundles written that way were accepted and stay so);
- run/2: a reviewer reviews a copy at most once per condition (a review without one is under
  ``run.default_condition``); every ``raised_by`` entry names a review that exists, of that
  finding's copy, by that reviewer, under that condition (a bare id: the default condition), and
  no two entries of one finding name the same review. A finding is raised *in a review*: the
  report attributes it to that review's condition, so one with no such review is refused;
- run/2 ``comparisons``: each names a reviewer and two copies that exist (``first``, ``second``:
  the order the reviewer saw them), two different copies of one task by two different builders
  (a comparison compares builders); a reviewer compares the same two copies in the same order at
  most once per condition (the other order is another comparison);
- ids that would give two records one manifest key (only possible with ``/`` in ids) are refused;
- no string holds a NUL character or a lone surrogate; every text within its limit: the copy's
  content `max_copy_bytes`, every other text the `TextLimits` passed in (content/limits.py; the
  product's come from settings).

Explicit ``null`` means absent, everywhere, in both formats: the schemas allow null wherever a
field is optional, and ``ValidatedBundle.data`` drops it. A null in a required field is an error
naming the place (``reviews[0].reason: expected a string, got null``).

The error list is capped (`max_errors`, default 100): past the cap the validator stops writing
messages and only counts them, and the last line says how many more there were
(`…and 999,900 more problems; only the first 100 are listed`). A million unknown keys cost the
counting, never a million messages.

Positions in messages: ``at byte N`` and ``at character N`` are 0-based offsets (bytes into the
raw file, code points into the string); ``line L column C`` of malformed JSON is 1-based.

``ValidatedBundle.data``, the normalised bundle (one shape for both formats; ``format`` keeps the
input's format string, ``original`` the parsed bundle exactly as it appeared)::

    {
      "format": <the input's format>,
      "run": {"name", "default_condition" ("clean"), "abstain_scoring" ("not_flagged")},
      "tasks": [{"id", "statement", "format" ("markdown"), "title" (""), "cluster" ("")}, ...],
      "builders": [...], "reviewers": [...] ([]),
      "copies": [{"id", "task", "builder", "format", "content", "truth", "defect" (""),
                  "cluster" (the task's cluster, else "")}, ...],
      "request_keys": [...] (DEFAULT_REQUEST_KEYS),
      "verdict_patterns": [{"name", "pattern", "description" ("")}, ...] ([]),
      "reviews": [{"reviewer", "copy", "condition" (run.default_condition), "verdict",
                   "reason" (""), "authorship_guess" (""), "request"?, "request_sha256"?}, ...] ([]),
      "comparisons": [{"reviewer", "first", "second", "condition" (run.default_condition),
                       "verdict", "reason" (""), "request"?, "request_sha256"?}, ...] ([]),
      "findings": [{"id", "copy", "text", "raised_by": [{"reviewer", "condition"}, ...],
                    "proposed_verdict", "truth"}, ...] ([])
    }

Defaults in brackets; a key whose value was null is dropped and, where a default is given, filled
with it (``request`` and ``request_sha256`` stay absent when absent). A run/1 bundle becomes a run
of one task, ``{"id": "task", "statement": run.task, "format": "markdown", "title": "",
"cluster": ""}``, every copy naming it; its reviews are under "clean", every ``raised_by`` id
becomes ``{"reviewer": id, "condition": "clean"}``.

Seal check (never rejects a bundle), one ``SealResult`` per review, in order:

- ``absent``: the review gives no ``request`` (missing or null);
- ``sealed``: the request parses as JSON to an object whose key set is exactly ``request_keys``
  (the bundle's, default ``["candidate_text", "reviewer_profile", "evidence_refs"]``), without
  duplicate keys, and ``request_sha256`` equals the SHA-256 of the request string's UTF-8 bytes
  (hex, compared case-insensitively);
- ``verdict_in_content``: the keys and the hash are as for ``sealed``, but the request carries a
  verdict outside the copy's content and the task statement (content.content_verdicts: a prior
  reviewer's verdict, "tests pass", "no issues found", a score, …; the built-in patterns and the
  bundle's ``verdict_patterns``): ``content_verdict`` holds the matching text,
  ``content_verdict_pattern`` the pattern's name;
- ``failed``: anything else; ``reason`` lists every problem, joined by ``"; "``. A failed request
  that carries a verdict keeps ``failed`` and records the match too.

One ``SealResult`` per comparison too (``comparison_seals``), checked the same way, the content
check removing both copies' contents and their task's statement.

Run manifest (published in reports; every hash is lowercase hex SHA-256)::

    {
      "format": "blindjudge.run/1" | "blindjudge.run/2",
      "canonical": "jcs-rfc8785",   (the form of every canonical hash here; absent: legacy)
      "bundle_sha256": <hash of the raw bundle bytes, exactly as imported>,
      "run": <canonical_sha256(run object)>,
      "tasks":     {<task id>: <canonical_sha256(task object)>, ...},       (run/2 only)
      "builders":  {<builder id>: <canonical_sha256(builder object)>, ...},
      "copies":    {<copy id>: <sha256 of the copy's content, UTF-8, not normalised>, ...},
      "bindings":  {<copy id>: {"task": <task id>, "builder": <builder id>}, ...}
                   (the copy's task and builder as the bundle gives them; run/1: task "task";
                    its content is bound by "copies". Runs imported before issue 25 item 7 have
                    no bindings.)
      "reviewers": {<reviewer id>: <canonical_sha256(reviewer object)>, ...},
      "reviews":   {"<reviewer id>/<copy id>": <canonical_sha256(review object)>, ...}  (run/1)
                   {"<reviewer id>/<copy id>/<condition>": ...}  (run/2: the effective condition)
      "findings":  {<finding id>: <canonical_sha256(finding object)>, ...}
      "comparisons": {"<reviewer id>/<first copy id>/<second copy id>/<condition>":
                      <canonical_sha256(comparison object)>, ...}
                   (run/2, the effective condition; only when the bundle has a comparison, so a
                    bundle without any hashes as it did before comparisons existed)
    }

``canonical_sha256`` is ``content.canonical``'s: SHA-256 of canonical JSON (strings NFC with LF
line endings, then RFC 8785: keys sorted by UTF-16 code units, no whitespace, UTF-8; a manifest
made before RFC 8785 names no form and was hashed in the legacy form, keys sorted by code point,
Python's numbers) of the object exactly as it appears in the
bundle (optional fields included only where present, a null included as null: the manifest pins
the bytes the host was given, not the normalised form). Absent ``reviewers``/``reviews``/
``findings`` give empty maps. The manifest's own hash is ``canonical_sha256(manifest)``. A copy's
hash covers its content only, its binding its task, builder and content: truth labels, which may
be corrected later, are pinned by ``bundle_sha256``. A binding's values are plain, not hashed, so a
verifier can say which differs; the manifest's own hash covers them.
"""

from __future__ import annotations

import hmac
import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

from jsonschema import Draft202012Validator, ValidationError, _keywords, validators

from content.canonical import CURRENT, FORM_KEY, KeyCollision, canonical_sha256, normalise_text, sha256_hex
from content.content_verdicts import (
    ContentVerdict,
    VerdictPatterns,
    find_content_verdict,
    host_pattern_problems,
)
from content.limits import TextLimits

FORMAT_1 = "blindjudge.run/1"
FORMAT_2 = "blindjudge.run/2"
FORMATS = (FORMAT_1, FORMAT_2)
SCHEMA_RESOURCES = {
    FORMAT_1: "schemas/run-bundle-1.schema.json",
    FORMAT_2: "schemas/run-bundle-2.schema.json",
}
SCHEMA_RESOURCE = SCHEMA_RESOURCES[FORMAT_1]
DEFAULT_REQUEST_KEYS = ["candidate_text", "reviewer_profile", "evidence_refs"]
DEFAULT_CONDITION = "clean"
DEFAULT_ABSTAIN_SCORING = "not_flagged"
DEFAULT_TASK_FORMAT = "markdown"
RUN1_TASK_ID = "task"  # the one task a run/1 bundle becomes
MAX_ERRORS = 100

_BOM = b"\xef\xbb\xbf"
# A valid bundle nests 5 deep (findings[i].raised_by[j] objects in run/2); the cap keeps every
# later step, the schema library's recursive comparisons included, far from Python's recursion
# limit.
MAX_DEPTH = 32
_HEX64 = re.compile(r"[0-9a-fA-F]{64}")
_SURROGATE = re.compile("[\ud800-\udfff]")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Top-level keys sort in document order in error lists, not alphabetically.
_TOP_ORDER = {
    k: i for i, k in enumerate(
        ["format", "run", "tasks", "builders", "copies", "reviewers", "request_keys",
         "verdict_patterns", "reviews", "comparisons", "findings"]
    )
}
_JSON_TYPE = {
    "string": "a string", "number": "a number", "integer": "an integer", "boolean": "a boolean",
    "null": "null", "array": "an array", "object": "an object",
}
_LABEL_PATTERN = "^[A-Za-z0-9][A-Za-z0-9_.:-]*$"
_PATTERN_WORDING = {
    "^[0-9a-fA-F]{64}$": "is not a 64-character hexadecimal SHA-256",
    _LABEL_PATTERN: "is not a label: letters, digits and _ . : - only, starting with a letter "
                    "or a digit",
}


class BundleError(Exception):
    """A bundle that must not be imported; ``errors`` lists the problems (at most the cap), each
    naming its place; ``more`` counts the problems found past the cap, which are not listed."""

    def __init__(self, errors: list[str], more: int = 0):
        self.errors = list(errors)
        self.more = more
        super().__init__(self.errors)

    def lines(self) -> list[str]:
        """The problems as shown to the host: the listed ones, then how many more there were."""
        if not self.more:
            return list(self.errors)
        return [*self.errors, f"…and {self.more:,} more problems; only the first "
                              f"{len(self.errors)} are listed"]

    def __str__(self) -> str:
        return "\n".join(self.lines())


@dataclass(frozen=True)
class SealResult:
    outcome: str  # "sealed" | "verdict_in_content" | "failed" | "absent"
    reason: str  # "" unless failed
    content_verdict: str = ""  # the matching text of a verdict the request carries, or ""
    content_verdict_pattern: str = ""  # the name of the pattern that found it, or ""


@dataclass(frozen=True)
class ValidatedBundle:
    """A bundle fit to import. `data` is normalised (module docstring), the one shape the importer
    reads whatever the format; `original` is the parsed bundle exactly as it appeared (nulls
    included), what the manifest hashes, e.g. `original["run"]` for re-checking the run's hash."""

    raw_sha256: str
    data: dict
    request_keys: list[str]
    seals: list[SealResult]  # one per review, in order
    comparison_seals: list[SealResult]  # one per comparison, in order
    # Every pattern the content seal check applied, built-in and the host's, as the run records
    # it: [{"name", "origin" ("built_in" | "host"), "pattern", "description"}].
    verdict_patterns: list[dict]
    manifest: dict
    manifest_sha256: str
    format: str
    original: dict


# --- rendering ------------------------------------------------------------------------------

def _safe(text: str, limit: int = 80) -> str:
    """Text fit for a message: control, format and surrogate characters escaped, long text cut."""
    cut = len(text) > limit
    if cut:
        text = text[:limit]
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp"):
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
        else:
            out.append(ch)
    return "".join(out) + ("…" if cut else "")


def _q(text: str) -> str:
    return f'"{_safe(text)}"'


def _value(value) -> str:
    """A short rendering of a JSON value: strings quoted, scalars as JSON, containers by kind."""
    if isinstance(value, str):
        return _q(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        text = repr(value) if isinstance(value, float) else str(value)
        return text if len(text) <= 40 else text[:40] + "…"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return _safe(type(value).__name__)


def _kind(value) -> str:
    """A value described with its JSON type: 'string "x"', 'number 5', 'an array'."""
    if isinstance(value, str):
        return f"string {_q(value)}"
    if isinstance(value, bool):
        return f"boolean {_value(value)}"
    if isinstance(value, int | float):
        return f"number {_value(value)}"
    return _value(value)


def _path(parts) -> str:
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENTIFIER.fullmatch(part):
            out += f".{part}" if out else part
        else:
            out = (out or "bundle") + f"[{_q(part)}]"
    return out or "bundle"


def _sort_key(parts) -> tuple:
    key = []
    for i, part in enumerate(parts):
        if isinstance(part, int):
            key.append((0, part, ""))
        elif i == 0 and part in _TOP_ORDER:
            key.append((0, _TOP_ORDER[part], ""))
        else:
            key.append((1, 0, part))
    return tuple(key)


class _Errors:
    """Errors with the path they belong to, sorted by path (stable within a path) at the end.

    At most `cap` distinct messages are kept; past it `add` only counts (`more`), so a bundle
    with a million faults costs a million increments, not a million messages. A caller with many
    errors of one kind to report can ask `full` first and `count` them without formatting any.
    """

    def __init__(self, cap: int = MAX_ERRORS):
        self._items: list[tuple[tuple, str]] = []
        self._seen: set[str] = set()
        self.cap = cap
        self.more = 0

    @property
    def full(self) -> bool:
        return len(self._items) >= self.cap

    def count(self, n: int) -> None:
        self.more += n

    def add(self, parts, message: str) -> None:
        if self.full:
            self.more += 1
            return
        parts = tuple(parts)
        text = f"{_path(parts)}: {message}"
        if text not in self._seen:
            self._seen.add(text)
            self._items.append((parts, text))

    def __bool__(self) -> bool:
        return bool(self._items)

    def messages(self) -> list[str]:
        return [message for _, message in sorted(self._items, key=lambda item: _sort_key(item[0]))]

    def error(self) -> BundleError:
        return BundleError(self.messages(), self.more)


# --- parsing --------------------------------------------------------------------------------

class _NonStandardConstant(ValueError):
    pass


def _reject_constant(name: str):
    raise _NonStandardConstant(name)


def _parse(text: str, duplicates: dict[int, tuple[dict, list[str]]]):
    """json.loads (standard JSON only), recording each object's duplicate keys under id(object).

    The record holds the object itself too, so that an object dropped by a later duplicate key
    stays alive and its id cannot be reused by another object.
    """

    def pairs_hook(pairs):
        obj, dups = {}, {}
        for key, value in pairs:
            if key in obj:
                dups[key] = None
            obj[key] = value
        if dups:
            duplicates[id(obj)] = (obj, list(dups))
        return obj

    return json.loads(text, object_pairs_hook=pairs_hook, parse_constant=_reject_constant)


_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")


def _name_undecodable_places(raw: bytes, errors: _Errors) -> bool:
    """Name the strings that hold bytes which are not UTF-8 (`copies[3].content: …`), so the host
    learns which copy to fix. False when the bundle cannot be read that far."""
    try:
        data = _parse(raw.decode("utf-8", "surrogateescape"), {})
    except (ValueError, RecursionError):
        return False
    found = False
    stack = [((), data)]
    while stack:
        parts, value = stack.pop()
        if isinstance(value, str):
            bad = _ESCAPED_BYTE.search(value)
            if bad:
                byte = ord(bad.group()) - 0xDC00
                errors.add(parts, f"not valid UTF-8 (byte 0x{byte:02X} at character {bad.start()})")
                found = True
        elif isinstance(value, list):
            stack.extend(((*parts, i), item) for i, item in enumerate(value))
        elif isinstance(value, dict):
            stack.extend(((*parts, key), item) for key, item in value.items())
    return found


# The JSON values a bundle may hold (objects, arrays, strings, numbers, literals), counted before
# any is built. Parsed, every value is a Python object: 20 MB of empty objects became 1.1 GB, 50 MB
# 2.8 GB (issue 25 item 9). A run of 80,000 copies, each with its reviews and findings, holds a
# few hundred thousand.
MAX_JSON_VALUES = 4_000_000
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')


def json_values_at_least(raw: bytes) -> int:
    """A lower bound on the JSON values in `raw` that costs no parse: strings are dropped (at C
    speed), then each comma separates two values and each bracket opens one."""
    skeleton = _JSON_STRING.sub(b"", raw)
    return skeleton.count(b",") + skeleton.count(b"{") + skeleton.count(b"[")


def _decode(raw: bytes, errors: _Errors):
    """Bytes to a JSON value and its duplicate-key record, or None after recording why not."""
    if (values := json_values_at_least(raw)) > MAX_JSON_VALUES:
        errors.add((), f"holds at least {values:,} JSON values (objects, arrays, strings, numbers); "
                       f"a bundle may hold {MAX_JSON_VALUES:,}: split the run")
        return None
    offset = 0
    if raw.startswith(_BOM):
        raw, offset = raw[len(_BOM):], len(_BOM)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if not _name_undecodable_places(raw, errors):
            errors.add((), f"not valid UTF-8 at byte {exc.start + offset}")
        return None
    duplicates: dict[int, tuple[dict, list[str]]] = {}
    try:
        return _parse(text, duplicates), duplicates
    except json.JSONDecodeError as exc:
        first = exc
    except _NonStandardConstant as exc:
        errors.add((), f"malformed JSON: {exc} is not allowed in JSON")
        return None
    except RecursionError:
        errors.add((), "malformed JSON: nested too deeply")
        return None
    except ValueError as exc:  # e.g. an integer past Python's digit limit
        message = "a number has too many digits" if "digits" in str(exc) else _safe(str(exc), 200)
        errors.add((), f"malformed JSON: {message}")
        return None
    if "\x00" in text:
        # A raw NUL inside a string is invalid JSON, but the clearer error names the string that
        # holds it: read it as the \u0000 escape and let the text checks report it by place. Only
        # where that is the sole fault: the lenient parse refuses a NUL after a backslash (which
        # the replacement would turn into an escaped backslash), the strict one any other raw
        # control character.
        duplicates = {}
        try:
            json.loads(text, strict=False, parse_constant=_reject_constant)
            return _parse(text.replace("\x00", "\\u0000"), duplicates), duplicates
        except (ValueError, RecursionError):
            pass
    message = first.msg
    if message.startswith("Invalid control character"):
        message = f"unescaped control character U+{ord(text[first.pos]):04X} in a string"
    errors.add((), f"malformed JSON at line {first.lineno} column {first.colno}: {message}")
    return None


def _depth(value) -> int:
    """Nesting depth of a parsed JSON value (a scalar is 0), without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            value = list(value.values())
        if isinstance(value, list):
            depth += 1
            deepest = max(deepest, depth)
            stack.extend((item, depth) for item in value)
    return deepest


# --- checks ---------------------------------------------------------------------------------

@cache
def _published_schema(fmt: str) -> dict:
    text = resources.files("content").joinpath(SCHEMA_RESOURCES[fmt]).read_text("utf-8")
    return json.loads(text)


def _inline_refs(node, defs: dict):
    """`node` with every `{"$ref": "#/$defs/x"}` replaced by the definition (merged with the
    ref's sibling annotations). The schema means the same; validating 1,000 copies took half
    the time without a reference lookup per field (profiled, bench/README.md)."""
    if isinstance(node, list):
        return [_inline_refs(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    inlined = {key: _inline_refs(value, defs) for key, value in node.items() if key != "$ref"}
    if "$ref" in node:
        target = _inline_refs(defs[node["$ref"].removeprefix("#/$defs/")], defs)
        clash = (set(inlined) & set(target)) - {"description", "title"}
        if clash:
            raise ValueError(f"schema: $ref {node['$ref']} beside {sorted(clash)}")
        inlined = {**target, **inlined}
    return inlined


def _closed_object(validator, allowed, instance, schema):
    """`additionalProperties: false` without the library's message, which sorts and quotes every
    extra key (a million unknown keys cost seconds there); _schema_errors writes its own."""
    if allowed is not False or "patternProperties" in schema:
        yield from _keywords.additionalProperties(validator, allowed, instance, schema)
        return
    if isinstance(instance, dict):
        known = schema.get("properties", {})
        if any(name not in known for name in instance):
            yield ValidationError("unknown fields")


@cache
def _ecma_pattern(pattern: str) -> re.Pattern:
    """`pattern` as JSON Schema means it (ECMA-262): a final `$` matches only at the very end,
    where Python's also matches before a final newline ("clean\\n" would pass as a label, a hash
    with a newline would pass as 64 hex digits and then not fit its column)."""
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1] + r"\Z"
    return re.compile(pattern)


def _ecma_pattern_keyword(validator, pattern, instance, schema):
    if isinstance(instance, str) and not _ecma_pattern(pattern).search(instance):
        yield ValidationError(f"does not match {pattern}")


_BundleValidator = validators.extend(
    Draft202012Validator,
    {"additionalProperties": _closed_object, "pattern": _ecma_pattern_keyword})


@cache
def _validator(fmt: str) -> Draft202012Validator:
    """The whole schema in one validator: what _schema_errors' fast path is tested against."""
    published = _published_schema(fmt)
    defs = published.get("$defs", {})
    return _BundleValidator(
        _inline_refs({k: v for k, v in published.items() if k != "$defs"}, defs))


@cache
def _label_max_chars() -> int:
    """The schema's own bound on a condition label (run/2's `optionalLabel`)."""
    return _published_schema(FORMAT_2)["$defs"]["optionalLabel"]["maxLength"]


def schema(format: str = FORMAT_1) -> dict:  # noqa: A002 - the bundle's own word
    """The published JSON Schema of a bundle format (`FORMAT_1`, the default, or `FORMAT_2`)."""
    if format not in SCHEMA_RESOURCES:
        raise ValueError(f"unknown bundle format {format!r}; expected one of {list(FORMATS)}")
    return _published_schema(format)


_RAISED_BY_ENTRY = 'a reviewer id or an object {"reviewer", "condition"}'


# --- a fast path for the many flat records ---------------------------------------------------
#
# jsonschema descends into every field of every record: 0.39 s of a 0.6 s validation of 1,500
# copies and 7,500 reviews. Most records are flat objects of strings, enums and nulls. For a record
# schema made only of the keywords below, _flat_check builds a predicate that accepts a record only
# where the schema does; a record it accepts needs no further look, one it refuses (or a schema it
# cannot express) goes to jsonschema as before, so every message is the same (a test compares).

_FLAT_VALUE_KEYWORDS = {"type", "enum", "minLength", "maxLength", "pattern", "description",
                        "title"}


def _flat_value_check(node: dict):
    """A predicate for one field's schema, or None when it uses anything else."""
    if not set(node) <= _FLAT_VALUE_KEYWORDS:
        return None
    types = node.get("type")
    types = set(types if isinstance(types, list) else [types]) if types is not None else None
    if types is not None and not types <= {"string", "null"}:
        return None
    enum = node.get("enum")
    if enum is not None and not all(v is None or isinstance(v, str) for v in enum):
        return None
    strings_allowed = types is None or "string" in types
    null_allowed = (types is None or "null" in types) and (enum is None or None in enum)
    allowed = frozenset(v for v in enum if v is not None) if enum is not None else None
    min_length, max_length = node.get("minLength", 0), node.get("maxLength")
    pattern = _ecma_pattern(node["pattern"]) if "pattern" in node else None

    def check(value) -> bool:
        if value is None:
            return null_allowed
        if not (strings_allowed and isinstance(value, str)):
            return False  # a number or a container: let jsonschema say what is wrong
        if allowed is not None and value not in allowed:
            return False
        if len(value) < min_length or (max_length is not None and len(value) > max_length):
            return False
        return pattern is None or pattern.search(value) is not None

    return check


def _flat_check(node: dict):
    """A predicate for a record's schema (a closed object of flat fields), or None."""
    if not (node.get("type") == "object" and node.get("additionalProperties") is False
            and set(node) <= {"type", "required", "additionalProperties", "properties",
                              "description", "title"}):
        return None
    fields = {}
    for name, sub in node.get("properties", {}).items():
        fields[name] = _flat_value_check(sub)
        if fields[name] is None:
            return None
    required = tuple(node.get("required", ()))

    def check(record) -> bool:
        if not isinstance(record, dict):
            return False
        for name in required:
            if name not in record:
                return False
        for name, value in record.items():
            field = fields.get(name)
            if field is None or not field(value):
                return False
        return True

    return check


@cache
def _fast_plan(fmt: str):
    """(shell validator, {list key: (record predicate, record validator)}): the shell is the
    format's schema without the `items` of the lists checked record by record."""
    published = _published_schema(fmt)
    inlined = _inline_refs({k: v for k, v in published.items() if k != "$defs"},
                           published.get("$defs", {}))
    lists = {}
    for key, node in inlined.get("properties", {}).items():
        items = node.get("items") if isinstance(node, dict) else None
        check = _flat_check(items) if isinstance(items, dict) else None
        if check is not None:
            lists[key] = (check, _BundleValidator(items))
            node.pop("items")
    return _BundleValidator(inlined), lists


def _schema_errors(data, fmt: str, errors: _Errors) -> None:
    shell, lists = _fast_plan(fmt)
    for error in shell.iter_errors(data):
        _describe(error, errors)
    if not isinstance(data, dict):
        return
    for key, (check, record_validator) in lists.items():
        records = data.get(key)
        if not isinstance(records, list):
            continue
        for i, record in enumerate(records):
            if not check(record):
                for error in record_validator.iter_errors(record):
                    _describe(error, errors, (key, i))


def _describe(error: ValidationError, errors: _Errors, prefix: tuple = ()) -> None:
    """One schema error in the product's words (never the library's message); `prefix` is the
    place of the instance the error's validator was given (a record, for the fast path)."""
    if errors.full and error.validator != "additionalProperties":
        errors.count(1)
        return
    parts = (*prefix, *error.absolute_path)
    kind, expected, instance = error.validator, error.validator_value, error.instance
    if kind == "required":
        for name in expected:
            if isinstance(instance, dict) and name not in instance:
                errors.add(parts, f"missing required field {_q(name)}")
    elif kind == "additionalProperties":
        known = set(error.schema.get("properties", {}))
        unknown = (name for name in instance if name not in known)
        for name in unknown:
            if errors.full:  # the rest are only counted
                errors.count(1 + sum(1 for _ in unknown))
                break
            errors.add(parts, f"unknown field {_q(name)}")
    elif kind == "oneOf":
        # Only raised_by entries have a oneOf (run/2): a reviewer id, or an object. Say what is
        # wrong with the form the entry chose, not that it matched neither.
        branch = 0 if isinstance(instance, str) else 1 if isinstance(instance, dict) else None
        chosen = [e for e in error.context or ()
                  if branch is not None and e.relative_schema_path
                  and e.relative_schema_path[0] == branch]
        if chosen:
            for sub in chosen:
                _describe(sub, errors, prefix)
        else:
            errors.add(parts, f"expected {_RAISED_BY_ENTRY}, got {_kind(instance)}")
    elif kind == "type":
        types = expected if isinstance(expected, list) else [expected]
        wanted = " or ".join(_JSON_TYPE.get(t, t) for t in types)
        errors.add(parts, f"expected {wanted}, got {_kind(instance)}")
    elif kind == "enum":
        # null in an enum is "absent" (optional fields), not an option to offer.
        options = ", ".join(sorted(str(v) for v in expected if v is not None))
        errors.add(parts, f"{_value(instance)} is not one of {options}")
    elif kind == "const":
        errors.add(parts, f"expected {_value(expected)}, got {_value(instance)}")
    elif kind == "minLength":
        errors.add(parts, "must not be empty")
    elif kind == "maxLength":
        errors.add(parts, f"{len(instance)} characters exceeds the limit of {expected} characters")
    elif kind == "minItems":
        errors.add(parts, "must not be empty" if expected == 1 else f"needs {expected} items")
    elif kind == "maxItems":
        errors.add(parts, f"holds {len(instance):,} items; at most {expected} are allowed")
    elif kind == "uniqueItems":
        errors.add(parts, "must not repeat an item")
    elif kind == "pattern":
        if instance == "":  # minLength says so
            return
        wording = _PATTERN_WORDING.get(expected, f"does not match {expected}")
        errors.add(parts, f"{_value(instance)} {wording}")
    else:  # not produced by these schemas today; kept readable if a schema grows
        errors.add(parts, _safe(error.message, 200))


def _records(data: dict, key: str):
    """(index, record) for each object in data[key], if that is a list."""
    items = data.get(key)
    if not isinstance(items, list):
        return []
    return [(i, item) for i, item in enumerate(items) if isinstance(item, dict)]


def _nonempty_str(value) -> bool:
    return isinstance(value, str) and value != ""


def _ids(data: dict, key: str, errors: _Errors, *, required: bool = False) -> set[str] | None:
    """The ids of data[key], reporting duplicates; None (references unchecked) when data[key] is
    present but no list, or is a required list that is missing (the schema says so once, not
    once per reference)."""
    items = data.get(key)
    if (items is not None or required) and not isinstance(items, list):
        return None
    first: dict[str, int] = {}
    normalised: dict[str, tuple[str, int]] = {}
    for i, record in _records(data, key):
        rid = record.get("id")
        if not _nonempty_str(rid):
            continue
        if rid in first:
            errors.add(
                (key, i, "id"), f"duplicate id {_q(rid)} (first at {key}[{first[rid]}])"
            )
            continue
        first[rid] = i
        same = normalised.setdefault(normalise_text(rid), (rid, i))
        if same[1] != i:
            # Hashed (the manifest, reports) after the text step, the two would be one record.
            errors.add((key, i, "id"), f"id {ascii(rid)} is the same id as {ascii(same[0])} at "
                                       f"{key}[{same[1]}] once text is normalised (Unicode NFC, "
                                       "LF line endings); rename one")
    return set(first)


def _reference(known, value, parts, noun: str, errors: _Errors) -> bool:
    """Report a reference to no record; True when it names one (or cannot be checked)."""
    if known is not None and _nonempty_str(value) and value not in known:
        errors.add(parts, f"unknown {noun} {_q(value)}")
        return False
    return True


def _default_condition(data: dict) -> str:
    """run.default_condition as the bundle gives it, else "clean" (also for a run/1 bundle, and
    for a value the schema refuses: its own error says why)."""
    run = data.get("run")
    condition = run.get("default_condition") if isinstance(run, dict) else None
    return condition if _nonempty_str(condition) else DEFAULT_CONDITION


_LABEL = re.compile(_LABEL_PATTERN.removeprefix("^").removesuffix("$"))


def _is_label(value) -> bool:
    """A condition the schema accepts; the checks that compare conditions skip any other (the
    schema reports it, and a second message about the same bad label would be noise)."""
    return isinstance(value, str) and len(value) <= _label_max_chars() and bool(
        _LABEL.fullmatch(value))


def _conditions(names) -> str:
    return ", ".join(_q(name) for name in names)


def _semantic_errors(data: dict, fmt: str, errors: _Errors) -> None:
    run2 = fmt == FORMAT_2
    tasks = _ids(data, "tasks", errors, required=True) if run2 else None
    builders = _ids(data, "builders", errors, required=True)
    copies = _ids(data, "copies", errors)
    reviewers = _ids(data, "reviewers", errors)
    _ids(data, "findings", errors)
    for parts, message in host_pattern_problems(data.get("verdict_patterns")):
        errors.add(("verdict_patterns", *parts), message)

    for i, copy in _records(data, "copies"):
        if run2:
            _reference(tasks, copy.get("task"), ("copies", i, "task"), "task", errors)
        _reference(builders, copy.get("builder"), ("copies", i, "builder"), "builder", errors)

    default = _default_condition(data)
    reviewed: dict[tuple[str, str, str], int] = {}  # (reviewer, copy, condition) -> review index
    seen_keys: dict[str, int] = {}
    unlabelled: set[tuple[str, str]] = set()
    # Whether "no such review" can be said of a raised_by entry: not when the reviews are no list
    # or one of them names no reviewer or copy (the schema reports those; this would be noise).
    incomplete = data.get("reviews") is not None and not isinstance(data["reviews"], list)
    for i, review in _records(data, "reviews"):
        reviewer, copy = review.get("reviewer"), review.get("copy")
        _reference(reviewers, reviewer, ("reviews", i, "reviewer"), "reviewer", errors)
        _reference(copies, copy, ("reviews", i, "copy"), "copy", errors)
        condition = review.get("condition") if run2 else None
        condition = default if condition is None else condition
        if not (_nonempty_str(reviewer) and _nonempty_str(copy)):
            incomplete = True  # the schema reports it; which review it is, nobody can tell
            continue
        if not _is_label(condition):
            unlabelled.add((reviewer, copy))  # the schema reports it; raised_by cannot be checked
            continue
        if (reviewer, copy, condition) in reviewed:
            first = reviewed[reviewer, copy, condition]
            under = f" under condition {_q(condition)}" if run2 else ""
            errors.add(
                ("reviews", i),
                f"reviewer {_q(reviewer)} already reviewed copy {_q(copy)}{under} "
                f"at reviews[{first}]",
            )
            continue
        reviewed[reviewer, copy, condition] = i
        # Only possible when ids contain "/" (labels cannot).
        key = f"{reviewer}/{copy}/{condition}" if run2 else f"{reviewer}/{copy}"
        if key in seen_keys:
            if run2:
                names = f"reviewer {_q(reviewer)}, copy {_q(copy)} and condition {_q(condition)}"
            else:
                names = f"reviewer {_q(reviewer)} and copy {_q(copy)}"
            errors.add(
                ("reviews", i),
                f"{names} give the manifest key {_q(key)}, already used by "
                f"reviews[{seen_keys[key]}]; rename an id",
            )
        else:
            seen_keys[key] = i

    if run2:
        _comparison_errors(data, reviewers, copies, default, errors)

    conditions_of: dict[tuple[str, str], list[str]] = {}
    if run2:
        for reviewer, copy, condition in reviewed:
            conditions_of.setdefault((reviewer, copy), []).append(condition)

    for i, finding in _records(data, "findings"):
        copy = finding.get("copy")
        copy_known = _reference(copies, copy, ("findings", i, "copy"), "copy", errors)
        raised_by = finding.get("raised_by")
        if not isinstance(raised_by, list):
            continue
        if not run2:
            for j, reviewer in enumerate(raised_by):
                _reference(
                    reviewers, reviewer, ("findings", i, "raised_by", j), "reviewer", errors
                )
            continue
        check_review = (copy_known and _nonempty_str(copy) and copies is not None
                        and not incomplete)
        named: dict[tuple[str, str], int] = {}
        for j, entry in enumerate(raised_by):
            place = ("findings", i, "raised_by", j)
            if isinstance(entry, str):
                reviewer, condition, bare = entry, default, True
                reviewer_place = place
            elif isinstance(entry, dict):
                reviewer, condition, bare = entry.get("reviewer"), entry.get("condition"), False
                condition = default if condition is None else condition
                reviewer_place = (*place, "reviewer")
            else:
                continue  # the schema reports it
            if not _reference(reviewers, reviewer, reviewer_place, "reviewer", errors):
                continue
            if not (_nonempty_str(reviewer) and _is_label(condition)):
                continue
            if (reviewer, condition) in named:
                k = named[reviewer, condition]
                if raised_by[k] != entry:  # equal entries: the schema's "must not repeat"
                    errors.add(
                        place,
                        f"names the same review as raised_by[{k}] (reviewer {_q(reviewer)} "
                        f"under condition {_q(condition)})",
                    )
                continue
            named[reviewer, condition] = j
            if (check_review and (reviewer, copy, condition) not in reviewed
                    and (reviewer, copy) not in unlabelled):
                others = conditions_of.get((reviewer, copy))
                if others:
                    why = f"its reviews of that copy are under {_conditions(others)}"
                    if bare:
                        why += f"; a bare reviewer id means run.default_condition {_q(default)}"
                else:
                    why = "it has no review of that copy at all"
                errors.add(
                    place,
                    f"reviewer {_q(reviewer)} has no review of copy {_q(copy)} under "
                    f"condition {_q(condition)} ({why}); a finding is raised in a review",
                )


def _comparison_errors(data: dict, reviewers: set[str] | None, copies: set[str] | None,
                       default: str, errors: _Errors) -> None:
    """run/2 `comparisons`: each names a reviewer and two copies that exist; the two are different
    copies of one task by two different builders (a comparison compares builders); a reviewer
    compares the same two copies in the same order at most once under each condition (the other
    order is another comparison: the "both orders" design)."""
    made_by: dict[str, tuple] = {}  # copy id -> (task, builder), as the first record with it says
    for _, copy in _records(data, "copies"):
        if _nonempty_str(copy.get("id")):
            made_by.setdefault(copy["id"], (copy.get("task"), copy.get("builder")))
    compared: dict[tuple[str, str, str, str], int] = {}
    seen_keys: dict[str, int] = {}
    for i, comparison in _records(data, "comparisons"):
        reviewer = comparison.get("reviewer")
        first, second = comparison.get("first"), comparison.get("second")
        _reference(reviewers, reviewer, ("comparisons", i, "reviewer"), "reviewer", errors)
        first_known = _reference(copies, first, ("comparisons", i, "first"), "copy", errors)
        second_known = _reference(copies, second, ("comparisons", i, "second"), "copy", errors)
        if not (_nonempty_str(reviewer) and _nonempty_str(first) and _nonempty_str(second)):
            continue  # the schema reports it
        if first == second:
            errors.add(("comparisons", i),
                       f"reviewer {_q(reviewer)} compares copy {_q(first)} with itself; a "
                       "comparison is of two different copies of one task")
        elif first_known and second_known and first in made_by and second in made_by:
            (first_task, first_builder), (second_task, second_builder) = (made_by[first],
                                                                          made_by[second])
            if (_nonempty_str(first_task) and _nonempty_str(second_task)
                    and first_task != second_task):
                errors.add(("comparisons", i),
                           f"copies {_q(first)} (task {_q(first_task)}) and {_q(second)} (task "
                           f"{_q(second_task)}) are of different tasks; a comparison is of two "
                           "copies of one task")
            elif _nonempty_str(first_builder) and first_builder == second_builder:
                errors.add(("comparisons", i),
                           f"copies {_q(first)} and {_q(second)} are both by builder "
                           f"{_q(first_builder)}; a comparison compares two builders' copies of "
                           "one task")
        condition = comparison.get("condition")
        condition = default if condition is None else condition
        if not _is_label(condition):
            continue  # the schema reports it
        if (reviewer, first, second, condition) in compared:
            errors.add(("comparisons", i),
                       f"reviewer {_q(reviewer)} already compared copy {_q(first)} (first) with "
                       f"copy {_q(second)} (second) under condition {_q(condition)} at "
                       f"comparisons[{compared[reviewer, first, second, condition]}]")
            continue
        compared[reviewer, first, second, condition] = i
        # Only possible when ids contain "/" (labels cannot).
        key = f"{reviewer}/{first}/{second}/{condition}"
        if key in seen_keys:
            errors.add(("comparisons", i),
                       f"reviewer {_q(reviewer)}, copies {_q(first)} and {_q(second)} and "
                       f"condition {_q(condition)} give the manifest key {_q(key)}, already used "
                       f"by comparisons[{seen_keys[key]}]; rename an id")
        else:
            seen_keys[key] = i


def _string_problems(text: str) -> list[str]:
    problems = []
    nul = text.find("\x00")
    if nul >= 0:
        problems.append(f"contains a NUL byte at character {nul}")
    lone = _SURROGATE.search(text)
    if lone:
        problems.append(
            f"contains a lone surrogate (U+{ord(lone.group()):04X}) at character {lone.start()}"
        )
    return problems


# Where a parsed string can get a NUL or a surrogate from: a raw NUL (read as \u0000, see
# _decode) or an escape. Strict UTF-8 decoding lets no surrogate through raw.
_MAYBE_UNSTORABLE = re.compile(rb"\x00|\\u(?:0000|[dD][89a-fA-F])")


def _no_problems(text: str) -> list[str]:
    return []


def _text_errors(data, duplicates: dict[int, tuple[dict, list[str]]], errors: _Errors,
                 raw: bytes = b"\x00") -> None:
    """NUL bytes and lone surrogates in every string (keys too), and duplicate keys, by place.

    When the raw bytes hold no NUL and no escape that could give one or a surrogate, no string
    can have either: only duplicate keys are looked for, and only if there are any."""
    if not _MAYBE_UNSTORABLE.search(raw):
        if not duplicates:
            return
        string_problems = _no_problems
    else:
        string_problems = _string_problems
    stack = [((), data)]
    while stack:
        parts, value = stack.pop()
        if isinstance(value, str):
            for problem in string_problems(value):
                errors.add(parts, problem)
        elif isinstance(value, list):
            stack.extend(((*parts, i), item) for i, item in enumerate(value))
        elif isinstance(value, dict):
            for key in duplicates.get(id(value), (None, []))[1]:
                errors.add(parts, f"duplicate key {_q(key)}")
            for key, item in value.items():
                for problem in string_problems(key):
                    errors.add(parts, f"a key {problem}")
                stack.append(((*parts, key), item))


def _utf8_size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


# Every text of a bundle but the copy's content, by format, record list (None: the `run` object)
# and field, with the TextLimits field that bounds it. References (copies[].builder, …) need no
# limit of their own: one that names a record is as long as that record's id, which has one (a
# raised_by condition must name a review's, which has one too).
_LIMITED_TEXTS_1 = {
    None: {"name": "name_chars", "task": "task_chars"},
    "builders": {"id": "id_chars", "model": "name_chars", "family": "name_chars"},
    "reviewers": {"id": "id_chars", "model": "name_chars", "family": "name_chars"},
    "copies": {"id": "id_chars", "defect": "note_chars", "cluster": "id_chars"},
    "reviews": {"reason": "review_reason_chars", "authorship_guess": "name_chars",
                "request": "request_bytes"},
    "findings": {"id": "id_chars", "text": "finding_chars"},
    "verdict_patterns": {"description": "note_chars"},
}
_LIMITED_TEXTS_2 = {
    **_LIMITED_TEXTS_1,
    None: {"name": "name_chars", "default_condition": "id_chars"},
    "tasks": {"id": "id_chars", "statement": "task_chars", "title": "name_chars",
              "cluster": "id_chars"},
    "reviews": {**_LIMITED_TEXTS_1["reviews"], "condition": "id_chars"},
    "comparisons": {"reason": "review_reason_chars", "request": "request_bytes",
                    "condition": "id_chars"},
}
_LIMITED_TEXTS = {FORMAT_1: _LIMITED_TEXTS_1, FORMAT_2: _LIMITED_TEXTS_2}
# Labels the schema bounds itself (maxLength): one past that bound is reported once, by the schema.
_LABELS = {"default_condition", "condition"}


def _over(text, limit_name: str, limits: TextLimits) -> str | None:
    """Why `text` is over its limit, or None (also for a value that is not text at all)."""
    if not isinstance(text, str):
        return None
    limit = getattr(limits, limit_name)
    if limit_name.endswith("_bytes"):
        # At most 4 bytes a character: no need to encode what cannot be over.
        if len(text) * 4 <= limit or (size := _utf8_size(text)) <= limit:
            return None
        return f"{size} bytes exceeds the limit of {limit} bytes"
    if len(text) <= limit:
        return None
    return f"{len(text)} characters exceeds the limit of {limit} characters"


def _size_errors(data: dict, fmt: str, max_copy_bytes: int, limits: TextLimits,
                 errors: _Errors) -> None:
    for i, copy in _records(data, "copies"):
        content = copy.get("content")
        if isinstance(content, str):
            size = _utf8_size(content)
            if size > max_copy_bytes:
                errors.add(
                    ("copies", i, "content"),
                    f"{size} bytes exceeds the per-copy limit of {max_copy_bytes} bytes",
                )
    for key, texts in _LIMITED_TEXTS[fmt].items():
        if key is None:
            records = [((), data["run"])] if isinstance(data.get("run"), dict) else []
        else:
            records = [((key, i), record) for i, record in _records(data, key)]
        for parts, record in records:
            for field, limit_name in texts.items():
                text = record.get(field)
                if field in _LABELS and isinstance(text, str) and len(text) > _label_max_chars():
                    continue
                problem = _over(text, limit_name, limits)
                if problem:
                    errors.add((*parts, field) if parts else ("run", field), problem)
    request_keys = data.get("request_keys")
    if isinstance(request_keys, list):
        for j, name in enumerate(request_keys):
            problem = _over(name, "id_chars", limits)
            if problem:
                errors.add(("request_keys", j), problem)


# --- public API -----------------------------------------------------------------------------

def _format_of(data: dict) -> str | None:
    """The bundle's format, or None after an unknown one. A bundle without a format is checked
    as the format its keys suggest (run/2 has tasks), so its other errors are the right ones."""
    if "format" not in data:
        return FORMAT_2 if "tasks" in data else FORMAT_1
    fmt = data["format"]
    return fmt if isinstance(fmt, str) and fmt in FORMATS else None


def validate_bundle(raw: bytes, *, max_bundle_bytes: int, max_copy_bytes: int,
                    limits: TextLimits | None = None,
                    max_errors: int = MAX_ERRORS) -> ValidatedBundle:
    """Check a whole bundle of either format; return it normalised with its seal results and
    manifest, or raise BundleError.

    `limits` bounds every text but the copies' content (TextLimits' defaults when None);
    `max_errors` caps the listed problems (the rest are counted, see the module docstring).
    Pure: reads nothing but its arguments and the packaged schemas, writes nothing.
    """
    limits = limits if limits is not None else TextLimits()
    raw = bytes(raw)
    if len(raw) > max_bundle_bytes:
        raise BundleError(
            [f"bundle: {len(raw)} bytes exceeds the limit of {max_bundle_bytes} bytes"]
        )
    errors = _Errors(max_errors)
    parsed = _decode(raw, errors)
    if parsed is None:
        raise errors.error()
    data, duplicates = parsed
    if _depth(data) > MAX_DEPTH:
        raise BundleError([f"bundle: JSON nested deeper than {MAX_DEPTH} levels"])

    if not isinstance(data, dict):
        raise BundleError([f"bundle: expected a JSON object, got {_kind(data)}"])
    fmt = _format_of(data)
    if fmt is None:
        # Another format's fields mean something else: checking them against these is noise.
        known = " or ".join(_q(f) for f in FORMATS)
        raise BundleError([f"format: unknown format {_value(data['format'])}; expected {known}"])

    _schema_errors(data, fmt, errors)
    _semantic_errors(data, fmt, errors)
    _text_errors(data, duplicates, errors, raw)
    _size_errors(data, fmt, max_copy_bytes, limits, errors)
    if errors:
        raise errors.error()

    request_keys = list(data.get("request_keys") or DEFAULT_REQUEST_KEYS)
    normalised = normalise_bundle(data, request_keys)
    patterns = VerdictPatterns(normalised["verdict_patterns"])
    copy_by_id = {c["id"]: c for c in normalised["copies"]}
    statement_of = {t["id"]: t["statement"] for t in normalised["tasks"]}
    seals = []
    for review in normalised["reviews"]:
        copy = copy_by_id[review["copy"]]
        seals.append(check_seal(review.get("request"), review.get("request_sha256"), request_keys,
                                content=copy["content"], statement=statement_of[copy["task"]],
                                patterns=patterns))
    comparison_seals = []
    for comparison in normalised["comparisons"]:
        first, second = copy_by_id[comparison["first"]], copy_by_id[comparison["second"]]
        comparison_seals.append(check_seal(
            comparison.get("request"), comparison.get("request_sha256"), request_keys,
            content=first["content"], contents=(second["content"],),
            statement=statement_of[first["task"]], patterns=patterns))
    raw_sha256 = sha256_hex(raw)
    try:
        manifest = build_manifest(data, raw_sha256)
        manifest_sha256 = canonical_sha256(manifest)
    except KeyCollision as collision:
        # Keys the text step makes one (ids are refused above, by place; this is any other key,
        # or a review key built from ids): hashed, one of them would vanish.
        raise BundleError([f"{collision}; rename one"]) from None
    return ValidatedBundle(
        raw_sha256=raw_sha256,
        data=normalised,
        request_keys=request_keys,
        seals=seals,
        comparison_seals=comparison_seals,
        verdict_patterns=patterns.applied,
        manifest=manifest,
        manifest_sha256=manifest_sha256,
        format=fmt,
        original=data,
    )


def _present(record: dict) -> dict:
    """The record without its null fields (null means absent)."""
    return {key: value for key, value in record.items() if value is not None}


def _or(record: dict, key: str, default):
    value = record.get(key)
    return default if value is None else value


def normalise_bundle(data: dict, request_keys: list[str]) -> dict:
    """Valid bundle data of either format in the one shape the importer reads (module docstring).

    Only for data that passed validation: every reference resolves, every required field is
    there. Builds new dicts; `data` is left as it appeared (the manifest hashes that).
    """
    run = data["run"]
    if data["format"] == FORMAT_1:
        tasks = [{"id": RUN1_TASK_ID, "statement": run["task"], "format": DEFAULT_TASK_FORMAT,
                  "title": "", "cluster": ""}]
        default = DEFAULT_CONDITION
        abstain_scoring = DEFAULT_ABSTAIN_SCORING
    else:
        tasks = [
            {"id": t["id"], "statement": t["statement"],
             "format": _or(t, "format", DEFAULT_TASK_FORMAT), "title": _or(t, "title", ""),
             "cluster": _or(t, "cluster", "")}
            for t in data["tasks"]
        ]
        default = _or(run, "default_condition", DEFAULT_CONDITION)
        abstain_scoring = _or(run, "abstain_scoring", DEFAULT_ABSTAIN_SCORING)
    cluster_of = {t["id"]: t["cluster"] for t in tasks}

    copies = []
    for c in data["copies"]:
        task = _or(c, "task", RUN1_TASK_ID)
        copies.append({**_present(c), "task": task, "defect": _or(c, "defect", ""),
                       "cluster": _or(c, "cluster", cluster_of[task])})
    reviews = [
        {**_present(r), "condition": _or(r, "condition", default), "reason": _or(r, "reason", ""),
         "authorship_guess": _or(r, "authorship_guess", "")}
        for r in data.get("reviews") or []
    ]
    comparisons = [
        {**_present(c), "condition": _or(c, "condition", default), "reason": _or(c, "reason", "")}
        for c in data.get("comparisons") or []
    ]
    findings = []
    for f in data.get("findings") or []:
        raised_by = [
            {"reviewer": entry, "condition": default} if isinstance(entry, str)
            else {"reviewer": entry["reviewer"], "condition": _or(entry, "condition", default)}
            for entry in f["raised_by"]
        ]
        findings.append({**_present(f), "raised_by": raised_by})
    return {
        "format": data["format"],
        "run": {"name": run["name"], "default_condition": default,
                "abstain_scoring": abstain_scoring},
        "tasks": tasks,
        "builders": [_present(b) for b in data["builders"]],
        "copies": copies,
        "reviewers": [_present(r) for r in data.get("reviewers") or []],
        "request_keys": list(request_keys),
        "verdict_patterns": [
            {"name": v["name"], "pattern": v["pattern"], "description": _or(v, "description", "")}
            for v in data.get("verdict_patterns") or []
        ],
        "reviews": reviews,
        "comparisons": comparisons,
        "findings": findings,
    }


SEAL_KEYS_LISTED = 20


def _key_list(keys: list[str]) -> str:
    """Keys for a seal reason: the first SEAL_KEYS_LISTED, then how many more (a request of a
    million keys must not make a reason of a million)."""
    listed = ", ".join(_safe(k) for k in keys[:SEAL_KEYS_LISTED])
    more = len(keys) - SEAL_KEYS_LISTED
    return listed + (f" and {more:,} more" if more > 0 else "")


def check_seal(
    request: str | None, request_sha256: str | None, request_keys: list[str], *,
    content: str = "", statement: str = "", patterns: VerdictPatterns | None = None,
    contents: Sequence[str] = (),
) -> SealResult:
    """Whether one review's request was sealed: exact key set and matching hash, and no verdict
    carried outside the copy's `content` and the task `statement` (content.content_verdicts,
    with `patterns`, the built-ins when None); see the module docstring. `contents`: the other
    copies the request shows (a comparison's: `content` the first copy's, `contents` the
    second's), removed before the content check as `content` is."""
    if request is None:
        return SealResult("absent", "")
    if not isinstance(request, str):
        return SealResult("failed", "request is not a string")
    verdict = find_content_verdict(request, content=content, statement=statement,
                                   patterns=patterns, contents=contents) or ContentVerdict("", "")

    reasons = []
    duplicates: dict[int, tuple[dict, list[str]]] = {}
    try:
        parsed = _parse(request, duplicates)
    except (ValueError, RecursionError):
        reasons.append("request is not valid JSON")
    else:
        if not isinstance(parsed, dict):
            reasons.append("request is not a JSON object")
        else:
            wanted = set(request_keys)
            unexpected = sorted(set(parsed) - wanted)
            missing = [k for k in request_keys if k not in parsed]
            if unexpected:
                reasons.append("unexpected keys: " + _key_list(unexpected))
            if missing:
                reasons.append("missing keys: " + _key_list(missing))
            if id(parsed) in duplicates:
                reasons.append("duplicate keys: " + _key_list(duplicates[id(parsed)][1]))

    if request_sha256 is None:
        reasons.append("no request_sha256 given")
    elif not (isinstance(request_sha256, str) and _HEX64.fullmatch(request_sha256)):
        reasons.append("request_sha256 is not a 64-character hexadecimal SHA-256")
    else:
        try:
            actual = sha256_hex(request.encode("utf-8"))
        except UnicodeEncodeError:
            reasons.append("request contains a lone surrogate, so it has no UTF-8 bytes")
        else:
            if not hmac.compare_digest(actual, request_sha256.lower()):
                reasons.append("request_sha256 does not match the request bytes")

    if reasons:
        return SealResult("failed", "; ".join(reasons), verdict.text, verdict.pattern)
    if verdict.pattern:
        return SealResult("verdict_in_content", "", verdict.text, verdict.pattern)
    return SealResult("sealed", "")




def build_manifest(data: dict, raw_sha256: str) -> dict:
    """The run manifest of validated bundle data exactly as it appeared (`ValidatedBundle.original`,
    not the normalised `data`); shape in the module docstring."""

    def objects(key):
        return [item for item in data.get(key) or [] if isinstance(item, dict)]

    run2 = data["format"] == FORMAT_2
    default = _default_condition(data)

    def review_key(review: dict) -> str:
        if not run2:
            return f"{review['reviewer']}/{review['copy']}"
        condition = review.get("condition")
        return f"{review['reviewer']}/{review['copy']}/{default if condition is None else condition}"

    manifest = {
        "format": data["format"],
        FORM_KEY: CURRENT,  # every canonical hash below, and the manifest's own, in this form
        "bundle_sha256": raw_sha256,
        "run": canonical_sha256(data["run"]),
    }
    if run2:
        manifest["tasks"] = {t["id"]: canonical_sha256(t) for t in objects("tasks")}
    manifest.update({
        "builders": {b["id"]: canonical_sha256(b) for b in objects("builders")},
        "copies": {c["id"]: sha256_hex(c["content"].encode("utf-8")) for c in objects("copies")},
        # Each copy bound to its task and builder (issue 25 item 7): without it a published report
        # could give two copies each other's builder, and the hashes above would still recompute.
        # Its content is bound by "copies" already: repeating the hash here would add a fifth to
        # the manifest of a run at the bundle limit (38 MB to 58 MB) and double its hashing time.
        "bindings": {c["id"]: {"task": _or(c, "task", RUN1_TASK_ID), "builder": c["builder"]}
                     for c in objects("copies")},
        "reviewers": {r["id"]: canonical_sha256(r) for r in objects("reviewers")},
        "reviews": {review_key(r): canonical_sha256(r) for r in objects("reviews")},
        "findings": {f["id"]: canonical_sha256(f) for f in objects("findings")},
    })
    if run2 and (comparisons := objects("comparisons")):
        # Only where there are comparisons: a bundle without any hashes as it did before they
        # existed (absent, null and [] alike).
        manifest["comparisons"] = {comparison_key(c, default): canonical_sha256(c)
                                   for c in comparisons}
    return manifest


def comparison_key(comparison: dict, default_condition: str) -> str:
    """A comparison's manifest key, `<reviewer>/<first>/<second>/<condition>` (the effective
    condition: its own, else `default_condition`)."""
    condition = comparison.get("condition")
    condition = default_condition if condition is None else condition
    return f"{comparison['reviewer']}/{comparison['first']}/{comparison['second']}/{condition}"
