"""The host's pages (all under /host/). Every view starts with the host guard.

Ids in these paths are the host's own run and session numbers; the views fetch them through the
host selectors, so another host's id is the same 404 as one that does not exist.
"""

from django.urls import path

from judging import host_views as views

app_name = "host"

urlpatterns = [
    path("", views.runs, name="runs"),
    path("runs/import", views.run_import_view, name="run_import"),
    path("runs/<int:run_id>/", views.run_detail, name="run"),
    path("runs/<int:run_id>/sessions/new", views.session_create_view, name="session_create"),
    path("runs/<int:run_id>/copies/<int:position>/truth", views.truth_correct_view,
         {"kind": "copy"}, name="copy_truth"),
    path("runs/<int:run_id>/findings/<int:position>/truth", views.truth_correct_view,
         {"kind": "finding"}, name="finding_truth"),
    path("sessions/<int:session_id>/", views.session_detail, name="session"),
    path("sessions/<int:session_id>/edit", views.session_edit, name="session_edit"),
    path("sessions/<int:session_id>/open", views.session_open_view, name="session_open"),
    path("sessions/<int:session_id>/close", views.session_close_view, name="session_close"),
    path("sessions/<int:session_id>/reopen", views.session_reopen_view, name="session_reopen"),
    path("sessions/<int:session_id>/reveal", views.session_reveal_view, name="session_reveal"),
    path("sessions/<int:session_id>/amend", views.prereg_amend_view, name="prereg_amend"),
    path("sessions/<int:session_id>/blinding", views.blinding, name="blinding"),
    path("sessions/<int:session_id>/redactions", views.redactions, name="redactions"),
    path("sessions/<int:session_id>/planner", views.planner, name="planner"),
    path("sessions/<int:session_id>/invitations", views.invitations, name="invitations"),
    path("sessions/<int:session_id>/invitations/name", views.invite_name, name="invite_name"),
    path("sessions/<int:session_id>/invitations/github", views.invite_github,
         name="invite_github"),
    path("sessions/<int:session_id>/guests", views.guests, name="guests"),
    path("sessions/<int:session_id>/judges", views.judges, name="judges"),
    path("sessions/<int:session_id>/judges/self", views.host_join_view, name="host_join"),
    path("sessions/<int:session_id>/judges/<int:number>/reissue", views.judge_reissue,
         name="judge_reissue"),
    path("sessions/<int:session_id>/judges/<int:number>/remove", views.judge_remove_view,
         name="judge_remove"),
    path("sessions/<int:session_id>/judges/<int:number>/erase", views.judge_erase_view,
         name="judge_erase"),
    path("sessions/<int:session_id>/report/<str:fmt>", views.report_download, name="report"),
]
