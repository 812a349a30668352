"""The normaliser every byte of model output goes through before a judge sees it.

Pure: imports nothing from Django and touches no database, so services, the report and tests use
the same function. `normalise()` does, in this order:

1. **Line endings** — CRLF and lone CR become LF.
2. **Metadata** (`strip_metadata`) — always removed, no acceptance needed; the removed lines are
   returned so the host's blinding check can show them.
3. **Redaction** — every match of a host-accepted pattern becomes a visible `[redacted]` mark
   (overlapping matches make one mark; `redactions` counts the marks). Nothing is redacted
   without a pattern (`import openai` survives when none is given). Patterns match across
   invisible characters, so `Open\u200bAI` is redacted by `OpenAI`, the mark covering both.
   A literal pattern matches case-insensitively on name boundaries (see `term_regex`): `GPT`
   redacts `GPT`, `gpt4` and `ChatGPT`'s `GPT`, but nothing in `GPTQ`.
4. **Marks** — in what is left, bidi controls and invisible characters are taken out of the text
   flow and shown as labels (`U+202E`), and tokens mixing Latin, Cyrillic and Greek letters
   (homoglyphs) are flagged. Nothing is removed silently: every character of the stripped text is
   either kept, labelled, or inside a `[redacted]` mark. A run of marks is one segment with a
   count (`⟦U+200B⟧ × 1,747,626`, see `Segment`), and past a budget of marks per text
   (`mark_budget`) the rest of the text is one `unhighlighted` segment, so neither memory nor the
   rendered frame grows with the number of marks faster than with the text.

What counts as metadata (the rules `strip_metadata` applies, for every format unless noted):

- **Trailer lines**: a whole line `Token-by: value` (`Signed-off-by`, `Co-authored-by`,
  `Assisted-by`, `Reviewed-by`, … any hyphenated token ending in `-by`, case-insensitive) or
  `Made-with:` / `Generated-with:` and the like, with a non-empty value. Leading blanks, `|` (git
  log --graph) and `>` (quoting) may precede it, which covers the four-space indent of `git log`.
  Also the tool footer `Generated with [Tool](url)` (after an optional emoji) on a line of its
  own.
- **Patch and commit headers**: the mbox separator `From <sha> Mon Sep 17 00:00:00 2001` of
  `git format-patch` and the mail headers after it up to the first blank line (every header but
  `Subject:`, which is the commit title, and header continuation lines with them), then git's
  in-body `From:`/`Date:` lines at the start of the body; `commit <sha>` lines of `git log`/`git
  show` (also after a `--graph` prefix) and the header lines after them up to the first blank line
  (`Author:`, `AuthorDate:`, `Commit:`, `CommitDate:`, `Date:`, `Merge:`, and `--pretty=raw`'s
  `tree`/`parent`/`author`/`committer`/`gpgsig`). An abbreviated sha counts only when an
  `Author:` or `Merge:` line follows.
- **Identity headers** (`From:`, `Date:`, `Author:`, `AuthorDate:`, `Commit:`, `CommitDate:`,
  `Committer:`, `CommitterDate:`, unindented) anywhere in a *preamble*: from a patch or commit
  separator, and in format `diff` also from the start of the text, to the next line that starts a
  diff (`diff `, `---`, `+++ `, `Index: `, `@@`). So in a diff copy the commit message before the
  first diff loses such lines. Text and markdown get no preamble at their start: there a leading
  `From:`/`Date:` is far more likely the builder's letter or memo than patch metadata.
- **The format-patch signature** `-- ` followed by a git version line (`2.43.0`,
  `2.39.3 (Apple Git-146)`), in format `diff` or after an mbox separator.

Never metadata: any line inside a diff hunk. Hunks are tracked by their `@@ -a,b +c,d @@` counts
(as `git apply` does), so `+Signed-off-by: x` or a context line ` Signed-off-by: x` is content the
builder wrote into a file and is kept (the blinding check reports names in it instead). Combined
diff hunks (`@@@`) have no usable counts; they run while lines start with ` `, `+`, `-` or `\\`.
Where lines were removed, the blank lines around the gap collapse to at most one, and to none at
the start or end of the text.
"""

from __future__ import annotations

import heapq
import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from itertools import compress, islice
from itertools import count as count_from

import re2

__all__ = [
    "FORMATS", "Segment", "Normalised", "PatternError",
    "strip_metadata", "compile_patterns", "compile_linear_regex", "normalise",
    "normalise_line_endings", "show_controls", "plain_marks", "term_regex", "FoldedText",
    "mark_budget", "PLAIN_LABELS",
]

FORMATS = ("text", "markdown", "diff")
REDACTED = "[redacted]"
MAX_PATTERN_LENGTH = 500

# --- Characters that must be made visible -------------------------------------------------------

# Bidi controls: embeddings/overrides, isolates, LRM/RLM and the Arabic letter mark.
BIDI_CLASS = "\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c"
# Zero-width and otherwise invisible characters (plus the tag block, used to smuggle text). The last
# four ranges are further format characters with no visible form: deprecated formatting controls,
# interlinear annotation marks, musical formatting controls and shorthand format controls.
INVISIBLE_CLASS = (
    "\u200b\u200c\u200d\u2060-\u2064\ufeff\u180e\u00ad\u034f\u115f\u1160\u3164\uffa0"
    "\U000e0000-\U000e007f"
    "\u206a-\u206f\ufff9-\ufffb\U0001d173-\U0001d17a\U0001bca0-\U0001bca3"
)
_BIDI_RE = re.compile(f"[{BIDI_CLASS}]")
_SPECIAL_RE = re.compile(f"[{BIDI_CLASS}{INVISIBLE_CLASS}]")
# A token character: a word character that is not one of the specials (U+3164 and friends are
# letters to `\w`, but they are invisible and must split tokens).
_TOKEN_CHARS = f"[^\\W{BIDI_CLASS}{INVISIBLE_CLASS}]"
_TOKEN_TAIL_RE = re.compile(f"{_TOKEN_CHARS}*")

