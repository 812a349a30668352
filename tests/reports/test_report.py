"""The revealed report: its schema, scores, mapping, commitments, CSV, anonymised export and
verification (README.md "The report"; docs/threats.md case 32).

One realistic session is built through the services only: six judges of every admission (four
invited, one of whom is removed after locking phase 1 and one who never locks; a guest; the host),
verdicts in both phases with locks and unlocked drafts, model reviews sealed, failed and absent,
one reviewer of a builder's own family, a truth correction after the reveal. Every expected number
below is worked out by hand from the planted verdicts, not read back from the code under test.
"""

import copy
import csv
import hashlib
import io
import json
from datetime import UTC, datetime
from pathlib import Path
from unittest.mock import ANY

import pytest
from jsonschema import Draft202012Validator

from accounts.models import Judge
from blindjudge.errors import Conflict
from content.commitments import commitment_sha256
from content.draws import ITEM_CODE_ALPHABET, draw_order
from judging.models import Session, Verdict
from judging.services import (
    guest_join,
    guests_configure,
    host_join,
    judge_remove,
    phase_lock,
    prereg_amend,
    redactions_accept,
    session_create,
    session_open,
    truth_correct,
)
from reports import stats
from reports.build import REPORT_SCHEMA, build_report
from reports.export import anonymise, to_csv, to_json
from reports.verify import verify
from tests.support.verdicts import verdict_record
from tests.worlds import GOOD, a_run, a_session, advance, invite_and_join, make_bundle

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "reports" / "schemas" / "report-2.schema.json"

REQUEST_KEYS = ["candidate_text", "reviewer_profile", "evidence_refs"]
SEALED_REQUEST = json.dumps({"candidate_text": "…", "reviewer_profile": {"rubric": "add-v1"},
                             "evidence_refs": ["tests.txt"]})
SEALED_SHA = hashlib.sha256(SEALED_REQUEST.encode("utf-8")).hexdigest()
LEAKY_REQUEST = json.dumps({"candidate_text": "…", "prior_verdict": "PASS"})

PREREG = """We expect herding.

```rules
[{"name": "herding", "metric": "delta_fleiss_kappa", "op": ">=", "threshold": 0.1,
  "and": {"metric": "delta_recall", "op": "<=", "threshold": 0.0}}]
```
"""

# Formula-like text planted in reasons (CSV injection, docs/threats.md case 32).
FORMULA_REASONS = {
    "c1": "=1+2",
    "c2": "+SUM(A1:A9)",
    "c3": "-3+4",
    "c4": "@cmd",
    "c5": "\tHIDDEN",
    "c6": "plain words",
}
CR_REASON = "\r=cmd|' /C calc'!A0"  # review reasons are stored as the bundle gave them

BUILDER_OF = {"c1": "b1", "c2": "b1", "c3": "b2", "c4": "b2", "c5": "b3", "c6": "b3"}

# Planted human verdicts: judge -> phase -> item -> value ("keep" in phase 2 keeps phase 1).
J01 = {1: {"c1": "pass", "c2": "fail", "c3": "pass", "c4": "pass", "c5": "fail", "c6": "fail"},
       2: {"c1": "keep", "c2": "keep", "c3": "fail", "c4": "fail", "c5": "pass", "c6": "keep"}}
J02 = {1: {"c1": "fail", "c2": "fail", "c3": "fail", "c4": "fail", "c5": "fail", "c6": "pass"},
       2: {"c1": "pass", "c5": "pass"}}  # phase 2: drafts only, never locked
J03 = {1: {"c1": "pass", "c2": "pass", "c3": "pass", "c4": "fail", "c5": "pass", "c6": "pass"},
       2: {"c1": "keep", "c2": "fail", "c3": "keep", "c4": "keep", "c5": "keep", "c6": "keep"}}
J04 = {1: {"c1": "pass", "c2": "fail", "c3": "fail", "c4": "fail", "c5": "pass", "c6": "pass"}}
J05 = {1: {"c1": "fail", "c2": "fail", "c3": "pass", "c4": "pass", "c5": "pass", "c6": "fail"},
       2: {"c1": "pass"}}  # phase-2 draft, then removed
J06 = {1: {"c1": "pass", "c2": "fail", "c6": "pass"}}  # phase-1 drafts, never locked

