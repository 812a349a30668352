"""A host sets up a session in real Chromium against a real server (issue 17): import, a new
session from the top of the run page, the blinding check's "accept all" and its redacted preview,
the planner's number of judges, a preview of the judge's pages in both phases (keys recorded in
the page only: no request but GETs, no socket, no row), opening through the confirmation, a list
of invitees refused then invited, the CSV of join links downloaded once (each link then used
once), and the progress page at 1280 px, whose table fits and whose actions menu shows. axe-core
(the tests' own pinned copy, tests/e2e/node_modules) finds no violation on any host page the walk
visited, the previewed judge pages among them.

One test, so one server for the module.
"""

import csv
import io
import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from accounts.models import Judge
from judging.demo import demo_bundle
from judging.models import ItemDraft, Session
from tests.e2e.judge_keys import choose_by_key
from tests.host.test_run_page_lists import big_bundle
from tests.worlds import a_host, a_run

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.browser_once("the host's pages walked by a browser, form to form")]

AXE = Path(__file__).resolve().parent / "node_modules" / "axe-core" / "axe.min.js"
PASSWORD = "host walk passphrase 1"
WIDTH, HEIGHT = 1280, 900
INVITEES = "Ann Lee\tbackend\nBo Chen — frontend\nCara Diaz | on call\n"
INSTRUCTIONS = "Read each copy **to the end**.\n\n<script>window.ran = true</script>"


def _axe_violations(context, url: str, *, then=None) -> list:
    """axe-core's violations on `url` (every <details> open), in a page of `context`; `then(page)`,
    when given, acts on the page first (and may leave it for another)."""
    page = context.new_page()
    page.goto(url)
    if then is not None:
        then(page)
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    page.close()
    assert len(result["passes"]) > 10  # it ran its rules
    return [(url, v["id"], v["impact"], v["help"], [n["target"] for n in v["nodes"][:3]])
            for v in result["violations"]]


