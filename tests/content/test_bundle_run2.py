"""Run bundles of format blindjudge.run/2 (content/bundle.py), the null rule in both formats, and
the one normalised shape the importer reads. Pure, no database."""

import copy as copylib
import hashlib
import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

import content.bundle as bundle_module
from content.bundle import (
    FORMAT_1,
    FORMAT_2,
    BundleError,
    SealResult,
    build_manifest,
    schema,
    validate_bundle,
)
from content.canonical import canonical_sha256
from content.limits import TextLimits

# No database, no socket, no process: run once (tests/support/pure.py).
pytestmark = pytest.mark.pure

ROOT = Path(__file__).resolve().parents[2]
LIMITS = {"max_bundle_bytes": 1_000_000, "max_copy_bytes": 10_000}


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def encode(bundle) -> bytes:
    return json.dumps(bundle, ensure_ascii=False, indent=1).encode("utf-8")


def valid(bundle, **limits):
    return validate_bundle(encode(bundle), **{**LIMITS, **limits})


def errors_of(bundle, **limits) -> list[str]:
    raw = bundle if isinstance(bundle, bytes) else encode(bundle)
    with pytest.raises(BundleError) as info:
        validate_bundle(raw, **{**LIMITS, **limits})
    return info.value.errors


def run2() -> dict:
    """Two tasks, two builders, two reviewers; r1 reviewed c1 under two conditions."""
    sealed = json.dumps({"candidate_text": "…", "reviewer_profile": "p", "evidence_refs": []})
    return {
        "format": "blindjudge.run/2",
        "run": {"name": "matrix", "default_condition": "clean", "abstain_scoring": "excluded"},
        "tasks": [
            {"id": "t1", "statement": "Fix *the* parser.", "title": "Parser", "cluster": "repo-a"},
            {"id": "t2", "statement": "Add a flag.", "format": "text"},
        ],
        "builders": [{"id": "b1", "model": "gpt-4o-2024-08-06", "family": "OpenAI"},
                     {"id": "b2", "model": "claude-3-5-sonnet-20241022", "family": "Anthropic"}],
        "copies": [
            {"id": "c1", "task": "t1", "builder": "b1", "format": "diff", "content": "+a\n",
             "truth": "tests_pass"},
            {"id": "c2", "task": "t1", "builder": "b2", "format": "diff", "content": "+b\n",
             "truth": "tests_fail", "defect": "wrong branch", "cluster": "own"},
            {"id": "c3", "task": "t2", "builder": "b1", "format": "text", "content": "flag",
             "truth": "unknown"},
        ],
        "reviewers": [{"id": "r1", "model": "qwen3-1.7b", "family": "Alibaba"},
                      {"id": "r2", "model": "llama-3.1-8b", "family": "Meta"}],
        "reviews": [
            {"reviewer": "r1", "copy": "c1", "verdict": "pass", "request": sealed,
             "request_sha256": sha(sealed)},
            {"reviewer": "r1", "copy": "c1", "condition": "told_fail", "verdict": "fail",
             "reason": "told so"},
            {"reviewer": "r2", "copy": "c2", "condition": "clean", "verdict": "abstain",
             "authorship_guess": "gpt-4o"},
        ],
        "findings": [
            {"id": "f1", "copy": "c1", "text": "Off by one.",
             "raised_by": ["r1", {"reviewer": "r1", "condition": "told_fail"}],
             "proposed_verdict": "confirmed", "truth": "real"},
            {"id": "f2", "copy": "c2", "text": "Slow.", "raised_by": [{"reviewer": "r2"}],
             "proposed_verdict": "refuted", "truth": "false_alarm"},
        ],
    }


def run1() -> dict:
    return {
        "format": "blindjudge.run/1",
        "run": {"name": "tiny", "task": "Write a function."},
        "builders": [{"id": "b1", "model": "m", "family": "F"}],
        "copies": [{"id": "c1", "builder": "b1", "format": "text", "content": "x",
                    "truth": "seeded_defect", "defect": "bug", "cluster": "g"}],
        "reviewers": [{"id": "r1", "model": "m2", "family": "F2"},
                      {"id": "r2", "model": "m3", "family": "F3"}],
        "reviews": [{"reviewer": "r1", "copy": "c1", "verdict": "fail", "reason": "bug"}],
        "findings": [{"id": "f1", "copy": "c1", "text": "t", "raised_by": ["r1", "r2"],
                      "proposed_verdict": "confirmed", "truth": "real"}],
    }


# --- the normalised shape ----------------------------------------------------------------------

