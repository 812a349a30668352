"""export_report: a revealed session's report written to a file (or standard output) in one of
the formats of reports.render."""

import re
from pathlib import Path

from django.core.management.base import CommandError

from blindjudge.commands import HostCommand
from judging.selectors.commands import get_session
from reports.build import build_report
from reports.render import render_report


class Command(HostCommand):
    help = ("Write a revealed session's report: json, csv or jsonl (one row per verdict), html (a "
            "standalone page with plots), anon or anon-jsonl (judges as pseudonyms).")

    def add_command_arguments(self, parser):
        parser.add_argument("session")
        # reports.render.REPORT_FORMATS, in the order the README gives them
        parser.add_argument("--format", required=True,
                            choices=["json", "csv", "jsonl", "html", "anon", "anon-jsonl"])
        parser.add_argument("-o", "--output", required=True, metavar="FILE",
                            help="where to write the report (- for standard output)")

    def run(self, *, session, format, output, **options):
        report = build_report(get_session(session))
        data = render_report(report, format)
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
