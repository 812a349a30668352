"""Anyone can verify a report (issue 15 item 3): the stand-alone verifier in the docs
(docs/verify_report_standalone.py, standard library only) gives reports.verify's verdict, check by
check, on real exports and on tampered ones; hashes are RFC 8785 for new sessions and still the
legacy form for a session frozen before, and both verify.

The verifier runs as a reader would run it: plain `python3` in isolated mode without site-packages
(`-I -S`), from a folder outside the project, so neither blindjudge nor any of its dependencies can
be imported. Sessions are built through judging.services: test_report's realistic one, and a
by-task session on a run/2 bundle whose builder ids lie outside the Basic Multilingual Plane and
whose preregistered rules hold decimal thresholds (1.0, 1e-07), the two places where RFC 8785 and
the legacy form write different bytes.
"""

import ast
import copy
import hashlib
import importlib.util
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import rfc8785
from django.core.management import call_command
from hypothesis import given, settings
from hypothesis import strategies as st

from content.bundle import BundleError, validate_bundle
from content.canonical import JCS, LEGACY, canonical_sha256, jcs
from content.commitments import commitment_sha256
from judging.models import Run, Session
from judging.services import item_save, phase_lock, session_create, session_open
from reports.build import build_report
from reports.export import anonymise, to_json
from reports.verify import verify
from tests.content.test_canonical import SORTING_INPUT
from tests.reports.test_adjudicated_report import adjudicate, adjudicated_bundle, judged
from tests.reports.test_exclude_judge_report import revealed_with_rules
from tests.reports.test_report import build_revealed
from tests.worlds import a_run, a_session, advance, answer_all, invite_and_join, make_run2_bundle

STANDALONE = Path(__file__).resolve().parents[2] / "docs" / "verify_report_standalone.py"

# Builder ids outside the BMP and beside it: U+1F600 sorts before U+FF01 by UTF-16 code units
# (D83D), after it by code point, so the manifest's builders map hashes differently in each form.
EMOJI, FULLWIDTH = "b\U0001f600", "b\uff01"
PREREG = """Thresholds an auditor's JCS library writes differently from Python.

```rules
[{"name": "all caught", "metric": "recall_phase1", "op": ">=", "threshold": 1.0},
 {"name": "any shift", "metric": "delta_recall", "op": ">", "threshold": 1e-07}]
```
"""