def test_run2_bundle_is_normalised_with_every_default_filled():
    bundle = run2()
    result = valid(bundle)
    assert result.format == FORMAT_2
    assert result.original == bundle
    assert result.data == {
        "format": "blindjudge.run/2",
        "run": {"name": "matrix", "default_condition": "clean", "abstain_scoring": "excluded"},
        "tasks": [
            {"id": "t1", "statement": "Fix *the* parser.", "format": "markdown",
             "title": "Parser", "cluster": "repo-a"},
            {"id": "t2", "statement": "Add a flag.", "format": "text", "title": "",
             "cluster": ""},
        ],
        "builders": bundle["builders"],
        "copies": [
            {**bundle["copies"][0], "defect": "", "cluster": "repo-a"},  # the task's cluster
            bundle["copies"][1],  # its own cluster wins
            {**bundle["copies"][2], "defect": "", "cluster": ""},  # a task without a cluster
        ],
        "reviewers": bundle["reviewers"],
        "request_keys": ["candidate_text", "reviewer_profile", "evidence_refs"],
        "verdict_patterns": [],
        "reviews": [
            {**bundle["reviews"][0], "condition": "clean", "reason": "",
             "authorship_guess": ""},
            {**bundle["reviews"][1], "authorship_guess": ""},
            {**bundle["reviews"][2], "reason": ""},
        ],
        "comparisons": [],
        "findings": [
            {**bundle["findings"][0], "raised_by": [
                {"reviewer": "r1", "condition": "clean"},
                {"reviewer": "r1", "condition": "told_fail"}]},
            {**bundle["findings"][1], "raised_by": [{"reviewer": "r2", "condition": "clean"}]},
        ],
    }
    assert result.seals == [SealResult("sealed", ""), SealResult("absent", ""),
                            SealResult("absent", "")]


def test_run_defaults_and_a_default_condition_of_the_bundles_own():
    bundle = run2()
    bundle["run"] = {"name": "matrix", "default_condition": "fresh"}
    bundle["reviews"][0]["condition"] = "fresh"
    bundle["reviews"][2]["condition"] = "fresh"
    data = valid(bundle).data
    assert data["run"] == {"name": "matrix", "default_condition": "fresh",
                           "abstain_scoring": "not_flagged"}
    assert [r["condition"] for r in data["reviews"]] == ["fresh", "told_fail", "fresh"]
    assert data["findings"][0]["raised_by"][0] == {"reviewer": "r1", "condition": "fresh"}


def test_run1_becomes_a_run_of_one_task_in_the_same_shape():
    bundle = run1()
    result = valid(bundle)
    assert result.format == FORMAT_1
    assert result.data == {
        "format": "blindjudge.run/1",
        "run": {"name": "tiny", "default_condition": "clean", "abstain_scoring": "not_flagged"},
        "tasks": [{"id": "task", "statement": "Write a function.", "format": "markdown",
                   "title": "", "cluster": ""}],
        "builders": bundle["builders"],
        "copies": [{**bundle["copies"][0], "task": "task"}],
        "reviewers": bundle["reviewers"],
        "request_keys": ["candidate_text", "reviewer_profile", "evidence_refs"],
        "verdict_patterns": [],
        "reviews": [{**bundle["reviews"][0], "condition": "clean", "authorship_guess": ""}],
        "comparisons": [],
        "findings": [{**bundle["findings"][0], "raised_by": [
            {"reviewer": "r1", "condition": "clean"}, {"reviewer": "r2", "condition": "clean"}]}],
    }


def test_the_normalised_data_is_new_and_the_original_is_left_as_it_appeared():
    bundle = run2()
    result = valid(bundle)
    result.data["copies"][0]["content"] = "changed"
    assert result.original["copies"][0] == bundle["copies"][0]
    assert build_manifest(result.original, result.raw_sha256) == result.manifest


# --- null means absent, everywhere -------------------------------------------------------------

RUN2_OPTIONAL = {
    ("run", "default_condition"), ("run", "abstain_scoring"),
    ("tasks", 0, "format"), ("tasks", 0, "title"), ("tasks", 0, "cluster"),
    ("copies", 0, "defect"), ("copies", 0, "cluster"),
    ("reviews", 0, "condition"), ("reviews", 0, "reason"), ("reviews", 0, "authorship_guess"),
    ("reviews", 0, "request"), ("reviews", 0, "request_sha256"),
}
RUN1_OPTIONAL = {
    ("copies", 0, "defect"), ("copies", 0, "cluster"),
    ("reviews", 0, "authorship_guess"), ("reviews", 0, "request"),
    ("reviews", 0, "request_sha256"),
}


def set_at(bundle, path, value):
    target = bundle
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value


def drop_at(bundle, path):
    target = bundle
    for part in path[:-1]:
        target = target[part]
    target.pop(path[-1], None)


