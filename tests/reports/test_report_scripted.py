"""A scripted session from a bundle with known truth: every figure of the report's statistics
equals a literal number worked out by hand in this file, never recomputed with the code under test.

Bundle: four defective copies (d1-d4), four good ones (g1-g4), one of unknown truth (u1); d1 and g1
share cluster fnA, d2 and g2 cluster fnB. Three invited judges and one guest judge all nine items
in both phases. Two model reviewers, one of a builder's family, one review with a failed seal,
authorship guesses. The preregistration holds two rules (one fires, one does not); an amendment
after the first verdict puts a third in force. Wilson bounds below are the roots of Wilson's
quadratic, (p̂ - p)² = z² p(1 - p)/n with z = 1.959964, worked out apart from reports/stats.py.
"""

import hashlib
import json
from unittest.mock import ANY

import pytest

from blindjudge.errors import Invalid
from judging.models import Session
from judging.services import guest_join, guests_configure, phase_lock, prereg_amend, session_open
from reports.build import build_report
from reports.export import to_json
from reports.html import to_html
from tests.reports.test_report import SCHEMA_PATH, schema_errors
from tests.support.verdicts import verdict_record
from tests.worlds import a_run, a_session, advance, invite_and_join

DRAW_SEED = "5eed" * 16
WILSON = {  # (k, n) -> (low, high), 6 decimals
    (0, 1): (0.0, 0.793451), (1, 1): (0.206549, 1.0),
    (0, 2): (0.0, 0.65762), (1, 2): (0.094531, 0.905469), (2, 2): (0.34238, 1.0),
    (0, 4): (0.0, 0.489891), (1, 4): (0.045587, 0.699358), (2, 4): (0.150039, 0.849961),
    (3, 4): (0.300642, 0.954413), (4, 4): (0.510109, 1.0),
}

BUILDERS = [
    {"id": "b1", "model": "gpt-4o-2024-08-06", "family": "OpenAI"},
    {"id": "b2", "model": "claude-3-5-sonnet-20241022", "family": "Anthropic"},
    {"id": "b3", "model": "gemini-1.5-pro", "family": "Google"},
]
COPIES = [  # id, builder, truth, cluster
    ("d1", "b1", "seeded_defect", "fnA"), ("d2", "b2", "seeded_defect", "fnB"),
    ("d3", "b3", "tests_fail", ""), ("d4", "b1", "tests_fail", ""),
    ("g1", "b1", "known_good", "fnA"), ("g2", "b2", "known_good", "fnB"),
    ("g3", "b3", "tests_pass", ""), ("g4", "b2", "tests_pass", ""),
    ("u1", "b3", "unknown", ""),
]
ITEMS = [c[0] for c in COPIES]

# Planted verdicts, in item order d1 d2 d3 d4 g1 g2 g3 g4 u1 (F = fail, P = pass).
PLAN = {
    "J01": ("FFPP PPPF F", "FFFF PFPF F"),
    "J02": ("FPPP PPFP P", "FFFP PPPP P"),
    "J03": ("FFFP PFPP F", "FFFF FFFP F"),
    "J04": ("PPPP PPPP P", "FFFF FFFF F"),  # the guest
}

SEALED_REQUEST = json.dumps({"candidate_text": "…", "reviewer_profile": {}, "evidence_refs": []})
LEAKY_REQUEST = json.dumps({"candidate_text": "…", "prior_verdict": "PASS"})
# reviewer, copy, verdict, authorship guess, seal
REVIEWS = [
    ("r1", "d1", "fail", "gpt-4o", "absent"),        # model right (unique prefix), family right
    ("r1", "d2", "fail", "gpt-4o", "absent"),        # both wrong (Anthropic wrote d2)
    ("r1", "d3", "pass", "Google", "absent"),        # names a family: family right, model wrong
    ("r1", "d4", "pass", "", "absent"),
    ("r1", "g1", "pass", "claude-3-5-sonnet-20241022", "absent"),  # both wrong
    ("r1", "g2", "pass", "", "absent"),
    ("r1", "g3", "fail", "", "absent"),
    ("r1", "g4", "pass", "", "absent"),
    ("r1", "u1", "fail", "", "absent"),
    ("r2", "d1", "fail", "", "absent"),              # r2 is OpenAI: b1's copies are its family's
    ("r2", "d2", "pass", "", "sealed"),
    ("r2", "d3", "fail", "", "absent"),
    ("r2", "d4", "fail", "", "absent"),
    ("r2", "g1", "fail", "", "absent"),
    ("r2", "g2", "pass", "", "absent"),
    ("r2", "g3", "pass", "", "absent"),
    ("r2", "g4", "fail", "", "failed"),
]

