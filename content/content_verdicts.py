"""The content seal check: does a review request carry a verdict on the copy, besides the copy?

Pure: no Django, no database. The key check (content.bundle.check_seal) proves only that a
request has exactly the allowed keys and the recorded hash; it cannot see "Prior reviewer: PASS"
pasted into the text (seed 000's article names that blind spot). This module scans the part of a
request that is *not* the copy's content nor the task statement for a verdict it carries, so a
builder whose copy says "all tests pass" is never penalised: its own words are removed first.

What is scanned. A request is usually JSON (a chat body, an object of fields): it is parsed and
every string in it is read, keys too, in document order; an object's entry is read as the text
``key: value`` (a scalar value as JSON writes it), so ``{"prior_verdict": "PASS"}`` reads
``prior_verdict: PASS``. A string that itself holds a JSON object or array is walked the same way
(three levels at most). A request that is not JSON is read as one text. From every text, line
endings are made LF and then each occurrence of the copy's content (of both copies', for a
comparison's request, which shows two) and of the task statement is removed, as given, without
trailing whitespace and stripped (a harness that rstrips the copy, or sends CRLF as LF, still has
it removed; JSON escaping is undone by the parse); a removed stretch becomes a line break, so
nothing on its two sides joins. A content or statement shorter than
``MIN_REMOVED_CHARS`` is removed only where a whole string equals it (a two-character copy must
not eat the request's own words). A verdict inside the copy or the statement is never seen: the
check is about what the request adds to them.

Built-in patterns (``BUILT_IN_PATTERNS``; RE2, case-insensitive, ``_``/``-`` read as spaces):

- ``prior_verdict``: another reviewer's verdict: a prior, previous, earlier, first, other, last
  or original reviewer, review, verdict, assessment, grader, judge, check, model or agent, then
  within the line a verdict (PASS, FAIL, approved, rejected, LGTM, correct, "no issues", "found a
  bug", "looks good"); also "Reviewer 1: approved". ("Prior reviewer: PASS, no issues found.")
- ``stated_verdict``: a verdict stated as a field: verdict, decision, disposition, outcome,
  result, status, assessment, conclusion or judgement, then ``:``, ``=``, "was" or "is", then
  PASS, FAIL, approved, rejected, accepted or LGTM. ("Verdict: PASS", ``{"verdict": "fail"}``)
- ``tests_outcome``: tests said to pass or fail: "all tests passed", "the unit tests are
  passing", "passes all the tests", "2 tests fail", a test runner's "12 passed", "CI is green".
- ``no_issues``: "no issues found", "found no problems", "didn't find any bugs".
- ``issues_found``: "found a bug", "found 3 issues", "bug confirmed".
- ``approval``: "LGTM", "looks good to me", "ship it", "the patch was approved", "was rejected",
  "approved by …", a line saying only "Approved." or "Rejected.".
- ``score``: a score given: "score: 8/10", "rated 4 out of 5", "Score = 0.9".
- ``success_claim``: the author's own claim of success: the author, builder, agent, developer or
  model reports, says, claims or confirms that it passes, works, is correct, fixed or done;
  a "success claim" or "self-assessment" field.

What a built-in pattern does not fire on, in plain words (a host pattern fires wherever it
matches: the host wrote it for their own harness):

- **a choice**: the verdict is offered as one of alternatives or a range: "VERDICT: PASS or
  VERDICT: FAIL", "pass/fail", "score: 1-5", "score: 1 to 10" (the instruction of the answer's
  format, as in seed 000's system prompt "… end with one line: VERDICT: PASS or VERDICT: FAIL.");
- **a rule or an instruction**: the clause before the match (back to the last ``.``, ``!``,
  ``?``, ``;`` or line break, at most ``CLAUSE_CHARS`` characters) holds a conditional or an
  instruction word: if, when, whether, unless, until, once, should, must, would, could, can,
  will, shall, may, might, ensure, make sure, verify, check, confirm, decide, determine, so that,
  e.g., i.e., example, for instance, such as, either, reply, respond, answer, return, print,
  write, end, finish, format, choose, pick, select ("Decide whether all tests pass.", "If the
  tests fail, say FAIL."); for a match that starts its line, a line just above ending with ``:``
  counts as its clause ("Output format:" then "Verdict: PASS");
- **a question**: the sentence the match is in ends with ``?`` ("Do all tests pass?").

These rules make the check miss a verdict phrased as a rule ("the tests must pass, and they
do") and fire on some instructions they do not foresee; what fired is kept (the matching text and
the pattern's name), so a reader can see why.

A host's patterns (a bundle's ``verdict_patterns``: ``[{"name", "pattern", "description"?}]``)
are added to the built-ins: ``name`` a label not used by a built-in or another host pattern,
``pattern`` a regular expression of at most ``MAX_PATTERN_CHARS`` characters, compiled on RE2
exactly as a ``re:`` redaction pattern is (content.normalise.compile_linear_regex: linear time,
case-insensitive, never matching the empty string, no lookaround or backreference).

The result is the first verdict found, by place in the request (the order its texts are read,
then the position within a text; at one position the built-ins in the order above, then the
host's in theirs): the pattern's name and the matching text, cut to ``MATCH_CHARS`` characters.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

import re2

from content.normalise import PatternError, compile_linear_regex, normalise_line_endings

__all__ = [
    "BUILT_IN_PATTERNS", "BUILT_IN_NAMES", "ContentVerdict", "VerdictPattern", "VerdictPatterns",
    "find_content_verdict", "host_pattern_problems", "MATCH_CHARS", "MAX_HOST_PATTERNS",
    "MAX_PATTERN_CHARS",
]

MATCH_CHARS = 200  # the matching text kept, at most (Review.content_verdict's size)
MAX_HOST_PATTERNS = 50
MAX_PATTERN_CHARS = 500  # as a redaction pattern (content.normalise.MAX_PATTERN_LENGTH)
MIN_REMOVED_CHARS = 4
CLAUSE_CHARS = 80
NESTED_JSON_LEVELS = 3
_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]*")


@dataclass(frozen=True)
class VerdictPattern:
    name: str
    pattern: str  # RE2 syntax, matched case-insensitively
    description: str
    origin: str = "built_in"  # "built_in" | "host"

    def applied(self) -> dict:
        return {"name": self.name, "origin": self.origin, "pattern": self.pattern,
                "description": self.description}


@dataclass(frozen=True)
class ContentVerdict:
    pattern: str  # the name of the pattern that fired
    text: str  # the matching text, at most MATCH_CHARS characters


# --- the built-in patterns -------------------------------------------------------------------------

_S = r"[\s_-]+"  # a word gap: spaces, or _ and - as in field names
_VERDICT_WORD = (
    r"(?:pass(?:ed|es)?|fail(?:ed|s)?|approved?|rejected?|accepted|lgtm|correct|incorrect|ok(?:ay)?"
    rf"|no{_S}(?:issues?|problems?|bugs?|defects?|errors?|concerns?)"
    rf"|found{_S}(?:a|an|one|no|\d+|several|some){_S}(?:bugs?|issues?|problems?|defects?|errors?)"
    rf"|(?:looks|seems|is){_S}(?:good|fine|right|correct|wrong|broken))"
)
_PRIOR = (
    r"\b(?:prior|previous|earlier|first|other|another|last|original|initial)" + _S
    + r"(?:reviewers?|reviews?|verdicts?|assessments?|evaluations?|evaluators?|graders?|gradings?"
    r"|judges?|judge?ments?|checks?|rounds?|models?|agents?|auditors?)\b"
    r"[^\n]{0,60}?\b" + _VERDICT_WORD + r"\b"
    r"|\b(?:reviewer|grader|judge)[\s_#-]*(?:\d+|[a-d])\s*(?:[:=]|said|says|gave|found)\s*"
    r"[\"'*`]*" + _VERDICT_WORD + r"\b"
)
_STATED = (
    r"\b(?:verdicts?|decisions?|dispositions?|outcomes?|results?|status|assessments?"
    r"|conclusions?|judge?ments?)[\"'*`]*\s*(?:[:=]|\bwas\b|\bis\b)\s*[\"'*`(\[]*\s*"
    r"(?:pass(?:ed)?|fail(?:ed)?|approved?|rejected?|accepted|lgtm)\b"
)
_TEST_WORDS = (rf"(?:(?:unit|integration|regression|hidden|held(?:{_S})?out|existing|new|e2e"
               rf"|provided|required){_S})?")
_TESTS = (
    rf"\b(?:(?:all|every|each){_S}(?:of{_S})?(?:the{_S})?|\d+{_S})?{_TEST_WORDS}tests?"
    rf"(?:{_S}(?:suite|cases?|runs?))?{_S}(?:(?:are|were|is|was|have|has|all|now|still){_S})*"
    r"(?:pass(?:ed|es|ing)?|fail(?:ed|s|ing)?|succeed(?:ed|s)?|green)\b"
    rf"|\bpass(?:es|ed)?{_S}(?:all|every){_S}(?:of{_S})?(?:the{_S})?(?:\w+{_S})?tests?\b"
    rf"|\bfail(?:s|ed)?{_S}(?:\d+|some|several|two|three){_S}(?:of{_S}the{_S})?tests?\b"
    rf"|\b\d+{_S}(?:tests?{_S})?(?:passed|failed)\b"
    rf"|\b(?:ci|build|pipeline|checks?){_S}(?:is|are|was|were){_S}(?:green|passing|red|failing)\b"
)
_PROBLEMS = r"(?:issues?|problems?|bugs?|defects?|errors?|concerns?|findings?|regressions?|mistakes?)"
_NO_ISSUES = (
    rf"\b(?:no|zero|0){_S}(?:(?:major|obvious|known|remaining|other|new|real|serious|significant"
    rf"|critical){_S})?{_PROBLEMS}{_S}(?:(?:were|was|have{_S}been|has{_S}been){_S})?"
    r"(?:found|detected|identified|spotted|reported|seen|remain(?:ing)?)\b"
    rf"|\b(?:found|finds|detected|identified|saw|spotted|reported){_S}no{_S}(?:\w+{_S})?{_PROBLEMS}\b"
    rf"|\b(?:did|does|could|can)(?:{_S})?n[o'’]?t{_S}find{_S}any{_S}(?:\w+{_S})?{_PROBLEMS}\b"
)
_ISSUES_FOUND = (
    rf"\bfound{_S}(?:a|an|one|two|three|several|some|multiple|\d+){_S}(?:\w+{_S})?"
    r"(?:bugs?|issues?|problems?|defects?|errors?|flaws?|regressions?)\b"
    rf"|\b(?:bugs?|defects?){_S}(?:was{_S}|were{_S})?(?:found|detected|confirmed)\b"
)
_APPROVAL = (
    rf"\blgtm\b|\blooks{_S}good{_S}to{_S}me\b|\bship{_S}it\b"
    rf"|\b(?:pr|pull{_S}request|patch|patches|change|changes|diff|commit|mr|merge{_S}request"
    rf"|submission|implementation|solution|code){_S}(?:(?:is|was|has{_S}been|have{_S}been)"
    rf"{_S})?(?:approved|rejected)\b"
    rf"|\b(?:was|were|been|got){_S}(?:approved|rejected)\b"
    rf"|\b(?:approved|rejected){_S}by\b"
    r"|(?m:^[ \t]*(?:approved|rejected)[ \t]*[.!]?[ \t]*$)"
)
_SCORE = (
    rf"\b(?:scored?|scoring|rated|rating|grade[ds]?|marks?|points)(?:{_S})?(?:[:=]|of|at|was|is|as)?"
    r"[\s_-]*\d+(?:\.\d+)?\s*(?:/|out[\s_-]+of|of)\s*\d+(?:\.\d+)?\b"
    r"|\b(?:scored?|rated|rating|grade)[\"'*`]*\s*[:=]\s*\d+(?:\.\d+)?\b"
)
_SUCCESS = (
    r"\b(?:author|builder|agent|submitter|developer|contributor|assistant|model|coder|engineer"
    r"|generator)(?:'s|s)?" + _S
    + r"(?:reports?|reported|says?|said|claims?|claimed|confirms?|confirmed|states?|stated|notes?"
    r"|noted|asserts?|asserted|believes?|verified)\b[^\n]{0,60}?\b(?:pass(?:es|ed)?|works?|working"
    r"|correct|fixed|succeeds?|succeeded|successful(?:ly)?|done|complete[ds]?|resolved|solved)\b"
    rf"|\b(?:success{_S}claims?|self{_S}(?:reports?|assessments?|reviews?|checks?|evaluations?))"
    r"[\"'*`]*\s*[:=]"
)

BUILT_IN_PATTERNS: tuple[VerdictPattern, ...] = (
    VerdictPattern("prior_verdict", _PRIOR,
                   "another reviewer's verdict: a prior, previous or other reviewer, review or "
                   "verdict followed by PASS, FAIL, approved, no issues, found a bug …"),
    VerdictPattern("stated_verdict", _STATED,
                   "a verdict stated as a field: verdict, decision, outcome, result or status "
                   "given as PASS, FAIL, approved or rejected"),
    VerdictPattern("tests_outcome", _TESTS,
                   "tests said to pass or fail: all tests passed, 12 passed, CI is green"),
    VerdictPattern("no_issues", _NO_ISSUES,
                   "a review's finding of nothing: no issues found, found no problems"),
    VerdictPattern("issues_found", _ISSUES_FOUND,
                   "a review's finding of a fault: found a bug, found 3 issues"),
    VerdictPattern("approval", _APPROVAL,
                   "an approval or rejection: LGTM, looks good to me, the patch was approved"),
    VerdictPattern("score", _SCORE, "a score given: score: 8/10, rated 4 out of 5"),
    VerdictPattern("success_claim", _SUCCESS,
                   "the author's own claim of success: the author reports that it works"),
)
BUILT_IN_NAMES = frozenset(p.name for p in BUILT_IN_PATTERNS)


def _re2_options() -> re2.Options:
    options = re2.Options()
    options.case_sensitive = False
    options.log_errors = False
    return options


@cache
def _built_in_regexes() -> tuple:
    options = _re2_options()
    return tuple(re2.compile(p.pattern, options) for p in BUILT_IN_PATTERNS)


# --- what a built-in does not fire on ---------------------------------------------------------------

_ALTERNATIVE = (r"(?:pass(?:ed)?|fail(?:ed)?|approved?|reject(?:ed)?|accept(?:ed)?|correct"
                r"|incorrect|lgtm)")
_LEAD = r"(?:(?:verdict|result|status|outcome|decision)\s*[:=]?\s*)?"
# After the match: "or FAIL", "/ verdict: fail", ", FAIL", a range "-5", "to 10".
_CHOICE_AFTER = re.compile(
    rf"[\"'`*)\]]*\s*(?:\bor\b|\bnor\b|/|\||,)\s*[\"'`*(\[]*\s*{_LEAD}[\"'`*]*{_ALTERNATIVE}\b"
    r"|\s*(?:-|\u2013|\u2014|\bto\b)\s*\d", re.IGNORECASE)
# Before the match: "PASS or ", "pass/ ".
_CHOICE_BEFORE = re.compile(
    rf"\b{_ALTERNATIVE}[\"'`*)\]]*\s*(?:\bor\b|\bnor\b|/|\||,)\s*[\"'`*(\[]*\s*$", re.IGNORECASE)
_HEDGE = re.compile(
    r"\b(?:if|when|whenever|whether|unless|until|once|should|must|would|could|can|will|shall|may"
    r"|might|ensure|make\s+sure|verify|check|confirm|decide|determine|so\s+that|eg|ie|example"
    r"|for\s+instance|such\s+as|either|reply|respond|answer|return|print|write|end|finish|format"
    r"|choose|pick|select)\b", re.IGNORECASE)
_ABBREVIATIONS = re.compile(r"\b(e)\.(g)\.|\b(i)\.(e)\.", re.IGNORECASE)
_CLAUSE_END = re.compile(r"[.!?;\n](?=\s|$)|\n")
_SENTENCE_END = re.compile(r"[.!?\n]")
_HEADING = re.compile(r"([^\n]*):[ \t]*\n[ \t]*\Z")


def _suppressed(text: str, start: int, end: int) -> bool:
    """Whether a built-in's match at [start, end) is a choice, a rule or a question."""
    if _CHOICE_AFTER.match(text, end) or _CHOICE_BEFORE.search(text[max(0, start - 40):start]):
        return True
    before = _ABBREVIATIONS.sub(lambda m: "".join(g for g in m.groups() if g),
                                text[max(0, start - CLAUSE_CHARS):start])
    ends = list(_CLAUSE_END.finditer(before))
    clause = before[ends[-1].end():] if ends else before
    if _HEDGE.search(clause):
        return True
    if not clause.strip():
        # The match starts its line: a heading line ending with ":" just above is its clause
        # ("Output format:" or "Example:" then "Verdict: PASS").
        heading = _HEADING.search(text, max(0, start - CLAUSE_CHARS), start)
        if heading and _HEDGE.search(heading.group(1)):
            return True
    sentence_end = _SENTENCE_END.search(text, end, end + 400)
    return sentence_end is not None and sentence_end.group() == "?"


