"""The host's account: signing in as a host with GitHub (allowlisted logins), and linking or
unlinking GitHub on the account page. Linking verifies the GitHub account with allauth's REDIRECT
process, which logs nobody in (accounts.adapters.verified_github_identity).

Sign-out and the password change are allauth's, mounted here (blindjudge/urls.py) behind a first
step of ours: the account's host dashboard sockets are closed (judging.services.host_sockets_close)
before allauth signs the browser out or changes the password.
"""

from allauth.account.views import LogoutView, PasswordChangeView
from allauth.socialaccount.providers.base import AuthProcess
from django.contrib import messages
from django.contrib.auth import logout
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods

from accounts.adapters import forget_verified_github_identity, verified_github_identity
from accounts.github import github_account, github_identity, github_sign_in_page, start_github_sign_in
from accounts.guards import host_required
from blindjudge.errors import Refused, ServiceError
from host.views.common import SeeOther
from judging.services import (
    HOST_GITHUB_REFUSAL,
    host_from_github,
    host_github_link,
    host_github_unlink,
    host_sockets_close,
)


@never_cache
@github_sign_in_page
def host_start(request):
    if request.method == "POST":
        return start_github_sign_in(request, reverse("github_host_done"))
    return render(request, "accounts/github_host.html")


@never_cache
@require_GET
def host_done(request):
    account = github_account(request)
    if account is None:
        return redirect("github_host_start")
    _, login = github_identity(account)
    try:
        host_from_github(user=request.user, github_login=login)
    except Refused:
        logout(request)  # a GitHub account that may not host keeps no signed-in session here
        raise Refused(HOST_GITHUB_REFUSAL) from None
    return redirect("host:runs")


def _host_account_page(request, *, status=200, error=None, verified=None):
    account = github_account(request)
    return render(request, "accounts/host_account.html", {
        "github_login": github_identity(account)[1] if account else None,
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
@github_sign_in_page
def host_link_start(request):
    if request.method == "POST":
        return start_github_sign_in(request, reverse("host_github_link_done"),
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


class SignOut(LogoutView):
    """allauth's sign-out (GET: a page with the button; POST: signs out), the account's host
    sockets closed first."""
    def post(self, *args, **kwargs):
        if self.request.user.is_authenticated:
            host_sockets_close(user_id=self.request.user.pk)
        return super().post(*args, **kwargs)


sign_out = never_cache(SignOut.as_view())


class HostPasswordChange(PasswordChangeView):
    """allauth's password change (the current password, then the new one twice, checked by the
    password validators); when it is accepted, the host's sockets are closed first. The browser
    that changed it stays signed in; every other browser is signed out at its next request."""
    def form_valid(self, form):
        host_sockets_close(user_id=self.request.user.pk)
        return super().form_valid(form)


_password_change = HostPasswordChange.as_view()


@never_cache
@host_required
@require_http_methods(["GET", "POST"])
def password_change(request):
    if not request.user.has_usable_password():
        # allauth would send a GitHub-only account to its "set a password" page, not mounted here.
        messages.info(request, "Your account signs in with GitHub and has no password to change.")
        return redirect("host_account")
    return _password_change(request)
