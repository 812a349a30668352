"""Importing run/2 `comparisons` (issue 31 item 3): each is written as a Comparison row, in bundle
order, with the reviewer, the two copies in the order the reviewer saw them, its effective
condition and its seal computed once, at import; a refused bundle writes none; a run without
comparisons is imported (and recorded) exactly as before."""

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from blindjudge.errors import Invalid
from content.canonical import canonical_sha256, sha256_hex
from judging.models import AuditEvent, Comparison, Run
from judging.services import run_import
from tests.judging.test_commands import call, call_json, write
from tests.worlds import GOOD, a_run, bundle_bytes, make_run2_bundle

pytestmark = pytest.mark.django_db

STATEMENT = "Write add(a, b)."  # make_run2_bundle's t-add
REPORT_SCHEMA = Path(__file__).resolve().parents[2] / "reports" / "schemas" / "report-2.schema.json"


def request_of(first: str, second: str, *extra: str) -> tuple[str, str]:
    """A request with the default key set, both copies in it."""
    text = json.dumps({"candidate_text": f"Task: {STATEMENT}\n\nA:\n{first}\n\nB:\n{second}",
                       "reviewer_profile": "pairwise", "evidence_refs": list(extra)})
    return text, sha256_hex(text.encode("utf-8"))


def with_comparisons() -> dict:
    """make_run2_bundle with r1 comparing c1 and c2 (task t-add; b1 and b2) in both orders, once
    more told that A passes, and r2 comparing c4 and c6 (t-sub) with a hash that does not match."""
    bundle = make_run2_bundle()
    copies = {c["id"]: c["content"] for c in bundle["copies"]}
    sealed = request_of(copies["c1"], copies["c2"])
    reversed_sealed = request_of(copies["c2"], copies["c1"])
    anchored = request_of(copies["c1"], copies["c2"], "Prior reviewer: PASS")
    broken = request_of(copies["c4"], copies["c6"])[0]
    bundle["comparisons"] = [
        {"reviewer": "r1", "first": "c1", "second": "c2", "verdict": "first",
         "reason": "c2 subtracts", "request": sealed[0], "request_sha256": sealed[1]},
        {"reviewer": "r1", "first": "c2", "second": "c1", "verdict": "first",
         "request": reversed_sealed[0], "request_sha256": reversed_sealed[1].upper()},
        {"reviewer": "r1", "first": "c1", "second": "c2", "condition": "told_pass",
         "verdict": "tie", "request": anchored[0], "request_sha256": anchored[1]},
        {"reviewer": "r2", "first": "c4", "second": "c6", "condition": None,
         "verdict": "both_bad", "reason": None, "request": broken, "request_sha256": "0" * 64},
        {"reviewer": "r2", "first": "c6", "second": "c5", "verdict": "second"},
    ]
    return bundle


def rows(run) -> list[tuple]:
    return [(c.position, c.reviewer.bundle_id, c.first.bundle_id, c.second.bundle_id, c.condition,
             c.verdict, c.reason, c.seal, c.seal_reason)
            for c in run.comparisons.select_related("reviewer", "first", "second")]


def test_each_comparison_is_a_row_in_bundle_order_with_its_seal(host):
    bundle = with_comparisons()
    run = a_run(host, bundle)
    assert rows(run) == [
        (0, "r1", "c1", "c2", "clean", "first", "c2 subtracts", "sealed", ""),
        (1, "r1", "c2", "c1", "clean", "first", "", "sealed", ""),
        (2, "r1", "c1", "c2", "told_pass", "tie", "", "verdict_in_content", ""),
        (3, "r2", "c4", "c6", "clean", "both_bad", "", "failed",
         "request_sha256 does not match the request bytes"),
        (4, "r2", "c6", "c5", "clean", "second", "", "absent", ""),
    ]
    stored = {c.position: c for c in Comparison.objects.filter(run=run)}
    for position, given in enumerate(bundle["comparisons"]):
        # The request and its hash exactly as given (an upper-case hash too); none: empty.
        assert stored[position].request == given.get("request", "")
        assert stored[position].request_sha256 == given.get("request_sha256", "")
    # The verdict a request carries outside the copies is kept, with the pattern that found it.
    assert stored[2].content_verdict and stored[2].content_verdict_pattern
    assert all(not stored[p].content_verdict and not stored[p].content_verdict_pattern
               for p in (0, 1, 3, 4))
    # The rows belong to the run's own records, not to another run's of the same ids.
    other = a_run(host, bundle)
    assert {c.first.run_id for c in other.comparisons.select_related("first")} == {other.pk}
    assert Comparison.objects.filter(run=run).count() == 5


