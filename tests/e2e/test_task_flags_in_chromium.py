"""Task flags in real Chromium against a real server (issue 29 item 3): a judge flags the task in
front of them with the f key, saves it in place, the flag is stored, locks with the phase, and
after the reveal the report lists it. Typing in the flag's form (digits included) answers no
item, and nothing in it is chosen for the judge."""

import re

import pytest
from playwright.sync_api import expect

from judging.models import TaskFlag, Verdict
from judging.services import phase_lock
from reports.build import build_report
from reports.html import to_html
from tests.e2e.judge_keys import wait_until_keys_count
from tests.worlds import a_host, a_run, a_session, advance, answer_all, codes, invite_and_join, judge_cookie
from tests.worlds import make_run2_bundle as run2

pytestmark = pytest.mark.django_db(transaction=True)

REASON = "The tests want 1 minus 2 where the statement says add"


def test_a_judge_flags_a_task_by_key_and_the_report_lists_it_after_the_reveal(
        e2e_server, observed_context):
    session = a_session(a_run(a_host("flagger-host"), run2()), "open", task_flags=True)
    judge = invite_and_join(session, name="Flag Judge").judge
    order = codes(judge)
    context, _seen = observed_context(e2e_server.origin, viewport={"width": 1280, "height": 900})
    name, value = judge_cookie(judge).split("=", 1)
    context.add_cookies([{"name": name, "value": value, "url": e2e_server.origin}])
    page = context.new_page()
    page.goto(e2e_server.url(f"/s/{session.url_id}/i/{order[0]}/"))
    wait_until_keys_count(page)
    expect(page.locator("#task-flag-form")).to_be_hidden()
    page.keyboard.press("f")
    expect(page.locator("#task-flag-form")).to_be_visible()
    expect(page.locator("#flag-kind")).to_be_focused()
    # Nothing chosen for the judge.
    assert page.locator("#flag-kind").input_value() == ""
    assert page.locator("#flag-severity").input_value() == ""
    page.locator("#flag-kind").select_option("tests_unfair")
    page.locator("#flag-severity").select_option("2")
    page.locator("#flag-reason").click()
    page.keyboard.type(REASON)  # digits typed here are text, never a verdict key
    page.get_by_role("button", name="Save the flag").click()
    expect(page.locator("#task-flag-mine")).to_contain_text("Your phase-1 flag on this task")
    expect(page.locator("#task-flag-mine .flag-reason")).to_have_text(REASON)
    expect(page.locator("#task-flag-form")).to_be_hidden()
    flag = TaskFlag.objects.get(judge=judge)
    assert (flag.phase, flag.kind, flag.severity, flag.reason, flag.locked) == (
        1, "tests_unfair", 2, REASON, False)
    assert not Verdict.objects.filter(assignment__judge=judge).exists()
    # The judging loop goes on: a verdict key answers the item and shows the next.
    page.keyboard.press("1")
    expect(page.locator("h1 .code")).to_have_text(order[1])
    # Every item of the same task shows the judge's flag (the page is swapped in without a load).
    task = judge.assignments.get(code=order[0]).item.task_id
    same = [c for c in order if judge.assignments.get(code=c).item.task_id == task]
    if order[1] in same:
        expect(page.locator("#task-flag-mine .flag-reason")).to_have_text(REASON)
    else:
        expect(page.locator("#task-flag-mine")).to_contain_text("You have not flagged this task")

    answer_all(judge, 1, "pass")
    phase_lock(judge=judge, phase=1)
    assert TaskFlag.objects.get(judge=judge).locked
    page.goto(e2e_server.url(f"/s/{session.url_id}/i/{order[0]}/"))
    expect(page.locator("#task-flag-mine")).to_contain_text("You have not flagged this task in phase 2")
    session = advance(session, "revealed")
    report = build_report(session)
    (listed,) = report["task_flags"]["tasks"]
    assert [f["reason"] for f in listed["flags"]] == [REASON]
    assert re.search(re.escape(REASON), to_html(report))
