"""The site's URLs: the judge's pages at the root, the host's under /host/, allauth's under
/accounts/. Only this module and blindjudge/routing.py import the page packages (host, judge)."""

from django.urls import include, path

from host.urls import account_urlpatterns
from judge import views as judge_views

urlpatterns = [
    path("", judge_views.home, name="home"),
    path("", include("judge.urls")),
    path("host/", include("host.urls")),
    path("", include(account_urlpatterns)),
    path("accounts/", include("allauth.urls")),
]

# Error answers: the usual pages, or JSON for a request that asks for it (blindjudge/errors.py).
handler400 = "blindjudge.errors.bad_request"
handler403 = "blindjudge.errors.permission_denied"
handler404 = "blindjudge.errors.page_not_found"
handler500 = "blindjudge.errors.server_error"
