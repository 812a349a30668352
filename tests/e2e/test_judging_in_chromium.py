"""End to end in real Chromium against a real Uvicorn process (issue 3; docs/threats.md cases 1–7).

The detectors are shown to fire on deliberately unsafe test-only pages first; only then does their
silence on the product's pages count. See tests/e2e/conftest.py for the harness and the Observer.
"""

import json
import re
from urllib.parse import urljoin

import pytest
from playwright.sync_api import expect

from host.forms import IMPORT_FIELD_FORMATS, IMPORT_SOURCES, RunImportForm
from judging.demo import (
    DEMO_KEPT,
    DEMO_PREREGISTRATION,
    DEMO_REDACTIONS,
    DEMO_RUBRIC,
    demo_bundle,
)
from judging.models import Run, Session, Verdict
from judging.services import (
    blinding_dismiss,
    guests_configure,
    invitation_create,
    redactions_accept,
    session_create,
    session_open,
)
from tests.e2e.hosts import sign_in_as_host
from tests.e2e.judge_keys import TOO_SOON, choose_by_key
from tests.worlds import a_demo_session, a_host, a_run, a_session, invite_and_join

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser_once(
        "the sandbox, the policy and the keyboard in Chromium, and the pages' layout"),
]

BEACON = "http://beacon.example.invalid"
KEY_VALUES = {"1": "pass", "2": "fail"}
# The real time a judge spends on each item before answering. (Playwright's fake clock would make
# this exact, but its init script is refused in every sandboxed frame and the console reports that
# exactly as it would report a script in a copy, which would blind the console detector.)
READING_MS = 150

# What the demo's hostile copy (judging.demo.HOSTILE_MARKDOWN) must show as literal text.
HOSTILE_LITERALS = [
    '</iframe><script>alert("copy ran a script")</script>',
    '<img src="http://beacon.example.invalid/pixel.gif" onerror="alert(1)">',
    '<svg onload="alert(2)"></svg>',
    '<meta http-equiv="refresh" content="0;url=http://example.invalid/">',
    '<a href="javascript:alert(3)">click for the proof</a>',
    "[image: diagram \u27e8http://beacon.example.invalid/diagram.png\u27e9]",
    '<style>@import url("http://beacon.example.invalid/style.css");</style>',
    "import openai",
]
VISIBLE_MARKS = ["\u27e6U+202E\u27e7", "\u27e6U+202C\u27e7", "\u27e6U+200B\u27e7"]
RAW_CONTROLS = ["\u202e", "\u202c", "\u200b"]
BUILDER_CANARIES = ["gpt-4o-2024-08-06", "claude-3-5-sonnet", "gemini-1.5-pro", "llama-3.1-70b",
                    "As Llama", "Assisted-by", "Builder Bot"]

# The elements a copy frame may hold: the renderer's own, nothing that loads, links or runs.
FRAME_TAGS = {"html", "head", "meta", "title", "style", "body", "main", "pre", "span", "div", "p",
              "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote", "code", "em",
              "strong", "hr", "br",
              "table", "thead", "tbody", "tr", "th", "td", "s", "del",
              # the renderer's own (issue 16): view anchors, file sections, links to them
              "i", "details", "summary", "a"}
FRAME_INVENTORY_JS = """() => {
  const all = Array.from(document.querySelectorAll('*'));
  return {
    hrefs: Array.from(document.querySelectorAll('[href]'), e => e.getAttribute('href')),
    tags: Array.from(new Set(all.map(e => e.localName))),
    attributes: Array.from(new Set(all.flatMap(e => Array.from(e.attributes).map(a => a.name)))),
    metas: Array.from(document.querySelectorAll('meta')).map(m => m.outerHTML),
    styles: document.querySelectorAll('style').length,
    location: location.href,
  };
}"""


# --- Positive controls: every detector fires on a deliberately unsafe page ------------------------

def test_detectors_fire_on_the_unsafe_test_pages(e2e_server, observed_context, sink):
    # 1. No CSP, no sandbox: the request observer sees the page's and the child frame's beacons,
    #    routing sees them reach the network stack, the dialog and error detectors see the scripts.
    context, observer = observed_context(e2e_server.origin)
    page = context.new_page()
    page.goto(e2e_server.url("/__e2e__/unsafe/"))
    expect(page.get_by_role("heading", name="Deliberately unsafe test page")).to_be_visible()
    page.wait_for_function("() => Array.from(document.images).every(i => i.complete)")
    page.frame_locator("iframe").locator("img").wait_for(state="attached")
    _settle(page)
    assert f"{BEACON}/page.gif" in observer.attempted
    assert f"{BEACON}/frame.gif" in observer.attempted
    assert {f"{BEACON}/page.gif", f"{BEACON}/frame.gif"} <= set(observer.left)
    assert "unsafe page ran a script" in observer.dialogs
    assert "unsafe frame ran a script" in observer.dialogs
    assert any("unsafe page threw" in error for error in observer.page_errors)
    assert sink.hits == []  # routing aborted them: nothing reached the sink

    # 2. The sink itself: let through, the same beacons reach it under their own host names.
    context, observer = observed_context(e2e_server.origin, let_through=True)
    page = context.new_page()
    page.goto(e2e_server.url("/__e2e__/unsafe/"))
    _wait_for(page, lambda: len(sink.hits) >= 2)
    assert {"GET beacon.example.invalid/page.gif", "GET beacon.example.invalid/frame.gif"} <= set(sink.hits)
    sink.hits.clear()

    # 3. The raw hostile copy in `<iframe sandbox>` without the frame CSP: scripts stop (no
    #    dialog) but its loads still leave, and the observer sees requests from inside a sandboxed
    #    frame, the very place the product's copies live. The console shows the blocked scripts.
    context, observer = observed_context(e2e_server.origin)
    page = context.new_page()
    page.goto(e2e_server.url("/__e2e__/sandbox-only/"))
    _wait_for(page, lambda: f"{BEACON}/pixel.gif" in observer.left)
    _settle(page)
    assert f"{BEACON}/style.css" in observer.left
    assert observer.dialogs == []
    assert any("Blocked script execution" in text for text in observer.console_errors())

    # 4. A frame allowed to run scripts: alert() is suppressed without allow-modals, so the dialog
    #    detector is blind inside frames; the console detector is not (hence both are asserted).
    context, observer = observed_context(e2e_server.origin)
    page = context.new_page()
    page.goto(e2e_server.url("/__e2e__/sandbox-allow-scripts/"))
    _wait_for(page, lambda: any("Ignored call to 'alert()'" in t for t in observer.console_errors()))
    assert observer.dialogs == []

    # 5. The product's recipe (sandbox attribute + the product's FRAME_CSP) around the same raw
    #    copy: the browser refuses the loads ("csp"): attempted, never left. The product's own
    #    frames must do better still: nothing even attempted, because nothing there can load.
    context, observer = observed_context(e2e_server.origin)
    page = context.new_page()
    page.goto(e2e_server.url("/__e2e__/sandbox-and-csp/"))
    _wait_for(page, lambda: (f"{BEACON}/pixel.gif", "csp") in observer.refused)
    _settle(page)
    assert observer.left == [] and observer.dialogs == []
    assert sink.hits == []