def load_standalone():
    spec = importlib.util.spec_from_file_location("verify_report_standalone", STANDALONE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def unicode_bundle() -> dict:
    bundle = make_run2_bundle()
    rename = {"b1": EMOJI, "b2": FULLWIDTH}
    for builder in bundle["builders"]:
        builder["id"] = rename.get(builder["id"], builder["id"])
    for c in bundle["copies"]:
        c["builder"] = rename.get(c["builder"], c["builder"])
    return bundle


def frozen_before_rfc_8785(session: Session) -> Session:
    """The session as one opened (and its run imported) before RFC 8785 is after the change: its
    protocol and manifest name no form and are hashed in the legacy form. Written to the rows
    directly, as the code before it left them: no service makes an old protocol. Judges who join
    afterwards commit in the protocol's form: that is admission's job, not this helper's."""
    protocol = {k: v for k, v in session.protocol.items() if k != "canonical"}
    Session.objects.filter(pk=session.pk).update(
        protocol=protocol, protocol_sha256=canonical_sha256(protocol, LEGACY))
    run = session.run
    # Nor did it bind copies to builders (that came later still: issue 25 item 7).
    manifest = {k: v for k, v in run.manifest.items() if k not in ("canonical", "bindings")}
    # The records' own hashes: no number and no key outside ASCII in any bundle record, so the
    # legacy form gave the bytes JCS gives (checked, not assumed).
    for key, records in (("builders", unicode_bundle()["builders"]),
                         ("tasks", unicode_bundle()["tasks"])):
        assert manifest[key] == {r["id"]: canonical_sha256(r, LEGACY) for r in records}
    Run.objects.filter(pk=run.pk).update(manifest=manifest,
                                         manifest_sha256=canonical_sha256(manifest, LEGACY))
    session.refresh_from_db()
    return session


def by_task_session(host, *, legacy: bool) -> Session:
    """A revealed by-task session on the unicode run/2 bundle: three judges, each holding one task
    whole (3 copies), verdicts locked in phase 1."""
    run = a_run(host, unicode_bundle())
    draft = session_create(run=run, kind="copies", actor="test", rubric="Is it right?",
                           preregistration=PREREG, items_per_judge=3, by_task=True).session
    session = session_open(session=draft, actor="test")
    if legacy:
        session = frozen_before_rfc_8785(session)
    for name in ("Ada", "Grace", "Edsger"):
        answer_all(invite_and_join(session, name=name).judge, 1, "fail", lock=True)
    return advance(session, "revealed")


def exported(session) -> tuple[dict, dict]:
    report = build_report(session)
    return json.loads(to_json(report)), json.loads(to_json(anonymise(report)))


def run_standalone(tmp_path, reports: list[dict], *options: str) -> subprocess.CompletedProcess:
    """The verifier as a reader runs it on the reports' files: plain python3, isolated (-I: no
    PYTHONPATH, no user site, no current folder on the path), no site-packages (-S), from a
    folder of its own."""
    paths = []
    for number, report in enumerate(reports):
        path = tmp_path / f"report-{number}.json"
        path.write_text(json.dumps(report, ensure_ascii=False, indent=2), encoding="utf-8")
        paths.append(str(path))
    python = shutil.which("python3") or sys.executable
    return subprocess.run([python, "-I", "-S", str(STANDALONE), *paths, *options],
                          capture_output=True, text=True, encoding="utf-8", cwd=tmp_path,
                          timeout=120, check=False)


def same_verdicts(tmp_path, reports: list[dict]) -> list[tuple[list[str], int]]:
    """Runs the stand-alone verifier on the reports and asserts it says what reports.verify says
    of each: the same problems in the same order, the same number of checks; it exits 1 when
    any report fails, else 0."""
    verdicts = [verify(report) for report in reports]
    result = run_standalone(tmp_path, reports, "--json")
    assert result.returncode == (1 if any(p for p, _ in verdicts) else 0), result.stderr
    assert [json.loads(line) for line in result.stdout.splitlines()] == [
        {"report": str(tmp_path / f"report-{n}.json"), "verified": not problems, "checks": checks,
         "problems": problems} for n, (problems, checks) in enumerate(verdicts)]
    return verdicts


def same_verdict(tmp_path, report: dict) -> tuple[list[str], int]:
    return same_verdicts(tmp_path, [report])[0]


def tampered(report: dict, change) -> dict:
    data = copy.deepcopy(report)
    change(data)
    return data


def flip(value: str) -> str:
    return ("1" if value[0] != "1" else "2") + value[1:]


def first_assignment(data):
    return min(data["assignments"], key=lambda a: (a["judge"], a["position"]))


def set_code(data):
    a = first_assignment(data)
    a["code"] = ("A" if a["code"][0] != "A" else "C") + a["code"][1:]


def set_salt(data):
    data["judges"][0]["commitment"]["salt"] = flip(data["judges"][0]["commitment"]["salt"])


def set_rubric(data):
    data["protocol"]["frozen"]["rubric"] += " Really?"


def set_builder_of_assignment(data):
    a = first_assignment(data)
    a["builder"] = next(b["id"] for b in data["builders"] if b["id"] != a["builder"])


def swap_models(data):
    data["builders"][0]["model"], data["builders"][1]["model"] = (
        data["builders"][1]["model"], data["builders"][0]["model"])


def set_manifest_copy(data):
    copies = data["run"]["manifest"]["copies"]
    first = sorted(copies)[0]
    copies[first] = flip(copies[first])


def set_url_id(data):
    data["session"]["url_id"] = flip(data["session"]["url_id"])


def set_order_key(data):
    a = first_assignment(data)
    a["order_key"] = flip(a["order_key"])


def restate_form(data):
    # The report says a form the hashed objects do not name.
    data["judges"][0]["commitment"]["canonical"] = (
        LEGACY if data["protocol"]["canonical"] == JCS else JCS)


def drop_manifest(data):
    del data["run"]["manifest"]


TAMPERS = [set_code, set_salt, set_rubric, set_builder_of_assignment, swap_models,
           set_manifest_copy, set_url_id, set_order_key, restate_form, drop_manifest]

# Words each tamper's problems must hold, so a verdict of "failed" names what failed.
NAMED = {
    "set_code": "commitment", "set_salt": "commitment", "set_rubric": "protocol.sha256",
    "set_builder_of_assignment": "is not the builder of copy", "swap_models": "builders[",
    "set_manifest_copy": "run.manifest_sha256", "set_url_id": "commitment",
    "set_order_key": "order_key", "restate_form": "commitment.canonical",
    "drop_manifest": "malformed",
}


def assert_every_tamper_fails_alike(tmp_path, report: dict):
    reports = [tampered(report, change) for change in TAMPERS]
    for change, (problems, _) in zip(TAMPERS, same_verdicts(tmp_path, reports), strict=True):
        assert problems, change.__name__
        assert any(NAMED[change.__name__] in p for p in problems), (change.__name__, problems)
    # The reader's own output names each problem, file by file.
    plain = run_standalone(tmp_path, reports)
    assert plain.returncode == 1
    expected = []
    for number, data in enumerate(reports):
        problems, checks = verify(data)
        expected += [f"== {tmp_path / f'report-{number}.json'}",
                     f"{len(problems)} of {checks} checks failed:", *problems]
    assert plain.stdout.splitlines() == expected


# --- The verifier is the standard library's -------------------------------------------------------

def test_the_stand_alone_verifier_imports_the_standard_library_only():
    tree = ast.parse(STANDALONE.read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree)
                if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom)}
    assert imported and imported <= set(sys.stdlib_module_names), imported