PREREG = """Seeing the models will raise recall without moving judges away from truth.

```rules
[{"name": "herding", "metric": "delta_fleiss_kappa", "op": ">=", "threshold": 0.05,
  "and": {"metric": "delta_recall", "op": "<=", "threshold": 0.0}},
 {"name": "models help recall", "metric": "delta_recall", "op": ">=", "threshold": 0.25,
  "and": {"metric": "shift_away_from_truth", "op": "<=", "threshold": 0.2}}]
```
"""
AMENDMENT = """Added after the first verdict, and marked so.

```rules
[{"name": "tnr drops", "metric": "delta_tnr", "op": "<", "threshold": 0}]
```
"""


def bundle() -> bytes:
    reviews = []
    for reviewer, copy_id, verdict, guess, seal in REVIEWS:
        review = {"reviewer": reviewer, "copy": copy_id, "verdict": verdict, "reason": "r"}
        if guess:
            review["authorship_guess"] = guess
        request = {"sealed": SEALED_REQUEST, "failed": LEAKY_REQUEST}.get(seal)
        if request:
            review.update(request=request,
                          request_sha256=hashlib.sha256(request.encode("utf-8")).hexdigest())
        reviews.append(review)
    return json.dumps({
        "format": "blindjudge.run/1",
        "run": {"name": "scripted", "task": "Write add(a, b)."},
        "builders": BUILDERS,
        "copies": [{"id": c, "builder": b, "format": "text", "content": f"copy {c}\n",
                    "truth": t, **({"cluster": k} if k else {})} for c, b, t, k in COPIES],
        "reviewers": [{"id": "r1", "model": "qwen3-1.7b", "family": "Alibaba"},
                      {"id": "r2", "model": "gpt-4o-mini", "family": "OpenAI"}],
        "reviews": reviews,
        "findings": [],
    }).encode("utf-8")


def answer(judge, phase, letters):
    codes = dict(judge.assignments.values_list("item__key", "code"))
    for item, letter in zip(ITEMS, letters.replace(" ", ""), strict=True):
        verdict_record(judge=judge, code=codes[item], phase=phase,
                       value={"F": "fail", "P": "pass"}[letter])
    phase_lock(judge=judge, phase=phase)


def build_scripted(host):
    """The scripted session, revealed; returns the session."""
    session = a_session(a_run(host, bundle()), "open", rubric="Right?", preregistration=PREREG,
                        draw_seed=DRAW_SEED)
    code = guests_configure(session=session, actor="test", allow=True).guest_code
    judges = [invite_and_join(session, name=f"Judge {n}").judge for n in (1, 2, 3)]
    judges.append(guest_join(code=code, display_name="Guest", client_address="10.0.0.9").judge)
    for judge, (first, _) in zip(judges, PLAN.values(), strict=True):
        answer(judge, 1, first)
        if judge.pseudonym == "J01":
            prereg_amend(session=session, text=AMENDMENT, actor="test")
    for judge, (_, second) in zip(judges, PLAN.values(), strict=True):
        answer(judge, 2, second)
    return advance(session, "revealed")


@pytest.fixture
def scripted(host):
    return build_report(build_scripted(host))


def wilson(k, n):
    low, high = WILSON[(k, n)]
    return {"k": k, "n": n, "rate": pytest.approx(k / n), "low": pytest.approx(low, abs=5e-7),
            "high": pytest.approx(high, abs=5e-7)}


def test_per_judge_scores(scripted):
    expected = {  # judge -> phase -> ((recall k, n), (tnr k, n))
        "J01": {"1": ((2, 4), (3, 4)), "2": ((4, 4), (2, 4))},
        "J02": {"1": ((1, 4), (3, 4)), "2": ((3, 4), (4, 4))},
        "J03": {"1": ((3, 4), (3, 4)), "2": ((4, 4), (1, 4))},
        "J04": {"1": ((0, 4), (4, 4)), "2": ((4, 4), (0, 4))},
    }
    scores = {s["judge"]: s for s in scripted["scores"]["judges"]}
    assert {j: s["group"] for j, s in scores.items()} == {
        "J01": "invited", "J02": "invited", "J03": "invited", "J04": "guest"}
    for judge, phases in expected.items():
        for phase, (recall, tnr) in phases.items():
            assert scores[judge]["phases"][phase] == {"current": {
                "recall": wilson(*recall), "tnr": wilson(*tnr), "unknown_truth": 1,
                "resampled": ANY}}  # tested in test_report_pairs_resampled.py
        assert scores[judge]["unlocked_drafts"] == 0


