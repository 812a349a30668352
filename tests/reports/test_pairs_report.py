"""The pairs section of the report (issue 31 item 4), checked by direct counting: pairwise
accuracy against truth, decisive accuracy, what was preferred on pairs of equal truth, position
bias per judge, the phase shift; the mapping publishes the sides and both verifiers check them."""

import json

import pytest

from blindjudge.errors import Invalid
from content.truth import truth_class
from judging.enums import SessionKind, SessionState
from judging.models import Assignment
from judging.services import item_save, phase_lock, session_create
from reports.build import build_report
from reports.html import to_html
from reports.verify import verify
from tests.reports.test_builders import exported, schema_errors
from tests.reports.test_report import SCHEMA_PATH
from tests.reports.test_verify_standalone import same_verdicts
from tests.worlds import a_run, a_session, advance, invite_and_join, make_run2_bundle


@pytest.fixture
def judged(host):
    """A pairs session on run2 judged by two judges: J01 answers left in phase 1 and right in
    phase 2; J02 prefers the good copy of every truth-differing pair in phase 1 (tie elsewhere)
    and says tie everywhere in phase 2. Revealed."""
    run = a_run(host, make_run2_bundle())
    session = a_session(run, SessionState.OPEN, kind=SessionKind.PAIRS)
    one = invite_and_join(session, "One").judge
    two = invite_and_join(session, "Two").judge
    for a in Assignment.objects.filter(judge=one):
        item_save(judge=one, code=a.code, phase=1, value="left")
    for a in Assignment.objects.filter(judge=two).select_related("item__copy", "item__pair_copy"):
        good = good_side(a)
        item_save(judge=two, code=a.code, phase=1, value=good or "tie")
    for judge in (one, two):
        phase_lock(judge=judge, phase=1)
    for a in Assignment.objects.filter(judge=one):
        item_save(judge=one, code=a.code, phase=2, value="right")
    for a in Assignment.objects.filter(judge=two):
        item_save(judge=two, code=a.code, phase=2, value="tie")
    for judge in (one, two):
        phase_lock(judge=judge, phase=2)
    return advance(session, SessionState.REVEALED)


def good_side(assignment) -> str | None:
    """The side the good copy was shown on, for a truth-differing pair; None otherwise."""
    first, second = (truth_class(assignment.item.copy.truth),
                     truth_class(assignment.item.pair_copy.truth))
    if {first, second} != {"good", "defective"}:
        return None
    first_is_good = first == "good"
    on_left_is_first = not assignment.swapped
    return "left" if first_is_good == on_left_is_first else "right"


