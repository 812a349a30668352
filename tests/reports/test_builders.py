"""The builders compared, judged blind (issue 14 item 1): report["builders_compared"].

Runs built through the real import and services, judged by real judges of every admission, and
revealed; every expected rate, difference and p-value is worked out by hand below from the
planted truths, verdicts and reviews (never read back from the code under test), and the
intervals are checked against an independent loop over the same draws. Then the pure helpers of
reports/sections/builders.py against hand vectors and scipy.

Copy ids are "<task>-<builder>"; the control copies (known_good, seeded_defect: the host's) end in
"-ctl" and must never count in a builder's rates.
"""

import hashlib
import html
import itertools
import json
import math
import re
from fractions import Fraction

import numpy as np
import pytest

from accounts.models import Judge
from judging.selectors.scorecard import judge_scorecard
from judging.services import (
    guest_join,
    guests_configure,
    host_join,
    judge_remove,
    phase_lock,
    session_create,
    session_open,
)
from reports import stats
from reports.build import build_report
from reports.export import anonymise, to_json
from reports.html import to_html
from reports.sections import builders as section
from reports.sections.pooled import BOOTSTRAP_SEED, RESAMPLES
from tests.reports.test_report import SCHEMA_PATH, schema_errors
from tests.support.verdicts import verdict_record
from tests.worlds import a_run, advance, client_as, invite_and_join, make_bundle

BUILDERS = {"b1": ("gpt-4o-2024-08-06", "OpenAI"), "b2": ("claude-3-5-sonnet-20241022", "Anthropic"),
            "b3": ("gemini-1.5-pro", "Google")}
REVIEWERS = {"r1": ("qwen3-1.7b", "Alibaba"), "r2": ("gpt-4o-mini", "OpenAI")}
LEAKY_REQUEST = json.dumps({"candidate_text": "…", "prior_verdict": "PASS"})


def rate(k, n):
    if n == 0:
        return {"k": 0, "n": 0, "rate": None, "low": None, "high": None}
    low, high = stats.wilson_interval(k, n)
    return {"k": k, "n": n, "rate": k / n, "low": low, "high": high}


def matrix_bundle(truths: dict, *, abstain_scoring="not_flagged", reviews=(), builders=("b1", "b2"),
                  reviewers=("r1", "r2"), findings=None, clusters=None) -> dict:
    """A run/2 bundle: `truths` maps copy id "<task>-<builder>[-ctl]" to its truth; reviews are
    (reviewer, copy, verdict, condition or None, seal "failed" or None)."""
    tasks = sorted({copy_id.split("-")[0] for copy_id in truths}, key=lambda t: int(t[1:]))
    review_rows = []
    for reviewer, copy_id, verdict, condition, seal in reviews:
        row = {"reviewer": reviewer, "copy": copy_id, "verdict": verdict,
               "reason": f"{reviewer} on {copy_id}"}
        if condition:
            row["condition"] = condition
        if seal == "failed":
            row.update(request=LEAKY_REQUEST,
                       request_sha256=hashlib.sha256(LEAKY_REQUEST.encode()).hexdigest())
        review_rows.append(row)
    return {
        "format": "blindjudge.run/2",
        "run": {"name": "the model matrix", "default_condition": "clean",
                "abstain_scoring": abstain_scoring},
        "tasks": [{"id": t, "statement": f"Write function {t}.", "cluster": (clusters or {}).get(t)}
                  for t in tasks],
        "builders": [{"id": b, "model": BUILDERS[b][0], "family": BUILDERS[b][1]} for b in builders],
        "copies": [{"id": copy_id, "task": copy_id.split("-")[0], "builder": copy_id.split("-")[1],
                    "format": "text", "content": f"def f():\n    return {copy_id!r}\n",
                    "truth": truth} for copy_id, truth in truths.items()],
        "reviewers": [{"id": r, "model": REVIEWERS[r][0], "family": REVIEWERS[r][1]}
                      for r in reviewers],
        "reviews": review_rows,
        "findings": findings or [],
    }


def answer(judge, phase, plan: dict, lock: bool):
    codes = dict(judge.assignments.values_list("item__key", "code"))
    for key, value in plan.items():
        verdict_record(judge=judge, code=codes[key], phase=phase, value=value)
    if lock:
        phase_lock(judge=judge, phase=phase)


def reveal(host, bundle, judges, *, kind="copies", guests=False, primary=None, rules=None):
    """Import, create (scorecards shown), open, admit and answer, reveal. `judges` is a list of
    (admission "invited" | "guest" | "host", {phase: (plan, lock)}, removed); returns the
    session and the judges in admission order."""
    run = a_run(host, bundle)
    # The primary comparison as a host names it: the preregistration's rules block, object form.
    block = None if primary is None and rules is None else (
        {"primary_comparison": primary, "rules": rules or []} if primary is not None else rules)
    prereg = "" if block is None else (
        "Named before any verdict.\n\n```rules\n" + json.dumps(block) + "\n```\n")
    session = session_create(run=run, kind=kind, actor="test", rubric="Does it work?",
                             scorecards=True, preregistration=prereg).session
    session = session_open(session=session, actor="test")
    code = guests_configure(session=session, actor="test", allow=True).guest_code if guests else None
    admitted = []
    for n, (admission, phases, removed) in enumerate(judges):
        if admission == "invited":
            judge = invite_and_join(session, name=f"Judge {n}").judge
        elif admission == "guest":
            judge = guest_join(code=code, display_name=f"Guest {n}", client_address="10.0.0.9").judge
        else:
            judge = host_join(session=session, host=host).judge
        for phase, (plan, lock) in sorted(phases.items()):
            answer(judge, phase, plan, lock)
        if removed:
            judge_remove(judge=judge, actor="test")
        admitted.append(judge)
    return advance(session, "revealed"), admitted


@pytest.fixture(scope="module")
def schema():
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def exported(report) -> dict:
    return json.loads(to_json(report))


def difference(section_, source, builders, group=None, reviewer=None):
    [entry] = [d for d in section_["differences"] if d["source"] == source and d["group"] == group
               and d["reviewer"] == reviewer and d["builders"] == list(builders)]
    return entry


def builder_entry(section_, builder):
    [entry] = [b for b in section_["builders"] if b["builder"] == builder]
    return entry


# --- One builder known to be better ----------------------------------------------------------------
#
# Nine tasks. b1: tests_pass on t1..t7, tests_fail on t8, unknown on t9. b2: tests_fail on t1..t6
# and t8, tests_pass on t7, unknown on t9. Controls: t1-b1-ctl known_good (b1), t2-b2-ctl
# seeded_defect (b2); every judge and reviewer gets them wrong, so counting them would show.

BETTER = {f"t{t}-b1": "tests_pass" for t in range(1, 8)} | {"t8-b1": "tests_fail", "t9-b1": "unknown"}
BETTER |= {f"t{t}-b2": "tests_fail" for t in range(1, 7)} | {
    "t7-b2": "tests_pass", "t8-b2": "tests_fail", "t9-b2": "unknown"}
BETTER |= {"t1-b1-ctl": "known_good", "t2-b2-ctl": "seeded_defect"}
IN_SCOPE = [c for c in BETTER if not c.endswith("-ctl")]


def as_truth(copy_id):
    return {"tests_pass": "pass", "tests_fail": "fail"}.get(BETTER[copy_id])


