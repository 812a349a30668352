"""The four commands that move a session between its states (open, close, reopen, reveal) differ
only in the service they call and their help; this is their one shape."""

from blindjudge.commands import HostCommand
from judging.selectors.commands import get_session


class SessionTransitionCommand(HostCommand):
    """`COMMAND SESSION`: calls `transition(session=..., actor="cli")` and prints the new state
    (and the protocol's hash once it is frozen)."""

    transition = None  # the service, set by each command

    def add_command_arguments(self, parser):
        parser.add_argument("session")

    def run(self, *, session, **options):
        session = type(self).transition(session=get_session(session), actor="cli")
        result = {"session": session.pk, "state": session.state}
        if session.protocol_sha256:
            result["protocol_sha256"] = session.protocol_sha256
        return result
