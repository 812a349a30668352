from blindjudge.commands import HostCommand, read_text_file
from judging.selectors.commands import get_session
from judging.services import prereg_amend


class Command(HostCommand):
    help = ("Add a dated amendment to an open session's preregistration, marked before or after "
            "the first verdict. A ```rules block in it replaces the rules in force.")

    def add_command_arguments(self, parser):
        parser.add_argument("session")
        parser.add_argument("file", help="the amendment text (- for standard input)")

    def run(self, *, session, file, **options):
        amendment = prereg_amend(session=get_session(session), actor="cli",
                                 text=read_text_file(file, "amendment"))
        return {"session": amendment.session_id, "amended_at": amendment.amended_at.isoformat(),
                "before_first_verdict": amendment.before_first_verdict,
                "replaces_rules": amendment.decision_rules is not None,
                "text_sha256": amendment.text_sha256}
