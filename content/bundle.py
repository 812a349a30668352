"""Run bundles (format ``blindjudge.run/1``): whole-bundle validation, seal checks, run manifest.

Pure: no Django, no database. ``validate_bundle`` checks a bundle's raw bytes completely before
anything is written and either returns a ``ValidatedBundle`` or raises ``BundleError`` holding every
problem found, each naming its place (``copies[3].builder: unknown builder "b9"``). It never raises
anything else, whatever the bytes. The published structural contract is
``content/schemas/run-bundle-1.schema.json`` (JSON Schema draft 2020-12); the rules a schema cannot
express (unique ids, references, one review per reviewer and copy, text content, size limits) are
checked here. Every text has a limit: the copy's content `max_copy_bytes`, every other text the
`TextLimits` passed in (content/limits.py; the product's come from settings).

The error list is capped (`max_errors`, default 100): past the cap the validator stops writing
messages and only counts them, and the last line says how many more there were
(`…and 999,900 more problems; only the first 100 are listed`). A million unknown keys cost the
counting, never a million messages.

Positions in messages: ``at byte N`` and ``at character N`` are 0-based offsets (bytes into the
raw file, code points into the string); ``line L column C`` of malformed JSON is 1-based.

Seal check (never rejects a bundle), one ``SealResult`` per review, in order:

- ``absent``: the review gives no ``request`` (missing or null);
- ``sealed``: the request parses as JSON to an object whose key set is exactly ``request_keys``
  (the bundle's, default ``["candidate_text", "reviewer_profile", "evidence_refs"]``), without
  duplicate keys, and ``request_sha256`` equals the SHA-256 of the request string's UTF-8 bytes
  (hex, compared case-insensitively);
- ``failed``: anything else; ``reason`` lists every problem, joined by ``"; "``.

Run manifest (published in reports; every hash is lowercase hex SHA-256)::

    {
      "format": "blindjudge.run/1",
      "bundle_sha256": <hash of the raw bundle bytes, exactly as imported>,
      "run": <canonical_sha256(run object)>,
      "builders":  {<builder id>: <canonical_sha256(builder object)>, ...},
      "copies":    {<copy id>: <sha256 of the copy's content, UTF-8, not normalised>, ...},
      "reviewers": {<reviewer id>: <canonical_sha256(reviewer object)>, ...},
      "reviews":   {"<reviewer id>/<copy id>": <canonical_sha256(review object)>, ...},
      "findings":  {<finding id>: <canonical_sha256(finding object)>, ...}
    }

``canonical_sha256`` is ``content.canonical``'s: SHA-256 of canonical JSON (keys sorted, no
whitespace, UTF-8, strings NFC with LF line endings) of the object exactly as it appears in the
bundle (optional fields included only where present). Absent ``reviewers``/``reviews``/
``findings`` give empty maps. The manifest's own hash is ``canonical_sha256(manifest)``. A copy's
hash covers its content only: truth labels, which may be corrected later, are pinned by
``bundle_sha256``.
"""

from __future__ import annotations

import hmac
import json
import re
import unicodedata
from dataclasses import dataclass
from functools import cache
from importlib import resources

from jsonschema import Draft202012Validator, ValidationError, _keywords, validators

from content.canonical import canonical_sha256, sha256_hex
from content.limits import TextLimits

FORMAT = "blindjudge.run/1"
DEFAULT_REQUEST_KEYS = ["candidate_text", "reviewer_profile", "evidence_refs"]
SCHEMA_RESOURCE = "schemas/run-bundle-1.schema.json"
MAX_ERRORS = 100

_BOM = b"\xef\xbb\xbf"
# A valid bundle nests 4 deep (findings[i].raised_by[j]); the cap keeps every later step, the
# schema library's recursive comparisons included, far from Python's recursion limit.
MAX_DEPTH = 32
_HEX64 = re.compile(r"[0-9a-fA-F]{64}")
_SURROGATE = re.compile("[\ud800-\udfff]")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Top-level keys sort in document order in error lists, not alphabetically.
_TOP_ORDER = {
    k: i for i, k in enumerate(
        ["format", "run", "builders", "copies", "reviewers", "request_keys", "reviews", "findings"]
    )
}
_JSON_TYPE = {
    "string": "a string", "number": "a number", "integer": "an integer", "boolean": "a boolean",
    "null": "null", "array": "an array", "object": "an object",
}
_PATTERN_WORDING = {"^[0-9a-fA-F]{64}$": "is not a 64-character hexadecimal SHA-256"}


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
    outcome: str  # "sealed" | "failed" | "absent"
    reason: str  # "" unless failed


@dataclass(frozen=True)
class ValidatedBundle:
    raw_sha256: str
    data: dict
    request_keys: list[str]
    seals: list[SealResult]
    manifest: dict
    manifest_sha256: str


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


def _decode(raw: bytes, errors: _Errors):
    """Bytes to a JSON value and its duplicate-key record, or None after recording why not."""
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
def _published_schema() -> dict:
    return json.loads(resources.files("content").joinpath(SCHEMA_RESOURCE).read_text("utf-8"))


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


