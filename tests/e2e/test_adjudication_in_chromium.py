"""Truth a host can stand behind, in real Chromium against a real server (issue 29, "done when"):
a run with findings and a copy of unknown truth; a copies session with task flags and a
preregistered exclusion, judged by two judges (one by join link, by keys; one by GitHub through
the stand-in); an adjudication the host creates on their page, adjudicated by a third person
signed in with GitHub, by keys, with a reason for every answer and "cannot tell" for one; the
identity rule refusing both ways in the browser; the reveal; and the report's two scoring
sections and its re-analysis without the flagged task, each checked against a computation
written here from the stored verdicts and truths."""

import json

import pytest
from playwright.sync_api import expect

from accounts.models import Judge
from content.scoring import rate
from judging.models import Session, Verdict
from judging.services import (
    invitation_create,
    item_save,
    phase_lock,
    session_open,
    task_flag_record,
)
from reports.build import build_report
from reports.verify import verify
from tests.e2e.judge_keys import in_browser_as, judge_by_keys
from tests.e2e.test_github_in_chromium import sign_in_with_github
from tests.worlds import (
    a_host,
    a_run,
    a_session,
    advance,
    answer_all,
    host_cookie,
    invite_and_join,
    judge_cookie,
    make_run2_bundle,
)

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser_once(
        "the adjudicator's and the judges' pages driven by keys, and the report they lead to"),
]

RULE = {"name": "drop tasks judges found unsound", "action": "exclude_tasks",
        "when": {"flag_share": ">=0.5", "severity": ">=2"}}
DEFECTIVE, GOOD = {"seeded_defect", "tests_fail"}, {"known_good", "tests_pass"}
# What the adjudicator decides, by item: a key and the reason typed before it.
ADJUDICATION = {"finding:f2": ("1", "real", "No input is ever checked, as the finding says"),
                "finding:f3": ("3", "cannot_tell", "Overflow is not shown either way"),
                "copy:c6": ("2", "fail", "It subtracts: 1 and 2 give -1")}


def unknown_run2():
    """make_run2_bundle() with f2 of unknown truth and f3, of unknown truth, on c6 (itself
    unknown, raised in r2's review of it, which fails it): two findings and a copy the tests
    could not settle."""
    bundle = make_run2_bundle()
    bundle["reviews"].append({"reviewer": "r2", "copy": "c6", "verdict": "fail",
                              "reason": "overflows"})
    bundle["findings"][1]["truth"] = "unknown"
    bundle["findings"].append({"id": "f3", "copy": "c6", "text": "misbehaves on overflow",
                               "raised_by": ["r2"], "proposed_verdict": "refuted",
                               "truth": "unknown"})
    return bundle


def computed_scores(verdicts, truths, phase=1):
    """Recall and true-negative rate from (item, value) verdicts and item -> truth class."""
    caught = sum(1 for item, value in verdicts if truths.get(item) == "defective" and value in
                 ("fail", "real"))
    defective = sum(1 for item, _ in verdicts if truths.get(item) == "defective")
    passed = sum(1 for item, value in verdicts if truths.get(item) == "good" and value in
                 ("pass", "false_alarm"))
    good = sum(1 for item, _ in verdicts if truths.get(item) == "good")
    return rate(caught, defective), rate(passed, good)


