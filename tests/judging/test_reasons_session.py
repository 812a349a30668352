"""Reasons sessions (issue 30 items 1 and 2): people audit whether a model review's reason is
grounded in the copy; every review or a stratified sample drawn with a committed seed; at most
one review of a copy per judge; the reviewer never shown; phase 2 adds the copy's known truth;
its judges checked against the run's unrevealed sessions both ways."""

import hashlib
import json

import pytest
from django.urls import reverse

from blindjudge.errors import Conflict, Invalid
from judging.enums import SessionKind, SessionState
from judging.models import Item, ReviewRender
from judging.selectors.host import blinding_check
from judging.selectors.judge import judge_item
from judging.selectors.preview import preview_slots
from judging.services import (
    InsideMatrix,
    host_join,
    invitation_create,
    item_save,
    phase_lock,
    session_create,
)
from reports.build import build_report
from reports.html import to_html
from reports.verify import verify
from tests.reports.test_builders import exported, schema_errors
from tests.reports.test_report import SCHEMA_PATH
from tests.worlds import (
    a_github_attempt,
    a_github_judge,
    a_run,
    a_session,
    advance,
    client_as,
    codes,
    invite_and_join,
    make_run2_bundle,
)

DEFAULT_REVIEWS = ["review:r1:c1", "review:r1:c2", "review:r2:c1", "review:r2:c2"]


@pytest.fixture
def run2(host):
    return a_run(host, make_run2_bundle())


def reasons(run, state=SessionState.OPEN, **options):
    return a_session(run, state, kind=SessionKind.REASONS, **options)


def keys(session):
    return sorted(Item.objects.filter(session=session).values_list("key", flat=True))


def test_a_reasons_session_holds_every_default_condition_review(run2):
    session = reasons(run2, SessionState.DRAFT)
    assert keys(session) == DEFAULT_REVIEWS  # the told_pass reviews are not audited
    item = Item.objects.get(session=session, key="review:r1:c2")
    assert (item.review.reviewer.bundle_id, item.copy.bundle_id) == ("r1", "c2")
    assert session.reasons_sample == {"by": "all"} and session.reasons_seed == ""


def test_a_stratified_sample_is_drawn_with_a_recorded_and_committed_seed(run2):
    pinned = reasons(run2, SessionState.OPEN, reasons_per_stratum=1, draw_seed="cd" * 32)
    again = reasons(run2, SessionState.DRAFT, reasons_per_stratum=1, draw_seed="cd" * 32)
    assert keys(pinned) == keys(again)  # a pinned draw replays
    sample = pinned.protocol["reasons_sample"]
    assert sample == {"by": "stratified", "per_stratum": 1,
                      "seed_sha256": hashlib.sha256(bytes.fromhex(pinned.reasons_seed)).hexdigest()}
    # r1 on c1 (known_good, pass: correct) and c2 (seeded_defect, fail: correct) are two strata
    # (good and defective); r2 abstains on c1 (not_flagged: a pass, correct) and fails c2: one
    # review per stratum, so here every review.
    assert keys(pinned) == DEFAULT_REVIEWS
    with pytest.raises(Invalid, match="per stratum"):
        session_create(run=run2, kind=SessionKind.REASONS, actor="test", reasons_per_stratum=0)
    with pytest.raises(Invalid, match="only a reasons session samples"):
        session_create(run=run2, kind=SessionKind.COPIES, actor="test", reasons_per_stratum=1)


def test_a_reasons_session_refuses_what_does_not_apply(run2):
    for setting, words in (({"guests_allowed": True}, "no guests"), ({"by_task": True}, "by task"),
                           ({"task_flags": True}, "task flags"),
                           ({"scorecards": True}, "scorecards"),
                           ({"mark_disagreement": True}, "marking disagreements")):
        with pytest.raises(Invalid, match=words):
            session_create(run=run2, kind=SessionKind.REASONS, actor="test", **setting)


