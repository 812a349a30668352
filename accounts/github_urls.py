"""GitHub sign-in and linking pages; allauth's own views stay under /accounts/."""

from django.urls import path

from accounts import github_views as views

urlpatterns = [
    path("github/join/<str:url_id>/", views.judge_start, name="github_judge_start"),
    path("github/join/<str:url_id>/done/", views.judge_done, name="github_judge_done"),
    path("s/<str:url_id>/github/link/", views.judge_link_start, name="github_judge_link"),
    path("s/<str:url_id>/github/link/done/", views.judge_link_done, name="github_judge_link_done"),
    path("accounts/host-github/", views.host_start, name="github_host_start"),
    path("accounts/host-github/done/", views.host_done, name="github_host_done"),
    path("host/account/", views.host_account, name="host_account"),
    path("host/account/github/link/", views.host_link_start, name="host_github_link"),
    path("host/account/github/link/done/", views.host_link_done, name="host_github_link_done"),
    path("host/account/github/unlink/", views.host_unlink, name="host_github_unlink"),
]
