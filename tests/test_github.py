"""Sign-in with GitHub (issue 4), a full OAuth dance against a local stand-in for GitHub.

Threats 17 (session key changes at sign-in) and 18 (missing or wrong `state`, or a sign-in started
by GET, gives no session) each have their own tests here.
"""

import http.client
from urllib.parse import parse_qs, urlsplit

import pytest
from allauth.account.models import EmailAddress
from allauth.socialaccount.models import SocialAccount, SocialToken
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client, override_settings
from django.urls import reverse

from accounts.models import AdmittedAs, Host, IdentifiedBy, Invitation, Judge, JudgeStatus
from accounts.services import (
    GITHUB_REFUSAL,
    invitation_create,
    judge_erase,
    judge_remove,
)
from judging.services import session_create
from tests import github_standin

CALLBACK = "/accounts/github/login/callback/"
KEEP = object()


@pytest.fixture(scope="session")
def _standin_server():
    standin, server = github_standin.start(settings.TEST_GITHUB_STANDIN_PORT)
    yield standin
    server.shutdown()
    server.server_close()


@pytest.fixture
def standin(_standin_server):
    _standin_server.requests.clear()
    yield _standin_server
    _standin_server.requests.clear()


def _via_github(standin, authorize_url: str) -> str:
    """What the browser does at GitHub: visit the authorize URL, get sent back (Location)."""
    parts = urlsplit(authorize_url)
    assert f"{parts.scheme}://{parts.netloc}" == standin.url
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        connection.request("GET", f"{parts.path}?{parts.query}")
        response = connection.getresponse()
        assert response.status == 302
        return response.getheader("Location")
    finally:
        connection.close()


def sign_in(client, standin, *, github_id, login, start_url, state=KEEP):
    """Start by POST, pass through the stand-in, come back to the callback (optionally with another
    `state`, or none). Returns (callback response, session key before the callback)."""
    standin.user = {"id": github_id, "login": login, "name": "Secret Name",
                    "email": f"{login}@example.com", "bio": "secret bio"}
    start = client.post(start_url)
    assert start.status_code == 302
    back = urlsplit(_via_github(standin, start["Location"]))
    assert back.path == CALLBACK
    query = {key: values[0] for key, values in parse_qs(back.query).items()}
    if state is None:
        query.pop("state")
    elif state is not KEEP:
        query["state"] = state
    key_before = client.session.session_key
    return client.get(back.path, query), key_before


def start_url(session):
    return reverse("github_judge_start", kwargs={"url_id": session.url_id})


def join_url(session):
    return reverse("github_judge_done", kwargs={"url_id": session.url_id})


HOST_START = "/accounts/host-github/"


def listed(session, login="octocat"):
    return invitation_create(session=session, actor="test", github_login=login).invitation


def test_start_page_is_a_post_form_to_itself_and_the_same_for_any_session(client, open_session):
    for url_id in (open_session.url_id, "nosuchsession"):
        response = client.get(reverse("github_judge_start", kwargs={"url_id": url_id}))
        page = response.content.decode()
        assert response.status_code == 200
        assert '<form method="post">' in page and "csrfmiddlewaretoken" in page
        assert "/accounts/" not in page and url_id not in page
        assert open_session.run.name not in page
        # The form is answered by a redirect to GitHub, which `form-action` must allow here.
        csp = dict(d.strip().split(" ", 1) for d in response["Content-Security-Policy"].split(";"))
        github = settings.SOCIALACCOUNT_PROVIDERS["github"]["GITHUB_URL"]
        assert csp["form-action"].split() == ["'self'", github]
    # Elsewhere, GitHub is in no directive (the site's own ws:// origin is, in connect-src).
    guest_csp = dict(d.strip().split(" ", 1)
                     for d in client.get("/guest/")["Content-Security-Policy"].split(";"))
    assert not [d for d, sources in guest_csp.items() if github in sources.split()]
    assert guest_csp["form-action"].split() == ["'self'"]


