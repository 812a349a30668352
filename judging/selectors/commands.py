"""What the command line reads (host/management/commands, and reports' export and verification
commands): what a command names, found or refused with a CommandError.

The command line is the host's own machine: ids here are looked up without a host check, as the
operator of the installation may act on any run or session in it.
"""

from django.core.management.base import CommandError

from accounts.models import Host
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
