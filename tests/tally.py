"""Counts what the suite checks, so a change that makes it faster can show it checks no less.

    python tests/tally.py            # per folder and in all: test functions, assertions
    python tests/tally.py --collect  # also the tests pytest collects (runs `pytest --collect-only`)

Assertions are counted from the source, statically: each `assert` statement, each Playwright
`expect(...)` chain, each `pytest.raises` / `pytest.warns` block and each `assert_*` helper call
(`observer.assert_silent()`, `assert_no_leak(...)`, ...). A merge of two tests that checked the
same thing the same way lowers the functions, not the assertions; any other drop is a check lost.
"""

import ast
import subprocess
import sys
from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _called_name(call: ast.Call) -> str:
    function = call.func
    if isinstance(function, ast.Attribute):
        return function.attr
    if isinstance(function, ast.Name):
        return function.id
    return ""


def tally(path: Path) -> Counter:
    tree = ast.parse(path.read_text(), filename=str(path))
    counts = Counter()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test_"):
            counts["test functions"] += 1
        elif isinstance(node, ast.Assert):
            counts["assert statements"] += 1
        elif isinstance(node, ast.Call):
            name = _called_name(node)
            if name == "expect":
                counts["expect() checks"] += 1
            elif name in ("raises", "warns") and isinstance(node.func, ast.Attribute):
                counts["raises/warns blocks"] += 1
            elif name.startswith("assert") and name not in ("assertion",):
                counts["assert_* helper calls"] += 1
    return counts


def main() -> int:
    by_folder: dict[str, Counter] = {}
    for path in sorted(TESTS.rglob("*.py")):
        if "node_modules" in path.parts:
            continue
        folder = path.parent.relative_to(TESTS.parent).as_posix()
        by_folder.setdefault(folder, Counter()).update(tally(path))
    total = Counter()
    kinds = ["test functions", "assert statements", "expect() checks", "raises/warns blocks",
             "assert_* helper calls"]
    print(f"{'folder':<40}" + "".join(f"{kind:>22}" for kind in kinds))
    for folder, counts in sorted(by_folder.items()):
        total.update(counts)
        print(f"{folder:<40}" + "".join(f"{counts[kind]:>22}" for kind in kinds))
    print(f"{'all':<40}" + "".join(f"{total[kind]:>22}" for kind in kinds))
    print(f"assertions in all: {sum(total[kind] for kind in kinds[1:])}")
    if "--collect" in sys.argv[1:]:
        result = subprocess.run(  # noqa: S603 - our own interpreter running pytest on our own tests
            [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:randomly"],
            cwd=TESTS.parent, capture_output=True, text=True, check=False)
        last = [line for line in result.stdout.splitlines() if "collected" in line or "tests" in line]
        print("pytest:", last[-1] if last else result.stdout[-500:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