def test_done_pages_without_github_sign_in(client, open_session):
    assert client.get(join_url(open_session)).status_code == 404
    assert client.get(reverse("github_host_done"))["Location"] == HOST_START


def test_listed_login_gets_in_as_invited_github_judge(client, standin, open_session):
    invitation = listed(open_session, "OctoCat")
    callback, key_before = sign_in(client, standin, github_id=583231, login="octocat",
                                   start_url=start_url(open_session))
    assert (callback.status_code, callback["Location"]) == (302, join_url(open_session))
    assert client.session.session_key != key_before  # threat 17: the key rotates at sign-in
    key_signed_in = client.session.session_key
    done = client.get(callback["Location"])
    assert done.status_code == 302
    assert done["Location"] == reverse("judge_welcome", kwargs={"url_id": open_session.url_id})
    assert client.session.session_key != key_signed_in  # and again when the judge is bound
    judge = Judge.objects.get(session=open_session)
    user = SocialAccount.objects.get(provider="github", uid="583231").user
    assert user.username == "octocat"
    assert (judge.admitted_as, judge.identified_by, judge.github_id, judge.github_login,
            judge.user, judge.status, judge.display_name) == (
        AdmittedAs.INVITED, IdentifiedBy.GITHUB, 583231, "octocat", user, JudgeStatus.ACTIVE, "")
    invitation.refresh_from_db()
    assert invitation.judge == judge
    assert client.get(done["Location"]).status_code == 200
    assert client.get(reverse("judge_home", kwargs={"url_id": open_session.url_id})).status_code == 200
    # Nobody new became a host (alice, who owns the run, is the only one); no GitHub token kept.
    assert list(Host.objects.values_list("user__username", flat=True)) == ["alice"]
    assert not SocialToken.objects.exists()
    # Only the id and login are kept: not the name (nor e-mail) the profile also carried.
    assert SocialAccount.objects.get().uid == "583231"
    assert SocialAccount.objects.get().extra_data == {"id": 583231, "login": "octocat"}
    assert (user.first_name, user.last_name, user.email) == ("", "", "")
    assert not EmailAddress.objects.exists()


def test_standin_saw_exactly_authorize_token_and_profile_with_empty_scope(client, standin,
                                                                          open_session):
    listed(open_session)
    sign_in(client, standin, github_id=7, login="octocat", start_url=start_url(open_session))
    assert standin.paths() == ["GET /login/oauth/authorize", "POST /login/oauth/access_token",
                               "GET /api/v3/user"]
    authorize, token, profile = standin.requests
    assert authorize.query["scope"] == [""]
    assert authorize.query["client_id"] == ["test-client-id"]
    assert authorize.query["redirect_uri"] == [f"http://testserver{CALLBACK}"]
    assert authorize.query["response_type"] == ["code"]
    assert token.body["code"] == ["standin-code"]
    assert profile.authorization == f"token {github_standin.ACCESS_TOKEN}"
    assert profile.query == {} and profile.body == {}


def test_unlisted_login_does_not_get_in_and_learns_nothing(client, standin, open_session):
    listed(open_session, "octocat")
    callback, _ = sign_in(client, standin, github_id=99, login="mallory",
                          start_url=start_url(open_session))
    page = callback.content.decode()
    assert callback.status_code == 200  # allauth's "sign-up closed" page
    assert "closed" in page.lower()
    for secret in (open_session.url_id, open_session.run.name, open_session.rubric, "octocat"):
        assert secret not in page
    assert list(get_user_model().objects.values_list("username", flat=True)) == ["alice"]
    assert not SocialAccount.objects.exists()
    assert not Judge.objects.exists()
    assert "_auth_user_id" not in client.session