# The scripts whose letters are confused with one another.
CONFUSABLE_SCRIPTS = ("LATIN", "CYRILLIC", "GREEK")


_LABEL_PART_RE = re.compile("U\\+([0-9A-F]{4,6})(?: \u00d7 ([0-9,]+))?")


def label(char: str) -> str:
    """The visible label of a character: `U+200B`."""
    return f"U+{ord(char):04X}"


def show_controls(text: str) -> str:
    """`text` with every bidi control and invisible character replaced by `⟦U+XXXX⟧`.

    For one-line displays (a match's context, a terminal) where segments are not available.
    """
    if text.isascii():
        return text
    return _SPECIAL_RE.sub(lambda m: f"⟦{label(m.group())}⟧", text)


def plain_marks(text: str) -> str:
    """`text` with its marks written as `plain()` writes them: `⟦U+200B⟧`, `⟦mixed-script:…⟧`."""
    if text.isascii():
        return text
    parts, position = [], 0
    for start, end, _ in _mixed_script_tokens(text):
        parts += (show_controls(text[position:start]), f"⟦mixed-script:{text[start:end]}⟧")
        position = end
    parts.append(show_controls(text[position:]))
    return "".join(parts)


def normalise_line_endings(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


# --- Results ------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Segment:
    """One piece of normalised output.

    kind: `text` (shown as is), `redacted` (text is `[redacted]`), `invisible` or `bidi` (text is
    the label of the removed character, e.g. `U+200B`), `mixed_script` (text is the token itself,
    shown with a mark).

    A run of marks is one segment, so that a copy of a million zero-width spaces costs one
    object, not a million: `count` is how many marks it stands for. For `invisible` and `bidi`
    that is the number of characters: a run of one character keeps its label (`U+200B`, count
    1,747,626); a run of several characters of the same kind has their labels in order, a
    repeated one written once with its count (`U+202E U+2066 × 2 U+2069`, count 4). Adjacent
    redactions are one `redacted` segment (count: the matches); mixed-script tokens separated only
    by spaces or tabs are one `mixed_script` segment whose text runs from the first token to the
    last (count: the tokens).

    Past a text's mark budget (`mark_budget`) the rest of the text is one `unhighlighted`
    segment (count: the marks in it): its text is the source as it is, special characters
    included, with `[redacted]` where a redaction was. It must never be shown raw: `plain()`
    writes its marks as everywhere else (`plain_marks`), the renderer as short codes.
    """

    kind: str
    text: str
    count: int = 1

    def characters(self) -> str:
        """The characters an `invisible` or `bidi` segment stands for, in order."""
        if self.kind not in ("invisible", "bidi"):
            raise ValueError(f"a {self.kind} segment stands for no removed characters")
        if " " not in self.text:
            return chr(int(self.text[2:], 16)) * self.count
        return "".join(chr(int(code, 16)) * int((times or "1").replace(",", ""))
                       for code, times in _LABEL_PART_RE.findall(self.text))

    def shown(self) -> str:
        """The mark's visible text: `[redacted]`, `⟦U+200B⟧ × 1,747,626`, `⟦U+202E U+2066⟧`, or
        the token(s) of a `mixed_script` segment."""
        if self.kind in ("invisible", "bidi"):
            if self.count > 1 and " " not in self.text:
                return f"\u27e6{self.text}\u27e7 \u00d7 {self.count:,}"
            return f"\u27e6{self.text}\u27e7"
        if self.kind == "redacted" and self.count > 1:
            return f"{REDACTED} \u00d7 {self.count:,}"
        return self.text


@dataclass(frozen=True, slots=True)
class Normalised:
    segments: tuple[Segment, ...]
    stripped_metadata: tuple[str, ...]
    redactions: int
    invisible: int
    bidi: int
    mixed_script: int
    # Marks past the text's mark budget (`mark_budget`), in its `unhighlighted` segment; counted
    # above like the others.
    unhighlighted: int = 0

    def plain(self) -> str:
        """A text form for CSV and plain output: marks shown inline as `⟦…⟧`."""
        parts = []
        for segment in self.segments:
            if segment.kind == "text":
                parts.append(segment.text)
            elif segment.kind == "mixed_script":
                parts.append(f"⟦mixed-script:{segment.text}⟧")
            elif segment.kind == "unhighlighted":
                parts.append(plain_marks(segment.text))
            else:
                parts.append(segment.shown())
        return "".join(parts)


class PatternError(ValueError):
    """A redaction pattern that cannot be used; the message names the pattern."""


# --- Metadata -----------------------------------------------------------------------------------

_TRAILER_RE = re.compile(
    r"[ \t|>]*"
    r"(?:[a-z][a-z0-9]*(?:-[a-z0-9]+)*-by"
    r"|(?:made|generated|created|written|built|assisted|coded)-(?:with|using))"
    r"[ \t]*:[ \t]*\S.*"
    r"|[ \t]*(?:\S{1,2}[ \t]*)?generated with \[[^\]\n]+\]\([^)\n]*\)[ \t.]*",
    re.IGNORECASE,
)
_MBOX_SEPARATOR_RE = re.compile(r"From [0-9a-f]{40}(?:[0-9a-f]{24})?(?: .*)?")
_COMMIT_LINE_RE = re.compile(
    r"(?P<graph>(?:[|/\\ ]*\*[|/\\ ]*)?)commit (?P<sha>[0-9a-f]{7,64})(?:[ \t].*)?"
)
_MAIL_HEADER_RE = re.compile(r"(?P<key>[!-9;-~]+):(?:[ \t].*)?")
_COMMIT_HEADER_RE = re.compile(
    r"(?:[A-Z][A-Za-z-]*(?: [a-z]+)?:(?:[ \t].*)?"
    r"|(?:tree|parent|author|committer|encoding|gpgsig|gpgsig-sha256|mergetag) .*)"
)
_IDENTITY_HEADER_RE = re.compile(
    r"(?:From|Date|Author|AuthorDate|Commit|CommitDate|Committer|CommitterDate):[ \t]+\S.*"
)
_IN_BODY_HEADER_RE = re.compile(r"(?P<key>From|Date|Subject):[ \t].*", re.IGNORECASE)
# `git format-patch`'s diffstat after the `---` that ends the message: ` path | 3 +-`,
# ` path | Bin 0 -> 12 bytes`, ` create mode 100644 path`, …, and ` 2 files changed, …`.
_DIFFSTAT_LINE_RE = re.compile(
    r" (?:\S.*? +\| +(?:\d+ ?[+-]*|Bin .*)"
    r"|(?:create|delete) mode \d+ .+|rename .+ \(\d+%\)|mode change \d+ => \d+ .+|copy .+ \(\d+%\))[ \t]*")
_DIFFSTAT_SUMMARY_RE = re.compile(
    r" \d+ files? changed(?:, \d+ insertions?\(\+\))?(?:, \d+ deletions?\(-\))?[ \t]*")
_DIFF_START_RE = re.compile(r"diff |--- |\+\+\+ |---[ \t]*$|Index: |@@")
_HUNK_RE = re.compile(r"@@ -\d+(?:,(?P<old>\d+))? \+\d+(?:,(?P<new>\d+))? @@")
_COMBINED_HUNK_RE = re.compile(r"@{3,} -\d")
_SIGNATURE_RE = re.compile(r"-- ?")
_GIT_VERSION_RE = re.compile(r"\d+(?:\.\d+)+[\w.+-]*(?: \(.*\))?[ \t]*")

_TRAILER_START = r"[ \t|>]*[a-z][a-z0-9-]*-(?:by|with|using)[ \t]*:|.{0,8}generated with \["
_SEPARATOR_START = r"From [0-9a-f]{40}|[|/\\ *]*commit [0-9a-f]{7}"
_IDENTITY_START = r"(?:From|Date|Author|AuthorDate|Commit|CommitDate|Committer|CommitterDate):"
# Lines that could start something to strip. A text without one is returned as it is.
_CANDIDATE_RE = re.compile(
    f"^(?:{_TRAILER_START}|{_SEPARATOR_START}|-- ?$)", re.IGNORECASE | re.MULTILINE
)
_DIFF_CANDIDATE_RE = re.compile(f"^{_IDENTITY_START}", re.MULTILINE)
# Lines the scanner must look at when it is in no hunk and no header block; all others are kept
# unread, so a text of millions of short lines costs no Python work per line.
_INTERESTING_RE = re.compile(
    f"^(?:@@|(?i:{_TRAILER_START}|{_SEPARATOR_START})|-- ?$|{_IDENTITY_START}"
    r"|diff |---|\+\+\+ |Index: )",
    re.MULTILINE,
)


def _check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}: expected one of {', '.join(FORMATS)}")