def test_accuracy_and_position_bias_by_direct_counting(judged):
    report = build_report(judged)
    errors = schema_errors(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")), exported(report))
    assert errors == [], "\n".join(errors)
    section = report["pairs"]
    assert section["pairs"] == 6 and section["truth_differing_pairs"] == 3
    one, two = section["judges"]
    sides = [good_side(a) for a in Assignment.objects.filter(judge__pseudonym="J01",
                                                             judge__session=judged)
             .select_related("item__copy", "item__pair_copy")]
    good_left = sum(side == "left" for side in sides)
    # J01 always left: right where the good copy was on the left; every answer decisive.
    assert one["phase1"]["accuracy"]["k"] == good_left and one["phase1"]["accuracy"]["n"] == 3
    assert one["phase1"]["decisive_accuracy"]["n"] == 3
    assert one["phase1"]["left_share"]["k"] == one["phase1"]["left_share"]["n"] == 6
    assert one["phase2"]["left_share"]["k"] == 0
    assert one["phase2"]["accuracy"]["k"] == 3 - good_left
    # One pair of equal truth (c1 and c3, both good): J01 said left on it in phase 1.
    assert one["phase1"]["equal_truth"]["both_good"] == {"left": 1, "right": 0, "tie": 0,
                                                          "both_bad": 0}
    # J02 preferred the good copy every time in phase 1, tied in phase 2: a tie is not right.
    assert two["phase1"]["accuracy"] == {**two["phase1"]["accuracy"], "k": 3, "n": 3}
    assert two["phase2"]["accuracy"]["k"] == 0 and two["phase2"]["decisive_accuracy"]["n"] == 0
    shift = {row["judge"]: row for row in section["phase_shift"]}
    assert (shift["J02"]["toward"], shift["J02"]["away"]) == (0, 3)
    assert (shift["J01"]["toward"], shift["J01"]["away"]) == (3 - good_left, good_left)
    invited = section["groups"][0]
    assert invited["group"] == "invited" and invited["judges"] == 2
    assert invited["phase1"]["accuracy"]["k"] == good_left + 3
    # Per-copy scores do not score preferences: no judge's recall or TNR counts a pair's answer.
    assert report["session_kind_note"].startswith("items are pairs")
    scored = [(judge["judge"], phase, measure, block[measure]["n"])
              for judge in report["scores"]["judges"]
              for phase, versions in judge["phases"].items() for block in versions.values()
              for measure in ("recall", "tnr")]
    assert len(scored) == 2 * 2 * 2 and all(n == 0 for *_, n in scored), scored


def test_the_mapping_publishes_the_sides_and_the_verifier_checks_them(judged):
    report = json.loads(json.dumps(build_report(judged)))
    assert verify(report)[0] == []
    rows = report["assignments"]
    assert all({"second_copy", "second_builder", "swapped", "first_code", "second_code"} <= set(r)
               for r in rows)
    stored = {(a.judge.pseudonym, a.position): a.swapped for a in
              Assignment.objects.filter(judge__session=judged).select_related("judge")}
    assert {(r["judge"], r["position"]): r["swapped"] for r in rows} == stored
    rows[0]["swapped"] = not rows[0]["swapped"]
    problems = verify(report)[0]
    assert any("swapped is not the side drawn" in p for p in problems)
    assert any("do not hash to the published commitment" in p for p in problems)


RULES = [{"name": "people prefer the passing copy", "metric": "pairwise_accuracy_phase1",
          "op": ">=", "threshold": 0.5},
         {"name": "no side wins", "metric": "position_bias", "op": "<", "threshold": 0.2,
          "and": {"metric": "decisive_accuracy_phase1", "op": ">", "threshold": 0.0}}]


def prereg(rules) -> str:
    return "Written before any answer.\n\n```rules\n" + json.dumps(rules) + "\n```\n"


def test_a_pairs_session_s_rules_are_evaluated_on_its_preferences(host):
    run = a_run(host, make_run2_bundle())
    session = a_session(run, SessionState.OPEN, kind=SessionKind.PAIRS,
                        preregistration=prereg(RULES))
    judge = invite_and_join(session).judge
    for a in Assignment.objects.filter(judge=judge).select_related("item__copy",
                                                                    "item__pair_copy"):
        item_save(judge=judge, code=a.code, phase=1, value=good_side(a) or "both_bad")
    phase_lock(judge=judge, phase=1)
    for a in Assignment.objects.filter(judge=judge):
        item_save(judge=judge, code=a.code, phase=2, value="keep")
    phase_lock(judge=judge, phase=2)
    report = build_report(advance(session, SessionState.REVEALED))
    sides = [good_side(a) for a in Assignment.objects.filter(judge=judge)
             .select_related("item__copy", "item__pair_copy")]
    left = sum(side == "left" for side in sides)
    rules = {r["name"]: r for r in report["decision_rules"]["rule_sets"][0]["rules"]}
    accuracy = rules["people prefer the passing copy"]["conditions"][0]
    assert (accuracy["value"], rules["people prefer the passing copy"]["outcome"]) == (1.0, "fired")
    bias = rules["no side wins"]["conditions"]
    assert bias[0]["value"] == pytest.approx(left / 3 - 0.5)
    assert bias[1]["value"] == 1.0


@pytest.mark.parametrize("kind, metric, words", [
    (SessionKind.PAIRS, "recall_phase1", "measures verdicts on single copies"),
    (SessionKind.COPIES, "pairwise_accuracy_phase1", "measures a pairs session's preferences"),
])
def test_a_rule_naming_what_the_kind_does_not_measure_is_refused(host, kind, metric, words):
    run = a_run(host, make_run2_bundle())
    with pytest.raises(Invalid, match=words):
        session_create(run=run, kind=kind, actor="test", preregistration=prereg(
            [{"name": "x", "metric": metric, "op": ">", "threshold": 0.1}]))


def test_the_html_report_shows_the_pairs_section(judged):
    html = to_html(build_report(judged))
    assert "Pairs: which copy people (and models) preferred, against truth" in html
    assert "6 pairs of two builders' copies of one task (3 of one good and one defective copy)" \
        in html
    assert html.count("Bradley–Terry ranking, invited, phase") == 2


def test_the_stand_alone_verifier_says_what_verify_report_says_of_a_pairs_report(judged, tmp_path):
    report = json.loads(json.dumps(build_report(judged)))
    flipped = json.loads(json.dumps(report))
    flipped["assignments"][0]["swapped"] = not flipped["assignments"][0]["swapped"]
    wrong_builder = json.loads(json.dumps(report))
    wrong_builder["assignments"][1]["second_builder"] = report["assignments"][1]["builder"]
    verdicts = same_verdicts(tmp_path, [report, flipped, wrong_builder])
    assert verdicts[0][0] == []
    assert any("swapped is not the side drawn" in p for p in verdicts[1][0])
    assert any("is not the builder of copy" in p for p in verdicts[2][0])


def test_model_reviewers_comparisons_counted_directly(host):
    bundle = make_run2_bundle()
    bundle["comparisons"] = [
        {"reviewer": "r1", "first": "c1", "second": "c2", "verdict": "first"},
        {"reviewer": "r1", "first": "c2", "second": "c1", "verdict": "first"},
        {"reviewer": "r1", "first": "c2", "second": "c3", "verdict": "second"},
        {"reviewer": "r1", "first": "c3", "second": "c2", "verdict": "first"},
        {"reviewer": "r1", "first": "c4", "second": "c5", "verdict": "tie"},
        {"reviewer": "r1", "first": "c1", "second": "c2", "verdict": "second",
         "condition": "told_pass"},
        {"reviewer": "r2", "first": "c1", "second": "c3", "verdict": "first"},
        {"reviewer": "r2", "first": "c4", "second": "c6", "verdict": "second"},
    ]
    run = a_run(host, bundle)
    session = a_session(run, SessionState.OPEN, kind=SessionKind.PAIRS)
    judge = invite_and_join(session).judge
    for a in Assignment.objects.filter(judge=judge):
        item_save(judge=judge, code=a.code, phase=1, value="tie")
    phase_lock(judge=judge, phase=1)
    for a in Assignment.objects.filter(judge=judge):
        item_save(judge=judge, code=a.code, phase=2, value="keep")
    phase_lock(judge=judge, phase=2)
    report = build_report(advance(session, SessionState.REVEALED))
    errors = schema_errors(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")), exported(report))
    assert errors == [], "\n".join(errors)
    r1, r2 = report["pairs"]["reviewers"]
    # r1 under the default condition: five comparisons (the told_pass one is another condition).
    assert r1["comparisons"] == 5 and r1["seals"]["absent"] == 5
    assert r1["answers"] == {"first": 3, "second": 1, "tie": 1, "both_bad": 0}
    # Right: c1 over c2 (c1 good), c3 over c2 twice; wrong: c2 over c1; the tie on c4|c5.
    assert (r1["accuracy"]["k"], r1["accuracy"]["n"]) == (3, 5)
    assert (r1["decisive_accuracy"]["k"], r1["decisive_accuracy"]["n"]) == (3, 4)
    assert (r1["first_share"]["k"], r1["first_share"]["n"]) == (3, 4)
    # c1|c2 both ways: first both times, inconsistent; c2|c3: second then first, consistent.
    assert r1["inconsistency"]["pairs"] == 2
    assert (r1["inconsistency"]["inconsistent_decisive"]["k"],
            r1["inconsistency"]["inconsistent_decisive"]["n"]) == (1, 2)
    assert r1["ranking"]["builders"] == ["b1", "b2", "b3"]
    # r2 (OpenAI) against b1's copies (OpenAI): preferred its own family's once of twice.
    assert (r2["own_family"]["k"], r2["own_family"]["n"]) == (1, 2)
    assert r1["own_family"]["n"] == 0
