"""Sign-in with GitHub in real Chromium against a real Uvicorn process and the local GitHub stand-in
(issue 4). The browser's only way out is the server and the stand-in: everything else resolves to
the sink (tests/e2e/conftest.py), and the Observer records every request.
"""

import pytest
from playwright.sync_api import expect

from accounts.enums import AdmittedAs, IdentifiedBy
from accounts.models import Judge
from judging.services import invitation_create

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def listed_session(open_session):
    invitation_create(session=open_session, actor="test", github_login="octocat")
    return open_session


def sign_in_with_github(page, server, session, standin, *, github_id, login):
    standin.user = {"id": github_id, "login": login, "name": "Secret Name",
                    "email": f"{login}@example.com"}
    page.goto(server.url(f"/github/join/{session.url_id}/"))
    page.get_by_role("button", name="Sign in with GitHub").click()
    page.wait_for_load_state()


def test_a_listed_login_signs_in_with_github_and_judges(e2e_server, observed_context, sink, standin,
                                                        listed_session):
    context, observer = observed_context(e2e_server.origin, also_allowed=(standin.url,))
    page = context.new_page()
    sign_in_with_github(page, e2e_server, listed_session, standin, github_id=583231, login="octocat")
    # Back from GitHub: the page says who is signed in; nothing is admitted until the POST.
    expect(page.get_by_role("heading", name="Signed in with GitHub")).to_be_visible()
    expect(page.get_by_text("@octocat")).to_be_visible()
    assert not Judge.objects.exists()
    page.get_by_role("button", name="Continue to the session").click()
    expect(page.get_by_role("heading", name="You are in")).to_be_visible()
    judge = Judge.objects.get()
    assert (judge.github_id, judge.github_login, judge.admitted_as, judge.identified_by) == (
        583231, "octocat", AdmittedAs.INVITED, IdentifiedBy.GITHUB)
    page.goto(e2e_server.url(f"/s/{listed_session.url_id}/"))
    expect(page.get_by_role("heading", name="Phase 1: judge alone")).to_be_visible()

    # The browser went to the stand-in once (the authorize page); the server made the rest.
    to_standin = [url.split("?")[0] for url in observer.requests if url.startswith(standin.url)]
    assert to_standin == [f"{standin.url}/login/oauth/authorize"]
    assert standin.paths() == ["GET /login/oauth/authorize", "POST /login/oauth/access_token",
                               "GET /api/v3/user"]
    assert standin.requests[0].query["scope"] == [""]
    observer.assert_silent(sink)


def test_an_unlisted_login_is_told_plainly_and_learns_nothing(e2e_server, observed_context, sink,
                                                              standin, listed_session):
    context, observer = observed_context(e2e_server.origin, also_allowed=(standin.url,))
    page = context.new_page()
    sign_in_with_github(page, e2e_server, listed_session, standin, github_id=99, login="mallory")
    body = page.locator("body").inner_text()
    assert "closed" in body.lower()
    for secret in (listed_session.url_id, listed_session.run.name, listed_session.rubric, "octocat"):
        assert secret not in page.content()
    assert not Judge.objects.exists()
    observer.assert_silent(sink)


def test_a_token_judge_links_github_in_the_browser(e2e_server, observed_context, sink, standin,
                                                   listed_session):
    token = invitation_create(session=listed_session, actor="test", name="Tokenia").join_token
    context, observer = observed_context(e2e_server.origin, also_allowed=(standin.url,))
    page = context.new_page()
    page.goto(e2e_server.url(f"/join/{token}"))
    page.get_by_role("button").first.click()
    page.goto(e2e_server.url(f"/s/{listed_session.url_id}/"))
    page.get_by_role("link", name="Link your GitHub account").click()
    standin.user = {"id": 777, "login": "tokenia-gh"}
    page.get_by_role("button", name="Sign in with GitHub to link it").click()
    expect(page.get_by_text("GitHub confirmed you as")).to_be_visible()
    page.get_by_role("button", name="Link @tokenia-gh").click()
    expect(page.get_by_text("Linked to GitHub as @tokenia-gh")).to_be_visible()
    expect(page.get_by_role("heading", name="Phase 1: judge alone")).to_be_visible()
    judge = Judge.objects.get(display_name="Tokenia")
    assert (judge.github_id, judge.identified_by) == (777, IdentifiedBy.GITHUB)
    observer.assert_silent(sink)