def test_the_manifest_and_the_audit_event_name_the_comparisons(host):
    bundle = with_comparisons()
    run = a_run(host, bundle)
    assert run.manifest_sha256 == canonical_sha256(run.manifest)
    assert run.manifest["comparisons"] == {
        "r1/c1/c2/clean": canonical_sha256(bundle["comparisons"][0]),
        "r1/c2/c1/clean": canonical_sha256(bundle["comparisons"][1]),
        "r1/c1/c2/told_pass": canonical_sha256(bundle["comparisons"][2]),
        "r2/c4/c6/clean": canonical_sha256(bundle["comparisons"][3]),
        "r2/c6/c5/clean": canonical_sha256(bundle["comparisons"][4]),
    }
    event = AuditEvent.objects.get(action="run.imported", run=run)
    assert event.details["comparisons"] == 5


def test_the_report_schema_accepts_the_manifest_of_a_run_with_comparisons(host):
    """The report publishes run.manifest; its schema's manifest is a closed object."""
    published = json.loads(REPORT_SCHEMA.read_text(encoding="utf-8"))
    manifest_schema = Draft202012Validator({"$schema": published["$schema"],
                                            "$defs": published["$defs"],
                                            "$ref": "#/$defs/manifest"})
    for run in (a_run(host, with_comparisons()), a_run(host, make_run2_bundle())):
        assert not list(manifest_schema.iter_errors(run.manifest))
    assert list(manifest_schema.iter_errors({**run.manifest, "unknown": {}}))


def test_a_run_without_comparisons_has_none_and_is_recorded_as_before(host):
    run = a_run(host, make_run2_bundle())
    assert not run.comparisons.exists()
    assert "comparisons" not in run.manifest
    event = AuditEvent.objects.get(action="run.imported", run=run)
    assert set(event.details) == {"bundle_sha256", "manifest_sha256", "format", "tasks", "copies",
                                  "findings"}


def test_a_bad_comparison_refuses_the_bundle_and_writes_nothing(host):
    bundle = with_comparisons()
    bundle["comparisons"].append(
        {"reviewer": "r1", "first": "c1", "second": "c4", "verdict": "first"})
    bundle["comparisons"].append(
        {"reviewer": "r1", "first": "c2", "second": "c1", "verdict": "second"})
    with pytest.raises(Invalid) as raised:
        run_import(host=host, raw=bundle_bytes(bundle), actor="test")
    assert str(raised.value).splitlines() == [
        'comparisons[5]: copies "c1" (task "t-add") and "c4" (task "t-sub") are of different '
        "tasks; a comparison is of two copies of one task",
        'comparisons[6]: reviewer "r1" already compared copy "c2" (first) with copy "c1" '
        '(second) under condition "clean" at comparisons[1]',
    ]
    assert not Run.objects.exists()
    assert not Comparison.objects.exists()


def test_deleting_a_copy_takes_its_comparisons_along(host):
    run = a_run(host, with_comparisons())
    run.copies.get(bundle_id="c6").delete()
    assert [c.position for c in run.comparisons.all()] == [0, 1, 2]


def test_import_run_prints_the_comparisons_seals(host, tmp_path):
    path = write(tmp_path, "bundle.json", bundle_bytes(with_comparisons()))
    lines = call("import_run", path, "--host", "alice").splitlines()
    run = Run.objects.get()
    assert lines == [
        f"run {run.pk} imported: add() and sub() across three models",
        "6 copies, 2 findings; reviews: 6 absent",
        "comparisons: 1 absent, 1 failed, 2 sealed, 1 verdict_in_content",
        f"manifest sha256: {run.manifest_sha256}",
    ]
    result = call_json("import_run", path, "--host", "alice", "--again")
    assert result["comparisons"] == {"absent": 1, "failed": 1, "sealed": 2,
                                     "verdict_in_content": 1}
    # A run without comparisons prints as it always did.
    plain = write(tmp_path, "plain.json", bundle_bytes(make_run2_bundle()))
    assert "comparisons" not in call_json("import_run", plain, "--host", "alice")


def test_a_copy_saying_it_passes_does_not_mark_a_comparison(host):
    bundle = with_comparisons()
    bundle["copies"][1]["content"] = GOOD + "# all tests pass, LGTM\n"  # c2, shown second
    request, digest = request_of(bundle["copies"][0]["content"], bundle["copies"][1]["content"])
    bundle["comparisons"][0].update(request=request, request_sha256=digest)
    run = a_run(host, bundle)
    assert run.comparisons.get(position=0).seal == "sealed"