def plan(**exceptions):
    """Verdicts that follow truth (controls wrong), with t9 and any exception given by copy id."""
    verdicts = {c: as_truth(c) for c in IN_SCOPE if as_truth(c)}
    verdicts |= {"t1-b1-ctl": "fail", "t2-b2-ctl": "pass"}
    verdicts |= {k.replace("_", "-"): v for k, v in exceptions.items()}
    return verdicts


ALL_ITEMS = list(BETTER)
PLAN_A1 = plan(t9_b1="pass", t9_b2="fail")
PLAN_B1 = plan(t1_b1="fail", t9_b1="pass", t9_b2="pass")
PLAN_B2 = dict.fromkeys(ALL_ITEMS, "keep") | {"t1-b1": "pass"}
PLAN_C1 = plan(t7_b2="fail", t9_b1="pass", t9_b2="pass")
PLAN_G1 = plan(t9_b1="pass", t9_b2="pass")
BETTER_JUDGES = [
    ("invited", {1: (PLAN_A1, True), 2: (dict.fromkeys(ALL_ITEMS, "keep"), True)}, False),  # J01
    ("invited", {1: (PLAN_B1, True), 2: (PLAN_B2, True)}, False),  # J02 corrects t1-b1 in phase 2
    ("invited", {1: (PLAN_C1, True), 2: ({"t1-b1": "fail"}, False)}, False),  # J03: phase-2 draft
    ("guest", {1: (PLAN_G1, True)}, False),  # J04
    ("host", {1: (dict.fromkeys(ALL_ITEMS, "pass"), True)}, False),  # J05: passes everything
    ("invited", {1: (dict.fromkeys(ALL_ITEMS, "fail"), True)}, True),  # J06, removed: never counted
]

# r1 (Alibaba) under the default condition "clean": truth on t1..t8 but an abstention on t9-b1 and
# on t8-b2; controls wrong; told_pass reviews (another condition) of b2's copies must not count.
# r2 (OpenAI, b1's family): t1-b1 pass, t1-b2 fail, and a failed-seal pass of t2-b2 (left out).
BETTER_REVIEWS = (
    [("r1", c, as_truth(c), None, None) for c in IN_SCOPE if as_truth(c) and c != "t8-b2"]
    + [("r1", "t9-b1", "abstain", None, None), ("r1", "t8-b2", "abstain", None, None),
       ("r1", "t9-b2", "pass", None, None),
       ("r1", "t1-b1-ctl", "fail", None, None), ("r1", "t2-b2-ctl", "pass", None, None)]
    + [("r1", f"t{t}-b2", "pass", "told_pass", None) for t in range(1, 7)]
    + [("r2", "t1-b1", "pass", None, None), ("r2", "t1-b2", "fail", None, None),
       ("r2", "t2-b2", "pass", None, "failed")]
)

# By hand, the sign-flip p of per-task differences d: under the null each nonzero d keeps or flips
# its sign with probability 1/2, and p is the share of the 2^n assignments with |Σ| >= |Σ observed|
# (zeros change nothing: they multiply both counts by 2 each).
# Invited judges J01-J03, phase 1: b1 passes: J01 8 (t1..t7, t9), J02 7 (failed t1), J03 8 -> 23/27;
#   b2: J01 1 (t7), J02 2 (t7, t9), J03 1 (t9) -> 4/27. Per task d: t1 2/3, t2..t6 1, t7 1/3,
#   t8 0, t9 1/3: only the observed signs and their mirror reach |Σ| = 19/3: p = 2·2/2^9 = 1/128.
# Phase 2 (J01, J02 locked; J03 drafts only): b1 16/18, b2 3/18; d: t1..t6 1, t7 0, t8 0, t9 1/2:
#   p = 2·2²/2^9 = 1/64.
# Guest J04, phase 1: b1 8/9, b2 2/9; d: t1..t6 1, others 0: p = 2·2³/2^9 = 1/32. Phase 2: none.
# Host J05: passes all: 9/9 each, every d 0: p = 1.
# Truth: b1 7/8, b2 1/8 (unknown t9 unscored); 8 tasks, d: t1..t6 1, t7, t8 0: p = 2·2²/2^8 = 1/32.
# r1, not_flagged (an abstention is a pass): b1 8/9, b2 3/9 (t7, t8, t9); d: t1..t6 1, t8 -1,
#   t7 t9 0: |Σ of seven ±1| >= 5 in 1 + 7 + 7 + 1 = 16 of 2^7, p = 16/128 = 1/8.
# r1, excluded: b1 7/8 (t9 left out), b2 2/8 (t8 left out); paired on t1..t7: b1 7/7, b2 1/7,
#   difference 6/7; d: t1..t6 1, t7 0: p = 2·2/2^7 = 1/32.
# r2: b1 1/1, b2 0/1 (the failed seal left out); one task: difference 1, p = 1 (two assignments,
#   both |Σ| = 1), no interval (one task resampled is no resampling).
F = Fraction
EXPECTED_HUMAN = {
    # (source, group): (b1 k/n, b2 k/n, tasks, difference, p)
    ("judges_phase1", "invited"): ((23, 27), (4, 27), 9, F(19, 27), F(1, 128)),
    ("judges_phase2", "invited"): ((16, 18), (3, 18), 9, F(13, 18), F(1, 64)),
    ("judges_phase1", "guest"): ((8, 9), (2, 9), 9, F(6, 9), F(1, 32)),
    ("judges_phase2", "guest"): ((0, 0), (0, 0), 0, None, None),
    ("judges_phase1", "self_blinded_host"): ((9, 9), (9, 9), 9, F(0), F(1)),
    ("judges_phase2", "self_blinded_host"): ((0, 0), (0, 0), 0, None, None),
}
EXPECTED_R1 = {
    # rule: (b1 k/n, b2 k/n, paired: (b1, b2, tasks), difference, p, left out b1, b2)
    "not_flagged": ((8, 9), (3, 9), ((8, 9), (3, 9), 9), F(5, 9), F(1, 8), 0, 0),
    "excluded": ((7, 8), (2, 8), ((7, 7), (1, 7), 7), F(6, 7), F(1, 32), 1, 1),
}
# The paired 2×2 table (both pass, b1 only, b2 only, neither) of each one-judge group, for its
# Newcombe interval; None where judges gave several verdicts per task (no interval at 9 tasks).
EXPECTED_HUMAN_INTERVAL = {
    ("judges_phase1", "invited"): None, ("judges_phase2", "invited"): None,
    # J04: b1 passes t1..t7, t9; b2 t7, t9: both t7 t9, b1 only t1..t6, neither t8.
    ("judges_phase1", "guest"): (2, 6, 0, 1),
    ("judges_phase1", "self_blinded_host"): (9, 0, 0, 0),  # J05 passes everything
}
# r1's table: not_flagged, paired t1..t9: both t7 t9, b1 only t1..t6, b2 only t8 (its
# abstention, a pass), neither none; excluded, paired t1..t7: both t7, b1 only t1..t6.
EXPECTED_R1_TABLE = {"not_flagged": (2, 6, 1, 0), "excluded": (1, 6, 0, 0)}
# Per-task differences for the independent interval check: (b1 passes, b2 passes) per task of each
# judge's plan, t1..t9.
TASKS9 = [f"t{t}" for t in range(1, 10)]


def per_task(plan_, builder):
    return np.array([[1.0 if plan_[f"{t}-{builder}"] == "pass" else 0.0] for t in TASKS9])[:, 0]