# Truth: c1 good, c2 defective, c3 tests_pass corrected to tests_fail after the reveal (so
# defective now, good as imported), c4 defective, c5 good, c6 unknown (never scored).
# Expected scores: (judge, phase, truth version) -> ((recall k, n), (tnr k, n), unknown truth).
EXPECTED_JUDGE_SCORES = {
    # J01 phase 1: caught c2 only of c2 c3 c4; passed c1 not c5.
    ("J01", "1", "current"): ((1, 3), (1, 2), 1),
    ("J01", "1", "imported"): ((1, 2), (2, 3), 1),   # c3 good as imported: passed it
    ("J01", "2", "current"): ((3, 3), (2, 2), 1),
    ("J01", "2", "imported"): ((2, 2), (2, 3), 1),   # failed c3, good as imported
    ("J02", "1", "current"): ((3, 3), (0, 2), 1),
    ("J02", "1", "imported"): ((2, 2), (0, 3), 1),
    ("J02", "2", "current"): ((0, 0), (0, 0), 0),    # drafts only: nothing scored
    ("J02", "2", "imported"): ((0, 0), (0, 0), 0),
    ("J03", "1", "current"): ((1, 3), (2, 2), 1),
    ("J03", "1", "imported"): ((1, 2), (3, 3), 1),
    ("J03", "2", "current"): ((2, 3), (2, 2), 1),
    ("J03", "2", "imported"): ((2, 2), (3, 3), 1),
    ("J04", "1", "current"): ((3, 3), (2, 2), 1),
    ("J04", "1", "imported"): ((2, 2), (2, 3), 1),
    ("J04", "2", "current"): ((0, 0), (0, 0), 0),
    ("J04", "2", "imported"): ((0, 0), (0, 0), 0),
    ("J05", "1", "current"): ((1, 3), (1, 2), 1),
    ("J05", "1", "imported"): ((1, 2), (2, 3), 1),
    ("J05", "2", "current"): ((0, 0), (0, 0), 0),
    ("J05", "2", "imported"): ((0, 0), (0, 0), 0),
    ("J06", "1", "current"): ((0, 0), (0, 0), 0),    # drafts only: nothing scored
    ("J06", "1", "imported"): ((0, 0), (0, 0), 0),
    ("J06", "2", "current"): ((0, 0), (0, 0), 0),
    ("J06", "2", "imported"): ((0, 0), (0, 0), 0),
}
EXPECTED_GROUPS = {"J01": "invited", "J02": "invited", "J03": "guest",
                   "J04": "self_blinded_host", "J05": "removed", "J06": "invited"}
EXPECTED_DRAFTS = {"J01": 0, "J02": 2, "J03": 0, "J04": 0, "J05": 1, "J06": 3}
PSEUDONYMS = ("J01", "J02", "J03", "J04", "J05", "J06")

# Model reviews: (reviewer, copy, verdict, reason, seal). r2 is OpenAI, like builder b1.
REVIEWS = [
    ("r1", "c1", "pass", "fine", "absent"),
    ("r1", "c2", "fail", "subtracts", "absent"),
    ("r1", "c3", "fail", '=HYPERLINK("http://evil.example/")', "absent"),
    ("r1", "c4", "pass", "+1 looks right", "failed"),
    ("r1", "c6", "fail", "-unclear", "absent"),
    ("r2", "c1", "fail", "hmm", "absent"),            # same family (OpenAI wrote c1)
    ("r2", "c2", "fail", "@SUM(A1)", "absent"),       # same family
    ("r2", "c3", "pass", "\tlooks fine", "sealed"),
    ("r2", "c4", "fail", CR_REASON, "absent"),
    ("r2", "c5", "pass", "fine too", "failed"),
]
EXPECTED_REVIEWER_SCORES = {
    # r1 main: c1 pass (good, right), c2 fail (caught), c3 fail (caught now; wrong as imported),
    # c6 unknown; its failed-seal review of c4 (a miss) is scored apart.
    ("r1", "main", "current"): ((2, 2), (1, 1), 1),
    ("r1", "main", "imported"): ((1, 1), (1, 2), 1),
    ("r1", "seal_failed", "current"): ((0, 1), (0, 0), 0),
    ("r1", "seal_failed", "imported"): ((0, 1), (0, 0), 0),
    # r2 on OpenAI's own copies: c1 fail (good: wrong), c2 fail (caught).
    ("r2", "same_family", "current"): ((1, 1), (0, 1), 0),
    ("r2", "same_family", "imported"): ((1, 1), (0, 1), 0),
    # r2 main: c3 pass (missed now; right as imported), c4 fail (caught).
    ("r2", "main", "current"): ((1, 2), (0, 0), 0),
    ("r2", "main", "imported"): ((1, 1), (1, 1), 0),
    ("r2", "seal_failed", "current"): ((0, 0), (1, 1), 0),
    ("r2", "seal_failed", "imported"): ((0, 0), (1, 1), 0),
}

NAMES = ["Zebediah Quux", "Ada Lovelace", "Gary Guestington", "Rita Rockwell", "Nell Nolock"]
# Name parts that cannot occur by chance (not hex, not an English word of the report).
NAME_PARTS = ["Zebediah", "Lovelace", "Guestington", "Rockwell", "Nolock"]
GITHUB_LOGIN = "zebquux-gh"
CSV_HEADER = [
    "rater_kind", "rater", "group", "phase", "condition", "item", "copy", "task", "cluster",
    "builder", "builder_model", "builder_family", "truth", "verdict", "correct", "kept", "locked",
    "position", "code", "seconds_spent", "seal", "same_family", "reason", "server_seconds",
    "audited_reviewer", "excluded", "adjudicated",
]


