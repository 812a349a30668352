import re
from pathlib import Path

from django.core.management.base import CommandError

from blindjudge.commands import HostCommand
from judging.management.lookups import get_session
from reports.build import build_report
from reports.export import anonymise, to_csv, to_json
from reports.html import to_html


class Command(HostCommand):
    help = ("Write a revealed session's report: json, csv (one row per verdict), html (a standalone "
            "page with plots) or anon (pseudonyms).")

    def add_command_arguments(self, parser):
        parser.add_argument("session")
        parser.add_argument("--format", required=True, choices=["json", "csv", "html", "anon"])
        parser.add_argument("-o", "--output", required=True, metavar="FILE",
                            help="where to write the report (- for standard output)")

    def run(self, *, session, format, output, **options):
        report = build_report(get_session(session))
        if format == "csv":
            data = to_csv(report).encode("utf-8")
        elif format == "html":
            data = to_html(report).encode("utf-8")
        else:
            data = to_json(anonymise(report) if format == "anon" else report)
        if output == "-":
            # The report is the output: no trailing summary, so `-o - --json` stays one document.
            self.stdout.write(data.decode("utf-8"), ending="")
            return None
        path = Path(output)
        if re.search(r"[\x00-\x1f]", output):
            raise CommandError("-o: the file name holds control characters")
        try:
            path.write_bytes(data)
        except OSError as error:
            raise CommandError(f"cannot write {output}: {error.strerror}") from None
        return {"session": report["session"]["id"], "format": format, "file": str(path),
                "bytes": len(data)}

    def describe(self, result):
        return [f"wrote the {result['format']} report of session {result['session']} to "
                f"{result['file']} ({result['bytes']} bytes)"]
