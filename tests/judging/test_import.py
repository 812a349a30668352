"""Importing a run through the service: all or nothing (docs/threats.md cases 7, 8, 31), seal outcomes
stored per review, the manifest recomputable."""

import json

import pytest
from django.test import override_settings

from blindjudge.errors import Invalid
from content.canonical import canonical_sha256, sha256_hex
from judging.models import AuditEvent, Builder, Copy, Finding, Review, Reviewer, Run
from judging.services import run_import
from tests.worlds import bundle_bytes, make_bundle

ALL_TABLES = (Run, Builder, Copy, Reviewer, Review, Finding, AuditEvent)


def assert_nothing_written():
    assert {model.__name__: model.objects.count() for model in ALL_TABLES} == {
        model.__name__: 0 for model in ALL_TABLES}


def sealed_request(keys=("candidate_text", "reviewer_profile", "evidence_refs")):
    request = json.dumps({key: "x" for key in keys})
    return request, sha256_hex(request.encode("utf-8"))


def test_a_valid_bundle_is_imported_whole(host):
    raw = bundle_bytes()
    run = run_import(host=host, raw=raw, actor="test")
    assert (run.name, run.bundle_sha256) == ("add() across three models", sha256_hex(raw))
    assert run.manifest_sha256 == canonical_sha256(run.manifest)
    assert list(run.copies.values_list("bundle_id", "builder__bundle_id", "truth")) == [
        ("c1", "b1", "known_good"), ("c2", "b1", "seeded_defect"), ("c3", "b2", "tests_pass"),
        ("c4", "b2", "tests_fail"), ("c5", "b3", "known_good"), ("c6", "b3", "unknown")]
    copy = run.copies.get(bundle_id="c2")
    assert (copy.defect, copy.content_sha256) == ("subtracts", sha256_hex(copy.content.encode()))
    assert sorted(run.findings.get(bundle_id="f1").raised_by.values_list("bundle_id", flat=True)) == [
        "r1", "r2"]
    assert AuditEvent.objects.filter(action="run.imported", run=run).count() == 1


@pytest.mark.parametrize("mutate, message", [
    (lambda b: b.update(format="blindjudge.run/9"), 'format: unknown format "blindjudge.run/9"'),
    (lambda b: b["copies"][3].update(builder="b9"), 'copies[3].builder: unknown builder "b9"'),
    (lambda b: b["copies"].append(dict(b["copies"][0])), 'copies[6].id: duplicate id "c1"'),
    (lambda b: b["copies"][0].update(truth="maybe"), "copies[0].truth"),
    (lambda b: b["reviews"][0].update(copy="c99"), "reviews[0].copy"),
    (lambda b: b["findings"][0].update(raised_by=["r7"]), "findings[0].raised_by[0]"),
    (lambda b: b["copies"][1].update(content="a\x00b"), "copies[1].content: contains a NUL byte"),
    (lambda b: b["copies"][2].update(content="x\ud800y"), "copies[2].content: contains a lone"),
])
def test_a_bad_bundle_writes_nothing_and_names_the_place(host, mutate, message):
    bundle = make_bundle()
    mutate(bundle)
    raw = json.dumps(bundle).encode("utf-8")
    with pytest.raises(Invalid) as error:
        run_import(host=host, raw=raw, actor="test")
    assert message in error.value.message
    assert_nothing_written()


@pytest.mark.parametrize("raw, message", [
    (b'{"format": "blindjudge.run/1",', "bundle: malformed JSON at line 1"),
    (b'\xff\xfe{"format"}', "bundle: not valid UTF-8 at byte 0"),
    (b"[]", "bundle"),
])
def test_unparseable_bundles_write_nothing(host, raw, message):
    with pytest.raises(Invalid) as error:
        run_import(host=host, raw=raw, actor="test")
    assert message in error.value.message
    assert_nothing_written()


def test_every_problem_is_reported_at_once(host):
    bundle = make_bundle()
    bundle["copies"][0]["builder"] = "b8"
    bundle["copies"][1]["builder"] = "b9"
    bundle["reviews"][0]["verdict"] = "meh"
    with pytest.raises(Invalid) as error:
        run_import(host=host, raw=json.dumps(bundle).encode(), actor="test")
    lines = error.value.message.splitlines()
    assert 'copies[0].builder: unknown builder "b8"' in lines
    assert 'copies[1].builder: unknown builder "b9"' in lines
    assert any(line.startswith("reviews[0].verdict") for line in lines)
    assert_nothing_written()


@override_settings(BLINDJUDGE_MAX_COPY_BYTES=40)
def test_a_copy_over_the_size_limit_is_refused(host):
    """Case 7: over the host's limit, refused at import with a clear message."""
    bundle = make_bundle()
    bundle["copies"][4]["content"] = "x" * 41
    with pytest.raises(Invalid) as error:
        run_import(host=host, raw=json.dumps(bundle).encode(), actor="test")
    assert "copies[4].content: 41 bytes exceeds the per-copy limit of 40 bytes" in error.value.message
    assert_nothing_written()


@override_settings(BLINDJUDGE_MAX_BUNDLE_BYTES=100)
def test_a_bundle_over_the_size_limit_is_refused(host):
    raw = bundle_bytes()
    with pytest.raises(Invalid) as error:
        run_import(host=host, raw=raw, actor="test")
    assert error.value.message == f"bundle: {len(raw)} bytes exceeds the limit of 100 bytes"
    assert_nothing_written()


def test_seal_outcomes_are_stored_per_review(host):
    sealed, digest = sealed_request()
    tainted, tainted_digest = sealed_request(
        ("candidate_text", "reviewer_profile", "evidence_refs", "prior_verdict"))
    bundle = make_bundle()
    bundle["reviews"] = [
        {"reviewer": "r1", "copy": "c1", "verdict": "pass", "reason": "ok",
         "request": sealed, "request_sha256": digest},
        {"reviewer": "r1", "copy": "c2", "verdict": "fail", "reason": "bug",
         "request": tainted, "request_sha256": tainted_digest},
        {"reviewer": "r1", "copy": "c3", "verdict": "pass", "reason": "ok",
         "request": sealed, "request_sha256": "0" * 64},
        {"reviewer": "r1", "copy": "c4", "verdict": "fail", "reason": "bug"},
    ]
    run = run_import(host=host, raw=json.dumps(bundle).encode(), actor="test")
    outcomes = list(run.reviews.order_by("position").values_list("seal", "seal_reason"))
    assert outcomes == [
        ("sealed", ""),
        ("failed", "unexpected keys: prior_verdict"),
        ("failed", "request_sha256 does not match the request bytes"),
        ("absent", ""),
    ]
