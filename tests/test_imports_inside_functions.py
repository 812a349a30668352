"""Imports inside functions only for a reason from the fixed list in docs/architecture.md
("Imports inside functions"), written on the import's own line after ruff's PLC0415 exception:

    from judging.services import opening_failed  # noqa: PLC0415 - cycle: the services import this module

Everything else imports at the top of its module, where a reader (and import-linter) sees it."""

import ast
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.pure

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ["blindjudge", "content", "accounts", "judging", "reports", "host", "judge", "bench"]
REASONS = ("after setup", "after sys.path", "lazy", "cycle", "order")
EXPLAINED = re.compile(r"#\s*noqa: PLC0415(?:, [A-Z]+\d+)* - (?:" + "|".join(map(re.escape, REASONS))
                       + r")\b")


def unexplained(source: str, name: str = "<source>") -> list[str]:
    """`name:line` of each import inside a function without a listed reason on its line."""
    lines = source.split("\n")
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for inner in ast.walk(node):
                if (isinstance(inner, ast.Import | ast.ImportFrom)
                        and not EXPLAINED.search(lines[inner.lineno - 1])):
                    found.append(f"{name}:{inner.lineno}")
    return sorted(set(found))


def test_the_check_finds_an_import_inside_a_function_without_a_listed_reason():
    source = ("def late():\n"
              "    import json  # noqa: PLC0415 - because\n"
              "    import csv\n"
              "    from os import path  # noqa: PLC0415 - lazy: only this path needs it\n"
              "    from judging import services  # noqa: PLC0415, F401 - cycle: services import us\n"
              "import re\n")
    assert unexplained(source) == ["<source>:2", "<source>:3"]


def test_every_import_inside_a_function_says_why_from_the_list():
    found = []
    for package in CHECKED:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "migrations" not in path.parts:
                found += unexplained(path.read_text("utf-8"), str(path.relative_to(ROOT)))
    assert found == []


def test_the_list_is_the_one_docs_architecture_gives():
    doc = (ROOT / "docs" / "architecture.md").read_text("utf-8")
    section = doc[doc.index("## Imports inside functions"):]
    listed = re.findall(r"^- `([^`]+)`", section, re.M)
    assert tuple(listed) == REASONS
