"""The shared shape of the host's commands: `--json`, no prompts, clear non-zero exits.

A command's `run()` returns a dict; it is printed as JSON with `--json`, otherwise through the
command's `describe()` as plain lines (or None when the command wrote its own output). Service
refusals become CommandError with the service's own message, so the command line says exactly
what the pages say; with `--json`, refusals and usage errors are also printed as
{"ok": false, "error": ..., "message": ...}.
"""

import errno
import json
import os
import stat
import sys

from django.conf import settings
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


class NotARegularFile(OSError):
    """A path names something other than a regular file: `kind` says what ("a FIFO (named
    pipe)", "a character device", "a directory", …)."""

    def __init__(self, kind: str, path: str):
        super().__init__(errno.EINVAL, f"{kind}, not a regular file", path)
        self.kind = kind


class FileTooLarge(ValueError):
    """A file holds more than the limit: `size` is its size where known (None where it grew
    past the limit while being read)."""

    def __init__(self, size: int | None, limit: int):
        super().__init__(f"{size if size is not None else 'more than ' + str(limit)} bytes "
                         f"exceeds the limit of {limit} bytes")
        self.size, self.limit = size, limit


_FILE_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
               (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
               (stat.S_ISSOCK, "a socket"))


def read_regular_file(path: str, limit: int | None) -> bytes:
    """The bytes of the regular file at `path` (symbolic links followed), at most `limit` (None:
    its size when opened, for a file with no limit of its own: a report to verify).

    The file is opened first (non-blocking, so a FIFO without a writer answers at once) and
    judged on the open descriptor, never on the name: anything but a regular file is refused
    with NotARegularFile before a byte is read (a device reports size 0, so a link to /dev/zero
    was read until memory ran out, and a FIFO waited for ever). At most `limit` + 1 bytes are
    read, so a file that grows past its size is refused too (FileTooLarge). FileNotFoundError
    and other OSErrors pass through."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            kind = next((name for test, name in _FILE_KINDS if test(status.st_mode)), "not a file")
            raise NotARegularFile(kind, path)
        if limit is not None and status.st_size > limit:
            raise FileTooLarge(status.st_size, limit)  # read nothing of a file refused anyway
        chunks, left = [], (status.st_size if limit is None else limit) + 1
        while left > 0:
            chunk = os.read(descriptor, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(descriptor)
    data = b"".join(chunks)
    if limit is not None and len(data) > limit:
        raise FileTooLarge(None, limit)
    return data


def read_text_file(path: str, what: str) -> str:
    """A UTF-8 text file named on the command line (`-` for standard input): a regular file of at
    most BLINDJUDGE_MAX_HOST_FORM_BYTES (what the host's pages take in one form), never a device
    or a FIFO (read_regular_file)."""
    limit = settings.BLINDJUDGE_MAX_HOST_FORM_BYTES
    try:
        if path == "-":
            text = sys.stdin.read(limit + 1)
            if len(text) > limit:
                raise FileTooLarge(None, limit)
        else:
            # Decoded as open(path, encoding="utf-8") would: newlines made universal.
            text = read_regular_file(path, limit).decode("utf-8")
            text = text.replace("\r\n", "\n").replace("\r", "\n")
    except FileNotFoundError:
        raise CommandError(f"{what}: no such file: {path}") from None
    except NotARegularFile as error:
        raise CommandError(f"{what}: {path} is {error.kind}, not a text file") from None
    except FileTooLarge as error:
        raise CommandError(f"{what}: {path}: {error}") from None
    except UnicodeDecodeError as error:
        raise CommandError(f"{what}: {path} is not UTF-8 text (byte {error.start})") from None
    except OSError as error:
        raise CommandError(f"{what}: cannot read {path}: {error.strerror}") from None
    if "\x00" in text:
        # Not text; and PostgreSQL refuses NUL in text columns with a database error.
        raise CommandError(f"{what}: {path} holds a NUL byte at character {text.index(chr(0))}")
    return text