def realistic_bundle() -> dict:
    bundle = make_bundle()
    copies = {c["id"]: c for c in bundle["copies"]}
    copies["c1"]["cluster"] = "k1"
    copies["c2"]["cluster"] = "k1"
    copies["c4"]["defect"] = "the patch subtracts"
    copies["c5"]["content"] = "Written by Gemini.\n\n```\n" + GOOD + "```"
    reviews = []
    for reviewer, copy_id, verdict, reason, seal in REVIEWS:
        review = {"reviewer": reviewer, "copy": copy_id, "verdict": verdict, "reason": reason}
        if seal == "sealed":
            review.update(request=SEALED_REQUEST, request_sha256=SEALED_SHA)
        elif seal == "failed":
            review.update(request=LEAKY_REQUEST,
                          request_sha256=hashlib.sha256(LEAKY_REQUEST.encode()).hexdigest())
        reviews.append(review)
    reviews[0]["authorship_guess"] = "gpt-4o"
    bundle["reviews"] = reviews
    return bundle


def codes_of(judge) -> dict:
    return dict(judge.assignments.values_list("item__key", "code"))


def answer(judge, phase, plan, reasons=None, seconds=None):
    codes = codes_of(judge)
    for item, value in plan.items():
        verdict_record(judge=judge, code=codes[item], phase=phase, value=value,
                       reason=(reasons or {}).get(item, ""), seconds_spent=(seconds or {}).get(item, 0))


def build_revealed(host, draw_seed="", url_id=""):
    """The realistic revealed session; returns (session, judges by pseudonym).

    With a pinned `draw_seed` every draw (allocation, orders, codes, salts, guest code) replays;
    a given `url_id` replaces the session's random one before anything hashes it.
    """
    run = a_run(host, realistic_bundle())
    session = session_create(run=run, kind="copies", actor="test", rubric="Is add() right?",
                             preregistration=PREREG, scorecards=True, draw_seed=draw_seed).session
    if url_id:
        Session.objects.filter(pk=session.pk).update(url_id=url_id)
        session.refresh_from_db()
    session = redactions_accept(session=session, patterns=["Gemini"], actor="test")
    session = session_open(session=session, actor="test")
    guest_code = guests_configure(session=session, actor="test", allow=True, cap=3).guest_code

    j01 = invite_and_join(session, name=NAMES[0]).judge
    j02 = invite_and_join(session, name=NAMES[1]).judge
    j03 = guest_join(code=guest_code, display_name=NAMES[2], client_address="10.1.2.3").judge
    j04 = host_join(session=session, host=host).judge
    j05 = invite_and_join(session, name=NAMES[3]).judge
    j06 = invite_and_join(session, name=NAMES[4]).judge
    prereg_amend(session=session, text="Amendment before any verdict.", actor="test")

    answer(j01, 1, J01[1], reasons=FORMULA_REASONS, seconds={"c1": 12.5, "c2": 3})
    phase_lock(judge=j01, phase=1)
    answer(j01, 2, J01[2], seconds={"c3": 4.25})
    phase_lock(judge=j01, phase=2)
    answer(j02, 1, J02[1])
    phase_lock(judge=j02, phase=1)
    answer(j02, 2, J02[2])
    answer(j03, 1, J03[1])
    phase_lock(judge=j03, phase=1)
    answer(j03, 2, J03[2])
    phase_lock(judge=j03, phase=2)
    answer(j04, 1, J04[1])
    phase_lock(judge=j04, phase=1)
    answer(j05, 1, J05[1])
    phase_lock(judge=j05, phase=1)
    answer(j05, 2, J05[2])
    judge_remove(judge=j05, actor="test")
    answer(j06, 1, J06[1])

    session = advance(session, "revealed")
    truth_correct(run=run, item="c3", truth="tests_fail", note="the tests missed an overflow",
                  actor="test")
    judges = {j.pseudonym: j for j in (j01, j02, j03, j04, j05, j06)}
    return session, judges


@pytest.fixture
def revealed(host):
    return build_revealed(host)


@pytest.fixture
def report(revealed):
    return build_report(revealed[0])


@pytest.fixture(scope="module")
def schema():
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def schema_errors(schema, instance):
    validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(instance)]


def exported(report) -> dict:
    """The report as a file reader sees it: the JSON export, parsed."""
    return json.loads(to_json(report))


# --- Schema --------------------------------------------------------------------------------------

def test_the_schema_is_valid_draft_2020_12_and_documents_every_field(schema):
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["properties"]["schema"]["const"] == REPORT_SCHEMA
    undocumented = []

    def walk(node, path):
        if isinstance(node, dict):
            for name, sub in node.get("properties", {}).items():
                documented = "description" in sub or (
                    "$ref" in sub and "description" in _resolve(schema, sub["$ref"]))
                if path[:1] not in (["if"], ["then"]) and not documented:
                    undocumented.append("/".join(path + [name]))
            for key, value in node.items():
                walk(value, path + [key])
        elif isinstance(node, list):
            for i, value in enumerate(node):
                walk(value, path + [str(i)])

    walk(schema, [])
    assert undocumented == []


def _resolve(schema, ref):
    node = schema
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return node


def test_the_schema_reuses_the_models_help_text(schema):
    props = schema["properties"]
    assert props["run"]["properties"]["bundle_sha256"]["description"] == (
        "SHA-256 of the bundle file's bytes as imported.")
    judge = props["judges"]["items"]["properties"]
    assert judge["pseudonym"]["description"] == "J01, J02, … by order of admission."
    assignment = props["assignments"]["items"]["properties"]
    assert assignment["code"]["description"] == (
        "The item code this judge alone sees: a label, not a credential.")
    verdict = props["verdicts"]["items"]["properties"]
    assert verdict["kept"]["description"] == "Phase 2 only: the judge kept their phase-1 verdict."


