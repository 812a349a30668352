"""Side-by-side judging in real Chromium against a real server (issue 31 item 2): a pairs session
on a run of two tasks and three builders; a judge answers every pair by keys (left, right, tie,
both bad), each pair's two copies side by side at 1280 px, each in its own sandboxed frame
framed by its own code, the sides as drawn for this judge; stacked at 800 px with each side's
label sticky; nothing recorded before the copies were on screen; phase 2 beside each copy's
reviewer rows; the answers stored are the keys pressed."""

import pytest
from playwright.sync_api import expect

from judging.models import Assignment, Verdict
from tests.e2e.judge_keys import in_browser_as, judge_by_keys, wait_until_keys_count
from tests.worlds import a_host, a_run, a_session, invite_and_join, judge_cookie, make_run2_bundle

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.browser_once("the pairs page's keys, sides and layout in Chromium")]

KEYS = {"left": "1", "right": "2", "tie": "3", "both_bad": "4"}
ANSWERS = ("left", "right", "tie", "both_bad")


def test_a_judge_answers_pairs_side_by_side_by_keys(e2e_server, observed_context, sink):
    origin = e2e_server.origin
    run = a_run(a_host("pairs-host"), make_run2_bundle())
    session = a_session(run, "open", kind="pairs", rubric="Prefer the copy that does the task.")
    judge = invite_and_join(session, "Side By Side").judge
    rows = list(Assignment.objects.filter(judge=judge).order_by("position")
                .select_related("item"))
    wanted = {a.item.key: ANSWERS[n % 4] for n, a in enumerate(rows)}
    context, seen = observed_context(origin, viewport={"width": 1280, "height": 900})
    page = in_browser_as(context, origin, judge_cookie(judge))
    first = rows[0]
    page.goto(e2e_server.url(f"/s/{session.url_id}/i/{first.code}/"))
    expect(page.get_by_role("heading", name=f"Pair {first.code}")).to_be_visible()
    frames = page.locator("#copy-area iframe.copy-frame")
    expect(frames).to_have_count(2)
    left_code = first.second_code if first.swapped else first.first_code
    right_code = first.first_code if first.swapped else first.second_code
    expect(page.locator("#side-left")).to_contain_text(left_code)
    expect(page.locator("#side-right")).to_contain_text(right_code)
    for frame, code in ((frames.nth(0), left_code), (frames.nth(1), right_code)):
        assert frame.get_attribute("sandbox") == ""
        assert frame.get_attribute("src").split("#")[0].endswith(f"/i/{code}/frame")
    # Side by side: the two frames on one row, left then right, each about half the width.
    wait_until_keys_count(page)
    left_box, right_box = frames.nth(0).bounding_box(), frames.nth(1).bounding_box()
    assert abs(left_box["y"] - right_box["y"]) < 2 and left_box["x"] < right_box["x"]
    assert left_box["width"] > 450 and right_box["width"] > 450
    # Each copy scrolls in its own box, reached by Tab.
    assert frames.nth(0).get_attribute("tabindex") == "0"
    # A key before the copies have been on screen long enough is dropped (none stored yet).
    assert not Verdict.objects.filter(assignment__judge=judge).exists()

    judge_by_keys(page, e2e_server, session, judge,
                  {key: (KEYS[answer], "") for key, answer in wanted.items()})
    stored = dict(Verdict.objects.filter(assignment__judge=judge, phase=1)
                  .values_list("assignment__item__key", "value"))
    assert stored == wanted
    page.get_by_role("button", name=f"Lock my {len(rows)} phase-1 verdicts").click()
    expect(page.get_by_role("heading", name="Phase 2: beside the model reviewers")).to_be_visible()

    # Phase 2 of the pair c1|c2: each copy's reviewer rows under its side.
    pair = next(a for a in rows if a.item.key == "pair:c1|c2")
    page.goto(e2e_server.url(f"/s/{session.url_id}/i/{pair.code}/"))
    c2_side = "left" if pair.swapped else "right"
    expect(page.locator(f"#reviewers-{c2_side}").locator("xpath=..")).to_contain_text("wrong sign")
    expect(page.locator(f"#reviewers-{c2_side}").locator("xpath=..")).to_contain_text("uses minus")

    # Narrow: stacked, the left copy above the right one, each side's label sticky.
    page.set_viewport_size({"width": 800, "height": 900})
    left_box, right_box = frames.nth(0).bounding_box(), frames.nth(1).bounding_box()
    assert right_box["y"] > left_box["y"] + left_box["height"] - 1
    assert page.locator("#side-left").evaluate("e => getComputedStyle(e).position") == "sticky"
    seen.assert_silent(sink)
    assert "Traceback" not in e2e_server.stderr()
