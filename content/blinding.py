"""Finding names that could unblind a judge, for the host's blinding check.

Pure: no Django, no database. `find_name_matches` only *reports*: it never changes text. The
host reads the report and accepts patterns, which `content.normalise` then redacts; nothing in
content is redacted without that acceptance (`import openai` stays in code unless the host asks).

Three kinds of name are looked for, case-insensitively and also across invisible characters
(`Open\\u200bAI` is found as OpenAI):

- a builder's own names (`name_terms`): its full model id, the id without a date or version
  suffix, and its family. Separators are loose, so `claude-3-5-sonnet` also finds
  `Claude 3.5 Sonnet` and `claude35sonnet`;
- known product and vendor names (`KNOWN_PRODUCT_NAMES`), whoever the builders are;
- model-id-like tokens: a known model stem followed by version parts (`gpt-4o-mini`,
  `llama-3.1-70b`, `qwen2.5-coder-7b`, `o3-mini`).

Name boundaries are those of `normalise.term_regex`: `openai_client`, `ChatOpenAI` and `gpt4`
contain a name; `GPTQ` and `metadata` do not. Overlapping finds are reported once, over the union
of their spans, with the most specific reason: builder model, then builder family, then known
product, then model-id-like.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from content.normalise import FoldedText, normalise, normalise_line_endings, show_controls, term_regex

__all__ = ["KNOWN_PRODUCT_NAMES", "Match", "name_terms", "find_name_matches", "decision_key",
           "match_status", "JudgedCopy", "redactions_shown", "redactions_per_builder"]

# Model products, assistants and the organisations behind them. Curated: each name is one a
# reader would take as naming who wrote a text. Plain company names that are also everyday words
# in code and prose (Google, Meta, Microsoft, Amazon, NVIDIA) are left to builder families.
KNOWN_PRODUCT_NAMES: tuple[str, ...] = (
    # OpenAI
    "OpenAI", "ChatGPT", "GPT", "Codex",
    # Anthropic
    "Anthropic", "Claude",
    # Google
    "Google DeepMind", "DeepMind", "Gemini", "Gemma", "Bard", "PaLM",
    # Meta
    "Meta AI", "Llama", "Code Llama",
    # Alibaba
    "Alibaba", "Qwen", "QwQ", "Tongyi",
    # Mistral AI
    "Mistral", "Mixtral", "Codestral", "Devstral", "Magistral", "Ministral", "Pixtral",
    # others
    "DeepSeek", "xAI", "Grok", "Copilot", "Phi", "Cohere", "Command R", "Aya",
    "Moonshot AI", "Kimi", "01.AI", "Yi", "Zhipu", "ChatGLM", "GLM", "Baichuan", "MiniMax",
    "Hunyuan", "Doubao", "ERNIE", "InternLM", "Falcon", "Nemotron", "OLMo", "Granite",
    "StarCoder", "Jamba", "AI21", "Reka", "Tabnine", "Windsurf",
)

# Names that are also ordinary words or identifiers in lower case (`yi = y[i]`, `phi`, `grok`,
# the `minimax` algorithm, R's `glm()`): matched only as written here. Written with a version
# (`phi-3-mini`, `grok-2`) they are still found as model-id-like tokens.
CASE_SENSITIVE_NAMES = frozenset({
    "Codex", "Bard", "PaLM", "xAI", "Grok", "Phi", "Cohere", "Command R", "Aya", "Yi", "GLM",
    "MiniMax", "ERNIE", "Falcon", "Granite", "Reka",
})

# Stems of model ids; a stem alone is not model-id-like, a stem with a version part is.
MODEL_STEMS: tuple[str, ...] = (
    "chatgpt", "gpt", "claude", "gemini", "gemma", "codellama", "llama", "qwq", "qwen",
    "mistral", "mixtral", "codestral", "devstral", "magistral", "ministral", "pixtral",
    "deepseek", "grok", "chatglm", "glm", "nemotron", "olmo", "kimi", "baichuan", "internlm",
    "starcoder", "hunyuan", "doubao", "smollm", "stablelm", "dbrx", "codegemma", "codeqwen",
)
# Stems that are also everyday words or variable names (`phi_2`, `command 3`, `palm 2`): only
# with a hyphen and a version part (`phi-3-mini`, `yi-34b`, `command-r-plus`, `falcon-7b`).
WORDY_MODEL_STEMS: tuple[str, ...] = (
    "phi", "yi", "command", "falcon", "granite", "palm", "aya", "jamba", "ernie", "minimax",
    "reka",
)
# Word parts that mark a version or variant when they follow a stem (`claude-sonnet-4`,
# `gpt-4o-mini`, `command-r-plus`, `deepseek-coder`).
_VARIANT_WORDS = (
    "mini", "nano", "pro", "turbo", "flash", "sonnet", "opus", "haiku", "instant", "large",
    "medium", "small", "tiny", "coder", "code", "instruct", "chat", "latest", "preview", "plus",
    "ultra", "lite", "vision", "reasoner", "thinking", "exp", "it", "hf", "base", "max", "air",
    "oss", "r", "vl", "math",
)

WHY_BUILDER_MODEL = "builder model"
WHY_BUILDER_FAMILY = "builder family"
# Families whose name is also an everyday word (or an HTML and YAML key): as a name they are
# written capitalised, as the word usually not. `<meta charset="utf-8"/>` in a task and
# `+# meta: !!omap` in a patch were flagged as the family Meta (issue 24 item 7).
COMMON_WORD_FAMILIES = frozenset({"meta", "apple", "amazon", "cohere", "mistral", "reka"})
WHY_KNOWN_PRODUCT = "known product"
WHY_MODEL_ID = "model-id-like"
_PRIORITY = {WHY_BUILDER_MODEL: 0, WHY_BUILDER_FAMILY: 1, WHY_KNOWN_PRODUCT: 2, WHY_MODEL_ID: 3}

CONTEXT_WIDTH = 120


@dataclass(frozen=True, slots=True)
class Match:
    term: str  # what was looked for: a builder term, a known product name, or "model-id"
    why: str  # "builder model" | "builder family" | "known product" | "model-id-like"
    builder: str | None  # the bundle id of the builder whose name matched
    matched: str  # the exact text matched
    line: int  # 1-based
    column: int  # 1-based, in characters
    context: str  # the line around the match, at most ~120 characters, controls made visible
    start: int = 0  # the span matched, in characters of the text (line endings as LF)
    end: int = 0

    @property
    def key(self) -> str:
        """What a host's decision on this match is recorded under: the matched text without the
        invisible characters the matcher looked through, casefolded (as literal patterns match)."""
        return decision_key(self.matched)


# --- Builder names ------------------------------------------------------------------------------

# Suffixes that date or version a model id rather than name the model (removed repeatedly):
# `-2024-08-06`, `-20241022`, `@20241022`, `-0613`, `-v1:0`, `:8b` (an Ollama tag), `-latest`.
_ID_SUFFIX_RE = re.compile(
    r"(?:[-_@.](?:19|20)\d{2}-?\d{2}-?\d{2}"
    r"|[-_@]\d{4}"
    r"|[-_:.]v\d+(?:[.:]\d+)*"
    r"|:[\w.-]+"
    r"|[-_](?:latest|preview|exp|experimental))$",
    re.IGNORECASE,
)


# A provider's vendor prefix: `anthropic.claude-…` (Bedrock); `openai/gpt-4o` is cut at the slash.
_VENDOR_PREFIX_RE = re.compile(r"^[a-z][a-z0-9-]*\.(?=[a-z])", re.IGNORECASE)


def name_terms(model: str, family: str) -> list[str]:
    """A builder's names to look for: the full model id, the id without a trailing date or
    version suffix (and without a `vendor/` or `vendor.` prefix), and the family.

    `("gpt-4o-2024-08-06", "OpenAI")` → `["gpt-4o-2024-08-06", "gpt-4o", "OpenAI"]`. Duplicates
    (case-insensitive) and terms shorter than two characters are left out.
    """
    model = (model or "").strip()
    family = (family or "").strip()
    terms = [model]
    base = _VENDOR_PREFIX_RE.sub("", model.rsplit("/", 1)[-1])
    terms.append(base)
    stem = base
    while True:
        shorter = _ID_SUFFIX_RE.sub("", stem)
        if shorter == stem or len(shorter) < 2:
            break
        stem = shorter
    terms.append(stem)
    terms.append(family)
    result: list[str] = []
    seen: set[str] = set()
    for term in terms:
        if len(term) >= 2 and term.casefold() not in seen:
            seen.add(term.casefold())
            result.append(term)
    return result


# --- Regexes ------------------------------------------------------------------------------------

def _name_source(name: str) -> str:
    source = term_regex(name, flexible=True)
    return f"(?-i:{source})" if name in CASE_SENSITIVE_NAMES else source


def _key(word: str) -> str:
    return re.sub(r"[\s._-]+", "", word.lower())


def _known_products() -> dict[str, list[tuple[str, re.Pattern]]]:
    """Known product names by their lower-case, separator-free form, each with its regex."""
    products: dict[str, list[tuple[str, re.Pattern]]] = {}
    for name in KNOWN_PRODUCT_NAMES:
        products.setdefault(_key(name), []).append(
            (name, re.compile(_name_source(name), re.IGNORECASE))
        )
    return products


def _model_id_re() -> re.Pattern:
    stems = "|".join(sorted(MODEL_STEMS, key=len, reverse=True))
    words = "|".join(sorted(_VARIANT_WORDS, key=len, reverse=True))
    # A version part holds a digit: 4o, 70b, 8x7b, r1, v3, a3b, 3.1, 20241022.
    number = r"(?>[a-z]{0,3}\d[a-z0-9]*(?:\.\d+[a-z0-9]*)*)(?![a-z0-9])"
    word = f"(?>{words})(?![a-z0-9])"
    part = f"(?:[-_.:]{number}|[ ]{number}|[-_.:]{word})"
    stem_model = f"(?<![a-z0-9])(?:{stems})(?:{number}{part}*|{part}+)"
    wordy = "|".join(sorted(WORDY_MODEL_STEMS, key=len, reverse=True))
    wordy_part = f"(?:-{number}|-{word})"
    wordy_model = f"(?<![a-z0-9])(?:{wordy}){wordy_part}+"
    # OpenAI's o-series is only an id with a variant: o3-mini, o1-preview, o4-mini-high.
    o_series = r"(?<![a-z0-9])o[1-9](?:-(?:mini|pro|preview|high|low|deep-research))+(?![a-z0-9])"
    return re.compile(f"{stem_model}|{wordy_model}|{o_series}", re.IGNORECASE)


def _prefilter_re(words: list[str]) -> re.Pattern:
    """A fast, boundary-free scan for where one of `words` (lower case) may start.

    Big alternations with lookbehinds are slow in `re` (seconds on 5 MB), so the precise regexes
    are only tried with `.match()` where this scan, run case-sensitively on a lower-cased copy
    of the text and grouped by first letter, finds a candidate.
    """
    by_first: dict[str, list[str]] = {}
    for word in sorted(set(words), key=len, reverse=True):
        chunks = [c for c in re.split(r"[\s._-]+", word) if c]
        source = r"[\s._-]?".join(re.escape(c) for c in chunks)
        by_first.setdefault(source[0], []).append(source[1:])
    return re.compile("|".join(
        f"{first}(?:{'|'.join(rests)})" if len(rests) > 1 else f"{first}{rests[0]}"
        for first, rests in by_first.items()
    ))


_KNOWN_PRODUCTS = _known_products()
_KNOWN_PRODUCTS_PREFILTER_RE = _prefilter_re([n.lower() for n in KNOWN_PRODUCT_NAMES])
_MODEL_ID_RE = _model_id_re()
_MODEL_ID_PREFILTER_RE = re.compile(
    _prefilter_re(list(MODEL_STEMS + WORDY_MODEL_STEMS)).pattern + r"|o[1-9]-"
)
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _lowered(text: str) -> str:
    """`text` in lower case, character for character (so positions stay the same)."""
    lowered = text.lower()
    if len(lowered) == len(text):  # every character mapped to one: positions line up
        return lowered
    return text.translate(_ASCII_LOWER)


def _hints(prefilter: re.Pattern, lowered: str):
    """Every place where `prefilter` matches in `lowered`, overlapping ones included."""
    position = 0
    while True:
        hint = prefilter.search(lowered, position)
        if hint is None:
            return
        yield hint
        position = hint.start() + 1


def _known_product_matches(text: str, lowered: str):
    seen: dict[str, list] = {}
    for hint in _hints(_KNOWN_PRODUCTS_PREFILTER_RE, lowered):
        start = hint.start()
        # Quick refusal of most hints inside words (`graphics` holds `phi`): after a letter,
        # a name can only start at a camelCase step, which needs a capital here.
        if start and text[start - 1].isalpha() and not text[start].isupper():
            continue
        end = hint.end()
        if end < len(text) and text[end].isalpha() and not text[end].isupper():
            continue
        found = hint.group()
        products = seen.get(found)
        if products is None:
            products = seen[found] = _KNOWN_PRODUCTS.get(_key(found), ())
        for name, regex in products:
            match = regex.match(text, start)
            if match:
                yield name, match
                break


_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
_AFTER_STEM = frozenset("-_.: 0123456789")


def _model_id_matches(text: str, lowered: str):
    for hint in _hints(_MODEL_ID_PREFILTER_RE, lowered):
        start = hint.start()
        if start and lowered[start - 1] in _ALNUM:
            continue
        if lowered[hint.end() - 1] != "-" and lowered[hint.end():hint.end() + 1] not in _AFTER_STEM:
            continue  # a stem goes on with a version: `qwen2`, `gpt-4`, `llama 3`, `claude:`
        match = _MODEL_ID_RE.match(text, start)
        if match:
            yield match


# --- Matching -----------------------------------------------------------------------------------

def find_name_matches(text: str, builders: list[dict]) -> list[Match]:
    """Every place in `text` that could name a builder, sorted by position.

    `builders` are `{"id", "model", "family"}` dicts. Line endings are normalised to LF first;
    lines and columns are 1-based and count characters of that text. Run it on what judges
    would see (the text after `strip_metadata`) to check content; the stripped lines are shown
    to the host as metadata anyway. When several builders share a name (two of one family), the
    first builder in the list is named.
    """
    text = normalise_line_endings(text)
    folded = FoldedText(text)
    folded_away = len(folded.text) != len(text)
    candidates: list[tuple[int, int, int, str, str, str | None]] = []

    def add(start: int, end: int, why: str, term: str, builder: str | None) -> None:
        if end > start:
            if folded_away:
                start, end = folded.span(start, end)
            candidates.append((start, end, _PRIORITY[why], term, why, builder))

    seen_terms: set[tuple[str, str]] = set()
    for builder in builders:
        model_terms = name_terms(builder.get("model") or "", "")
        family = (builder.get("family") or "").strip()
        labelled = [(t, WHY_BUILDER_MODEL) for t in model_terms]
        if len(family) >= 2:
            labelled.append((family, WHY_BUILDER_FAMILY))
        for term, why in labelled:
            if (term.casefold(), why) in seen_terms:
                continue
            seen_terms.add((term.casefold(), why))
            regex = re.compile(term_regex(term, flexible=True), re.IGNORECASE)
            capitalised_only = why == WHY_BUILDER_FAMILY and term.casefold() in COMMON_WORD_FAMILIES
            for m in regex.finditer(folded.text):
                if capitalised_only and not folded.text[m.start()].isupper():
                    continue  # `<meta charset>`, `# meta:`: the word, not the company
                add(m.start(), m.end(), why, term, builder.get("id"))

    lowered = _lowered(folded.text)
    for name, m in _known_product_matches(folded.text, lowered):
        add(m.start(), m.end(), WHY_KNOWN_PRODUCT, name, None)

    for m in _model_id_matches(folded.text, lowered):
        add(m.start(), m.end(), WHY_MODEL_ID, "model-id", None)

    return _merged(text, candidates)


def _merged(text: str, candidates: list) -> list[Match]:
    """One Match per cluster of overlapping candidates: the union span, the best reason."""
    candidates.sort()
    clusters: list[tuple[int, int, tuple]] = []
    for candidate in candidates:
        start, end = candidate[0], candidate[1]
        if clusters and start < clusters[-1][1]:
            first, last, best = clusters[-1]
            if _rank(candidate) < _rank(best):
                best = candidate
            clusters[-1] = (first, max(last, end), best)
        else:
            clusters.append((start, end, candidate))
    matches = []
    line, line_start, line_end = 1, 0, -1
    for start, end, best in clusters:
        if start > line_end:  # past the line of the previous match: find this one's line
            newlines = text.count("\n", line_start, start)
            if newlines:
                line += newlines
                line_start = text.rfind("\n", line_start, start) + 1
            line_end = text.find("\n", start)
            if line_end == -1:
                line_end = len(text)
        matches.append(Match(
            term=best[3],
            why=best[4],
            builder=best[5],
            matched=text[start:end],
            line=line,
            column=start - line_start + 1,
            context=_context(text, line_start, line_end, start, end),
            start=start,
            end=end,
        ))
    return matches


def _rank(candidate: tuple) -> tuple[int, int, int]:
    """Most specific reason first, then the longest find, then the earliest."""
    start, end, priority = candidate[0], candidate[1], candidate[2]
    return priority, start - end, start


def _context(text: str, line_start: int, line_end: int, start: int, end: int) -> str:
    """The line around [start, end), cut to about CONTEXT_WIDTH characters with `…` marks."""
    left, right = line_start, line_end
    if line_end - line_start > CONTEXT_WIDTH:
        if end - start >= CONTEXT_WIDTH:
            left = start
        else:
            left = max(line_start, min((start + end) // 2 - CONTEXT_WIDTH // 2,
                                       line_end - CONTEXT_WIDTH))
        right = min(left + CONTEXT_WIDTH, line_end)
    return (
        ("…" if left > line_start else "")
        + show_controls(text[left:right])
        + ("…" if right < line_end else "")
    )


# --- What the host decided: every match is redacted, or kept on purpose, before opening ----------

REDACTED, DISMISSED, UNDECIDED = "redacted", "dismissed", "undecided"


def decision_key(matched: str) -> str:
    """The key a dismissal (a match kept on purpose) is recorded under: the matched text as a
    literal pattern would match it (invisible characters dropped, case folded)."""
    return FoldedText(matched).text.casefold()


def match_status(match: Match, redacted: list[tuple[int, int]], dismissed: set[str]) -> str:
    """`redacted` when an accepted pattern covers any of the match (judges see `[redacted]`
    there; `redacted` are the text's spans from `normalise.redaction_spans`), `dismissed` when the
    host kept its text on purpose (`dismissed` holds decision keys), else `undecided`: a session
    is not opened while any match is undecided."""
    if any(start < match.end and match.start < end for start, end in redacted):
        return REDACTED
    if match.key in dismissed:
        return DISMISSED
    return UNDECIDED


# --- Shape: how a copy is laid out, which can give its builder away as surely as a name ----------

# Each feature: what the host reads, whether the normaliser takes it away before judges see the
# copy, and the test on the copy as imported (before normalising).
_FORMAT_PATCH_RE = re.compile(r"^From [0-9a-f]{40} Mon Sep 17 00:00:00 2001$", re.MULTILINE)
_TRAILING_BLANK_RE = re.compile(r"[ \t]+\r?$", re.MULTILINE)
_BANNER_RE = re.compile(
    r"^\W{0,6}(?:auto-?generated|generated|created|written|produced|made)"
    r"(?: automatically)? (?:by|with|using) \S", re.IGNORECASE | re.MULTILINE)
SHAPE_FEATURES = {
    "format_patch": ("git format-patch mail headers (From <sha> Mon Sep 17 …)", True),
    "crlf": ("CRLF line ends", True),
    "trailing_whitespace": ("lines ending in spaces or tabs", False),
    "banner": ("a tool's banner line (\"Generated by …\", \"Created with …\")", False),
}


def shape_features(content: str) -> frozenset[str]:
    """The shape features (SHAPE_FEATURES keys) a copy has, as imported."""
    found = set()
    if _FORMAT_PATCH_RE.search(normalise_line_endings(content)):
        found.add("format_patch")
    if "\r\n" in content:
        found.add("crlf")
    if _TRAILING_BLANK_RE.search(content):
        found.add("trailing_whitespace")
    if _BANNER_RE.search(content):
        found.add("banner")
    return frozenset(found)


def shapes_of_one_builder(copies: list[tuple[str, frozenset[str]]]) -> list[dict]:
    """Shape features found in the copies of exactly one builder (of two or more): a judge who
    notices the shape knows the builder, whatever the names say (issue 24 item 8).

    `copies` are (builder id, features) pairs. Each result names the feature, its words, whether
    the normaliser removes it before judges see the copy, the builder, and how many of that
    builder's copies have it out of how many."""
    builders: dict[str, list[frozenset[str]]] = {}
    for builder, features in copies:
        builders.setdefault(builder, []).append(features)
    if len(builders) < 2:
        return []
    flagged = []
    for feature, (words, normalised_away) in SHAPE_FEATURES.items():
        having = [b for b, features in builders.items() if any(feature in f for f in features)]
        if len(having) == 1:
            [builder] = having
            flagged.append({"feature": feature, "words": words, "stripped": normalised_away,
                            "builder": builder,
                            "copies": sum(feature in f for f in builders[builder]),
                            "of": len(builders[builder])})
    return flagged


# --- Redactions judges' texts needed ------------------------------------------------------------

@dataclass(frozen=True)
class JudgedCopy:
    """One copy of a session's items and the texts its judges read beside it. `findings`: the
    texts of its findings that are items (a findings session); `reasons`: the reviewers' reasons
    shown in phase 2 (the run's default condition); `defect`: its defect note."""

    builder: str
    content: str
    format: str
    findings: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    defect: str = ""


def redactions_shown(copy: JudgedCopy, *, kind: str, scorecards: bool, patterns: list[str]) -> int:
    """How many redactions the accepted patterns make in what a session's judges read of one
    copy: its content (in its format) and, as text, its findings judged; in a copies session
    ("copies": judging.enums.SessionKind) and a pairs session also the reviewers' reasons of
    phase 2 and, where the judges' scorecards show it, the defect note; in a reasons session the
    reasons audited (the caller passes those). The one definition: the host's blinding check and the report's
    redactions per builder both count with it."""
    texts = list(copy.findings)
    if kind in ("copies", "reasons", "pairs"):
        texts += copy.reasons
        if kind == "copies" and scorecards and copy.defect:
            texts.append(copy.defect)
    return normalise(copy.content, copy.format, patterns).redactions + sum(
        normalise(text, "text", patterns).redactions for text in texts)


def redactions_per_builder(copies: Iterable[JudgedCopy], builders: Iterable[str], *, kind: str,
                           scorecards: bool, patterns: list[str]) -> dict[str, int]:
    """redactions_shown summed per builder over the session's judged copies (each copy once),
    by builder id in order; 0 for a builder with none."""
    totals = dict.fromkeys(sorted(builders), 0)
    for copy in copies:
        totals[copy.builder] += redactions_shown(copy, kind=kind, scorecards=scorecards,
                                                 patterns=patterns)
    return totals
