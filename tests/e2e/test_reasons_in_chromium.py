"""A seed-002 style audit of model reasons, end to end in real Chromium on real replies (issue 30,
"done when"): the seed-000 run with the reviewers' committed replies as reasons
(tests/data/seed000/reviews-v1-texts.jsonl, tests/data/README.md), a reasons session sampled per
reviewer × right or wrong verdict × truth class, two judges auditing by keys with a reason typed
for each, never shown which model wrote a reason, then phase 2 beside the truth; revealed, and
the report's per-reviewer grounded rates checked against a computation written here."""

import re

import pytest
from playwright.sync_api import expect

from content.scoring import rate
from judging.models import Verdict
from judging.services import phase_lock
from reports.build import build_report
from reports.verify import verify
from tests.e2e.judge_keys import in_browser_as, judge_by_keys
from tests.support.seed000 import review_texts, seed_bundle_with_reasons
from tests.worlds import a_host, a_run, a_session, advance, answer_all, invite_and_join, judge_cookie

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.browser_once("the auditor's pages driven in Chromium")]

AUDITED = ("Qwen/Qwen2.5-Coder-3B-Instruct", "Qwen/Qwen3-1.7B")
WORDS = re.compile(r"[A-Za-z0-9]+")
KEYS = {"grounded": "1", "partly": "2", "not_grounded": "3", "no_claim": "4"}


def audited_bundle():
    """The seed run cut to the clean reviews of two reviewers whose whole replies are committed,
    their copies and tasks: the audit's material, as real as it comes."""
    bundle = seed_bundle_with_reasons()
    reviews = [r for r in bundle["reviews"] if r["condition"] == "clean"
               and r["reviewer"] in AUDITED and r.get("reason")]
    copies = {r["copy"] for r in reviews}
    bundle["reviews"] = reviews
    bundle["copies"] = [c for c in bundle["copies"] if c["id"] in copies]
    tasks = {c["task"] for c in bundle["copies"]}
    bundle["tasks"] = [t for t in bundle["tasks"] if t["id"] in tasks]
    bundle["reviewers"] = [r for r in bundle["reviewers"] if r["id"] in AUDITED]
    return bundle


def test_two_judges_audit_real_reasons_and_the_report_counts_them(e2e_server, observed_context,
                                                                  sink):
    origin = e2e_server.origin
    run = a_run(a_host("auditing-host"), audited_bundle())
    session = a_session(run, "open", kind="reasons", reasons_per_stratum=2,
                        rubric="Check every claim of the reason against the code and docstring.")
    texts = {(t.reviewer, t.copy): t for t in review_texts().values() if t.condition == "clean"}
    # The first judge calls a reason grounded where its verdict was right and not grounded where
    # it was wrong (a judge who reads verdicts, the bias the audit is there to see); the second
    # calls every reason partly grounded.
    def first(key):
        _, reviewer, copy = key.split(":", 2)
        return "grounded" if texts[(reviewer, copy)].correct else "not_grounded"

    rules = [first, lambda key: "partly"]
    judges = []
    for n, rule in enumerate(rules):
        judge = invite_and_join(session, f"Auditor {n}").judge
        keys = {key: (KEYS[rule(key)], f"checked claim {n}") for key in
                judge.assignments.values_list("item__key", flat=True)}
        context, seen = observed_context(origin, viewport={"width": 1280, "height": 900})
        page = in_browser_as(context, origin, judge_cookie(judge))
        page.goto(e2e_server.url(f"/s/{session.url_id}/"))
        expect(page.get_by_role("heading", name="Phase 1: judge alone")).to_be_visible()
        first_code = judge.assignments.order_by("position").values_list("code", flat=True)[0]
        page.goto(e2e_server.url(f"/s/{session.url_id}/i/{first_code}/"))
        # The review is shown, with its real reason, and never which model wrote it.
        expect(page.get_by_role("heading", name="The review to audit")).to_be_visible()
        first_key = judge.assignments.get(code=first_code).item.key
        _, reviewer, copy = first_key.split(":", 2)
        # Its words as the page shows them (marks such as `code` rendered, spacing collapsed).
        shown = " ".join(WORDS.findall(page.locator(".review-audited blockquote").inner_text()))
        assert " ".join(WORDS.findall(texts[(reviewer, copy)].text)[:8]) in shown
        assert "Qwen" not in page.locator("main").inner_text()
        judge_by_keys(page, e2e_server, session, judge, keys)
        total = len(keys)
        page.get_by_role("button", name=f"Lock my {total} phase-1 verdicts").click()
        expect(page.get_by_role("heading", name="Phase 2: beside the known truth")).to_be_visible()
        seen.assert_silent(sink)
        judge.refresh_from_db()
        answer_all(judge, 2, "keep")
        phase_lock(judge=judge, phase=2)
        judges.append(judge)

    report = build_report(advance(session, "revealed"))
    assert verify(report)[0] == []
    sample = report["reasons"]["sample"]
    assert sample["by"] == "stratified" and sample["per_stratum"] == 2
    stored = list(Verdict.objects.filter(assignment__judge__session=session, phase=1)
                  .values_list("assignment__item__key", "value"))
    for entry in report["reasons"]["reviewers"]:
        mine = [(key, value) for key, value in stored
                if key.startswith(f"review:{entry['reviewer']}:")]
        right = [texts[tuple(key.split(":", 2)[1:])].correct for key, _ in mine]
        grounded = [value == "grounded" for _, value in mine]
        phase1 = entry["phases"]["1"]
        assert phase1["audits"] == len(mine)
        when_correct = [g for g, r in zip(grounded, right, strict=True) if r]
        when_wrong = [g for g, r in zip(grounded, right, strict=True) if not r]
        assert phase1["grounded_when_correct"] == {
            **rate(sum(when_correct), len(when_correct)),
            "resampled": phase1["grounded_when_correct"]["resampled"]}
        assert phase1["grounded_when_wrong"] == {
            **rate(sum(when_wrong), len(when_wrong)),
            "resampled": phase1["grounded_when_wrong"]["resampled"]}
        assert (phase1["right_for_right_reasons"]["k"], phase1["right_for_right_reasons"]["n"]) \
            == (sum(g and r for g, r in zip(grounded, right, strict=True)), len(mine))
        # The first judge's grounded answers all fell on right verdicts: none on a wrong one.
        assert phase1["grounded_when_wrong"]["k"] == 0
    assert "Traceback" not in e2e_server.stderr()