def strip_metadata(text: str, fmt: str) -> tuple[str, list[str]]:
    """Remove authorship metadata (see the module docstring); return the text and removed lines.

    Line endings are normalised to LF first. The removed lines are returned in order, as they
    stood in the text.
    """
    _check_format(fmt)
    text = normalise_line_endings(text)
    if not _CANDIDATE_RE.search(text) and not (fmt == "diff" and _DIFF_CANDIDATE_RE.search(text)):
        return text, []

    lines = text.split("\n")
    trailing_newline = text.endswith("\n")
    if trailing_newline:
        lines.pop()
    removed, hunks = _scan(text, lines, fmt)
    if not removed:
        return text, []
    kept = _kept_lines(lines, removed, hunks)
    result = "\n".join(kept)
    if trailing_newline and kept:
        result += "\n"
    return result, [lines[k] for k in removed]


def _interesting_lines(text: str) -> list[int]:
    indices = []
    line = offset = 0
    for m in _INTERESTING_RE.finditer(text):
        line += text.count("\n", offset, m.start())
        offset = m.start()
        indices.append(line)
    return indices


def _scan(text: str, lines: list[str], fmt: str) -> tuple[list[int], list[tuple[int, int]]]:
    """The indices of the lines to remove, and the [start, end) line ranges of hunk bodies."""
    removed: list[int] = []
    hunks: list[tuple[int, int]] = []
    interesting = _interesting_lines(text)
    next_interesting = 0
    preamble = fmt == "diff"  # where identity headers are stripped: until a diff starts
    signatures = fmt == "diff"  # whether `-- ` + git version is a format-patch signature
    # In a diff copy a patch's title goes too (`Subject:`), and its diffstat: every builder's diff
    # is shown in one shape, whichever tool made it (issue 24 item 8).
    one_shape = fmt == "diff"
    patch_message = False  # after an mbox separator, until the `---` or a diff starts
    block: str | None = None  # "mbox" (mail headers), "body" (in-body headers), "commit"
    keep_continuation = False  # mbox: whether a folded header line is kept (Subject's)
    graph = False  # commit: the block came from `git log --graph`
    signed_header = False  # commit: inside a multi-line gpgsig/mergetag header
    count = len(lines)
    i = 0
    while i < count:
        if block is None:
            # Skip to the next line that could matter; everything before it is kept.
            while next_interesting < len(interesting) and interesting[next_interesting] < i:
                next_interesting += 1
            if next_interesting == len(interesting):
                break
            i = interesting[next_interesting]
        line = lines[i]

        if block == "mbox":
            if line == "":
                block = "body"
                i += 1
                continue
            if line[:1] in (" ", "\t"):
                if not keep_continuation or _TRAILER_RE.fullmatch(line):
                    removed.append(i)
                i += 1
                continue
            match = _MAIL_HEADER_RE.fullmatch(line)
            if match:
                keep_continuation = match["key"].lower() == "subject" and not one_shape
                if not keep_continuation:
                    removed.append(i)
                i += 1
                continue
            block = None
        elif block == "body":
            match = _IN_BODY_HEADER_RE.fullmatch(line)
            if match:
                if match["key"].lower() != "subject" or one_shape:
                    removed.append(i)
                i += 1
                continue
            block = None
        elif block == "commit":
            rest = line.lstrip("|/\\* ") if graph else line
            if rest == "":
                block = None
                i += 1
                continue
            if signed_header and line[:1] == " ":
                removed.append(i)
                i += 1
                continue
            if _COMMIT_HEADER_RE.fullmatch(rest):
                signed_header = rest.startswith(("gpgsig", "mergetag"))
                removed.append(i)
                i += 1
                continue
            block = None

        first = line[:1]
        if first == "@":
            end = _hunk_end(lines, i, signatures)
            if end is not None:
                hunks.append((i + 1, end))
                preamble = False
                i = end
                continue

        if first == "F" and _MBOX_SEPARATOR_RE.fullmatch(line):
            removed.append(i)
            block, keep_continuation, preamble, signatures = "mbox", False, True, True
            patch_message = one_shape
            i += 1
            continue

        if patch_message and first == "-" and line.rstrip(" \t") == "---":
            patch_message = False
            end = _diffstat_end(lines, i + 1)
            if end is not None:
                removed.extend(range(i, end))
                i = end
                continue

        match = _COMMIT_LINE_RE.fullmatch(line) if "commit " in line[:40] else None
        if match and (
            len(match["sha"]) >= 40 or _headers_follow(lines, i + 1, bool(match["graph"]))
        ):
            removed.append(i)
            block, graph, preamble, signed_header = "commit", bool(match["graph"]), True, False
            i += 1
            continue

        if _TRAILER_RE.fullmatch(line):
            removed.append(i)
        elif preamble and _DIFF_START_RE.match(line):
            preamble = False
        elif preamble and _IDENTITY_HEADER_RE.fullmatch(line):
            removed.append(i)
        elif signatures and first == "-" and _is_signature(lines, i):
            removed.extend((i, i + 1))
            i += 1
        i += 1
    return removed, hunks


