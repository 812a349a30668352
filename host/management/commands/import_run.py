import os

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
        parser.add_argument("--cluster", default="", metavar="task|none|repo|eval|COLUMN",
                            help="how tasks group into the report's resampling units: each "
                                 "task its own (task, none: the default, but a table's cluster "
                                 "column), SWE-bench's repository (repo), inspect's eval task "
                                 "(eval), or a table's COLUMN")
        parser.add_argument("--again", action="store_true",
                            help="import it even if one of the host's runs has the same manifest")
        parser.add_argument("--family", action="append", default=[], metavar="MODEL=ORG",
                            help="the organisation that trained MODEL (repeatable; overrides the "
                                 "built-in table)")
        swebench = parser.add_argument_group("--from swebench")
        swebench.add_argument("--predictions", nargs="+", action="extend", default=[], metavar="F")
        swebench.add_argument("--report", nargs="+", action="extend", default=[], metavar="F")
        swebench.add_argument("--dataset", metavar="F")
        swebench.add_argument("--instances", type=int, metavar="N")
        swebench.add_argument("--seed", default="0", metavar="S")
        swebench.add_argument("--instance-ids", nargs="+", action="extend", default=[],
                              metavar="ID", help="import exactly these instances")
        swebench.add_argument("--instances-file", metavar="F",
                              help="the instances to import, one id a line (or a JSON list)")
        swebench.add_argument("--empty-patch", choices=("fail", "unknown"), default="fail",
                              help="the truth of an empty patch (default fail: unresolved, as "
                                   "SWE-bench counts it)")
        swebench.add_argument("--run-dir", nargs="+", action="extend", default=[], metavar="DIR",
                              help="a run's folder: its preds.json or all_preds.jsonl, its "
                                   "results/results.json and report.json files and its "
                                   "mini-swe-agent trajectories, found by name")
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
        tables.add_argument("--outputs-per-builder", nargs="+", action="extend", default=[],
                            metavar="MODEL=FILE",
                            help="one table of outputs per builder, each with its model")
        tables.add_argument("--truth-equals", default="", metavar="PRED=ANSWER",
                            help="a copy's truth from two columns: tests_pass where they hold "
                                 "the same answer, tests_fail where they differ")
        tables.add_argument("--builder-family")
        tables.add_argument("--reviews", metavar="F")
        tables.add_argument("--review-map", default="", metavar="TARGET=COLUMN,…")
        tables.add_argument("--format", dest="copy_format", default="text",
                            choices=("text", "markdown", "diff"),
                            help="how the copies are shown (default text)")

    def run(self, *, bundle, host, source_format=None, again=False, **options):
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
        run = run_import(host=owner, raw=raw, actor=f"host:{owner.user.username}", places=places,
                         again=again)
        result = {"run": run.pk, "name": run.name, "copies": run.copies.count(),
                  "findings": run.findings.count(), "manifest_sha256": run.manifest_sha256,
                  "seals": dict(_count_seals(run))}
        comparisons = dict(_count_seals(run, run.comparisons))
        if comparisons:  # named only where there are some: other runs print as before
            result["comparisons"] = comparisons
        if summary is not None:
            result["summary"] = summary
        return result

    def describe(self, result):
        seals = _seal_counts(result["seals"]) or "no reviews"
        lines = summary_lines(result["summary"]) if "summary" in result else []
        compared = ([f"comparisons: {_seal_counts(result['comparisons'])}"]
                    if "comparisons" in result else [])
        return [*lines, f"run {result['run']} imported: {result['name']}",
                f"{result['copies']} copies, {result['findings']} findings; reviews: {seals}",
                *compared, f"manifest sha256: {result['manifest_sha256']}"]


def _convert(source_format: str, outputs: str | None, options: dict):
    def sources(paths):
        return [Source(path, _read(path, path)) for path in paths]

    def one(path):
        return Source(path, _read(path, path)) if path else None

    per_builder = []
    for given in options["outputs_per_builder"]:
        model, equals, path = given.partition("=")
        if not equals or not model.strip() or not path:
            raise CommandError(f'--outputs-per-builder: "{given}" is not MODEL=FILE')
        per_builder.append((model.strip(), path))
    if source_format in ("jsonl", "csv") and not outputs and not per_builder:
        raise CommandError(f"--from {source_format}: name the table of outputs (or "
                           "--outputs-per-builder MODEL=FILE …)")
    found = _run_dirs(options.get("run_dir") or [], options.get("instance_ids") or [])
    request = ImportRequest(
        format=source_format, outputs=one(outputs) if source_format in ("jsonl", "csv") else None,
        reviews=one(options.get("reviews")),
        predictions=sources([*options["predictions"], *found["predictions"]]),
        reports=sources([*options["report"], *found["reports"]]),
        dataset=one(options.get("dataset")),
        logs=sources(options["log"]), column_map=options["map"], values=options["values"],
        review_map=options["review_map"], builder=options.get("builder"),
        builder_family=options.get("builder_family"), copy_format=options["copy_format"],
        instances=options.get("instances"), seed=options["seed"],
        instance_ids=options.get("instance_ids") or [],
        instances_file=one(options.get("instances_file")),
        empty_patch=options.get("empty_patch") or "fail",
        trajectories=sources(found["trajectories"]),
        truth_scorer=options.get("truth_scorer"), truth_values=options["truth_values"],
        review_scorer=options.get("review_scorer"), grader=options.get("grader"),
        epoch=options["epoch"],
        families=options["family"], name=options["name"], truth_equals=options["truth_equals"],
        cluster=options["cluster"],
        outputs_per_builder=sources(path for _, path in per_builder),
        per_builder_models=[model for model, _ in per_builder])
    try:
        return convert(request)
    except ConversionError as error:
        raise CommandError("\n".join(error.lines())) from None


def _run_dirs(folders: list[str], instance_ids: list[str]) -> dict[str, list[str]]:
    """The files of each `--run-dir`, by name: predictions (`preds.json`, mini-swe-agent's;
    `all_preds.jsonl`, the experiments'), reports (`results/results.json`, every `report.json`)
    and trajectories (`*.traj.json`; with --instance-ids, only those instances'). Links are not
    followed; the files are read as any other (a regular file within the size limit)."""
    found = {"predictions": [], "reports": [], "trajectories": []}
    wanted = {x for entry in instance_ids for x in entry.replace(",", " ").split()}
    for folder in folders:
        if not os.path.isdir(folder):
            raise CommandError(f"--run-dir: {folder} is not a folder")
        for root, dirs, files in os.walk(folder):
            dirs.sort()
            for name in sorted(files):
                path = os.path.join(root, name)
                if name in ("preds.json", "all_preds.jsonl"):
                    found["predictions"].append(path)
                elif name == "report.json" or (name == "results.json"
                                               and os.path.basename(root) == "results"):
                    found["reports"].append(path)
                elif name.endswith(".traj.json") and (
                        not wanted or name[:-len(".traj.json")] in wanted):
                    found["trajectories"].append(path)
        if not any(p.startswith(folder) for p in found["predictions"]):
            raise CommandError(f"--run-dir: {folder} holds no preds.json or all_preds.jsonl")
    return found


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


def _count_seals(run, rows=None):
    """(seal, how many) of the run's reviews, or of `rows` (its comparisons)."""
    rows = run.reviews if rows is None else rows
    return rows.values_list("seal").annotate(n=Count("id")).values_list("seal", "n")


def _seal_counts(seals: dict) -> str:
    return ", ".join(f"{n} {k}" for k, n in sorted(seals.items()))
