"""The judge's pages. No sequential id anywhere: sessions by their random URL id, items by the
judge's own codes, judges by the server-side session only."""

from django.urls import path

from judge import github, instructions, preview, views

urlpatterns = [
    path("join/<str:token>", views.join, name="join"),
    path("resume/", views.resume_help, name="resume_help"),
    path("resume/<str:token>", views.resume, name="resume"),
    path("guest/", views.guest, name="guest"),
    path("s/<str:url_id>/", views.session_home, name="judge_home"),
    path("s/<str:url_id>/welcome/", views.welcome, name="judge_welcome"),
    path("s/<str:url_id>/instructions", instructions.instructions, name="judge_instructions"),
    path("s/<str:url_id>/i/<str:code>/", views.item, name="judge_item"),
    path("s/<str:url_id>/i/<str:code>/frame", views.frame, name="judge_frame"),
    path("s/<str:url_id>/i/<str:code>/flag", views.task_flag, name="judge_task_flag"),
    path("s/<str:url_id>/lock/", views.lock, name="judge_lock"),
    path("s/<str:url_id>/resume-link/", views.reissue, name="judge_reissue"),
    path("s/<str:url_id>/scorecard/", views.scorecard, name="judge_scorecard"),
    path("s/<str:url_id>/card/<str:code>/", views.card, name="judge_card"),
    path("s/<str:url_id>/card/<str:code>/frame", views.card_frame, name="judge_card_frame"),
    path("github/join/<str:url_id>/", github.judge_start, name="github_judge_start"),
    path("github/join/<str:url_id>/done/", github.judge_done, name="github_judge_done"),
    path("s/<str:url_id>/github/link/", github.judge_link_start, name="github_judge_link"),
    path("s/<str:url_id>/github/link/done/", github.judge_link_done, name="github_judge_link_done"),
]

# A host's preview of these pages (judge/preview.py), mounted under /host/sessions/<id>/preview/
# by blindjudge/urls.py: host-guarded, storing nothing.
preview_urlpatterns = [
    path("", preview.start, name="preview_start"),
    path("<str:seed>/<int:phase>/", preview.home, name="preview_home"),
    path("<str:seed>/<int:phase>/welcome/", preview.welcome, name="preview_welcome"),
    path("<str:seed>/<int:phase>/instructions", preview.instructions, name="preview_instructions"),
    path("<str:seed>/<int:phase>/i/<str:code>/", preview.item, name="preview_item"),
    path("<str:seed>/<int:phase>/i/<str:code>/frame", preview.frame, name="preview_frame"),
    path("<str:seed>/<int:phase>/i/<str:code>/flag", preview.task_flag, name="preview_task_flag"),
    path("<str:seed>/<int:phase>/review/", preview.review, name="preview_review"),
]