# --- the host's patterns ----------------------------------------------------------------------------

def host_pattern_problems(entries) -> list[tuple[tuple, str]]:
    """Every problem of a host's pattern list, each as (place within the list, message):
    ``((0, "name"), '"score" is a built-in pattern's name; choose another')``. Structure (an
    array of objects with a label `name`, a `pattern` of at most MAX_PATTERN_CHARS characters)
    is the bundle schema's to say; entries whose name or pattern it refuses are skipped here."""
    problems: list[tuple[tuple, str]] = []
    if not isinstance(entries, list):
        return problems
    first: dict[str, int] = {}
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            continue
        name, pattern = entry.get("name"), entry.get("pattern")
        if isinstance(name, str) and _LABEL.fullmatch(name):
            if name in BUILT_IN_NAMES:
                problems.append(((i, "name"),
                                 f'"{name}" is a built-in pattern\'s name; choose another'))
            elif name in first:
                problems.append(((i, "name"), f'duplicate name "{name}" (first at '
                                              f"verdict_patterns[{first[name]}])"))
            else:
                first[name] = i
        if isinstance(pattern, str) and 0 < len(pattern) <= MAX_PATTERN_CHARS:
            try:
                compile_linear_regex(pattern)
            except PatternError as error:
                problems.append(((i, "pattern"), str(error)))
    return problems