@pytest.fixture(params=["not_flagged", "excluded"])
def better(request, host):
    bundle = matrix_bundle(BETTER, abstain_scoring=request.param, reviews=BETTER_REVIEWS)
    session, judges = reveal(host, bundle, BETTER_JUDGES, guests=True)
    report = build_report(session)
    judges = [Judge.objects.get(pk=j.pk) for j in judges]  # as revealed
    card = judge_scorecard(judges[0])
    page = client_as(judges[0]).get(f"/s/{session.url_id}/scorecard/")
    return {"rule": request.param, "report": report, "card": card, "page": page, "judges": judges}


@pytest.mark.django_db
def test_one_builder_known_better_every_rate_by_hand(better, schema):
    report, rule = better["report"], better["rule"]
    s = report["builders_compared"]
    assert (s["compared"], s["not_compared"], s["human_not_compared"]) == (True, None, None)
    assert s["primary"] == {"source": "judges_phase1", "group": "invited", "reviewer": None,
                            "named_by": "default"}
    assert s["controls"] == [{"builder": "b1", "known_good": 1, "seeded_defect": 0},
                             {"builder": "b2", "known_good": 0, "seeded_defect": 1}]
    assert s["resampling"] == {"by": "task", "resamples": RESAMPLES, "seed": BOOTSTRAP_SEED,
                               "method": s["resampling"]["method"]}
    b1, b2 = builder_entry(s, "b1"), builder_entry(s, "b2")
    assert (b1["model"], b1["family"], b1["copies"], b1["tasks"]) == ("gpt-4o-2024-08-06", "OpenAI", 9, 9)
    assert (b2["copies"], b2["tasks"]) == (9, 9)
    assert b1["truth"] == {"tests_pass": 7, "tests_fail": 1, "unknown": 1, "pass_rate": rate(7, 8)}
    assert b2["truth"] == {"tests_pass": 1, "tests_fail": 7, "unknown": 1, "pass_rate": rate(1, 8)}
    # Guests and the host apart; the removed judge nowhere.
    assert list(b1["judges"]) == ["invited", "guest", "self_blinded_host"]
    for (source, group), (k1, k2, *_rest) in EXPECTED_HUMAN.items():
        phase = source[-1]
        assert b1["judges"][group][phase] == rate(*k1), (source, group)
        assert b2["judges"][group][phase] == rate(*k2), (source, group)
    r1_b1, r1_b2, _paired, _d, _p, left1, left2 = EXPECTED_R1[rule]
    assert b1["reviewers"] == [
        {"reviewer": "r1", "pass_rate": rate(*r1_b1), "same_family": False, "left_out": left1},
        {"reviewer": "r2", "pass_rate": rate(1, 1), "same_family": True, "left_out": 0}]
    assert b2["reviewers"] == [
        {"reviewer": "r1", "pass_rate": rate(*r1_b2), "same_family": False, "left_out": left2},
        {"reviewer": "r2", "pass_rate": rate(0, 1), "same_family": False, "left_out": 1}]
    assert schema_errors(schema, exported(report)) == []
    assert schema_errors(schema, exported(anonymise(report))) == []


@pytest.mark.django_db
def test_one_builder_known_better_every_difference_by_hand(better):
    s, rule = better["report"]["builders_compared"], better["rule"]
    # One pair, so every Holm family has one member: p_holm = p.
    for (source, group), (k1, k2, tasks, diff, p) in EXPECTED_HUMAN.items():
        d = difference(s, source, ["b1", "b2"], group=group)
        assert (d["tasks"], d["pass_rates"]) == (tasks, [rate(*k1), rate(*k2)]), (source, group)
        assert d["primary"] == ((source, group) == ("judges_phase1", "invited"))
        if diff is None:
            assert d["difference"] == {"value": None, "low": None, "high": None}
            assert (d["p_value"], d["p_holm"]) == (None, None)
            continue
        assert d["difference"]["value"] == pytest.approx(float(diff), abs=1e-12)
        assert d["p_value"] == pytest.approx(float(p), abs=1e-12)
        assert d["p_holm"] == d["p_value"]
        assert d["conditional_on_judges"] is True  # at most three judges in any group
        interval = EXPECTED_HUMAN_INTERVAL[(source, group)]
        if interval is None:
            # Three judges' verdicts on each task: several labels per task and nine tasks.
            assert (d["interval"], d["difference"]["low"], d["difference"]["high"]) == (None, None, None)
            assert d["no_interval"].startswith("9 tasks, fewer than 20, and more than one label")
        else:
            # One judge: one verdict per builder and task, the paired 2×2 design.
            assert d["interval"] == "Newcombe hybrid score"
            assert (d["difference"]["low"], d["difference"]["high"]) == pytest.approx(
                stats.newcombe_paired_interval(*interval)[1:], abs=1e-12)
    truth = difference(s, "truth", ["b1", "b2"])
    assert (truth["tasks"], truth["units"], truth["resampled"]) == (8, 8, None)
    assert truth["pass_rates"] == [rate(7, 8), rate(1, 8)]
    assert truth["difference"]["value"] == pytest.approx(0.75, abs=1e-12)
    assert (truth["p_value"], truth["p_holm"]) == (pytest.approx(1 / 32), pytest.approx(1 / 32))
    # Truth, paired on t1..t8: both pass t7, b1 only t1..t6, neither t8.
    assert (truth["interval"], truth["conditional_on_judges"]) == ("Newcombe hybrid score", None)
    assert (truth["difference"]["low"], truth["difference"]["high"]) == pytest.approx(
        stats.newcombe_paired_interval(1, 6, 0, 1)[1:], abs=1e-12)
    r1_b1, r1_b2, (p1, p2, tasks), diff, p, *_ = EXPECTED_R1[rule]
    r1 = difference(s, "reviewer", ["b1", "b2"], reviewer="r1")
    assert (r1["tasks"], r1["pass_rates"]) == (tasks, [rate(*p1), rate(*p2)])
    assert r1["difference"]["value"] == pytest.approx(float(diff), abs=1e-12)
    assert r1["p_value"] == pytest.approx(float(p), abs=1e-12) == r1["p_holm"]
    assert r1["interval"] == "Newcombe hybrid score"
    assert (r1["difference"]["low"], r1["difference"]["high"]) == pytest.approx(
        stats.newcombe_paired_interval(*EXPECTED_R1_TABLE[rule])[1:], abs=1e-12)
    r2 = difference(s, "reviewer", ["b1", "b2"], reviewer="r2")
    assert (r2["tasks"], r2["p_value"], r2["p_holm"]) == (1, 1.0, 1.0)
    # One task, b1 passed and b2 failed: Newcombe's interval of one pair, wide and across 0.
    assert r2["difference"] == pytest.approx(dict(zip(
        ("value", "low", "high"), stats.newcombe_paired_interval(0, 1, 0, 0), strict=True)))
    assert r2["difference"]["low"] < 0
    assert len(s["differences"]) == 1 + 6 + 2  # truth, 3 groups × 2 phases, 2 reviewers