@pytest.mark.parametrize(("make", "optional"), [(run2, RUN2_OPTIONAL), (run1, RUN1_OPTIONAL)])
def test_a_null_in_every_optional_field_means_absent(make, optional):
    """Issue 13: "defect": null, "cluster": null, "authorship_guess": null passed validation and
    then failed the import on NOT NULL columns."""
    nulls, absent = make(), make()
    for path in optional:
        set_at(nulls, path, None)
        drop_at(absent, path)
    # raised_by[0] of run/2's f1 names r1's review under the default condition either way.
    with_nulls, without = valid(nulls), valid(absent)
    assert with_nulls.data == without.data
    assert all(value is not None for record in with_nulls.data["copies"] + with_nulls.data[
        "reviews"] for value in record.values())
    assert with_nulls.seals == without.seals
    # The manifest hashes each object as it appeared: a null is part of what the host was given.
    assert with_nulls.manifest["reviews"] != without.manifest["reviews"]
    assert with_nulls.original == nulls


def test_a_null_in_the_first_run2_copy_takes_the_defaults():
    bundle = run2()
    bundle["copies"][0].update(defect=None, cluster=None)
    bundle["reviews"][2].update(reason=None, authorship_guess=None, condition=None)
    bundle["tasks"][0].update(title=None, format=None)
    data = valid(bundle).data
    assert data["copies"][0] == {"id": "c1", "task": "t1", "builder": "b1", "format": "diff",
                                 "content": "+a\n", "truth": "tests_pass", "defect": "",
                                 "cluster": "repo-a"}
    assert data["reviews"][2] == {"reviewer": "r2", "copy": "c2", "verdict": "abstain",
                                  "condition": "clean", "reason": "", "authorship_guess": ""}
    assert data["tasks"][0] == {"id": "t1", "statement": "Fix *the* parser.",
                                "format": "markdown", "title": "", "cluster": "repo-a"}


@pytest.mark.parametrize("make", [run1, run2])
def test_null_top_level_lists_mean_absent(make):
    bundle = make()
    bundle.update(reviewers=None, reviews=None, findings=None, request_keys=None)
    result = valid(bundle)
    assert result.data["reviewers"] == result.data["reviews"] == result.data["findings"] == []
    assert result.request_keys == ["candidate_text", "reviewer_profile", "evidence_refs"]
    assert result.seals == []
    assert {k: result.manifest[k] for k in ("reviewers", "reviews", "findings")} == {
        "reviewers": {}, "reviews": {}, "findings": {}}


def test_a_null_raised_by_condition_is_the_default_condition():
    bundle = run2()
    bundle["findings"][1]["raised_by"] = [{"reviewer": "r2", "condition": None}]
    assert valid(bundle).data["findings"][1]["raised_by"] == [
        {"reviewer": "r2", "condition": "clean"}]


def test_a_null_in_a_required_field_is_an_error_naming_its_place():
    bundle = run2()
    bundle["run"]["name"] = None
    bundle["tasks"][0]["statement"] = None
    bundle["copies"][0]["task"] = None
    bundle["copies"][1]["content"] = None
    bundle["reviews"][0]["verdict"] = None
    bundle["findings"][0]["raised_by"] = None
    assert errors_of(bundle) == [
        "run.name: expected a string, got null",
        "tasks[0].statement: expected a string, got null",
        "copies[0].task: expected a string, got null",
        "copies[1].content: expected a string, got null",
        "reviews[0].verdict: null is not one of abstain, fail, pass",
        "findings[0].raised_by: expected an array, got null",
    ]
    bundle = run1()
    bundle["reviews"][0]["reason"] = None
    bundle["run"]["task"] = None
    assert errors_of(bundle) == [
        "run.task: expected a string, got null",
        "reviews[0].reason: expected a string, got null",
    ]
    bundle = run2()
    bundle["tasks"] = None
    assert errors_of(bundle) == ["tasks: expected an array, got null"]


# --- format ------------------------------------------------------------------------------------

def test_each_format_keeps_its_own_fields():
    bundle = run1()
    bundle["reviews"][0]["condition"] = "clean"
    bundle["reviews"][0]["verdict"] = "abstain"
    bundle["tasks"] = []
    assert errors_of(bundle) == [
        'bundle: unknown field "tasks"',
        'reviews[0]: unknown field "condition"',
        'reviews[0].verdict: "abstain" is not one of fail, pass',
    ]
    bundle = run2()
    bundle["run"]["task"] = "t"
    del bundle["copies"][0]["task"]
    assert errors_of(bundle) == [
        'run: unknown field "task"',
        'copies[0]: missing required field "task"',
    ]


def test_a_bundle_without_a_format_is_checked_as_the_format_its_keys_suggest():
    bundle = run2()
    del bundle["format"]
    assert errors_of(bundle) == ['bundle: missing required field "format"']
    bundle = run1()
    del bundle["format"]
    assert errors_of(bundle) == ['bundle: missing required field "format"']