# --- The whole flow -------------------------------------------------------------------------------

def test_host_judge_and_guest_end_to_end_by_keyboard(e2e_server, observed_context, sink):
    origin = e2e_server.origin
    host_context, host_seen = observed_context(origin, accept_downloads=True)
    host_page = host_context.new_page()
    setup = _host_sets_up_the_demo_in_the_browser(e2e_server, host_page)

    # One invited judge on a large screen, one guest at 320 px wide, each in their own context.
    judge_context, judge_seen = observed_context(origin, viewport={"width": 1280, "height": 800})
    guest_context, guest_seen = observed_context(origin, viewport={"width": 320, "height": 640})
    judge_page = judge_context.new_page()
    judge_page.goto(setup["join_link"])
    _join_by_link(judge_page)
    judge = _judge_both_phases(judge_page, choose=_judge_choices, go_back=True)
    judge_seen.assert_silent(sink)

    guest_page = guest_context.new_page()
    guest_page.goto(e2e_server.url("/guest/"))
    _join_as_guest(guest_page, setup["guest_code"], "Guest Reviewer")
    assert guest_page.viewport_size["width"] == 320  # every page check below runs at 320 px
    guest = _judge_both_phases(guest_page, choose=_guest_choices)
    guest_seen.assert_silent(sink)

    # The host closes, reveals and downloads the report, on their pages.
    session = Session.objects.get(pk=setup["session_id"])
    report = _host_closes_reveals_and_downloads(e2e_server, host_page, session)
    session.refresh_from_db()
    assert session.state == "revealed"

    # The report's verdicts are exactly what the two browsers entered.
    entered = {"J01": judge["entered"], "J02": guest["entered"]}
    reported = {}
    for row in report["verdicts"]:
        reported.setdefault(row["judge"], {})[(row["code"], row["phase"])] = (row["value"], row["kept"])
        assert row["locked"] is True
    assert reported == entered
    by_pseudonym = {j["pseudonym"]: j for j in report["judges"]}
    assert by_pseudonym["J01"]["admitted_as"] == "invited"
    assert by_pseudonym["J02"]["admitted_as"] == "guest"
    assert by_pseudonym["J02"]["display_name"] == "Guest Reviewer"
    assert all(by_pseudonym[p]["phase1_locked_at"] and by_pseudonym[p]["phase2_locked_at"]
               for p in ("J01", "J02"))
    # The codes the browsers saw are each judge's own, in the order they were shown.
    for pseudonym, seen in (("J01", judge), ("J02", guest)):
        codes = [a["code"] for a in report["assignments"] if a["judge"] == pseudonym]
        assert codes == seen["order"]

    # Time per item: recorded for every item the browsers judged, in both phases: at least the
    # time the judge spent on the page before answering.
    seconds = list(Verdict.objects.filter(assignment__judge__session=session)
                   .values_list("seconds_spent", flat=True))
    assert len(seconds) == 2 * 2 * 8
    assert all(READING_MS / 1000 <= s < 120 for s in seconds), seconds

    # The reveal takes the judge's open page to their scorecard by itself (its live socket);
    # waiting for that first keeps the test's own navigation from racing it. Afterwards the
    # judge's resume path leads only to their own scorecard.
    expect(judge_page.get_by_role("heading", name="Your scorecard")).to_be_visible()
    judge_page.goto(e2e_server.url(f"/s/{session.url_id}/"))
    expect(judge_page.get_by_role("heading", name="Your scorecard")).to_be_visible()
    card_codes = set(judge_page.locator("main table td:first-child").all_inner_texts())
    assert card_codes == set(judge["order"])  # only the judge's own codes, not the guest's

    for seen in (host_seen, judge_seen, guest_seen):
        seen.assert_silent(sink)
    assert "Traceback" not in e2e_server.stderr()


