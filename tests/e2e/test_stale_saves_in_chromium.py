"""Stale saves and failed saves in real Chromium against a real server process (issue 12 item 4 and
"Also"; docs/threats.md case 36).

- Two tabs of one judge: tab B locks phase 1 while tab A still shows phase 1; a verdict chosen in
  tab A is refused, the tab says so and reloads into phase 2, and no phase-2 verdict is made.
- A save in flight during the lock: Playwright holds tab A's autosave request until the lock has
  happened, then lets it go; the server refuses it and stores nothing.
- A server failure (the database refusing the insert, by a trigger: no code of ours replaced)
  tells the judge the server failed and retries, which a lost connection does not say.

Tab A's websocket is cut by Playwright (`route_web_socket` without a server): with it, the lock's
event would send tab A home before it could save, which is the live protection for a tab whose
socket is up; these tests are about the tab whose socket is down (a laptop waking up, a proxy
dropping sockets) or a save that left before the event arrived.
"""

import re

import pytest
from django.db import connection
from playwright.sync_api import expect

from judging.models import Verdict
from judging.services import invitation_create, phase_lock
from judging.services.verdicts import PHASE_1_LOCKED
from tests.e2e.judge_keys import choose_by_key, hold_saves, wait_until_held
from tests.support.verdicts import verdict_record
from tests.worlds import a_host, a_run, a_session, codes

pytestmark = pytest.mark.django_db(transaction=True)

WS = re.compile(r"/ws/")
# A few of the page's macrotasks, through a MessageChannel: Playwright's clock holds timers.
NEXT_TASKS = """async () => { for (let i = 0; i < 5; i++) { await new Promise(done => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => done();
    channel.port2.postMessage(0); }); } }"""
# Every text the item's status line shows, kept in window.barTexts (the bar is replaced on a move).
WATCH_THE_BAR = """() => { window.barTexts = window.barTexts || [];
    const status = () => document.getElementById("autosave-status").textContent;
    new MutationObserver(() => window.barTexts.push(status()))
        .observe(document.getElementById("item-bar"),
                 {subtree: true, childList: true, characterData: true}); }"""
SERVER_FAILED = "The server failed to save this draft"
NO_CONNECTION = "Not saved: no connection."


def _joined_judge(server, context, **options):
    """A judge joined by their link in `context` (every tab of it is this judge); `options` go to
    the session."""
    session = a_session(a_run(a_host()), "open", **options)
    invited = invitation_create(session=session, actor="test", name="Two Tabs")
    page = context.new_page()
    page.goto(server.url(f"/join/{invited.join_token}"))
    with page.expect_navigation():
        page.get_by_role("button", name="Join the session").click()
    expect(page.get_by_role("heading", name="You are in")).to_be_visible()
    page.close()
    judge = session.judges.get()
    return session, judge


def _stale_tab(context, server, session, code):
    """A tab on the item page in phase 1 whose live socket hears nothing."""
    page = context.new_page()
    page.route_web_socket(WS, lambda ws: None)  # opened, never connected to the server
    page.goto(server.url(f"/s/{session.url_id}/i/{code}/"))
    expect(page.locator(".progress")).to_contain_text("phase 1")
    return page


def _answer_all_but_keep_the_page(judge):
    for code in codes(judge):
        verdict_record(judge=judge, code=code, phase=1, value="pass")


def _assert_refused_and_reloaded_into_phase_2(page, judge, code):
    status = page.locator("#autosave-status")
    expect(status).to_have_text(PHASE_1_LOCKED)
    # The tab reloads into phase 2 and still says why.
    expect(page.locator(".progress")).to_contain_text("phase 2", timeout=10000)
    expect(page.get_by_role("group", name="Your phase-2 verdict")).to_be_visible()
    expect(page.locator("#autosave-status")).to_have_text(PHASE_1_LOCKED)
    assert not Verdict.objects.filter(assignment__judge=judge, phase=2).exists()
    assert Verdict.objects.get(assignment__judge=judge, assignment__code=code, phase=1).value == "pass"


def test_a_tab_left_in_phase_1_cannot_save_after_another_tab_locked_it(e2e_server, observed_context):
    context, seen = observed_context(e2e_server.origin)
    session, judge = _joined_judge(e2e_server, context)
    code = codes(judge)[0]
    tab_a = _stale_tab(context, e2e_server, session, code)
    _answer_all_but_keep_the_page(judge)

    # Tab B locks phase 1 through the review page.
    tab_b = context.new_page()
    tab_b.goto(e2e_server.url(f"/s/{session.url_id}/lock/"))
    with tab_b.expect_navigation():
        tab_b.get_by_role("button", name=f"Lock my {len(codes(judge))} phase-1 verdicts").click()
    expect(tab_b.get_by_role("heading", name="Phase 2: beside the model reviewers")).to_be_visible()
    judge.refresh_from_db()
    assert judge.phase1_locked_at is not None

    # Tab A still shows phase 1; the judge changes their mind there, by key.
    tab_a.bring_to_front()
    choose_by_key(tab_a, "2")
    _assert_refused_and_reloaded_into_phase_2(tab_a, judge, code)
    assert seen.page_errors == [] and seen.dialogs == []