class VerdictPatterns:
    """The built-in patterns and a host's, compiled: what `find_content_verdict` matches with.

    `host` entries are ``{"name", "pattern", "description"?}``, valid (`host_pattern_problems`
    finds none); an invalid one raises PatternError or ValueError."""

    def __init__(self, host=()):
        host_patterns = []
        for entry in host or ():
            problems = host_pattern_problems([entry])
            if problems:
                raise ValueError(f"verdict pattern {entry.get('name')!r}: {problems[0][1]}")
            host_patterns.append(VerdictPattern(entry["name"], entry["pattern"],
                                                entry.get("description") or "", "host"))
        names = [p.name for p in host_patterns]
        if len(set(names)) != len(names):
            raise ValueError("verdict patterns: two share a name")
        self.patterns = (*BUILT_IN_PATTERNS, *host_patterns)
        self.regexes = (*_built_in_regexes(),
                        *(compile_linear_regex(p.pattern) for p in host_patterns))

    @property
    def applied(self) -> list[dict]:
        """Every pattern as the run records it: name, origin, pattern, description."""
        return [p.applied() for p in self.patterns]


@cache
def _built_ins_only() -> VerdictPatterns:
    return VerdictPatterns()


# --- scanning ----------------------------------------------------------------------------------------

def _variants(text: str) -> list[str]:
    """The forms in which a harness may have sent `text`, longest first: as given, rstripped,
    stripped (line endings LF)."""
    text = normalise_line_endings(text)
    return sorted({v for v in (text, text.rstrip(), text.strip()) if v.strip()},
                  key=len, reverse=True)


