from host.management.transition import SessionTransitionCommand
from judging.services import session_open


class Command(SessionTransitionCommand):
    help = "Open a draft session: its protocol freezes (canonical JSON, SHA-256, time)."
    transition = staticmethod(session_open)
