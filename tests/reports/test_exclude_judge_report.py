"""A preregistered exclude_judge rule, end to end through the services (issue 30 item 5): the
screening seed drawn at opening from the session's draws and committed in the protocol, judges
answering in phase 1, the report stating every result twice (everyone, and with the exclusions,
primary), naming who was excluded by which rule, and scoring every judge, the excluded ones too,
on the controls that did not screen. Every expected figure is computed here, from the plans."""

import csv
import hashlib
import hmac
import io
import json
import math

import pytest

from content.canonical import sha256_hex
from judging.models import AuditEvent
from judging.selectors.host import session_events
from judging.services import phase_lock, session_create, session_open
from reports.build import build_report
from reports.export import to_csv, to_jsonl
from reports.headline import headline
from reports.html import to_html
from reports.verify import verify
from tests.reports.test_builders import THREE, exported, matrix_bundle, schema_errors
from tests.reports.test_report import SCHEMA_PATH
from tests.support.verdicts import verdict_record
from tests.worlds import a_run, advance, invite_and_join

DRAW_SEED = "5e" * 32
MISSED = {"name": "missed the seeded defects", "action": "exclude_judge",
          "when": {"judge_recall_controls": "<0.5"}, "screening_share": 0.5}
FAST = {"name": "too fast", "action": "exclude_judge",
        "when": {"judge_fast_answers": ">=0.5", "seconds": "<2"}}
# THREE's 21 copies (b1 passes t1..t7, b2 none, b3 t1..t3), and the host's controls: a seeded
# defect by b1 and a known-good copy by b2 on each of t1..t6.
TRUTHS = {**THREE, **{f"t{t}-b1-ctl": "seeded_defect" for t in range(1, 7)},
          **{f"t{t}-b2-ctl": "known_good" for t in range(1, 7)}}
DEFECTIVE = ("tests_fail", "seeded_defect")


def right(key: str) -> str:
    return "fail" if TRUTHS[key] in DEFECTIVE else "pass"


def hmac_hex(key_hex: str, message: str) -> str:
    return hmac.new(bytes.fromhex(key_hex), message.encode(), hashlib.sha256).hexdigest()


def drawn(seed: str, share: float) -> set:
    """The screening controls, written out: per control truth, the first ceil(share × n) by
    HMAC-SHA256(seed, key)."""
    out = set()
    for truth in ("seeded_defect", "known_good"):
        keys = sorted((k for k, t in TRUTHS.items() if t == truth), key=lambda k: hmac_hex(seed, k))
        out |= set(keys[:math.ceil(share * len(keys))])
    return out


def rates(plan: dict, left_out: set) -> tuple:
    """(caught, defective, passed, good) of a plan over the items not left out."""
    kept = [k for k in plan if k not in left_out]
    defective = [k for k in kept if TRUTHS[k] in DEFECTIVE]
    good = [k for k in kept if TRUTHS[k] not in DEFECTIVE]
    return (sum(plan[k] == "fail" for k in defective), len(defective),
            sum(plan[k] == "pass" for k in good), len(good))


def revealed_with_rules(host, rules=(MISSED, FAST)):
    """Three invited judges answering every copy in phase 1, locked: judge 0 as truth but for
    every screening seeded defect and one other seeded defect (passed), 10 s an answer; judge 1
    as truth, 10 s; judge 2 as truth, 1 s an answer. Returns the revealed session, the seed the
    opening drew, the screening controls and the plans."""
    prereg = "Named before any verdict.\n\n```rules\n" + json.dumps(list(rules)) + "\n```\n"
    run = a_run(host, matrix_bundle(TRUTHS, builders=("b1", "b2", "b3"), reviewers=()))
    session = session_create(run=run, kind="copies", actor="t", rubric="Does it work?",
                             preregistration=prereg, draw_seed=DRAW_SEED).session
    session = session_open(session=session, actor="t")
    event = AuditEvent.objects.filter(session=session, action="screening.drawn").first()
    seed = event.details["seed"] if event else None
    screening = drawn(seed, 0.5) if seed else set()
    other_defect = sorted(k for k, t in TRUTHS.items()
                          if t == "seeded_defect" and k not in screening)[0]
    plans = [{k: right(k) for k in TRUTHS} for _ in range(3)]
    for key in screening | {other_defect}:
        if TRUTHS[key] == "seeded_defect":
            plans[0][key] = "pass"
    for n, (plan, seconds) in enumerate(zip(plans, (10.0, 10.0, 1.0), strict=True)):
        judge = invite_and_join(session, name=f"Judge {n}").judge
        codes = dict(judge.assignments.values_list("item__key", "code"))
        for key, value in plan.items():
            verdict_record(judge=judge, code=codes[key], phase=1, value=value,
                           seconds_spent=seconds)
        phase_lock(judge=judge, phase=1)
    return advance(session, "revealed"), seed, screening, plans