def _without(text: str, removed: list[str]) -> str:
    for variant in removed:
        if len(variant) >= MIN_REMOVED_CHARS:
            text = text.replace(variant, "\n")
        elif text.strip() == variant:
            return ""
    return text


def _texts(request: str, removed: list[str]):
    """The request's texts to scan, in document order, copy and statement removed."""
    try:
        parsed = json.loads(request)
    except (ValueError, RecursionError):
        yield _without(normalise_line_endings(request), removed)
        return
    stack: list[tuple[str | None, object, int]] = [(None, parsed, 0)]
    while stack:
        key, value, level = stack.pop()
        prefix = "" if key is None else f"{key}: "
        if isinstance(value, dict):
            if key is not None:
                yield key
            stack.extend((k, v, level) for k, v in reversed(value.items()))
        elif isinstance(value, list):
            if key is not None:
                yield key
            stack.extend((None, v, level) for v in reversed(value))
        elif isinstance(value, str):
            text = normalise_line_endings(value)
            kept = _without(text, removed)
            nested = None
            if kept == text and level < NESTED_JSON_LEVELS and text.lstrip()[:1] in ("{", "["):
                try:
                    nested = json.loads(text)
                except (ValueError, RecursionError):
                    nested = None
            if isinstance(nested, dict | list):
                if key is not None:
                    yield key
                stack.append((None, nested, level + 1))
            else:
                yield prefix + kept
        elif value is not None:
            yield prefix + json.dumps(value)
        elif key is not None:
            yield key


