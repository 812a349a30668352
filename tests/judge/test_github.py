"""A judge and GitHub (issue 4): joining a session by a listed login, and linking GitHub to a
token judge, each a full OAuth dance against a local stand-in for GitHub. (A host and GitHub:
tests/host/test_host_github.py; how the report names GitHub judges:
tests/reports/test_report_identities.py.)

docs/threats.md cases 17 (session key changes at sign-in) and 18 (missing or wrong `state`, or a
sign-in started by GET, gives no session) each have their own tests here.
"""

from urllib.parse import parse_qs, urlsplit

import pytest
from allauth.account.models import EmailAddress
from allauth.socialaccount.models import SocialAccount, SocialToken
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client, override_settings
from django.urls import reverse

from accounts.enums import AdmittedAs, IdentifiedBy, JudgeStatus
from accounts.models import Host, Invitation, Judge
from judging.services import (
    GITHUB_REFUSAL,
    LINK_BOTH_HOLD_VERDICTS,
    invitation_create,
    judge_erase,
    judge_remove,
    resume_token_reissue,
    session_create,
)
from tests.support import github_standin
from tests.support.verdicts import verdict_record
from tests.worlds import a_github_judge, client_as

CALLBACK = github_standin.CALLBACK
sign_in = github_standin.sign_in
_via_github = github_standin.via_github


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
    done = client.post(callback["Location"])
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
    done = client.post(callback["Location"])
    assert done.status_code == 403  # `other` is a draft: not open, not listed
    page = done.content.decode()
    assert GITHUB_REFUSAL in page
    for secret in (other.url_id, other.run.name, other.rubric, "draft"):
        assert secret not in page
    # An unknown session answers exactly the same.
    unknown = client.post("/github/join/nosuchsession/done/")
    assert (unknown.status_code, GITHUB_REFUSAL in unknown.content.decode()) == (403, True)
    assert not Judge.objects.exists()


def test_renamed_login_maps_to_the_same_judge(standin, open_session, github_judge):
    judge = github_judge  # octocat, GitHub id 42

    browser = Client()
    callback, _ = sign_in(browser, standin, github_id=42, login="octo-renamed",
                          start_url=start_url(open_session))
    done = browser.post(callback["Location"])
    assert (done.status_code, done["Location"]) == (
        302, reverse("judge_home", kwargs={"url_id": open_session.url_id}))
    assert Judge.objects.get() == judge
    judge.refresh_from_db()
    assert (judge.github_id, judge.github_login) == (42, "octo-renamed")
    assert SocialAccount.objects.get().extra_data == {"id": 42, "login": "octo-renamed"}
    assert browser.get(done["Location"]).status_code == 200


def test_someone_else_taking_the_listed_login_is_refused(standin, open_session, github_judge):
    # octocat (GitHub id 42) judges, then renamed away; a different GitHub account now holds the
    # listed login.
    browser = Client()
    callback, _ = sign_in(browser, standin, github_id=43, login="octocat",
                          start_url=start_url(open_session))
    done = browser.post(callback["Location"])
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


def test_threat_20_removed_github_judge_stops_at_once_and_is_not_readmitted(client, standin, open_session):
    github_judge = a_github_judge(open_session, standin, client=client)  # signed in in this browser
    code = github_judge.assignments.first().code
    judge = judge_remove(judge=github_judge, actor="test")
    # Threat 20: every page of theirs stops at once.
    url_id = open_session.url_id
    for path in (f"/s/{url_id}/", f"/s/{url_id}/welcome/", f"/s/{url_id}/i/{code}/",
                 f"/s/{url_id}/i/{code}/frame", f"/s/{url_id}/lock/", f"/s/{url_id}/github/link/"):
        assert client.get(path).status_code == 404, path
    assert client.post(f"/s/{url_id}/i/{code}/", {"verdict": "pass"}).status_code == 404

    browser = Client()
    callback, _ = sign_in(browser, standin, github_id=42, login="octocat",
                          start_url=start_url(open_session))
    done = browser.post(callback["Location"])
    assert (done.status_code, GITHUB_REFUSAL in done.content.decode()) == (403, True)
    assert list(Judge.objects.all()) == [judge]
    assert Judge.objects.get().status == JudgeStatus.REMOVED


