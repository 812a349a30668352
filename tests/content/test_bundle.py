"""Run bundles (content/bundle.py): validation, seal checks, run manifest. Pure, no database."""

import copy as copylib
import hashlib
import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from content.bundle import (
    DEFAULT_REQUEST_KEYS,
    BundleError,
    SealResult,
    ValidatedBundle,
    build_manifest,
    check_seal,
    schema,
    validate_bundle,
)
from content.canonical import canonical_sha256
from content.limits import TextLimits

# No database, no socket, no process: run once (tests/support/pure.py).
pytestmark = pytest.mark.pure

ROOT = Path(__file__).resolve().parents[2]  # the repository
LIMITS = {"max_bundle_bytes": 1_000_000, "max_copy_bytes": 10_000}


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def request(**fields) -> str:
    return json.dumps(fields)


def sealed_request(**extra) -> tuple[str, str]:
    text = request(candidate_text="…", reviewer_profile="strict", evidence_refs=[], **extra)
    return text, sha(text)


def minimal() -> dict:
    return {
        "format": "blindjudge.run/1",
        "run": {"name": "tiny", "task": "Write a function."},
        "builders": [{"id": "b1", "model": "gpt-4o-2024-08-06", "family": "OpenAI"}],
        "copies": [
            {"id": "c1", "builder": "b1", "format": "text", "content": "def f(): pass",
             "truth": "known_good"},
        ],
    }


def realistic() -> dict:
    """Three builders, copies of every truth and format, two reviewers, reviews and findings."""
    builders = [
        {"id": "b1", "model": "gpt-4o-2024-08-06", "family": "OpenAI"},
        {"id": "b2", "model": "claude-3-5-sonnet-20241022", "family": "Anthropic"},
        {"id": "b3", "model": "gemini-1.5-pro-002", "family": "Google"},
    ]
    copies = [
        {"id": "c1", "builder": "b1", "format": "text", "content": "print('hi')\n",
         "truth": "known_good", "cluster": "task-a"},
        {"id": "c2", "builder": "b2", "format": "markdown",
         "content": "# Plan\n\n* step one\n* `import openai`\n", "truth": "seeded_defect",
         "defect": "off-by-one in the loop bound", "cluster": "task-a"},
        {"id": "c3", "builder": "b3", "format": "diff",
         "content": "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n",
         "truth": "tests_fail"},
        {"id": "c4", "builder": "b1", "format": "diff", "content": "+ok\n", "truth": "tests_pass"},
        {"id": "c5", "builder": "b2", "format": "text", "content": "naïve café ‮ résumé 🙂",
         "truth": "unknown", "defect": None, "cluster": None},
        {"id": "c6", "builder": "b3", "format": "markdown",
         "content": "</iframe><script>alert(1)</script>", "truth": "seeded_defect",
         "defect": "hostile"},
    ]
    reviewers = [
        {"id": "r1", "model": "qwen3-1.7b", "family": "Alibaba"},
        {"id": "r2", "model": "llama-3.1-8b", "family": "Meta"},
    ]
    sealed, sealed_hash = sealed_request()
    leaky = request(candidate_text="…", reviewer_profile="strict", evidence_refs=[],
                    prior_verdict="fail")
    reviews = []
    for c in copies:
        reviews.append({"reviewer": "r1", "copy": c["id"], "verdict": "pass", "reason": "fine",
                        "request": sealed, "request_sha256": sealed_hash,
                        "authorship_guess": "gpt-4o-2024-08-06"})
        reviews.append({"reviewer": "r2", "copy": c["id"], "verdict": "fail", "reason": "bug"})
    reviews[1]["request"] = leaky
    reviews[1]["request_sha256"] = sha(leaky)
    reviews[3]["request"] = None
    reviews[3]["request_sha256"] = None
    findings = [
        {"id": "f1", "copy": "c2", "text": "The loop stops one early.", "raised_by": ["r1", "r2"],
         "proposed_verdict": "confirmed", "truth": "real"},
        {"id": "f2", "copy": "c1", "text": "Missing newline.", "raised_by": ["r2"],
         "proposed_verdict": "refuted", "truth": "false_alarm"},
        {"id": "f3", "copy": "c3", "text": "Maybe slow.", "raised_by": ["r1"],
         "proposed_verdict": "confirmed", "truth": "unknown"},
    ]
    return {
        "format": "blindjudge.run/1",
        "run": {"name": "matrix 2024-11", "task": "Fix the parser."},
        "builders": builders,
        "copies": copies,
        "reviewers": reviewers,
        "reviews": reviews,
        "findings": findings,
    }


def encode(bundle) -> bytes:
    return json.dumps(bundle, ensure_ascii=False, indent=1).encode("utf-8")


