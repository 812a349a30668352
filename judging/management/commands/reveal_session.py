from blindjudge.commands import HostCommand
from judging.management.lookups import get_session
from judging.services import session_reveal


class Command(HostCommand):
    help = "Reveal a closed session (irreversible): the mapping and salts are published in the report."

    def add_command_arguments(self, parser):
        parser.add_argument("session")

    def run(self, *, session, **options):
        session = session_reveal(session=get_session(session), actor="cli")
        result = {"session": session.pk, "state": session.state}
        if session.protocol_sha256:
            result["protocol_sha256"] = session.protocol_sha256
        return result
