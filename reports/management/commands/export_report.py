"""export_report: a revealed session's report written to a file (or standard output) in one of
the formats of reports.render; or its verdicts written back into the host's own evaluation
output (reports/interop.py): `--format inspect --log-dir DIR` new inspect-ai logs beside the
originals (or in --output DIR), `--format swebench-jsonl -o FILE` a JSONL keyed by instance and
model."""

import hashlib
import re
from pathlib import Path

from django.core.management.base import CommandError

from blindjudge.commands import FileTooLarge, HostCommand, NotARegularFile, read_regular_file
from content.importers.inspect_logs import MAX_TOTAL_BYTES
from content.inspect_export import ExportError, read_log
from judging.selectors.commands import get_session
from reports.build import build_report
from reports.interop import capped, plan_inspect, swebench_jsonl
from reports.render import render_report

FILE_FORMATS = ["json", "csv", "jsonl", "html", "anon", "anon-jsonl", "flags"]  # reports.render
# The names inspect-ai gives .json logs (its log_file_pattern): a .json file of another name in
# the log folder is not a log to inspect either, and is not read. Every .eval file is.
INSPECT_JSON_LOG = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}.*\.json$")
EXPORTED = re.compile(r"\.blindjudge-s\d+\.(eval|json)$")


class Command(HostCommand):
    help = ("Write a revealed session's report: json, csv or jsonl (one row per verdict), html (a "
            "standalone page with plots), anon or anon-jsonl (judges as pseudonyms), flags (the task "
            "flags, a CSV row each); or its "
            "verdicts back into the host's evaluation output: inspect (new .eval/.json logs "
            "with the verdicts and the truth as added scores, from --log-dir) or swebench-jsonl "
            "(one row per instance and model).")

    def add_command_arguments(self, parser):
        parser.add_argument("session")
        # reports.render.REPORT_FORMATS, in the order the README gives them, then reports/interop
        parser.add_argument("--format", required=True,
                            choices=[*FILE_FORMATS, "inspect", "swebench-jsonl"])
        parser.add_argument("-o", "--output", metavar="FILE|DIR",
                            help="where to write the report (- for standard output); with "
                                 "--format inspect, the folder for the new logs (default: "
                                 "--log-dir's)")
        parser.add_argument("--log-dir", metavar="DIR",
                            help="--format inspect: the folder of the inspect logs the run was "
                                 "imported from (read, never changed)")
        parser.add_argument("--epoch", type=int, metavar="N",
                            help="--format inspect: the epoch the run was imported at (default 1, "
                                 "as import_run)")

    def run(self, *, session, format, output, log_dir, epoch, **options):
        if format == "inspect":
            if not log_dir:
                raise CommandError("--format inspect: name the logs' folder with --log-dir DIR")
            if epoch is not None and epoch < 1:
                raise CommandError(f"--epoch: {epoch} is not an epoch (1, 2, …)")
            return self.inspect(session, Path(log_dir), Path(output or log_dir), epoch or 1)
        if log_dir or epoch is not None:
            raise CommandError("--log-dir and --epoch go with --format inspect only")
        if not output:
            raise CommandError(f"--format {format}: name the file with -o FILE (- for standard "
                               "output)")
        report = build_report(get_session(session))
        if format == "swebench-jsonl":
            try:
                data = swebench_jsonl(report)
            except ExportError as error:
                raise CommandError("\n".join(error.lines)) from None
        else:
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

    def inspect(self, session_id, log_dir: Path, out_dir: Path, epoch: int) -> dict:
        for what, folder in (("--log-dir", log_dir), ("--output", out_dir)):
            if not folder.is_dir():
                raise CommandError(f"{what}: {folder} is not a folder")
        session = get_session(session_id)
        report = build_report(session)  # refused (Conflict) before the reveal
        report_bytes = render_report(report, "json")
        report_sha256 = hashlib.sha256(report_bytes).hexdigest()
        report_path = out_dir / f"blindjudge-s{session.pk}.report.json"
        logs, skipped = [], []
        for path in sorted(log_dir.iterdir()):
            if EXPORTED.search(path.name) or not (
                    path.name.endswith(".eval") or INSPECT_JSON_LOG.match(path.name)):
                continue
            data = _read(path)
            try:
                logs.append((read_log(path.name, data), data))
            except ExportError as error:
                skipped.append(error.lines[0])
        if not logs:
            raise CommandError(f"--log-dir: no inspect log in {log_dir}"
                               + "".join(f"\n{line}" for line in capped(skipped)))
        try:
            plan = plan_inspect(report, logs, epoch=epoch, report_file=report_path.name,
                                report_sha256=report_sha256)
        except ExportError as error:
            raise CommandError("\n".join(error.lines)) from None
        targets = [(out_dir / _exported_name(name, session.pk), data, copies)
                   for name, data, copies in plan["logs"]]
        existing = [str(path) for path in [report_path, *(t[0] for t in targets)] if path.exists()]
        if existing:
            raise CommandError("exported files are never overwritten; already there: "
                               + ", ".join(existing))
        for path, data in [(report_path, report_bytes), *((p, d) for p, d, _ in targets)]:
            try:
                with path.open("xb") as written:
                    written.write(data)
            except OSError as error:
                raise CommandError(f"cannot write {path}: {error.strerror}") from None
        return {
            "session": session.pk, "format": "inspect", "epoch": epoch,
            "report": str(report_path), "report_sha256": report_sha256,
            "logs": [{"from": name, "file": str(path), "copies": copies}
                     for (name, _, _), (path, _, copies) in zip(plan["logs"], targets, strict=True)],
            "copies_matched": plan["matched"], "copies_unchecked": plan["unchecked"],
            "not_found": plan["not_found"], "logs_without_copies": plan["untouched_logs"],
            "unreadable": skipped,
        }

    def describe(self, result):
        if result["format"] != "inspect":
            return [f"wrote the {result['format']} report of session {result['session']} to "
                    f"{result['file']} ({result['bytes']} bytes)"]
        lines = [f"wrote the report of session {result['session']} to {result['report']} "
                 f"(sha256 {result['report_sha256']})"]
        lines += [f"wrote {log['file']}: {log['copies']} copies scored (from {log['from']})"
                  for log in result["logs"]]
        checked = result["copies_matched"] - result["copies_unchecked"]
        lines.append(f"{result['copies_matched']} copies matched at epoch {result['epoch']}, "
                     f"{checked} of them checked against the imported copy's hash")
        if result["not_found"]:
            lines.append(f"{len(result['not_found'])} copies of the run are in none of the logs:")
            shown = capped([f"  not found: {copy}" for copy in result["not_found"]])
            lines += [line if line.startswith("  ") else f"  {line}" for line in shown]
        lines += [f"left as it was (no copy of the run): {name}"
                  for name in result["logs_without_copies"]]
        lines += [f"not read: {line}" for line in result["unreadable"]]
        return lines


def _exported_name(name: str, session: int) -> str:
    stem, _, extension = name.rpartition(".")
    return f"{stem}.blindjudge-s{session}.{extension}"


def _read(path: Path) -> bytes:
    try:
        return read_regular_file(str(path), MAX_TOTAL_BYTES)
    except NotARegularFile as error:
        raise CommandError(f"{path} is {error.kind}, not a log file") from None
    except FileTooLarge as error:
        raise CommandError(f"{path}: {error}") from None
    except OSError as error:
        raise CommandError(f"cannot read {path}: {error.strerror}") from None