@pytest.mark.django_db
def test_a_judge_who_misses_every_screening_defect_is_excluded_and_scored_on_the_rest(host):
    session, seed, screening, plans = revealed_with_rules(host)
    # The seed comes from the session's draws (a pinned draw seed replays it); the protocol
    # freezes its hash and the share, never the seed or the items it draws.
    assert seed == hmac_hex(DRAW_SEED, "screening#0")
    assert session.protocol["screening"] == {"share": 0.5,
                                             "seed_sha256": sha256_hex(bytes.fromhex(seed))}
    frozen = json.dumps(session.protocol)
    assert seed not in frozen
    assert session.protocol["actions"] == [MISSED, FAST]
    # Nor does the host's page show it before the reveal.
    assert not any(seed in line["details"] for line in session_events(session))

    report = build_report(session)
    section = report["preregistered_exclusions"]
    pseudonyms = [j["judge"] for j in report["scores"]["judges"]]
    assert (section["stated"], section["primary"], section["rules"]) == (True, True, [MISSED, FAST])
    assert section["screening"] == {
        "share": 0.5, "seed": seed, "seed_sha256": session.protocol["screening"]["seed_sha256"],
        "items": sorted(screening),
        "controls": {"seeded_defect": {"controls": 6, "screening": 3},
                     "known_good": {"controls": 6, "screening": 3}}}

    # Screening figures: judge 0 caught none of the 3 screening seeded defects; judge 2 gave every
    # one of 33 answers in 1 s (< 2 s).
    figures = {e["judge"]: {f["rule"]: (f["k"], f["n"], f["excludes"]) for f in e["rules"]}
               for e in section["screened"]}
    assert figures == {
        pseudonyms[0]: {MISSED["name"]: (0, 3, True), FAST["name"]: (0, 33, False)},
        pseudonyms[1]: {MISSED["name"]: (3, 3, False), FAST["name"]: (0, 33, False)},
        pseudonyms[2]: {MISSED["name"]: (3, 3, False), FAST["name"]: (33, 33, True)},
    }
    assert section["excluded_judges"] == [{"judge": pseudonyms[0], "rules": [MISSED["name"]]},
                                          {"judge": pseudonyms[2], "rules": [FAST["name"]]}]

    # Every judge is reported, the excluded ones too, on the controls that did not screen: judge
    # 0's reported recall counts the one other defect they missed, not the screening ones.
    for n, entry in enumerate(section["judges"]):
        assert entry["judge"] == pseudonyms[n]
        assert entry["excluded_by"] == [[MISSED["name"]], [], [FAST["name"]]][n]
        scored = entry["phases"]["1"]["current"]
        caught, defective, passed, good = rates(plans[n], screening)
        assert (scored["recall"]["k"], scored["recall"]["n"], scored["tnr"]["k"],
                scored["tnr"]["n"]) == (caught, defective, passed, good)
    assert rates(plans[0], screening) == (13, 14, 13, 13)
    # Everyone and everything, in the scores section: every item, screening ones included.
    everyone = report["scores"]["judges"][0]["phases"]["1"]["current"]
    assert (everyone["recall"]["k"], everyone["recall"]["n"]) == rates(plans[0], set())[:2] == (
        13, 17)

    # The builders compared again without judges 0 and 2: judge 1 alone (7 copies a builder),
    # beside everyone's (21).
    def invited(section_, builder):
        entry = next(b for b in section_["builders"] if b["builder"] == builder)
        return entry["judges"]["invited"]["1"]

    assert [(invited(section["builders_compared"], b)["k"],
             invited(section["builders_compared"], b)["n"]) for b in ("b1", "b2", "b3")] == [
        (7, 7), (0, 7), (3, 7)]
    assert [invited(report["builders_compared"], b)["n"] for b in ("b1", "b2", "b3")] == [21] * 3
    assert section["reviewers"] == report["scores"]["reviewers"]

    # The headline states the primary results: with the exclusions.
    builders = next(e for e in headline(report) if e["key"] == "builders")
    assert builders["sentences"][0] == (
        "With every preregistered exclusion together, the primary results (everyone's are in the "
        f"section below): they leave out 2 judges ({pseudonyms[0]}, {pseudonyms[2]}).")
    assert builders["figures"][0] == "preregistered_exclusions.builders_compared.builders"

    # The CSV and JSON Lines rows say which are left out: every row of judges 0 and 2, and no
    # other (the rule excludes no task).
    rows = [json.loads(line) for line in to_jsonl(report).decode("utf-8").splitlines()]
    assert {(r["judge"], r["excluded"]) for r in rows} == {
        (pseudonyms[0], True), (pseudonyms[1], False), (pseudonyms[2], True)}
    cells = list(csv.DictReader(io.StringIO(to_csv(report), newline="")))
    assert [c["excluded"] for c in cells] == [str(r["excluded"]) for r in rows]

    assert schema_errors(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")), exported(report)) == []
    assert verify(json.loads(json.dumps(report)))[0] == []
    page = to_html(report)
    assert "These are everyone’s results; the primary ones, with the preregistered exclusions" in page
    assert (f"judges left out: {pseudonyms[0]} (by “missed the seeded defects”), {pseudonyms[2]} "
            "(by “too fast”)") in page
    assert "Screening controls: 0.5 of each kind" in page
    assert "“missed the seeded defects” 0/3 (excludes)" in page


@pytest.mark.django_db
def test_a_time_rule_alone_draws_no_screening_and_scores_on_every_item(host):
    session, _seed, _screening, plans = revealed_with_rules(host, rules=(FAST,))
    assert "screening" not in session.protocol
    assert not AuditEvent.objects.filter(session=session, action="screening.drawn").exists()
    report = build_report(session)
    section = report["preregistered_exclusions"]
    assert section["screening"] is None
    assert [e["judge"] for e in section["excluded_judges"]] == [
        report["scores"]["judges"][2]["judge"]]
    # No control screened anyone, so every judge's scores here are everyone's, on every item.
    for entry, full in zip(section["judges"], report["scores"]["judges"], strict=True):
        assert entry["phases"] == full["phases"]
    assert verify(json.loads(json.dumps(report)))[0] == []