def test_the_report_and_the_anonymised_export_validate_against_the_schema(report, schema):
    assert schema_errors(schema, exported(report)) == []
    assert schema_errors(schema, exported(anonymise(report))) == []


def test_the_schema_fails_when_the_report_grows_an_undocumented_field(report, schema):
    data = exported(report)
    grown = copy.deepcopy(data)
    grown["surprise"] = 1
    assert schema_errors(schema, grown) == [
        "[]: Additional properties are not allowed ('surprise' was unexpected)"]
    grown = copy.deepcopy(data)
    grown["judges"][0]["email"] = "x@example.org"
    assert schema_errors(schema, grown) == [
        "['judges', 0]: Additional properties are not allowed ('email' was unexpected)"]
    grown = copy.deepcopy(data)
    grown["scores"]["judges"][0]["phases"]["1"]["current"]["recall"]["p"] = 0.5
    assert schema_errors(schema, grown) == [
        "['scores', 'judges', 0, 'phases', '1', 'current', 'recall']: Additional properties are "
        "not allowed ('p' was unexpected)"]
    grown = copy.deepcopy(data)
    grown["scores"]["reviewers"][0]["groups"]["vote"] = grown["scores"]["reviewers"][0]["groups"]["main"]
    assert schema_errors(schema, grown) == [
        "['scores', 'reviewers', 0, 'groups']: Additional properties are not allowed ('vote' was "
        "unexpected)"]


def test_an_anonymised_report_with_a_name_left_in_fails_the_schema(report, schema):
    leaky = exported(anonymise(report))
    leaky["judges"][0]["display_name"] = "Zebediah Quux"
    assert schema_errors(schema, leaky) == ["['judges', 0, 'display_name']: 'Zebediah Quux' is not "
                                            "of type 'null'"]


# --- Before the reveal ---------------------------------------------------------------------------

def test_the_report_is_refused_before_the_reveal(open_session, invited_judge):
    with pytest.raises(Conflict) as error:
        build_report(open_session)
    assert error.value.message == (
        f"session {open_session.pk} is open; the report exists after the reveal")
    closed = advance(open_session, "closed")
    with pytest.raises(Conflict) as error:
        build_report(closed)
    assert error.value.message == (
        f"session {open_session.pk} is closed; the report exists after the reveal")


# --- Scores --------------------------------------------------------------------------------------

def rate(k, n):
    if n == 0:
        return {"k": 0, "n": 0, "rate": None, "low": None, "high": None}
    low, high = stats.wilson_interval(k, n)
    return {"k": k, "n": n, "rate": k / n, "low": low, "high": high}


def expected_score(recall, tnr, unknown, resampled=ANY):
    """A score's Wilson figures; its interval by cluster or task is tested in
    test_report_pairs_resampled.py, so any is accepted here unless given."""
    return {"recall": rate(*recall), "tnr": rate(*tnr), "unknown_truth": unknown,
            "resampled": resampled}


def test_per_judge_recall_and_tnr_are_what_the_planted_verdicts_imply(report):
    scores = {s["judge"]: s for s in report["scores"]["judges"]}
    assert list(scores) == list(PSEUDONYMS)
    for (judge, phase, version), (recall, tnr, unknown) in EXPECTED_JUDGE_SCORES.items():
        got = scores[judge]["phases"][phase][version]
        assert got == expected_score(recall, tnr, unknown), (judge, phase, version)
    for judge, entry in scores.items():
        assert set(entry["phases"]) == {"1", "2"}
        assert set(entry["phases"]["1"]) == {"current", "imported"}
        assert entry["group"] == EXPECTED_GROUPS[judge]
        assert entry["unlocked_drafts"] == EXPECTED_DRAFTS[judge], judge


def test_wilson_intervals_are_the_stats_module_s(report):
    seen = 0
    for entry in report["scores"]["judges"] + report["scores"]["reviewers"]:
        blocks = entry["phases"] if "phases" in entry else entry["groups"]
        for versions in blocks.values():
            for score in versions.values():
                for key in ("recall", "tnr"):
                    r = score[key]
                    if r["n"] == 0:
                        assert (r["rate"], r["low"], r["high"]) == (None, None, None)
                    else:
                        assert (r["low"], r["high"]) == stats.wilson_interval(r["k"], r["n"])
                    seen += 1
    # judges: 6 × 2 phases × 2 versions × 2 rates; reviewers: 5 groups × 2 versions × 2 rates
    assert seen == 6 * 2 * 2 * 2 + 5 * 2 * 2
    # A worked value: 1 of 3 at 95%: z = 1.959964, centre = 0.4043, half-width = 0.3428.
    one_of_three = rate(1, 3)
    assert one_of_three["low"] == pytest.approx(0.0615, abs=1e-4)
    assert one_of_three["high"] == pytest.approx(0.7923, abs=1e-4)