def test_a_save_in_flight_during_the_lock_is_refused_and_stores_nothing(e2e_server, observed_context):
    context, seen = observed_context(e2e_server.origin)
    session, judge = _joined_judge(e2e_server, context)
    code = codes(judge)[0]
    tab = _stale_tab(context, e2e_server, session, code)
    _answer_all_but_keep_the_page(judge)

    held = hold_saves(tab, re.compile(rf"/s/{session.url_id}/i/{code}/$"))
    choose_by_key(tab, "2")  # the autosave leaves... and is held on its way
    wait_until_held(tab, held)
    phase_lock(judge=judge, phase=1)  # the lock happens while the save is on its way
    held[0].continue_()

    _assert_refused_and_reloaded_into_phase_2(tab, judge, code)
    # It was refused because it named the phase its page was rendered for.
    assert re.search(r'name="phase"\r\n\r\n1\r\n', held[0].request.post_data)
    assert seen.page_errors == [] and seen.dialogs == []


@pytest.fixture
def verdict_inserts_fail(transactional_db):
    """The database refuses every new verdict, as a full disk would: a trigger on the table, for
    the server process too (it shares this test's database). Dropped at the end."""
    table = Verdict._meta.db_table
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("CREATE FUNCTION e2e_verdicts_fail() RETURNS trigger LANGUAGE plpgsql AS $$ "
                           "BEGIN RAISE EXCEPTION 'e2e: no space left' USING ERRCODE = 'disk_full'; END $$")
            cursor.execute(f"CREATE TRIGGER e2e_verdicts_fail BEFORE INSERT ON {table} "
                           "FOR EACH ROW EXECUTE FUNCTION e2e_verdicts_fail()")
        else:
            cursor.execute(f"CREATE TRIGGER e2e_verdicts_fail BEFORE INSERT ON {table} "
                           "BEGIN SELECT RAISE(ABORT, 'e2e: no space left'); END")

    def heal():
        with connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                cursor.execute(f"DROP TRIGGER IF EXISTS e2e_verdicts_fail ON {table}")
                cursor.execute("DROP FUNCTION IF EXISTS e2e_verdicts_fail()")
            else:
                cursor.execute("DROP TRIGGER IF EXISTS e2e_verdicts_fail")

    yield heal
    heal()


def test_a_server_failure_says_so_and_retries_and_a_lost_connection_says_no_connection(
        e2e_server, observed_context, verdict_inserts_fail):
    context, seen = observed_context(e2e_server.origin)
    # Pick, then save (advance_on_key off): what the item's own status line says about its save is
    # the point here, and one-key advance would move on to the next item at once (a save that fails
    # after the judge moved on is reported outside the bar); it also keeps the off path tested.
    session, judge = _joined_judge(e2e_server, context, advance_on_key=False)
    first, second = codes(judge)[:2]
    page = context.new_page()
    page.goto(e2e_server.url(f"/s/{session.url_id}/i/{first}/"))

    choose_by_key(page, "1")
    status = page.locator("#autosave-status")
    expect(status).to_contain_text(SERVER_FAILED, timeout=10000)
    assert NO_CONNECTION not in status.inner_text()
    assert not Verdict.objects.exists()
    # The database recovers; the page's retry saves the draft without the judge doing anything.
    verdict_inserts_fail()
    expect(status).to_have_text("Draft saved.", timeout=15000)
    assert Verdict.objects.get(assignment__code=first, phase=1).value == "pass"

    # A real network failure reads differently.
    page.goto(e2e_server.url(f"/s/{session.url_id}/i/{second}/"))
    page.route(re.compile(rf"/i/{second}/$"), lambda route: route.abort("internetdisconnected")
               if route.request.method == "POST" else route.continue_())
    choose_by_key(page, "2")
    expect(status).to_contain_text(NO_CONNECTION, timeout=10000)
    assert SERVER_FAILED not in status.inner_text()
    assert not Verdict.objects.filter(assignment__code=second).exists()
    assert seen.page_errors == [] and seen.dialogs == []
    # Leaving while that save is unconfirmed: the browser asks first (the guard answers no here).
    page.close(run_before_unload=True)
    expect(status).to_contain_text(NO_CONNECTION)  # still open: the page stayed
    assert seen.dialogs == [""], seen.dialogs
    # Once a save is stored, leaving asks nothing.
    page.unroute(re.compile(rf"/i/{second}/$"))
    expect(status).to_have_text("Draft saved.", timeout=40000)
    page.close(run_before_unload=True)
    if not page.is_closed():  # closing is asynchronous once no handler holds it
        page.wait_for_event("close", timeout=10000)
    assert page.is_closed() and seen.dialogs == [""]


