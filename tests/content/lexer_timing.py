"""Times lexers on adversarial inputs at two sizes; run as a process of its own by
tests/content/test_lexer_bounds.py (`python -m tests.content.lexer_timing SPEC`), since a lexer that
backtracks holds the GIL and can only be stopped by a signal to the main thread.

SPEC (JSON): {"lexers": {label: [[module, class] or "allowlist:NAME", [input names] or null
(all)]}, "n": size, "k": factor}. Prints JSON: per label, the CPU seconds spent, the inputs
flagged (with their small and large times; None: stopped at the cap) and the largest ratio among
the others timed above the floor.

Each input is lexed at about n and k * n characters and timed in CPU seconds (time.process_time:
other processes on a shared machine do not count, as wall time would). Flagged: either size
stopped at CAP_WALL_S (a SIGALRM: `re` checks for signals as it backtracks), or the large one over
CAP_CPU_S, or, when it took at least FLOOR_S (below, timer noise is the ratio), more than
RATIO_LIMIT * k times the small one. Linear growth is a ratio near k (8-9 for the allowlist at
k = 8); quadratic, near k * k. A suspect is measured again (the fastest of five small and three
large runs) before it counts. Not used: ITIMER_VIRTUAL, which on this machine made process_time
coarse.
"""

import importlib
import json
import signal
import sys
import time

CAP_WALL_S = 1.0
CAP_CPU_S = 0.25
FLOOR_S = 0.004
RATIO_LIMIT = 3.0  # times k: k = 8 gives 24, where quadratic growth is 64

OPENERS = ['"', "'", "`", '"""', "'''", "/*", "<!--", "<script>", "${", "$(", "{{", "(", "[",
           "{", "<", "\\", "#", "//", "--", "%", "@", "<<EOF", "=", ":", "*", "?", ".", "&",
           "|", "-", " ", "\t", "\n", "a", "0", "a:", '"\\', "\\a", "- ", "[a]", "#include"]


def inputs(n: int) -> dict[str, str]:
    """The family at about n characters: each opener repeated, alone and before a newline and a
    space; unclosed before n backslash-escapes (maple's `"` then `\\a` x 25) and n letters; after
    n newlines and n spaces; and a few whole texts."""
    out = {}
    for o in OPENERS:
        out[f"{o!r} * k"] = o * max(1, n // len(o))
        out[f"({o!r} + newline) * k"] = (o + "\n") * max(1, n // (len(o) + 1))
        out[f"({o!r} + space) * k"] = (o + " ") * max(1, n // (len(o) + 1))
        out[f"{o!r} + '\\\\a' * k"] = o + "\\a" * (n // 2)
        out[f"{o!r} + 'a' * n"] = o + "a" * n
        out[f"newline * n + {o!r}"] = "\n" * n + o
        out[f"space * n + {o!r}"] = " " * n + o
    out["(space + newline) * k"] = " \n" * (n // 2)
    out["indented lines"] = ("    " * 4 + "x\n") * (n // 18)
    out["one long line of words"] = "ab " * (n // 3)
    return out


class Stopped(Exception):
    pass


def _stop(*_):
    raise Stopped


def lex_time(lexer, text: str) -> float | None:
    signal.setitimer(signal.ITIMER_REAL, CAP_WALL_S)
    started = time.process_time()
    try:
        for _ in lexer.get_tokens(text):
            pass
        return time.process_time() - started
    except Stopped:
        return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def timed(lexer, small: str, large: str, k: int) -> tuple[float | None, float | None, bool]:
    """The small and large inputs' times (None: stopped at the cap), and whether the growth is
    not near-linear."""
    t_small = lex_time(lexer, small)
    if t_small is None:
        return None, None, True
    t_large = lex_time(lexer, large)

    def suspect():
        return t_large is None or t_large > CAP_CPU_S or (
            t_large >= FLOOR_S and t_large > RATIO_LIMIT * k * t_small)

    if not suspect():
        return t_small, t_large, False
    if t_large is not None and t_large <= CAP_CPU_S:  # again, the fastest of three, to be sure
        smalls = [lex_time(lexer, small) for _ in range(4)]
        larges = [lex_time(lexer, large) for _ in range(2)]
        t_small = min(t for t in [t_small, *smalls] if t is not None)
        t_large = min(t for t in [t_large, *larges] if t is not None)
    return t_small, t_large, suspect()


def make(spec):
    if isinstance(spec, str) and spec.startswith("allowlist:"):
        from content.rendering import HIGHLIGHT_LEXERS  # noqa: PLC0415 - the tree under test

        cls = HIGHLIGHT_LEXERS[spec.removeprefix("allowlist:")]
    else:
        module, name = spec
        cls = getattr(importlib.import_module(module), name)
    return cls(stripnl=False, ensurenl=False)


def main(argv):
    spec = json.loads(argv[1])
    n, k = spec["n"], spec["k"]
    small, large = inputs(n), inputs(n * k)
    signal.signal(signal.SIGALRM, _stop)
    report = {}
    for label, (lexer_spec, only) in spec["lexers"].items():
        lexer = make(lexer_spec)
        names = only or list(small)
        started = time.process_time()
        bad, worst = {}, (0.0, "")
        for name in names:
            t_small, t_large, suspect = timed(lexer, small[name], large[name], k)
            if suspect:
                bad[name] = (t_small, t_large)
            elif t_large >= FLOOR_S:
                worst = max(worst, (round(t_large / max(t_small, 1e-9), 1), name))
        report[label] = {"cpu_s": round(time.process_time() - started, 3), "flagged": bad,
                         "worst_ratio": worst}
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv)