def test_unknown_truth_is_never_scored_and_drafts_are_marked(report):
    c6 = [v for v in report["verdicts"] if v["item"] == "c6"]
    assert len(c6) == 8  # J01 ×2, J02, J03 ×2, J04, J05, J06
    assert {(v["truth"], v["correct"]) for v in c6} == {("unknown", None)}
    drafts = sorted((v["judge"], v["phase"], v["item"]) for v in report["verdicts"] if not v["locked"])
    assert drafts == [("J02", 2, "c1"), ("J02", 2, "c5"), ("J05", 2, "c1"), ("J06", 1, "c1"),
                      ("J06", 1, "c2"), ("J06", 1, "c6")]
    kept = sorted((v["judge"], v["item"], v["value"]) for v in report["verdicts"] if v["kept"])
    assert kept == [("J01", "c1", "pass"), ("J01", "c2", "fail"), ("J01", "c6", "fail"),
                    ("J03", "c1", "pass"), ("J03", "c3", "pass"), ("J03", "c4", "fail"),
                    ("J03", "c5", "pass"), ("J03", "c6", "pass")]


def test_judges_are_grouped_by_admission_and_removal(report):
    judges = {j["pseudonym"]: j for j in report["judges"]}
    assert {p: j["group"] for p, j in judges.items()} == EXPECTED_GROUPS
    assert [(j["admitted_as"], j["status"]) for j in judges.values()] == [
        ("invited", "active"), ("invited", "active"), ("guest", "active"), ("host", "active"),
        ("invited", "removed"), ("invited", "active")]
    assert judges["J04"]["display_name"] == "alice"
    assert judges["J05"]["removed_at"] is not None and judges["J01"]["removed_at"] is None
    assert (judges["J02"]["phase1_locked_at"] is not None, judges["J02"]["phase2_locked_at"]) == (
        True, None)


def test_model_reviewers_are_scored_with_same_family_and_failed_seals_apart(report):
    reviewers = {r["reviewer"]: r["groups"] for r in report["scores"]["reviewers"]}
    assert {r: sorted(g) for r, g in reviewers.items()} == {
        "r1": ["main", "seal_failed"], "r2": ["main", "same_family", "seal_failed"]}
    for (reviewer, group, version), (recall, tnr, unknown) in EXPECTED_REVIEWER_SCORES.items():
        got = reviewers[reviewer][group][version]
        assert got == expected_score(recall, tnr, unknown), (reviewer, group, version)
    reviews = {(r["reviewer"], r["copy"]): r for r in report["reviews"]}
    assert {k: r["seal"] for k, r in reviews.items()} == {
        (reviewer, copy_id): seal for reviewer, copy_id, _, _, seal in REVIEWS}
    assert sorted(k for k, r in reviews.items() if r["same_family"]) == [("r2", "c1"), ("r2", "c2")]
    assert reviews[("r1", "c1")]["authorship_guess"] == "gpt-4o"
    assert reviews[("r2", "c3")]["request_sha256"] == SEALED_SHA
    assert reviews[("r1", "c4")]["seal_reason"] == (
        "unexpected keys: prior_verdict; missing keys: reviewer_profile, evidence_refs")
    assert reviews[("r2", "c3")]["seal_reason"] is None


def test_a_truth_correction_scores_under_both_versions(report):
    [correction] = report["truth_corrections"]
    assert {k: v for k, v in correction.items() if k != "corrected_at"} == {
        "item": "c3", "old_truth": "tests_pass", "new_truth": "tests_fail",
        "note": "the tests missed an overflow"}
    c3 = next(c for c in report["copies"] if c["id"] == "c3")
    assert (c3["truth"], c3["imported_truth"]) == ("tests_fail", "tests_pass")


def test_without_a_correction_only_current_scores_are_given(open_session, invited_judge):
    answer(invited_judge, 1, {"c1": "pass", "c2": "fail", "c3": "pass", "c4": "pass", "c5": "pass",
                      "c6": "pass"})
    phase_lock(judge=invited_judge, phase=1)
    report = build_report(advance(open_session, "revealed"))
    [entry] = report["scores"]["judges"]
    assert entry["phases"]["1"] == {"current": expected_score((1, 2), (3, 3), 1)}
    assert report["truth_corrections"] == []


# --- Mapping, commitments ------------------------------------------------------------------------

def test_the_mapping_has_bundle_ids_builders_and_defect_notes(revealed, report):
    _, judges = revealed
    assignments = report["assignments"]
    assert len(assignments) == 36
    for pseudonym, judge in judges.items():
        mine = [a for a in assignments if a["judge"] == pseudonym]
        assert [a["position"] for a in mine] == [1, 2, 3, 4, 5, 6]
        assert {a["item"]: a["code"] for a in mine} == codes_of(judge)
        assert all(set(a["code"]) <= set(ITEM_CODE_ALPHABET) for a in mine)
        assert [a["item"] for a in mine] == draw_order(judge.order_seed, [a["item"] for a in mine])
    assert {(a["item"], a["copy"], a["builder"]) for a in assignments} == {
        (c, c, b) for c, b in BUILDER_OF.items()}
    copies = {c["id"]: c for c in report["copies"]}
    assert {c: copies[c]["defect"] for c in copies} == {
        "c1": "", "c2": "subtracts", "c3": "", "c4": "the patch subtracts", "c5": "", "c6": ""}
    assert {c: copies[c]["builder"] for c in copies} == BUILDER_OF
    assert {c: copies[c]["cluster"] for c in copies} == {
        "c1": "k1", "c2": "k1", "c3": None, "c4": None, "c5": None, "c6": None}
    assert report["builders"][0] == {"id": "b1", "model": "gpt-4o-2024-08-06", "family": "OpenAI"}
    assert report["redactions_per_builder"] == {"b1": 0, "b2": 0, "b3": 1}