def errors_of(bundle, **limits) -> list[str]:
    raw = bundle if isinstance(bundle, bytes) else encode(bundle)
    with pytest.raises(BundleError) as info:
        validate_bundle(raw, **{**LIMITS, **limits})
    assert str(info.value) == "\n".join(info.value.errors)
    return info.value.errors


# --- valid bundles ---------------------------------------------------------------------------

def test_minimal_bundle_passes_with_its_manifest():
    raw = encode(minimal())
    result = validate_bundle(raw, **LIMITS)
    assert isinstance(result, ValidatedBundle)
    assert result.raw_sha256 == hashlib.sha256(raw).hexdigest()
    assert result.format == "blindjudge.run/1"
    assert result.original == minimal()
    # The importer reads one shape whatever the format: run/1 is a run of one task.
    assert result.data == {
        "format": "blindjudge.run/1",
        "run": {"name": "tiny", "default_condition": "clean", "abstain_scoring": "not_flagged"},
        "tasks": [{"id": "task", "statement": "Write a function.", "format": "markdown",
                   "title": "", "cluster": ""}],
        "builders": minimal()["builders"],
        "copies": [{**minimal()["copies"][0], "task": "task", "defect": "", "cluster": ""}],
        "reviewers": [],
        "request_keys": DEFAULT_REQUEST_KEYS,
        "verdict_patterns": [],
        "reviews": [],
        "comparisons": [],
        "findings": [],
    }
    assert result.request_keys == DEFAULT_REQUEST_KEYS
    assert result.seals == []
    assert result.manifest == {
        "format": "blindjudge.run/1",
        "canonical": "jcs-rfc8785",
        "bundle_sha256": hashlib.sha256(raw).hexdigest(),
        "run": canonical_sha256({"name": "tiny", "task": "Write a function."}),
        "builders": {"b1": canonical_sha256(minimal()["builders"][0])},
        "copies": {"c1": sha("def f(): pass")},
        # A run/1 copy names no task: it is bound to the one task, "task", the importer makes.
        "bindings": {"c1": {"task": "task", "builder": "b1"}},
        "reviewers": {},
        "reviews": {},
        "findings": {},
    }
    assert result.manifest_sha256 == canonical_sha256(result.manifest)


def test_realistic_bundle_passes_with_a_seal_per_review():
    bundle = realistic()
    result = validate_bundle(encode(bundle), **LIMITS)
    assert len(result.seals) == len(bundle["reviews"]) == 12
    assert result.seals[0] == SealResult("sealed", "")
    # a failed seal whose request carries a verdict records the match too
    assert result.seals[1] == SealResult("failed", "unexpected keys: prior_verdict",
                                         "prior_verdict: fail", "prior_verdict")
    assert result.seals[2] == SealResult("sealed", "")
    assert result.seals[3] == SealResult("absent", "")  # null request counts as none
    assert result.seals[5] == SealResult("absent", "")  # no request at all
    assert set(result.manifest) == {
        "format", "canonical", "bundle_sha256", "run", "builders", "copies", "bindings",
        "reviewers", "reviews", "findings"
    }
    assert list(result.manifest["builders"]) == ["b1", "b2", "b3"]
    assert list(result.manifest["copies"]) == ["c1", "c2", "c3", "c4", "c5", "c6"]
    assert result.manifest["copies"]["c5"] == sha("naïve café ‮ résumé 🙂")
    assert result.manifest["reviews"]["r2/c6"] == canonical_sha256(bundle["reviews"][11])
    assert result.manifest["findings"]["f1"] == canonical_sha256(bundle["findings"][0])


def test_utf8_bom_is_tolerated():
    raw = b"\xef\xbb\xbf" + encode(minimal())
    assert validate_bundle(raw, **LIMITS).raw_sha256 == hashlib.sha256(raw).hexdigest()


def test_bundle_error_survives_pickling():
    error = BundleError(["a: one", "b: two"])
    assert pickle.loads(pickle.dumps(error)).errors == ["a: one", "b: two"]  # noqa: S301
    assert str(error) == "a: one\nb: two"


def test_schema_is_valid_draft_2020_12():
    Draft202012Validator.check_schema(schema())
    shipped = ROOT / "content" / "schemas" / "run-bundle-1.schema.json"
    assert json.loads(shipped.read_text("utf-8")) == schema()


@pytest.mark.pure(False)  # imports the module afresh in a process of its own
def test_module_imports_no_django():
    code = "import sys, content.bundle; print(sorted(m for m in sys.modules if 'django' in m))"
    out = subprocess.run(  # noqa: S603 - fixed arguments
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        cwd=ROOT,
    )
    assert out.stdout.strip() == "[]"


# --- bad bytes and bad JSON ------------------------------------------------------------------

