"""allauth adapters: nobody signs up by themselves. Hosts are created with `createhost`; GitHub
sign-in (issue 4) opens only where a login is listed."""

from allauth.account.adapter import DefaultAccountAdapter
from allauth.account.utils import user_username
from allauth.socialaccount.adapter import DefaultSocialAccountAdapter
from django.conf import settings

from accounts.models import Invitation
from judging.models import SessionState


class ClosedSignupAccountAdapter(DefaultAccountAdapter):
    def is_open_for_signup(self, request):
        return False


def github_login_of(sociallogin) -> str:
    """The GitHub login of a sign-in in progress ("" when it is not a GitHub sign-in)."""
    account = sociallogin.account
    if account.provider != "github":
        return ""
    return str((account.extra_data or {}).get("login") or "")


def github_login_is_listed(login: str) -> bool:
    """On the hosts' allowlist, or listed by a host for a session that is open now."""
    login = login.strip().lower()
    if not login:
        return False
    if login in settings.BLINDJUDGE_HOST_GITHUB_ALLOWLIST:
        return True
    return Invitation.objects.filter(
        github_login__iexact=login, session__state=SessionState.OPEN
    ).exists()


class ListedGitHubSocialAccountAdapter(DefaultSocialAccountAdapter):
    """A first GitHub sign-in creates an account only for a listed login (see above); everyone
    else sees allauth's "sign-up closed" page. Whether a signed-in person may judge a given session
    or host is decided afterwards by the services, never here. No token is kept
    (SOCIALACCOUNT_STORE_TOKENS is off)."""

    def is_open_for_signup(self, request, sociallogin):
        return github_login_is_listed(github_login_of(sociallogin))

    def populate_user(self, request, sociallogin, data):
        """Keep GitHub's numeric id and login only: no name, e-mail address or other profile field
        reaches the database (this runs before allauth saves or updates the account)."""
        profile = sociallogin.account.extra_data or {}
        sociallogin.account.extra_data = {"id": profile.get("id"), "login": profile.get("login")}
        sociallogin.email_addresses = []
        user = sociallogin.user
        user_username(user, data.get("username") or "")
        return user