def test_erasure_clears_github_id_and_login(github_judge):
    judge = judge_erase(judge=github_judge, actor="test")
    judge.refresh_from_db()
    assert (judge.github_id, judge.github_login, judge.user) == (None, "", None)
    assert Invitation.objects.get().github_login == ""
    # The account GitHub sign-in made for them held the id and login too: it is gone.
    assert not SocialAccount.objects.exists()
    assert list(get_user_model().objects.values_list("username", flat=True)) == ["alice"]


def test_threat_17_session_key_changes_at_github_sign_in_and_at_binding(client, standin, open_session):
    listed(open_session)
    client.get(start_url(open_session))
    planted = client.session.session_key or ""
    callback, key_before = sign_in(client, standin, github_id=42, login="octocat",
                                   start_url=start_url(open_session))
    signed_in = client.session.session_key
    assert "_auth_user_id" in client.session
    assert signed_in not in (planted, key_before)
    client.post(callback["Location"])
    assert client.session.session_key not in (planted, key_before, signed_in)


def test_threat_19_no_next_travels_through_the_browser(client, standin, open_session):
    listed(open_session)
    standin.user = {"id": 42, "login": "octocat"}
    start = client.post(start_url(open_session) + "?next=//evil.example/", {"next": "https:evil"})
    back = urlsplit(_via_github(standin, start["Location"]))
    callback = client.get(back.path, {k: v[0] for k, v in parse_qs(back.query).items()})
    assert callback["Location"] == join_url(open_session)


# --- The "done" page confirms by POST --------------------------------------------------------------

def test_done_page_get_only_shows_who_is_signed_in_and_admits_nobody(client, standin, open_session):
    listed(open_session)
    callback, _ = sign_in(client, standin, github_id=42, login="octocat",
                          start_url=start_url(open_session))
    for url_id in (open_session.url_id, "nosuchsession"):
        page = client.get(reverse("github_judge_done", kwargs={"url_id": url_id}))
        text = page.content.decode()
        assert page.status_code == 200
        assert "@octocat" in text and '<form method="post">' in text
        for secret in (open_session.url_id, open_session.run.name, open_session.rubric):
            assert secret not in text
    assert not Judge.objects.exists()
    assert client.post(callback["Location"]).status_code == 302
    assert Judge.objects.count() == 1


# --- Linking GitHub to a token judge --------------------------------------------------------------

def link_url(session):
    return reverse("github_judge_link", kwargs={"url_id": session.url_id})


def link_done_url(session):
    return reverse("github_judge_link_done", kwargs={"url_id": session.url_id})


def verify_on_github(client, standin, session, *, github_id, login):
    """The judge's link button: a GitHub round trip that logs nobody in."""
    callback, _ = sign_in(client, standin, github_id=github_id, login=login,
                          start_url=link_url(session))
    assert (callback.status_code, callback["Location"]) == (302, link_done_url(session))
    assert "_auth_user_id" not in client.session  # verified, not signed in
    return callback


def first_code(judge):
    return judge.assignments.order_by("position").first().code