_BundleValidator = validators.extend(
    Draft202012Validator, {"additionalProperties": _closed_object})


@cache
def _validator() -> Draft202012Validator:
    published = _published_schema()
    defs = published.get("$defs", {})
    return _BundleValidator(
        _inline_refs({k: v for k, v in published.items() if k != "$defs"}, defs))


def schema() -> dict:
    """The published JSON Schema of blindjudge.run/1."""
    return _published_schema()


def _schema_errors(data, errors: _Errors) -> None:
    for error in _validator().iter_errors(data):
        if errors.full and error.validator != "additionalProperties":
            errors.count(1)
            continue
        parts = tuple(error.absolute_path)
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
        elif kind == "type":
            types = expected if isinstance(expected, list) else [expected]
            wanted = " or ".join(_JSON_TYPE.get(t, t) for t in types)
            errors.add(parts, f"expected {wanted}, got {_kind(instance)}")
        elif kind == "enum":
            options = ", ".join(sorted(str(v) for v in expected))
            errors.add(parts, f"{_value(instance)} is not one of {options}")
        elif kind == "const":
            errors.add(parts, f"expected {_value(expected)}, got {_value(instance)}")
        elif kind == "minLength":
            errors.add(parts, "must not be empty")
        elif kind == "minItems":
            errors.add(parts, "must not be empty" if expected == 1 else f"needs {expected} items")
        elif kind == "uniqueItems":
            errors.add(parts, "must not repeat an item")
        elif kind == "pattern":
            wording = _PATTERN_WORDING.get(expected, f"does not match {expected}")
            errors.add(parts, f"{_value(instance)} {wording}")
        else:  # not produced by this schema today; kept readable if the schema grows
            errors.add(parts, _safe(error.message, 200))


def _records(data: dict, key: str):
    """(index, record) for each object in data[key], if that is a list."""
    items = data.get(key)
    if not isinstance(items, list):
        return []
    return [(i, item) for i, item in enumerate(items) if isinstance(item, dict)]


def _nonempty_str(value) -> bool:
    return isinstance(value, str) and value != ""


def _ids(data: dict, key: str, errors: _Errors) -> set[str] | None:
    """The ids of data[key], reporting duplicates; None when data[key] is present but no list."""
    if key in data and not isinstance(data[key], list):
        return None
    first: dict[str, int] = {}
    for i, record in _records(data, key):
        rid = record.get("id")
        if not _nonempty_str(rid):
            continue
        if rid in first:
            errors.add(
                (key, i, "id"), f"duplicate id {_q(rid)} (first at {key}[{first[rid]}])"
            )
        else:
            first[rid] = i
    return set(first)


def _reference(known, value, parts, noun: str, errors: _Errors) -> None:
    if known is not None and _nonempty_str(value) and value not in known:
        errors.add(parts, f"unknown {noun} {_q(value)}")


def _semantic_errors(data: dict, errors: _Errors) -> None:
    builders = _ids(data, "builders", errors)
    copies = _ids(data, "copies", errors)
    reviewers = _ids(data, "reviewers", errors)
    _ids(data, "findings", errors)

    for i, copy in _records(data, "copies"):
        _reference(builders, copy.get("builder"), ("copies", i, "builder"), "builder", errors)

    seen_pairs: dict[tuple[str, str], int] = {}
    seen_keys: dict[str, int] = {}
    for i, review in _records(data, "reviews"):
        reviewer, copy = review.get("reviewer"), review.get("copy")
        _reference(reviewers, reviewer, ("reviews", i, "reviewer"), "reviewer", errors)
        _reference(copies, copy, ("reviews", i, "copy"), "copy", errors)
        if not (_nonempty_str(reviewer) and _nonempty_str(copy)):
            continue
        if (reviewer, copy) in seen_pairs:
            errors.add(
                ("reviews", i),
                f"reviewer {_q(reviewer)} already reviewed copy {_q(copy)} "
                f"at reviews[{seen_pairs[reviewer, copy]}]",
            )
            continue
        seen_pairs[reviewer, copy] = i
        key = f"{reviewer}/{copy}"
        if key in seen_keys:  # only possible when ids contain "/"
            errors.add(
                ("reviews", i),
                f"reviewer {_q(reviewer)} and copy {_q(copy)} give the manifest key {_q(key)}, "
                f"already used by reviews[{seen_keys[key]}]; rename an id",
            )
        else:
            seen_keys[key] = i

    for i, finding in _records(data, "findings"):
        _reference(copies, finding.get("copy"), ("findings", i, "copy"), "copy", errors)
        raised_by = finding.get("raised_by")
        if isinstance(raised_by, list):
            for j, reviewer in enumerate(raised_by):
                _reference(
                    reviewers, reviewer, ("findings", i, "raised_by", j), "reviewer", errors
                )


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