def test_a_judge_audits_at_most_one_review_of_a_copy(run2):
    session = reasons(run2)
    for n in range(3):
        judge = invite_and_join(session, f"Auditor {n}").judge
        copies = list(judge.assignments.values_list("item__copy__bundle_id", flat=True))
        assert sorted(copies) == ["c1", "c2"]  # one review of each copy, never two
    # Balanced: the reviews of a copy are spread over the judges.
    audited = sorted(Item.objects.filter(session=session).values_list("key", flat=True)
                     .filter(assignments__isnull=False).distinct())
    assert audited == DEFAULT_REVIEWS


def test_the_audit_shows_the_review_never_its_reviewer_and_phase_2_the_truth(run2):
    session = reasons(run2)
    assert ReviewRender.objects.filter(session=session).count() == 4
    judge = invite_and_join(session).judge
    browser = client_as(judge)
    by_code = dict(judge.assignments.values_list("code", "item__key"))
    for code in codes(judge):
        view = judge_item(judge, code)
        assert view.review is not None and view.known_truth is None and view.reviewer_rows == []
        text = browser.get(reverse("judge_item", args=[session.url_id, code])).content.decode()
        assert "The review to audit" in text and "Known truth" not in text
        # The reviewer's model, family and the review's condition appear nowhere on the page.
        for name in ("qwen3", "gpt-4o-mini", "Alibaba", "told_pass", "Reviewer A"):
            assert name not in text
    first = codes(judge)[0]
    with pytest.raises(Invalid, match='"pass" is not one of grounded, partly, not_grounded, '
                                      'no_claim'):
        item_save(judge=judge, code=first, phase=1, value="pass")
    for code in codes(judge):
        item_save(judge=judge, code=code, phase=1, value="grounded")
    with pytest.raises(Conflict, match="2 of 2 items have no reason yet: an audit of reasons"):
        phase_lock(judge=judge, phase=1)
    for code in codes(judge):
        item_save(judge=judge, code=code, phase=1, value="not_grounded", reason="no such line")
    phase_lock(judge=judge, phase=1)
    judge.refresh_from_db()
    truths = {"review:r1:c1": "Good (no defect known)", "review:r1:c2": "Has a seeded defect",
              "review:r2:c1": "Good (no defect known)", "review:r2:c2": "Has a seeded defect"}
    for code in codes(judge):
        view = judge_item(judge, code)
        assert view.phase == 2 and view.known_truth == truths[by_code[code]]
        text = browser.get(reverse("judge_item", args=[session.url_id, code])).content.decode()
        assert f"Known truth: <strong>{truths[by_code[code]]}</strong>" in text
        assert "What the model reviewers said" not in text
    item_save(judge=judge, code=first, phase=2, value="keep")


def test_a_reason_naming_its_reviewer_must_be_decided_before_opening(host):
    bundle = make_run2_bundle()
    bundle["reviews"][0]["reason"] = "As qwen3-1.7b I find it fine"
    session = reasons(a_run(host, bundle), SessionState.DRAFT)
    undecided = blinding_check(session)["undecided"]
    assert any("qwen3" in entry["matched"].lower() and "review reason" in entry["first"]
               for entry in undecided), undecided
    with pytest.raises(Invalid):
        advance(session, SessionState.OPEN)


def test_auditors_and_judges_of_unrevealed_sessions_are_kept_apart(run2, standin):
    copies = a_session(run2, SessionState.OPEN)
    a_github_judge(copies, standin, login="judy", github_id=7)
    audit = reasons(run2)
    with pytest.raises(Invalid, match='"judy" judges copies session'):
        invitation_create(session=audit, actor="test", github_login="judy")
    done = a_github_attempt(audit, standin, login="judy-two", github_id=7)
    assert done.status_code == 403
    assert f"You judge copies session {copies.pk} on this run, which is not revealed yet" in \
        done.content.decode()
    # The reverse: an auditor cannot then judge the run's sessions blind.
    a_github_judge(audit, standin, login="audrey", github_id=8)
    findings = a_session(run2, SessionState.OPEN, kind=SessionKind.FINDINGS)
    done = a_github_attempt(findings, standin, login="audrey-two", github_id=8)
    assert done.status_code == 403
    assert f"model reasons (reasons session {audit.pk})" in \
        done.content.decode()
    # Once the copies session is revealed, its judge may audit the reasons.
    advance(copies, SessionState.REVEALED)
    assert a_github_judge(audit, standin, login="judy-three", github_id=7).session_id == audit.pk


