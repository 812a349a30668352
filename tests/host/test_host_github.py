"""A host and GitHub (issue 4): becoming a host by signing in with an allowlisted GitHub login, and
linking GitHub to a host account from its account page, through a full OAuth dance against the
local stand-in for GitHub (tests/support/github_standin.py)."""

from allauth.socialaccount.models import SocialAccount
from django.test import Client, override_settings
from django.urls import reverse

from accounts.models import Host
from judging.services import GITHUB_LINKED_ELSEWHERE, invitation_create
from tests.support import github_standin
from tests.worlds import client_as

sign_in = github_standin.sign_in

HOST_START = "/accounts/host-github/"


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
    invitation_create(session=open_session, actor="test", github_login="octocat")
    browser = Client()
    callback, _ = sign_in(browser, standin, github_id=1002, login="octocat",
                          start_url=HOST_START)
    done = browser.get(callback["Location"])
    assert done.status_code == 403
    assert list(Host.objects.values_list("user__username", flat=True)) == ["alice"]
    assert "_auth_user_id" not in browser.session
    assert browser.get(reverse("host:runs")).status_code == 302  # to sign-in


# --- Hosts linking GitHub from their account page ---------------------------------------------------

HOST_LINK = "/host/account/github/link/"
HOST_LINK_DONE = "/host/account/github/link/done/"


def test_host_links_github_then_signs_in_with_it_and_unlinks(client, standin, host):
    client.force_login(host.user)
    assert HOST_LINK in client.get("/host/account/").content.decode()
    callback, _ = sign_in(client, standin, github_id=9000, login="alice-gh", start_url=HOST_LINK)
    assert callback["Location"] == HOST_LINK_DONE
    assert client.session["_auth_user_id"] == str(host.user.pk)  # still alice: nobody new signed in
    assert "@alice-gh" in client.get(HOST_LINK_DONE).content.decode()
    assert not SocialAccount.objects.exists()
    linked = client.post(HOST_LINK_DONE)
    assert (linked.status_code, linked["Location"]) == (303, "/host/account/")
    account = SocialAccount.objects.get()
    assert (account.user, account.uid, account.extra_data) == (
        host.user, "9000", {"id": 9000, "login": "alice-gh"})

    # alice-gh is on no allowlist, yet signs in as alice now.
    browser = Client()
    callback, _ = sign_in(browser, standin, github_id=9000, login="alice-gh", start_url=HOST_START)
    done = browser.get(callback["Location"])
    assert done["Location"] == reverse("host:runs")
    assert browser.session["_auth_user_id"] == str(host.user.pk)

    assert client.post("/host/account/github/unlink/")["Location"] == "/host/account/"
    assert not SocialAccount.objects.exists()
    stranger = Client()
    callback, _ = sign_in(stranger, standin, github_id=9000, login="alice-gh", start_url=HOST_START)
    assert "closed" in callback.content.decode().lower()  # an unlisted GitHub account again
    assert "_auth_user_id" not in stranger.session


def test_host_cannot_link_a_github_account_that_belongs_to_a_judge(client, standin, host,
                                                                   github_judge):
    # octocat, GitHub id 42, judges alice's open session, signed in with GitHub.
    client.force_login(host.user)
    sign_in(client, standin, github_id=42, login="octocat", start_url=HOST_LINK)
    refused = client.post(HOST_LINK_DONE)
    assert refused.status_code == 409 and GITHUB_LINKED_ELSEWHERE in refused.content.decode()
    assert SocialAccount.objects.get().user.username == "octocat"


def test_host_without_a_password_cannot_unlink_github(client, standin, db):
    with override_settings(BLINDJUDGE_HOST_GITHUB_ALLOWLIST=["hostess"]):
        callback, _ = sign_in(client, standin, github_id=1000, login="hostess",
                              start_url=HOST_START)
        client.get(callback["Location"])
    refused = client.post("/host/account/github/unlink/")
    assert refused.status_code == 409 and "--set-password" in refused.content.decode()
    assert SocialAccount.objects.count() == 1


def test_link_pages_are_hosts_alone(standin, invited_judge):
    client = client_as(invited_judge)
    for path in ("/host/account/", HOST_LINK, HOST_LINK_DONE):
        assert client.get(path)["Location"].startswith("/accounts/login/")
    assert client.post("/host/account/github/unlink/")["Location"].startswith("/accounts/login/")
    assert standin.requests == []

