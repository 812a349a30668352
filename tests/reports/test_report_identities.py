"""The report names each judge by how they were admitted and identified: GitHub judges by their
login, token judges by name, guests by the name they typed; the anonymised export names nobody.
The GitHub judge signs in through the whole OAuth dance against the local stand-in."""

from django.test import Client

from judging.services import guest_join, guests_configure, session_close, session_reveal
from reports.build import build_report
from reports.export import anonymise, to_csv, to_json
from reports.html import to_html
from tests.judge.test_github import listed, start_url, token_judge
from tests.support import github_standin

sign_in = github_standin.sign_in


# --- The report: judges by admission and identity -------------------------------------------------

def test_report_names_github_judges_by_login_and_groups_by_admission_and_identity(client, standin,
                                                                                  open_session):
    listed(open_session, "octocat")
    callback, _ = sign_in(client, standin, github_id=42, login="octocat",
                          start_url=start_url(open_session))
    client.post(callback["Location"])
    token_judge(Client(), open_session, name="Tokenia")
    code = guests_configure(session=open_session, actor="test", allow=True).guest_code
    guest_join(code=code, display_name="Guesty", client_address="203.0.113.5")
    session_close(session=open_session, actor="test")
    session = session_reveal(session=open_session, actor="test")

    report = build_report(session)
    people = {j["pseudonym"]: (j["name"], j["github_login"], j["admitted_as"], j["identified_by"],
                               j["group"]) for j in report["judges"]}
    assert people == {
        "J01": ("octocat", "octocat", "invited", "github", "invited"),
        "J02": ("Tokenia", None, "invited", "token", "invited"),
        "J03": ("Guesty", None, "guest", "token", "guest"),
    }
    assert report["sample"]["achieved"]["judges_by_group_and_identity"] == {
        "invited": {"github": 1, "token": 1}, "guest": {"token": 1}}
    html = to_html(report)
    assert "J01 @octocat" in html and "J02 Tokenia" in html and "J03 Guesty" in html
    assert "signed in with GitHub" in html

    published = anonymise(report)
    for text in (to_json(published).decode(), to_csv(published), to_html(published)):
        for secret in ("octocat", "Tokenia", "Guesty"):
            assert secret not in text