@pytest.mark.parametrize("value, written", [
    (1.0, "1"), (1e-07, "1e-7"), (0.1, "0.1"), (-0.0, "0"), (1e21, "1e+21"), (1e20, "1" + "0" * 20),
    (5e-324, "5e-324"), (1.7976931348623157e308, "1.7976931348623157e+308"),
    (2**53 + 1, "9007199254740992"), (0.000001, "0.000001"), (123.456, "123.456"),
    (-0.0000033333333333333333, "-0.0000033333333333333333"), (1e23, "1e+23"),
])
def test_its_numbers_are_rfc_8785_s(value, written):
    assert load_standalone().jcs(value) == written == jcs(value).decode()


def test_its_keys_sort_as_rfc_8785_section_3_2_3_sorts_them():
    assert load_standalone().jcs(SORTING_INPUT) == jcs(SORTING_INPUT).decode("utf-8")
    assert load_standalone().jcs({FULLWIDTH: 1, EMOJI: 2}) == f'{{"{EMOJI}":2,"{FULLWIDTH}":1}}'


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_its_canonical_bytes_are_the_rfc8785_package_s_on_any_json_value(value):
    standalone = load_standalone()
    try:
        expected = canonical_sha256(value, JCS)
    except ValueError:  # a lone surrogate: no UTF-8, no hash in either
        with pytest.raises(ValueError):
            standalone.digest(value, JCS)
        return
    assert standalone.digest(value, JCS) == expected
    assert standalone.digest(value, LEGACY) == canonical_sha256(value, LEGACY)


# --- Real exports --------------------------------------------------------------------------------

