"""Sign-in with GitHub for judges and hosts, and linking GitHub to a token judge or a host.

The sign-in itself is allauth's. Our start pages show a button that POSTs (with the CSRF token) to
the page itself, which starts allauth's GitHub sign-in exactly as a POST to
/accounts/github/login/ would, with the page to come back to fixed here (no `next` travels
through the browser). allauth then checks `state`, exchanges the code, fetches the public profile
and rotates the session key when it logs the person in.

- Joining: allauth logs the person in and sends them to a "done" page, which only shows who they
  are signed in as; its button POSTs, and the services decide what that GitHub account may do.
- Linking: allauth's REDIRECT process verifies the GitHub account without logging anyone in (the
  browser keeps the judge or host it already holds); our adapter keeps what GitHub vouched for in
  the session (accounts.adapters.verified_github_identity) and the confirming page POSTs it to the
  service.
"""

from functools import wraps

from allauth.socialaccount.adapter import get_adapter
from allauth.socialaccount.models import SocialAccount
from allauth.socialaccount.providers.base import AuthProcess
from csp.decorators import csp_update
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import logout
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods

from accounts.adapters import forget_verified_github_identity, verified_github_identity
from accounts.context import github_sign_in_enabled
from accounts.guards import host_required, judge_required, remember_judge
from blindjudge.errors import Refused, ServiceError
from judging.host_views import SeeOther
from judging.judge_views import _admit as admitted_response
from judging.models import Session
from judging.services import (
    GITHUB_REFUSAL,
    HOST_GITHUB_REFUSAL,
    Admission,
    github_judge_join,
    host_from_github,
    host_github_link,
    host_github_unlink,
    judge_github_link,
)

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


def _start_github_sign_in(request, next_url: str, process=AuthProcess.LOGIN):
    """What allauth's /accounts/github/login/ does on POST: stash a fresh `state` in the session
    and send the browser to GitHub's authorize page (no scope: public profile only)."""
    provider = get_adapter().get_provider(request, "github")
    return provider.redirect(request, process=process, next_url=next_url)


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


# --- Judges: joining --------------------------------------------------------------------------

@github_configured
@never_cache
@allow_github_form_redirect
@require_http_methods(["GET", "POST"])
def judge_start(request, url_id):
    """The same page for every URL id: it must not tell whether a session exists."""
    if request.method == "POST":
        return _start_github_sign_in(request, reverse("github_judge_done", kwargs={"url_id": url_id}))
    return render(request, "accounts/github_judge.html")


@never_cache
@require_http_methods(["GET", "POST"])
def judge_done(request, url_id):
    """GET (where allauth sends the person back) only shows who they are signed in as, the same
    for every URL id; the button POSTs, and only the POST admits or resumes."""
    account = _github_account(request)
    if account is None:
        raise Http404("not signed in with GitHub")
    github_id, login = _github_identity(account)
    if request.method == "GET":
        return render(request, "accounts/github_judge_done.html", {"login": login})
    session = Session.objects.filter(url_id=url_id).first()
    if session is None:
        raise Refused(GITHUB_REFUSAL)
    outcome = github_judge_join(session=session, github_id=github_id, github_login=login,
                                user=request.user)
    if isinstance(outcome, Admission):
        return admitted_response(request, outcome)
    remember_judge(request, outcome)
    return redirect("judge_home", url_id=url_id)


# --- Judges: linking GitHub to a token judge ---------------------------------------------------

@never_cache
@judge_required
@github_configured
@allow_github_form_redirect
@require_http_methods(["GET", "POST"])
def judge_link_start(request, url_id):
    judge = request.judge
    if request.method == "POST":
        return _start_github_sign_in(
            request, reverse("github_judge_link_done", kwargs={"url_id": url_id}),
            process=AuthProcess.REDIRECT)
    return render(request, "accounts/github_judge_link.html", {"judge": judge,
                                                               "session": judge.session})


@never_cache
@judge_required
@require_http_methods(["GET", "POST"])
def judge_link_done(request, url_id):
    judge = request.judge
    verified = verified_github_identity(request)
    if verified is None:
        messages.info(request, "GitHub sign-in did not complete; nothing was linked.")
        return redirect("judge_home", url_id=url_id)
    if request.method == "GET":
        return render(request, "accounts/github_judge_link_done.html", {
            "judge": judge, "session": judge.session, "login": verified["login"]})
    try:
        linked = judge_github_link(judge=judge, github_id=verified["id"],
                                   github_login=verified["login"])
    except ServiceError as error:
        forget_verified_github_identity(request)
        return render(request, "accounts/github_judge_link_done.html", {
            "judge": judge, "session": judge.session, "error": error.message},
            status=error.status)
    forget_verified_github_identity(request)
    remember_judge(request, linked.judge)
    messages.success(request, f"Linked to GitHub as @{verified['login']}. You can now come back "
                              "by signing in with GitHub, as well as with your resume link.")
    return redirect("judge_home", url_id=url_id)


# --- Hosts -------------------------------------------------------------------------------------

@github_configured
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


def _host_account_page(request, *, status=200, error=None, verified=None):
    account = _github_account(request)
    return render(request, "accounts/host_account.html", {
        "github_login": _github_identity(account)[1] if account else None,
        "has_password": request.user.has_usable_password(),
        "verified": verified, "error": error,
    }, status=status)


@never_cache
@host_required
@require_GET
def host_account(request):
    return _host_account_page(request)


@never_cache
@host_required
@github_configured
@allow_github_form_redirect
@require_http_methods(["GET", "POST"])
def host_link_start(request):
    if request.method == "POST":
        return _start_github_sign_in(request, reverse("host_github_link_done"),
                                     process=AuthProcess.REDIRECT)
    return render(request, "accounts/host_github_link.html")


@never_cache
@host_required
@require_http_methods(["GET", "POST"])
def host_link_done(request):
    verified = verified_github_identity(request)
    if verified is None:
        messages.info(request, "GitHub sign-in did not complete; nothing was linked.")
        return redirect("host_account")
    if request.method == "GET":
        return _host_account_page(request, verified=verified)
    forget_verified_github_identity(request)
    try:
        host_github_link(host=request.host, github_id=verified["id"], github_login=verified["login"])
    except ServiceError as error:
        return _host_account_page(request, status=error.status, error=error.message)
    messages.success(request, f"GitHub account @{verified['login']} linked: you can sign in with it.")
    return SeeOther(reverse("host_account"))


@never_cache
@host_required
@require_http_methods(["POST"])
def host_unlink(request):
    try:
        host_github_unlink(host=request.host)
    except ServiceError as error:
        return _host_account_page(request, status=error.status, error=error.message)
    messages.success(request, "GitHub account unlinked.")
    return SeeOther(reverse("host_account"))


