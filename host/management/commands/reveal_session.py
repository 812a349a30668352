from host.management.transition import SessionTransitionCommand
from judging.services import session_reveal


class Command(SessionTransitionCommand):
    help = "Reveal a closed session (irreversible): the mapping and salts are published in the report."
    transition = staticmethod(session_reveal)