def _first_match(text: str, patterns: VerdictPatterns) -> tuple[int, int, str] | None:
    """(start, pattern index, matched text) of the earliest verdict in `text`, or None."""
    best = None
    for index, (pattern, regex) in enumerate(zip(patterns.patterns, patterns.regexes,
                                                 strict=True)):
        for match in regex.finditer(text):
            if best is not None and match.start() >= best[0]:
                break
            if match.end() == match.start():
                continue
            if pattern.origin == "built_in" and _suppressed(text, match.start(), match.end()):
                continue
            best = (match.start(), index, match.group())
            break
    return best


def _cut(text: str) -> str:
    return text if len(text) <= MATCH_CHARS else text[:MATCH_CHARS - 1] + "…"


def find_content_verdict(request: str, *, content: str = "", statement: str = "",
                         patterns: VerdictPatterns | None = None,
                         contents: Sequence[str] = ()) -> ContentVerdict | None:
    """The first verdict the request carries outside the copy's `content` and the task
    `statement` (module docstring), or None. `patterns`: the built-ins when None. `contents`:
    the other copies the request shows (a comparison's second copy), removed as `content` is,
    so a request holding two copies is read without either."""
    if not isinstance(request, str) or not request:
        return None
    patterns = patterns if patterns is not None else _built_ins_only()
    removed = sorted({*_variants(content), *(v for c in contents for v in _variants(c)),
                      *_variants(statement)}, key=len, reverse=True)
    for text in _texts(request, removed):
        found = _first_match(text, patterns)
        if found is not None:
            return ContentVerdict(patterns.patterns[found[1]].name, _cut(found[2]))
    return None
