"""Starting allauth's GitHub sign-in from our own pages, and reading who GitHub vouched for.

The sign-in itself is allauth's. Our start pages show a button that POSTs (with the CSRF token) to
the page itself, which starts allauth's GitHub sign-in exactly as a POST to
/accounts/github/login/ would, with the page to come back to fixed here (no `next` travels
through the browser). allauth then checks `state`, exchanges the code, fetches the public profile
and rotates the session key when it logs the person in. The judge's GitHub pages are in
judge/github.py, the host's in host/views/account.py.
"""

from functools import wraps

from allauth.socialaccount.adapter import get_adapter
from allauth.socialaccount.models import SocialAccount
from allauth.socialaccount.providers.base import AuthProcess
from allauth.socialaccount.providers.github import views as allauth_github
from allauth.utils import get_request_param
from csp.decorators import csp_update
from django.conf import settings
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from accounts.context import github_sign_in_enabled

# The start pages' form is answered by a redirect to GitHub; browsers apply `form-action` to it.
GITHUB_WEB_URL = settings.SOCIALACCOUNT_PROVIDERS["github"].get(
    "GITHUB_URL", "https://github.com").rstrip("/")
allow_github_form_redirect = csp_update({"form-action": [GITHUB_WEB_URL]})


def github_configured(view):
    """The start pages answer plainly when this installation has no GitHub OAuth app."""
    @wraps(view)
    def checked(request, *args, **kwargs):
        if not github_sign_in_enabled():
            return render(request, "accounts/github_off.html", status=404)
        return view(request, *args, **kwargs)

    return checked


def github_sign_in_page(view):
    """A page that starts a GitHub sign-in: it answers plainly when GitHub is not set up, shows its
    button on GET and starts the sign-in on POST, whose answer, a redirect to GitHub, its form is
    allowed to follow."""
    return github_configured(allow_github_form_redirect(require_http_methods(["GET", "POST"])(view)))


def start_github_sign_in(request, next_url: str, process=AuthProcess.LOGIN):
    """What allauth's /accounts/github/login/ does on POST: stash a fresh `state` in the session
    and send the browser to GitHub's authorize page (no scope: public profile only)."""
    provider = get_adapter().get_provider(request, "github")
    return provider.redirect(request, process=process, next_url=next_url)


def github_account(request) -> SocialAccount | None:
    if not request.user.is_authenticated:
        return None
    return SocialAccount.objects.filter(user=request.user, provider="github").first()


def github_identity(account: SocialAccount) -> tuple[int, str]:
    try:
        github_id = int(account.uid)
    except (TypeError, ValueError):
        github_id = 0
    return github_id, str((account.extra_data or {}).get("login") or "")


@never_cache
@github_configured
@allow_github_form_redirect
def allauth_github_login(request, *args, **kwargs):
    """allauth's /accounts/github/login/ (GET: a page with a button; POST: off to GitHub), or the
    "not set up" page like ours. Only the sign-in process: allauth's "connect" process would link
    a GitHub account to the signed-in account outside host_github_link's checks, and its
    "redirect" process is for our own start pages (start_github_sign_in)."""
    if get_request_param(request, "process", AuthProcess.LOGIN) != AuthProcess.LOGIN:
        return render(request, "error.html", {
            "status": 400, "message": "Only signing in with GitHub starts here."}, status=400)
    return allauth_github.oauth2_login(request, *args, **kwargs)


@never_cache
@github_configured
def allauth_github_callback(request, *args, **kwargs):
    """allauth's callback from GitHub (checks `state`, exchanges the code, signs in), or the "not
    set up" page like ours."""
    return allauth_github.oauth2_callback(request, *args, **kwargs)