def test_commitments_are_published_with_their_salts_and_recompute(revealed, report):
    session, judges = revealed
    for entry in report["judges"]:
        judge = Judge.objects.get(pk=judges[entry["pseudonym"]].pk)
        assert entry["commitment"] == {"sha256": judge.commitment_sha256,
                                       "salt": judge.commitment_salt,
                                       "order_seed": judge.order_seed,
                                       "canonical": "jcs-rfc8785"}
        mine = [a for a in report["assignments"] if a["judge"] == entry["pseudonym"]]
        assert commitment_sha256(session_url_id=session.url_id, pseudonym=entry["pseudonym"],
                                 order_seed=judge.order_seed, salt=judge.commitment_salt,
                                 assignments=mine) == judge.commitment_sha256
    assert report["protocol"]["sha256"] == session.protocol_sha256
    assert [a["text"] for a in report["protocol"]["amendments"]] == ["Amendment before any verdict."]
    assert report["protocol"]["amendments"][0]["before_first_verdict"] is True
    assert [r["name"] for r in report["protocol"]["decision_rules_in_force"]] == ["herding"]


# --- CSV -----------------------------------------------------------------------------------------

def csv_table(report):
    text = to_csv(report)
    reader = csv.reader(io.StringIO(text, newline=""))
    header, *rows = list(reader)
    return header, [dict(zip(header, row, strict=True)) for row in rows]


def test_the_csv_has_one_row_per_verdict_and_per_review(report):
    header, rows = csv_table(report)
    assert header == CSV_HEADER
    human = [r for r in rows if r["rater_kind"] == "human"]
    model = [r for r in rows if r["rater_kind"] == "model"]
    assert len(human) == 12 + 8 + 12 + 6 + 7 + 3 == len(report["verdicts"])
    assert len(model) == len(REVIEWS) == len(report["reviews"])
    assert len(rows) == len(human) + len(model)
    assert {r["rater"] for r in human} == {*NAMES, "alice"}
    assert {(r["rater"], r["group"]) for r in model} == {
        ("r1", "main"), ("r1", "seal_failed"), ("r2", "same_family"), ("r2", "main"),
        ("r2", "seal_failed")}
    row = next(r for r in human if r["rater"] == "Zebediah Quux" and r["item"] == "c1"
               and r["phase"] == "1")
    assert {k: v for k, v in row.items() if k not in ("position", "code", "server_seconds")} == {
        "rater_kind": "human", "rater": "Zebediah Quux", "group": "invited", "phase": "1",
        "condition": "", "item": "c1", "copy": "c1", "task": "task", "cluster": "k1", "builder": "b1",
        "builder_model": "gpt-4o-2024-08-06", "builder_family": "OpenAI", "truth": "known_good",
        "verdict": "pass", "correct": "True",
        "kept": "False", "locked": "True", "seconds_spent": "12.5", "seal": "",
        "same_family": "", "reason": "'=1+2", "audited_reviewer": "", "excluded": "False",
        "adjudicated": ""}
    assert row["position"].isdigit() and len(row["code"]) == 4
    # The server's interval since the judge's previous answer: a number, or empty for the first.
    assert all(r["server_seconds"] == "" or float(r["server_seconds"]) >= 0 for r in human)
    assert any(r["server_seconds"] for r in human) and any(not r["server_seconds"] for r in human)
    assert not any(r["server_seconds"] for r in model)
    # c1 and c2 name cluster k1; the others none (an empty cell), on human and model rows alike.
    assert {(r["rater_kind"], r["copy"], r["cluster"]) for r in rows} == {
        (kind, c, "k1" if c in ("c1", "c2") else "") for kind in ("human", "model")
        for c in BUILDER_OF}


def test_formula_like_csv_cells_are_neutralised_and_numbers_are_not(report):
    _, rows = csv_table(report)
    j01 = {r["item"]: r for r in rows if r["rater"] == "Zebediah Quux" and r["phase"] == "1"}
    assert {item: r["reason"] for item, r in j01.items()} == {
        "c1": "'=1+2", "c2": "'+SUM(A1:A9)", "c3": "'-3+4", "c4": "'@cmd", "c5": "'\tHIDDEN",
        "c6": "plain words"}
    reviews = {(r["rater"], r["copy"]): r["reason"] for r in rows if r["rater_kind"] == "model"}
    assert reviews[("r1", "c3")] == "'=HYPERLINK(\"http://evil.example/\")"
    assert reviews[("r1", "c4")] == "'+1 looks right"
    assert reviews[("r1", "c6")] == "'-unclear"
    assert reviews[("r2", "c2")] == "'@SUM(A1)"
    assert reviews[("r2", "c3")] == "'\tlooks fine"
    assert reviews[("r2", "c4")] == "'" + CR_REASON
    assert reviews[("r1", "c1")] == "fine"
    # Numbers stay numbers: no apostrophe on times, positions or phases.
    assert (j01["c1"]["seconds_spent"], j01["c2"]["seconds_spent"]) == ("12.5", "3.0")
    assert all(r["position"].isdigit() for r in rows if r["rater_kind"] == "human")
    assert {r["phase"] for r in rows} == {"1", "2", ""}
    assert not any(cell.startswith("'") for r in rows for k, cell in r.items() if k != "reason")
    assert any(r["server_seconds"] for r in rows)  # among the numbers left as they are