def test_enums_with_null_offer_only_their_values():
    bundle = run2()
    bundle["run"]["abstain_scoring"] = "ignore"
    bundle["tasks"][0]["format"] = "html"
    assert errors_of(bundle) == [
        'run.abstain_scoring: "ignore" is not one of excluded, not_flagged',
        'tasks[0].format: "html" is not one of markdown, text',
    ]


def test_required_fields_of_run2():
    bundle = run2()
    del bundle["tasks"]
    bundle["reviews"][0] = {"copy": "c1"}  # f1's raised_by cannot be checked: no cascade
    assert errors_of(bundle) == [
        'bundle: missing required field "tasks"',
        'reviews[0]: missing required field "reviewer"',
        'reviews[0]: missing required field "verdict"',
    ]
    assert errors_of({**run2(), "tasks": []}) == [
        "tasks: must not be empty",
        'copies[0].task: unknown task "t1"',
        'copies[1].task: unknown task "t1"',
        'copies[2].task: unknown task "t2"',
    ]


# --- ids and references ------------------------------------------------------------------------

def test_ids_are_unique_in_every_collection_of_run2():
    bundle = run2()
    bundle["tasks"].append({"id": "t1", "statement": "again"})
    bundle["builders"].append({**bundle["builders"][0]})
    bundle["copies"].append({**bundle["copies"][2]})
    bundle["reviewers"].append({**bundle["reviewers"][1]})
    bundle["findings"].append({**bundle["findings"][1]})
    assert errors_of(bundle) == [
        'tasks[2].id: duplicate id "t1" (first at tasks[0])',
        'builders[2].id: duplicate id "b1" (first at builders[0])',
        'copies[3].id: duplicate id "c3" (first at copies[2])',
        'reviewers[2].id: duplicate id "r2" (first at reviewers[1])',
        'findings[2].id: duplicate id "f2" (first at findings[1])',
    ]


def test_every_reference_of_run2_names_a_record():
    bundle = run2()
    bundle["copies"][0]["task"] = "t9"
    bundle["copies"][1]["builder"] = "b9"
    bundle["reviews"][1]["reviewer"] = "r9"
    bundle["reviews"][2]["copy"] = "c9"
    bundle["findings"][0]["copy"] = "c8"
    bundle["findings"][1]["raised_by"] = ["r7", {"reviewer": "r8", "condition": "x"}]
    assert errors_of(bundle) == [
        'copies[0].task: unknown task "t9"',
        'copies[1].builder: unknown builder "b9"',
        'reviews[1].reviewer: unknown reviewer "r9"',
        'reviews[2].copy: unknown copy "c9"',
        'findings[0].copy: unknown copy "c8"',
        'findings[1].raised_by[0]: unknown reviewer "r7"',
        'findings[1].raised_by[1].reviewer: unknown reviewer "r8"',
    ]


def test_a_raised_by_entry_must_name_a_review_of_that_copy_under_that_condition():
    bundle = run2()
    bundle["findings"][0]["raised_by"] = [
        {"reviewer": "r1", "condition": "told_pass"},  # r1 reviewed c1, but not under told_pass
        "r2",  # r2 never reviewed c1
    ]
    bundle["findings"][1]["raised_by"] = [{"reviewer": "r2", "condition": "told_fail"}]
    assert errors_of(bundle) == [
        'findings[0].raised_by[0]: reviewer "r1" has no review of copy "c1" under condition '
        '"told_pass" (its reviews of that copy are under "clean", "told_fail"); a finding is '
        "raised in a review",
        'findings[0].raised_by[1]: reviewer "r2" has no review of copy "c1" under condition '
        '"clean" (it has no review of that copy at all); a finding is raised in a review',
        'findings[1].raised_by[0]: reviewer "r2" has no review of copy "c2" under condition '
        '"told_fail" (its reviews of that copy are under "clean"); a finding is raised in a '
        "review",
    ]


def test_a_bare_raised_by_id_means_the_default_condition_and_says_so():
    bundle = run2()
    del bundle["reviews"][0]  # r1's clean review of c1; its told_fail one stays
    del bundle["findings"][0]["raised_by"][1]
    assert errors_of(bundle) == [
        'findings[0].raised_by[0]: reviewer "r1" has no review of copy "c1" under condition '
        '"clean" (its reviews of that copy are under "told_fail"; a bare reviewer id means '
        'run.default_condition "clean"); a finding is raised in a review',
    ]


def test_run1_keeps_accepting_a_raised_by_reviewer_without_a_review():
    """run/1 never required it; bundles written that way stay valid (r2 reviewed nothing)."""
    assert valid(run1()).data["findings"][0]["raised_by"][1] == {
        "reviewer": "r2", "condition": "clean"}


