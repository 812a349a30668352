from django.core.management.base import CommandError

from accounts.models import Judge
from blindjudge.commands import HostCommand
from blindjudge.links import resume_link
from judging.management.lookups import get_session
from judging.services import judge_erase, judge_remove, resume_token_reissue


class Command(HostCommand):
    help = "Act on one judge of a session (by pseudonym, e.g. J03): remove, erase, reissue resume link."

    def add_command_arguments(self, parser):
        parser.add_argument("session")
        parser.add_argument("judge", help="the judge's pseudonym (J01, J02, …)")
        action = parser.add_mutually_exclusive_group(required=True)
        action.add_argument("--remove", action="store_true")
        action.add_argument("--erase", action="store_true")
        action.add_argument("--reissue-resume", action="store_true")

    def run(self, *, session, judge, remove=False, erase=False, reissue_resume=False, **options):
        session = get_session(session)
        found = Judge.objects.filter(session=session, pseudonym__iexact=judge).first()
        if found is None:
            raise CommandError(f'session {session.pk} has no judge "{judge}"')
        if remove:
            judge_remove(judge=found, actor="cli")
            return {"judge": found.pseudonym, "status": "removed"}
        if erase:
            judge_erase(judge=found, actor="cli")
            return {"judge": found.pseudonym, "status": "erased"}
        token = resume_token_reissue(judge=found, actor="cli")
        return {"judge": found.pseudonym, "resume_link": resume_link(token)}