def test_signed_in_but_unlisted_for_this_session_is_refused_plainly(client, standin, open_session):
    listed(open_session, "octocat")  # octocat has an account: they are listed elsewhere
    other = session_create(run=open_session.run, kind="copies", actor="test",
                           rubric="A secret rubric").session
    callback, _ = sign_in(client, standin, github_id=5, login="octocat", start_url=start_url(other))
    done = client.get(callback["Location"])
    assert done.status_code == 403  # `other` is a draft: not open, not listed
    page = done.content.decode()
    assert GITHUB_REFUSAL in page
    for secret in (other.url_id, other.run.name, other.rubric, "draft"):
        assert secret not in page
    # An unknown session answers exactly the same.
    unknown = client.get("/github/join/nosuchsession/done/")
    assert (unknown.status_code, GITHUB_REFUSAL in unknown.content.decode()) == (403, True)
    assert not Judge.objects.exists()


def test_renamed_login_maps_to_the_same_judge(client, standin, open_session):
    listed(open_session, "octocat")
    callback, _ = sign_in(client, standin, github_id=42, login="octocat",
                          start_url=start_url(open_session))
    client.get(callback["Location"])
    judge = Judge.objects.get()

    browser = Client()
    callback, _ = sign_in(browser, standin, github_id=42, login="octo-renamed",
                          start_url=start_url(open_session))
    done = browser.get(callback["Location"])
    assert (done.status_code, done["Location"]) == (
        302, reverse("judge_home", kwargs={"url_id": open_session.url_id}))
    assert Judge.objects.get() == judge
    judge.refresh_from_db()
    assert (judge.github_id, judge.github_login) == (42, "octo-renamed")
    assert SocialAccount.objects.get().extra_data == {"id": 42, "login": "octo-renamed"}
    assert browser.get(done["Location"]).status_code == 200


def test_someone_else_taking_the_listed_login_is_refused(client, standin, open_session):
    listed(open_session, "octocat")
    callback, _ = sign_in(client, standin, github_id=42, login="octocat",
                          start_url=start_url(open_session))
    client.get(callback["Location"])
    # octocat renamed away; a different GitHub account now holds the listed login.
    browser = Client()
    callback, _ = sign_in(browser, standin, github_id=43, login="octocat",
                          start_url=start_url(open_session))
    done = browser.get(callback["Location"])
    assert (done.status_code, GITHUB_REFUSAL in done.content.decode()) == (403, True)
    assert Judge.objects.count() == 1


@pytest.mark.parametrize("state", [None, "forged-state"])
def test_missing_or_wrong_state_creates_no_session(client, standin, open_session, state):
    listed(open_session)
    callback, _ = sign_in(client, standin, github_id=7, login="octocat",
                          start_url=start_url(open_session), state=state)
    assert callback.status_code == 401  # allauth's authentication error page
    assert "_auth_user_id" not in client.session
    assert list(get_user_model().objects.values_list("username", flat=True)) == ["alice"]
    assert not Judge.objects.exists()
    assert standin.paths() == ["GET /login/oauth/authorize"]  # no code exchange was attempted
    assert client.get(join_url(open_session)).status_code == 404


def test_sign_in_started_by_get_does_not_proceed(client, standin, open_session):
    listed(open_session)
    ours = client.get(start_url(open_session))  # our page: only the button
    allauths = client.get(f"/accounts/github/login/?process=login&next={join_url(open_session)}")
    for response in (ours, allauths):
        assert response.status_code == 200
        assert 'method="post"' in response.content.decode()
        assert standin.url not in response.content.decode()
    assert standin.requests == []
    assert "_auth_user_id" not in client.session
    # Without the CSRF token, the POST does not start it either.
    strict = Client(enforce_csrf_checks=True)
    assert strict.post(start_url(open_session)).status_code == 403
    assert standin.requests == []


