import json

from django.core.management.base import CommandError

from blindjudge.commands import HostCommand, NotARegularFile, read_regular_file
from reports.verify import verify


class Command(HostCommand):
    help = ("Recompute every hash a JSON report publishes (manifest, protocol, each judge's "
            "commitment and order) from its salts and mapping; exits non-zero on any mismatch.")

    def add_command_arguments(self, parser):
        parser.add_argument("report", help="a report written by export_report --format json|anon")

    def run(self, *, report, **options):
        try:
            # A regular file only: a device or a FIFO is refused at once, never read without end
            # or waited on (blindjudge.commands.read_regular_file).
            data = json.loads(read_regular_file(report, None).decode("utf-8"))
        except FileNotFoundError:
            raise CommandError(f"no such file: {report}") from None
        except NotARegularFile as error:
            raise CommandError(f"{report} is {error.kind}, not a JSON report") from None
        except OSError as error:
            raise CommandError(f"cannot read {report}: {error.strerror}") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise CommandError(f"{report} is not a JSON report: {error}") from None
        if not isinstance(data, dict):
            raise CommandError(f"{report} is not a JSON report")
        problems, checks = verify(data)
        if problems:
            raise CommandError(f"{len(problems)} of {checks} checks failed:\n" + "\n".join(problems))
        return {"report": report, "checks": checks, "verified": True}

    def describe(self, result):
        return [f"verified: all {result['checks']} published hashes recompute"]