def _diffstat_end(lines: list[str], index: int) -> int | None:
    """The index after a format-patch diffstat starting at `index` (its file lines, then the
    `N files changed` summary, then mode lines); None when there is none there."""
    k, count = index, len(lines)
    while k < count and _DIFFSTAT_LINE_RE.fullmatch(lines[k]):
        k += 1
    if k == count or not _DIFFSTAT_SUMMARY_RE.fullmatch(lines[k]):
        return None
    k += 1
    while k < count and _DIFFSTAT_LINE_RE.fullmatch(lines[k]):
        k += 1
    return k


def _headers_follow(lines: list[str], index: int, graph: bool) -> bool:
    """Whether an `Author:` or `Merge:` line follows (past trailers and identity headers)."""
    for line in islice(lines, index, None):
        rest = line.lstrip("|/\\* ") if graph else line
        if rest.startswith(("Author:", "Merge:")):
            return True
        if not (_TRAILER_RE.fullmatch(line) or _IDENTITY_HEADER_RE.fullmatch(line)):
            return False
    return False


def _hunk_end(lines: list[str], header: int, signatures: bool) -> int | None:
    """The index after the body of the hunk whose header is at `header`; None if no header.

    A counted hunk (`@@ -a,b +c,d @@`) takes exactly its counted lines, as `git apply` does (an
    empty line counts as a context line whose blank an editor trimmed), plus `\\ No newline`
    markers. A combined hunk (`@@@ …`) runs while lines start with ` `, `+`, `-` or `\\`.
    """
    header_line = lines[header]
    count = len(lines)
    k = header + 1
    match = _HUNK_RE.match(header_line)
    if match is None:
        if not _COMBINED_HUNK_RE.match(header_line):
            return None
        while k < count and lines[k][:1] in (" ", "+", "-", "\\"):
            if signatures and _is_signature(lines, k):
                break
            k += 1
        return k
    old = int(match["old"] or 1)
    new = int(match["new"] or 1)
    while k < count and (old > 0 or new > 0):
        first = lines[k][:1]
        if first == "+" and new > 0:
            new -= 1
        elif first == "-" and old > 0:
            old -= 1
        elif (first == " " or first == "") and old > 0 and new > 0:
            old -= 1
            new -= 1
        elif first != "\\":
            break
        k += 1
    if k < count and lines[k][:1] == "\\":
        k += 1
    return k