def test_token_judge_links_github_and_comes_back_with_it(standin, open_session, invited_judge):
    judge, client = invited_judge, client_as(invited_judge)
    home = client.get(reverse("judge_home", kwargs={"url_id": open_session.url_id})).content.decode()
    assert link_url(open_session) in home
    verify_on_github(client, standin, open_session, github_id=777, login="tokenia-gh")
    assert standin.paths() == ["GET /login/oauth/authorize", "POST /login/oauth/access_token",
                               "GET /api/v3/user"]
    assert standin.requests[0].query["scope"] == [""]
    confirm = client.get(link_done_url(open_session))
    assert confirm.status_code == 200 and "@tokenia-gh" in confirm.content.decode()
    judge.refresh_from_db()
    assert (judge.github_id, judge.identified_by) == (None, IdentifiedBy.TOKEN)  # GET changes nothing

    linked = client.post(link_done_url(open_session))
    assert linked["Location"] == reverse("judge_home", kwargs={"url_id": open_session.url_id})
    judge.refresh_from_db()
    assert (judge.github_id, judge.github_login, judge.identified_by, judge.admitted_as) == (
        777, "tokenia-gh", IdentifiedBy.GITHUB, AdmittedAs.INVITED)
    assert not SocialAccount.objects.exists()  # linking kept no GitHub account, nor any token
    assert not SocialToken.objects.exists()
    # The verified identity was used up: the confirm page now sends the judge home.
    assert client.post(link_done_url(open_session))["Location"].endswith(f"/s/{open_session.url_id}/")

    # On another device, with no invitation for this login: GitHub sign-in finds the same judge.
    device = Client()
    callback, _ = sign_in(device, standin, github_id=777, login="tokenia-renamed",
                          start_url=start_url(open_session))
    back = device.post(callback["Location"])
    assert back["Location"] == reverse("judge_home", kwargs={"url_id": open_session.url_id})
    assert device.get(back["Location"]).status_code == 200
    judge.refresh_from_db()
    assert Judge.objects.count() == 1
    assert (judge.github_login, judge.user) == (
        "tokenia-renamed", SocialAccount.objects.get(uid="777").user)


def test_a_reissue_drops_a_github_account_linked_with_the_old_link_and_ends_its_sessions(
        standin, open_session, invited_judge):
    """Case 37 by the GitHub door: whoever held a leaked resume link could link their own GitHub
    account and come back with it after the host's reissue. The reissue drops a GitHub account
    linked later (and ends the browser it signed in); the judge links again with the new link."""
    judge, leaked = invited_judge, client_as(invited_judge)
    verify_on_github(leaked, standin, open_session, github_id=666, login="mallory-gh")
    assert leaked.post(link_done_url(open_session)).status_code == 302
    signed_in = Client()
    callback, _ = sign_in(signed_in, standin, github_id=666, login="mallory-gh",
                          start_url=start_url(open_session))
    assert signed_in.post(callback["Location"]).status_code == 302
    home = reverse("judge_home", kwargs={"url_id": open_session.url_id})
    assert signed_in.get(home).status_code == 200

    new_token = resume_token_reissue(judge=judge, actor="test")

    judge.refresh_from_db()
    assert (judge.github_id, judge.github_login, judge.identified_by, judge.user) == (
        None, "", IdentifiedBy.TOKEN, None)
    for browser in (leaked, signed_in):
        assert browser.get(home).status_code == 404
    again = Client()
    callback, _ = sign_in(again, standin, github_id=666, login="mallory-gh",
                          start_url=start_url(open_session))
    refused = again.post(callback["Location"])
    assert (refused.status_code, GITHUB_REFUSAL in refused.content.decode()) == (403, True)
    # The judge, back with the new link, may link their own account.
    back = Client()
    assert back.post(f"/resume/{new_token}").status_code == 302
    assert back.get(home).status_code == 200


def test_a_reissue_keeps_the_github_login_the_host_listed_and_ends_its_open_sessions(
        client, standin, open_session):
    judge = a_github_judge(open_session, standin, client=client)
    home = reverse("judge_home", kwargs={"url_id": open_session.url_id})
    assert client.get(home).status_code == 200
    resume_token_reissue(judge=judge, actor="test")
    assert client.get(home).status_code == 404  # this browser's session ended too
    judge.refresh_from_db()
    assert (judge.github_id, judge.identified_by) == (42, IdentifiedBy.GITHUB)
    device = Client()
    callback, _ = sign_in(device, standin, github_id=42, login="octocat",
                          start_url=start_url(open_session))
    assert device.post(callback["Location"])["Location"] == home  # signing in again admits
    assert device.get(home).status_code == 200


def test_link_without_a_github_round_trip_links_nothing(standin, open_session, invited_judge):
    judge, client = invited_judge, client_as(invited_judge)
    assert client.post(link_done_url(open_session))["Location"].endswith(f"/s/{open_session.url_id}/")
    # A forged or missing `state` on the way back verifies nothing either.
    callback, _ = sign_in(client, standin, github_id=777, login="x", start_url=link_url(open_session),
                          state="forged")
    assert callback.status_code == 401
    client.post(link_done_url(open_session))
    judge.refresh_from_db()
    assert judge.github_id is None and judge.identified_by == IdentifiedBy.TOKEN


