"""Side-by-side judging of a real run, end to end (issue 31 item 5 and "done when"): the pairs30
files (two public SWE-bench Verified runs of the same 40 tasks, tests/data/README.md) imported
with `import_run` as the README says, a pairs session made and opened with `create_session` and
`open_session`, judged by three scripted judges (one in real Chromium by keys, preferring the
copy whose tests pass; one who always answers left; one who prefers the longer patch), revealed;
the report's pairwise accuracy, left shares, position bias and Bradley–Terry ranking checked
against counts and an independent fit written here from the stored answers."""

import io
import json

import numpy as np
import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from content.truth import truth_class
from judging.models import Assignment, Session
from judging.services import item_save, phase_lock
from reports.build import build_report
from reports.verify import verify
from tests.e2e.judge_keys import in_browser_as, judge_by_keys
from tests.reports.test_pairs_generated import independent_fit
from tests.support import pairs30
from tests.worlds import a_host, advance, answer_all, invite_and_join, judge_cookie

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser_once(
        "a real run judged by keys in Chromium (the pairs report is counted on both databases "
        "by tests/reports/test_pairs_report.py)"),
]

KEYS = {"left": "1", "right": "2", "tie": "3", "both_bad": "4"}
PER_JUDGE = 20


def command(*args) -> dict:
    out = io.StringIO()
    call_command(*args, "--json", stdout=out)
    return json.loads(out.getvalue())


def sides(assignment):
    """(left copy, right copy) as this judge saw them."""
    first, second = assignment.item.copy, assignment.item.pair_copy
    return (second, first) if assignment.swapped else (first, second)


def by_the_tests(assignment) -> str:
    left, right = sides(assignment)
    classes = (truth_class(left.truth), truth_class(right.truth))
    if classes[0] != classes[1]:
        return "left" if classes[0] == "good" else "right"
    return "tie" if classes[0] == "good" else "both_bad"


def longer(assignment) -> str:
    left, right = sides(assignment)
    return "left" if len(left.content) >= len(right.content) else "right"


def test_a_real_run_judged_in_pairs_gets_the_ranking_and_accuracy_right(
        e2e_server, observed_context, sink):
    host = a_host("pairs-real-host")
    run, imported = pairs30.import_run_for(host)
    assert imported["copies"] == 80
    created = command("create_session", str(run.pk), "--kind", "pairs", "--items-per-judge",
                      str(PER_JUDGE))
    assert created["items"] == 40
    command("open_session", str(created["session"]))
    session = Session.objects.get(pk=created["session"])
    rules = {"By the tests": by_the_tests, "Always left": lambda a: "left", "Longer": longer}
    judges = {}
    for name, rule in rules.items():
        judge = invite_and_join(session, name).judge
        judges[name] = judge
        mine = list(Assignment.objects.filter(judge=judge).select_related(
            "item__copy", "item__pair_copy"))
        assert len(mine) == PER_JUDGE
        if name == "By the tests":
            context, seen = observed_context(e2e_server.origin,
                                             viewport={"width": 1280, "height": 900})
            page = in_browser_as(context, e2e_server.origin, judge_cookie(judge))
            judge_by_keys(page, e2e_server, session, judge,
                          {a.item.key: (KEYS[rule(a)], "") for a in mine})
            page.get_by_role("button", name=f"Lock my {PER_JUDGE} phase-1 verdicts").click()
            expect(page.get_by_role("heading", name="Phase 2: beside the model reviewers")) \
                .to_be_visible()
            seen.assert_silent(sink)
            judge.refresh_from_db()
        else:
            for a in mine:
                item_save(judge=judge, code=a.code, phase=1, value=rule(a))
            phase_lock(judge=judge, phase=1)
        answer_all(judge, 2, "keep", lock=True)
    report = build_report(advance(session, "revealed"))
    assert verify(json.loads(json.dumps(report)))[0] == []
    section = report["pairs"]
    assert section["pairs"] == 40 and section["truth_differing_pairs"] == len(pairs30.SPLIT)
    rows = {row["judge"]: row["phase1"] for row in section["judges"]}
    answers = []  # (left builder, right builder, answer) of every phase-1 answer
    for name, rule in rules.items():
        judge = judges[name]
        mine = list(Assignment.objects.filter(judge=judge).select_related(
            "item__copy__builder", "item__pair_copy__builder"))
        given = [(a, rule(a)) for a in mine]
        answers += [(sides(a)[0].builder.bundle_id, sides(a)[1].builder.bundle_id, answer)
                    for a, answer in given]
        differing = [(a, answer) for a, answer in given
                     if truth_class(a.item.copy.truth) != truth_class(a.item.pair_copy.truth)]
        right = sum(answer == by_the_tests(a) for a, answer in differing)
        row = rows[judge.pseudonym]
        assert (row["accuracy"]["k"], row["accuracy"]["n"]) == (right, len(differing)), name
        decisive = [answer for _, answer in given if answer in ("left", "right")]
        assert (row["left_share"]["k"], row["left_share"]["n"]) == (
            decisive.count("left"), len(decisive)), name
    assert rows[judges["By the tests"].pseudonym]["accuracy"]["rate"] in (1.0, None)
    assert rows[judges["Always left"].pseudonym]["left_share"]["rate"] == 1.0
    invited = section["groups"][0]["phase1"]
    shares = [rows[j.pseudonym]["left_share"]["rate"] for j in judges.values()]
    # A judge drawn no pair whose sides' tests differ ("By the tests": about one draw in a hundred of
    # 20 pairs from 40 with 6 split) answers no left or right and has no share: counted apart,
    # not averaged in.
    with_share = [share for share in shares if share is not None]
    assert invited["position_bias"]["mean_share"] == pytest.approx(np.mean(with_share))
    assert invited["position_bias"]["without_decisive"] == len(shares) - len(with_share)
    ranking = invited["ranking"]
    scored = [(a, b, {"left": 1.0, "right": 0.0, "tie": 0.5}[answer])
              for a, b, answer in answers if answer != "both_bad"]
    assert ranking["strengths"] == pytest.approx(
        list(independent_fit(scored, ranking["builders"])), abs=1e-6)
    assert invited["both_bad"] == sum(answer == "both_bad" for _, _, answer in answers)
    assert "Traceback" not in e2e_server.stderr()
