"""The canary scanner (docs/threats.md case 12): finds planted values in every byte a client receives.

A canary is a distinctive value planted where a judge must never see it (a builder's model name, a
bundle id, a defect note, another judge's reason, a database id). `Scanner.scan_response` looks
for each canary in a response's body, in every header (`ETag`, `Content-Disposition`, `Link`,
`Location`, …) and in every cookie it sets, in these forms:

- `raw`: the UTF-8 bytes, case-insensitively (a template's `|upper` does not hide it);
- `core`: the longest run of ASCII letters and digits in the canary (8 or more), raw and
  case-insensitively, so a leak that drops or rewrites punctuation, spaces or non-ASCII letters
  (slugify, a truncated escape) is still caught;
- `base64`: standard and URL-safe alphabets, padded or not, at each of the three byte alignments
  (a canary inside a larger encoded blob is found wherever it starts);
- `hex`: lower or upper case;
- `url`: percent-encoded (`quote`, `quote_plus`, double encoding), found by decoding the haystack;
- `html`: HTML character references of any kind (`&amp;`, `&#67;`, `&#x43;`), found by decoding;
- `json`: JSON string escapes (`\\u00e9`, surrogate pairs, `\\/`, `\\"`), found by decoding;
- `token`: inside a base64 token (optionally zlib-compressed, as Django's signed cookies are) in a
  header or cookie, found by decoding every such token.

A decoded form counts only where decoding reveals more occurrences than the raw bytes hold, so
each form is reported for what it is. Every detector here is shown to fire on a deliberately
unsafe page (tests/support/urls_unsafe.py) before its silence elsewhere counts.
"""

from __future__ import annotations

import base64
import binascii
import html
import re
import zlib
from dataclasses import dataclass
from functools import lru_cache
from html.parser import HTMLParser
from urllib.parse import quote, unquote_to_bytes

from django.urls import URLResolver, get_resolver
from django.urls.resolvers import RegexPattern

FORMS = ("raw", "core", "base64", "hex", "url", "html", "json", "token")

_CORE = re.compile(r"[A-Za-z0-9]{8,}")
_JSON_ESCAPE = re.compile(r"\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})"
                          r"|\\u([0-9a-fA-F]{4})|\\([\"\\/bfnrt])")
_JSON_SIMPLE = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_TOKEN = re.compile(rb"[A-Za-z0-9+/_\-]{12,}={0,2}")


@dataclass(frozen=True)
class Hit:
    canary: str  # the label of the canary
    form: str  # one of FORMS
    where: str  # "body", "header <Name>" or "cookie <name>"
    url: str = ""

    def __str__(self):
        return f"{self.url} {self.where}: {self.canary} ({self.form})"


def core_of(value: str) -> str | None:
    runs = _CORE.findall(value)
    return max(runs, key=len) if runs else None