def test_findings_drafts_autosave_and_the_finding_text_stays_inert(e2e_server, observed_context, sink):
    """A findings session on the demo bundle, at 320 px: the finding's text (model output shown in
    the judge's own page, not in the frame) is literal; a verdict chosen by key and a reason typed
    are saved as a draft without a submit and survive a reload."""
    # Pick, then save (advance_on_key off): this test is about drafts saved without a submit, which
    # one-key advance would move away from at once; it also keeps the off path tested.
    setup = _host_sets_up_the_demo(e2e_server, kind="findings", advance_on_key=False)
    context, seen = observed_context(e2e_server.origin, viewport={"width": 320, "height": 640})
    page = context.new_page()
    page.goto(setup["join_link"])
    _join_by_link(page)  # "Start judging" opens the first item

    # A verdict by key, then a reason typed into the (keyboard-reached) reason box: both autosave.
    code = page.locator("h1 .code").inner_text()
    _assert_every_control_labelled(page)
    _assert_no_horizontal_scroll(page, 320)
    expect(page.get_by_role("radio", name=re.compile("^False alarm"))).not_to_be_checked()
    choose_by_key(page, "2")
    expect(page.locator("#autosave-status")).to_have_text("Draft saved.")
    _tab_to(page, tag="textarea")
    page.keyboard.type("the check it asks for is already there")
    expect(page.locator("#autosave-status")).to_have_text("Draft saved.")
    _wait_for(page, lambda: Verdict.objects.filter(
        assignment__code=code, phase=1, reason="the check it asks for is already there").exists())
    draft = Verdict.objects.get(assignment__code=code, phase=1)
    assert (draft.value, draft.locked) == ("false_alarm", False)
    assert draft.seconds_spent > 0
    # Stored is not yet answered: until that save's answer reaches the page, the page would ask
    # before a reload (its guard against losing a save), so wait until it says when it was saved.
    expect(page.locator("#autosave-status")).to_have_text("Draft saved.")
    expect(page.locator(".save-when")).to_have_text(re.compile(r"^\d\d:\d\d$"))

    page.reload()
    expect(page.locator("h1 .code")).to_have_text(code)
    expect(page.get_by_role("radio", name=re.compile("^False alarm"))).to_be_checked()
    expect(page.get_by_label("Reason (optional, up to 10,000 characters)")).to_have_value(
        "the check it asks for is already there")

    # Every finding, the hostile one included, by keyboard; its text is literal in the page.
    texts = []
    for position in range(1, 6):
        expect(page.locator(".progress")).to_have_text(f"Item {position} of 5 · phase 1")
        finding = page.locator("section.finding blockquote")
        texts.append(finding.text_content())
        _assert_no_horizontal_scroll(page, 320)
        if position > 1:
            choose_by_key(page, "1")
        with page.expect_navigation():
            page.keyboard.press("n")
    assert "<script>alert('finding')</script> no input check" in texts
    _lock(page, 1, total=5)
    expect(page.get_by_role("heading", name="Phase 2: beside the model reviewers")).to_be_visible()
    seen.assert_silent(sink)


def test_a_five_megabyte_copy_leaves_the_item_page_responsive(e2e_server, observed_context, sink):
    """docs/threats.md case 7, within the limit: the page loads, the whole copy is there, and a key press
    registers and autosaves (behaviour, not timings)."""
    lines, size, number = [], 0, 0
    limit = 5 * 1024 * 1024 - 4096
    while size < limit:
        number += 1
        line = (f"{number:07d}: total = total + values[{number}]  # <script>alert({number})</script>\n"
                if number % 5000 == 0 else f"{number:07d}: total = total + values[{number}]\n")
        lines.append(line)
        size += len(line.encode("utf-8"))
    content = "".join(lines) + "END OF THE FIVE MEGABYTE COPY\n"
    assert 5 * 1024 * 1024 - 8192 < len(content.encode("utf-8")) <= 5 * 1024 * 1024
    bundle = {"format": "blindjudge.run/1", "run": {"name": "big", "task": "Judge the big copy."},
              "builders": [{"id": "b1", "model": "gpt-4o-2024-08-06", "family": "OpenAI"}],
              "copies": [{"id": "c1", "builder": "b1", "format": "text", "content": content,
                          "truth": "known_good"}]}
    # Pick, then save (advance_on_key off): the test presses keys to see the page answer while the
    # copy loads, which one-key advance would turn into leaving the page; it also keeps the off
    # path tested.
    session = a_session(a_run(a_host("e2e-big", "e2e host passphrase 2"), bundle), "open",
                        advance_on_key=False)
    token = invitation_create(session=session, actor="test", name="Patient Judge").join_token

    context, seen = observed_context(e2e_server.origin, viewport={"width": 320, "height": 640})
    page = context.new_page()
    page.goto(e2e_server.url(f"/join/{token}"))
    _join_by_link(page, start=False)
    # Straight to the keyboard once the page itself is parsed, without waiting for the copy.
    _tab_to(page, tag="a", text="Start judging")
    with page.expect_navigation(wait_until="domcontentloaded"):
        page.keyboard.press("Enter")
    expect(page.locator(".progress")).to_have_text("Item 1 of 1 · phase 1")
    # A verdict key before the copy is on screen answers nothing (issue 24), and the page says so
    # at once: it answers the keyboard while the copy loads.
    page.keyboard.press("2")
    expect(page.locator("#autosave-status")).to_have_text(TOO_SOON)
    expect(page.locator("input[name=verdict]:checked")).to_have_count(0)

    # The whole copy arrives, hostile lines as text, and the page still answers the keyboard.
    page.wait_for_load_state("load", timeout=60_000)  # the parent's load waits for its frame
    text = page.frame_locator("iframe.copy-frame").locator("body").text_content()
    assert text.rstrip().endswith("END OF THE FIVE MEGABYTE COPY")
    assert "0005000: total = total + values[5000]  # <script>alert(5000)</script>" in text
    assert len(text) >= len(content) - 1
    _assert_no_horizontal_scroll(page, 320)
    choose_by_key(page, "1")
    expect(page.get_by_role("radio", name=re.compile("^Pass"))).to_be_checked()
    page.keyboard.press("2")
    expect(page.get_by_role("radio", name=re.compile("^Fail"))).to_be_checked()
    expect(page.locator("#autosave-status")).to_have_text("Draft saved.", timeout=30_000)
    with page.expect_navigation():
        page.keyboard.press("n")
    expect(page.locator("p.progress")).to_have_text("1 of 1 answered in phase 1.")
    assert Verdict.objects.get(assignment__judge__session=session, phase=1).value == "fail"
    seen.assert_silent(sink)