@pytest.mark.django_db
def test_a_new_session_is_hashed_in_rfc_8785_and_verifies_stand_alone(host, tmp_path):
    session, _ = build_revealed(host)
    report, anon = exported(session)
    assert report["protocol"]["frozen"]["canonical"] == report["protocol"]["canonical"] == JCS
    assert report["run"]["manifest"]["canonical"] == report["run"]["manifest_canonical"] == JCS
    assert {j["commitment"]["canonical"] for j in report["judges"]} == {JCS}
    # An auditor's own JCS library (here the rfc8785 package, called directly) recomputes the
    # protocol's hash from the published JSON after the NFC / LF text step.
    frozen = load_standalone().normalised(report["protocol"]["frozen"])
    assert hashlib.sha256(rfc8785.dumps(frozen)).hexdigest() == report["protocol"]["sha256"]
    assert same_verdicts(tmp_path, [report, anon]) == [([], verify(report)[1])] * 2
    result = run_standalone(tmp_path, [report])
    assert result.returncode == 0
    assert result.stdout == f"verified: all {verify(report)[1]} published hashes recompute\n"
    assert_every_tamper_fails_alike(tmp_path, report)


@pytest.mark.django_db
def test_a_by_task_session_with_decimal_thresholds_and_ids_outside_the_bmp_verifies(host,
                                                                                    tmp_path):
    report, anon = exported(by_task_session(host, legacy=False))
    frozen = report["protocol"]["frozen"]
    assert frozen["by_task"] is True
    assert [r["threshold"] for r in frozen["decision_rules"]] == [1.0, 1e-07]
    # The bytes hashed are RFC 8785's: 1 and 1e-7, the emoji's builder before the fullwidth one.
    assert b'"threshold":1}' in jcs(load_standalone().normalised(frozen))
    assert b'"threshold":1e-7}' in jcs(frozen)
    builders = json.loads(jcs(report["run"]["manifest"]))["builders"]
    assert list(builders) == ["b3", EMOJI, FULLWIDTH]
    assert same_verdicts(tmp_path, [report, anon]) == [([], verify(report)[1])] * 2
    assert_every_tamper_fails_alike(tmp_path, report)
    # A threshold changed in the published protocol fails, in both verifiers.
    data = tampered(report, lambda d: d["protocol"]["frozen"]["decision_rules"][1].update(
        threshold=2e-07))
    assert same_verdict(tmp_path, data)[0] == ["protocol.sha256 does not match the frozen protocol"]
    # So does a protocol passed off as legacy (its "canonical" removed): the hash covers the key.
    data = tampered(report, lambda d: (d["protocol"]["frozen"].pop("canonical"),
                                       d["protocol"].pop("canonical")))
    expected = ["protocol.sha256 does not match the frozen protocol"]
    for judge in report["judges"]:
        expected += [f"judges[{judge['pseudonym']}].commitment.canonical is 'jcs-rfc8785', not "
                     f"the frozen protocol's form 'blindjudge-json-1'",
                     f"judges[{judge['pseudonym']}].commitment: the published mapping, order "
                     f"seed and salt do not hash to the published commitment"]
    assert same_verdict(tmp_path, data)[0] == expected


@pytest.mark.django_db
def test_a_session_frozen_before_rfc_8785_still_verifies_in_the_legacy_form(host, tmp_path):
    report, anon = exported(by_task_session(host, legacy=True))
    frozen, manifest = report["protocol"]["frozen"], report["run"]["manifest"]
    assert "canonical" not in frozen and "canonical" not in manifest
    assert report["protocol"]["canonical"] == report["run"]["manifest_canonical"] == LEGACY
    assert {j["commitment"]["canonical"] for j in report["judges"]} == {LEGACY}
    # The legacy form is what was hashed, and it is not RFC 8785's bytes: 1.0, 1e-07 and the
    # builders sorted by code point.
    assert report["protocol"]["sha256"] == canonical_sha256(frozen, LEGACY)
    assert report["protocol"]["sha256"] != canonical_sha256(frozen, JCS)
    assert report["run"]["manifest_sha256"] == canonical_sha256(manifest, LEGACY)
    assert report["run"]["manifest_sha256"] != canonical_sha256(manifest, JCS)
    standalone = load_standalone()
    for j in report["judges"]:
        mine = sorted((a for a in report["assignments"] if a["judge"] == j["pseudonym"]),
                      key=lambda a: a["position"])
        assert standalone.commitment(report["session"]["url_id"], j["pseudonym"], j["commitment"],
                                     mine, LEGACY) == j["commitment"]["sha256"]
        assert standalone.commitment(report["session"]["url_id"], j["pseudonym"], j["commitment"],
                                     mine, JCS) != j["commitment"]["sha256"]
    assert same_verdicts(tmp_path, [report, anon]) == [([], verify(report)[1])] * 2
    # `manage.py verify_report` and the stand-alone verifier say it in the same words.
    path = tmp_path / "old.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    out = io.StringIO()
    call_command("verify_report", str(path), stdout=out, stderr=io.StringIO())
    assert out.getvalue() == run_standalone(tmp_path, [report]).stdout == (
        f"verified: all {verify(report)[1]} published hashes recompute\n")
    assert_every_tamper_fails_alike(tmp_path, report)
    # Passed off as RFC 8785 (the form named where none was): the hash no longer recomputes.
    data = tampered(report, lambda d: d["protocol"]["frozen"].update(canonical=JCS))
    assert "protocol.sha256 does not match the frozen protocol" in same_verdict(tmp_path, data)[0]


