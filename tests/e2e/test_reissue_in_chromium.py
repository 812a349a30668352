"""A reissued resume link ends the browser sessions opened with it, in real Chromium against a real
server process (issue 12 item 3; docs/threats.md case 37): the page open in the leaked link's
browser is told at once over its socket and stops accepting verdicts; after a reload it is a
stranger's 404; the new link admits. And the host's session overview, on the same socket as the
progress page, follows a judge joining without a reload.
"""

import pytest
from playwright.sync_api import expect

from judging.models import Verdict
from judging.services import invitation_create
from tests.e2e.hosts import sign_in_as_host
from tests.worlds import a_host, a_run, a_session, codes, invite_and_join

pytestmark = pytest.mark.django_db(transaction=True)

ENDED = "This browser's access to the session has ended"
HOST_PASSWORD = "reissuing host passphrase 1"


def _resume(page, server, token):
    page.goto(server.url(f"/resume/{token}"))
    with page.expect_navigation():
        page.get_by_role("button", name="Continue where I left off").click()


def test_the_page_open_with_a_leaked_link_ends_at_the_hosts_reissue(e2e_server, observed_context):
    session = a_session(a_run(a_host("reissuing-host", HOST_PASSWORD)), "open")
    admission = invite_and_join(session, "Leaky")
    judge = admission.judge
    code = codes(judge)[0]
    context, seen = observed_context(e2e_server.origin)
    page = context.new_page()
    _resume(page, e2e_server, admission.resume_token)
    page.goto(e2e_server.url(f"/s/{session.url_id}/i/{code}/"))
    expect(page.locator("#live")).to_have_attribute("data-status", "live")

    # The host reissues the link on the judges page (in the server process, so its event
    # reaches the judge's socket on every channel layer, the in-memory one included).
    host_context, _ = observed_context(e2e_server.origin)
    host = host_context.new_page()
    sign_in_as_host(host, e2e_server, "reissuing-host", HOST_PASSWORD)
    host.goto(e2e_server.url(f"/host/sessions/{session.pk}/judges"))
    host.locator(f'tr[data-judge="{judge.number}"] summary').click()  # the row's menu (issue 17)
    with host.expect_navigation():
        host.get_by_role("button", name=f"Reissue resume link of {judge.pseudonym}").click()
    new_link = host.get_by_role("textbox", name=f"Resume link for {judge.pseudonym}").input_value()

    expect(page.locator("#live-notice")).to_contain_text(ENDED)
    expect(page.locator("#live")).to_have_attribute("data-status", "stopped")
    expect(page.get_by_role("radio", name="Pass")).to_be_disabled()
    assert page.reload().status == 404
    assert not Verdict.objects.exists()
    # The judge, with the new link, in a browser of their own.
    own, _ = observed_context(e2e_server.origin)
    mine = own.new_page()
    mine.goto(new_link)
    with mine.expect_navigation():
        mine.get_by_role("button", name="Continue where I left off").click()
    assert mine.goto(e2e_server.url(f"/s/{session.url_id}/i/{code}/")).status == 200
    assert seen.page_errors == [] and seen.dialogs == []


def test_the_session_overview_follows_judges_joining_without_a_reload(e2e_server, observed_context):
    """The overview's judge counts and its "Next: invite the judges" follow the session over the
    host's socket, as the progress page does: a judge joins in another browser (through the
    server, so the event crosses every channel layer) and the page shows it without a reload."""
    session = a_session(a_run(a_host("overview-host", HOST_PASSWORD)), "open")
    token = invitation_create(session=session, actor="test", name="Newcomer").join_token
    host_context, seen = observed_context(e2e_server.origin)
    host = host_context.new_page()
    sign_in_as_host(host, e2e_server, "overview-host", HOST_PASSWORD)
    host.goto(e2e_server.url(f"/host/sessions/{session.pk}/"))
    expect(host.locator("#live")).to_have_attribute("data-status", "live")
    expect(host.locator('#judge-totals [data-total="joined"]')).to_have_text("0")
    next_step = host.get_by_role("heading", name="Next: invite the judges")
    expect(next_step).to_be_visible()
    loaded = host.evaluate("performance.timeOrigin")

    judge_context, _ = observed_context(e2e_server.origin)
    joining = judge_context.new_page()
    joining.goto(e2e_server.url(f"/join/{token}"))
    with joining.expect_navigation():
        joining.get_by_role("button", name="Join the session").click()

    expect(host.locator('#judge-totals [data-total="joined"]')).to_have_text("1")
    expect(next_step).to_be_hidden()
    assert host.evaluate("performance.timeOrigin") == loaded  # the same page: no reload
    seen.assert_silent()