# `&` and `<` are escaped in a frame's text only where HTML would read markup (issue 12, item 1;
# content.rendering._text): everything else here must reach Chromium as itself, and nothing as
# an element, attribute, comment or character reference.
BARE_MARKUP = ("&&& & && a&b &; &- &\u00e9 <<< < << a<b <1 <- <= <> >>> a>b \"'\n"
               "&amp; &lt; &#60; &#x3c; &copy &amp <b>bold</b> </pre></body> <!-- c --> <?x ?>"
               " <![CDATA[ d ]]> <script>alert(\"bare markup ran\")</script>"
               ' <img src="http://beacon.example.invalid/p.gif" onerror="alert(1)">\n'
               "+&a <a\n-&#1 <!x\n@@ & < @@\nthe last line &<")


@pytest.mark.parametrize("fmt", ["text", "diff"])
def test_a_copy_of_bare_ampersands_and_less_than_signs_reads_as_itself(e2e_server, observed_context,
                                                                       sink, fmt):
    bundle = {"format": "blindjudge.run/1", "run": {"name": "bare", "task": "Judge the copy."},
              "builders": [{"id": "b1", "model": "gpt-4o-2024-08-06", "family": "OpenAI"}],
              "copies": [{"id": "c1", "builder": "b1", "format": fmt, "content": BARE_MARKUP,
                          "truth": "known_good"}]}
    session = a_session(a_run(a_host(f"e2e-bare-{fmt}", "e2e host passphrase 3"), bundle), "open")
    token = invitation_create(session=session, actor="test", name="Literal Judge").join_token

    context, seen = observed_context(e2e_server.origin)
    page = context.new_page()
    page.goto(e2e_server.url(f"/join/{token}"))
    _join_by_link(page, start=False)
    _tab_to(page, tag="a", text="Start judging")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    page.wait_for_load_state("load")
    text = _check_copy_frame(page, page.locator("h1 .code").inner_text())
    frame = page.locator("iframe.copy-frame").element_handle().content_frame()
    tags = frame.evaluate("() => Array.from(document.querySelectorAll('.rows *'), e => e.localName)")
    # One row a line, and no element in a row: everything in it arrived as text.
    rows = frame.evaluate("""() => Array.from(document.querySelectorAll('.rows .r'),
                                              r => [r.className, r.dataset.n ?? null, r.textContent])""")
    assert tags == ["span"] * len(BARE_MARKUP.split("\n")) == ["span"] * len(rows)
    if fmt == "text":
        assert [line for _, _, line in rows] == BARE_MARKUP.split("\n")
        assert text.removesuffix("\n").endswith(BARE_MARKUP)
    else:  # a row's marker is drawn in its gutter (CSS, from its kind): read it there
        markers = {"r add": "+", "r del": "-"}
        read = [markers.get(kind, " " if kind == "r ctx" and number else "") + line
                for kind, number, line in rows]
        assert "\n".join(read) == BARE_MARKUP
    seen.assert_silent(sink)


# --- Helpers: the host -------------------------------------------------------------------------

HOST_PASSWORD = "e2e host passphrase 1"
REVEAL_LABEL = "I understand that the reveal cannot be undone"