@pytest.mark.django_db
def test_the_primary_difference_has_no_interval_at_nine_tasks_and_says_so(better):
    """The invited judges' phase-1 difference: three judges' verdicts on each of nine tasks. No
    interval is valid at that size (a bootstrap over nine tasks and three judges is too narrow:
    issue 28 item 3), so none is given, with why; the exact sign-flip p stands alone."""
    s = better["report"]["builders_compared"]
    primary = difference(s, "judges_phase1", ["b1", "b2"], group="invited")
    assert primary["difference"] == {"value": pytest.approx(19 / 27), "low": None, "high": None}
    assert (primary["interval"], primary["resampled"]) == (None, None)
    assert (primary["judges"], primary["conditional_on_judges"]) == (3, True)
    assert primary["no_interval"] == (
        "9 tasks, fewer than 20, and more than one label per task: no interval is valid at this "
        "size (a bootstrap over so few units is too narrow); the p-value's test is exact")
    assert primary["p_holm"] == pytest.approx(1 / 128)


@pytest.mark.django_db
def test_one_builder_known_better_the_ranking_says_so(better):
    s = better["report"]["builders_compared"]
    primary = difference(s, "judges_phase1", ["b1", "b2"], group="invited")
    low, high = primary["difference"]["low"], primary["difference"]["high"]
    assert s["ranking"] == {
        "source": "judges_phase1", "group": "invited", "reviewer": None,
        "order": ["b1", "b2"], "supported": [["b1", "b2"]],
        "statements": [
            "Ranked on the primary comparison, the invited judges' phase-1 pass rate, only where "
            "the Holm-adjusted p is below 0.05 and the 95% interval, where one is valid, excludes 0.",
            f"b1 above b2: difference {19 / 27:+.3f} (no interval: {primary['no_interval']}), "
            "Holm-adjusted p 0.008, 9 tasks, conditional on these 3 judges.",  # 1/128 (item 5)
        ]}
    assert low is None and high is None
    page = html.unescape(to_html(better["report"]))
    assert '<h2 id="builders-compared">' in page
    # The page opens with it, models named, the difference in percentage points (19/27 = 70 pp).
    assert ("<li>gpt-4o-2024-08-06 passed more often than claude-3-5-sonnet-20241022: +70 pp, "
            "Holm-adjusted p = 0.008, over 9 tasks; no interval is valid at so few units with "
            "several verdicts per task; conditional on these 3 judges.</li>") in page
    # The table says what each interval is.
    assert "Newcombe hybrid score; conditional on this judge" in page  # the guest and the host
    assert "none: 9 tasks, fewer than 20, and more than one label per task" in page


@pytest.mark.django_db
def test_nothing_of_the_comparison_reaches_a_judge_s_scorecard(better):
    card, page = better["card"], better["page"]
    assert set(card) == {"items", "scores"}
    # The truth in words and the copy's defect note (issue 16: the copy is not served after the
    # reveal); nothing of builders.
    assert {frozenset(item) for item in card["items"]} == {
        frozenset({"code", "position", "truth", "truth_label", "defect_html", "phase1", "phase2"})}
    assert len(card["items"]) == len(BETTER)
    assert page.status_code == 200
    text = json.dumps(card) + page.content.decode()
    for leak in ("builders_compared", "builder", "b1", "b2", "pass_rate", "pass rate", "ranking",
                 "difference", "holm", *(m for m, _ in BUILDERS.values()),
                 *(f for _, f in BUILDERS.values()), "qwen", "Alibaba"):
        # As a word: the session's random URL id (`…zb2r…`) may hold a short id's letters.
        found = re.search(rf"(?<![a-z0-9]){re.escape(leak.casefold())}(?![a-z0-9])", text.casefold())
        assert found is None, (leak, text[max(0, found.start() - 60):found.end() + 60])


# --- A preregistered primary comparison ------------------------------------------------------------

@pytest.mark.django_db
def test_the_preregistration_names_the_primary_comparison(host):
    bundle = matrix_bundle(BETTER, reviews=BETTER_REVIEWS)
    session, _ = reveal(host, bundle, BETTER_JUDGES[:1],
                        primary={"source": "reviewer", "reviewer": "qwen3-1.7b"})
    s = build_report(session)["builders_compared"]
    assert session.protocol["primary_comparison"] == {"source": "reviewer", "reviewer": "r1"}
    assert s["primary"] == {"source": "reviewer", "group": None, "reviewer": "r1",
                            "named_by": "preregistration"}
    assert [(d["source"], d["group"], d["reviewer"]) for d in s["differences"] if d["primary"]] == [
        ("reviewer", None, "r1")]
    # r1 under not_flagged: 8/9 against 3/9, p = 1/8: not distinguished, whatever the judges say.
    r1 = difference(s, "reviewer", ["b1", "b2"], reviewer="r1")
    assert s["ranking"]["order"] == ["b1", "b2"]
    assert s["ranking"]["supported"] == []
    assert s["ranking"]["statements"][0] == (
        "The builders are not distinguished on the primary comparison, reviewer r1's pass rate "
        "(condition clean).")
    assert s["ranking"]["statements"][1].startswith(
        f"b1 and b2 not distinguished: difference {5 / 9:+.3f} [{r1['difference']['low']:+.3f}, ")
    assert s["ranking"]["statements"][1].endswith(", Holm-adjusted p 0.125, 9 tasks.")


@pytest.mark.django_db
def test_a_preregistered_rule_on_the_primary_builder_difference_is_evaluated_as_written(host):
    """The host's question as a rule: b1 beats b2 by at least 0.5 on the primary comparison (the
    invited judges' phase 1, by default), with a Holm-adjusted p below 0.05."""
    rules = [{"name": "b1 clearly better", "metric": "builder_difference",
              "builders": ["b1", "b2"], "op": ">=", "threshold": 0.5,
              "and": {"metric": "builder_difference_p_holm", "builders": ["b1", "b2"],
                      "op": "<", "threshold": 0.05}},
             {"name": "b2 passes most", "metric": "builder_pass_rate", "builder": "b2",
              "source": "truth", "op": ">", "threshold": 0.5}]
    session, _ = reveal(host, matrix_bundle(BETTER, reviews=BETTER_REVIEWS), BETTER_JUDGES,
                        guests=True, rules=rules)
    evaluated = {r["name"]: r for r in
                 build_report(session)["decision_rules"]["rule_sets"][0]["rules"]}
    clearly = evaluated["b1 clearly better"]
    assert clearly["outcome"] == "fired"
    # invited judges' phase 1, by hand (test_one_builder_known_better_every_rate_by_hand):
    # 23/27 against 4/27 over 9 tasks, sign-flip p 1/128, the only pair: Holm leaves it.
    assert clearly["conditions"][0]["value"] == pytest.approx(19 / 27, abs=1e-12)
    assert clearly["conditions"][1]["value"] == pytest.approx(1 / 128, abs=1e-12)
    assert clearly["conditions"][0]["selectors"]["source"] == "judges_phase1"
    b2 = evaluated["b2 passes most"]
    assert b2["outcome"] == "not fired"
    assert b2["conditions"][0]["value"] == pytest.approx(1 / 8, abs=1e-12)  # truth: 1 of 8


# --- Equal builders ------------------------------------------------------------------------------------

EQUAL = {f"t{t}-b1": "tests_pass" if t <= 3 else "tests_fail" for t in range(1, 7)}
EQUAL |= {f"t{t}-b2": "tests_pass" if t in (1, 2, 4) else "tests_fail" for t in range(1, 7)}


