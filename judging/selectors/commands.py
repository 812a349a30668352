"""What the command line reads (host/management/commands, and reports' export and verification
commands): what a command names, found or refused with a CommandError.

The command line is the host's own machine: ids here are looked up without a host check, as the
operator of the installation may act on any run or session in it.
"""

from django.core.management.base import CommandError

from accounts.models import Host, Invitation, Judge
from judging.enums import SessionState
from judging.models import Run, Session


def get_session(session_id):
    try:
        return Session.objects.select_related("run").get(pk=int(session_id))
    except (Session.DoesNotExist, ValueError):
        raise CommandError(f"no session {session_id}") from None


def get_run(run_id):
    try:
        return Run.objects.get(pk=int(run_id))
    except (Run.DoesNotExist, ValueError):
        raise CommandError(f"no run {run_id}") from None


def get_host(username):
    try:
        return Host.objects.select_related("user").get(user__username=username)
    except Host.DoesNotExist:
        raise CommandError(f'no host named "{username}" (create one with createhost)') from None


def host_named(username: str) -> Host | None:
    return Host.objects.select_related("user").filter(user__username=username).first()


def judge_named(session: Session, pseudonym: str) -> Judge | None:
    """The session's judge by pseudonym (J01), any case."""
    return Judge.objects.filter(session=session, pseudonym__iexact=pseudonym).first()


def first_invitation_named(session: Session, name: str) -> Invitation | None:
    return Invitation.objects.filter(session=session, name=name).order_by("pk").first()


def newest_live_session(host: Host, run_name: str) -> Session | None:
    """The newest open (or closed) session on a run of that name of this host, if any."""
    return (Session.objects.select_related("run")
            .filter(run__host=host, run__name=run_name,
                    state__in=[SessionState.OPEN, SessionState.CLOSED])
            .order_by("-pk").first())
