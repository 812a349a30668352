"""Of allauth, only what the product uses is mounted (docs/threats.md case 38: nothing can make
the server send mail). Every URL under /accounts/ is listed here with the reason it is there; a URL
mounted without a reason (a new allauth release, an `include`) fails the first test.
"""

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.urls import URLResolver, get_resolver

from accounts.models import Host

# URL name → why it is mounted.
MOUNTED = {
    "account_login": "hosts sign in with their password (templates/account/login.html)",
    "account_logout": "the sign-out button on every host page (templates/host/base.html); ours, "
                      "closes the host's sockets first (host.views.account.sign_out)",
    "account_change_password": "a host changes their password from their account page; ours, "
                               "closes the host's sockets first (host.views.account.password_change)",
    "github_login": "allauth's own GitHub start page; 404 'not set up' without an OAuth app",
    "github_callback": "where GitHub sends the browser back; the OAuth app's callback URL",
    "socialaccount_login_cancelled": "where allauth sends a sign-in cancelled at GitHub",
    "github_host_start": "hosts sign in with GitHub (ours: host.views.account.host_start)",
    "github_host_done": "where a host's GitHub sign-in lands (ours)",
}


def every_url(resolver=None, base: str = ""):
    """(path pattern, name) of every URL the site resolves, walking the resolver tree."""
    for entry in (resolver or get_resolver()).url_patterns:
        path = base + str(entry.pattern).lstrip("^").rstrip("$")
        if isinstance(entry, URLResolver):
            yield from every_url(entry, path)
        else:
            yield path, entry.name


def test_every_url_under_accounts_is_listed_with_its_reason():
    mounted = {path: name for path, name in every_url() if path.startswith("accounts/")}
    unknown = {path: name for path, name in mounted.items() if name not in MOUNTED}
    assert not unknown, f"mounted under /accounts/ without a reason in MOUNTED: {unknown}"
    assert sorted(mounted.values()) == sorted(MOUNTED), "a listed URL is no longer mounted"


@pytest.mark.parametrize("path", [
    "/accounts/password/reset/", "/accounts/password/reset/done/",
    "/accounts/password/reset/key/1-set-password/", "/accounts/email/", "/accounts/signup/",
    "/accounts/confirm-email/", "/accounts/password/set/", "/accounts/reauthenticate/",
    "/accounts/inactive/", "/accounts/3rdparty/", "/accounts/3rdparty/signup/",
    "/accounts/social/connections/", "/accounts/login/code/confirm/",
])
@pytest.mark.django_db
def test_what_could_send_mail_or_manage_email_is_not_mounted(client, path):
    """Before, POST /accounts/password/reset/ answered 500 (allauth tried SMTP on localhost:25)
    and a host could add an address at /accounts/email/, to be reset by mail."""
    Host.objects.create(user=get_user_model().objects.create_user(
        "alice", password="correct horse battery"))
    for method in (client.get, client.post):
        assert method(path, {"email": "victim@example.org"}).status_code == 404, path
    client.login(username="alice", password="correct horse battery")
    for method in (client.get, client.post):
        response = method(path, {"email": "victim@example.org", "action_add": ""})
        assert response.status_code == 404, path
    assert mail.outbox == []



@pytest.mark.django_db
def test_without_an_oauth_app_allauths_github_pages_say_not_set_up_like_ours(client, settings):
    """As the project's own GitHub pages (tests/judge/test_github.py): the same 404 page, not
    allauth's error (before: a server error on POST, the app being missing)."""
    settings.SOCIALACCOUNT_PROVIDERS = {"github": {**settings.SOCIALACCOUNT_PROVIDERS["github"],
                                                   "APP": {"client_id": "", "secret": ""}}}
    ours = client.get("/accounts/host-github/")
    assert ours.status_code == 404
    for response in (client.post("/accounts/github/login/"), client.get("/accounts/github/login/"),
                     client.post("/accounts/github/login/", {"process": "login"}),
                     client.get("/accounts/github/login/callback/?code=x&state=y")):
        assert response.status_code == 404
        assert response.content == ours.content


@pytest.mark.django_db
def test_allauths_github_page_starts_only_a_sign_in(client):
    """allauth's "connect" process would link a GitHub account to whoever is signed in, outside
    host_github_link's checks: refused, and nothing is sent to GitHub."""
    for process in ("connect", "redirect"):
        response = client.post("/accounts/github/login/", {"process": process})
        assert response.status_code == 400
        assert "Only signing in with GitHub starts here." in response.content.decode()
    started = client.post("/accounts/github/login/")
    assert started.status_code == 302 and "/login/oauth/authorize?" in started["Location"]


@pytest.mark.django_db
def test_a_host_changes_their_password_from_their_account_page(client):
    user = get_user_model().objects.create_user("alice", password="correct horse battery")
    Host.objects.create(user=user)
    client.force_login(user)
    assert 'href="/accounts/password/change/"' in client.get("/host/account/").content.decode()
    page = client.get("/accounts/password/change/")
    assert page.status_code == 200 and 'name="oldpassword"' in page.content.decode()
    wrong = client.post("/accounts/password/change/", {
        "oldpassword": "not it", "password1": "a new long passphrase", "password2": "a new long passphrase"})
    assert wrong.status_code == 200 and "Please type your current password." in wrong.content.decode()
    done = client.post("/accounts/password/change/", {
        "oldpassword": "correct horse battery", "password1": "a new long passphrase",
        "password2": "a new long passphrase"})
    assert done.status_code == 302 and done["Location"] == "/host/account/"
    assert "Password successfully changed." in client.get("/host/account/").content.decode()
    user.refresh_from_db()
    assert user.check_password("a new long passphrase")
    assert client.get("/host/").status_code == 200  # this browser stays signed in
    assert client.get("/accounts/logout/").status_code == 200
    assert client.post("/accounts/logout/").status_code == 302
    assert client.get("/host/").status_code == 302


@pytest.mark.django_db
def test_a_github_only_host_is_told_there_is_no_password_to_change(client):
    user = get_user_model().objects.create_user("octo")  # no usable password
    Host.objects.create(user=user)
    client.force_login(user)
    response = client.get("/accounts/password/change/", follow=True)
    assert response.redirect_chain[-1][0] == "/host/account/"
    assert "has no password to change" in response.content.decode()
    assert "Change your password" not in response.content.decode()
