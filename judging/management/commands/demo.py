import json

from accounts.models import Host
from blindjudge.commands import HostCommand
from blindjudge.links import guest_page, host_sign_in, join_link
from judging.demo import DEMO_PREREGISTRATION, DEMO_RUBRIC, demo_bundle
from judging.services import (
    host_create,
    host_password_set,
    invitation_create,
    redactions_accept,
    run_import,
    session_create,
    session_open,
)


class Command(HostCommand):
    help = ("Load the demo: a host, a realistic run (known-good, seeded-defect and hostile "
            "copies, sealed and unsealed reviews, findings) and an open session with a join link "
            "and a guest code. Running it again adds a fresh run and session and a new password.")

    def add_command_arguments(self, parser):
        parser.add_argument("--host", default="demo-host", help="the demo host's username")

    def run(self, *, host, **options):
        existing = Host.objects.select_related("user").filter(user__username=host).first()
        account = (host_password_set(host=existing) if existing
                   else host_create(username=host))
        owner = account.host
        actor = f"host:{owner.user.username}"
        run = run_import(host=owner, raw=json.dumps(demo_bundle()).encode("utf-8"), actor=actor)
        created = session_create(
            run=run, kind="copies", actor=actor, rubric=DEMO_RUBRIC,
            preregistration=DEMO_PREREGISTRATION, guests_allowed=True, guest_cap=20,
            scorecards=True,
        )
        session = redactions_accept(session=created.session, actor=actor,
                                    patterns=["As Llama", "re:gpt-4o(-[0-9-]+)?"])
        session = session_open(session=session, actor=actor)
        invited = invitation_create(session=session, actor=actor, name="Demo Judge")
        return {
            "host": owner.user.username, "password": account.password,
            "sign_in": host_sign_in(), "run": run.pk, "session": session.pk,
            "protocol_sha256": session.protocol_sha256,
            "join_link": join_link(invited.join_token),
            "guest_page": guest_page(), "guest_code": created.guest_code,
        }

    def describe(self, result):
        return [
            f"Host sign-in:  {result['sign_in']}  user {result['host']}  "
            f"password {result['password']}",
            f"Demo run {result['run']}, session {result['session']} (open; protocol sha256 "
            f"{result['protocol_sha256'][:16]}…)",
            f"Judge's join link (single use):  {result['join_link']}",
            f"Guest page:  {result['guest_page']}  guest code {result['guest_code']}",
        ]
