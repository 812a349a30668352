"""Where the suite's minutes go, from pytest's `--durations=0` output (tests/README.md keeps one).

    ./bj test -q --durations=0 > run.log; python tests/durations.py run.log [more.log ...]

Prints the time by phase (setup, call, teardown) for the browser tests (tests/e2e/) and the rest,
the longest setups elsewhere (a worker's first makes and migrates its test database), and the 30 slowest tests
(setup + call + teardown), for each run in the log (`.ci/run` heads each with "== ..."). Times
are summed over the workers: with two, the run's wall time is about half their sum.
"""

import re
import sys
from collections import Counter, defaultdict

LINE = re.compile(r"^(\d+\.\d+)s (setup|call|teardown)\s+(\S+)")


def sections(path: str):
    """(title, lines) of each part of a log: `.ci/run` heads each run with a line "== ..."."""
    title, lines = path, []
    with open(path, encoding="utf-8", errors="replace") as log:
        for line in log:
            if line.startswith("== "):
                if lines:
                    yield title, lines
                title, lines = f"{path}: {line[3:].strip()}", []
            else:
                lines.append(line)
    if lines:
        yield title, lines


def report(title: str, lines: list[str]):
    per_test: dict[str, float] = defaultdict(float)
    by_part: Counter = Counter()
    first_setups = []
    for line in lines:
        match = LINE.match(line.strip())
        if not match:
            continue
        seconds, phase, nodeid = float(match[1]), match[2], match[3].split("@")[0]
        part = "browser tests (tests/e2e)" if nodeid.startswith("tests/e2e/") else "the rest"
        by_part[(part, phase)] += seconds
        per_test[nodeid] += seconds
        if phase == "setup" and not nodeid.startswith("tests/e2e/"):
            first_setups.append((seconds, nodeid))
    if not per_test:
        return
    print(f"== {title}")
    total = sum(by_part.values())
    for part in ("browser tests (tests/e2e)", "the rest"):
        phases = {phase: by_part[(part, phase)] for phase in ("setup", "call", "teardown")}
        print(f"{part:<28} " + "  ".join(f"{phase} {value:7.1f} s" for phase, value in phases.items())
              + f"  = {sum(phases.values()):7.1f} s")
    print(f"{'all tests':<28} {total:7.1f} s (summed over workers)")
    print("the longest setups outside the browser tests (a worker's first makes its database):")
    for seconds, nodeid in sorted(first_setups, reverse=True)[:5]:
        print(f"  {seconds:6.2f} s  {nodeid}")
    print("slowest 30 (setup + call + teardown):")
    for nodeid, seconds in sorted(per_test.items(), key=lambda item: -item[1])[:30]:
        print(f"  {seconds:6.2f} s  {nodeid}")


def main(paths: list[str]) -> int:
    for path in paths:
        for title, lines in sections(path):
            report(title, lines)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