def test_oversize_bundle_is_refused_before_decoding():
    raw = b"\xff" * 101
    assert errors_of(raw, max_bundle_bytes=100) == [
        "bundle: 101 bytes exceeds the limit of 100 bytes"
    ]
    raw = encode(minimal())
    assert validate_bundle(raw, max_bundle_bytes=len(raw), max_copy_bytes=100)


def test_invalid_utf8_inside_a_string_names_its_place():
    """Case 8: the host learns which copy holds the bad bytes."""
    bundle = minimal()
    bundle["copies"][0]["content"] = "caf__"
    raw = encode(bundle).replace(b"caf__", b"caf\xe9!")
    assert errors_of(raw) == ["copies[0].content: not valid UTF-8 (byte 0xE9 at character 3)"]


def test_invalid_utf8_outside_any_string_names_the_byte():
    raw = b'{"format": "blindjudge.run/1", \xe9 "x": 1}'
    assert raw.index(b"\xe9") == 31
    assert errors_of(raw) == ["bundle: not valid UTF-8 at byte 31"]
    # The offset counts a leading BOM.
    assert errors_of(b'\xef\xbb\xbf[\xed 1]') == ["bundle: not valid UTF-8 at byte 4"]
    # An encoded surrogate (CESU style) is not UTF-8 either.
    assert errors_of(b'\xef\xbb\xbf["\xed\xa0\x80"]') == [
        "[0]: not valid UTF-8 (byte 0xED at character 0)"]


def test_malformed_json_names_line_and_column():
    raw = b'{"format": "blindjudge.run/1",\n  "run": }'
    assert errors_of(raw) == [
        "bundle: malformed JSON at line 2 column 10: Expecting value"
    ]
    assert errors_of(b"") == ["bundle: malformed JSON at line 1 column 1: Expecting value"]
    assert errors_of(b'{"a": "x\tb"}') == [
        "bundle: malformed JSON at line 1 column 9: unescaped control character U+0009 in a string"
    ]


def test_non_standard_json_is_refused():
    assert errors_of(b'{"a": NaN}') == ["bundle: malformed JSON: NaN is not allowed in JSON"]
    assert errors_of(b'[-Infinity]') == [
        "bundle: malformed JSON: -Infinity is not allowed in JSON"
    ]
    assert errors_of(b"[" + b"9" * 5000 + b"]") == [
        "bundle: malformed JSON: a number has too many digits"
    ]


def test_deep_nesting_is_refused_without_a_crash():
    assert errors_of(b"[" * 100_000) == ["bundle: malformed JSON: nested too deeply"]
    deep = b"[" * 500 + b"]" * 500
    bundle = encode(minimal()).replace(b'"text"', deep, 1)
    assert errors_of(bundle) == ["bundle: JSON nested deeper than 32 levels"]


def test_top_level_must_be_an_object():
    assert errors_of(b"[1, 2]") == ["bundle: expected a JSON object, got an array"]
    assert errors_of(b'"hi"') == ['bundle: expected a JSON object, got string "hi"']


def test_duplicate_json_keys_are_named_by_place():
    raw = encode(minimal()).replace(b'"truth": "known_good"',
                                    b'"truth": "known_good", "truth": "seeded_defect"')
    assert errors_of(raw) == ['copies[0]: duplicate key "truth"']
    raw = b'{"format": "blindjudge.run/1", "format": "blindjudge.run/1"}'
    assert errors_of(raw)[-1] == 'bundle: duplicate key "format"'


# --- format, structure and enums -------------------------------------------------------------

def test_unknown_format_is_reported_once_and_alone():
    bundle = {"format": "blindjudge.run/3", "copies": "whatever", "extra": 1}
    assert errors_of(bundle) == [
        'format: unknown format "blindjudge.run/3"; expected "blindjudge.run/1" or '
        '"blindjudge.run/2"'
    ]
    assert errors_of({**minimal(), "format": 1}) == [
        'format: unknown format 1; expected "blindjudge.run/1" or "blindjudge.run/2"'
    ]


def test_missing_required_fields():
    bundle = minimal()
    del bundle["run"]["task"]
    del bundle["copies"][0]["truth"]
    del bundle["copies"][0]["content"]
    assert errors_of(bundle) == [
        'run: missing required field "task"',
        'copies[0]: missing required field "content"',
        'copies[0]: missing required field "truth"',
    ]
    assert errors_of({"run": {"name": "n", "task": "t"}}) == [
        'bundle: missing required field "format"',
        'bundle: missing required field "builders"',
        'bundle: missing required field "copies"',
    ]


def test_wrong_types():
    bundle = minimal()
    bundle["copies"][0]["content"] = 5
    bundle["builders"][0]["model"] = ["gpt"]
    bundle["copies"][0]["defect"] = True
    bundle["reviews"] = {}
    assert errors_of(bundle) == [
        "builders[0].model: expected a string, got an array",
        "copies[0].content: expected a string, got number 5",
        "copies[0].defect: expected a string or null, got boolean true",
        "reviews: expected an array or null, got an object",  # null: absent, as everywhere
    ]


