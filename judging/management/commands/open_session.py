from blindjudge.commands import HostCommand
from judging.management.lookups import get_session
from judging.services import session_open


class Command(HostCommand):
    help = "Open a draft session: its protocol freezes (canonical JSON, SHA-256, time)."

    def add_command_arguments(self, parser):
        parser.add_argument("session")

    def run(self, *, session, **options):
        session = session_open(session=get_session(session), actor="cli")
        result = {"session": session.pk, "state": session.state}
        if session.protocol_sha256:
            result["protocol_sha256"] = session.protocol_sha256
        return result