def test_removed_github_judge_is_not_readmitted(client, standin, open_session):
    listed(open_session)
    callback, _ = sign_in(client, standin, github_id=42, login="octocat",
                          start_url=start_url(open_session))
    client.get(callback["Location"])
    judge = judge_remove(judge=Judge.objects.get(), actor="test")
    assert client.get(reverse("judge_home", kwargs={"url_id": open_session.url_id})).status_code == 404

    browser = Client()
    callback, _ = sign_in(browser, standin, github_id=42, login="octocat",
                          start_url=start_url(open_session))
    done = browser.get(callback["Location"])
    assert (done.status_code, GITHUB_REFUSAL in done.content.decode()) == (403, True)
    assert list(Judge.objects.all()) == [judge]
    assert Judge.objects.get().status == JudgeStatus.REMOVED


def test_erasure_clears_github_id_and_login(client, standin, open_session):
    listed(open_session)
    callback, _ = sign_in(client, standin, github_id=42, login="octocat",
                          start_url=start_url(open_session))
    client.get(callback["Location"])
    judge = judge_erase(judge=Judge.objects.get(), actor="test")
    judge.refresh_from_db()
    assert (judge.github_id, judge.github_login, judge.user) == (None, "", None)
    assert Invitation.objects.get().github_login == ""
    # The account GitHub sign-in made for them held the id and login too: it is gone.
    assert not SocialAccount.objects.exists()
    assert list(get_user_model().objects.values_list("username", flat=True)) == ["alice"]


@override_settings(BLINDJUDGE_HOST_GITHUB_ALLOWLIST=["hostess"])
def test_allowlisted_login_becomes_a_host(client, standin, db):
    callback, _ = sign_in(client, standin, github_id=1000, login="Hostess",
                          start_url=HOST_START)
    assert callback["Location"] == reverse("github_host_done")
    done = client.get(callback["Location"])
    assert (done.status_code, done["Location"]) == (302, reverse("host:runs"))
    host = Host.objects.get()
    assert SocialAccount.objects.get(user=host.user).uid == "1000"
    assert client.get(reverse("host:runs")).status_code == 200


@override_settings(BLINDJUDGE_HOST_GITHUB_ALLOWLIST=["hostess"])
def test_other_logins_do_not_become_hosts(client, standin, open_session):
    # Not listed anywhere: no account at all.
    callback, _ = sign_in(client, standin, github_id=1001, login="mallory",
                          start_url=HOST_START)
    assert callback.status_code == 200 and "closed" in callback.content.decode().lower()
    # Listed as a judge (so they have an account), but not on the hosts' allowlist.
    listed(open_session, "octocat")
    browser = Client()
    callback, _ = sign_in(browser, standin, github_id=1002, login="octocat",
                          start_url=HOST_START)
    done = browser.get(callback["Location"])
    assert done.status_code == 403
    assert list(Host.objects.values_list("user__username", flat=True)) == ["alice"]
    assert "_auth_user_id" not in browser.session
    assert browser.get(reverse("host:runs")).status_code == 302  # to sign-in


def test_threat_17_session_key_changes_at_github_sign_in_and_at_binding(client, standin, open_session):
    listed(open_session)
    client.get(start_url(open_session))
    planted = client.session.session_key or ""
    callback, key_before = sign_in(client, standin, github_id=42, login="octocat",
                                   start_url=start_url(open_session))
    signed_in = client.session.session_key
    assert "_auth_user_id" in client.session
    assert signed_in not in (planted, key_before)
    client.get(callback["Location"])
    assert client.session.session_key not in (planted, key_before, signed_in)


def test_threat_19_no_next_travels_through_the_browser(client, standin, open_session):
    listed(open_session)
    standin.user = {"id": 42, "login": "octocat"}
    start = client.post(start_url(open_session) + "?next=//evil.example/", {"next": "https:evil"})
    back = urlsplit(_via_github(standin, start["Location"]))
    callback = client.get(back.path, {k: v[0] for k, v in parse_qs(back.query).items()})
    assert callback["Location"] == join_url(open_session)