def test_bad_enums():
    bundle = realistic()
    bundle["copies"][0]["format"] = "html"
    bundle["copies"][1]["truth"] = "maybe"
    bundle["reviews"][0]["verdict"] = "PASS"
    bundle["findings"][0]["proposed_verdict"] = "yes"
    bundle["findings"][1]["truth"] = 0
    assert errors_of(bundle) == [
        'copies[0].format: "html" is not one of diff, markdown, text',
        'copies[1].truth: "maybe" is not one of known_good, seeded_defect, tests_fail, '
        "tests_pass, unknown",
        'reviews[0].verdict: "PASS" is not one of fail, pass',
        'findings[0].proposed_verdict: "yes" is not one of confirmed, refuted',
        "findings[1].truth: 0 is not one of false_alarm, real, unknown",
    ]


def test_unknown_fields_empty_ids_and_empty_lists():
    bundle = minimal()
    bundle["copies"][0]["author"] = "b1"
    bundle["run"]["model"] = "x"
    bundle["builders"][0]["id"] = ""
    bundle["copies"][0]["builder"] = ""
    bundle["reviewers"] = []
    bundle["request_keys"] = []
    assert errors_of(bundle) == [
        'run: unknown field "model"',
        "builders[0].id: must not be empty",
        'copies[0]: unknown field "author"',
        "copies[0].builder: must not be empty",
        "request_keys: must not be empty",
    ]
    assert errors_of({**minimal(), "builders": [], "copies": []}) == [
        "builders: must not be empty",
        "copies: must not be empty",
    ]


def test_bad_request_sha256_and_raised_by():
    bundle = realistic()
    bundle["reviews"][0]["request_sha256"] = "abc"
    bundle["findings"][0]["raised_by"] = ["r1", "r1"]
    bundle["findings"][1]["raised_by"] = []
    assert errors_of(bundle) == [
        'reviews[0].request_sha256: "abc" is not a 64-character hexadecimal SHA-256',
        "findings[0].raised_by: must not repeat an item",
        "findings[1].raised_by: must not be empty",
    ]


# --- ids and references ----------------------------------------------------------------------

def test_duplicate_ids_in_each_collection():
    bundle = realistic()
    bundle["builders"].append({**bundle["builders"][0], "model": "other"})
    bundle["copies"].insert(4, {**bundle["copies"][1], "content": "other"})
    bundle["reviewers"].append(bundle["reviewers"][0])
    bundle["findings"].append(bundle["findings"][0])
    assert errors_of(bundle) == [
        'builders[3].id: duplicate id "b1" (first at builders[0])',
        'copies[4].id: duplicate id "c2" (first at copies[1])',
        'reviewers[2].id: duplicate id "r1" (first at reviewers[0])',
        'findings[3].id: duplicate id "f1" (first at findings[0])',
    ]
    # A renamed record leaves the references to its old id dangling, each one reported.
    bundle = realistic()
    bundle["reviewers"][1]["id"] = "r1"
    errors = errors_of(bundle)
    assert errors[0] == 'reviewers[1].id: duplicate id "r1" (first at reviewers[0])'
    assert errors[1:3] == [
        'reviews[1].reviewer: unknown reviewer "r2"', 'reviews[3].reviewer: unknown reviewer "r2"'
    ]
    assert len(errors) == 1 + 6 + 2


def test_dangling_references():
    bundle = realistic()
    bundle["copies"][3]["builder"] = "b9"
    bundle["reviews"][2]["reviewer"] = "r9"
    bundle["reviews"][4]["copy"] = "c9"
    bundle["findings"][0]["copy"] = "c9"
    bundle["findings"][0]["raised_by"] = ["r1", "r7"]
    assert errors_of(bundle) == [
        'copies[3].builder: unknown builder "b9"',
        'reviews[2].reviewer: unknown reviewer "r9"',
        'reviews[4].copy: unknown copy "c9"',
        'findings[0].copy: unknown copy "c9"',
        'findings[0].raised_by[1]: unknown reviewer "r7"',
    ]


def test_reviews_without_reviewers_dangle():
    bundle = minimal()
    bundle["reviews"] = [{"reviewer": "r1", "copy": "c1", "verdict": "pass", "reason": ""}]
    assert errors_of(bundle) == ['reviews[0].reviewer: unknown reviewer "r1"']


def test_a_reviewer_reviews_a_copy_once():
    bundle = realistic()
    bundle["reviews"].append(dict(bundle["reviews"][2]))
    assert errors_of(bundle) == [
        'reviews[12]: reviewer "r1" already reviewed copy "c2" at reviews[2]'
    ]