def test_an_unreadable_file_is_named_and_exits_2(tmp_path):
    python = shutil.which("python3") or sys.executable
    missing = subprocess.run([python, "-I", "-S", str(STANDALONE), str(tmp_path / "none.json")],
                             capture_output=True, text=True, timeout=60, check=False)
    assert missing.returncode == 2 and "none.json is not a readable JSON report" in missing.stderr
    (tmp_path / "list.json").write_text("[]", encoding="utf-8")
    listed = subprocess.run([python, "-I", "-S", str(STANDALONE), str(tmp_path / "list.json")],
                            capture_output=True, text=True, timeout=60, check=False)
    assert listed.returncode == 2 and "is not a JSON report" in listed.stderr
    assert same_verdict(tmp_path, {"run": {}}) == (["the report is malformed: KeyError: 'manifest'"],
                                                   0)


# --- Ids one after the text step (issue 25 item 7) ------------------------------------------------

COMPOSED, DECOMPOSED = "b\u00e9", "be\u0301"  # one id after NFC


def forge_a_twin_builder(data):
    """The attack the outside test found: a second builder whose id is the first's in another
    Unicode form, listed first with a forged hash. Hashed after the text step the two keys are
    one, the last (the real one) kept, so the manifest's hash is unchanged while the report now
    says the copies' builder was another model."""
    builders = data["run"]["manifest"]["builders"]
    [real] = [b for b in data["builders"] if b["id"] == COMPOSED]
    forged = {**real, "model": "a-model-that-never-built-this"}
    twin = {**real, "id": DECOMPOSED}
    published = {"id": forged["id"], "model": forged["model"], "family": forged["family"]}
    data["run"]["manifest"]["builders"] = {COMPOSED: canonical_sha256(published),
                                           DECOMPOSED: builders[COMPOSED],
                                           **{k: v for k, v in builders.items() if k != COMPOSED}}
    data["builders"] = [forged, twin] + [b for b in data["builders"] if b["id"] != COMPOSED]


@pytest.mark.django_db
def test_keys_one_after_the_text_step_fail_both_verifiers(host, tmp_path):
    bundle = make_run2_bundle()
    for builder in bundle["builders"]:
        if builder["id"] == "b1":
            builder["id"] = COMPOSED
    for c in bundle["copies"]:
        if c["builder"] == "b1":
            c["builder"] = COMPOSED
    session = a_session(a_run(host, bundle), "open", rubric="Is it right?")
    answer_all(invite_and_join(session, name="Ada").judge, 1, "pass", lock=True)
    report, _ = exported(advance(session, "revealed"))
    assert same_verdict(tmp_path, report)[0] == []
    problems, _ = same_verdict(tmp_path, tampered(report, forge_a_twin_builder))
    assert problems == ["the report is malformed: KeyCollision: the keys 'be\\u0301' and "
                        "'b\\xe9' are one key after the text step (NFC, LF line endings)"]


