"""The rooms' boundaries (pyproject.toml's import-linter contracts, docs/architecture.md) hold, and
each contract is shown to break on a deliberate violation, so that its silence on the real tree
counts.

Each case copies the project's packages into a temporary folder, adds one forbidden import and
runs `lint-imports` there; the contract that forbids it must report BROKEN.
"""

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["importlinter"]
PACKAGES = CONFIG["root_packages"]
CONTRACTS = [contract["name"] for contract in CONFIG["contracts"]]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

# (contract, module file, the import added to it): each an import that passed every contract
# before they were written as allow-lists (issue 26), or one per contract.
VIOLATIONS = [
    ("content imports none of the project's packages", "content/canonical.py", "django.utils.html"),
    ("content imports none of the project's packages", "content/draws.py", "judging.models"),
    ("content imports none of the project's packages", "content/scoring.py", "asgiref.sync"),
    ("content imports none of the project's packages", "content/normalise.py", "whitenoise"),
    ("Layers:", "judging/audit.py", "reports.stats"),
    ("Layers:", "accounts/guards.py", "judging.models"),
    ("The host's pages and the judge's are independent", "host/views/common.py", "judge.views"),
    ("The host's pages and the judge's are independent", "judge/github.py", "host.forms"),
    ("The judge's pages import only what a judge may be shown", "judge/views.py", "judging.models"),
    ("The judge's pages import only what a judge may be shown", "judge/pages.py",
     "judging.selectors.host"),
    ("The judge's pages import only what a judge may be shown", "judge/consumers.py",
     "judging.selectors.live"),
    ("The host's pages import only the host's reads", "host/judge_rows.py", "accounts.models"),
    ("The host's pages import only the host's reads", "host/views/runs.py", "judging.blinding"),
    ("The serving process never loads numpy or scipy", "host/views/reports.py", "reports.build"),
    ("The serving process never loads numpy or scipy", "judge/views.py", "scipy.stats"),
    # through the judge's scorecard: judge.views -> judging.selectors.scorecard -> numpy
    ("The serving process never loads numpy or scipy", "judging/selectors/scorecard.py", "numpy"),
    ("A judge's scorecard reads none of the host's report", "judging/selectors/scorecard.py",
     "reports.render"),
    ("Only the URL and websocket routing modules import the pages", "blindjudge/wsgi.py", "host.urls"),
    ("The project package imports no app but from its wiring", "blindjudge/credential_paths.py",
     "judging.models"),
    ("The project package imports no app but from its wiring", "blindjudge/settings.py",
     "accounts.guards"),
    ("pandas, datasets and pyarrow are for tests only", "reports/export.py", "pandas"),
    ("inspect-ai is for tests only", "reports/interop.py", "inspect_ai.log"),
]


def lint(tree: Path) -> tuple[dict[str, str], str]:
    """Each contract's verdict ("KEPT" or "BROKEN") on the tree, and what lint-imports printed."""
    env = {**os.environ, "PYTHONPATH": str(tree), "COLUMNS": "400", "NO_COLOR": "1"}
    done = subprocess.run([str(LINT_IMPORTS), "--no-cache", "--config", str(tree / "pyproject.toml")],
                          cwd=tree, env=env, capture_output=True, text=True, timeout=300)
    verdicts = {}
    for name in CONTRACTS:
        found = re.search(re.escape(name) + r"\s+(KEPT|BROKEN)", done.stdout)
        assert found, f"no verdict for {name!r} in:\n{done.stdout}\n{done.stderr}"
        verdicts[name] = found.group(1)
    return verdicts, done.stdout


def copy_of_the_project(destination: Path) -> Path:
    for package in PACKAGES:
        shutil.copytree(ROOT / package, destination / package,
                        ignore=shutil.ignore_patterns("__pycache__", "migrations"))
    shutil.copy(ROOT / "pyproject.toml", destination / "pyproject.toml")
    # The allowlist contract type, which lint-imports loads from its working directory.
    (destination / "tests" / "support").mkdir(parents=True)
    for init in ("tests/__init__.py", "tests/support/__init__.py"):
        (destination / init).touch()
    shutil.copy(ROOT / "tests" / "support" / "import_contracts.py",
                destination / "tests" / "support" / "import_contracts.py")
    return destination


def test_every_contract_is_kept_by_the_code_as_it_is(tmp_path):
    assert lint(copy_of_the_project(tmp_path))[0] == dict.fromkeys(CONTRACTS, "KEPT")


def _report_of(output: str, contract: str) -> str:
    """What lint-imports printed under a broken contract's name (its illegal imports)."""
    start = output.rindex(contract)  # the verdict line comes first, the report after
    following = [output.find(name, start + len(contract)) for name in CONTRACTS if name != contract]
    ends = [index for index in following if index > start]
    return output[start:min(ends, default=len(output))]


def test_every_deliberate_violation_breaks_its_contract(tmp_path):
    """Every import of VIOLATIONS planted in one copy of the tree: each one's contract reports
    BROKEN and names that import (a contract broken by another plant does not count for it)."""
    tree = copy_of_the_project(tmp_path)
    for _, module, imported in VIOLATIONS:
        with (tree / module).open("a", encoding="utf-8") as source:
            source.write(f"\nimport {imported}  # a deliberate violation\n")
    verdicts, output = lint(tree)
    missed = []
    for contract, module, imported in VIOLATIONS:
        [name] = [name for name in CONTRACTS if name.startswith(contract)]
        importer = module.removesuffix(".py").replace("/", ".").removesuffix(".__init__")
        report = _report_of(output, name)
        # A third-party package is one node of the graph: `scipy.stats` is reported as `scipy`.
        targets = {imported, imported.split(".")[0]}
        named = any(f"{importer} may not import {target}" in report
                    or f"{importer} -> {target}" in report for target in targets)
        if verdicts[name] != "BROKEN" or not named:
            missed.append((contract, module, imported))
    assert missed == [], (missed, output)


def test_every_folder_of_code_is_a_package_the_linter_can_see():
    """A folder of modules without __init__.py is a namespace package, which import-linter leaves
    out of its graph: its imports would break no contract (host/views was missed so once)."""
    missing = sorted(
        str(folder.relative_to(ROOT)) for package in PACKAGES
        for folder in [ROOT / package, *(ROOT / package).rglob("*")]
        if folder.is_dir() and any(folder.glob("*.py")) and not (folder / "__init__.py").exists()
    )
    assert missing == []