def base64_needles(data: bytes) -> set[bytes]:
    """The parts of the base64 encoding of `data` that do not depend on its neighbours, for each
    of the three alignments it can start at, in both alphabets."""
    needles = set()
    for offset in range(3):
        padded = b"\0" * offset + data
        whole = len(padded) // 3 * 3  # the last partial group depends on what follows
        encoded = base64.b64encode(padded[:whole])
        skip = -(-8 * offset // 6)  # characters that mix in the bytes before `data`
        core = encoded[skip:]
        if len(core) >= 8:
            needles.add(core)
            needles.add(core.translate(bytes.maketrans(b"+/", b"-_")))
    return needles


def _json_unescape(text: str) -> str:
    def one(match):
        if match.group(1):
            high, low = int(match.group(1), 16), int(match.group(2), 16)
            return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
        if match.group(3):
            return chr(int(match.group(3), 16))
        char = match.group(4)
        return _JSON_SIMPLE.get(char, char)

    return _JSON_ESCAPE.sub(one, text)


def _url_unescape(data: bytes, plus: bool) -> bytes:
    """Percent-decoded (and, with `plus`, `+` as a space, as forms encode), repeatedly: double and
    triple encoding too."""
    previous = None
    rounds = 0
    while data != previous and rounds < 3:
        previous = data
        data = unquote_to_bytes(data.replace(b"+", b" ") if plus else data)
        rounds += 1
    return data


def _decoded_tokens(data: bytes) -> bytes:
    """Every base64 token in a header or cookie, decoded (and decompressed where it is zlib, as
    `django.core.signing` compresses), joined: what a reader of the header could get back."""
    out = []
    for token in _TOKEN.findall(data):
        for candidate in (token, token.lstrip(b".")):
            raw = candidate.rstrip(b"=")
            raw += b"=" * (-len(raw) % 4)
            for decode in (base64.b64decode, base64.urlsafe_b64decode):
                try:
                    decoded = decode(raw)
                except (binascii.Error, ValueError):
                    continue
                out.append(decoded)
                try:
                    out.append(zlib.decompress(decoded))
                except zlib.error:
                    pass
    return b"\n".join(out)


_DIGITS = re.compile(rb"(?<![0-9])[0-9]{6,}(?![0-9])")
_B64_RUN = re.compile(rb"[A-Za-z0-9+/_\-]{8,}")
_HEX_RUN = re.compile(rb"[0-9a-fA-F]{12,}")


_URLSAFE = bytes.maketrans(b"-_", b"+/")


def _base64_decodings(data: bytes) -> bytes:
    """Every run of base64 characters, decoded from each of its first four offsets, in both
    alphabets (as `base64.b64decode` and `base64.urlsafe_b64decode` decode, without their
    wrappers). A run without `-` or `_` decodes the same in both (the URL-safe alphabet only
    translates those two), so it is decoded once: what is looked for here is whether a digit run
    occurs at all, never how often."""
    out = []
    for run in _B64_RUN.findall(data):
        runs = (run, run.translate(_URLSAFE)) if b"-" in run or b"_" in run else (run,)
        for offset in range(4):
            for alphabet in runs:
                chunk = alphabet[offset:]
                try:
                    out.append(binascii.a2b_base64(chunk[:len(chunk) // 4 * 4]))
                except binascii.Error:
                    pass
    return b"\n".join(out)


def _hex_decodings(data: bytes) -> bytes:
    out = []
    for run in _HEX_RUN.findall(data):
        for offset in range(2):
            chunk = run[offset:]
            out.append(binascii.unhexlify(chunk[:len(chunk) // 2 * 2]))
    return b"\n".join(out)


def _any_of(needles) -> re.Pattern | None:
    """One pattern matching wherever any of `needles` occurs (None for no needles): a gate, so
    that the needles are counted one by one only where one of them is there at all."""
    needles = sorted(set(needles), key=lambda needle: (-len(needle), needle))  # one text per set
    return re.compile(b"|".join(map(re.escape, needles))) if needles else None


@lru_cache(maxsize=16)
def _haystacks(data: bytes, tokens: bool) -> tuple[bytes, dict[str, bytes]]:
    """`data` lowered, and each decoding of it that differs from that (lowered): what every
    scanner looks in. Cached, so the scanners of one response (the canaries, the phase-2 probe,
    the defect-note probe) decode it once."""
    lowered = data.lower()
    text = data.decode("utf-8", errors="replace")
    decoded = {
        "url": _url_unescape(data, plus=False).lower(),
        "url+": _url_unescape(data, plus=True).lower(),
        "html": html.unescape(text).encode("utf-8").lower(),
        "json": _json_unescape(text).encode("utf-8", errors="surrogatepass").lower(),
    }
    if tokens:
        decoded["token"] = _decoded_tokens(data).lower()
    return lowered, {form: haystack for form, haystack in decoded.items() if haystack != lowered}


@lru_cache(maxsize=16)
def _digit_runs(data: bytes, tokens: bool) -> tuple[list, dict[str, list], dict[str, list]]:
    """The digit runs of `data` (raw), of each of its decodings, and of the decodings of its
    parts (base64 and hex runs), for the canaries that are database ids."""
    raw_runs = _DIGITS.findall(data)
    variants = {"raw": raw_runs}
    for form, haystack in _haystacks(data, tokens)[1].items():
        variants[form.rstrip("+")] = _DIGITS.findall(haystack)
    separate = {"base64": _DIGITS.findall(_base64_decodings(data)),
                "hex": _DIGITS.findall(_hex_decodings(data))}
    return raw_runs, variants, separate


class Scanner:
    """Looks for every canary, in every form, in bytes and in responses.

    Text canaries are searched for by their encoded forms (needles); canaries made of digits only
    (database ids), of which there are many, by decoding the haystack every way the scanner knows
    and collecting the digit runs (one pass, whatever the number of ids).
    """

    def __init__(self, canaries: dict[str, str]):
        assert canaries, "a scanner needs canaries"
        self.canaries = {label: str(value) for label, value in canaries.items()}
        self._raw = {}
        self._core = {}
        self._b64 = {}
        self._hex = {}
        self._numbers = {}
        for label, value in self.canaries.items():
            assert len(value) >= 6, f"canary {label!r} is too short to be distinctive: {value!r}"
            data = value.encode("utf-8")
            if value.isdigit():
                self._numbers.setdefault(data, []).append(label)
                continue
            self._raw[label] = data.lower()
            core = core_of(value)
            if core and core != value:
                self._core[label] = core.encode("ascii").lower()
            self._b64[label] = base64_needles(data)
            self._hex[label] = data.hex().encode("ascii")
        # Every base64 needle of every canary in one pattern: where none of them occurs anywhere
        # (nearly every response), no canary needs its needles looked for one by one.
        self._b64_any = _any_of(n for ns in self._b64.values() for n in ns)
        # Likewise what the lowered haystack and its decodings are searched for: a canary can be
        # found in a form only where one of these occurs.
        self._lowered_any = _any_of([*self._raw.values(), *self._core.values(), *self._hex.values()])
        self._decoded_any = _any_of(self._raw.values())

    def scan_bytes(self, data: bytes, where: str, url: str = "", *, tokens: bool = False) -> list[Hit]:
        found: dict[str, set[str]] = {}
        lowered, decoded = _haystacks(data, tokens)
        any_base64 = self._b64_any is not None and self._b64_any.search(data) is not None
        if (any_base64 or self._lowered_any is not None and self._lowered_any.search(lowered)
                or self._decoded_any is not None
                and any(self._decoded_any.search(haystack) for haystack in decoded.values())):
            for label, raw in self._raw.items():
                forms = set()
                raw_count = lowered.count(raw)
                if raw_count:
                    forms.add("raw")
                core = self._core.get(label)
                if core and lowered.count(core) > raw_count:
                    forms.add("core")
                if any_base64 and any(needle in data for needle in self._b64[label]):
                    forms.add("base64")
                if self._hex[label] in lowered:
                    forms.add("hex")
                for form, haystack in decoded.items():
                    if haystack.count(raw) > raw_count:
                        forms.add(form.rstrip("+"))
                if forms:
                    found[label] = forms
        if self._numbers:
            # The decodings of the haystack's parts (`separate`) never hold its raw text: any
            # run counts there.
            raw_runs, variants, separate = _digit_runs(data, tokens)
            for form, runs in [*variants.items(), *separate.items()]:
                for run in runs:
                    if run in self._numbers and (form in ("raw", "base64", "hex")
                                                 or runs.count(run) > raw_runs.count(run)):
                        for label in self._numbers[run]:
                            found.setdefault(label, set()).add(form)
        return [Hit(label, form, where, url) for label, forms in found.items()
                for form in FORMS if form in forms]

    def scan_response(self, response, url: str = "") -> list[Hit]:
        """The body, every header and every cookie of a Django test-client response. Headers
        (and cookies) are scanned together first, then one by one only where something hides."""
        url = url or getattr(response, "request", {}).get("PATH_INFO", "")
        hits = self.scan_bytes(body_of(response), "body", url)
        parts = [(f"header {name}", f"{name}: {value}") for name, value in response.items()]
        parts += [(f"cookie {name}", morsel.OutputString()) for name, morsel in response.cookies.items()]
        together = "\n".join(text for _, text in parts).encode("utf-8", errors="replace")
        if self.scan_bytes(together, "headers", url, tokens=True):
            for where, text in parts:
                hits += self.scan_bytes(text.encode("utf-8", errors="replace"), where, url, tokens=True)
        return hits


def body_of(response) -> bytes:
    if getattr(response, "streaming", False):
        if not hasattr(response, "_leakcheck_body"):
            # The test client closes the stream when it is exhausted (never close it here: that
            # would fire request_finished and close the test's database connection).
            response._leakcheck_body = b"".join(response.streaming_content)
        return response._leakcheck_body
    return response.content


def forms_found(hits: list[Hit]) -> dict[str, set[str]]:
    """canary label -> the set of forms in which it was found."""
    found: dict[str, set[str]] = {}
    for hit in hits:
        found.setdefault(hit.canary, set()).add(hit.form)
    return found


# --- Encoders for the deliberately unsafe page (each form the scanner must catch) --------------

def encode(value: str, form: str) -> str:
    data = value.encode("utf-8")
    if form == "raw":
        return value
    if form == "base64":
        # Behind a prefix of one byte, so the scanner must find it off the natural alignment.
        return base64.b64encode(b"\x01" + data).decode("ascii")
    if form == "hex":
        return data.hex().upper()
    if form == "url":
        return "".join(f"%{byte:02X}" for byte in data)  # every byte, letters included
    if form == "html":
        return "".join(f"&#x{ord(char):x};" for char in value)
    if form == "json":
        return "".join(f"\\u{ord(char):04x}" if ord(char) < 0x10000 else char for char in value)
    raise ValueError(form)


# --- The URL resolver, walked ----------------------------------------------------------------------

_PARAM = re.compile(r"<(?:(?P<converter>[^>:]+):)?(?P<name>\w+)>")


@dataclass(frozen=True)
class Route:
    """One URL pattern as the resolver knows it, with the route strings of its includes joined."""

    route: str  # e.g. "s/<str:url_id>/i/<str:code>/"
    name: str | None
    params: tuple[str, ...]
    regex: bool  # a regular-expression pattern somewhere along the way (cannot be filled)

    def fill(self, values: dict[str, str]) -> str:
        return "/" + _PARAM.sub(lambda m: quote(values[m.group("name")], safe=""), self.route)


def walk_routes(patterns=None, prefix: str = "", regex: bool = False) -> list[Route]:
    """Every URL pattern of the current URL configuration, includes followed."""
    if patterns is None:
        patterns = get_resolver().url_patterns
    routes = []
    for pattern in patterns:
        is_regex = regex or isinstance(pattern.pattern, RegexPattern)
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            routes += walk_routes(pattern.url_patterns, route, is_regex)
        else:
            params = tuple(m.group("name") for m in _PARAM.finditer(route))
            if is_regex:
                params += tuple(re.compile(route.replace("^", "").replace("$", "")).groupindex)
            routes.append(Route(route=route, name=pattern.name, params=params, regex=is_regex))
    return routes


# --- HTML: the URLs a page points at, and CSRF tokens ------------------------------------------

URL_ATTRIBUTES = {"href", "src", "action", "formaction", "poster", "srcset", "ping", "data",
                  "data-autosave", "background", "cite", "longdesc", "manifest", "xlink:href"}


def page_urls(body: bytes) -> list[tuple[str, str, str]]:
    """(tag, attribute, value) of every URL-bearing attribute in an HTML page."""
    found = []

    class Parser(HTMLParser):
        def handle_starttag(self, tag, attrs):
            for name, value in attrs:
                if value is None:
                    continue
                if name in URL_ATTRIBUTES:
                    found.append((tag, name, value))
                elif tag == "meta" and name == "content" and "url=" in value.lower():
                    found.append((tag, name, value))

        handle_startendtag = handle_starttag

    parser = Parser(convert_charrefs=True)
    parser.feed(body.decode("utf-8", errors="replace"))
    parser.close()
    return found


CSRF_INPUT = re.compile(rb'(name="csrfmiddlewaretoken" value=")[A-Za-z0-9]{64}(")')


def without_csrf(body: bytes) -> bytes:
    return CSRF_INPUT.sub(rb"\1<CSRF>\2", body)