def _is_signature(lines: list[str], index: int) -> bool:
    return (
        _SIGNATURE_RE.fullmatch(lines[index]) is not None
        and index + 1 < len(lines)
        and _GIT_VERSION_RE.fullmatch(lines[index + 1]) is not None
    )


def _kept_lines(lines: list[str], removed: list[int], hunks: list[tuple[int, int]]) -> list[str]:
    """The lines not removed, with blank runs that touch a removal gap collapsed.

    Around each gap, the unprotected blank lines (not inside a hunk) and other gaps they connect
    to form a zone; a zone keeps at most one blank line, and none at the start or the end of the
    text. Blank lines no removal touched are kept as they are.
    """
    count = len(lines)
    hunk_starts = [start for start, _ in hunks]
    zones: list[list[int]] = []  # [start, end) line ranges: gaps and the blanks around them
    k = 0
    while k < len(removed):
        gap_start = removed[k]
        while k + 1 < len(removed) and removed[k + 1] == removed[k] + 1:
            k += 1
        gap_end = removed[k] + 1
        k += 1
        h = bisect_right(hunk_starts, gap_start)
        floor = hunks[h - 1][1] if h else 0
        ceiling = hunks[h][0] if h < len(hunks) else count
        start = _blank_run_start(lines, gap_start, floor)
        end = _blank_run_end(lines, gap_end, ceiling)
        if zones and start <= zones[-1][1]:
            zones[-1][1] = max(zones[-1][1], end)
        else:
            zones.append([start, end])
    kept: list[str] = []
    position = 0
    for start, end in zones:
        kept.extend(lines[position:start])
        blanks = (end - start) - (bisect_left(removed, end) - bisect_left(removed, start))
        if blanks and start > 0 and end < count:
            kept.append("")
        position = end
    kept.extend(lines[position:])
    return kept


def _blank_run_start(lines: list[str], before: int, floor: int) -> int:
    """The first index of the run of empty lines ending just before `before`, not below floor."""
    # compress() walks the list in C: the first non-empty line going back ends the run.
    backwards = islice(reversed(lines), len(lines) - before, len(lines) - floor)
    last_text = next(compress(count_from(before - 1, -1), backwards), floor - 1)
    return last_text + 1


def _blank_run_end(lines: list[str], after: int, ceiling: int) -> int:
    """The index after the run of empty lines starting at `after`, not beyond ceiling."""
    return next(compress(count_from(after), islice(lines, after, ceiling)), ceiling)


# --- Patterns -----------------------------------------------------------------------------------

_LETTER = "[^\\W\\d_]"
# A camelCase step: lower to upper (`chatOpenAI`), or the last capital of an acronym (`AIClient`).
_CAMEL_STEP = "(?-i:(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z]))"


def term_regex(term: str, *, flexible: bool = False) -> str:
    """The regex source that finds `term` as a name, for use with re.IGNORECASE.

    Boundaries: where the term starts (ends) with a letter, it must not be preceded (followed) by
    another letter, except at a camelCase step (`ChatOpenAI`, `OpenAIClient`); where it starts
    (ends) with a digit, not by a letter or digit. Digits and `_` next to a letter are boundaries,
    so `openai_client` and `gpt4` contain a name while `GPTQ` does not contain `GPT`, and
    neither `gpt-40` nor `gpt-4.1` contains `gpt-4`. With `flexible`, the term's separators
    (space, `-`, `_`, `.`) match any one of them or none, so `claude-3-5-sonnet` finds
    `Claude 3.5 Sonnet`.
    """
    if flexible:
        chunks = [c for c in re.split(r"[\s._-]+", term) if c] or [term]
        term = chunks[0]
        rest = "".join(re.escape(c) for c in chunks[0][1:])
        rest += "".join(r"[\s._-]?" + re.escape(c) for c in chunks[1:])
        last = chunks[-1][-1]
    else:
        rest = re.escape(term[1:])
        last = term[-1]
    first = term[0]
    head = re.escape(first)
    if first.isalpha():
        # Take the first character, then look back at what precedes it: a regex that starts
        # with a lookbehind gets no fast literal scan and is several times slower on big texts.
        head = f"{head}(?<=(?:(?<!{_LETTER})|{_CAMEL_STEP}){head})"
    elif first.isdigit() or first == "_":
        head = rf"{head}(?<=(?<!\w){head})"
    end = ""
    if last.isalpha():
        end = f"(?:(?!{_LETTER})|{_CAMEL_STEP})"
    elif last.isdigit() or last == "_":
        end = r"(?!\w|\.\d)"  # `gpt-4` is not in `gpt-4o` nor in `gpt-4.1`
    return f"{head}{rest}{end}"


def _re2_options() -> re2.Options:
    options = re2.Options()
    options.case_sensitive = False
    options.log_errors = False
    return options


_RE2_OPTIONS = _re2_options()
# Short texts for the empty-match check of a regex RE2 cannot run: Python's engine can backtrack
# for hours on a long text, not on one or two characters.
_EMPTY_PROBES = ("", "\n", " ", "a", "A", "0", "_", "-", ".", "\t", "x", "X", "aA", "a ", " a",
                 "a0", "0a", "a.", "xyz")


