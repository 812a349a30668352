from host.management.transition import SessionTransitionCommand
from judging.services import session_reopen


class Command(SessionTransitionCommand):
    help = "Reopen a closed session (possible until the reveal)."
    transition = staticmethod(session_reopen)