def test_ids_that_would_collide_in_the_manifest_are_refused():
    bundle = minimal()
    bundle["copies"].append({**bundle["copies"][0], "id": "x/c1"})
    bundle["reviewers"] = [{"id": "r", "model": "m", "family": "f"},
                           {"id": "r/x", "model": "m", "family": "f"}]
    bundle["reviews"] = [
        {"reviewer": "r/x", "copy": "c1", "verdict": "pass", "reason": ""},
        {"reviewer": "r", "copy": "x/c1", "verdict": "pass", "reason": ""},
    ]
    assert errors_of(bundle) == [
        'reviews[1]: reviewer "r" and copy "x/c1" give the manifest key "r/x/c1", '
        "already used by reviews[0]; rename an id"
    ]


# --- text content and sizes ------------------------------------------------------------------

def test_oversize_copy_counts_utf8_bytes():
    bundle = minimal()
    bundle["copies"][0]["content"] = "é" * 6  # 12 bytes, 6 characters
    assert validate_bundle(encode(bundle), max_bundle_bytes=10**6, max_copy_bytes=12)
    assert errors_of(bundle, max_copy_bytes=11) == [
        "copies[0].content: 12 bytes exceeds the per-copy limit of 11 bytes"
    ]
    bundle = realistic()
    bundle["copies"][3]["content"] = "x" * 101
    assert errors_of(bundle, max_copy_bytes=100) == [
        "copies[3].content: 101 bytes exceeds the per-copy limit of 100 bytes"
    ]


# Above every text of realistic(), so only the planted ones are over.
SMALL = TextLimits(name_chars=30, id_chars=14, task_chars=40, finding_chars=30,
                   review_reason_chars=10, note_chars=30, request_bytes=200)


def test_every_text_in_a_bundle_has_a_limit_and_the_message_names_the_place_and_the_limit():
    bundle = realistic()
    bundle["run"]["task"] = "t" * 41
    bundle["run"]["name"] = "n" * 31
    bundle["builders"][1]["id"] = "b" * 15
    for copy in bundle["copies"]:
        if copy["builder"] == "b2":
            copy["builder"] = "b" * 15
    bundle["builders"][2]["model"] = "m" * 31
    bundle["reviewers"][0]["family"] = "f" * 31
    bundle["copies"][1]["defect"] = "d" * 31
    bundle["copies"][0]["cluster"] = "c" * 15
    bundle["request_keys"] = ["candidate_text", "k" * 15]
    bundle["reviews"][2]["reason"] = "é" * 11  # 11 characters, 22 bytes: counted as characters
    bundle["reviews"][0]["authorship_guess"] = "g" * 31
    bundle["reviews"][4]["request"] = "é" * 101  # 101 characters, 202 bytes: counted as bytes
    bundle["findings"][2]["text"] = "x" * 31
    bundle["findings"][0]["id"] = "f" * 15
    assert errors_of(bundle, limits=SMALL) == [
        "run.name: 31 characters exceeds the limit of 30 characters",
        "run.task: 41 characters exceeds the limit of 40 characters",
        "builders[1].id: 15 characters exceeds the limit of 14 characters",
        "builders[2].model: 31 characters exceeds the limit of 30 characters",
        "copies[0].cluster: 15 characters exceeds the limit of 14 characters",
        "copies[1].defect: 31 characters exceeds the limit of 30 characters",
        "reviewers[0].family: 31 characters exceeds the limit of 30 characters",
        "request_keys[1]: 15 characters exceeds the limit of 14 characters",
        "reviews[0].authorship_guess: 31 characters exceeds the limit of 30 characters",
        "reviews[2].reason: 11 characters exceeds the limit of 10 characters",
        "reviews[4].request: 202 bytes exceeds the limit of 200 bytes",
        "findings[0].id: 15 characters exceeds the limit of 14 characters",
        "findings[2].text: 31 characters exceeds the limit of 30 characters",
    ]
    # At the limits, all of it passes.
    exact = TextLimits(name_chars=31, id_chars=15, task_chars=41, finding_chars=31,
                       review_reason_chars=11, note_chars=31, request_bytes=202)
    assert validate_bundle(encode(bundle), **LIMITS, limits=exact)


def test_by_default_megabytes_of_finding_text_review_reason_or_task_are_refused():
    """Issue 12: a 6 MB finding text or review reason and an 8 MB task imported fine."""
    bundle = realistic()
    bundle["findings"][0]["text"] = "x" * 6_000_000
    bundle["reviews"][1]["reason"] = "y" * 6_000_000
    bundle["run"]["task"] = "z" * 8_000_000
    assert errors_of(bundle, max_bundle_bytes=30_000_000) == [
        "run.task: 8000000 characters exceeds the limit of 100000 characters",
        "reviews[1].reason: 6000000 characters exceeds the limit of 20000 characters",
        "findings[0].text: 6000000 characters exceeds the limit of 20000 characters",
    ]