@pytest.mark.django_db
def test_equal_builders_are_not_distinguished(host, schema):
    truthful = {c: {"tests_pass": "pass", "tests_fail": "fail"}[t] for c, t in EQUAL.items()}
    session, _ = reveal(host, matrix_bundle(EQUAL, reviewers=()),
                        [("invited", {1: (truthful, True)}, False)])
    report = build_report(session)
    s = report["builders_compared"]
    # 3/6 each; d: t3 +1, t4 -1, others 0; Σ = 0, so p = 1.
    for source in ("truth", "judges_phase1"):
        d = difference(s, source, ["b1", "b2"], group="invited" if source != "truth" else None)
        assert d["pass_rates"] == [rate(3, 6), rate(3, 6)]
        assert d["difference"]["value"] == 0.0
        assert d["difference"]["low"] < 0 < d["difference"]["high"]
        assert (d["p_value"], d["p_holm"]) == (1.0, 1.0)
    assert s["ranking"]["supported"] == []
    assert s["ranking"]["order"] == ["b1", "b2"]
    assert s["ranking"]["statements"][0] == (
        "The builders are not distinguished on the primary comparison, the invited judges' "
        "phase-1 pass rate.")
    assert schema_errors(schema, exported(report)) == []


# --- Three builders: Holm over three pairs ---------------------------------------------------------------

THREE = ({f"t{t}-b1": "tests_pass" for t in range(1, 8)}
         | {f"t{t}-b2": "tests_fail" for t in range(1, 8)}
         | {f"t{t}-b3": "tests_pass" if t <= 3 else "tests_fail" for t in range(1, 8)})


@pytest.mark.django_db
def test_three_builders_holm_over_three_pairs_by_hand(host, schema):
    truthful = {c: {"tests_pass": "pass", "tests_fail": "fail"}[t] for c, t in THREE.items()}
    session, _ = reveal(host, matrix_bundle(THREE, builders=("b1", "b2", "b3"), reviewers=()),
                        [("invited", {1: (truthful, True)}, False)])
    report = build_report(session)
    s = report["builders_compared"]
    # b1 7/7, b2 0/7, b3 3/7. (b1, b2): seven d = 1, p = 2/2^7 = 1/64. (b1, b3): d = 1 on t4..t7,
    # p = 2·2³/2^7 = 1/8. (b2, b3): d = -1 on t1..t3, p = 2·2⁴/2^7 = 1/4.
    # Holm: 3 · 1/64 = 3/64; 2 · 1/8 = 1/4; 1 · 1/4 = 1/4 (never below the previous): 3/64, 1/4, 1/4.
    expected = {("b1", "b2"): (1.0, 1 / 64, 3 / 64), ("b1", "b3"): (4 / 7, 1 / 8, 1 / 4),
                ("b2", "b3"): (-3 / 7, 1 / 4, 1 / 4)}
    for source, group in (("truth", None), ("judges_phase1", "invited")):
        for pair, (value, p, p_holm) in expected.items():
            d = difference(s, source, pair, group=group)
            assert d["difference"]["value"] == pytest.approx(value, abs=1e-12), (source, pair)
            assert d["p_value"] == pytest.approx(p, abs=1e-12), (source, pair)
            assert d["p_holm"] == pytest.approx(p_holm, abs=1e-12), (source, pair)
            assert d["tasks"] == 7
    assert stats.holm_adjust([1 / 64, 1 / 8, 1 / 4]) == pytest.approx([3 / 64, 1 / 4, 1 / 4])
    # One judge, one verdict per builder and task: Newcombe's interval of the paired table, b1
    # alone passing all seven (a bootstrap over tasks would give [1, 1] here: every d is 1).
    b1b2 = difference(s, "judges_phase1", ("b1", "b2"), group="invited")
    _, low, high = stats.newcombe_paired_interval(0, 7, 0, 0)
    assert b1b2["difference"] == pytest.approx({"value": 1.0, "low": low, "high": high})
    assert 0 < low < 1 == high
    ranking = s["ranking"]
    assert ranking["order"] == ["b1", "b3", "b2"]
    assert ranking["supported"] == [["b1", "b2"]]
    assert ranking["statements"][1:] == [
        f"b1 above b2: difference +1.000 [{low:+.3f}, +1.000], Holm-adjusted p 0.047, 7 tasks, "
        "conditional on this judge.",
        ranking["statements"][2], ranking["statements"][3]]
    assert ranking["statements"][2].startswith("b1 and b3 not distinguished: difference +0.571 [")
    assert ranking["statements"][3].startswith("b2 and b3 not distinguished: difference -0.429 [")
    assert ranking["statements"][3].endswith("Holm-adjusted p 0.250, 7 tasks, conditional on this judge.")
    assert schema_errors(schema, exported(report)) == []


# --- Clusters of tasks -------------------------------------------------------------------------------

CLUSTERED = {f"t{t}-b1": "tests_pass" for t in range(1, 7)} | {
    f"t{t}-b2": "tests_pass" if t in (4, 6) else "tests_fail" for t in range(1, 7)}
CLUSTERS = {"t1": "k1", "t2": "k1", "t3": "k2", "t4": "k2", "t5": "k3", "t6": "k3"}


@pytest.mark.django_db
def test_tasks_in_clusters_are_resampled_and_tested_as_clusters(host, schema):
    truthful = {c: {"tests_pass": "pass", "tests_fail": "fail"}[t] for c, t in CLUSTERED.items()}
    session, _ = reveal(host, matrix_bundle(CLUSTERED, reviewers=(), clusters=CLUSTERS),
                        [("invited", {1: (truthful, True)}, False)])
    report = build_report(session)
    s = report["builders_compared"]
    assert s["resampling"]["by"] == "cluster"
    # b1 6/6, b2 2/6: +2/3. Per task d = 1, 1, 1, 0, 1, 0; per cluster 2, 1, 1: of the 8 sign
    # assignments only ±(2 + 1 + 1) reach |Σ| = 4, p = 2/8 (per task it would be 2·2²/2^6 = 1/8).
    d_tasks = [1, 1, 1, 0, 1, 0]
    # Three clusters, fewer than 20: no cluster bootstrap; Newcombe's interval on the tasks,
    # labelled as treating them as independent, as McNemar beside the cluster sign-flip is.
    assert sum(d_tasks) == 4  # b1 only on four tasks, both on two
    _, low, high = stats.newcombe_paired_interval(2, 4, 0, 0)
    for source, group in (("truth", None), ("judges_phase1", "invited")):
        d = difference(s, source, ["b1", "b2"], group=group)
        assert (d["tasks"], d["units"], d["resampled"]) == (6, 3, None)
        assert d["difference"] == pytest.approx({"value": 2 / 3, "low": low, "high": high})
        assert d["interval"] == "Newcombe hybrid score, tasks treated as independent"
        assert d["p_value"] == pytest.approx(1 / 4) == d["p_holm"]
        assert (d["test"], d["mcnemar_p"]) == ("cluster sign-flip", pytest.approx(1 / 8))
    assert s["ranking"]["supported"] == []
    assert schema_errors(schema, exported(report)) == []


# --- What freezes with the protocol: the unit and the significance level ------------------------------