def compile_patterns(patterns: list[str], *, backtracking_allowed: bool = False) -> list:
    """Compile host-accepted redaction patterns, case-insensitively.

    A pattern is a literal string (matched with the name boundaries of `term_regex`) or, written
    `re:<regex>`, a regular expression. Raises PatternError naming the pattern for an empty or
    blank pattern, an overlong one, an invalid regex, a regex that can match the empty string, or
    one that needs backtracking (a lookaround or a backreference).

    `re:` regexes run on RE2 (google-re2), which matches in time linear in the text, so no
    pattern can stall a page (`re:(a+)+$` is harmless). A regex must be valid for Python's `re`
    too (its error messages are the ones hosts see). In RE2, `\\w`, `\\d`, `\\s` and `\\b` are
    ASCII-only. Literal patterns become our own regexes (`term_regex`, whose lookarounds are
    bounded and cannot backtrack) and run on `re`.

    `backtracking_allowed` is for patterns frozen in a session before RE2 was used (its renders
    made once, by migration 0004): a regex RE2 refuses then runs on Python's `re`, as it always
    had for that session, rather than leaving its copies unredacted or unrendered.
    """
    compiled = []
    for pattern in patterns:
        if not isinstance(pattern, str):
            raise PatternError(f"pattern {pattern!r} is not a string")
        if len(pattern) > MAX_PATTERN_LENGTH:
            raise PatternError(
                f"pattern {pattern[:40]!r}… is longer than {MAX_PATTERN_LENGTH} characters"
            )
        if pattern.startswith("re:"):
            compiled.append(_compile_regex(pattern, backtracking_allowed=backtracking_allowed))
        else:
            if not pattern.strip():
                raise PatternError(f"pattern {pattern!r} is empty")
            compiled.append(re.compile(term_regex(pattern), re.IGNORECASE))
    return compiled


def _compile_regex(pattern: str, *, backtracking_allowed: bool = False):
    try:
        return compile_linear_regex(pattern[3:], backtracking_allowed=backtracking_allowed)
    except PatternError as error:
        raise PatternError(f"pattern {pattern!r}: {error}") from None


def compile_linear_regex(source: str, *, backtracking_allowed: bool = False):
    """A host's regular expression compiled on RE2, case-insensitively, as `re:` redaction
    patterns are (see `compile_patterns`): valid for Python's `re` too, never matching the empty
    string, no lookaround or backreference. Raises PatternError whose message says what is wrong
    without naming the pattern (the caller names its place): "the regex is empty", "invalid
    regex: …", "the regex matches the empty string", "the linear-time regex engine refuses it
    (…)…". Also used for the content seal check's host patterns (content.content_verdicts)."""
    if not source.strip():
        raise PatternError("the regex is empty")
    try:
        python_regex = re.compile(source, re.IGNORECASE)  # the syntax check, with its messages
    except re.error as error:
        raise PatternError(f"invalid regex: {error}") from None
    try:
        regex = re2.compile(source, _RE2_OPTIONS)
    except re2.error as error:
        if any(_empty_at_some_point(python_regex, probe) for probe in _EMPTY_PROBES):
            raise PatternError("the regex matches the empty string") from None
        if backtracking_allowed:
            return python_regex
        reason = error.args[0].decode() if error.args and isinstance(error.args[0], bytes) else error
        raise PatternError(
            f"the linear-time regex engine refuses it ({reason}). "
            "Lookarounds, backreferences and possessive or atomic groups are not accepted: "
            "they can make matching take hours on a hostile copy"
        ) from None
    if _matches_empty(regex):
        raise PatternError("the regex matches the empty string")
    return regex


def _empty_at_some_point(regex: re.Pattern, probe: str) -> bool:
    return any(m.end() == m.start() for m in regex.finditer(probe))


def _matches_empty(regex) -> bool:
    probe = "\n a A 0 _ - . \t xyz XYZ 123 \n"
    return regex.match("") is not None or any(
        m.end() == m.start() for m in regex.finditer(probe)
    )


