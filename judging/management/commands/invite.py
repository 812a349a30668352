from blindjudge.commands import HostCommand
from blindjudge.links import github_join_link, join_link
from judging.management.lookups import get_session
from judging.services import invitation_create


class Command(HostCommand):
    help = "Invite a judge: --name prints a single-use join link; --github lists a GitHub login."

    def add_command_arguments(self, parser):
        parser.add_argument("session")
        who = parser.add_mutually_exclusive_group(required=True)
        who.add_argument("--name", help="the invitee's name, shown in the report")
        who.add_argument("--github", metavar="LOGIN", help="a GitHub login allowed to sign in")

    def run(self, *, session, name=None, github=None, **options):
        invited = invitation_create(
            session=get_session(session), actor="cli", name=name or "", github_login=github or ""
        )
        if invited.join_token:
            return {"invitation": invited.invitation.pk, "join_link": join_link(invited.join_token),
                    "expires_at": invited.expires_at.isoformat()}
        return {"invitation": invited.invitation.pk,
                "github_login": invited.invitation.github_login,
                "sign_in_link": github_join_link(invited.invitation.session.url_id)}
