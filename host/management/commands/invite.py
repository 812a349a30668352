import os

from django.conf import settings
from django.core.management.base import CommandError

from blindjudge.commands import FileTooLarge, HostCommand, read_regular_file
from blindjudge.links import github_join_link, join_link
from judging.invitation_links import join_links_csv
from judging.selectors.commands import get_session
from judging.services import invitation_create, invitations_create_bulk, invitee_text_from_file


class Command(HostCommand):
    help = ("Invite judges: --name prints a single-use join link; --github lists a GitHub login; "
            "--names-file F --csv OUT invites a list (one name a line, an optional note after a "
            "tab, \" — \" or \" | \"; or a .csv of name, note) and writes their join links to OUT.")

    def add_command_arguments(self, parser):
        parser.add_argument("session")
        who = parser.add_mutually_exclusive_group(required=True)
        who.add_argument("--name", help="the invitee's name, shown in the report")
        who.add_argument("--github", metavar="LOGIN", help="a GitHub login allowed to sign in")
        who.add_argument("--names-file", metavar="F",
                         help="a list of invitees (.txt, or .csv with columns name, note)")
        parser.add_argument("--note", default="", help="with --name: your note on the invitee")
        parser.add_argument("--csv", metavar="OUT", dest="csv_out",
                            help="with --names-file: where to write name, note, join link, expiry "
                                 "(a new file, readable by you only; never overwritten)")

    def run(self, *, session, name=None, github=None, names_file=None, note="", csv_out=None,
            **options):
        if names_file:
            return self._invite_list(session, names_file, csv_out)
        if csv_out:
            raise CommandError("--csv goes with --names-file")
        invited = invitation_create(
            session=get_session(session), actor="cli", name=name or "", github_login=github or "",
            note=note,
        )
        if invited.join_token:
            return {"invitation": invited.invitation.pk, "join_link": join_link(invited.join_token),
                    "expires_at": invited.expires_at.isoformat()}
        return {"invitation": invited.invitation.pk,
                "github_login": invited.invitation.github_login,
                "sign_in_link": github_join_link(invited.invitation.session.url_id)}

    def _invite_list(self, session, names_file, csv_out):
        """The links exist in clear only in OUT: it is created new (O_EXCL, so an existing file,
        or a link planted there, is refused rather than written through) with mode 0600 before
        anyone is invited, and removed again if the list is refused."""
        if not csv_out:
            raise CommandError("--names-file needs --csv OUT: the join links are written there, once")
        session = get_session(session)
        try:
            # A regular file of at most what the host's invitations page takes: never a device
            # or a FIFO (read_regular_file).
            data = read_regular_file(names_file, settings.BLINDJUDGE_MAX_HOST_FORM_BYTES)
        except FileTooLarge as error:
            raise CommandError(f"--names-file: {names_file}: {error}") from None
        except OSError as error:
            raise CommandError(f"--names-file: cannot read {names_file}: {error.strerror}") from None
        text = invitee_text_from_file(names_file, data)
        try:
            descriptor = os.open(csv_out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            raise CommandError(f"--csv: {csv_out} exists; it is never overwritten, "
                               "choose a new name") from None
        except OSError as error:
            raise CommandError(f"--csv: cannot create {csv_out}: {error.strerror}") from None
        try:
            invited = invitations_create_bulk(session=session, actor="cli", text=text)
        except BaseException:
            os.close(descriptor)
            os.unlink(csv_out)
            raise
        with os.fdopen(descriptor, "w", encoding="utf-8", newline="") as out:
            out.write(join_links_csv(invited))
        return {"invited": len(invited), "csv": os.path.abspath(csv_out),
                "invitations": [one.invitation.pk for one in invited]}

    def describe(self, result):
        if "csv" in result:
            return [f"{result['invited']} invited; their join links (single use) are in "
                    f"{result['csv']} (readable by you only: send each person theirs, then delete it)"]
        return super().describe(result)