def test_adjudication_flags_and_both_scorings_end_to_end(e2e_server, observed_context, sink,
                                                         standin):
    origin = e2e_server.origin
    host = a_host("adjudicating-host")
    run = a_run(host, unknown_run2())
    prereg = "Tasks judges find unsound go.\n\n```rules\n" + json.dumps([RULE]) + "\n```\n"
    copies = a_session(run, "open", task_flags=True, preregistration=prereg, rubric="Does it work?")

    # Judge A, by join link, answers phase 1 by keys in the browser (fail on t-add, pass on
    # t-sub) and locks it on the review page.
    a = invite_and_join(copies, "Ada Judge").judge
    a_keys = {key: ("2" if key in ("c1", "c2", "c3") else "1", "") for key in
              a.assignments.values_list("item__key", flat=True)}
    a_context, a_seen = observed_context(origin, viewport={"width": 1280, "height": 900})
    a_page = in_browser_as(a_context, origin, judge_cookie(a))
    judge_by_keys(a_page, e2e_server, copies, a, a_keys)
    a_page.get_by_role("button", name="Lock my 6 phase-1 verdicts").click()
    expect(a_page.get_by_role("heading", name="Phase 2: beside the model reviewers")).to_be_visible()
    a.refresh_from_db()
    answer_all(a, 2, "keep", lock=True)
    a_seen.assert_silent(sink)

    # Judge B signs in with GitHub through the stand-in, then answers (every copy pass) and
    # flags t-sub at severity 3 in phase 1.
    invitation_create(session=copies, actor="test", github_login="bee")
    b_context, b_seen = observed_context(origin, also_allowed=(standin.url,))
    b_page = b_context.new_page()
    sign_in_with_github(b_page, e2e_server, copies, standin, github_id=202, login="bee")
    b_page.get_by_role("button", name="Continue to the session").click()
    expect(b_page.get_by_role("heading", name="You are in")).to_be_visible()
    b = Judge.objects.get(session=copies, github_id=202)
    b_codes = dict(b.assignments.values_list("item__key", "code"))
    for code in b_codes.values():
        item_save(judge=b, code=code, phase=1, value="pass")
    task_flag_record(judge=b, code=b_codes["c5"], phase=1, kind="tests_unfair", severity=3,
                     reason="The tests of sub want a + b")
    phase_lock(judge=b, phase=1)
    answer_all(b, 2, "keep", lock=True)

    # The host creates the adjudication on the run's page: the findings of unknown truth and,
    # ticked, the copies of unknown truth.
    host_context, host_seen = observed_context(origin)
    host_page = in_browser_as(host_context, origin, host_cookie(host))
    host_page.goto(e2e_server.url(f"/host/runs/{run.pk}/"))
    host_page.get_by_label("Judges judge").select_option("adjudication")
    # Its settings are folded below the common ones.
    host_page.get_by_text("For pairs, an adjudication or an audit of reasons").click()
    host_page.get_by_label("Adjudication: its copies of unknown truth too (pass / fail)").check()
    host_page.get_by_role("button", name="Create draft session").click()
    adjudication = Session.objects.get(run=run, kind="adjudication")
    expect(host_page.get_by_role("heading", name="Adjudication")).to_be_visible()
    assert sorted(adjudication.items.values_list("key", flat=True)) == sorted(ADJUDICATION)
    adjudication = session_open(session=adjudication, actor="test")

    # Inside the matrix, refused: B (a judge of the copies) under another login.
    invitation_create(session=adjudication, actor="test", github_login="bee-too")
    refused_context, refused_seen = observed_context(origin, also_allowed=(standin.url,))
    refused = refused_context.new_page()
    sign_in_with_github(refused, e2e_server, adjudication, standin, github_id=202, login="bee-too")
    if refused.get_by_role("button", name="Continue to the session").count():
        refused.get_by_role("button", name="Continue to the session").click()
    expect(refused.locator("body")).to_contain_text(
        f"You judge copies session {copies.pk} on this run")
    assert not adjudication.judges.exists()

    # The adjudicator, Cee, signs in with GitHub and adjudicates by keys, a reason for each.
    invitation_create(session=adjudication, actor="test", github_login="cee")
    c_context, c_seen = observed_context(origin, also_allowed=(standin.url,),
                                         viewport={"width": 1280, "height": 900})
    c_page = c_context.new_page()
    sign_in_with_github(c_page, e2e_server, adjudication, standin, github_id=303, login="cee")
    c_page.get_by_role("button", name="Continue to the session").click()
    expect(c_page.get_by_role("heading", name="You are in")).to_be_visible()
    c = Judge.objects.get(session=adjudication)
    c_page.goto(e2e_server.url(f"/s/{adjudication.url_id}/"))
    expect(c_page.get_by_role("heading", name="Adjudication: decide what the tests could not")) \
        .to_be_visible()
    judge_by_keys(c_page, e2e_server, adjudication, c,
                  {key: (k, reason) for key, (k, _value, reason) in ADJUDICATION.items()})
    expect(c_page.locator("body")).not_to_contain_text("Reviewer A")
    c_page.get_by_role("button", name="Lock my 3 phase-1 verdicts").click()
    expect(c_page.get_by_role("heading", name="Done")).to_be_visible()
    expect(c_page.locator("body")).to_contain_text("You have locked your answers")
    answers = {key: (value, reason) for key, value, reason in Verdict.objects.filter(
        assignment__judge=c).values_list("assignment__item__key", "value", "reason")}
    assert answers == {key: (value, reason) for key, (_k, value, reason) in ADJUDICATION.items()}

    # The reverse: Cee, the adjudicator, cannot then judge the copies under another login.
    invitation_create(session=copies, actor="test", github_login="cee-too")
    reverse_context, reverse_seen = observed_context(origin, also_allowed=(standin.url,))
    reverse = reverse_context.new_page()
    sign_in_with_github(reverse, e2e_server, copies, standin, github_id=303, login="cee-too")
    if reverse.get_by_role("button", name="Continue to the session").count():
        reverse.get_by_role("button", name="Continue to the session").click()
    expect(reverse.locator("body")).to_contain_text(
        f"You adjudicate items of this run (adjudication session {adjudication.pk})")
    assert copies.judges.count() == 2

    # The reveal, and the report.
    advance(adjudication, "revealed")
    copies = advance(Session.objects.get(pk=copies.pk), "revealed")
    report = build_report(copies)
    assert verify(report)[0] == []
    truth = {c["id"]: c["truth"] for c in report["copies"]}
    classes = {key: "defective" if t in DEFECTIVE else "good" if t in GOOD else None
               for key, t in truth.items()}
    stored = {j.pseudonym: list(Verdict.objects.filter(assignment__judge=j, phase=1)
                                .values_list("assignment__item__key", "value"))
              for j in (a, b)}

    # 1. Test-confirmed truth, as always: c6 (unknown) never scored.
    for judge in report["scores"]["judges"]:
        recall, tnr = computed_scores(stored[judge["judge"]], classes)
        mine = judge["phases"]["1"]["current"]
        assert (mine["recall"], mine["tnr"]) == (recall, tnr)
        assert mine["unknown_truth"] == 1

    # 2. Adjudicated items alone, apart: c6 adjudicated fail (defective), nothing else.
    section = report["adjudicated"]
    (entry,) = section["adjudications"]
    assert entry["used"] and entry["outside_the_matrix"]["status"] == "checked"
    assert entry["outside_the_matrix"]["matrix_judges_checked"] == 1  # B, by GitHub
    assert entry["opened_after_reveal"] is False
    items = {i["item"]: i for i in section["items"]}
    assert items["copy:c6"]["reads"].startswith("unknown, adjudicated fail (")
    assert items["finding:f2"]["reads"].startswith("unknown, adjudicated real (")
    assert items["finding:f3"]["reads"].startswith("unknown, cannot tell (")
    adjudicated = {"c6": "defective"}
    for judge in section["scores"]["judges"]:
        recall, tnr = computed_scores(stored[judge["judge"]], adjudicated)
        mine = judge["phases"]["1"]["current"]
        assert (mine["recall"], mine["tnr"]) == (recall, tnr)
    # The reviewers too, on c6 alone: r2 failed it (a catch); r1 never reviewed it.
    by_reviewer = {r["reviewer"]: r for r in section["scores"]["reviewers"]}
    recall = [g["current"]["recall"] for g in by_reviewer["r2"]["groups"].values()]
    assert rate(1, 1) in recall and all(r["n"] in (0, 1) for r in recall)
    assert all(g["current"]["recall"]["n"] == 0 for g in by_reviewer["r1"]["groups"].values())

    # 3. The re-analysis without the task the rule excludes: B's phase-1 flag on t-sub is 1 of
    # the 2 judges who saw it (>= 0.5, severity 3): t-sub goes. Leave-one-out: B without their
    # own flag keeps t-sub (0 of 1); A is scored without it.
    exclusions = report["preregistered_exclusions"]
    assert exclusions["stated"] and exclusions["excluded_tasks"] == ["t-sub"]
    on_add = {key: cls for key, cls in classes.items() if key in ("c1", "c2", "c3")}
    again = {j["judge"]: j for j in exclusions["judges"]}
    assert again[a.pseudonym]["excluded_tasks"] == ["t-sub"]
    assert again[b.pseudonym]["excluded_tasks"] == []
    recall, tnr = computed_scores(stored[a.pseudonym], on_add)
    assert (again[a.pseudonym]["phases"]["1"]["current"]["recall"],
            again[a.pseudonym]["phases"]["1"]["current"]["tnr"]) == (recall, tnr)
    rates = {x["builder"]: x["truth"]["pass_rate"] for x in
             exclusions["builders_compared"]["builders"]}
    # A builder's truth pass rate is its hidden tests' share (docs: builders_compared): the
    # tests_pass copies among its tests_pass and tests_fail ones, on t-add alone.
    passes = {b_["id"]: [] for b_ in report["builders"]}
    for copy in report["copies"]:
        if copy["task"] == "t-add" and copy["truth"] in ("tests_pass", "tests_fail"):
            passes[copy["builder"]].append(copy["truth"] == "tests_pass")
    assert rates == {builder: rate(sum(p), len(p)) for builder, p in passes.items()}

    for seen in (b_seen, host_seen, c_seen):
        seen.assert_silent(sink)
    # The two refusals are pages answered 403, which Chromium logs; nothing else happened there.
    for seen in (refused_seen, reverse_seen):
        assert seen.console_errors() == ["Failed to load resource: the server responded with a "
                                         "status of 403 (Forbidden)"]
        seen.console.clear()
        seen.assert_silent(sink)
    assert "Traceback" not in e2e_server.stderr()
