from django.core.management.base import CommandError

from blindjudge.commands import HostCommand
from blindjudge.links import guest_page
from judging.selectors.commands import get_session
from judging.services import UNSET, guests_configure


class Command(HostCommand):
    help = ("Allow or deny guests, cap them, rotate the guest code. The code is stored hashed, so "
            "it is printed only when issued (on --allow without an active code, or --rotate).")

    def add_command_arguments(self, parser):
        parser.add_argument("session")
        allow = parser.add_mutually_exclusive_group()
        allow.add_argument("--allow", action="store_true")
        allow.add_argument("--deny", action="store_true")
        parser.add_argument("--cap", type=int, help="most guests admitted (0 removes the cap)")
        parser.add_argument("--rotate", action="store_true", help="replace the guest code")

    def run(self, *, session, allow=False, deny=False, cap=None, rotate=False, **options):
        if not (allow or deny or rotate or cap is not None):
            raise CommandError("say what to change: --allow, --deny, --cap N or --rotate")
        if cap is not None and cap < 0:
            raise CommandError("--cap: must be 0 (no cap) or more")
        result = guests_configure(
            session=get_session(session), actor="cli",
            allow=True if allow else (False if deny else None),
            cap=UNSET if cap is None else (cap or None), rotate=rotate,
        )
        s = result.session
        out = {"session": s.pk, "guests_allowed": s.guests_allowed, "guest_cap": s.guest_cap}
        if result.guest_code:
            out.update(guest_code=result.guest_code, guest_page=guest_page())
        return out

    def describe(self, result):
        lines = [f"guests {'allowed' if result['guests_allowed'] else 'not allowed'}"
                 f" (cap: {result['guest_cap'] or 'none'})"]
        if "guest_code" in result:
            lines.append(f"guest code: {result['guest_code']}  (shown once; enter at "
                         f"{result['guest_page']})")
        elif result["guests_allowed"]:
            lines.append("the guest code is unchanged; --rotate issues a new one")
        return lines