@pytest.mark.django_db
def test_the_resampling_unit_and_alpha_freeze_with_the_protocol(host, schema):
    """The unit every interval rests on is frozen at opening (issue 28 item 1), and the report
    reads it from the protocol: clusters declared afterwards change nothing. A preregistered
    alpha of 0.01 is what the ranking reads the Holm p at: b1 − b2 on truth, Holm p 3/64
    (0.047), is supported at 0.05 (test_three_builders_holm_over_three_pairs_by_hand) and not
    at 0.01."""
    from judging.models import Copy  # noqa: PLC0415 - only to change the run under the report

    truthful = {c: {"tests_pass": "pass", "tests_fail": "fail"}[t] for c, t in THREE.items()}
    session, _ = reveal(host, matrix_bundle(THREE, builders=("b1", "b2", "b3"), reviewers=()),
                        [("invited", {1: (truthful, True)}, False)],
                        primary={"source": "truth"}, rules=[])
    assert session.protocol["resampling_unit"] == {"by": "task", "units": 7}
    # The same session with an alpha named: a new run and session, frozen with it.
    prereg = ("Named before any verdict.\n\n```rules\n"
              + json.dumps({"alpha": 0.01, "primary_comparison": {"source": "truth"}}) + "\n```\n")
    strict, _ = reveal_with(host, matrix_bundle(THREE, builders=("b1", "b2", "b3"), reviewers=()),
                            [("invited", {1: (truthful, True)}, False)], prereg)
    assert strict.protocol["alpha"] == 0.01
    s = build_report(strict)["builders_compared"]
    assert (s["alpha"], s["alpha_named_by"]) == (0.01, "preregistration")
    truth = difference(s, "truth", ["b1", "b2"])
    assert truth["p_holm"] == pytest.approx(3 / 64)
    assert s["ranking"]["supported"] == []
    assert s["ranking"]["statements"][0] == (
        "The builders are not distinguished on the primary comparison, the truth pass rate (the "
        "tests_pass share).")
    # Clusters written into the run after opening: the report still resamples tasks.
    Copy.objects.filter(run=strict.run).update(cluster="one")
    again = build_report(strict)
    assert again["builders_compared"]["resampling"]["by"] == "task"
    assert difference(again["builders_compared"], "truth", ["b1", "b2"])["units"] == 7
    assert schema_errors(schema, exported(again)) == []
    default = build_report(session)["builders_compared"]
    assert (default["alpha"], default["alpha_named_by"]) == (0.05, "default")
    assert default["ranking"]["supported"] == [["b1", "b2"]]


def reveal_with(host, bundle, judges, preregistration: str):
    """reveal() with the preregistration's text as written."""
    run = a_run(host, bundle)
    session = session_create(run=run, kind="copies", actor="test", rubric="Does it work?",
                             preregistration=preregistration).session
    session = session_open(session=session, actor="test")
    admitted = []
    for n, (admission, phases, _removed) in enumerate(judges):
        assert admission == "invited"
        judge = invite_and_join(session, name=f"Judge {n}").judge
        for phase, (plan_, lock) in sorted(phases.items()):
            answer(judge, phase, plan_, lock)
        admitted.append(judge)
    return advance(session, "revealed"), admitted


# --- Not compared ----------------------------------------------------------------------------------

@pytest.mark.django_db
def test_one_builder_is_not_compared(host, schema):
    truths = {"t1-b1": "tests_pass", "t2-b1": "tests_fail", "t2-b1-ctl": "known_good"}
    session, _ = reveal(host, matrix_bundle(truths, builders=("b1",), reviewers=()),
                        [("invited", {1: ({c: "pass" for c in truths}, True)}, False)])
    report = build_report(session)
    s = report["builders_compared"]
    assert (s["compared"], s["not_compared"]) == (False, "one builder")
    assert s["differences"] == []
    assert s["ranking"] == {"source": "judges_phase1", "group": "invited", "reviewer": None,
                            "order": [], "supported": [], "statements": ["Not compared: one builder."]}
    [b1] = s["builders"]
    assert b1["truth"]["pass_rate"] == rate(1, 2)
    assert b1["judges"]["invited"]["1"] == rate(2, 2)  # the control not counted
    assert s["controls"] == [{"builder": "b1", "known_good": 1, "seeded_defect": 0}]
    assert schema_errors(schema, exported(report)) == []
    assert "Not compared: one builder." in to_html(report)


@pytest.mark.django_db
def test_one_task_and_no_judges_is_not_compared(host, schema):
    # make_bundle: one task; b1's copies are controls only, b2 tests_pass + tests_fail, b3
    # known_good (control) + unknown.
    session, _ = reveal(host, make_bundle(), [])
    report = build_report(session)
    s = report["builders_compared"]
    assert (s["compared"], s["not_compared"]) == (False, "one task and no judges")
    assert s["differences"] == [] and s["ranking"]["supported"] == []
    assert s["controls"] == [{"builder": "b1", "known_good": 1, "seeded_defect": 1},
                             {"builder": "b2", "known_good": 0, "seeded_defect": 0},
                             {"builder": "b3", "known_good": 1, "seeded_defect": 0}]
    assert [(b["builder"], b["copies"], b["tasks"]) for b in s["builders"]] == [
        ("b1", 0, 0), ("b2", 2, 1), ("b3", 1, 1)]
    assert builder_entry(s, "b3")["truth"] == {"tests_pass": 0, "tests_fail": 0, "unknown": 1,
                                               "pass_rate": rate(0, 0)}
    # make_bundle's r1 reviewed c1 and c2 only, both controls: nothing in scope.
    assert builder_entry(s, "b2")["reviewers"][0]["pass_rate"] == rate(0, 0)
    assert schema_errors(schema, exported(report)) == []


# --- A findings session -------------------------------------------------------------------------------------

@pytest.mark.django_db
def test_a_findings_session_has_no_human_builder_comparison(host, schema):
    findings = [{"id": f"f{t}", "copy": f"t{t}-b1", "text": "off by one", "raised_by": ["r1"],
                 "proposed_verdict": "confirmed", "truth": "real"} for t in (1, 2)]
    bundle = matrix_bundle(BETTER, reviews=BETTER_REVIEWS, findings=findings)
    session, _ = reveal(host, bundle, [("invited", {1: ({"f1": "real", "f2": "real"}, True)}, False)],
                        kind="findings")
    report = build_report(session)
    s = report["builders_compared"]
    assert s["compared"] is True
    assert s["human_not_compared"] == (
        "a findings session: its judges judged findings, not copies, so builders are compared "
        "under truth and model reviewers only")
    assert all(b["judges"] == {} for b in s["builders"])
    assert {d["source"] for d in s["differences"]} == {"truth", "reviewer"}
    assert difference(s, "truth", ["b1", "b2"])["difference"]["value"] == pytest.approx(0.75)
    assert s["ranking"]["order"] == [] and s["ranking"]["supported"] == []
    assert s["ranking"]["statements"] == [
        "The primary comparison, the invited judges' phase-1 pass rate, could not be made: a "
        "findings session: its judges judged findings, not copies, so builders are compared under "
        "truth and model reviewers only. No ranking is stated."]
    assert schema_errors(schema, exported(report)) == []


# --- The pure helpers ------------------------------------------------------------------------------------

def test_task_units_merge_the_units_one_task_spans():
    units = section.task_units([
        ("t1", ("cluster", "k1")), ("t2", ("cluster", "k1")), ("t3", ("task", "t3")),
        ("t4", ("cluster", "k2")), ("t4", ("cluster", "k3")), ("t5", ("cluster", "k3")),
        ("t1", ("cluster", "k1"))])
    assert units == {"t1": 0, "t2": 0, "t3": 1, "t4": 2, "t5": 2}