@pytest.mark.parametrize("records", ["tasks", "builders", "copies", "reviewers", "findings"])
def test_an_import_with_two_ids_one_after_the_text_step_is_refused_naming_both(records):
    bundle = make_run2_bundle()
    first, second = bundle[records][0], bundle[records][1]
    first["id"], second["id"] = COMPOSED, DECOMPOSED
    with pytest.raises(BundleError) as refused:
        validate_bundle(json.dumps(bundle).encode(), max_bundle_bytes=10**8, max_copy_bytes=10**7)
    assert (f"{records}[1].id: id 'be\\u0301' is the same id as 'b\\xe9' at {records}[0] once "
            "text is normalised (Unicode NFC, LF line endings); rename one") in refused.value.errors


# --- Each copy bound to its task and builder (issue 25 item 7) ------------------------------------

def rebound(report: dict, **changes: dict[str, str]) -> dict:
    """A forger's edit of a published report: `changes` maps a copy field ("builder", "task") to
    {copy id: new value}. The mapping follows the copies and every commitment is recomputed (the
    salts are published), so nothing but the manifest's bindings can tell."""
    data = copy.deepcopy(report)
    for field, values in changes.items():
        for c in data["copies"]:
            c[field] = values.get(c["id"], c[field])
    for a in data["assignments"]:
        a["builder"] = changes.get("builder", {}).get(a["copy"], a["builder"])
    for judge in data["judges"]:
        c = judge["commitment"]
        c["sha256"] = commitment_sha256(
            session_url_id=data["session"]["url_id"], pseudonym=judge["pseudonym"],
            order_seed=c["order_seed"], salt=c["salt"], canonical=c["canonical"],
            assignments=[a for a in data["assignments"] if a["judge"] == judge["pseudonym"]])
    return data


def judged_run2_report(host, *, one_model: bool) -> dict:
    """A revealed session on the run/2 bundle (c1 by b1, c2 by b2, both of task t-add); with
    `one_model`, b2 is b1's model and family under another id, so no builder record differs."""
    bundle = make_run2_bundle()
    if one_model:
        bundle["builders"][1].update(model=bundle["builders"][0]["model"],
                                     family=bundle["builders"][0]["family"])
    session = a_session(a_run(host, bundle), "open", rubric="Is it right?")
    answer_all(invite_and_join(session, name="Ada").judge, 1, "pass", lock=True)
    return exported(advance(session, "revealed"))[0]


@pytest.mark.django_db
@pytest.mark.parametrize("one_model", [False, True], ids=["two-models", "one-model-two-ids"])
def test_copies_given_other_builders_or_tasks_fail_both_verifiers(host, tmp_path, one_model):
    report = judged_run2_report(host, one_model=one_model)
    assert report["run"]["manifest"]["bindings"]["c1"] == {"task": "t-add", "builder": "b1"}
    assert {(c["id"], c["builder"]) for c in report["copies"]} >= {("c1", "b1"), ("c2", "b2")}
    assert same_verdict(tmp_path, report)[0] == []
    swapped = rebound(report, builder={"c1": "b2", "c2": "b1"})
    # The forgery is consistent everywhere else: the mapping agrees with the copies.
    assert {a["copy"]: a["builder"] for a in swapped["assignments"]}["c1"] == "b2"
    assert same_verdict(tmp_path, swapped)[0] == [
        "copies[c1].builder is 'b2'; the manifest binds the copy to builder 'b1'",
        "copies[c2].builder is 'b1'; the manifest binds the copy to builder 'b2'",
    ]
    moved = rebound(report, builder={"c1": "b3"})
    assert same_verdict(tmp_path, moved)[0] == [
        "copies[c1].builder is 'b3'; the manifest binds the copy to builder 'b1'"]
    retasked = rebound(report, task={"c1": "t-sub"})
    assert same_verdict(tmp_path, retasked)[0] == [
        "copies[c1].task is 't-sub'; the manifest binds the copy to task 't-add'"]
    # The bindings themselves edited to match: the manifest's hash no longer recomputes.
    data = tampered(swapped, lambda d: d["run"]["manifest"]["bindings"]["c1"].update(builder="b2"))
    assert "run.manifest_sha256 does not match the published manifest" in \
        same_verdict(tmp_path, data)[0]