def test_the_report_gives_each_reviewers_grounded_rates_against_a_computation(run2):
    """Two auditors; the rates per reviewer written out here from the stored answers."""
    session = reasons(run2)
    answer_of = {"review:r1:c1": "grounded", "review:r1:c2": "not_grounded",
                 "review:r2:c1": "grounded", "review:r2:c2": "grounded"}
    for n in range(2):
        judge = invite_and_join(session, f"Auditor {n}").judge
        for code, key in judge.assignments.values_list("code", "item__key"):
            item_save(judge=judge, code=code, phase=1, value=answer_of[key], reason="checked")
        phase_lock(judge=judge, phase=1)
        for code in codes(judge):
            item_save(judge=judge, code=code, phase=2, value="keep")
        phase_lock(judge=judge, phase=2)
    report = build_report(advance(session, SessionState.REVEALED))
    assert schema_errors(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")), exported(report)) == []
    section = report["reasons"]
    audits = [(v["item"], v["value"]) for v in report["verdicts"] if v["phase"] == 1]
    # Every review here is right (r1 passes good c1, fails defective c2; r2 abstains on good c1,
    # a pass under not_flagged, and fails c2): so grounded-when-correct is grounded over all.
    for entry in section["reviewers"]:
        mine = [value for item, value in audits if item.startswith(f"review:{entry['reviewer']}:")]
        phase1 = entry["phases"]["1"]
        assert phase1["audits"] == len(mine) == 2
        grounded = sum(value == "grounded" for value in mine)
        assert (phase1["grounded_when_correct"]["k"], phase1["grounded_when_correct"]["n"]) == (
            grounded, len(mine))
        assert phase1["grounded_when_wrong"]["n"] == 0
        assert (phase1["right_for_right_reasons"]["k"], phase1["right_for_right_reasons"]["n"]) \
            == (grounded, len(mine))
        assert phase1["answers"]["grounded"] == grounded
    # Nothing of a reasons session is scored as a verdict on a copy.
    assert all(j["phases"]["1"]["current"]["recall"]["n"] == 0 for j in report["scores"]["judges"])
    assert report["session"]["kind"] == "reasons"
    assert verify(report)[0] == []


def test_the_html_report_of_a_reasons_session_has_its_audit_table(run2):
    session = reasons(run2)
    judge = invite_and_join(session).judge
    for code in codes(judge):
        item_save(judge=judge, code=code, phase=1, value="partly", reason="half of it")
    phase_lock(judge=judge, phase=1)
    page = to_html(build_report(advance(session, SessionState.REVEALED)))
    table = page[page.index('<h2 id="reasons">'):]
    report = build_report(session.__class__.objects.get(pk=session.pk))
    for entry in report["reasons"]["reviewers"]:
        audits = entry["phases"]["1"]["audits"]
        if audits:
            assert f'<th scope="row">{entry["reviewer"]}</th><td class="n">1</td><td class="n">' \
                   f'{audits}</td>' in table and f"{audits} partly" in table
    assert "Right for the right reasons" in table


def test_the_hosts_preview_shows_the_review_audited_and_in_phase_2_the_truth(run2, host):
    for state in (SessionState.DRAFT, SessionState.OPEN):
        session = reasons(run2, state)
        browser = client_as(host)
        start = browser.get(reverse("preview_start", kwargs={"session_id": session.pk}))
        seed = start["Location"].rstrip("/").split("/")[-3]
        code = preview_slots(session, seed)[0].code
        for phase in (1, 2):
            page = browser.get(reverse("preview_item", kwargs={
                "session_id": session.pk, "seed": seed, "phase": phase, "code": code}))
            assert page.status_code == 200
            text = page.content.decode()
            assert "The review to audit" in text and "What the model reviewers said" not in text
            assert ("Known truth" in text) == (phase == 2)


def test_a_stratified_sample_gives_the_whole_output_by_the_stratified_estimator(host):
    """Unequal sampling fractions: r1's right-on-good stratum holds 3 reviews (c1, c3, c4) of
    which 1 is sampled, its right-on-defective one 1 of 1 (c2). Two auditors between them audit
    every review sampled (one review of each copy each, least audited first). The estimate
    weights each stratum's rate by its share of r1's reviews, written out here."""
    bundle = make_run2_bundle()
    bundle["reviews"] += [{"reviewer": "r1", "copy": c, "verdict": "pass", "reason": "ok"}
                          for c in ("c3", "c4")]  # tests_pass: right, good
    session = reasons(a_run(host, bundle), reasons_per_stratum=1)
    for n in range(2):
        judge = invite_and_join(session, f"Auditor {n}").judge
        for code, key in judge.assignments.values_list("code", "item__key"):
            value = "grounded" if key.endswith(":c2") else "not_grounded"
            item_save(judge=judge, code=code, phase=1, value=value, reason="checked")
        phase_lock(judge=judge, phase=1)
    report = build_report(advance(session, SessionState.REVEALED))
    assert schema_errors(json.loads(SCHEMA_PATH.read_text(encoding="utf-8")), exported(report)) == []
    r1 = next(r for r in report["reasons"]["reviewers"] if r["reviewer"] == "r1")
    phase1 = r1["phases"]["1"]
    strata = {(s["correctness"], s["truth_class"]): s for s in phase1["whole_output"]["strata"]}
    assert strata == {
        ("correct", "good"): {"correctness": "correct", "truth_class": "good", "reviews": 3,
                              "audited": 1, "grounded": 0},
        ("correct", "defective"): {"correctness": "correct", "truth_class": "defective",
                                   "reviews": 1, "audited": 1, "grounded": 1}}
    # (3 · 0/1 + 1 · 1/1) / 4: a quarter of r1's output, where the sample's own rate (per audit,
    # as the audits fell) is a third or more.
    expected = (3 * 0 / 1 + 1 * 1 / 1) / 4
    assert phase1["whole_output"]["grounded"]["value"] == pytest.approx(expected) == 0.25
    audits = [v["value"] for v in report["verdicts"]
              if v["phase"] == 1 and v["item"].startswith("review:r1:")]
    per_audit = audits.count("grounded") / len(audits)
    assert phase1["grounded_when_correct"]["rate"] == pytest.approx(per_audit)
    assert per_audit >= 1 / 3
    # One review sampled per stratum: too few for a bootstrap, and it says so.
    assert phase1["whole_output"]["grounded"]["low"] is None
    assert phase1["whole_output"]["grounded"]["withheld"].startswith("no interval")


def test_the_host_cannot_audit_the_reasons_of_their_run(run2, host):
    session = reasons(run2)
    with pytest.raises(InsideMatrix, match="host of the run cannot audit its reasons"):
        host_join(session=session, host=host)
    judge = invite_and_join(session).judge
    for code in codes(judge):
        item_save(judge=judge, code=code, phase=1, value="no_claim", reason="nothing to check")
    phase_lock(judge=judge, phase=1)
    report_auditors = build_report(advance(session, SessionState.REVEALED))["reasons"]["auditors"]
    assert report_auditors == [{"judge": "J01", "identified_by": "token",
                                "outside_the_matrix": "declared, not checked"}]