def test_text_limits_refuse_nonsense_and_sizes_past_the_database_columns():
    with pytest.raises(ValueError, match="name_chars: at most 200"):
        TextLimits(name_chars=201)
    with pytest.raises(ValueError, match="task_chars: expected a whole number"):
        TextLimits(task_chars=0)


def test_a_seal_reason_lists_at_most_20_keys():
    text = json.dumps({f"key{i:03d}": 1 for i in range(500)})
    result = check_seal(text, sha(text), DEFAULT_REQUEST_KEYS)
    assert result.outcome == "failed"
    assert result.reason.startswith("unexpected keys: key000, key001, ")
    assert "key019 and 480 more; missing keys: candidate_text" in result.reason
    assert "key020" not in result.reason


# --- the error list is capped ----------------------------------------------------------------

def capped_error(bundle, **limits) -> BundleError:
    raw = bundle if isinstance(bundle, bytes) else encode(bundle)
    with pytest.raises(BundleError) as info:
        validate_bundle(raw, **{**LIMITS, **limits})
    return info.value


def test_the_error_list_stops_after_100_and_counts_the_rest():
    bundle = minimal()
    bundle["run"].update({f"k{i:05d}": 1 for i in range(25_000)})
    error = capped_error(bundle, max_bundle_bytes=10**7)
    assert len(error.errors) == 100 and error.more == 24_900
    assert error.errors == [f'run: unknown field "k{i:05d}"' for i in range(100)]
    assert str(error).splitlines()[-1] == (
        "…and 24,900 more problems; only the first 100 are listed")
    assert str(error).splitlines()[:100] == error.errors


def test_the_cap_counts_problems_of_every_kind_and_is_a_parameter():
    bundle = minimal()
    bundle["copies"] = [
        {"id": "c1", "builder": "nobody", "format": "pdf", "content": "x", "truth": "maybe",
         "extra": 1} for _ in range(30)
    ]
    # Per copy: a bad format, a bad truth, an unknown field, an unknown builder; ids repeat.
    error = capped_error(bundle, max_errors=10)
    assert len(error.errors) == 10
    assert error.more == 30 * 4 + 29 - 10
    assert capped_error(bundle, max_errors=1000).more == 0
    # Below the cap, nothing changes: every problem is listed and nothing is said of more.
    small = capped_error(minimal() | {"builders": []})
    assert small.more == 0 and str(small) == "\n".join(small.errors)


def test_nul_bytes_are_named_by_place():
    bundle = realistic()
    bundle["copies"][3]["content"] = "ab\x00cd"
    bundle["reviews"][0]["reason"] = "\x00"
    assert errors_of(bundle) == [
        "copies[3].content: contains a NUL byte at character 2",
        "reviews[0].reason: contains a NUL byte at character 0",
    ]
    # A raw NUL byte inside a string is named the same way, not as malformed JSON.
    raw = encode(minimal()).replace(b"def f(): pass", b"def\x00f")
    assert errors_of(raw) == ["copies[0].content: contains a NUL byte at character 3"]
    # ...but a raw NUL after a backslash is not turned into the text \u0000.
    assert errors_of(b'{"x": "a\\\x00"}') == [
        "bundle: malformed JSON at line 1 column 9: Invalid \\escape"
    ]


def test_nul_in_a_key_is_named():
    raw = encode(minimal()).replace(b'"id": "c1"', b'"id": "c1", "ab\\u0000": 1')
    assert errors_of(raw) == [
        'copies[0]: unknown field "ab\\u0000"',
        "copies[0]: a key contains a NUL byte at character 2",
    ]


def test_lone_surrogates_are_named_by_place():
    raw = encode(realistic()).replace(b"The loop stops one early.", b"bad \\udc00 half")
    raw = raw.replace(b'"Fix the parser."', b'"\\ud800"')
    assert errors_of(raw) == [
        "run.task: contains a lone surrogate (U+D800) at character 0",
        "findings[0].text: contains a lone surrogate (U+DC00) at character 4",
    ]
    # A proper pair of escapes is one character, not an error.
    raw = encode(minimal()).replace(b"def f(): pass", b"\\ud83d\\ude42")
    assert validate_bundle(raw, **LIMITS).data["copies"][0]["content"] == "🙂"


def test_hostile_text_in_messages_is_escaped():
    bundle = realistic()
    bundle["copies"][0]["builder"] = "b\u202e9\u200b"
    assert errors_of(bundle) == ['copies[0].builder: unknown builder "b\\u202e9\\u200b"']
    bundle["copies"][0]["builder"] = "x" * 500
    assert errors_of(bundle) == [f'copies[0].builder: unknown builder "{"x" * 80}…"']


