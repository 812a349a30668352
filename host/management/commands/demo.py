import json
import os
from pathlib import Path

from django.conf import settings
from django.core.management.base import CommandError

from blindjudge.commands import HostCommand
from blindjudge.links import guest_page, host_sign_in, join_link
from judging.demo import (
    DEMO_KEPT,
    DEMO_PREREGISTRATION,
    DEMO_REDACTIONS,
    DEMO_RUBRIC,
    demo_bundle,
)
from judging.selectors.commands import first_invitation_named, host_named, newest_live_session
from judging.services import (
    blinding_dismiss,
    host_create,
    host_password_set,
    invitation_create,
    invitation_link_reissue,
    redactions_accept,
    run_import,
    session_create,
    session_open,
)

DEMO_JUDGE = "Demo Judge"


class Command(HostCommand):
    help = ("Load the demo, once: a host, a realistic run (known-good, seeded-defect and hostile "
            "copies, sealed and unsealed reviews, findings) and an open session with a join link "
            "and a guest code. The host's password is kept in a file readable by its owner only "
            "(DATA_DIR/<host>-password) and printed again on every run; running it again loads "
            "nothing new and gives the demo judge a new join link if they have not joined. "
            "--fresh loads a new run and session and sets a new password (the earlier demo runs "
            "stay, with their sessions and verdicts).")

    def add_command_arguments(self, parser):
        parser.add_argument("--host", default="demo-host", help="the demo host's username")
        parser.add_argument("--fresh", action="store_true",
                            help="a new demo run and session and a new password; earlier demo "
                                 "runs are kept")
        parser.add_argument("--pick-then-save", action="store_true",
                            help="a new demo session without one key per decision: a verdict key "
                                 "picks the verdict and the judge saves it (the setting "
                                 "advance_on_key off)")
        parser.add_argument("--password-file", metavar="F",
                            help="where the demo host's password is kept (default: "
                                 "DATA_DIR/<host>-password)")

    def run(self, *, host, fresh=False, password_file=None, pick_then_save=False, **options):
        path = Path(password_file) if password_file else settings.DATA_DIR / f"{host}-password"
        kept = None if fresh else _read_password(path)
        existing = host_named(host)
        if existing is None:
            account = host_create(username=host, password=kept)
        elif kept is None or not existing.user.check_password(kept):
            account = host_password_set(host=existing)
        else:
            account = None
        if account is not None:
            _write_password(path, account.password)
            password, owner = account.password, account.host
        else:
            password, owner = kept, existing
        actor = f"host:{owner.user.username}"
        session = None if fresh else _demo_session(owner)
        if session is not None:
            return self._again(session, owner, password, path, actor)
        run = run_import(host=owner, raw=json.dumps(demo_bundle()).encode("utf-8"), actor=actor)
        created = session_create(
            run=run, kind="copies", actor=actor, rubric=DEMO_RUBRIC,
            preregistration=DEMO_PREREGISTRATION, guests_allowed=True, guest_cap=20,
            scorecards=True, advance_on_key=not pick_then_save,
        )
        session = redactions_accept(session=created.session, actor=actor, patterns=DEMO_REDACTIONS)
        session = blinding_dismiss(session=session, actor=actor, matches=DEMO_KEPT)
        session = session_open(session=session, actor=actor)
        invited = invitation_create(session=session, actor=actor, name=DEMO_JUDGE)
        return {
            "host": owner.user.username, "password": password, "password_file": str(path),
            "sign_in": host_sign_in(), "run": run.pk, "session": session.pk, "loaded": True,
            "protocol_sha256": session.protocol_sha256,
            "join_link": join_link(invited.join_token),
            "guest_page": guest_page(), "guest_code": created.guest_code,
        }

    def _again(self, session, owner, password, path, actor):
        """The demo loaded before: nothing new but the demo judge's join link, reissued (the
        earlier one stops working) while they have not joined. The guest code was shown once,
        at loading; it is rotated on the session's Guests page."""
        invitation = first_invitation_named(session, DEMO_JUDGE)
        link = ""
        if invitation is not None and invitation.judge_id is None:
            link = join_link(invitation_link_reissue(invitation=invitation, actor=actor).join_token)
        return {
            "host": owner.user.username, "password": password, "password_file": str(path),
            "sign_in": host_sign_in(), "run": session.run_id, "session": session.pk,
            "loaded": False, "protocol_sha256": session.protocol_sha256, "join_link": link,
            "guest_page": guest_page(), "guest_code": None,
        }

    def describe(self, result):
        lines = [
            f"Host sign-in:  {result['sign_in']}  user {result['host']}  "
            f"password {result['password']}  (kept in {result['password_file']})",
            f"Demo run {result['run']}, session {result['session']} "
            f"({'loaded now' if result['loaded'] else 'loaded before'}; protocol sha256 "
            f"{result['protocol_sha256'][:16]}…)",
        ]
        if result["join_link"]:
            lines.append(f"Judge's join link (single use):  {result['join_link']}")
        else:
            lines.append("The demo judge has joined; invite more on the session's Invitations page.")
        if result["guest_code"]:
            lines.append(f"Guest page:  {result['guest_page']}  guest code {result['guest_code']}")
        else:
            lines.append(f"Guest page:  {result['guest_page']}  (the guest code was shown when the "
                         "demo was loaded; rotate it on the session's Guests page for a new one)")
        return lines


def _demo_session(owner):
    """The newest open (or closed) session on a demo run of this host, if any: a demo loaded
    before. A run whose loading stopped half-way (no open session) does not count."""
    return newest_live_session(owner, demo_bundle()["run"]["name"])


def _read_password(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8").strip() or None
    except FileNotFoundError:
        return None
    except OSError as error:
        raise CommandError(f"cannot read the demo password file {path}: {error.strerror}") from None


def _write_password(path: Path, password: str):
    """A new file readable by its owner only: created with O_EXCL and mode 0600 (never written
    through an existing file or a link planted at its name); a stale one is removed first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(password + "\n")
