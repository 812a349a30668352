"""The report names each judge by how they were admitted and identified: GitHub judges by their
login, token judges by name, guests by the name they typed; the anonymised export names nobody.
The GitHub judge signs in through the whole OAuth dance against the local stand-in."""

import re

from judging.services import guest_join, guests_configure, host_join, judge_remove
from reports.build import build_report
from reports.export import anonymise, to_csv, to_json
from reports.html import to_html
from tests.worlds import a_github_judge, advance, invite_and_join


def test_report_names_github_judges_by_login_and_groups_by_admission_and_identity(standin,
                                                                                  open_session):
    a_github_judge(open_session, standin, login="octocat", github_id=42)
    invite_and_join(open_session, name="Tokenia")
    code = guests_configure(session=open_session, actor="test", allow=True).guest_code
    guest_join(code=code, display_name="Guesty", client_address="203.0.113.5")
    session = advance(open_session, "revealed")

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
    assert "by GitHub sign-in" in html

    published = anonymise(report)
    for text in (to_json(published).decode(), to_csv(published), to_html(published)):
        for secret in ("octocat", "Tokenia", "Guesty"):
            assert secret not in text


def who_judged(html: str) -> list[tuple[str, ...]]:
    """The rows of the HTML report's "Who judged" table: group, how they joined, count, who."""
    start = html.index("<h3>Who judged</h3>")
    table = html[start:html.index("</table>", start)]
    return re.findall(r'<tr><td>([^<]*)</td><td>([^<]*)</td><td class="n">(\d+)</td><td>([^<]*)</td>',
                      table)


def test_who_judged_says_how_each_judge_joined(standin, open_session, host):
    """It gave one text, "by join link, guest code or host account", for invited judges, guests
    and the host alike (issue 28, Also): each row now says how its judges joined, from what the
    judge's record holds (admitted as, identified by)."""
    a_github_judge(open_session, standin, login="octocat", github_id=42)
    invite_and_join(open_session, name="Tokenia")
    code = guests_configure(session=open_session, actor="test", allow=True).guest_code
    guest_join(code=code, display_name="Guesty", client_address="203.0.113.5")
    host_join(session=open_session, host=host)
    gone = invite_and_join(open_session, name="Gone").judge
    judge_remove(judge=gone, actor="test")
    html = to_html(build_report(advance(open_session, "revealed")))
    assert who_judged(html) == [
        ("Invited", "by a single-use join link", "1", "J02 Tokenia"),
        ("Invited", "by GitHub sign-in (a login the host listed, or a join link, then GitHub)",
         "1", "J01 @octocat"),
        ("Guests", "with the session&#x27;s guest code", "1", "J03 Guesty"),
        ("The host (self-blinded)", "as the session&#x27;s host, from their host account", "1",
         "J04 alice"),
        ("Removed", "by a single-use join link", "1", "J05 Gone"),
    ]