class FoldedText:
    """A view of `source` without bidi controls and invisible characters, for matching names.

    `Open\\u200bAI` must still be found as `OpenAI`. Match on `.text`, then map the span back to
    `source` with `.span()`; the mapped span covers the invisible characters inside the match.
    """

    __slots__ = ("source", "text", "_shifts")

    def __init__(self, source: str):
        self.source = source
        self.text = _SPECIAL_RE.sub("", source)
        self._shifts: list[int] | None = None

    def _position(self, index: int) -> int:
        if self._shifts is None:
            # For the k-th removed character at source position p, p - k is the folded index of
            # the first character after it; a folded index i then lies after bisect(shifts, i)
            # removed characters.
            self._shifts = [m.start() - k for k, m in enumerate(_SPECIAL_RE.finditer(self.source))]
        return index + bisect_right(self._shifts, index)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The source span of the non-empty folded span [start, end)."""
        if len(self.text) == len(self.source):
            return start, end
        return self._position(start), self._position(end - 1) + 1


def _redaction_spans(folded: FoldedText, regexes: list[re.Pattern]) -> list[tuple[int, int]]:
    """Source spans to redact: every non-empty match of every pattern, overlaps merged."""
    spans = []
    for regex in regexes:
        for m in regex.finditer(folded.text):
            if m.end() > m.start():
                spans.append(folded.span(m.start(), m.end()))
    spans.sort()
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(start, end) for start, end in merged]


def redaction_spans(text: str, patterns: list[str]) -> list[tuple[int, int]]:
    """The spans of `text` (as given: strip metadata first where the judges' copy is stripped)
    that the host's patterns redact, overlaps merged: what `normalise` turns into `[redacted]`."""
    regexes = compile_patterns(patterns)
    return _redaction_spans(FoldedText(text), regexes) if regexes else []


# --- Mixed scripts ------------------------------------------------------------------------------

def _script(char: str) -> str:
    """The script of a letter, from its Unicode name: `LATIN`, `CYRILLIC`, … or ''."""
    words = unicodedata.name(char, "").split(" ", 2)
    if words[0] in ("FULLWIDTH", "HALFWIDTH") and len(words) > 1:
        return words[1]
    return words[0]


def _ranges(code_points: list[int]) -> str:
    parts = []
    start = previous = None
    for cp in code_points + [None]:
        if previous is not None and cp == previous + 1:
            previous = cp
            continue
        if start is not None:
            parts.append(re.escape(chr(start)) if start == previous
                         else f"{re.escape(chr(start))}-{re.escape(chr(previous))}")
        start = previous = cp
    return "".join(parts)


@cache
def _script_change_re() -> tuple[re.Pattern, re.Pattern]:
    """A regex finding two letters of different confusable scripts within one token, and one
    extending a mixed-script token over those after it that only spaces or tabs separate.

    Built once from the Unicode database: each letter's script is the first word of its name.
    Between the two letters only token characters of no confusable script may stand (digits,
    `_`, CJK, …), so the search is linear.
    """
    letters: dict[str, list[int]] = {script: [] for script in CONFUSABLE_SCRIPTS}
    for block_start, block_end in ((0, 0x3400), (0xA000, 0xAC00), (0xF900, 0x10000),
                                   (0x10000, 0x20000)):
        for cp in range(block_start, block_end):
            char = chr(cp)
            if char.isalpha():
                script = _script(char)
                if script in letters:
                    letters[script].append(cp)
    latin, cyrillic, greek = (_ranges(letters[s]) for s in CONFUSABLE_SCRIPTS)
    other = f"[^\\W{BIDI_CLASS}{INVISIBLE_CLASS}{latin}{cyrillic}{greek}]*+"
    change = (
        f"[{latin}]{other}[{cyrillic}{greek}]"
        f"|[{cyrillic}]{other}[{latin}{greek}]"
        f"|[{greek}]{other}[{latin}{cyrillic}]"
    )
    # After a mixed-script token: the further mixed-script tokens separated from it only by
    # spaces or tabs, all in one match (each starts where its gap ends, so no lookbehind).
    more = re.compile(f"(?:[ \\t]+{_TOKEN_CHARS}*?(?:{change}){_TOKEN_CHARS}*)*")
    return re.compile(change), more


def _mixed_script_tokens(piece: str) -> Iterator[tuple[int, int, int]]:
    """The tokens in `piece` whose letters come from two or more confusable scripts, in order, as
    (start, end, tokens): tokens separated only by spaces or tabs are one span."""
    change_re, more_re = _script_change_re()
    reversed_piece = None
    position = 0
    while True:
        m = change_re.search(piece, position)
        if m is None:
            return
        if reversed_piece is None:
            reversed_piece = piece[::-1]
        back = _TOKEN_TAIL_RE.match(reversed_piece, len(piece) - m.start())
        start = m.start() - (back.end() - back.start())
        end = _TOKEN_TAIL_RE.match(piece, m.end()).end()
        further = more_re.match(piece, end).end()
        tokens = 1 + (len(_MIXED_GAP_RE.findall(piece, end, further)) if further > end else 0)
        yield start, further, tokens
        position = further


# --- normalise() --------------------------------------------------------------------------------

# A run of special characters of one kind (bidi or invisible), and a run of one same character.
_SPECIAL_RUN_RE = re.compile(f"([{BIDI_CLASS}]+|[{INVISIBLE_CLASS}]+)")
# What may stand between two mixed-script tokens of one mark.
_MIXED_GAP_RE = re.compile(r"[ \t]+")

_SPECIAL_SEGMENTS: dict[str, Segment] = {}  # segments are immutable, so one per character


def _run_segment(run: str) -> Segment:
    """The one segment for a run of special characters of one kind (see `Segment`)."""
    first = run[0]
    if len(run) == 1:
        segment = _SPECIAL_SEGMENTS.get(first)
        if segment is None:
            kind = "bidi" if _BIDI_RE.match(first) else "invisible"
            segment = _SPECIAL_SEGMENTS[first] = Segment(kind, label(first))
        return segment
    kind = "bidi" if _BIDI_RE.match(first) else "invisible"
    if run.count(first) == len(run):
        return Segment(kind, label(first), len(run))
    # Labels in C: each character becomes "U+XXXX ", then repeats are folded into "U+XXXX × n ".
    labels = run.translate(_LABELS)
    if _REPEAT_RE.search(run):
        labels = _REPEATED_LABEL_RE.sub(
            lambda m: f"{m.group(1)}\u00d7 {(m.end() - m.start()) // len(m.group(1)):,} ", labels)
    return Segment(kind, labels[:-1], len(run))


class _Labels(dict):
    """str.translate's table: a special character to its label and a space, made when first met."""

    def __missing__(self, code_point: int) -> str:
        self[code_point] = f"U+{code_point:04X} "
        return self[code_point]


_LABELS = _Labels()
_REPEAT_RE = re.compile(r"(.)\1", re.DOTALL)
_REPEATED_LABEL_RE = re.compile(r"(U\+[0-9A-F]{4,6} )\1+")


def _class_code_points(character_class: str) -> list[int]:
    """The code points of a character class's source such as BIDI_CLASS (`a-c` ranges, singles)."""
    points, index = [], 0
    while index < len(character_class):
        if index + 2 < len(character_class) and character_class[index + 1] == "-":
            points.extend(range(ord(character_class[index]), ord(character_class[index + 2]) + 1))
            index += 3
        else:
            points.append(ord(character_class[index]))
            index += 1
    return points


# In the frame, past the mark budget, a special character is shown as its code in brackets.
PLAIN_LABELS = {cp: f"\u27e6{cp:04X}\u27e7"
                 for cp in _class_code_points(BIDI_CLASS + INVISIBLE_CLASS)}


def mark_budget(size: int) -> int:
    """How many separate marks a text of `size` UTF-8 bytes gets as segments (see `normalise`).

    A mark costs some 90 bytes of HTML, a character past the budget at most 3.7 times its own
    size (`a⟦00AD⟧` for three bytes), so with this budget no frame is past 4 x its copy + 64 KB
    however densely marks and text alternate."""
    return MARK_BUDGET_BASE + size // MARK_BUDGET_BYTES_PER_MARK


MARK_BUDGET_BASE = 900
MARK_BUDGET_BYTES_PER_MARK = 256


class _Builder:
    """Collects segments, merging adjacent text and runs of marks, and counts the marks."""

    def __init__(self, budget: int):
        self.segments: list[Segment] = []
        self._text: list[str] = []
        self.invisible = self.bidi = self.mixed_script = 0
        self.budget = budget  # mark segments still to be made
        self.unhighlighted = 0  # marks past the budget
        self._overflow: list[str] = []  # everything from the first mark past the budget on

    def _flush(self) -> None:
        if self._text:
            self.segments.append(Segment("text", "".join(self._text)))
            self._text = []

    def _mark(self, segment: Segment) -> None:
        self._flush()
        self.segments.append(segment)
        self.budget -= 1

    def redacted(self) -> None:
        last = self.segments[-1] if self.segments and not self._text else None
        if self._overflow or (self.budget <= 0 and not (last and last.kind == "redacted")):
            self._overflow.append(REDACTED)
            self.unhighlighted += 1
        elif last is not None and last.kind == "redacted":
            self.segments[-1] = Segment("redacted", REDACTED, last.count + 1)
        else:
            self._mark(Segment("redacted", REDACTED))

    def _special_run(self, run: str) -> None:
        segment = _run_segment(run)
        self._mark(segment)
        if segment.kind == "bidi":
            self.bidi += len(run)
        else:
            self.invisible += len(run)

    def marked(self, piece: str) -> None:
        """Add `piece` of unredacted text with its specials and mixed-script tokens marked."""
        if self._overflow:
            self._unhighlighted(piece)
            return
        if piece.isascii():
            if piece:
                self._text.append(piece)
            return
        if self.budget <= 0:
            self._unhighlighted(piece)
            return
        specials = ((m.start(), m.end(), 0) for m in _SPECIAL_RUN_RE.finditer(piece))
        # Tokens never hold a special, so no event overlaps another.
        events = heapq.merge(specials, _mixed_script_tokens(piece))
        position = 0
        for start, end, count in events:
            if self.budget <= 0:
                self._unhighlighted(piece[position:])
                return
            if start > position:
                self._text.append(piece[position:start])
            if count == 0:
                self._special_run(piece[start:end])
            else:
                self._mark(Segment("mixed_script", piece[start:end], count))
                self.mixed_script += count
            position = end
        if position < len(piece):
            self._text.append(piece[position:])

    def _unhighlighted(self, piece: str) -> None:
        """Past the budget: the piece goes into one `unhighlighted` segment, its marks counted."""
        if not piece.isascii():
            bidi = len(piece) - len(_BIDI_RE.sub("", piece))
            invisible = len(piece) - len(_SPECIAL_RE.sub("", piece)) - bidi
            mixed = sum(count for _, _, count in _mixed_script_tokens(piece))
            self.bidi += bidi
            self.invisible += invisible
            self.mixed_script += mixed
            self.unhighlighted += bidi + invisible + mixed
        if piece:
            self._overflow.append(piece)

    def finish(self) -> tuple[Segment, ...]:
        self._flush()
        if self._overflow:
            self.segments.append(
                Segment("unhighlighted", "".join(self._overflow), self.unhighlighted))
        return tuple(self.segments)


def normalise(text: str, fmt: str, patterns: list[str], *,
              backtracking_allowed: bool = False) -> Normalised:
    """Normalise model output for a judge: strip metadata, redact, make hidden characters visible.

    `fmt` is the copy's format (`text`, `markdown` or `diff`); `patterns` the host-accepted
    redaction patterns (see `compile_patterns`; a bad pattern raises PatternError). Counts are
    for this one text; callers sum them per builder.
    """
    regexes = compile_patterns(patterns, backtracking_allowed=backtracking_allowed)
    stripped, metadata = strip_metadata(text, fmt)
    spans = _redaction_spans(FoldedText(stripped), regexes) if regexes else []

    builder = _Builder(mark_budget(len(stripped.encode("utf-8", "surrogatepass"))))
    position = 0
    for start, end in spans:
        builder.marked(stripped[position:start])
        builder.redacted()
        position = end
    builder.marked(stripped[position:])
    return Normalised(
        segments=builder.finish(),
        stripped_metadata=tuple(metadata),
        redactions=len(spans),
        invisible=builder.invisible,
        bidi=builder.bidi,
        mixed_script=builder.mixed_script,
        unhighlighted=builder.unhighlighted,
    )