def _host_sets_up_the_demo_in_the_browser(server, page) -> dict:
    """The host signs in, imports the demo bundle by upload, creates a copies session with guests
    and scorecards, accepts the demo's redaction patterns, opens it and invites a judge by name;
    the join link and the guest code are read from the page that shows them once. (Hosts are
    created on the command line: there is no sign-up page.)"""
    a_host("e2e-host", HOST_PASSWORD)
    page.goto(server.url("/host/"))  # anonymous: sent to sign in first, then back here
    expect(page.get_by_role("heading", name="Host sign-in")).to_be_visible()
    page.get_by_label("Username", exact=True).fill("e2e-host")
    page.get_by_label("Password", exact=True).fill(HOST_PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Runs", exact=True)).to_be_visible()

    page.get_by_label("Run bundle (JSON file, blindjudge.run/1 or run/2)").set_input_files(files=[{
        "name": "demo-run.json", "mimeType": "application/json",
        "buffer": json.dumps(demo_bundle()).encode("utf-8")}])
    page.get_by_role("button", name="Import", exact=True).click()
    expect(page.get_by_role("heading", name="New session")).to_be_visible()

    page.get_by_label("Judges judge", exact=True).select_option("copies")
    page.get_by_label("Rubric", exact=True).fill(DEMO_RUBRIC)
    page.get_by_label("Preregistration", exact=True).fill(DEMO_PREREGISTRATION)
    page.get_by_label("Allow guests (anyone with the guest code)").check()
    page.get_by_label("Most guests admitted").fill("5")
    page.get_by_label("Judges see their own scorecard after the reveal").check()
    # Pick, then save: this walk is about the whole flow and the report, not one-key advance (the
    # judging loop's own tests cover that); turning it off here also keeps the off path tested.
    page.get_by_label("One key per decision: a verdict key records it and shows the next item").uncheck()
    page.get_by_role("button", name="Create draft session").click()
    expect(page.get_by_role("heading", name=re.compile(r"^Guest code of session \d+: shown once"))
           ).to_be_visible()
    guest_code = page.get_by_role("textbox", name="Guest code", exact=True).input_value()
    session_id = int(re.search(r"/host/sessions/(\d+)/", page.url).group(1))

    page.get_by_role("link", name="Blinding check", exact=True).first.click()
    page.get_by_label("Patterns to redact, one per line").fill("As Llama\nre:gpt-4o(-[0-9-]+)?")
    page.get_by_role("button", name="Accept", exact=True).click()
    expect(page.get_by_role("heading", name="Blinding check", exact=True)).to_be_visible()
    # `import openai` is what a copy does: kept on purpose, the last match to decide (issue 24).
    page.get_by_role("button", name="Keep openai on purpose").click()
    expect(page.locator("#undecided-count")).to_have_text("Every match is redacted or kept on purpose.")

    page.get_by_role("link", name="Overview", exact=True).click()
    page.get_by_role("link", name="Open the session").click()  # the confirmation (issue 17)
    expect(page.get_by_role("heading", name="Frozen for good")).to_be_visible()
    page.get_by_role("button", name="Open the session and freeze the protocol").click()
    expect(page.locator("h1 .state")).to_have_text("open")

    page.get_by_role("link", name="Invitations", exact=True).click()
    page.get_by_label("Invitee's name").fill("Invited Judge")
    page.get_by_role("button", name="Create join link").click()
    join_link = page.get_by_role("textbox", name="Join link for Invited Judge").input_value()
    assert join_link.startswith(server.url("/join/"))

    session = Session.objects.get(pk=session_id)
    assert session.state == "open" and session.scorecards and session.guests_allowed
    assert session.redaction_patterns == ["As Llama", "re:gpt-4o(-[0-9-]+)?"]
    return {"session_id": session_id, "join_link": join_link, "guest_code": guest_code}


def _host_closes_reveals_and_downloads(server, page, session) -> dict:
    page.goto(server.url(f"/host/sessions/{session.pk}/"))
    page.get_by_role("button", name="Close the session").click()
    expect(page.locator("h1 .state")).to_have_text("closed")
    page.get_by_role("link", name="Reveal…").click()
    page.get_by_label(REVEAL_LABEL).check()
    page.get_by_role("button", name="Reveal", exact=True).click()
    expect(page.locator("h1 .state")).to_have_text("revealed")
    with page.expect_download() as download:
        page.get_by_role("link", name="Full report (JSON)").click()
    return json.loads(download.value.path().read_bytes())


def _host_sets_up_the_demo(server, kind: str = "copies", advance_on_key: bool = True) -> dict:
    """The same setup through the services, for the tests that are about the judge's pages."""
    host = a_host("e2e-host", HOST_PASSWORD)
    actor = "host:e2e-host"
    run = a_run(host, demo_bundle(), actor=actor)
    created = session_create(run=run, kind=kind, actor=actor, rubric=DEMO_RUBRIC,
                             preregistration=DEMO_PREREGISTRATION, scorecards=True,
                             advance_on_key=advance_on_key)
    session = redactions_accept(session=created.session, actor=actor, patterns=DEMO_REDACTIONS)
    session = blinding_dismiss(session=session, actor=actor, matches=DEMO_KEPT)
    session = session_open(session=session, actor=actor)
    code = guests_configure(session=session, actor=actor, allow=True, cap=5).guest_code
    invited = invitation_create(session=session, actor=actor, name="Invited Judge")
    return {"session_id": session.pk, "join_link": server.url(f"/join/{invited.join_token}"),
            "guest_code": code}


# --- Helpers: the judge's browser, by keyboard only ----------------------------------------------

def _focused(page) -> dict:
    return page.evaluate("""() => { const e = document.activeElement; return {
        tag: e.localName, type: e.type || '', name: e.name || '',
        text: (e.innerText || e.value || '').trim() }; }""")


def _tab_to(page, *, tag: str, text: str | None = None, type_: str | None = None, limit: int = 60):
    """Press Tab until the focused element is the wanted one; fail if it never comes."""
    seen = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        focused = _focused(page)
        seen.append(focused)
        if (focused["tag"] == tag and (text is None or focused["text"] == text)
                and (type_ is None or focused["type"] == type_)):
            return
    raise AssertionError(f"Tab never reached <{tag}> {text or type_!r}; focus went {seen}")


def _activate(page, *, tag: str, text: str):
    """Tab to a link or button and press Enter; wait for the page it leads to."""
    _tab_to(page, tag=tag, text=text)
    with page.expect_navigation():
        page.keyboard.press("Enter")


def _join_by_link(page, *, start: bool = True):
    expect(page.get_by_role("heading", name="Join a judging session")).to_be_visible()
    _activate(page, tag="button", text="Join the session")
    _welcome(page, start=start)


def _join_as_guest(page, code: str, name: str):
    expect(page.get_by_role("heading", name="Join as a guest")).to_be_visible()
    _assert_every_control_labelled(page)
    expect(page.get_by_label("Guest code")).to_be_visible()
    expect(page.get_by_label("Your name, as the report will show it")).to_be_visible()
    _assert_no_horizontal_scroll(page, 320)
    _tab_to(page, tag="input", type_="text")
    assert _focused(page)["name"] == "code"
    page.keyboard.type(code.lower().replace("-", " "))  # "case and dashes do not matter"
    page.keyboard.press("Tab")
    assert _focused(page)["name"] == "name"
    page.keyboard.type(name)
    with page.expect_navigation():
        page.keyboard.press("Enter")
    _welcome(page)


def _welcome(page, *, start: bool = True):
    """The welcome page; with `start`, its "Start judging" leads straight to the first item (it
    led to the items list, where "Start" had to be found again: issue 24 item 6)."""
    expect(page.get_by_role("heading", name="You are in")).to_be_visible()
    _assert_no_horizontal_scroll(page)
    expect(page.get_by_label("Resume link")).to_have_value(re.compile(r"^http://127\.0\.0\.1:\d+/resume/"))
    expect(page.locator("#commitment")).to_have_text(re.compile(r"^[0-9a-f]{64}$"))
    expect(page.locator("#protocol")).to_have_text(re.compile(r"^[0-9a-f]{64}$"))
    if start:
        _activate(page, tag="a", text="Start judging")
        expect(page.locator(".progress")).to_have_text(re.compile(r"^Item 1 of \d+ · phase 1$"))


def _judge_choices(phase: int, position: int) -> str:
    if phase == 1:
        return "1" if position % 3 else "2"
    return {0: "3", 1: "2", 2: "1"}[position % 3]


def _guest_choices(phase: int, position: int) -> str:
    if phase == 1:
        return "2" if position % 2 else "1"
    return "3" if position % 4 else "1"


def _judge_both_phases(page, *, choose, go_back: bool = False) -> dict:
    entered, order, frames = {}, [], []  # frames: every copy's and reviewer table's text
    for phase in (1, 2):
        if phase == 2:  # phase 1 starts on its first item, from the welcome page
            expect(page.get_by_role("heading", name=re.compile(f"^Phase {phase}"))).to_be_visible()
            _assert_no_horizontal_scroll(page)
            _activate(page, tag="a", text="Start")
        codes = _judge_phase(page, phase=phase, choose=choose, entered=entered, frames=frames,
                             go_back=go_back)
        if phase == 1:
            order = codes
        else:
            assert codes == order  # phase 2 walks the same items in the same drawn order
        _lock(page, phase)
    expect(page.get_by_text("You have locked both phases.")).to_be_visible()
    # The hostile copy was among this judge's items, and shown as inert literal text.
    hostile = [text for text in frames if "copy ran a script" in text]
    assert len(hostile) == 2, "the hostile copy is shown once per phase"
    # A review reason written as a spreadsheet formula with a link is shown as plain text.
    assert any('=HYPERLINK("http://example.invalid") the result is wrong' in t for t in frames)
    for text in frames:
        for canary in BUILDER_CANARIES:
            assert canary not in text
    return {"entered": entered, "order": order}


def _judge_phase(page, *, phase, choose, entered, frames, go_back) -> list:
    codes = []
    while True:
        code = page.locator("h1 .code").inner_text()
        position = len(codes) + 1
        expect(page.locator(".progress")).to_have_text(f"Item {position} of 8 · phase {phase}")
        codes.append(code)
        frames.append(_check_copy_frame(page, code))
        if phase == 2:
            frames.append(_check_reviewer_rows(page))
        if position == 1:
            _assert_every_control_labelled(page)
            _assert_frame_is_opaque(page)
        _assert_no_horizontal_scroll(page)
        page.wait_for_timeout(READING_MS)  # the judge reads the copy

        key = choose(phase, position)
        choose_by_key(page, key)
        checked = page.locator("input[name=verdict]:checked")
        expect(checked).to_have_attribute("data-key", key)
        if key == "3":  # keep my phase-1 verdict
            value, kept = entered[(code, 1)][0], True
        else:
            value, kept = KEY_VALUES[key], False
            expect(checked).to_have_attribute("value", value)
        entered[(code, phase)] = (value, kept)

        if phase == 1 and position == 2 and go_back:
            # `b` saves and goes back; the previous item shows its saved verdict, and `n` returns
            # here with this one restored.
            with page.expect_navigation():
                page.keyboard.press("b")
            expect(page.locator("h1 .code")).to_have_text(codes[0])
            expect(page.locator("input[name=verdict]:checked")).to_have_attribute(
                "value", entered[(codes[0], 1)][0])
            with page.expect_navigation():
                page.keyboard.press("n")
            expect(page.locator("h1 .code")).to_have_text(code)
            expect(page.locator("input[name=verdict]:checked")).to_have_attribute("value", value)

        with page.expect_navigation():
            page.keyboard.press("n")
        if position == 8:
            return codes
        assert page.locator("h1 .code").inner_text() != code


def _lock(page, phase: int, *, total: int = 8):
    # Forward from the last item leads straight to the review before the lock (issue 16): every
    # item with its verdict; the one button locks them all.
    expect(page.get_by_role("heading", name=f"Review, then lock phase {phase}")).to_be_visible()
    expect(page.locator("p.progress")).to_have_text(f"{total} of {total} answered in phase {phase}.")
    expect(page.locator("table.review tbody tr")).to_have_count(total)
    _assert_every_control_labelled(page)
    _assert_no_horizontal_scroll(page)
    _activate(page, tag="button", text=f"Lock my {total} phase-{phase} verdicts")


# --- Helpers: what must hold on every page ------------------------------------------------------

def _check_copy_frame(page, code: str) -> str:
    """The copy is on screen as text; if it is the hostile one, every trick shows as literal
    text and every invisible or bidi character as a visible mark. Returns the frame's text."""
    frame_locator = page.frame_locator("iframe.copy-frame")
    body = frame_locator.locator("body")
    expect(body).not_to_be_empty()
    text = body.text_content()
    if "copy ran a script" in text:
        for literal in HOSTILE_LITERALS:
            assert literal in text, literal
        for mark in VISIBLE_MARKS:
            expect(frame_locator.locator(".mark", has_text=mark).first).to_be_visible()
        for control in RAW_CONTROLS:
            assert control not in text
        # The mixed-script token is marked, not silently changed.
        # (In the view the frame opens on: a markdown frame's plain-text view, #text, holds the
        # same marks, hidden until asked for.)
        expect(frame_locator.locator(":is(.md, .rowsframe) .mark.mixed",
                                     has_text="p\u0430ypal")).to_be_visible()
    # Whatever the copy, its document holds nothing that can load, link, navigate or run. (The
    # test reads it with DevTools privileges; the page itself cannot, see _assert_frame_is_opaque.)
    inventory = page.locator("iframe.copy-frame").element_handle().content_frame().evaluate(
        FRAME_INVENTORY_JS)
    assert set(inventory["tags"]) <= FRAME_TAGS, inventory["tags"]
    assert set(inventory["attributes"]) <= {"lang", "charset", "class", "title", "id", "data-n",
                                            "open", "href", "tabindex"}, inventory["attributes"]
    # The one tabindex is the frame's own main element's, 0 (issue 24, item 4).
    assert frame_locator.locator("[tabindex]").evaluate_all(
        "els => els.map(e => e.localName + '=' + e.getAttribute('tabindex'))") == ["main=0"]
    # The renderer's only links go to a file's anchor in the same document.
    assert all(re.fullmatch(r"#w[0-9]+", href) for href in inventory["hrefs"]), inventory["hrefs"]
    assert inventory["metas"] == ['<meta charset="utf-8">'] and inventory["styles"] == 1
    # Its own URL, with at most a view's fragment (#wrap is the default on a small screen).
    assert re.search(rf"/i/{code}/frame(#wrap|#text)?$", inventory["location"]), inventory["location"]
    return text


def _check_reviewer_rows(page) -> str:
    """Phase 2: one row per reviewer under the host's labels; returns the section's text."""
    rows = page.locator("section.reviewers tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0).locator("td").first).to_have_text("Reviewer A")
    expect(rows.nth(1).locator("td").first).to_have_text("Reviewer B")
    expect(page.get_by_text("Your locked phase-1 verdict:")).to_be_visible()
    reasons = page.locator("section.reviewers").text_content()
    assert "qwen" not in reasons.lower() and "gpt-4o-mini" not in reasons
    return reasons


def _assert_frame_is_opaque(page):
    """The frame cannot run script (sandbox without allow-scripts) and has an opaque origin: the
    parent cannot reach into it and it cannot reach out (no postMessage without script). Its
    response carries the sandbox too, so the copy's URL opened on its own is just as inert."""
    frame = page.locator("iframe.copy-frame")
    expect(frame).to_have_attribute("sandbox", "")
    response = page.request.get(urljoin(page.url, frame.get_attribute("src")))
    assert response.ok
    csp = {d.split()[0]: d.split()[1:] for d in response.headers["content-security-policy"].split(";")
           if d.strip()}
    assert csp["sandbox"] == [] and csp["default-src"] == ["'none'"]
    assert "script-src" not in csp and csp["frame-ancestors"] == ["'self'"]
    assert page.evaluate("document.querySelector('iframe.copy-frame').contentDocument") is None
    assert page.evaluate("""() => { try { return String(window.frames[0].document); }
                                     catch (e) { return e.name; } }""") == "SecurityError"


def _assert_every_control_labelled(page):
    # Controls inside a closed <details> (the progress rows' action menus) have no accessible
    # name until it opens: open them all, so theirs are checked too.
    page.evaluate("document.querySelectorAll('main details').forEach(d => d.open = true)")
    # A control out of the page (the import form's fields of the formats not chosen) has no
    # accessible name to check: the import form's test checks each format's in turn.
    controls = page.locator("main").locator(
        "input:not([type=hidden]), select, textarea, button").filter(visible=True)
    count = controls.count()
    assert count > 0
    for index in range(count):
        expect(controls.nth(index)).to_have_accessible_name(re.compile(r"\w"))


# Each visible checkbox of the page and where its label's first line starts: a label that does not
# begin on the box's own line, right of it, reads as the label of whatever is below or above.
CHECKBOX_LABEL_PROBLEMS = """() => [...document.querySelectorAll('main input[type=checkbox]')]
    .filter(box => box.getClientRects().length)
    .map(box => {
        const label = box.labels && box.labels[0];
        if (!label) return `${box.name}: no label`;
        const range = document.createRange();
        range.selectNodeContents(label);
        const first = range.getClientRects()[0], b = box.getBoundingClientRect();
        const text = label.textContent.trim().slice(0, 60);
        if (!first) return `${text}: the label has no box`;
        const beside = first.left >= b.right - 1 && first.top < b.bottom && first.bottom > b.top;
        return beside ? null : `${text}: its first line at (${Math.round(first.left)}, ` +
            `${Math.round(first.top)}), the box at (${Math.round(b.left)}, ${Math.round(b.top)})`;
    }).filter(Boolean)"""


def _checkbox_label_problems(page) -> list[str]:
    return page.evaluate(CHECKBOX_LABEL_PROBLEMS)


def _assert_no_horizontal_scroll(page, width: int | None = None):
    """At the context's width (the guest's 320 px, the judge's large screen) the page body never
    scrolls sideways."""
    width = width or page.viewport_size["width"]
    assert page.viewport_size["width"] == width
    scroll = page.evaluate("[document.documentElement.scrollWidth, document.body.scrollWidth]")
    assert max(scroll) <= width, f"the page scrolls sideways at {width}px: {scroll}"


def _settle(page):
    page.wait_for_load_state("load")
    page.wait_for_timeout(200)  # let refused or aborted loads report back to the observer


def _wait_for(page, condition, seconds: float = 10):
    """Poll while letting Playwright deliver events (a plain sleep would hold them back)."""
    for _ in range(int(seconds / 0.05)):
        if condition():
            return
        page.wait_for_timeout(50)
    raise AssertionError("the condition never held")


# --- The host's pages: readable at 320 px and on a large screen, every control labelled -----------

HOST_PAGES = ["/host/", "/host/runs/{run}/", "/host/runs/{run}/copies/0/truth",
              "/host/sessions/{session}/", "/host/sessions/{session}/blinding",
              "/host/sessions/{session}/planner", "/host/sessions/{session}/invitations",
              "/host/sessions/{session}/guests", "/host/sessions/{session}/judges",
              "/host/sessions/{session}/judges/1/remove", "/host/sessions/{session}/reveal"]


@pytest.mark.parametrize("width", [320, 1440])
def test_the_host_pages_read_at_320_px_and_on_a_large_screen(e2e_server, observed_context, sink,
                                                             width):
    session = a_demo_session(a_host("e2e-layout-host", HOST_PASSWORD), "open", rubric=DEMO_RUBRIC,
                             preregistration=DEMO_PREREGISTRATION, guests_allowed=True)

    invite_and_join(session, name="A Judge With A Rather Long Name")
    context, seen = observed_context(e2e_server.origin, viewport={"width": width, "height": 800})
    page = context.new_page()
    sign_in_as_host(page, e2e_server, "e2e-layout-host", HOST_PASSWORD)
    pages_without_controls, checkboxes_seen = [], 0
    for template in HOST_PAGES:
        path = template.format(run=session.run_id, session=session.pk)
        response = page.goto(e2e_server.url(path))
        assert response.status == 200, path
        _settle(page)
        _assert_no_horizontal_scroll(page, width)
        if page.locator("main").locator("input:not([type=hidden]), select, textarea, button").count():
            _assert_every_control_labelled(page)  # opens every <details>: folded fields too
            checkboxes_seen += page.locator("main input[type=checkbox]").count()
            assert _checkbox_label_problems(page) == [], path
        else:
            pages_without_controls.append(path)
    # The one page with nothing to act on: the blinding check is read-only once the session opened.
    assert pages_without_controls == [f"/host/sessions/{session.pk}/blinding"]
    # The new session's form has long checkbox labels (wrapped at 320 px, and one on a large
    # screen): the measure must have seen them, and fires on a label pushed below its box.
    assert checkboxes_seen >= 8
    page.goto(e2e_server.url(f"/host/runs/{session.run_id}/"))
    page.evaluate("document.querySelector('main .field.check label').style.flexBasis = '100%'")
    assert len(_checkbox_label_problems(page)) == 1


def test_the_import_form_shows_the_chosen_formats_fields_and_imports_a_table(e2e_server, tmp_path,
                                                                            observed_context, sink):
    """Choosing a format shows its fields and hides the others' (a style rule, no script); a
    table of outputs then imports through the fields shown."""
    a_host("e2e-import-host", HOST_PASSWORD)
    context, seen = observed_context(e2e_server.origin, viewport={"width": 1280, "height": 800})
    page = context.new_page()
    # Signed in over a slow network, as a loaded CI machine once was: the runs page's HTML is
    # parsed (its heading shown) long before its stylesheets come, and measuring the fields then
    # finds every one of them shown. The sign-in must wait for the styled page.
    network = context.new_cdp_session(page)
    network.send("Network.enable")
    network.send("Network.emulateNetworkConditions", {"offline": False, "latency": 400,
                                                      "downloadThroughput": -1, "uploadThroughput": -1})
    sign_in_as_host(page, e2e_server, "e2e-import-host", HOST_PASSWORD)
    order = list(RunImportForm().fields)
    for source, _ in IMPORT_SOURCES:
        page.get_by_label("Format", exact=True).select_option(source)
        shown = page.evaluate("""[...document.querySelectorAll('form.by-format .field')]
            .filter(box => box.getClientRects().length)
            .map(box => box.querySelector('[name]').name)""")
        assert shown == [name for name in order if name in ("source", "again")
                         or source in IMPORT_FIELD_FORMATS.get(name, ())], source
        _assert_every_control_labelled(page)
    # (The network stays slow until here: lifting it would let a stylesheet still on its way land.)
    network.send("Network.emulateNetworkConditions", {"offline": False, "latency": 0,
                                                      "downloadThroughput": -1, "uploadThroughput": -1})
    page.get_by_label("Format", exact=True).select_option("csv")
    table = tmp_path / "outputs.csv"
    table.write_text("prompt,answer,label\nAdd two numbers.,a + b,correct\nSubtract.,a + b,buggy\n",
                     encoding="utf-8")
    page.get_by_label("Table of outputs (JSONL or CSV)", exact=True).set_input_files(table)
    page.get_by_label("Column map", exact=True).fill("task=prompt,content=answer,truth=label")
    page.get_by_label("Value maps", exact=True).fill("truth:buggy=seeded_defect,correct=known_good")
    page.get_by_label("Constant builder", exact=True).fill("gpt-4o")
    page.get_by_label("Run name", exact=True).fill("Two answers")
    page.get_by_role("button", name="Import", exact=True).click()
    expect(page).to_have_url(re.compile(r"/host/runs/\d+/$"))
    run = Run.objects.get(name="Two answers")
    assert page.url == e2e_server.url(f"/host/runs/{run.pk}/")
    assert run.copies.count() == 2
    seen.assert_silent(sink)
    seen.assert_silent(sink)