def test_a_host_sets_up_and_invites_a_list(e2e_server, observed_context, browser, tmp_path):
    assert AXE.exists(), f"{AXE} is missing: `./bj test` installs it (or: npm ci --prefix tests/e2e)"
    host = a_host("walk-host", PASSWORD)
    context, observer = observed_context(e2e_server.origin, accept_downloads=True,
                                         viewport={"width": WIDTH, "height": HEIGHT})
    page = context.new_page()
    visited = []

    def seen():
        visited.append(page.url.split("#")[0])

    page.goto(e2e_server.url("/host/"))
    page.get_by_label("Username", exact=True).fill("walk-host")
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Runs", exact=True)).to_be_visible()
    seen()

    # Import; the run page offers the New-session form near its top, the reviews counted (listed
    # on their own page, visited here and back).
    page.get_by_label("Run bundle (JSON file, blindjudge.run/1 or run/2)").set_input_files(files=[{
        "name": "demo-run.json", "mimeType": "application/json",
        "buffer": json.dumps(demo_bundle()).encode("utf-8")}])
    page.get_by_role("button", name="Import", exact=True).click()
    expect(page.get_by_role("heading", name="New session")).to_be_visible()
    seen()
    # Measured on the styled page: the heading shows before the stylesheets arrive, and a layout
    # measured then is the unstyled one (a loaded CI machine once failed a test on that).
    page.wait_for_load_state("load")
    form_top = page.get_by_role("button", name="Create draft session").bounding_box()["y"]
    assert form_top < 2500, f"the New-session form starts {form_top:.0f} px down"
    page.get_by_role("link", name="Every review with its reason and seal").click()
    expect(page.get_by_role("heading", name=re.compile("^Reviews of run"))).to_be_visible()
    expect(page.locator("main table tbody tr")).to_have_count(24)
    seen()
    page.get_by_role("link", name=re.compile(r"^Run \d+$")).click()
    expect(page.get_by_role("heading", name="New session")).to_be_visible()
    page.get_by_label("Judges judge", exact=True).select_option("copies")
    page.get_by_label("Items per judge").fill("4")
    page.get_by_role("button", name="Create draft session").click()
    expect(page.locator("h1 .state")).to_have_text("draft")
    seen()
    session_id = int(re.search(r"/host/sessions/(\d+)/", page.url).group(1))

    # The blinding check: accept every listed match at once; the preview shows them redacted.
    page.get_by_role("link", name="Blinding check", exact=True).first.click()
    expect(page.locator("#redacted-preview .mark.redacted")).to_have_count(0)
    page.get_by_role("button", name=re.compile(r"^Accept all \d+ listed match")).click()
    expect(page.get_by_text(re.compile(r"\d+ pattern\(s\) accepted: every listed match"))).to_be_visible()
    expect(page.get_by_role("heading", name="Matches not yet covered by a pattern")).to_have_count(0)
    expect(page.locator("#redacted-preview .mark.redacted").first).to_be_visible()
    seen()

    # The planner names its judges.
    page.get_by_role("link", name="Sample size", exact=True).click()
    page.get_by_label("ψ: expected share of discordant pairs").fill("0.25")
    page.get_by_label("δ: the difference in accuracy you want to detect").fill("0.15")
    page.get_by_role("button", name="Plan").click()
    expect(page.get_by_role("heading", name=re.compile(
        r"n = 85 paired verdicts per truth class ≈ \d+ judges at 4 items each"))).to_be_visible()
    seen()

    # Instructions: previewed inert (nothing saved), then saved; opening freezes them.
    page.get_by_role("link", name="Instructions", exact=True).click()
    page.get_by_label("Instructions to judges (markdown)").fill(INSTRUCTIONS)
    page.get_by_role("button", name="Preview", exact=True).click()
    expect(page.locator("#instructions-preview strong")).to_have_text("to the end")
    expect(page.locator("#instructions-preview")).to_contain_text("<script>window.ran = true</script>")
    assert page.evaluate("window.ran === undefined")
    expect(page.get_by_label("Instructions to judges (markdown)")).to_have_value(INSTRUCTIONS)
    page.get_by_role("button", name="Save the instructions").click()
    expect(page.get_by_text("Instructions saved.")).to_be_visible()
    seen()

    # Preview as a judge, in the draft: the judge's own pages, both phases; keys record a choice
    # in the page only. Not one request but GETs leaves the page, no socket opens, no row is made.
    page.get_by_role("link", name="Overview", exact=True).click()
    sent, sockets = [], []
    page.on("request", lambda request: sent.append((request.method, request.url)))
    page.on("websocket", lambda socket: sockets.append(socket.url))
    page.get_by_role("link", name="Preview as a judge").click()
    expect(page.get_by_text("Preview as a judge, phase 1.")).to_be_visible()
    expect(page.get_by_role("heading", name="You are in")).to_be_visible()
    seen()
    # "Start judging" opens the first item. The item page loaded, its script with it: a key
    # pressed while the page is still parsing does nothing (a loaded CI run pressed "2" that
    # early, and the item never moved).
    with page.expect_navigation():
        page.get_by_role("link", name="Start judging").click()
    expect(page.locator(".item-nav .progress")).to_have_text("Item 1 of 4 · phase 1")
    first_code = page.locator("h1 .code").inner_text()
    seen()
    choose_by_key(page, "2", on=page.locator("body"))  # one key per decision: recorded, next shown
    expect(page.locator("h1 .code")).not_to_have_text(first_code)
    expect(page.locator(".answered-text")).to_have_text("1 of 4 answered")
    page.locator("body").press("k")
    expect(page.locator("h1 .code")).to_have_text(first_code)
    expect(page.locator("input[name=verdict][value=fail]")).to_be_checked()
    expect(page.locator("#autosave-status")).to_have_text("Preview: kept on this page only, never saved.")
    with page.expect_navigation():
        page.get_by_role("link", name="Show phase 2").click()
    with page.expect_navigation():
        page.get_by_role("link", name="Start", exact=True).click()
    expect(page.get_by_role("heading", name="What the model reviewers said")).to_be_visible()
    expect(page.locator("input[name=verdict]:checked")).to_have_count(0)  # nothing preselected
    seen()
    choose_by_key(page, "3", on=page.locator("body"))
    expect(page.locator(".answered-text")).to_have_text("1 of 4 answered")
    page.get_by_role("link", name="Leave the preview").click()
    expect(page.locator("h1 .state")).to_have_text("draft")
    assert [request for request in sent if request[0] != "GET"] == []
    assert sockets == []
    assert Judge.objects.filter(session_id=session_id).count() == 0
    assert ItemDraft.objects.filter(assignment__judge__session_id=session_id).count() == 0

    # Opening: the confirmation lists what freezes; then the next step is inviting.
    page.get_by_role("link", name="Open the session…").click()
    expect(page.get_by_role("heading", name="Frozen for good")).to_be_visible()
    expect(page.locator("#frozen-parts")).to_contain_text("the redactions (")
    expect(page.locator("#frozen-parts")).to_contain_text("your instructions to judges")
    seen()
    page.get_by_role("button", name="Open the session and freeze the protocol").click()
    expect(page.locator("h1 .state")).to_have_text("open")
    expect(page.get_by_role("heading", name="Next: invite the judges")).to_be_visible()
    seen()
    page.get_by_role("link", name="Invite judges", exact=True).click()

    # A bad list: the line is named, the text stays, nobody is invited.
    names = page.get_by_label("Names, one a line")
    names.fill(INVITEES + "ann lee\n")
    page.get_by_role("button", name="Invite the list").click()
    expect(page.get_by_text('line 4: "ann lee" is already on line 1')).to_be_visible()
    expect(names).to_have_value(INVITEES + "ann lee\n")
    names.fill(INVITEES)
    page.get_by_role("button", name="Invite the list").click()
    expect(page.get_by_role("heading", name="Join links for 3 invitees: download once")).to_be_visible()
    seen()
    with page.expect_download() as download_info:
        page.get_by_role("button", name="Download the join links (CSV)").click()
    saved = tmp_path / "links.csv"
    download_info.value.save_as(saved)
    rows = list(csv.DictReader(io.StringIO(saved.read_text(encoding="utf-8"))))
    assert [(r["name"], r["note"]) for r in rows] == [
        ("Ann Lee", "backend"), ("Bo Chen", "frontend"), ("Cara Diaz", "on call")]
    page.goto(e2e_server.url(f"/host/sessions/{session_id}/invitations"))
    expect(page.get_by_role("heading", name=re.compile("download once"))).to_have_count(0)

    # Each link admits its invitee once.
    judge_context, judge_observer = observed_context(e2e_server.origin)
    late_context, late_observer = observed_context(e2e_server.origin)
    for row in rows:
        judge = judge_context.new_page()
        judge.goto(row["join_link"])
        judge.get_by_role("button", name="Join the session").click()
        expect(judge.get_by_role("heading", name="You are in")).to_be_visible()
        if row is rows[0]:  # the welcome page leads to the instructions, with the host's text
            judge.get_by_role("link", name="Read the instructions (2 min)").click()
            expect(judge.locator(".host-instructions strong")).to_have_text("to the end")
            expect(judge.locator("#item-count")).to_have_text("4 items")
        judge.close()
        late = late_context.new_page()  # someone else with the same link, after: refused
        late.goto(row["join_link"])
        late.get_by_role("button", name="Join the session").click()
        expect(late.get_by_text("This join link works only once")).to_be_visible()
        late.close()
    page.reload()
    expect(page.locator("tbody tr td[data-cell=status]", has_text="joined as J0")).to_have_count(3)

    # The progress page at 1280 px: the table fits its container; the actions menu is reachable.
    page.get_by_role("link", name="Judges & progress", exact=True).click()
    expect(page.locator('tr[data-judge="3"]')).to_be_visible()
    seen()
    page.wait_for_load_state("load")  # styled, as above
    fits = page.evaluate("""() => {
        const table = document.querySelector('table.judges');
        return {table: table.scrollWidth, container: table.parentElement.clientWidth};
    }""")
    assert fits["table"] <= fits["container"], fits
    summary = page.locator('tr[data-judge="1"] summary')
    expect(summary).to_be_visible()
    box = summary.bounding_box()
    assert box["x"] + box["width"] <= WIDTH
    summary.click()
    expect(page.get_by_role("button", name="Reissue resume link of J01")).to_be_visible()
    expect(page.locator('tr[data-judge="1"] [data-cell="last-active"]')).to_have_text(
        re.compile(r"\d\d-\d\d \d\d:\d\d"))
    # The refused list answered 400 and the used links 403, as designed: Chromium logs those
    # answers as console errors, and nothing else may be there.
    for watched, status in ((observer, 400), (late_observer, 403)):
        expected = f"the server responded with a status of {status}"
        assert all(expected in text for text in watched.console_errors()), watched.console_errors()
        watched.console.clear()
        watched.assert_silent()
    judge_observer.assert_silent()

    # The host templates the walk did not need: guests, a truth correction, the confirmations
    # (remove, erase), the account page; axe visits them with the rest.
    # A run too large for one page of each list: its second page of copies, with the lists'
    # page links (tests/host/test_run_page_lists.py).
    run_id = Session.objects.get(pk=session_id).run_id
    large = a_run(host, big_bundle()).pk
    for path in (f"/host/sessions/{session_id}/guests", f"/host/runs/{run_id}/copies/1/truth",
                 f"/host/sessions/{session_id}/judges/1/remove",
                 f"/host/sessions/{session_id}/judges/1/erase", "/host/account/",
                 f"/host/runs/{large}/?copies=2"):
        assert page.goto(e2e_server.url(path)).status == 200, path
        seen()
    expect(page.get_by_role("navigation", name="Pages of copies")).to_be_visible()

    # axe-core on every host page visited, in a context that lets its script in (the product's
    # CSP refuses injected scripts) signed in as the same host.
    axe_context = browser.new_context(bypass_csp=True, viewport={"width": WIDTH, "height": HEIGHT},
                                      storage_state=context.storage_state())
    violations = [v for url in dict.fromkeys(visited) for v in _axe_violations(axe_context, url)]

    def saved_with_a_message(page):
        with page.expect_navigation():
            page.get_by_role("button", name="Save the cap").click()
        expect(page.locator(".messages li")).to_have_count(1)

    # A page with a message shown: its list in a role=status wrapper (issue 24 item 6: axe's
    # listitem, serious, when the list itself had the role).
    violations += _axe_violations(axe_context, e2e_server.url(f"/host/sessions/{session_id}/guests"),
                                  then=saved_with_a_message)
    axe_context.close()
    assert len(dict.fromkeys(visited)) >= 16
    assert violations == []