def test_no_raised_by_cascade_when_the_reviews_cannot_be_read():
    bundle = run2()
    bundle["reviews"] = {}
    assert errors_of(bundle) == ["reviews: expected an array or null, got an object"]


def test_two_raised_by_entries_naming_one_review_are_refused():
    bundle = run2()
    bundle["findings"][0]["raised_by"] = [
        "r1", {"reviewer": "r1"}, {"reviewer": "r1", "condition": "clean"},
        {"reviewer": "r1", "condition": "told_fail"}, {"reviewer": "r1", "condition": "told_fail"},
    ]
    assert errors_of(bundle) == [
        "findings[0].raised_by: must not repeat an item",
        'findings[0].raised_by[1]: names the same review as raised_by[0] (reviewer "r1" under '
        'condition "clean")',
        'findings[0].raised_by[2]: names the same review as raised_by[0] (reviewer "r1" under '
        'condition "clean")',
    ]


def test_reviews_are_unique_per_reviewer_copy_and_effective_condition():
    bundle = run2()
    bundle["reviews"].append({"reviewer": "r1", "copy": "c1", "condition": "clean",
                              "verdict": "fail"})  # the same as reviews[0], which names none
    bundle["reviews"].append({"reviewer": "r1", "copy": "c1", "condition": "told_fail",
                              "verdict": "pass"})
    bundle["reviews"].append({"reviewer": "r2", "copy": "c2", "verdict": "pass"})
    assert errors_of(bundle) == [
        'reviews[3]: reviewer "r1" already reviewed copy "c1" under condition "clean" at '
        "reviews[0]",
        'reviews[4]: reviewer "r1" already reviewed copy "c1" under condition "told_fail" at '
        "reviews[1]",
        'reviews[5]: reviewer "r2" already reviewed copy "c2" under condition "clean" at '
        "reviews[2]",
    ]
    # Under the bundle's own default, "clean" is just another condition.
    bundle = run2()
    bundle["run"]["default_condition"] = "fresh"
    bundle["reviews"][2]["condition"] = "fresh"
    bundle["findings"][1]["raised_by"] = ["r2"]
    bundle["findings"][0]["raised_by"] = [{"reviewer": "r1", "condition": "told_fail"}]
    bundle["reviews"].append({"reviewer": "r1", "copy": "c3", "verdict": "pass"})
    assert [r["condition"] for r in valid(bundle).data["reviews"]] == [
        "fresh", "told_fail", "fresh", "fresh"]


def test_ids_that_would_collide_in_the_run2_manifest_are_refused():
    bundle = run2()
    bundle["copies"].append({**bundle["copies"][0], "id": "x/c1"})
    bundle["reviewers"] = [{"id": "r", "model": "m", "family": "f"},
                           {"id": "r/x", "model": "m", "family": "f"}]
    bundle["reviews"] = [
        {"reviewer": "r/x", "copy": "c1", "verdict": "pass"},
        {"reviewer": "r", "copy": "x/c1", "verdict": "pass", "condition": "clean"},
    ]
    bundle["findings"] = []
    assert errors_of(bundle) == [
        'reviews[1]: reviewer "r", copy "x/c1" and condition "clean" give the manifest key '
        '"r/x/c1/clean", already used by reviews[0]; rename an id'
    ]


# --- readable schema messages ------------------------------------------------------------------

def test_raised_by_entries_of_either_form_get_readable_messages():
    bundle = run2()
    bundle["findings"][0]["raised_by"] = [
        5, None, "", {}, {"reviewer": ""}, {"reviewer": "r1", "condition": "told_fail", "x": 1},
        {"reviewer": ["r1"]}, [],
    ]
    assert errors_of(bundle) == [
        'findings[0].raised_by[0]: expected a reviewer id or an object {"reviewer", '
        '"condition"}, got number 5',
        'findings[0].raised_by[1]: expected a reviewer id or an object {"reviewer", '
        '"condition"}, got null',
        "findings[0].raised_by[2]: must not be empty",
        'findings[0].raised_by[3]: missing required field "reviewer"',
        "findings[0].raised_by[4].reviewer: must not be empty",
        'findings[0].raised_by[5]: unknown field "x"',
        "findings[0].raised_by[6].reviewer: expected a string, got an array",
        'findings[0].raised_by[7]: expected a reviewer id or an object {"reviewer", '
        '"condition"}, got an array',
    ]


LABEL_WORDING = "is not a label: letters, digits and _ . : - only, starting with a letter or a digit"