def test_per_judge_phase_shift_with_mcnemar(scripted):
    # (pairs, right in 1, right in 2, towards, away, p): p = 2·Σ_{i≤min} C(n, i)/2ⁿ, capped at 1.
    expected = {
        "J01": {"defective": (4, 2, 4, 2, 0, 0.5), "good": (4, 3, 2, 0, 1, 1.0)},
        "J02": {"defective": (4, 1, 3, 2, 0, 0.5), "good": (4, 3, 4, 1, 0, 1.0)},
        "J03": {"defective": (4, 3, 4, 1, 0, 1.0), "good": (4, 3, 1, 0, 2, 0.5)},
        "J04": {"defective": (4, 0, 4, 4, 0, 0.125), "good": (4, 4, 0, 0, 4, 0.125)},
    }
    rows = {r["judge"]: r for r in scripted["phase_shift"]["judges"]}
    keys = ("pairs", "phase1_correct", "phase2_correct", "towards_truth", "away_from_truth",
            "p_value")
    for judge, classes in expected.items():
        assert set(rows[judge]["versions"]) == {"current"}
        for cls, figures in classes.items():
            got = rows[judge]["versions"]["current"][cls]
            assert tuple(got[k] for k in keys) == pytest.approx(figures, abs=1e-12), (judge, cls)


POOLED_INVITED = {
    # defective pairs 12: right 6 then 11; good pairs 12: right 9 then 7;
    # towards 5 + 1, away 0 + 3, over 24 pairs.
    "recall_phase1": 6 / 12, "recall_phase2": 11 / 12, "delta_recall": 5 / 12,
    "tnr_phase1": 9 / 12, "tnr_phase2": 7 / 12, "delta_tnr": -2 / 12,
    "shift_towards_truth": 6 / 24, "shift_away_from_truth": 3 / 24,
}


def test_pooled_effects_of_the_invited_group(scripted):
    invited = scripted["phase_shift"]["pooled"]["invited"]
    assert (invited["judges_in_group"], invited["judges"], invited["items"]) == (3, 3, 8)
    assert invited["paired_verdicts"] == {"defective": 12, "good": 12}
    assert invited["discordant"] == {"defective": {"towards_truth": 5, "away_from_truth": 0},
                                     "good": {"towards_truth": 1, "away_from_truth": 3}}
    values = {name: e["value"] for name, e in invited["effects"].items()}
    assert values == pytest.approx(POOLED_INVITED, abs=1e-12)


def test_pooled_intervals_are_withheld_under_20_units_and_say_why(scripted):
    # Eight items in three units (the clusters fnA and fnB, and the task of the four copies
    # without one, their own unit): fewer than 20, so no bootstrap interval (issue 28 item 3;
    # tests/reports/sections/test_pooled.py checks the intervals against loops over the draws
    # at 24 tasks), and three judges, held fixed.
    invited = scripted["phase_shift"]["pooled"]["invited"]
    assert invited["resampling"] == {
        "by": "cluster", "units": 3, "judges": 3, "conditional_on_judges": True, "method": None,
        "no_interval": "3 units (declared clusters), fewer than 20: a bootstrap over so few is "
                       "too narrow, and no other interval fits verdicts pooled over judges"}
    assert all((e["low"], e["high"]) == (None, None) for e in invited["effects"].values())
    assert scripted["protocol"]["frozen"]["resampling_unit"]["by"] == "cluster"


def test_the_guest_is_pooled_apart(scripted):
    guest = scripted["phase_shift"]["pooled"]["guest"]
    values = {name: e["value"] for name, e in guest["effects"].items()}
    assert values == pytest.approx({
        "recall_phase1": 0.0, "recall_phase2": 1.0, "delta_recall": 1.0, "tnr_phase1": 1.0,
        "tnr_phase2": 0.0, "delta_tnr": -1.0, "shift_towards_truth": 0.5,
        "shift_away_from_truth": 0.5}, abs=1e-12)
    # One judge, two items: no interval at that size (a bootstrap would print [1, 1]).
    assert guest["effects"]["delta_recall"] == {"value": 1.0, "low": None, "high": None}
    assert guest["effects"]["recall_phase1"] == {"value": 0.0, "low": None, "high": None}
    assert guest["agreement"] is None  # one judge: nothing to agree with


