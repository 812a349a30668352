"""The shared shape of the host's commands: `--json`, no prompts, clear non-zero exits.

A command's `run()` returns a dict; it is printed as JSON with `--json`, otherwise through the
command's `describe()` as plain lines (or None when the command wrote its own output). Service
refusals become CommandError with the service's own message, so the command line says exactly
what the pages say; with `--json`, refusals and usage errors are also printed as
{"ok": false, "error": ..., "message": ...}.
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

    def create_parser(self, prog_name, subcommand, **kwargs):
        """A parser whose usage errors (a missing argument, a bad choice, a non-number) are also
        printed as {"ok": false, ...} when --json was given, like every other refusal."""
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parse_args, error = parser.parse_args, parser.error
        json_requested = False

        def parse(args=None, namespace=None):
            nonlocal json_requested
            json_requested = "--json" in (sys.argv[2:] if args is None else list(args))
            return parse_args(args, namespace)

        def refuse(message):
            if json_requested:
                self.stdout.write(json.dumps({"ok": False, "error": "invalid", "message": message}))
            error(message)

        parser.parse_args, parser.error = parse, refuse
        return parser

    def run(self, **options) -> dict | None:
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
        if result is None:  # the command's output was its product (a report on standard output)
            return
        if options.get("json"):
            self.stdout.write(json.dumps({"ok": True, **result}, indent=2, default=str))
        else:
            for line in self.describe(result):
                self.stdout.write(line)


def read_text_file(path: str, what: str) -> str:
    """A UTF-8 text file named on the command line (`-` for standard input)."""
    try:
        if path == "-":
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
    except FileNotFoundError:
        raise CommandError(f"{what}: no such file: {path}") from None
    except UnicodeDecodeError as error:
        raise CommandError(f"{what}: {path} is not UTF-8 text (byte {error.start})") from None
    except OSError as error:
        raise CommandError(f"{what}: cannot read {path}: {error.strerror}") from None
    if "\x00" in text:
        # Not text; and PostgreSQL refuses NUL in text columns with a database error.
        raise CommandError(f"{what}: {path} holds a NUL byte at character {text.index(chr(0))}")
    return text
