"""The site's URLs: the judge's pages at the root, the host's under /host/, sign-in under
/accounts/. Only this module and blindjudge/routing.py import the page packages (host, judge).

Of allauth only the views the product uses are mounted (never `include("allauth.urls")`, which
adds sign-up, password reset by mail, email management, reauthentication and more); each is
listed with its reason in tests/test_accounts_urls.py, which fails on any other URL under
/accounts/. Nothing here can make the server send mail.
"""

from allauth.account import views as allauth_account
from allauth.socialaccount import views as allauth_social
from django.conf import settings
from django.http import HttpResponse
from django.urls import include, path
from django.views.decorators.cache import cache_control

from accounts.github import allauth_github_callback, allauth_github_login
from host.urls import account_urlpatterns
from host.views import account as host_account
from judge import views as judge_views
from judge.urls import preview_urlpatterns

allauth_urlpatterns = [
    path("login/", allauth_account.login, name="account_login"),
    path("logout/", host_account.sign_out, name="account_logout"),
    path("password/change/", host_account.password_change, name="account_change_password"),
    path("github/login/", allauth_github_login, name="github_login"),
    path("github/login/callback/", allauth_github_callback, name="github_callback"),
    path("3rdparty/login/cancelled/", allauth_social.login_cancelled,
         name="socialaccount_login_cancelled"),
]


@cache_control(max_age=86400, public=True)
def favicon(request):
    # The same bytes as static/favicon.svg (which pages link to), answered here for the browsers
    # that ask /favicon.ico by themselves: a 200, so no page logs a 404 and no crawl a redirect.
    icon = (settings.BASE_DIR / "static" / "favicon.svg").read_bytes()
    return HttpResponse(icon, content_type="image/svg+xml")


urlpatterns = [
    # Browsers ask for /favicon.ico whatever the page links to (e.g. for a JSON answer or a
    # download): the redirect keeps that from logging a 404.
    path("favicon.ico", favicon, name="favicon"),
    path("", judge_views.home, name="home"),
    path("", include("judge.urls")),
    # The host's preview of the judge's pages: the judge's views, host-guarded (judge/preview.py).
    path("host/sessions/<int:session_id>/preview/", include(preview_urlpatterns)),
    path("host/", include("host.urls")),
    path("", include(account_urlpatterns)),
    path("accounts/", include(allauth_urlpatterns)),
]

# Error answers: the usual pages, or JSON for a request that asks for it (blindjudge/errors.py).
handler400 = "blindjudge.errors.bad_request"
handler403 = "blindjudge.errors.permission_denied"
handler404 = "blindjudge.errors.page_not_found"
handler500 = "blindjudge.errors.server_error"