def test_agreement_in_each_phase_is_reported_never_used_to_decide(scripted):
    agreement = scripted["phase_shift"]["pooled"]["invited"]["agreement"]
    # Phase 1 (pass, fail) per item: d1 (0,3) d2 (1,2) d3 (2,1) d4 (3,0) g1 (3,0) g2 (2,1)
    # g3 (2,1) g4 (2,1) u1 (1,2): P̄ = 5/9, P̄e = (16² + 11²)/27² = 377/729, κ = 28/352 = 7/88.
    # Phase 2: d1 d2 d3 (0,3), d4 (1,2), g1 (2,1), g2 (1,2), g3 (2,1), g4 (2,1), u1 (1,2):
    # P̄ = 5/9 = P̄e, κ = 0. Krippendorff (nominal, 27 values): α = 1 - 26·12/(27² - Σ n_c²):
    # phase 1 1 - 312/352 = 5/44; phase 2 1 - 312/324 = 1/27.
    assert agreement == {
        "label": "reported, never used to decide",
        "phase1": {"fleiss_kappa": pytest.approx(7 / 88), "krippendorff_alpha": pytest.approx(5 / 44)},
        "phase2": {"fleiss_kappa": pytest.approx(0.0, abs=1e-12),
                   "krippendorff_alpha": pytest.approx(1 / 27)},
        "fleiss_items": 9, "fleiss_raters_per_item": 3,
        "delta_fleiss_kappa": pytest.approx(-7 / 88),
        "delta_krippendorff_alpha": pytest.approx(1 / 27 - 5 / 44),
    }


def test_decision_rules_one_fires_one_does_not(scripted):
    protocol, amendment = scripted["decision_rules"]["rule_sets"]
    assert (protocol["source"], protocol["in_force"], protocol["before_first_verdict"]) == (
        "protocol", False, None)
    assert (amendment["source"], amendment["in_force"], amendment["before_first_verdict"]) == (
        "amendment 1", True, False)
    herding, helps = protocol["rules"]
    assert (herding["name"], herding["fired"], herding["outcome"]) == ("herding", False, "not fired")
    assert [(c["metric"], c["value"], c["holds"]) for c in herding["conditions"]] == [
        ("delta_fleiss_kappa", pytest.approx(-7 / 88), False),
        ("delta_recall", pytest.approx(5 / 12), False)]
    assert (helps["name"], helps["fired"], helps["outcome"]) == ("models help recall", True, "fired")
    assert [(c["metric"], c["value"], c["holds"]) for c in helps["conditions"]] == [
        ("delta_recall", pytest.approx(5 / 12), True),
        ("shift_away_from_truth", pytest.approx(0.125), True)]
    [drops] = amendment["rules"]
    assert (drops["name"], drops["outcome"]) == ("tnr drops", "fired")
    assert drops["conditions"][0]["value"] == pytest.approx(-1 / 6)


def test_model_reviewers_pairs_authorship_and_seals(scripted):
    reviewers = {r["reviewer"]: r for r in scripted["scores"]["reviewers"]}
    assert reviewers["r1"]["seals"] == {"sealed": 0, "verdict_in_content": 0, "failed": 0,
                                      "absent": 9}
    assert reviewers["r2"]["seals"] == {"sealed": 1, "verdict_in_content": 0, "failed": 1,
                                      "absent": 6}
    r1, r2 = reviewers["r1"]["groups"], reviewers["r2"]["groups"]
    assert r1 == {"main": {"current": {"recall": wilson(2, 4), "tnr": wilson(3, 4),
                                       "unknown_truth": 1, "resampled": ANY}}}
    assert r2 == {
        "main": {"current": {"recall": wilson(1, 2), "tnr": wilson(2, 2), "unknown_truth": 0,
                             "resampled": ANY}},
        "same_family": {"current": {"recall": wilson(2, 2), "tnr": wilson(0, 1),
                                    "unknown_truth": 0, "resampled": ANY}},
        "seal_failed": {"current": {"recall": {"k": 0, "n": 0, "rate": None, "low": None,
                                               "high": None},
                                    "tnr": wilson(0, 1), "unknown_truth": 0, "resampled": ANY}},
    }
    # The pair over d2 d3 g2 g3 (r2's main reviews): d2 caught by r1, d3 by r2; g2 passed by
    # both, g3 failed by r1.
    assert scripted["model_reviewers"]["pairs"] == [
        {"reviewers": ["r1", "r2"], "conditions": ["clean", "clean"], "same_model": False,
         "same_condition": True, "shown_by_default": True, "copies": 4, "dropped_abstentions": 0,
         "catch_rate": wilson(2, 2), "tnr": wilson(1, 2)}]
    authorship = scripted["model_reviewers"]["authorship"]
    assert (authorship["builders"], authorship["families"]) == (3, 3)
    # One right model in four guesses, two right families; chance 1/3 each.
    # P(X >= 1) = 1 - (2/3)^4 = 65/81; P(X >= 2) = 1 - 16/81 - 32/81 = 33/81.
    block = {
        "guesses": 4,
        "model": {**wilson(1, 4), "chance": pytest.approx(1 / 3), "p_value": pytest.approx(65 / 81)},
        "family": {**wilson(2, 4), "chance": pytest.approx(1 / 3), "p_value": pytest.approx(33 / 81)},
    }
    assert authorship["reviewers"] == [{"reviewer": "r1", **block}]
    assert authorship["all"] == block


