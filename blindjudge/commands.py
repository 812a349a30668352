"""The shared shape of the host's commands: `--json`, no prompts, clear non-zero exits.

A command's `run()` returns a dict; it is printed as JSON with `--json`, otherwise through the
command's `describe()` as plain lines. Service refusals become CommandError with the service's own
message, so the command line says exactly what the pages say.
"""

import json
import sys

from django.core.management.base import BaseCommand, CommandError

from blindjudge.errors import ServiceError


class HostCommand(BaseCommand):
    def add_arguments(self, parser):
        parser.add_argument("--json", action="store_true", help="print a machine-readable result")
        self.add_command_arguments(parser)

    def add_command_arguments(self, parser):
        pass

    def run(self, **options) -> dict:
        raise NotImplementedError

    def describe(self, result: dict) -> list[str]:
        return [f"{key}: {value}" for key, value in result.items()]

    def handle(self, *args, **options):
        try:
            result = self.run(**options)
        except (ServiceError, CommandError) as error:
            message = error.message if isinstance(error, ServiceError) else str(error)
            if options.get("json"):
                code = error.code if isinstance(error, ServiceError) else "invalid"
                self.stdout.write(json.dumps({"ok": False, "error": code, "message": message}))
            raise CommandError(message) from None
        if options.get("json"):
            self.stdout.write(json.dumps({"ok": True, **result}, indent=2, default=str))
        else:
            for line in self.describe(result):
                self.stdout.write(line)


def read_text_file(path: str, what: str) -> str:
    """A UTF-8 text file named on the command line (`-` for standard input)."""
    try:
        if path == "-":
            return sys.stdin.read()
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        raise CommandError(f"{what}: no such file: {path}") from None
    except UnicodeDecodeError as error:
        raise CommandError(f"{what}: {path} is not UTF-8 text (byte {error.start})") from None
    except OSError as error:
        raise CommandError(f"{what}: cannot read {path}: {error.strerror}") from None


def get_session(session_id):
    from judging.models import Session

    try:
        return Session.objects.select_related("run").get(pk=int(session_id))
    except (Session.DoesNotExist, ValueError):
        raise CommandError(f"no session {session_id}") from None


def get_run(run_id):
    from judging.models import Run

    try:
        return Run.objects.get(pk=int(run_id))
    except (Run.DoesNotExist, ValueError):
        raise CommandError(f"no run {run_id}") from None


def get_host(username):
    from accounts.models import Host

    try:
        return Host.objects.select_related("user").get(user__username=username)
    except Host.DoesNotExist:
        raise CommandError(f'no host named "{username}" (create one with createhost)') from None
