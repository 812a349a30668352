"""Inviting a list at once (issue 17, item 1): the page and `invite --names-file --csv`.

The list is checked whole before anything is written (bad lines named by number, nothing created,
the text kept in the box); the join links come back once, as a CSV, from the page's one-time
download or the command's new 0600 file; a lost link is reissued in one click; the invited list
says who joined and when they were last active.
"""

import csv
import io
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from accounts.enums import CredentialKind
from accounts.models import Credential, Invitation
from blindjudge.errors import Conflict, Invalid, Refused
from judging.models import AuditEvent
from judging.services import (
    InvalidLines,
    invitation_link_reissue,
    invitations_create_bulk,
    join_links_issue,
    join_token_exchange,
)
from tests.support.verdicts import verdict_record
from tests.worlds import client_as, codes, invite_and_join

LIST = "Ann Lee\tbackend team\nBo Chen — frontend\n\nCara Diaz | on call\nDev Patel\n"


def url(name, **kwargs):
    return reverse(f"host:{name}", kwargs=kwargs)


def token_of(link: str) -> str:
    return link.rsplit("/join/", 1)[1]


def rows_of(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


# --- The service ---------------------------------------------------------------------------------

@pytest.mark.django_db
def test_a_list_is_invited_in_order_with_its_notes(open_session):
    invited = invitations_create_bulk(session=open_session, actor="test", text=LIST)
    assert [(i.invitation.name, i.invitation.note) for i in invited] == [
        ("Ann Lee", "backend team"), ("Bo Chen", "frontend"), ("Cara Diaz", "on call"),
        ("Dev Patel", "")]
    # Only hashes are stored; each token admits its invitee.
    assert not Credential.objects.filter(token_sha256=invited[0].join_token).exists()
    admission = join_token_exchange(token=invited[1].join_token)
    assert admission.judge.display_name == "Bo Chen"
    assert AuditEvent.objects.filter(action="judge.invited").count() == 4
    assert not any("Ann" in str(e.details) for e in AuditEvent.objects.all())


@pytest.mark.django_db
def test_every_bad_line_is_named_and_nothing_is_created(open_session):
    invite_and_join(open_session, name="Eve Joined")
    invitations_create_bulk(session=open_session, actor="test", text="Fay Invited")
    before = (Invitation.objects.count(), Credential.objects.count(), AuditEvent.objects.count())
    text = ("Ann Lee\n"
            "\tnote without a name\n"
            "ann  lee — twice\n"
            "eve joined\n"
            "Fay Invited\n"
            + "X" * 300 + "\n"
            "Gus | " + "n" * 300 + "\n"
            "Hal\u202eRTL\n")
    with pytest.raises(InvalidLines) as refused:
        invitations_create_bulk(session=open_session, actor="test", text=text)
    problems = refused.value.problems
    assert problems[0] == "line 2: no name before the note"
    assert problems[1] == 'line 3: "ann lee" is already on line 1'
    assert problems[2] == 'line 4: "eve joined" is already judging in this session'
    assert problems[3] == 'line 5: "Fay Invited" is already invited'
    assert problems[4].startswith("line 6: at most")
    assert problems[5] == "line 7: note: at most 200 characters"
    assert problems[6].startswith("line 8: control and direction characters")
    assert len(problems) == 7
    assert before == (Invitation.objects.count(), Credential.objects.count(),
                      AuditEvent.objects.count())
    with pytest.raises(InvalidLines) as refused:
        invitations_create_bulk(session=open_session, actor="test",
                                text="Ann Lee\neve joined\nFay Invited\n")
    assert refused.value.problems == ['line 2: "eve joined" is already judging in this session',
                                      'line 3: "Fay Invited" is already invited']
    assert before == (Invitation.objects.count(), Credential.objects.count(),
                      AuditEvent.objects.count())


@pytest.mark.django_db
def test_an_empty_list_is_refused(open_session):
    with pytest.raises(Invalid, match="at least one name"):
        invitations_create_bulk(session=open_session, actor="test", text="\n \n")


@pytest.mark.django_db
def test_a_lost_link_is_reissued_and_the_old_one_dies(open_session):
    first = invitations_create_bulk(session=open_session, actor="test", text="Ann Lee")[0]
    again = invitation_link_reissue(invitation=first.invitation, actor="test")
    assert again.join_token != first.join_token
    with pytest.raises(Refused):
        join_token_exchange(token=first.join_token)
    join_token_exchange(token=again.join_token)
    with pytest.raises(Exception, match="has joined"):
        invitation_link_reissue(invitation=first.invitation, actor="test")


@pytest.mark.django_db
def test_links_issued_later_are_issued_once(open_session):
    invited = invitations_create_bulk(session=open_session, actor="test", text="Ann\nBo",
                                      issue_links=False)
    assert [i.join_token for i in invited] == [None, None]
    ids = [i.invitation.pk for i in invited]
    issued = join_links_issue(session=open_session, invitation_ids=ids, actor="test")
    assert [i.invitation.name for i in issued] == ["Ann", "Bo"]
    with pytest.raises(Conflict, match="issued already"):
        join_links_issue(session=open_session, invitation_ids=ids, actor="test")
    assert Credential.objects.filter(kind=CredentialKind.JOIN).count() == 2
    join_token_exchange(token=issued[1].join_token)


# --- The page --------------------------------------------------------------------------------------

@pytest.mark.django_db
def test_the_page_invites_a_pasted_list_and_the_csv_downloads_once(host, open_session):
    alice = client_as(host)
    response = alice.post(url("invite_list", session_id=open_session.pk), {"list-names": LIST})
    assert response.status_code == 303
    page = alice.get(response["Location"]).content.decode()
    assert "Join links for 4 invitees: download once" in page
    assert "0/join/" not in page  # the links are in the CSV only (not the GitHub sign-in link)
    # No link exists yet, anywhere: the download makes them (only their hashes are kept).
    assert Invitation.objects.count() == 4
    assert not Credential.objects.filter(kind=CredentialKind.JOIN).exists()
    assert page.count(">no link yet<") == 4
    download = alice.post(url("join_links_download", session_id=open_session.pk))
    assert download.status_code == 200
    assert download["Content-Type"].startswith("text/csv")
    assert "attachment" in download["Content-Disposition"]
    assert download["Cache-Control"] == "no-store"
    rows = rows_of(download.content.decode())
    assert [(r["name"], r["note"]) for r in rows] == [
        ("Ann Lee", "backend team"), ("Bo Chen", "frontend"), ("Cara Diaz", "on call"),
        ("Dev Patel", "")]
    for row in rows:  # each link admits its own invitee, once
        assert join_token_exchange(token=token_of(row["join_link"])).judge.display_name == row["name"]
    assert Credential.objects.filter(kind=CredentialKind.JOIN).count() == 4
    assert not any(Credential.objects.filter(token_sha256=token_of(r["join_link"])).exists()
                   for r in rows)
    again = alice.post(url("join_links_download", session_id=open_session.pk))
    assert again.status_code == 410
    assert "already downloaded" in again.content.decode()
    assert "0/join/" not in again.content.decode()
    assert "download once" not in alice.get(url("invitations", session_id=open_session.pk)).content.decode()


@pytest.mark.django_db
def test_a_refused_list_keeps_its_text_and_names_the_lines(host, open_session):
    alice = client_as(host)
    text = "Ann Lee\nann lee\n\tno name"
    response = alice.post(url("invite_list", session_id=open_session.pk), {"list-names": text})
    assert response.status_code == 400
    page = response.content.decode()
    assert "Nobody was invited" in page
    assert "line 2: &quot;ann lee&quot; is already on line 1" in page
    assert "line 3: no name before the note" in page
    assert "Ann Lee\nann lee\n\tno name</textarea>" in page
    assert not Invitation.objects.exists()


@pytest.mark.django_db
def test_an_uploaded_csv_is_invited_and_a_bad_one_comes_back_in_the_box(host, open_session):
    alice = client_as(host)
    bad = SimpleUploadedFile("team.csv", b"name,note\nAnn Lee,backend\n,orphan note\n",
                             content_type="text/csv")
    response = alice.post(url("invite_list", session_id=open_session.pk), {"list-upload": bad})
    assert response.status_code == 400
    page = response.content.decode()
    assert "line 3: no name before the note" in page
    assert "Ann Lee\tbackend" in page  # the file's text, in the box to fix
    good = SimpleUploadedFile("team.csv", b"name,note\nAnn Lee,backend\nBo Chen,\n",
                              content_type="text/csv")
    response = alice.post(url("invite_list", session_id=open_session.pk), {"list-upload": good})
    assert response.status_code == 303
    assert list(Invitation.objects.order_by("pk").values_list("name", "note")) == [
        ("Ann Lee", "backend"), ("Bo Chen", "")]


@pytest.mark.django_db
def test_the_list_shows_notes_joins_last_activity_and_reissues(host, open_session):
    alice = client_as(host)
    invited = invitations_create_bulk(session=open_session, actor="test",
                                      text="Ann Lee — backend\nBo Chen — frontend")
    judge = join_token_exchange(token=invited[0].join_token).judge
    verdict_record(judge=judge, code=codes(judge)[0], phase=1, value="pass", reason="")
    page = alice.get(url("invitations", session_id=open_session.pk)).content.decode()
    assert "backend" in page and "frontend" in page
    assert f"joined as {judge.pseudonym}" in page
    assert page.count('data-cell="last-active">—') == 1  # Bo has not joined
    ann_row = page.split(f'data-invitation="{invited[0].invitation.pk}"')[1].split("</tr>")[0]
    assert 'data-cell="last-active">20' in ann_row
    bo = invited[1].invitation
    response = alice.post(url("invitation_reissue", session_id=open_session.pk, invitation_id=bo.pk))
    assert response.status_code == 303
    shown = alice.get(response["Location"]).content.decode()
    link = shown.split('id="once-value" readonly value="')[1].split('"')[0]
    assert "Join link for Bo Chen: shown once" in shown
    with pytest.raises(Refused):
        join_token_exchange(token=invited[1].join_token)
    assert join_token_exchange(token=token_of(link)).judge.display_name == "Bo Chen"
    # A joined invitee's lost link is a resume link: reissued on the judges page instead.
    response = alice.post(url("invitation_reissue", session_id=open_session.pk,
                              invitation_id=invited[0].invitation.pk))
    assert response.status_code == 409


# --- The command -----------------------------------------------------------------------------------

@pytest.mark.django_db
def test_the_command_writes_the_links_to_a_new_private_file(open_session, tmp_path):
    names = tmp_path / "names.txt"
    names.write_text(LIST, encoding="utf-8")
    out = tmp_path / "links.csv"
    call_command("invite", str(open_session.pk), "--names-file", str(names), "--csv", str(out),
                 stdout=io.StringIO())
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    rows = rows_of(out.read_text(encoding="utf-8"))
    assert [r["name"] for r in rows] == ["Ann Lee", "Bo Chen", "Cara Diaz", "Dev Patel"]
    join_token_exchange(token=token_of(rows[2]["join_link"]))
    # Never overwritten: the links in it exist nowhere else.
    names.write_text("Zed\n", encoding="utf-8")
    with pytest.raises(CommandError, match="never overwritten"):
        call_command("invite", str(open_session.pk), "--names-file", str(names), "--csv", str(out))
    assert not Invitation.objects.filter(name="Zed").exists()


@pytest.mark.django_db
def test_the_command_refuses_a_bad_list_and_leaves_no_file(open_session, tmp_path):
    names = tmp_path / "names.txt"
    names.write_text("Ann\nann\n", encoding="utf-8")
    out = tmp_path / "links.csv"
    with pytest.raises(CommandError, match='line 2: "ann" is already on line 1'):
        call_command("invite", str(open_session.pk), "--names-file", str(names), "--csv", str(out))
    assert not out.exists()
    assert not Invitation.objects.exists()
    with pytest.raises(CommandError, match="needs --csv"):
        call_command("invite", str(open_session.pk), "--names-file", str(names))


def test_two_hundred_names_take_one_process_not_minutes(tmp_path):
    """The issue's 24 invitations took 45 s, one process per name; a list is one process.
    A real `manage.py` run on a fresh data directory (migrate, demo, then the list)."""
    env = {**os.environ, "BLINDJUDGE_DATA_DIR": str(tmp_path / "data"), "DATABASE_URL": ""}
    env.pop("DATABASE_URL")
    manage = [sys.executable, str(Path(__file__).resolve().parents[2] / "manage.py")]
    subprocess.run([*manage, "migrate", "--no-input", "-v0"], env=env, check=True)
    demo = subprocess.run([*manage, "demo", "--json"], env=env, check=True, capture_output=True,
                          text=True)
    session = str(__import__("json").loads(demo.stdout)["session"])
    names = tmp_path / "names.txt"
    names.write_text("\n".join(f"Judge {n:03d} | team {n % 7}" for n in range(200)), encoding="utf-8")
    started = time.monotonic()
    subprocess.run([*manage, "invite", session, "--names-file", str(names), "--csv",
                    str(tmp_path / "links.csv")], env=env, check=True, capture_output=True)
    elapsed = time.monotonic() - started
    assert len(rows_of((tmp_path / "links.csv").read_text(encoding="utf-8"))) == 200
    print(f"invite --names-file, 200 names: {elapsed:.2f} s")
    assert elapsed < 15
