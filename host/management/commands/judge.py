from django.core.management.base import CommandError

from accounts.enums import AdmittedAs
from blindjudge.commands import HostCommand
from blindjudge.links import guest_page, resume_link
from judging.selectors.commands import get_session, judge_named
from judging.services import guest_remove, judge_erase, judge_remove, resume_token_reissue

GUEST_STILL_ADMITTED = ("{judge} joined with the guest code, which still admits them as a new "
                        "guest: rotate it (guests SESSION --rotate), or remove with "
                        "--rotate-guest-code next time")


class Command(HostCommand):
    help = "Act on one judge of a session (by pseudonym, e.g. J03): remove, erase, reissue resume link."

    def add_command_arguments(self, parser):
        parser.add_argument("session")
        parser.add_argument("judge", help="the judge's pseudonym (J01, J02, …)")
        action = parser.add_mutually_exclusive_group(required=True)
        action.add_argument("--remove", action="store_true")
        action.add_argument("--erase", action="store_true")
        action.add_argument("--reissue-resume", action="store_true")
        parser.add_argument("--rotate-guest-code", action="store_true",
                            help="with --remove, for a guest: rotate the session's guest code in "
                                 "the same step (otherwise they can join again with it)")

    def run(self, *, session, judge, remove=False, erase=False, reissue_resume=False,
            rotate_guest_code=False, **options):
        session = get_session(session)
        found = judge_named(session, judge)
        if found is None:
            raise CommandError(f'session {session.pk} has no judge "{judge}"')
        if rotate_guest_code and not (remove and found.admitted_as == AdmittedAs.GUEST):
            raise CommandError("--rotate-guest-code: only with --remove, for a judge who came "
                               "as a guest")
        if remove and found.admitted_as == AdmittedAs.GUEST:
            removed = guest_remove(judge=found, actor="cli", rotate_code=rotate_guest_code)
            out = {"judge": found.pseudonym, "status": "removed"}
            if removed.guest_code:
                out.update(guest_code=removed.guest_code, guest_page=guest_page())
            elif session.guests_allowed:
                out["note"] = GUEST_STILL_ADMITTED.format(judge=found.pseudonym)
            return out
        if remove:
            judge_remove(judge=found, actor="cli")
            return {"judge": found.pseudonym, "status": "removed"}
        if erase:
            judge_erase(judge=found, actor="cli")
            return {"judge": found.pseudonym, "status": "erased"}
        token = resume_token_reissue(judge=found, actor="cli")
        return {"judge": found.pseudonym, "resume_link": resume_link(token)}
