"""The host's pages (all under /host/). Every view starts with the host guard.

Ids in these paths are the host's own run and session numbers; the views fetch them through the
host selectors, so another host's id is the same 404 as one that does not exist.
"""

from django.urls import path

from host.views import (
    account,
    blinding,
    instructions,
    invitations,
    judges,
    reports,
    runs,
    sessions,
)

app_name = "host"

urlpatterns = [
    path("", runs.runs, name="runs"),
    path("runs/import", runs.run_import_view, name="run_import"),
    path("runs/<int:run_id>/", runs.run_detail, name="run"),
    path("runs/<int:run_id>/reviews", runs.run_reviews, name="run_reviews"),
    path("runs/<int:run_id>/sessions/new", runs.session_create_view, name="session_create"),
    path("runs/<int:run_id>/pairs-planner", runs.pairs_planner, name="pairs_planner"),
    path("runs/<int:run_id>/copies/<int:position>/truth", runs.truth_correct_view,
         {"kind": "copy"}, name="copy_truth"),
    path("runs/<int:run_id>/findings/<int:position>/truth", runs.truth_correct_view,
         {"kind": "finding"}, name="finding_truth"),
    path("sessions/<int:session_id>/", sessions.session_detail, name="session"),
    path("sessions/<int:session_id>/edit", sessions.session_edit, name="session_edit"),
    path("sessions/<int:session_id>/open", sessions.session_open_view, name="session_open"),
    path("sessions/<int:session_id>/opening", sessions.session_opening, name="session_opening"),
    path("sessions/<int:session_id>/close", sessions.session_close_view, name="session_close"),
    path("sessions/<int:session_id>/reopen", sessions.session_reopen_view, name="session_reopen"),
    path("sessions/<int:session_id>/reveal", sessions.session_reveal_view, name="session_reveal"),
    path("sessions/<int:session_id>/amend", sessions.prereg_amend_view, name="prereg_amend"),
    path("sessions/<int:session_id>/instructions", instructions.instructions,
         name="instructions"),
    path("sessions/<int:session_id>/blinding", blinding.blinding, name="blinding"),
    path("sessions/<int:session_id>/redactions", blinding.redactions, name="redactions"),
    path("sessions/<int:session_id>/planner", blinding.planner, name="planner"),
    path("sessions/<int:session_id>/invitations", invitations.invitations, name="invitations"),
    path("sessions/<int:session_id>/invitations/name", invitations.invite_name, name="invite_name"),
    path("sessions/<int:session_id>/invitations/github", invitations.invite_github,
         name="invite_github"),
    path("sessions/<int:session_id>/invitations/list", invitations.invite_list, name="invite_list"),
    path("sessions/<int:session_id>/invitations/links.csv", invitations.join_links_download,
         name="join_links_download"),
    path("sessions/<int:session_id>/invitations/<int:invitation_id>/reissue",
         invitations.invitation_reissue, name="invitation_reissue"),
    path("sessions/<int:session_id>/guests", invitations.guests, name="guests"),
    path("sessions/<int:session_id>/judges", judges.judges, name="judges"),
    path("sessions/<int:session_id>/judges/self", judges.host_join_view, name="host_join"),
    path("sessions/<int:session_id>/judges/<int:number>/reissue", judges.judge_reissue,
         name="judge_reissue"),
    path("sessions/<int:session_id>/judges/<int:number>/remove", judges.judge_remove_view,
         name="judge_remove"),
    path("sessions/<int:session_id>/judges/<int:number>/erase", judges.judge_erase_view,
         name="judge_erase"),
    path("sessions/<int:session_id>/report/<str:fmt>", reports.report_download, name="report"),
]

# The host's account and GitHub sign-in, outside the "host" namespace (their names are older).
account_urlpatterns = [
    path("accounts/host-github/", account.host_start, name="github_host_start"),
    path("accounts/host-github/done/", account.host_done, name="github_host_done"),
    path("host/account/", account.host_account, name="host_account"),
    path("host/account/github/link/", account.host_link_start, name="host_github_link"),
    path("host/account/github/link/done/", account.host_link_done, name="host_github_link_done"),
    path("host/account/github/unlink/", account.host_unlink, name="host_github_unlink"),
]