def test_a_late_answer_for_the_item_left_behind_never_stands_in_for_the_shown_items_own(
        e2e_server, observed_context):
    """The bar confirms a save of the item left behind ("Item 7TP6 saved (10:42).") only while the
    item shown has nothing of its own to say: not while a change of it waits for its save. CI saw
    that confirmation taken for the shown item's answer (tests/e2e/test_live_in_chromium.py).

    The page's clock is Playwright's: the change's save waits (800 ms) until the test moves the
    clock on, so the left-behind answer lands in that wait every time, not by luck."""
    context, seen = observed_context(e2e_server.origin)
    session, judge = _joined_judge(e2e_server, context, advance_on_key=False)
    first, second = codes(judge)[:2]
    page = context.new_page()
    page.clock.install()
    page.goto(e2e_server.url(f"/s/{session.url_id}/i/{first}/"))
    page.clock.pause_at(page.evaluate("Date.now()") + 1000)
    page.evaluate(WATCH_THE_BAR)

    held = hold_saves(page, re.compile(rf"/i/{first}/$"))
    choose_by_key(page, "1", on_page_clock=True)
    page.clock.run_for(1000)  # the first item's save leaves, and is held on its way
    wait_until_held(page, held)
    page.keyboard.press("n")
    expect(page.locator("h1 .code")).to_have_text(second)
    page.evaluate(WATCH_THE_BAR)
    page.clock.run_for(500)  # the judge reads the second copy (verdict keys count after 300 ms)
    choose_by_key(page, "2", on_page_clock=True)  # a change of the shown item: its save waits

    def is_the_held_save(response):
        return response.request.method == "POST" and first in response.url

    with page.expect_response(is_the_held_save) as late:
        held[0].continue_()
    late.value.finished()
    page.evaluate(NEXT_TASKS)  # the page has read that answer (its tasks, not its paused timers)
    status = page.locator("#autosave-status")
    assert status.inner_text() == "", "the first item's answer stood in the second's bar"
    assert not Verdict.objects.filter(assignment__code=second).exists()
    page.clock.run_for(1000)
    expect(status).to_have_text("Draft saved.")
    assert Verdict.objects.get(assignment__code=second, phase=1).value == "fail"
    assert Verdict.objects.get(assignment__code=first, phase=1).value == "pass"
    assert not [text for text in page.evaluate("window.barTexts") if text.startswith("Item ")]
    assert seen.page_errors == [] and seen.dialogs == []


def test_a_new_choice_after_an_outage_is_sent_at_once_not_after_the_retrys_backoff(
        e2e_server, observed_context):
    """A save that found no connection retries after 2, 4, 8… 30 s. When the judge chooses again
    meanwhile, that newer choice goes out at once and overtakes the waiting retry: it used to wait
    behind it, so after a server restart a judge's choice sat unsaved for up to 30 s (and CI's
    live test read the old retry's failure as the new choice's). Playwright's clock holds the
    page's timers, so only the debounce of the new choice has passed when it must be saved."""
    context, seen = observed_context(e2e_server.origin)
    session, judge = _joined_judge(e2e_server, context, advance_on_key=False)
    first = codes(judge)[0]
    page = context.new_page()
    page.clock.install()
    page.goto(e2e_server.url(f"/s/{session.url_id}/i/{first}/"))
    page.clock.pause_at(page.evaluate("Date.now()") + 1000)
    item = re.compile(rf"/i/{first}/$")
    page.route(item, lambda route: route.abort("internetdisconnected") if route.request.method == "POST"
               else route.continue_())
    status = page.locator("#autosave-status")

    choose_by_key(page, "1", on_page_clock=True)
    page.clock.run_for(1000)  # its save leaves and finds no connection: a retry in 2 s
    expect(status).to_contain_text(NO_CONNECTION)
    expect(status).to_contain_text("Retrying in 2 s")
    page.unroute(item)  # the connection is back

    choose_by_key(page, "2")  # the judge changes their mind while the retry waits
    page.clock.run_for(1000)  # the new choice's debounce, not the retry's 2 s
    expect(status).to_have_text("Draft saved.")
    assert Verdict.objects.get(assignment__code=first, phase=1).value == "fail"
    # The overtaken retry never sends the older choice afterwards.
    page.clock.run_for(60_000)
    page.evaluate(NEXT_TASKS)
    assert Verdict.objects.get(assignment__code=first, phase=1).value == "fail"
    expect(status).to_have_text("Draft saved.")
    assert seen.page_errors == [] and seen.dialogs == []