@pytest.mark.django_db
def test_a_run_imported_before_copies_were_bound_verifies_as_before(host, tmp_path):
    """A run whose stored manifest has no bindings (as every run imported before issue 25 item 7)
    verifies, in RFC 8785 as in the legacy form; its copies are checked against the mapping only,
    so the same forgery still passes there: the limit such a run keeps."""
    bundle = make_run2_bundle()
    session = a_session(a_run(host, bundle), "open", rubric="Is it right?")
    run = session.run
    manifest = {k: v for k, v in run.manifest.items() if k != "bindings"}
    Run.objects.filter(pk=run.pk).update(manifest=manifest,
                                         manifest_sha256=canonical_sha256(manifest))
    answer_all(invite_and_join(session, name="Ada").judge, 1, "pass", lock=True)
    report, anon = exported(advance(session, "revealed"))
    assert "bindings" not in report["run"]["manifest"]
    assert report["run"]["manifest_sha256"] == canonical_sha256(manifest)
    new_checks = verify(judged_run2_report(host, one_model=False))[1]
    problems, checks = same_verdicts(tmp_path, [report, anon])[0]
    assert problems == [] and checks == new_checks - 1 - len(report["copies"])
    assert same_verdict(tmp_path, rebound(report, builder={"c1": "b2", "c2": "b1"}))[0] == []
    legacy = by_task_session(host, legacy=True)
    assert "bindings" not in legacy.run.manifest
    assert same_verdict(tmp_path, exported(legacy)[0])[0] == []


@pytest.mark.django_db
def test_an_adjudication_used_in_a_report_verifies_and_fails_alike_in_both(host, tmp_path):
    """Its protocol and its adjudicator's commitment are checked as the session's own are
    (issue 29 item 2), by the stand-alone verifier too, check by check."""
    run = a_run(host, adjudicated_bundle())
    copies = a_session(run, "open")
    judged(copies, {f"c{n}": "pass" for n in range(1, 7)})
    adjudication = a_session(run, "open", kind="adjudication", unknown_copies=True)
    adjudicate(adjudication, {"finding:f2": "real", "finding:f3": "cannot_tell", "copy:c6": "fail"})
    advance(adjudication, "revealed")
    report, anon = exported(advance(copies, "revealed"))
    (entry,) = report["adjudicated"]["adjudications"]
    assert entry["used"]
    problems, checks = same_verdict(tmp_path, report)
    assert problems == [] and checks > verify(tampered(report, lambda d: d.pop("adjudicated")))[1]
    assert same_verdict(tmp_path, anon)[0] == []
    place = f"adjudicated[session {adjudication.pk}]."
    data = tampered(report, lambda d: d["adjudicated"]["adjudications"][0]["protocol"]["frozen"]
                    .update(rubric="rewritten"))
    assert same_verdict(tmp_path, data)[0] == [place + "protocol.sha256 does not match the "
                                                        "frozen protocol"]
    # c3 (b2's) is no item of the adjudication (f2 on c1, f3 and c6), whichever comes first.
    data = tampered(report, lambda d: d["adjudicated"]["adjudications"][0]["assignments"][0]
                    .update(copy="c3", builder="b2"))
    problems, _ = same_verdict(tmp_path, data)
    assert problems and all(p.startswith(place) for p in problems)
    assert any("commitment" in p for p in problems)