# Every text of a run/1 bundle but the copy's content, by record list (None: the `run` object)
# and field, with the TextLimits field that bounds it. References (copies[].builder, …) need no
# limit of their own: one that names a record is as long as that record's id, which has one.
_LIMITED_TEXTS = {
    None: {"name": "name_chars", "task": "task_chars"},
    "builders": {"id": "id_chars", "model": "name_chars", "family": "name_chars"},
    "reviewers": {"id": "id_chars", "model": "name_chars", "family": "name_chars"},
    "copies": {"id": "id_chars", "defect": "note_chars", "cluster": "id_chars"},
    "reviews": {"reason": "review_reason_chars", "authorship_guess": "name_chars",
                "request": "request_bytes"},
    "findings": {"id": "id_chars", "text": "finding_chars"},
}


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


def _size_errors(data: dict, max_copy_bytes: int, limits: TextLimits, errors: _Errors) -> None:
    for i, copy in _records(data, "copies"):
        content = copy.get("content")
        if isinstance(content, str):
            size = _utf8_size(content)
            if size > max_copy_bytes:
                errors.add(
                    ("copies", i, "content"),
                    f"{size} bytes exceeds the per-copy limit of {max_copy_bytes} bytes",
                )
    for key, texts in _LIMITED_TEXTS.items():
        if key is None:
            records = [((), data["run"])] if isinstance(data.get("run"), dict) else []
        else:
            records = [((key, i), record) for i, record in _records(data, key)]
        for parts, record in records:
            for field, limit_name in texts.items():
                problem = _over(record.get(field), limit_name, limits)
                if problem:
                    errors.add((*parts, field) if parts else ("run", field), problem)
    request_keys = data.get("request_keys")
    if isinstance(request_keys, list):
        for j, name in enumerate(request_keys):
            problem = _over(name, "id_chars", limits)
            if problem:
                errors.add(("request_keys", j), problem)


# --- public API -----------------------------------------------------------------------------

def validate_bundle(raw: bytes, *, max_bundle_bytes: int, max_copy_bytes: int,
                    limits: TextLimits | None = None,
                    max_errors: int = MAX_ERRORS) -> ValidatedBundle:
    """Check a whole bundle; return it with its seal results and manifest, or raise BundleError.

    `limits` bounds every text but the copies' content (TextLimits' defaults when None);
    `max_errors` caps the listed problems (the rest are counted, see the module docstring).
    Pure: reads nothing but its arguments and the packaged schema, writes nothing.
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
    if "format" in data and data["format"] != FORMAT:
        # Another format's fields mean something else: checking them against this one is noise.
        raise BundleError(
            [f"format: unknown format {_value(data['format'])}; expected {_q(FORMAT)}"]
        )

    _schema_errors(data, errors)
    _semantic_errors(data, errors)
    _text_errors(data, duplicates, errors, raw)
    _size_errors(data, max_copy_bytes, limits, errors)
    if errors:
        raise errors.error()

    request_keys = list(data.get("request_keys") or DEFAULT_REQUEST_KEYS)
    seals = [
        check_seal(review.get("request"), review.get("request_sha256"), request_keys)
        for review in data.get("reviews") or []
    ]
    raw_sha256 = sha256_hex(raw)
    manifest = build_manifest(data, raw_sha256)
    return ValidatedBundle(
        raw_sha256=raw_sha256,
        data=data,
        request_keys=request_keys,
        seals=seals,
        manifest=manifest,
        manifest_sha256=canonical_sha256(manifest),
    )


SEAL_KEYS_LISTED = 20


def _key_list(keys: list[str]) -> str:
    """Keys for a seal reason: the first SEAL_KEYS_LISTED, then how many more (a request of a
    million keys must not make a reason of a million)."""
    listed = ", ".join(_safe(k) for k in keys[:SEAL_KEYS_LISTED])
    more = len(keys) - SEAL_KEYS_LISTED
    return listed + (f" and {more:,} more" if more > 0 else "")


def check_seal(
    request: str | None, request_sha256: str | None, request_keys: list[str]
) -> SealResult:
    """Whether one review's request was sealed: exact key set and matching hash (see module doc)."""
    if request is None:
        return SealResult("absent", "")
    if not isinstance(request, str):
        return SealResult("failed", "request is not a string")

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
        return SealResult("failed", "; ".join(reasons))
    return SealResult("sealed", "")


def build_manifest(data: dict, raw_sha256: str) -> dict:
    """The run manifest of validated bundle data (shape in the module docstring)."""

    def objects(key):
        return [item for item in data.get(key) or [] if isinstance(item, dict)]

    return {
        "format": data["format"],
        "bundle_sha256": raw_sha256,
        "run": canonical_sha256(data["run"]),
        "builders": {b["id"]: canonical_sha256(b) for b in objects("builders")},
        "copies": {c["id"]: sha256_hex(c["content"].encode("utf-8")) for c in objects("copies")},
        "reviewers": {r["id"]: canonical_sha256(r) for r in objects("reviewers")},
        "reviews": {
            f"{r['reviewer']}/{r['copy']}": canonical_sha256(r) for r in objects("reviews")
        },
        "findings": {f["id"]: canonical_sha256(f) for f in objects("findings")},
    }
