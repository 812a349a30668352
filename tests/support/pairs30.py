"""pairs30: a real two-builder SWE-bench Verified run of 40 tasks, for pairwise judging (issue 31).

The committed files (tests/data/pairs30/, sources and trimming in tests/data/README.md, "pairs30")
are two public runs over the same 40 SWE-bench Verified instances, kept in the layouts their
authors published:
- Vorflux (Claude Opus 4.6 writing, GPT-5.5 reviewing), a swe-bench/experiments run folder
  (`all_preds.jsonl`, `results/results.json`);
- mini-swe-agent 1.15.0 with `google/gemini-3-pro-preview`, a mini-swe-agent run folder
  (`trajs/preds.json`) and its sb-cli run report, renamed `<model>.<run_id>.json`;
- the 40 dataset rows (`dataset.jsonl`: instance_id, repo, problem_statement).

Everything here goes through the product's own SWE-bench import, the way a host types it: the
two run folders given whole to `--run-dir` (several runs of the same instances, one run of two
builders), the sb-cli report with `--report`, the rows with `--dataset`. Nothing is written by
hand: `bundle()` is what `import_run --from swebench` converts (the command's own run-folder walk,
then the conversion its child process runs), and `import_run_for(host)` runs the command itself.

The figures the README states (and tests/content/test_pairs30_data.py checks) are below: TASKS,
the BUILDERS and each one's truths.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from django.core.management import call_command

from content.importers.common import Imported, Source
from content.importers.conversion import ImportRequest, convert_in_process
from host.management.commands.import_run import _run_dirs
from judging.models import Run

DATA = Path(__file__).resolve().parents[1] / "data" / "pairs30"
VORFLUX = "vorflux_opus46-code_gpt55h-review"
GEMINI = "google/gemini-3-pro-preview"
VORFLUX_RUN = DATA / "experiments" / "evaluation" / "verified" / f"20250519_{VORFLUX}"
MINI_RUN = DATA / "mini" / "20251118_gemini-3-pro-74pct"
GEMINI_REPORT = (MINI_RUN / "trajs" / "sb-cli-reports"
                 / "google__gemini-3-pro-preview.20251118_mini-v1.15.0_gemini-3-pro-preview-20251118.json")
DATASET = DATA / "dataset.jsonl"
# Vorflux is no model name the built-in family table knows; its code is written by Claude.
FAMILIES = [f"{VORFLUX}=Anthropic"]
NAME = "SWE-bench Verified, 40 tasks: Vorflux against mini-swe-agent with Gemini 3 Pro"

# What the README states, checked by tests/content/test_pairs30_data.py.
TASKS = 40
BUILDERS = {VORFLUX: {"tests_pass": 36, "tests_fail": 4},
            GEMINI: {"tests_pass": 30, "tests_fail": 10}}
# Instances where exactly one builder's patch resolved: Vorflux's, every time.
SPLIT = ("django__django-10554", "mwaskom__seaborn-3069", "mwaskom__seaborn-3187",
         "psf__requests-1921", "psf__requests-2317", "scikit-learn__scikit-learn-26194")


def command_args(host_username: str) -> list[str]:
    """`import_run`'s arguments for these files, as a host would type them."""
    return ["--from", "swebench", "--host", host_username,
            "--run-dir", str(VORFLUX_RUN), str(MINI_RUN),
            "--report", str(GEMINI_REPORT),
            "--dataset", str(DATASET),
            *[x for family in FAMILIES for x in ("--family", family)],
            "--name", NAME]


def request() -> ImportRequest:
    """The ImportRequest `import_run` builds from `command_args`: the run folders walked by the
    command's own `_run_dirs` (predictions, reports, trajectories by name), every file read."""
    found = _run_dirs([str(VORFLUX_RUN), str(MINI_RUN)], [])

    def sources(paths):
        return [Source(str(path), Path(path).read_bytes()) for path in paths]

    return ImportRequest(
        format="swebench", predictions=sources(found["predictions"]),
        reports=sources([*found["reports"], GEMINI_REPORT]),
        trajectories=sources(found["trajectories"]),
        dataset=Source(str(DATASET), DATASET.read_bytes()), families=list(FAMILIES), name=NAME)


def imported() -> Imported:
    """The conversion itself (content.importers.conversion.convert_in_process, what the import's
    child process runs): `.bundle`, the blindjudge.run/2 bundle, and `.summary`."""
    return convert_in_process(request())


def bundle() -> dict:
    """The run bundle `import_run --from swebench` makes of the pairs30 files."""
    return imported().bundle


def import_run_for(host) -> tuple[Run, dict]:
    """Import the pairs30 run for `host` with the `import_run` command (the child-process
    conversion, validation and the one-transaction write); the Run and the command's JSON."""
    out = io.StringIO()
    call_command("import_run", *command_args(host.user.get_username()), "--json", stdout=out,
                 stderr=io.StringIO())
    result = json.loads(out.getvalue())
    return Run.objects.get(pk=result["run"]), result