@pytest.mark.django_db
def test_a_reasons_sample_is_drawn_again_from_its_published_seed_by_both(host, tmp_path):
    """Issue 30 item 1: the stratified sample is committed like an order: the seed's hash in the
    protocol, the seed in the report; both verifiers draw the sample again and compare."""
    bundle = make_run2_bundle()
    # A third reviewer's review makes a stratum of two, so the sample leaves a review out.
    bundle["reviews"].append({"reviewer": "r2", "copy": "c3", "verdict": "pass", "reason": "ok"})
    bundle["reviews"].append({"reviewer": "r1", "copy": "c3", "verdict": "pass", "reason": "ok"})
    run = a_run(host, bundle)
    session = a_session(run, "open", kind="reasons", reasons_per_stratum=1)
    judge = invite_and_join(session).judge
    for code in judge.assignments.values_list("code", flat=True):
        item_save(judge=judge, code=code, phase=1, value="grounded", reason="checks out")
    phase_lock(judge=judge, phase=1)
    report, anon = exported(advance(session, "revealed"))
    assert len(report["protocol"]["frozen"]["items"]) < 6  # a sample, not every review
    assert same_verdict(tmp_path, report)[0] == [] and same_verdict(tmp_path, anon)[0] == []
    # Each item names the reviewer audited; another reviewer there fails both verifiers.
    audited = report["assignments"][0]
    assert audited["item"] == f"review:{audited['reviewer']}:{audited['copy']}"
    other = "r2" if audited["reviewer"] == "r1" else "r1"
    problems = same_verdict(tmp_path, tampered(report, lambda d: d["assignments"][0].update(
        reviewer=other)))[0]
    assert problems == [f"assignments[{audited['judge']}/{audited['position']}]: reviewer "
                        f"{other!r} did not review copy {audited['copy']!r} as item "
                        f"{audited['item']!r} says"]
    data = tampered(report, lambda d: d["reasons"]["sample"].update(seed="00" * 32))
    problems = same_verdict(tmp_path, data)[0]
    assert "reasons.sample.seed does not hash to the protocol's seed_sha256" in problems
    # Another seed draws another sample (some seed of the first ten does here): both say so.
    redrawn = next(d for d in (tampered(report, lambda d, n=n: d["reasons"]["sample"].update(
        seed=f"{n:02x}" * 32)) for n in range(1, 11))
        if any("not the reviews drawn" in p for p in verify(d)[0]))
    assert "protocol.items: not the reviews drawn from the published seed per stratum" in \
        same_verdict(tmp_path, redrawn)[0]
def test_a_screening_draw_verifies_and_a_tampered_seed_fails_in_both(host, tmp_path):
    """An exclude_judge rule's screening seed (issue 30 item 5): both verifiers hash the published
    seed against the protocol's commitment and draw the published screening controls from it,
    check by check alike; another seed, or other items, fail both."""
    session, seed, screening, _plans = revealed_with_rules(host)
    report, anon = exported(session)
    assert report["preregistered_exclusions"]["screening"]["items"] == sorted(screening)
    problems, checks = same_verdict(tmp_path, report)
    without = tampered(report, lambda d: d["protocol"]["frozen"].pop("screening"))
    assert problems == [] and checks == verify(without)[1] + 2
    assert same_verdict(tmp_path, anon)[0] == []

    def other_seed(data):
        data["preregistered_exclusions"]["screening"]["seed"] = flip(seed)

    def other_items(data):
        items = data["preregistered_exclusions"]["screening"]["items"]
        spare = next(c["id"] for c in data["copies"]
                     if c["truth"] == "seeded_defect" and c["id"] not in items)
        items[0] = spare
        items.sort()

    def no_seed(data):
        data["preregistered_exclusions"]["screening"] = None

    verdicts = same_verdicts(tmp_path, [tampered(report, change)
                                        for change in (other_seed, other_items, no_seed)])
    seed_problem = ("preregistered_exclusions.screening.seed does not hash to the protocol's "
                    "screening.seed_sha256")
    items_problem = ("preregistered_exclusions.screening.items are not the controls the seed "
                     "draws at the protocol's share")
    assert verdicts[0][0][:1] == [seed_problem]
    assert verdicts[1][0] == [items_problem]
    assert verdicts[2][0] == ["preregistered_exclusions.screening: the protocol commits to a "
                              "screening seed, and the report publishes none"]