def test_labels_get_readable_messages_and_nothing_else_about_them():
    bundle = run2()
    bundle["run"]["default_condition"] = "the clean one"
    bundle["reviews"][1]["condition"] = "-told"
    bundle["reviews"][2]["condition"] = "c" * 101
    bundle["findings"][0]["raised_by"][1]["condition"] = "told fail"
    bundle["findings"][1]["raised_by"] = [{"reviewer": "r2", "condition": ""}]
    assert errors_of(bundle) == [
        f'run.default_condition: "the clean one" {LABEL_WORDING}',
        f'reviews[1].condition: "-told" {LABEL_WORDING}',
        "reviews[2].condition: 101 characters exceeds the limit of 100 characters",
        f'findings[0].raised_by[1].condition: "told fail" {LABEL_WORDING}',
        "findings[1].raised_by[0].condition: must not be empty",
    ]
    bundle = run2()
    bundle["reviews"][1]["condition"] = "c" * 100
    bundle["findings"][0]["raised_by"][1]["condition"] = "c" * 100
    assert valid(bundle)


def test_a_final_newline_does_not_pass_a_pattern():
    """Python's $ matches before a final newline; JSON Schema's (ECMA-262) does not."""
    bundle = run2()
    bundle["reviews"][1]["condition"] = "told_fail\n"
    bundle["findings"][0]["raised_by"] = ["r1"]
    assert errors_of(bundle) == [f'reviews[1].condition: "told_fail\\u000a" {LABEL_WORDING}']
    bundle = run1()
    bundle["reviews"][0]["request_sha256"] = "a" * 64 + "\n"
    assert errors_of(bundle) == [
        'reviews[0].request_sha256: "' + "a" * 64 + '\\u000a" is not a 64-character '
        "hexadecimal SHA-256"]


# --- limits ------------------------------------------------------------------------------------

SMALL = TextLimits(name_chars=30, id_chars=12, task_chars=30, finding_chars=30,
                   review_reason_chars=10, note_chars=30, request_bytes=200)


def test_every_run2_text_has_its_limit():
    bundle = run2()
    bundle["tasks"][0]["statement"] = "s" * 31
    bundle["tasks"][0]["title"] = "t" * 31
    bundle["tasks"][0]["cluster"] = "c" * 13
    bundle["tasks"][1]["id"] = "i" * 13
    bundle["copies"][2]["task"] = "i" * 13
    bundle["run"]["default_condition"] = "d" * 13
    bundle["reviews"][0]["condition"] = "d" * 13
    bundle["reviews"][2]["condition"] = "d" * 13
    bundle["reviews"][1]["condition"] = "e" * 13
    bundle["findings"][0]["raised_by"][1]["condition"] = "e" * 13
    bundle["run"]["name"] = "n" * 31
    assert errors_of(bundle, limits=SMALL) == [
        "run.default_condition: 13 characters exceeds the limit of 12 characters",
        "run.name: 31 characters exceeds the limit of 30 characters",
        "tasks[0].cluster: 13 characters exceeds the limit of 12 characters",
        "tasks[0].statement: 31 characters exceeds the limit of 30 characters",
        "tasks[0].title: 31 characters exceeds the limit of 30 characters",
        "tasks[1].id: 13 characters exceeds the limit of 12 characters",
        "reviews[0].condition: 13 characters exceeds the limit of 12 characters",
        "reviews[1].condition: 13 characters exceeds the limit of 12 characters",
        "reviews[2].condition: 13 characters exceeds the limit of 12 characters",
    ]
    at_limits = TextLimits(name_chars=31, id_chars=13, task_chars=31, finding_chars=30,
                           review_reason_chars=10, note_chars=30, request_bytes=200)
    assert valid(bundle, limits=at_limits)


def test_a_label_past_the_schemas_bound_is_reported_once():
    bundle = run2()
    bundle["reviews"][1]["condition"] = "c" * 150
    bundle["findings"][0]["raised_by"] = ["r1"]
    assert errors_of(bundle, limits=SMALL) == [
        "reviews[1].condition: 150 characters exceeds the limit of 100 characters"]


def test_a_run2_copy_is_held_to_the_per_copy_limit():
    bundle = run2()
    bundle["copies"][1]["content"] = "é" * 6
    assert errors_of(bundle, max_copy_bytes=11) == [
        "copies[1].content: 12 bytes exceeds the per-copy limit of 11 bytes"]


def test_the_error_cap_holds_for_run2():
    bundle = run2()
    bundle["copies"] = [{"id": f"c{i}", "task": "t9", "builder": "b1", "format": "text",
                         "content": "x", "truth": "unknown"} for i in range(500)]
    bundle["reviews"] = bundle["findings"] = []
    with pytest.raises(BundleError) as info:
        valid(bundle)
    assert len(info.value.errors) == 100 and info.value.more == 400
    assert info.value.errors[0] == 'copies[0].task: unknown task "t9"'


# --- manifest ----------------------------------------------------------------------------------

