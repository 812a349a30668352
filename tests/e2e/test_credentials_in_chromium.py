"""Issue 12 item 14 in real Chromium: the join and resume links' tokens reach only the server, in
the page's own navigation and its form's POST, and no log keeps them.

Every request the pages make is recorded (page.on("request")): their stylesheet and the rest of
their subresources, the form's POST and the redirect after it. None carries the token in its URL
(but those two) or in its Referer. The server's access log (Uvicorn, as ./bj start runs it) and its
error log then show the two paths redacted.
"""

from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from judging.services import invitation_create

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.browser_once(
        "where the browser sends a link's token, and what the server's log keeps"),
]


def visit(context, url: str, button: str, heading: str) -> list:
    """Open `url`, press its one button, wait for the next page; every request made meanwhile."""
    page = context.new_page()
    made = []
    page.on("request", lambda request: made.append(request))
    page.goto(url)
    page.get_by_role("button", name=button).click()
    expect(page.get_by_role("heading", name=heading)).to_be_visible()
    page.wait_for_load_state("networkidle")
    return page, made


def assert_token_stays_in_its_own_page(made: list, token: str, token_path: str):
    own = []
    for request in made:
        referer = request.all_headers().get("referer", "")
        assert token not in referer, f"{request.method} {request.url} sent Referer {referer}"
        if token in request.url:
            assert request.is_navigation_request() and urlsplit(request.url).path == token_path, request.url
            own.append(request.method)
    assert own == ["GET", "POST"], own  # the page itself and its form, nothing else
    subresources = [r for r in made if r.resource_type in ("stylesheet", "script", "image")]
    assert subresources, "positive control: the pages load subresources"


def test_join_and_resume_pages_send_their_token_nowhere_and_the_server_logs_hold_none(
        e2e_server, observed_context, sink, open_session):
    token = invitation_create(session=open_session, actor="test", name="Ada").join_token
    context, seen = observed_context(e2e_server.origin)
    page, made = visit(context, e2e_server.url(f"/join/{token}"), "Join the session", "You are in")
    assert_token_stays_in_its_own_page(made, token, f"/join/{token}")
    resume_link = page.get_by_label("Resume link").input_value()
    resume_token = urlsplit(resume_link).path.rsplit("/", 1)[1]
    # The copy button puts the link on the clipboard and says so (issue 16 item 6).
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=e2e_server.origin)
    copy = page.locator("button[data-copy=resume-link]")  # its name changes once it has copied
    expect(copy).to_have_text("Copy the link")
    copy.click()
    expect(copy).to_have_text("Copied")
    assert page.evaluate("navigator.clipboard.readText()") == resume_link
    seen.assert_silent(sink)

    # The resume link, on another device (a fresh context).
    elsewhere, seen_elsewhere = observed_context(e2e_server.origin)
    _, made = visit(elsewhere, resume_link, "Continue where I left off", "Phase 1: judge alone")
    assert_token_stays_in_its_own_page(made, resume_token, f"/resume/{resume_token}")
    seen_elsewhere.assert_silent(sink)

    # A second use of the join link is refused (Django logs the path of every 4xx).
    again, _ = observed_context(e2e_server.origin)
    refused = again.new_page()
    refused.goto(e2e_server.url(f"/join/{token}"))
    refused.get_by_role("button", name="Join the session").click()
    expect(refused.get_by_role("heading", name="This join link cannot be used")).to_be_visible()
    expect(refused.get_by_role("link", name="How to come back with your resume link")).to_be_visible()

    access, errors = e2e_server.stdout(), e2e_server.stderr()
    for secret in (token, resume_token):
        assert secret not in access, access[-3000:]
        assert secret not in errors, errors[-3000:]
    # Positive controls: the access log is on and shows the requests, redacted.
    assert access.count('"GET /join/[redacted] HTTP/1.1" 200') == 2
    assert '"POST /join/[redacted] HTTP/1.1" 302' in access
    assert '"POST /join/[redacted] HTTP/1.1" 403' in access
    assert '"POST /resume/[redacted] HTTP/1.1" 302' in access
    assert "Forbidden: /join/[redacted]" in errors