# --- Anonymised export and verification ----------------------------------------------------------

def test_the_anonymised_export_names_nobody_and_still_verifies(revealed, report):
    _, judges = revealed
    # A judge's GitHub login as the (not yet built) GitHub sign-in would bind it.
    Judge.objects.filter(pk=judges["J02"].pk).update(github_login=GITHUB_LOGIN, github_id=583231)
    report = build_report(revealed[0])
    assert {j["pseudonym"]: j["name"] for j in report["judges"]}["J02"] == GITHUB_LOGIN
    plain = to_json(report)
    for secret in (*NAMES, GITHUB_LOGIN, "alice"):
        assert secret.encode() in plain  # positive control: the host's report names people
    anon = to_json(anonymise(report))
    folded = anon.decode("utf-8").casefold()
    for secret in (*NAMES, *NAME_PARTS, GITHUB_LOGIN, "alice"):
        assert secret.casefold() not in folded, secret
    data = json.loads(anon)
    assert data["anonymised"] is True
    assert [(j["name"], j["display_name"], j["github_login"]) for j in data["judges"]] == [
        (p, None, None) for p in PSEUDONYMS]
    assert verify(data) == ([], VERIFY_CHECKS)
    assert report["anonymised"] is False  # anonymise() copies; the host's report is untouched


# run 1 + bundle 1 + run record 1 + tasks (one statement's hash + the run/1 statement + copies'
# tasks) + builders (1 + 3) + reviewers (1 + 2) + copies (1 + 6) + the copies' bindings in the
# manifest (1 + 6) + protocol 1 + per judge (commitment 1 + order 1 + 6 × (order key + builder)) × 6
TASK_CHECKS = 3
VERIFY_CHECKS = 3 + TASK_CHECKS + 4 + 3 + 7 + 7 + 1 + 6 * (2 + 6 * 2)

COMMITMENT = ("judges[J01].commitment: the published mapping, order seed and salt do not hash to "
              "the published commitment")
ORDER = "judges[J01]: positions are not the order drawn from the order seed"


def flip_hex(value: str) -> str:
    return ("1" if value[0] != "1" else "2") + value[1:]


def j01(data, position):
    return next(a for a in data["assignments"] if a["judge"] == "J01" and a["position"] == position)


def test_verify_passes_on_a_real_export(report):
    assert verify(exported(report)) == ([], VERIFY_CHECKS)


def test_verify_fails_on_a_changed_code(report):
    data = exported(report)
    first = j01(data, 1)
    first["code"] = next(ch for ch in ITEM_CODE_ALPHABET if ch != first["code"][0]) + first["code"][1:]
    assert verify(data)[0] == [COMMITMENT]


def test_verify_fails_on_a_changed_item(report):
    data = exported(report)
    first = j01(data, 1)
    first["item"] = first["item"][:-1] + "9"  # one byte: c4 -> c9
    items = [a["item"] for a in sorted((a for a in data["assignments"] if a["judge"] == "J01"),
                                       key=lambda a: a["position"])]
    seed = next(j for j in data["judges"] if j["pseudonym"] == "J01")["commitment"]["order_seed"]
    order = [ORDER] if draw_order(seed, items) != items else []
    assert verify(data)[0] == [COMMITMENT, *order,
                               "assignments[J01/1].order_key does not match HMAC(order seed, item)"]


def test_verify_fails_on_a_changed_builder(report):
    data = exported(report)
    first = j01(data, 1)
    builder = first["builder"]
    first["builder"] = "b1" if builder != "b1" else "b2"
    assert verify(data)[0] == [
        COMMITMENT,
        f"assignments[J01/1]: builder {first['builder']!r} is not the builder of copy "
        f"{first['copy']!r} in copies"]


def test_verify_fails_when_the_report_reattributes_a_copy(report):
    data = exported(report)
    c1 = next(c for c in data["copies"] if c["id"] == "c1")
    c1["builder"] = "b2"  # the mapping still commits to b1, and the manifest binds c1 to b1
    problems, _ = verify(data)
    positions = sorted((a["judge"], a["position"]) for a in data["assignments"] if a["copy"] == "c1")
    assert problems == ["copies[c1].builder is 'b2'; the manifest binds the copy to builder 'b1'"] + [
        f"assignments[{j}/{p}]: builder 'b1' is not the builder of copy 'c1' in copies"
        for j, p in positions]


def test_verify_fails_when_a_builder_identity_is_swapped(report):
    data = exported(report)
    data["builders"][0]["model"], data["builders"][1]["model"] = (
        data["builders"][1]["model"], data["builders"][0]["model"])
    assert verify(data)[0] == [
        "builders[b1]: the id, model and family do not hash to the manifest's entry",
        "builders[b2]: the id, model and family do not hash to the manifest's entry"]