def test_order_effects_by_third_of_the_drawn_order(scripted):
    # Positions are drawn from the pinned seed; which item sat where is the mapping's fact, and
    # the accuracy by third is counted here from the planted letters.
    positions = {(a["judge"], a["item"]): a["position"] for a in scripted["assignments"]}
    counts = {p: {t: [0, 0] for t in ("first", "middle", "last")} for p in ("1", "2")}
    for judge in ("J01", "J02", "J03"):
        for phase in (1, 2):
            for item, letter in zip(ITEMS, PLAN[judge][phase - 1].replace(" ", ""), strict=True):
                if item == "u1":
                    continue
                third = ("first", "middle", "last")[(positions[(judge, item)] - 1) // 3]
                counts[str(phase)][third][0] += (letter == "F") == item.startswith("d")
                counts[str(phase)][third][1] += 1
    order = scripted["phase_shift"]["pooled"]["invited"]["order_effects"]
    for phase, thirds in counts.items():
        for third, (k, n) in thirds.items():
            assert (order[phase][third]["k"], order[phase][third]["n"]) == (k, n)
    assert sum(order["1"][t]["n"] for t in order["1"]) == 24
    assert sum(order["1"][t]["k"] for t in order["1"]) == 6 + 9
    assert sum(order["2"][t]["k"] for t in order["2"]) == 11 + 7


def test_the_sample_and_the_preregistration_block(scripted):
    assert scripted["sample"]["planned"] == {"items": 9, "items_per_judge": 9,
                                             "judges_invited": 3, "verdicts_per_phase": 27}
    achieved = scripted["sample"]["achieved"]
    assert achieved == {
        "judges_joined": 4, "judges_locked_phase1": 4, "judges_locked_both": 4,
        "locked_verdicts": {"1": 36, "2": 36},
        "paired_verdicts": {"defective": 16, "good": 16, "unknown": 4},
        "judges_by_group": {"invited": 3, "guest": 1},
        "judges_by_group_and_identity": {"invited": {"token": 3}, "guest": {"token": 1}},
        "judges_without_verdicts": [],
    }
    assert scripted["redactions_per_builder"] == {"b1": 0, "b2": 0, "b3": 0}
    assert list(scripted)[:7] == ["schema", "generated_at", "anonymised", "protocol", "sample",
                                  "redactions_per_builder", "blinding_statement"]
    [amendment] = scripted["protocol"]["amendments"]
    assert amendment["before_first_verdict"] is False
    assert "Judges were not asked to guess authors" in scripted["blinding_statement"]


def test_an_unknown_metric_is_refused_when_the_session_opens(run):
    draft = a_session(run, "draft")
    # Written past the draft form's own check, as a bad migration or a raw edit would.
    Session.objects.filter(pk=draft.pk).update(preregistration=(
        '```rules\n[{"name": "vibes", "metric": "accuracy", "op": ">=", "threshold": 0.5}]\n```\n'))
    draft.refresh_from_db()
    with pytest.raises(Invalid) as error:
        session_open(session=draft, actor="test")
    assert error.value.message.startswith(
        'preregistration: rules[0].metric: unknown metric "accuracy"; known: delta_fleiss_kappa')
    draft.refresh_from_db()
    assert (draft.state, draft.protocol, draft.decision_rules) == ("draft", None, [])


def test_the_scripted_report_validates_against_the_schema(scripted):
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert schema_errors(schema, json.loads(to_json(scripted))) == []


def test_a_session_nobody_judged_still_reports_and_no_rule_can_fire(run):
    report = build_report(a_session(run, "revealed", preregistration=PREREG))
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert schema_errors(schema, json.loads(to_json(report))) == []
    assert report["phase_shift"]["judges"] == [] and report["phase_shift"]["pooled"] == {}
    [protocol] = report["decision_rules"]["rule_sets"]
    assert [(r["name"], r["fired"], r["outcome"]) for r in protocol["rules"]] == [
        ("herding", False, "not computable"), ("models help recall", False, "not computable")]
    assert report["sample"]["achieved"]["judges_joined"] == 0

    page = to_html(report)
    assert page.count('class="missing">not computable</td>') == 2