def test_paired_difference_of_counts_by_hand_and_against_scipy():
    from scipy.stats import permutation_test  # noqa: PLC0415 - as reports.stats: lazily

    # Five tasks; b has two copies on t2. Task t5: a has nothing scored, so it is unpaired.
    k_a, n_a = [1, 1, 0, 1, 1], [1, 1, 1, 1, 0]
    k_b, n_b = [0, 1, 0, 0, 1], [1, 2, 1, 1, 1]
    result = section.paired_difference(k_a, n_a, k_b, n_b, ["t1", "t2", "t3", "t4", "t5"])
    # Paired t1..t4: a 3/4, b 1/5 -> 0.55. d = 1, 1/2, 0, 1: p = 2·2/2^4 = 1/4.
    assert (result["tasks"], result["units"]) == (4, 4)
    assert (result["k_a"], result["n_a"], result["k_b"], result["n_b"]) == (3, 4, 1, 5)
    assert result["value"] == pytest.approx(3 / 4 - 1 / 5, abs=1e-15)
    assert result["p_value"] == pytest.approx(1 / 4)
    assert result["test"] == "sign-flip"
    rates_a, rates_b = np.array([1, 1, 0, 1]), np.array([0, 0.5, 0, 0])
    scipy_p = permutation_test((rates_a, rates_b), lambda x, y: np.mean(x - y),
                               permutation_type="samples", n_resamples=np.inf).pvalue
    assert result["p_value"] == pytest.approx(scipy_p)
    # Two labels on t2 and four units: no small-sample interval fits, and a bootstrap over four
    # tasks is too narrow, so there is none, and the report says why (issue 28 item 3).
    assert (result["low"], result["high"], result["interval"], result["resampled"]) == (
        None, None, None, None)
    assert result["no_interval"].startswith("4 tasks, fewer than 20, and more than one label")
    # The same tasks six times over (24 units): the bootstrap, checked against
    # stats.cluster_bootstrap over the paired tasks with the same draws.
    rows = list(zip(k_a[:4], n_a[:4], k_b[:4], n_b[:4], strict=True)) * 6
    big = section.paired_difference(*(np.array(column) for column in zip(*rows, strict=True)),
                                    [f"t{i}" for i in range(24)])
    assert (big["interval"], big["resampled"], big["no_interval"]) == ("bootstrap", "tasks", None)

    def statistic(drawn):
        sums = np.sum(drawn, axis=0)
        return sums[0] / sums[1] - sums[2] / sums[3]

    point, low, high = stats.cluster_bootstrap(statistic, rows, resamples=RESAMPLES, seed=BOOTSTRAP_SEED)
    assert (big["value"], big["low"], big["high"]) == pytest.approx((point, low, high))


def test_one_pass_or_fail_per_task_gets_newcombe_s_interval_at_any_size():
    # The paired 2×2 design: a passes 5 of 6, b 1 of 6; both on t1, a only on t2..t5, neither t6.
    result = section.paired_difference([1, 1, 1, 1, 1, 0], [1] * 6, [1, 0, 0, 0, 0, 0], [1] * 6,
                                       [f"t{i}" for i in range(6)])
    assert (result["test"], result["discordant"]) == ("McNemar exact", [4, 0])
    assert result["interval"] == "Newcombe hybrid score"
    assert (result["resampled"], result["no_interval"]) == (None, None)
    assert (result["value"], result["low"], result["high"]) == pytest.approx(
        stats.newcombe_paired_interval(1, 4, 0, 1), abs=1e-15)
    # Also at 40 tasks: the design, not the size, chooses the interval.
    many = section.paired_difference([1, 0] * 20, [1] * 40, [1, 1, 0, 0] * 10, [1] * 40,
                                     [f"t{i}" for i in range(40)])
    assert many["interval"] == "Newcombe hybrid score"
    assert (many["low"], many["high"]) == pytest.approx(
        stats.newcombe_paired_interval(10, 10, 10, 10)[1:], abs=1e-15)
    # One task: still an interval (a wide one), never a null printed as a result.
    one = section.paired_difference([1], [1], [0], [1], ["t1"])
    assert (one["value"], one["p_value"], one["interval"]) == (1.0, 1.0, "Newcombe hybrid score")
    assert (one["low"], one["high"]) == pytest.approx(stats.newcombe_paired_interval(0, 1, 0, 0)[1:])
    assert one["low"] < 0


def test_paired_difference_tests_and_resamples_whole_clusters():
    # t1, t2 in one cluster, t3, t4 in another: the sign flip is over the two clusters' sums
    # (1 + 1, 1 + 0): p = 2/4 = 1/2; only the mirror and the observed signs reach |Σ| = 3.
    result = section.paired_difference([1, 1, 1, 1], [1] * 4, [0, 0, 0, 1], [1] * 4,
                                       ["k1", "k1", "k2", "k2"])
    assert (result["tasks"], result["units"]) == (4, 2)
    assert result["p_value"] == pytest.approx(1 / 2)
    # Two clusters, fewer than 20: Newcombe's interval on the tasks, labelled as such.
    assert result["interval"] == "Newcombe hybrid score, tasks treated as independent"
    assert (result["value"], result["low"], result["high"]) == pytest.approx(
        stats.newcombe_paired_interval(1, 3, 0, 0))
    # 40 tasks in 20 clusters of two: the cluster bootstrap, as stats.clustered_ratio draws it.
    d = [1, 1, 1, 0] * 10
    labels = [f"k{i // 2}" for i in range(40)]
    wide = section.paired_difference([1] * 40, [1] * 40, [1 - x for x in d], [1] * 40, labels)
    assert (wide["units"], wide["interval"], wide["resampled"]) == (20, "bootstrap", "clusters")
    value, low, high = stats.clustered_ratio(d, [1] * 40, labels, resamples=RESAMPLES,
                                             seed=BOOTSTRAP_SEED)
    assert (wide["value"], wide["low"], wide["high"]) == pytest.approx((value, low, high))
    # Nothing paired: nothing at all.
    none = section.paired_difference([1, 0], [1, 0], [0, 1], [0, 1], ["t1", "t2"])
    assert (none["tasks"], none["value"], none["low"], none["p_value"]) == (0, None, None, None)
    assert none["no_interval"] == "no task where both builders have something scored"


def _verdicts(rng, judges: int, tasks: int):
    """judges × tasks counts of verdicts (0 to 2 per cell) and passes among them, for two builders."""
    n_a, n_b = rng.integers(0, 3, size=(judges, tasks)), rng.integers(0, 3, size=(judges, tasks))
    return (rng.binomial(n_a, 0.7).astype(float), n_a.astype(float),
            rng.binomial(n_b, 0.5).astype(float), n_b.astype(float))