def test_run2_manifest_shape():
    bundle = run2()
    raw = encode(bundle)
    result = validate_bundle(raw, **LIMITS)
    assert result.manifest == {
        "format": "blindjudge.run/2",
        "canonical": "jcs-rfc8785",
        "bundle_sha256": hashlib.sha256(raw).hexdigest(),
        "run": canonical_sha256(bundle["run"]),
        "tasks": {t["id"]: canonical_sha256(t) for t in bundle["tasks"]},
        "builders": {b["id"]: canonical_sha256(b) for b in bundle["builders"]},
        "copies": {"c1": sha("+a\n"), "c2": sha("+b\n"), "c3": sha("flag")},
        "bindings": {
            "c1": {"task": "t1", "builder": "b1"},
            "c2": {"task": "t1", "builder": "b2"},
            "c3": {"task": "t2", "builder": "b1"},
        },
        "reviewers": {r["id"]: canonical_sha256(r) for r in bundle["reviewers"]},
        "reviews": {
            "r1/c1/clean": canonical_sha256(bundle["reviews"][0]),
            "r1/c1/told_fail": canonical_sha256(bundle["reviews"][1]),
            "r2/c2/clean": canonical_sha256(bundle["reviews"][2]),
        },
        "findings": {f["id"]: canonical_sha256(f) for f in bundle["findings"]},
    }
    assert result.manifest_sha256 == canonical_sha256(result.manifest)


def test_run2_review_keys_use_the_bundles_default_condition():
    bundle = run2()
    bundle["run"]["default_condition"] = "fresh"
    bundle["reviews"][2]["condition"] = "fresh"
    bundle["findings"] = []
    assert list(valid(bundle).manifest["reviews"]) == [
        "r1/c1/fresh", "r1/c1/told_fail", "r2/c2/fresh"]


# --- the schema and the documentation ----------------------------------------------------------

def test_run2_schema_is_valid_draft_2020_12_and_shipped():
    Draft202012Validator.check_schema(schema(FORMAT_2))
    shipped = ROOT / "content" / "schemas" / "run-bundle-2.schema.json"
    assert json.loads(shipped.read_text("utf-8")) == schema(FORMAT_2)
    assert schema(FORMAT_1) == schema()
    with pytest.raises(ValueError, match="unknown bundle format"):
        schema("blindjudge.run/3")


def test_a_plain_schema_validator_agrees_on_the_null_rule():
    """Importers are written against the schema: what the product accepts, the schema does."""
    for make, fmt in ((run1, FORMAT_1), (run2, FORMAT_2)):
        bundle = make()
        bundle.update(reviewers=None, reviews=None, findings=None, request_keys=None)
        assert not list(Draft202012Validator(schema(fmt)).iter_errors(bundle))


DOC = ROOT / "docs" / "bundle-format.md"


def doc_examples() -> list[str]:
    return re.findall(r"```json\n(.*?)```", DOC.read_text("utf-8"), flags=re.DOTALL)


def test_every_example_in_the_format_document_validates():
    examples = doc_examples()
    assert len(examples) >= 2
    formats = set()
    for text in examples:
        result = validate_bundle(text.encode("utf-8"), **LIMITS)
        formats.add(result.format)
        Draft202012Validator(schema(result.format)).validate(json.loads(text))
    assert formats == {FORMAT_1, FORMAT_2}


def test_the_format_document_names_every_field_of_the_run2_schema():
    text = DOC.read_text("utf-8")
    published = schema(FORMAT_2)

    def fields(node, prefix=""):
        for name, sub in node.get("properties", {}).items():
            yield f"{prefix}{name}"
            sub = sub.get("items", sub)
            if "$ref" in sub:
                sub = published["$defs"][sub["$ref"].removeprefix("#/$defs/")]
            yield from fields(sub, f"{prefix}{name}.")

    missing = [f for f in fields(published) if f"`{f.rsplit('.', 1)[-1]}`" not in text]
    assert missing == []


# --- fuzzing: nothing but BundleError or a ValidatedBundle -------------------------------------

FUZZ = settings(
    max_examples=300, deadline=None, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
any_text = st.text(st.characters(codec=None, categories=None), max_size=8)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | any_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(any_text, inner, max_size=3),
    max_leaves=10,
)
words = st.sampled_from([
    "t1", "t2", "t9", "b1", "b9", "c1", "c2", "c9", "r1", "r2", "r9", "f1", "clean", "told_fail",
    "", "a/b", "bad label", "clean\n", {"reviewer": "r1"}, {"reviewer": "r2", "condition": "x"},
    {"reviewer": "r1", "condition": None}, "abstain", "excluded", "c" * 101, "c" * 100,
    "a" * 64 + "\n", "A" * 64, "known_good", "diff", "markdown", "pass", "c3", "first", "tie",
    "both_bad",
])


def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _paths(item, (*prefix, i))


