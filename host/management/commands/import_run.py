from django.conf import settings
from django.core.management.base import CommandError
from django.db.models import Count

from blindjudge.commands import FileTooLarge, HostCommand, NotARegularFile, read_regular_file
from content.importers.common import ConversionError, Source
from content.importers.conversion import FORMATS, ImportRequest, bundle_bytes, summary_lines
from judging.importing import convert
from judging.selectors.commands import get_host
from judging.services import run_import


class Command(HostCommand):
    help = ("Import a run for a host and print the run id: a bundle (blindjudge.run/1 or /2), or "
            "with --from, SWE-bench predictions and reports, inspect-ai logs, or a JSONL/CSV table "
            "of outputs, converted and validated whole before anything is written.")

    def add_command_arguments(self, parser):
        parser.add_argument("bundle", nargs="?",
                            help="the bundle JSON file; with --from jsonl|csv, the table of outputs")
        parser.add_argument("--host", required=True, help="the owning host's username")
        parser.add_argument("--from", dest="source_format", choices=FORMATS,
                            help="convert from this format instead of reading a bundle")
        parser.add_argument("--name", default="", help="the run's name (default: from the files)")
        parser.add_argument("--family", action="append", default=[], metavar="MODEL=ORG",
                            help="the organisation that trained MODEL (repeatable; overrides the "
                                 "built-in table)")
        swebench = parser.add_argument_group("--from swebench")
        swebench.add_argument("--predictions", nargs="+", action="extend", default=[], metavar="F")
        swebench.add_argument("--report", nargs="+", action="extend", default=[], metavar="F")
        swebench.add_argument("--dataset", metavar="F")
        swebench.add_argument("--instances", type=int, metavar="N")
        swebench.add_argument("--seed", default="0", metavar="S")
        inspect = parser.add_argument_group("--from inspect")
        inspect.add_argument("--log", nargs="+", action="extend", default=[], metavar="F")
        inspect.add_argument("--truth-scorer")
        inspect.add_argument("--truth-values", default="", metavar="C=tests_pass,I=tests_fail")
        inspect.add_argument("--review-scorer")
        inspect.add_argument("--grader", metavar="MODEL",
                             help="the review scorer's grader model, for finished logs that do not "
                                  "record it (its family: the built-in table or --family)")
        inspect.add_argument("--epoch", type=int, default=1)
        tables = parser.add_argument_group("--from jsonl|csv")
        tables.add_argument("--map", default="", metavar="TARGET=COLUMN,…")
        tables.add_argument("--values", default="", metavar="FIELD:VALUE=TARGET,… …")
        tables.add_argument("--builder")
        tables.add_argument("--builder-family")
        tables.add_argument("--reviews", metavar="F")
        tables.add_argument("--review-map", default="", metavar="TARGET=COLUMN,…")
        tables.add_argument("--format", dest="copy_format", default="text",
                            choices=("text", "markdown", "diff"),
                            help="how the copies are shown (default text)")

    def run(self, *, bundle, host, source_format=None, **options):
        owner = get_host(host)
        summary = places = None
        if source_format is None:
            if not bundle:
                raise CommandError("name the bundle file, or give --from FORMAT")
            raw = _read(bundle, "bundle")
        else:
            imported = _convert(source_format, bundle, options)
            summary, places = imported.summary, imported.places
            raw = bundle_bytes(imported)
        run = run_import(host=owner, raw=raw, actor=f"host:{owner.user.username}", places=places)
        result = {"run": run.pk, "name": run.name, "copies": run.copies.count(),
                  "findings": run.findings.count(), "manifest_sha256": run.manifest_sha256,
                  "seals": dict(_count_seals(run))}
        if summary is not None:
            result["summary"] = summary
        return result

    def describe(self, result):
        seals = ", ".join(f"{n} {k}" for k, n in sorted(result["seals"].items())) or "no reviews"
        lines = summary_lines(result["summary"]) if "summary" in result else []
        return [*lines, f"run {result['run']} imported: {result['name']}",
                f"{result['copies']} copies, {result['findings']} findings; reviews: {seals}",
                f"manifest sha256: {result['manifest_sha256']}"]


def _convert(source_format: str, outputs: str | None, options: dict):
    def sources(paths):
        return [Source(path, _read(path, path)) for path in paths]

    def one(path):
        return Source(path, _read(path, path)) if path else None

    if source_format in ("jsonl", "csv") and not outputs:
        raise CommandError(f"--from {source_format}: name the table of outputs")
    request = ImportRequest(
        format=source_format, outputs=one(outputs) if source_format in ("jsonl", "csv") else None,
        reviews=one(options.get("reviews")), predictions=sources(options["predictions"]),
        reports=sources(options["report"]), dataset=one(options.get("dataset")),
        logs=sources(options["log"]), column_map=options["map"], values=options["values"],
        review_map=options["review_map"], builder=options.get("builder"),
        builder_family=options.get("builder_family"), copy_format=options["copy_format"],
        instances=options.get("instances"), seed=options["seed"],
        truth_scorer=options.get("truth_scorer"), truth_values=options["truth_values"],
        review_scorer=options.get("review_scorer"), grader=options.get("grader"),
        epoch=options["epoch"],
        families=options["family"], name=options["name"])
    try:
        return convert(request)
    except ConversionError as error:
        raise CommandError("\n".join(error.lines())) from None


def _read(path_text: str, what: str) -> bytes:
    """A bundle or an importer's file: a regular file of at most the bundle limit, judged on the
    open descriptor and read no further than the limit (blindjudge.commands.read_regular_file):
    a link to a device or a FIFO is refused at once, never read without end or waited on."""
    limit = settings.BLINDJUDGE_MAX_BUNDLE_BYTES
    try:
        return read_regular_file(path_text, limit)
    except FileNotFoundError:
        raise CommandError(f"no such file: {path_text}") from None
    except NotARegularFile as error:
        kind = "a bundle file" if what == "bundle" else "a regular file"
        raise CommandError(f"{path_text} is {error.kind}, not {kind}") from None
    except FileTooLarge as error:
        raise CommandError(f"{what}: {error}") from None
    except OSError as error:
        raise CommandError(f"cannot read {path_text}: {error.strerror}") from None


def _count_seals(run):
    return run.reviews.values_list("seal").annotate(n=Count("id")).values_list("seal", "n")