def test_paired_difference_of_judges_verdicts_against_a_loop_over_the_draws():
    # 3 judges × 4 tasks; judge 2 judged nothing of these tasks (dropped before drawing).
    k_a = np.array([[1, 1, 0, 2], [1, 0, 1, 1], [0, 0, 0, 0]], dtype=float)
    n_a = np.array([[1, 1, 1, 2], [1, 1, 1, 2], [0, 0, 0, 0]], dtype=float)
    k_b = np.array([[0, 1, 1, 0], [0, 0, 1, 0], [0, 0, 0, 0]], dtype=float)
    n_b = np.array([[1, 1, 1, 1], [1, 1, 1, 0], [0, 0, 0, 0]], dtype=float)
    labels = ["u1", "u1", "u2", "u3"]
    result = section.paired_difference(k_a, n_a, k_b, n_b, labels)
    # a: 7/10, b: 3/7; per task d: t1 1 - 0, t2 1/2 - 1/2, t3 1/2 - 1, t4 3/4 - 0 (b judged
    # once); per unit: u1 = 1 + 0, u2 = -1/2, u3 = 3/4.
    assert result["value"] == pytest.approx(7 / 10 - 3 / 7)
    assert (result["tasks"], result["units"], result["judges"]) == (4, 3, 2)
    d_units = [1 + 0, -1 / 2, 3 / 4]
    assert result["p_value"] == pytest.approx(stats.sign_flip_p(d_units))
    # By hand: Σ = 1.25; of the 8 sign assignments |Σ| >= 1.25 for ±(1 - 1/2 + 3/4) = ±1.25,
    # ±(1 + 1/2 + 3/4) = ±2.25 and ±(1 + 1/2 - 3/4) = ±0.75 (no): 4 of 8.
    assert result["p_value"] == pytest.approx(1 / 2)
    # Three units and two judges: no interval, and the verdicts speak for these judges only.
    assert (result["low"], result["interval"], result["conditional_on_judges"]) == (None, None, True)
    assert result["no_interval"].startswith("3 clusters, fewer than 20")

    # 12 judges × 24 tasks in 22 units: the crossed two-way bootstrap, judges drawn first, then
    # the units, from one default_rng(BOOTSTRAP_SEED); recomputed here by a loop over the draws.
    rng = np.random.default_rng(11)
    arrays = _verdicts(rng, 12, 24)
    labels = [f"u{min(t, 21)}" for t in range(24)]  # t21..t23 share a unit
    result = section.paired_difference(*arrays, labels)
    assert (result["units"], result["judges"]) == (22, 12)
    assert (result["interval"], result["resampled"], result["conditional_on_judges"]) == (
        "two-way bootstrap", "judges and clusters", False)
    draws = np.random.default_rng(BOOTSTRAP_SEED)
    judge_draws = draws.integers(0, 12, size=(RESAMPLES, 12))
    unit_draws = draws.integers(0, 22, size=(RESAMPLES, 22))
    unit_of = [min(t, 21) for t in range(24)]
    estimates = []
    for judges, units in zip(judge_draws, unit_draws, strict=True):
        tasks = [t for u in units for t in range(24) if unit_of[t] == u]
        sums = [m[np.ix_(judges, tasks)].sum() for m in arrays]
        estimates.append(sums[0] / sums[1] - sums[2] / sums[3] if sums[1] and sums[3] else math.nan)
    low, high = stats.percentile_interval(estimates)
    assert (result["low"], result["high"]) == pytest.approx((low, high), abs=1e-12)

    # Four judges over the same 24 tasks: the judges are held fixed and only the units drawn.
    few = section.paired_difference(*(x[:4] for x in arrays), labels)
    assert (few["judges"], few["interval"], few["resampled"], few["conditional_on_judges"]) == (
        4, "bootstrap", "clusters", True)
    unit_draws = np.random.default_rng(BOOTSTRAP_SEED).integers(0, 22, size=(RESAMPLES, 22))
    estimates = []
    for units in unit_draws:
        tasks = [t for u in units for t in range(24) if unit_of[t] == u]
        sums = [m[:4][:, tasks].sum() for m in arrays]
        estimates.append(sums[0] / sums[1] - sums[2] / sums[3] if sums[1] and sums[3] else math.nan)
    low, high = stats.percentile_interval(estimates)
    assert (few["low"], few["high"]) == pytest.approx((low, high), abs=1e-12)


@pytest.mark.parametrize("differences", [
    [1, 1, 1, 1, 1, 1], [1, -1, 1, 1, 0, 1, 1], [0.5, 2 / 3, 1 / 3, -0.25, 1, 1, 0.75, 0.1],
    [0, 0, 0], [3.5], list(np.linspace(-0.3, 1, 16)),
])
def test_sign_flip_p_is_scipy_s_exact_paired_permutation_test(differences):
    from scipy.stats import permutation_test  # noqa: PLC0415

    x = np.asarray(differences, dtype=float)
    if not np.any(x) or x.size == 1:
        # No difference, or one: the observed sum and its mirror are all there is, p = 1.
        assert stats.sign_flip_p(x) == 1.0
    if x.size == 1:
        return  # scipy's permutation_test needs two observations
    expected = permutation_test((x, np.zeros_like(x)), lambda a, b: np.mean(a - b),
                                permutation_type="samples", n_resamples=np.inf).pvalue
    assert stats.sign_flip_p(x) == pytest.approx(min(1.0, expected), abs=1e-12)


def test_sign_flip_p_of_differences_that_sum_to_zero_is_one():
    # Found by tests/reports/test_builders_independent.py: these sum to exactly 0 but to 1.1e-16
    # in floating point, and a tolerance relative to that sum counted the tying assignments as
    # falling short (p 0.75). Every assignment reaches |Σ| >= 0.
    x = [-2 / 3, -1 / 3, 1 / 3, 2 / 3]
    assert sum(x) != 0.0  # the rounding the test is about
    assert stats.sign_flip_p(x) == 1.0
    assert stats.sign_flip_p(x * 5) == 1.0  # 20 units: the Monte Carlo branch
    # A real difference of the same scale is not swallowed by the tolerance.
    assert stats.sign_flip_p([1e-9, 1e-9, 1e-9]) == pytest.approx(2 / 8)


def test_sign_flip_p_beyond_sixteen_units_is_within_monte_carlo_error_of_scipy():
    from scipy.stats import permutation_test  # noqa: PLC0415

    # 17 units: just past exact enumeration (scipy's exact test of 2^17 assignments takes seconds).
    x = np.array([1, 1, 0.5, -1, 1, 0, 1, 1, -0.5, 1, 0.25, 1, -1, 1, 0.5, 1, 0])
    exact = permutation_test((x, np.zeros_like(x)), lambda a, b: np.mean(a - b),
                             permutation_type="samples", n_resamples=np.inf).pvalue
    # 20,000 draws: a standard error of at most √(p(1-p)/20000) < 0.0036.
    assert stats.sign_flip_p(x, resamples=20000, seed=0) == pytest.approx(exact, abs=0.011)


def test_sign_flip_p_beyond_sixteen_units_draws_what_rng_choice_draws():
    x = np.random.default_rng(7).normal(0.1, 1.0, size=40)
    signs = np.random.default_rng(3).choice(np.array([-1.0, 1.0]), size=(5000, 40))
    hits = np.count_nonzero(np.abs(signs @ x) >= abs(x.sum()) * (1 - 1e-12))
    assert stats.sign_flip_p(x, resamples=5000, seed=3) == (hits + 1) / 5001


def test_holm_adjust_by_hand():
    # Sorted 0.005, 0.01, 0.03, 0.04: × 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04 -> monotone 0.06.
    assert stats.holm_adjust([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert stats.holm_adjust([0.5, None, 0.9]) == [pytest.approx(1.0), None, pytest.approx(1.0)]
    assert stats.holm_adjust([]) == []
    for ps in itertools.permutations([0.001, 0.02, 0.2]):
        adjusted = dict(zip(ps, stats.holm_adjust(list(ps)), strict=True))
        assert adjusted == pytest.approx({0.001: 0.003, 0.02: 0.04, 0.2: 0.2})


def test_the_comparison_is_in_the_report_module_registry():
    from reports import build  # noqa: PLC0415

    assert build.builders.builders_compared is section.builders_compared
