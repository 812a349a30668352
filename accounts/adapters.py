"""allauth adapters: nobody signs up by themselves. Hosts are created with `createhost`; GitHub
sign-in opens only where a login is listed: on the hosts' allowlist here, or invited to judge an
open session (judge.adapters, the adapter in settings; accounts sits below the judging domain and
never imports it)."""

import time

from allauth.account.adapter import DefaultAccountAdapter
from allauth.account.utils import user_username
from allauth.socialaccount.adapter import DefaultSocialAccountAdapter
from allauth.socialaccount.providers.base import AuthProcess
from django.conf import settings
from django.core.exceptions import ValidationError
from django.shortcuts import render
from django.urls import reverse

from accounts import throttle

# Where a "verify only" GitHub sign-in (linking an identity, below) leaves what GitHub vouched for.
VERIFIED_GITHUB_KEY = "github:verified"
VERIFIED_GITHUB_SECONDS = 600


def client_address(request) -> str:
    """The client's address as the server reports it (behind nginx, Uvicorn takes it from
    X-Forwarded-For, trusted from nginx only: deploy/serve)."""
    return request.META.get("REMOTE_ADDR", "")


class ClosedSignupAccountAdapter(DefaultAccountAdapter):
    """Host sign-in's rules: nobody signs up; wrong passwords are counted in the database every
    process shares (accounts.throttle), not in allauth's per-process memory (its own login limits
    are off in settings)."""

    def is_open_for_signup(self, request):
        return False

    def authenticate(self, request, **credentials):
        """A sign-in is counted before it is decided and before its password is hashed
        (accounts.throttle.sign_in_begin): as a wrong password until it turns out right, and as
        one under way until it ends, so sign-ins sent at once are held to the limits too."""
        who = {"username": credentials.get("username", ""), "address": client_address(request)}
        refusal = throttle.sign_in_begin(**who)
        if refusal:
            raise ValidationError(refusal, code="too_many_login_attempts")
        try:
            user = super().authenticate(request, **credentials)
        finally:
            throttle.sign_in_end(**who)
        if user is not None:
            throttle.sign_in_succeeded(**who)
        return user

    def authentication_failed(self, request, **credentials):
        throttle.sign_in_failed(username=credentials.get("username", ""),
                                address=client_address(request))

    def get_password_change_redirect_url(self, request):
        return reverse("host_account")

    def respond_user_inactive(self, request, user):
        """allauth's "account inactive" page is not mounted; nobody here is made inactive, but
        should someone be, they are told plainly."""
        return render(request, "error.html", {
            "status": 403, "message": "This account is disabled."}, status=403)

    def add_message(self, request, level, message_template=None, message_context=None,
                    extra_tags="", message=None):
        """No "Successfully signed in as …" banner: a judge signing in with GitHub goes on to a
        page that says who they are, and a pending banner would make the next page, a 404
        included, differ from everyone else's."""
        if message_template == "account/messages/logged_in.txt":
            return
        super().add_message(request, level, message_template, message_context, extra_tags, message)


def github_login_of(sociallogin) -> str:
    """The GitHub login of a sign-in in progress ("" when it is not a GitHub sign-in)."""
    account = sociallogin.account
    if account.provider != "github":
        return ""
    return str((account.extra_data or {}).get("login") or "")


def github_id_of(sociallogin) -> int | None:
    try:
        return int(sociallogin.account.uid)
    except (TypeError, ValueError):
        return None


def github_login_is_listed(login: str, github_id: int | None = None) -> bool:
    """On the hosts' allowlist. Judges' logins are the judging domain's to list: see
    judge.adapters, which extends the sign-up adapter below with them."""
    login = login.strip().lower()
    return bool(login) and login in settings.BLINDJUDGE_HOST_GITHUB_ALLOWLIST


def verified_github_identity(request) -> dict | None:
    """What a verify-only GitHub sign-in vouched for in this browser within the last ten minutes:
    {"id": int, "login": str}, or None."""
    verified = request.session.get(VERIFIED_GITHUB_KEY)
    if not verified or time.time() - verified.get("at", 0) > VERIFIED_GITHUB_SECONDS:
        return None
    return {"id": verified["id"], "login": verified["login"]}


def forget_verified_github_identity(request) -> None:
    request.session.pop(VERIFIED_GITHUB_KEY, None)


class ListedGitHubSocialAccountAdapter(DefaultSocialAccountAdapter):
    """A first GitHub sign-in creates an account only for a listed login (`is_listed`); everyone
    else sees allauth's "sign-up closed" page. Whether a signed-in person may judge a given
    session or host is decided afterwards by the services, never here. No token is kept
    (SOCIALACCOUNT_STORE_TOKENS is off)."""

    def is_open_for_signup(self, request, sociallogin):
        return self.is_listed(github_login_of(sociallogin), github_id_of(sociallogin))

    def is_listed(self, login: str, github_id: int | None) -> bool:
        return github_login_is_listed(login, github_id)

    def pre_social_login(self, request, sociallogin):
        """A sign-in started with allauth's
        REDIRECT process (our "link GitHub" buttons) logs nobody in and saves nothing: allauth has
        checked `state`, exchanged the code and fetched the profile, and we keep in this browser's
        session what GitHub vouched for, for the page that asked (see verified_github_identity)."""
        if sociallogin.state.get("process") == AuthProcess.REDIRECT:
            github_id, login = github_id_of(sociallogin), github_login_of(sociallogin)
            if sociallogin.account.provider == "github" and github_id and login:
                request.session[VERIFIED_GITHUB_KEY] = {"id": github_id, "login": login,
                                                        "at": time.time()}

    def populate_user(self, request, sociallogin, data):
        """Keep GitHub's numeric id and login only: no name, e-mail address or other profile field
        reaches the database (this runs before allauth looks up, saves or updates the account)."""
        profile = sociallogin.account.extra_data or {}
        sociallogin.account.extra_data = {"id": profile.get("id"), "login": profile.get("login")}
        sociallogin.email_addresses = []
        user = sociallogin.user
        user_username(user, data.get("username") or "")
        return user
