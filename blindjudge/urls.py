from django.urls import include, path

from judging import judge_views

urlpatterns = [
    path("", judge_views.home, name="home"),
    path("", include("judging.judge_urls")),
    path("host/", include("judging.host_urls")),
    path("", include("accounts.github_urls")),
    path("accounts/", include("allauth.urls")),
]