def test_link_pages_are_the_judges_alone(standin, open_session, invited_judge):
    for path in (link_url(open_session), link_done_url(open_session)):
        assert Client().get(path).status_code == 404
        assert Client().post(path).status_code == 404
    assert standin.requests == []


def test_linking_is_refused_when_both_identities_hold_verdicts(standin, open_session, github_judge,
                                                               invited_judge):
    verdict_record(judge=github_judge, code=first_code(github_judge), phase=1, value="pass")
    judge, client = invited_judge, client_as(invited_judge)
    verdict_record(judge=judge, code=first_code(judge), phase=1, value="fail")

    verify_on_github(client, standin, open_session, github_id=42, login="octocat")
    refused = client.post(link_done_url(open_session))
    assert refused.status_code == 409
    assert LINK_BOTH_HOLD_VERDICTS in refused.content.decode()
    judge.refresh_from_db()
    github_judge.refresh_from_db()
    assert (judge.github_id, judge.status) == (None, JudgeStatus.ACTIVE)
    assert (github_judge.github_id, github_judge.status) == (42, JudgeStatus.ACTIVE)


def test_linking_joins_two_judges_of_one_person_when_one_has_no_verdicts(standin, open_session,
                                                                          github_judge, invited_judge):
    gh_user = github_judge.user
    judge, client = invited_judge, client_as(invited_judge)
    verdict_record(judge=judge, code=first_code(judge), phase=1, value="fail")

    verify_on_github(client, standin, open_session, github_id=42, login="octocat")
    assert client.post(link_done_url(open_session)).status_code == 302
    judge.refresh_from_db()
    github_judge.refresh_from_db()
    # The judge with verdicts continues, bound to GitHub and to the GitHub account's user.
    assert (judge.status, judge.github_id, judge.identified_by, judge.user) == (
        JudgeStatus.ACTIVE, 42, IdentifiedBy.GITHUB, gh_user)
    assert (github_judge.status, github_judge.github_id, github_judge.user) == (
        JudgeStatus.REMOVED, None, None)
    assert client.get(reverse("judge_home", kwargs={"url_id": open_session.url_id})).status_code == 200


def test_linking_continues_as_the_github_judge_when_only_it_has_verdicts(standin, open_session,
                                                                          github_judge, invited_judge):
    verdict_record(judge=github_judge, code=first_code(github_judge), phase=1, value="pass")
    judge, client = invited_judge, client_as(invited_judge)
    verify_on_github(client, standin, open_session, github_id=42, login="octocat")
    assert client.post(link_done_url(open_session)).status_code == 302
    judge.refresh_from_db()
    assert judge.status == JudgeStatus.REMOVED
    # This browser now holds the GitHub judge: its items, with its verdict, are the ones shown.
    home = client.get(reverse("judge_home", kwargs={"url_id": open_session.url_id})).content.decode()
    assert f"/i/{first_code(github_judge)}/" in home
    assert "1 of" in home


# --- Installations without a GitHub OAuth app -------------------------------------------------

def test_without_an_oauth_app_the_start_pages_say_so(client, host, open_session):
    providers = {"github": {**settings.SOCIALACCOUNT_PROVIDERS["github"],
                            "APP": {"client_id": "", "secret": ""}}}
    with override_settings(SOCIALACCOUNT_PROVIDERS=providers):
        for path in (start_url(open_session), HOST_START):
            for response in (client.get(path), client.post(path)):
                assert response.status_code == 404
                assert "GitHub sign-in is not set up" in response.content.decode()
        client.force_login(host.user)
        assert "not set up" in client.get("/host/account/").content.decode()
        assert "sign in with GitHub" not in client.get("/accounts/login/").content.decode()
    client.logout()
    assert "sign in with GitHub" in client.get("/accounts/login/").content.decode()