def test_many_errors_are_all_reported_in_document_order():
    bundle = realistic()
    bundle["findings"][0]["raised_by"] = ["r5"]
    bundle["copies"][2]["content"] = "\x00"
    bundle["copies"][2]["truth"] = "maybe"
    bundle["copies"][0]["builder"] = "b9"
    bundle["builders"][1]["id"] = "b1"
    bundle["reviews"][0]["verdict"] = "ok"
    bundle["extra"] = True
    assert errors_of(bundle) == [
        'bundle: unknown field "extra"',
        'builders[1].id: duplicate id "b1" (first at builders[0])',
        'copies[0].builder: unknown builder "b9"',
        'copies[1].builder: unknown builder "b2"',
        "copies[2].content: contains a NUL byte at character 0",
        'copies[2].truth: "maybe" is not one of known_good, seeded_defect, tests_fail, '
        "tests_pass, unknown",
        'copies[4].builder: unknown builder "b2"',
        'reviews[0].verdict: "ok" is not one of fail, pass',
        'findings[0].raised_by[0]: unknown reviewer "r5"',
    ]


# --- seal check ------------------------------------------------------------------------------

def test_seal_sealed_with_exact_keys_and_right_hash():
    text, digest = sealed_request()
    assert check_seal(text, digest, DEFAULT_REQUEST_KEYS) == SealResult("sealed", "")
    assert check_seal(text, digest.upper(), DEFAULT_REQUEST_KEYS).outcome == "sealed"


@pytest.mark.parametrize(
    ("text", "digest", "reason"),
    [
        (*sealed_request(prior_verdict="fail"), "unexpected keys: prior_verdict"),
        (request(candidate_text="x", reviewer_profile="p"), None, "missing keys: evidence_refs"),
        (sealed_request()[0], "0" * 64, "request_sha256 does not match the request bytes"),
        (sealed_request()[0], None, "no request_sha256 given"),
        ("not json", sha("not json"), "request is not valid JSON"),
        ('{"a": NaN}', sha('{"a": NaN}'), "request is not valid JSON"),
        ('["candidate_text"]', sha('["candidate_text"]'), "request is not a JSON object"),
        ("", sha(""), "request is not valid JSON"),
    ],
)
def test_seal_failed_reasons(text, digest, reason):
    if reason == "missing keys: evidence_refs":
        digest = sha(text)
    result = check_seal(text, digest, DEFAULT_REQUEST_KEYS)
    assert (result.outcome, result.reason) == ("failed", reason)
    # only the prior_verdict field carries a verdict (content/content_verdicts.py)
    assert (result.content_verdict, result.content_verdict_pattern) == (
        ("prior_verdict: fail", "prior_verdict") if "prior_verdict" in text else ("", ""))


def test_seal_failed_lists_every_problem():
    text = request(candidate_text="x", reviewer_profile="p", prior_verdict="fail")
    assert check_seal(text, None, DEFAULT_REQUEST_KEYS) == SealResult(
        "failed",
        "unexpected keys: prior_verdict; missing keys: evidence_refs; no request_sha256 given",
        "prior_verdict: fail", "prior_verdict",
    )


def test_seal_refuses_duplicate_keys_and_hash_of_other_bytes():
    text = '{"candidate_text": 1, "reviewer_profile": 2, "evidence_refs": 3, "candidate_text": 4}'
    assert check_seal(text, sha(text), DEFAULT_REQUEST_KEYS) == SealResult(
        "failed", "duplicate keys: candidate_text"
    )
    # Same object, other bytes: the hash covers the bytes as sent, not a re-serialisation.
    text, _ = sealed_request()
    respaced = json.dumps(json.loads(text), indent=2)
    assert check_seal(respaced, sha(text), DEFAULT_REQUEST_KEYS).reason == (
        "request_sha256 does not match the request bytes"
    )


def test_seal_absent_without_request():
    assert check_seal(None, None, DEFAULT_REQUEST_KEYS) == SealResult("absent", "")
    assert check_seal(None, "0" * 64, DEFAULT_REQUEST_KEYS) == SealResult("absent", "")


def test_custom_request_keys_are_honoured():
    text = request(prompt="p", evidence="e")
    assert check_seal(text, sha(text), ["prompt", "evidence"]).outcome == "sealed"
    assert check_seal(text, sha(text), DEFAULT_REQUEST_KEYS).reason == (
        "unexpected keys: evidence, prompt; "
        "missing keys: candidate_text, reviewer_profile, evidence_refs"
    )
    bundle = realistic()
    bundle["request_keys"] = ["prompt", "evidence"]
    bundle["reviews"][0]["request"] = text
    bundle["reviews"][0]["request_sha256"] = sha(text)
    result = validate_bundle(encode(bundle), **LIMITS)
    assert result.request_keys == ["prompt", "evidence"]
    assert result.seals[0] == SealResult("sealed", "")
    assert result.seals[2].reason == (
        "unexpected keys: candidate_text, evidence_refs, reviewer_profile; "
        "missing keys: prompt, evidence"
    )


