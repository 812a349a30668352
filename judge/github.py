"""A judge and GitHub: joining a session by signing in with GitHub, and linking GitHub to a judge
who joined by link or guest code.

- Joining: allauth logs the person in and sends them to a "done" page, which only shows who they
  are signed in as; its button POSTs, and the services decide what that GitHub account may do.
- Linking: allauth's REDIRECT process verifies the GitHub account without logging anyone in (the
  browser keeps the judge it already holds); our adapter keeps what GitHub vouched for in the
  session (accounts.adapters.verified_github_identity) and the confirming page POSTs it to the
  service.
"""

from allauth.socialaccount.providers.base import AuthProcess
from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from accounts.adapters import forget_verified_github_identity, verified_github_identity
from accounts.github import github_account, github_identity, github_sign_in_page, start_github_sign_in
from accounts.guards import judge_required, remember_judge
from blindjudge.errors import ServiceError
from judge.views import show_admission
from judging.services import Admission, github_judge_join, judge_github_link


@never_cache
@github_sign_in_page
def judge_start(request, url_id):
    """The same page for every URL id: it must not tell whether a session exists."""
    if request.method == "POST":
        return start_github_sign_in(request, reverse("github_judge_done", kwargs={"url_id": url_id}))
    return render(request, "accounts/github_judge.html")


@never_cache
@require_http_methods(["GET", "POST"])
def judge_done(request, url_id):
    """GET (where allauth sends the person back) only shows who they are signed in as, the same
    for every URL id; the button POSTs, and only the POST admits or resumes."""
    account = github_account(request)
    if account is None:
        raise Http404("not signed in with GitHub")
    github_id, login = github_identity(account)
    if request.method == "GET":
        return render(request, "accounts/github_judge_done.html", {"login": login})
    outcome = github_judge_join(url_id=url_id, github_id=github_id, github_login=login,
                                user=request.user)
    if isinstance(outcome, Admission):
        return show_admission(request, outcome)
    remember_judge(request, outcome)
    return redirect("judge_home", url_id=url_id)


@never_cache
@judge_required
@github_sign_in_page
def judge_link_start(request, url_id):
    judge = request.judge
    if request.method == "POST":
        return start_github_sign_in(
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
