from host.management.transition import SessionTransitionCommand
from judging.services import session_close


class Command(SessionTransitionCommand):
    help = "Close an open session: no new verdicts until it is reopened."
    transition = staticmethod(session_close)