def test_a_failed_seal_never_rejects_the_bundle():
    bundle = realistic()
    for review in bundle["reviews"]:
        review["request"] = "{"
        review["request_sha256"] = "f" * 64
    result = validate_bundle(encode(bundle), **LIMITS)
    assert {s.outcome for s in result.seals} == {"failed"}


# --- manifest --------------------------------------------------------------------------------

def test_manifest_is_stable_for_the_same_bundle():
    raw = encode(realistic())
    first = validate_bundle(raw, **LIMITS)
    assert validate_bundle(raw, **LIMITS).manifest_sha256 == first.manifest_sha256
    # Other bytes for the same data: only the raw-bytes hash moves.
    other = validate_bundle(json.dumps(realistic()).encode(), **LIMITS)
    assert other.manifest["bundle_sha256"] != first.manifest["bundle_sha256"]
    assert {k: v for k, v in other.manifest.items() if k != "bundle_sha256"} == {
        k: v for k, v in first.manifest.items() if k != "bundle_sha256"
    }
    assert build_manifest(first.original, first.raw_sha256) == first.manifest


def test_manifest_changes_when_any_copy_content_changes():
    base = realistic()
    reference = validate_bundle(encode(base), **LIMITS)
    for i, item in enumerate(base["copies"]):
        changed = copylib.deepcopy(base)
        changed["copies"][i]["content"] = item["content"] + " "
        manifest = build_manifest(changed, reference.raw_sha256)  # same bundle hash on purpose
        assert manifest["copies"][item["id"]] != reference.manifest["copies"][item["id"]]
        assert canonical_sha256(manifest) != reference.manifest_sha256
        others = {k: v for k, v in manifest["copies"].items() if k != item["id"]}
        assert others == {
            k: v for k, v in reference.manifest["copies"].items() if k != item["id"]
        }


# --- fuzzing: nothing but BundleError or a ValidatedBundle, whatever the bytes -----------------

FUZZ = settings(
    max_examples=200, deadline=None, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

any_text = st.text(st.characters(codec=None, categories=None), max_size=12)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | any_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(any_text, inner, max_size=4),
    max_leaves=20,
)


def check_outcome(raw: bytes, max_copy_bytes: int = 10_000) -> None:
    try:
        result = validate_bundle(raw, max_bundle_bytes=50_000, max_copy_bytes=max_copy_bytes)
    except BundleError as exc:
        assert exc.errors
        for message in exc.errors:
            assert isinstance(message, str)
            message.encode("utf-8")  # printable: no lone surrogates leak into messages
            assert ": " in message
        return
    assert len(result.seals) == len(result.data.get("reviews") or [])
    assert result.manifest_sha256 == canonical_sha256(result.manifest)


@FUZZ
@given(st.binary(max_size=3000))
def test_fuzz_arbitrary_bytes(raw):
    check_outcome(raw)


@FUZZ
@given(json_values, st.booleans())
def test_fuzz_arbitrary_json(value, ascii_only):
    text = json.dumps(value, ensure_ascii=ascii_only)
    check_outcome(text.encode("utf-8", "surrogatepass"))


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _paths(item, (*prefix, i))


BASE = realistic()
BASE_PATHS = [p for p in _paths(BASE) if p]
ids = st.sampled_from(["b1", "b2", "b9", "c1", "c2", "c9", "r1", "r2", "f1", "", "a/b"])


@FUZZ
@given(
    st.lists(
        st.tuples(st.sampled_from(BASE_PATHS), st.sampled_from(["set", "delete", "dup"]),
                  json_values | ids),
        min_size=1, max_size=4,
    ),
    st.just(10_000) | st.integers(min_value=0, max_value=100),
)
def test_fuzz_mutated_bundles(mutations, max_copy_bytes):
    bundle = copylib.deepcopy(BASE)
    for path, action, value in mutations:
        parent = bundle
        try:
            for part in path[:-1]:
                parent = parent[part]
            last = path[-1]
            parent[last]  # noqa: B018 - the path may be gone after an earlier mutation
        except (KeyError, IndexError, TypeError):
            continue
        if not isinstance(parent, dict | list):  # a string indexes too, but cannot be mutated
            continue
        if action == "set":
            parent[last] = value
        elif action == "delete":
            del parent[last]
        elif isinstance(parent, list):
            parent.append(copylib.deepcopy(parent[last]))
    raw = json.dumps(bundle, ensure_ascii=True).encode("ascii")
    check_outcome(raw, max_copy_bytes=max_copy_bytes)
