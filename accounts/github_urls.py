"""GitHub sign-in pages; allauth's own views stay under /accounts/."""

from django.urls import path

from accounts import github_views as views

urlpatterns = [
    path("github/join/<str:url_id>/", views.judge_start, name="github_judge_start"),
    path("github/join/<str:url_id>/done/", views.judge_done, name="github_judge_done"),
    path("accounts/host-github/", views.host_start, name="github_host_start"),
    path("accounts/host-github/done/", views.host_done, name="github_host_done"),
]