def test_verify_fails_on_a_changed_salt(report):
    data = exported(report)
    commitment = data["judges"][0]["commitment"]
    commitment["salt"] = flip_hex(commitment["salt"])
    assert verify(data)[0] == [COMMITMENT]


def test_verify_fails_on_a_changed_order_seed(report):
    data = exported(report)
    commitment = data["judges"][0]["commitment"]
    commitment["order_seed"] = flip_hex(commitment["order_seed"])
    items = [j01(data, p)["item"] for p in range(1, 7)]
    order = [ORDER] if draw_order(commitment["order_seed"], items) != items else []
    assert verify(data)[0] == [COMMITMENT, *order] + [
        f"assignments[J01/{p}].order_key does not match HMAC(order seed, item)" for p in range(1, 7)]


def test_verify_fails_on_a_changed_protocol(report):
    data = exported(report)
    data["protocol"]["frozen"]["rubric"] = "Is add() wrong?"
    assert verify(data)[0] == ["protocol.sha256 does not match the frozen protocol"]
    data = exported(report)
    data["protocol"]["sha256"] = flip_hex(data["protocol"]["sha256"])
    assert verify(data)[0] == ["protocol.sha256 does not match the frozen protocol"]


def test_verify_fails_on_a_changed_manifest(report):
    data = exported(report)
    data["run"]["manifest"]["reviews"]["r1/c1"] = flip_hex(data["run"]["manifest"]["reviews"]["r1/c1"])
    assert verify(data)[0] == ["run.manifest_sha256 does not match the published manifest"]
    data = exported(report)
    data["run"]["manifest"]["copies"]["c2"] = flip_hex(data["run"]["manifest"]["copies"]["c2"])
    assert verify(data)[0] == ["run.manifest_sha256 does not match the published manifest",
                               "copies[c2].content_sha256 differs from the manifest's"]


def test_verify_fails_on_a_changed_session_id(report):
    data = exported(report)
    url_id = data["session"]["url_id"]
    data["session"]["url_id"] = ("x" if url_id[0] != "x" else "y") + url_id[1:]
    assert verify(data)[0] == [COMMITMENT.replace("J01", p) for p in PSEUDONYMS]


def test_verify_names_a_malformed_report():
    assert verify({"run": {}}) == (["the report is malformed: KeyError: 'manifest'"], 0)


# --- Findings sessions ---------------------------------------------------------------------------

def test_a_findings_session_report_validates_scores_and_verifies(run, schema):
    session = a_session(run, "open", kind="findings")
    judge = invite_and_join(session, name="Finder").judge
    answer(judge, 1, {"f1": "real", "f2": "real"})
    phase_lock(judge=judge, phase=1)
    report = build_report(advance(session, "revealed"))
    assert schema_errors(schema, exported(report)) == []
    assert verify(exported(report)) == ([], 3 + TASK_CHECKS + 4 + 3 + 7 + 7 + 1 + (2 + 2 * 2))
    [entry] = report["scores"]["judges"]
    # f1 is real (caught), f2 a false alarm judged real (not a true negative).
    assert entry["phases"]["1"] == {"current": expected_score((1, 1), (0, 1), 0)}
    assert {(a["item"], a["copy"], a["builder"]) for a in report["assignments"]} == {
        ("f1", "c2", "b1"), ("f2", "c1", "b1")}
    assert {i["key"] for i in report["protocol"]["frozen"]["items"] if "finding_sha256" in i} == {
        "f1", "f2"}


def test_verdict_times_read_as_python_writes_them_in_iso_8601(revealed):
    # The report has the database format the timestamps; they must be exactly what
    # datetime.isoformat() gives, whole seconds (no fraction) and trailing zeros included.


    session, judges = revealed
    draft = Verdict.objects.get(assignment__judge=judges["J02"], phase=2,
                                assignment__item__key="c1")
    Verdict.objects.filter(pk=draft.pk).update(
        created_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        updated_at=datetime(2026, 1, 2, 3, 4, 5, 500000, tzinfo=UTC))
    report = build_report(session)
    expected = {
        (v.assignment.judge.pseudonym, v.assignment.item.key, v.phase):
        (v.created_at.isoformat(), v.updated_at.isoformat())
        for v in Verdict.objects.filter(assignment__judge__session=session)
        .select_related("assignment__judge", "assignment__item")
    }
    got = {(v["judge"], v["item"], v["phase"]): (v["created_at"], v["updated_at"])
           for v in report["verdicts"]}
    assert got == expected
    assert got[("J02", "c1", 2)] == ("2026-01-02T03:04:05+00:00", "2026-01-02T03:04:05.500000+00:00")


def test_the_json_file_round_trips_and_puts_each_verdict_on_its_own_line(report):
    text = to_json(report).decode("utf-8")
    assert json.loads(text) == json.loads(json.dumps(report))
    verdict_lines = [line for line in text.splitlines()
                     if line.startswith('    {"judge": "J0') and '"phase": ' in line]
    assert len(verdict_lines) == len(report["verdicts"])
    assert text.startswith('{\n  "schema": "blindjudge.report/2",\n') and text.endswith("}\n")
