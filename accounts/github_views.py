"""Sign-in with GitHub for judges and hosts (issue 4).

The sign-in itself is allauth's. Our start pages show a button that POSTs (with the CSRF token) to
the page itself, which starts allauth's GitHub sign-in exactly as a POST to
/accounts/github/login/ would, with the page to come back to fixed here (no `next` travels
through the browser). allauth then checks `state`, exchanges the code, fetches the public profile
and rotates the session key when it logs the person in. The "done" pages, where allauth sends the
person back, decide through the services what the GitHub account may do here.
"""

from allauth.socialaccount.adapter import get_adapter
from allauth.socialaccount.models import SocialAccount
from allauth.socialaccount.providers.base import AuthProcess
from csp.decorators import csp_update
from django.conf import settings
from django.contrib.auth import logout
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods

from accounts.guards import remember_judge
from accounts.services import (
    GITHUB_REFUSAL,
    HOST_GITHUB_REFUSAL,
    Admission,
    github_judge_join,
    host_from_github,
)
from blindjudge.errors import Refused
from judging.judge_views import _admit as admitted_response
from judging.models import Session

# The start pages' form is answered by a redirect to GitHub; browsers apply `form-action` to it.
GITHUB_WEB_URL = settings.SOCIALACCOUNT_PROVIDERS["github"].get(
    "GITHUB_URL", "https://github.com").rstrip("/")
allow_github_form_redirect = csp_update({"form-action": [GITHUB_WEB_URL]})


def _start_github_sign_in(request, next_url: str):
    """What allauth's /accounts/github/login/ does on POST: stash a fresh `state` in the session
    and send the browser to GitHub's authorize page (no scope: public profile only)."""
    provider = get_adapter().get_provider(request, "github")
    return provider.redirect(request, process=AuthProcess.LOGIN, next_url=next_url)


def _github_account(request) -> SocialAccount | None:
    if not request.user.is_authenticated:
        return None
    return SocialAccount.objects.filter(user=request.user, provider="github").first()


def _github_identity(account: SocialAccount) -> tuple[int, str]:
    try:
        github_id = int(account.uid)
    except (TypeError, ValueError):
        github_id = 0
    return github_id, str((account.extra_data or {}).get("login") or "")


@never_cache
@allow_github_form_redirect
@require_http_methods(["GET", "POST"])
def judge_start(request, url_id):
    """The same page for every URL id: it must not tell whether a session exists."""
    if request.method == "POST":
        return _start_github_sign_in(request, reverse("github_judge_done", kwargs={"url_id": url_id}))
    return render(request, "accounts/github_judge.html")


@never_cache
@require_GET
def judge_done(request, url_id):
    account = _github_account(request)
    if account is None:
        raise Http404("not signed in with GitHub")
    github_id, login = _github_identity(account)
    session = Session.objects.filter(url_id=url_id).first()
    if session is None:
        raise Refused(GITHUB_REFUSAL)
    outcome = github_judge_join(session=session, github_id=github_id, github_login=login,
                                user=request.user)
    if isinstance(outcome, Admission):
        return admitted_response(request, outcome)
    remember_judge(request, outcome)
    return redirect("judge_home", url_id=url_id)


@never_cache
@allow_github_form_redirect
@require_http_methods(["GET", "POST"])
def host_start(request):
    if request.method == "POST":
        return _start_github_sign_in(request, reverse("github_host_done"))
    return render(request, "accounts/github_host.html")


@never_cache
@require_GET
def host_done(request):
    account = _github_account(request)
    if account is None:
        return redirect("github_host_start")
    _, login = _github_identity(account)
    try:
        host_from_github(user=request.user, github_login=login)
    except Refused:
        logout(request)  # a GitHub account that may not host keeps no signed-in session here
        raise Refused(HOST_GITHUB_REFUSAL) from None
    return redirect("host:runs")