def mutated(base: dict, mutations) -> dict:
    bundle = copylib.deepcopy(base)
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
        elif action == "null":
            parent[last] = None
        elif action == "delete":
            del parent[last]
        elif isinstance(parent, list):
            parent.append(copylib.deepcopy(parent[last]))
    return bundle


BASE = run2()
BASE["verdict_patterns"] = [{"name": "house_ok", "pattern": "house ok", "description": None}]
BASE["comparisons"] = [  # c1 and c2: task t1, builders b1 and b2; both orders
    {"reviewer": "r1", "first": "c1", "second": "c2", "verdict": "first", "request": "{}",
     "request_sha256": "0" * 64},
    {"reviewer": "r1", "first": "c2", "second": "c1", "condition": None, "verdict": "tie",
     "reason": None},
]
BASE_PATHS = [p for p in _paths(BASE) if p]
BASE1 = run1()
BASE1["reviews"][0].update(request="{}", request_sha256="0" * 64, authorship_guess=None)
BASE1["verdict_patterns"] = [{"name": "house_ok", "pattern": "house ok"}]
BASE1_PATHS = [p for p in _paths(BASE1) if p]


def mutations_of(paths):
    return st.lists(
        st.tuples(st.sampled_from(paths), st.sampled_from(["set", "delete", "dup", "null"]),
                  json_values | words),
        min_size=1, max_size=5,
    )


@FUZZ
@given(mutations_of(BASE_PATHS), st.just(10_000) | st.integers(min_value=0, max_value=20))
def test_fuzz_mutated_run2_bundles(mutations, max_copy_bytes):
    bundle = mutated(BASE, mutations)
    raw = json.dumps(bundle, ensure_ascii=True).encode("ascii")
    try:
        result = validate_bundle(raw, max_bundle_bytes=50_000, max_copy_bytes=max_copy_bytes)
    except BundleError as exc:
        assert exc.errors
        assert all(": " in message for message in exc.errors)
        return
    # What passes is importable: the normalised shape holds, with no null left in it.
    data = result.data
    assert len(result.seals) == len(data["reviews"])
    task_ids = {t["id"] for t in data["tasks"]}
    assert all(c["task"] in task_ids for c in data["copies"])
    keys = {(r["reviewer"], r["copy"], r["condition"]) for r in data["reviews"]}
    assert len(keys) == len(data["reviews"])
    for finding in data["findings"]:
        for entry in finding["raised_by"]:
            assert (entry["reviewer"], finding["copy"], entry["condition"]) in keys
    # Every comparison that passes is of two copies of one task by two builders, once per order.
    assert len(result.comparison_seals) == len(data["comparisons"])
    copy_of = {c["id"]: c for c in data["copies"]}
    reviewer_ids = {r["id"] for r in data["reviewers"]}
    for comparison in data["comparisons"]:
        first, second = copy_of[comparison["first"]], copy_of[comparison["second"]]
        assert comparison["reviewer"] in reviewer_ids
        assert first["task"] == second["task"] and first["builder"] != second["builder"]
    assert len({(c["reviewer"], c["first"], c["second"], c["condition"])
                for c in data["comparisons"]}) == len(data["comparisons"])
    assert "null" not in json.dumps(data)
    assert result.manifest == build_manifest(result.original, result.raw_sha256)


def schema_messages(data, fmt: str, *, fast: bool) -> list[str]:
    errors = bundle_module._Errors(10**6)
    if fast:
        bundle_module._schema_errors(data, fmt, errors)
    else:
        for error in bundle_module._validator(fmt).iter_errors(data):
            bundle_module._describe(error, errors)
    return errors.messages()


@FUZZ
@given(st.sampled_from([(BASE, BASE_PATHS, FORMAT_2), (BASE1, BASE1_PATHS, FORMAT_1)]).flatmap(
    lambda case: st.tuples(st.just(case[0]), mutations_of(case[1]), st.just(case[2]))))
def test_the_fast_path_says_exactly_what_the_whole_schema_says(case):
    """Flat records skip jsonschema when a predicate built from their schema accepts them; the
    messages must be the schema's, record for record (content/bundle.py, _flat_check)."""
    base, mutations, fmt = case
    data = mutated(base, mutations)
    assert schema_messages(data, fmt, fast=True) == schema_messages(data, fmt, fast=False)


def test_the_fast_path_covers_the_many_records_and_leaves_findings_to_the_schema():
    assert sorted(bundle_module._fast_plan(FORMAT_2)[1]) == [
        "builders", "comparisons", "copies", "reviewers", "reviews", "tasks", "verdict_patterns"]
    assert sorted(bundle_module._fast_plan(FORMAT_1)[1]) == [
        "builders", "copies", "reviewers", "reviews", "verdict_patterns"]
