"""No Pygments lexer runs on model text without a bound (issue 25, item 1): code is highlighted only
by the lexers of content.rendering.HIGHLIGHT_LEXERS, each timed here on adversarial inputs at two
sizes and shown to grow linearly, after the same detector is shown to fire on lexers known to
backtrack (maple: exponential; cpp, c: quadratic on newlines; systemd: spaces). Every other
language, fence or file name, is plain rows. Timings run in one process of their own
(tests/content/lexer_timing.py), stopped by a timer, so a regression fails instead of hanging."""

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from content.normalise import normalise
from content.rendering import (
    HIGHLIGHT_CLASSES,
    HIGHLIGHT_EXTENSIONS,
    HIGHLIGHT_LEXERS,
    _highlighted_lines,
    _lexer_by_name,
    _lexer_for_filename,
    _PythonLexer,
    frame_body,
)

# No database, no socket, no process: run once (tests/support/pure.py); the timings say otherwise.
pytestmark = pytest.mark.pure

ROOT = Path(__file__).resolve().parents[2]
N, K = 300, 8  # each input at about 300 and 2,400 characters

# Lexers that must be flagged, with the inputs that show it (the input names of lexer_timing).
KNOWN_BAD = {
    "maple": (("pygments.lexers.maple", "MapleLexer"), "'\"' + '\\\\a' * k"),
    "cpp": (("pygments.lexers.c_cpp", "CppLexer"), "'\\n' * k"),
    "c": (("pygments.lexers.c_cpp", "CLexer"), "'\\n' * k"),
    "systemd": (("pygments.lexers.configs", "SystemdLexer"), "' ' * k"),
}


@pytest.mark.pure(False)  # times lexers in a process it can stop
def test_the_detector_fires_on_lexers_known_to_backtrack_then_passes_every_allowlisted_one():
    """One process (so one test: under xdist two tests could each start it): the known-bad
    lexers on their inputs first, then every allowlisted lexer on every input. The allowlist's
    silence counts only because the same run, on the same machine, flagged the known-bad ones."""
    lexers = {f"known bad: {name}": [list(spec), [input_name]]
              for name, (spec, input_name) in KNOWN_BAD.items()}
    lexers.update({name: [f"allowlist:{name}", None] for name in HIGHLIGHT_LEXERS})
    spec = json.dumps({"lexers": lexers, "n": N, "k": K})
    done = subprocess.run([sys.executable, "-m", "tests.content.lexer_timing", spec], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=True)
    timings = json.loads(done.stdout)

    for name, (_, input_name) in KNOWN_BAD.items():
        found = timings[f"known bad: {name}"]["flagged"]
        assert list(found) == [input_name], f"the detector missed {name}: {found}"
    # maple is exponential: stopped at the cap, not merely slow.
    assert timings["known bad: maple"]["flagged"][KNOWN_BAD["maple"][1]][1] is None

    allowed = {name: timings[name] for name in HIGHLIGHT_LEXERS}
    assert {name: found["flagged"] for name, found in allowed.items() if found["flagged"]} == {}


# --- What the allowlist does to rendering ---------------------------------------------------------

def highlighted(html: str) -> set[str]:
    return set(re.findall(r'<span class="([a-z]+)">', html)) & HIGHLIGHT_CLASSES


MAPLE_COPY = "The answers:\n\n```maple\n\"" + "\\a" * 25 + "\n```\n"
SYSTEMD_DIFF = ("--- a/x.service\n+++ b/x.service\n@@ -0,0 +1,2 @@\n+[Unit]\n+" + " " * 500 + "\n")
# Whitespace-only lines, as a patch can hold: Pygments' own Python lexer is quadratic on them.
BLANK_PYTHON_DIFF = ("--- a/m.py\n+++ b/m.py\n@@ -0,0 +1,2001 @@\n+def f():  # c\n"
                     + ("+" + " " * 24 + "\n") * 2000)


@pytest.mark.pure(False)  # renders in a process it can stop
def test_a_maple_fence_a_systemd_diff_and_blank_python_lines_render_promptly():
    """Before: the maple copy took 6 s to open (each more `\\a` x 2-2.5) and the Python diff
    2-3 s (4,900 such lines: 14 s), all the while holding the GIL; the unit file was coloured by
    the systemd lexer. A watchdog (30 s) and the CPU time each took."""
    code = textwrap.dedent(f"""
        import json, time
        from content.normalise import normalise
        from content.rendering import frame_body
        out = {{}}
        for name, text, fmt in [("maple", {MAPLE_COPY!r}, "markdown"),
                                ("systemd", {SYSTEMD_DIFF!r}, "diff"),
                                ("python", {BLANK_PYTHON_DIFF!r}, "diff")]:
            started = time.process_time()
            html = frame_body(normalise(text, fmt, []), fmt).html
            out[name] = [time.process_time() - started, html]
        print(json.dumps(out))
    """)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          timeout=30, check=True)
    out = json.loads(done.stdout)
    for name, (seconds, html) in out.items():
        assert seconds < 1.0, (name, seconds)
        assert bool(highlighted(html)) == (name == "python"), name
    assert len(MAPLE_COPY.encode()) == 79  # the copy of the report
    assert "\\a" * 25 in out["maple"][1]  # the fence's text, shown as it is


def test_no_lexer_outside_the_allowlist_is_reached_by_a_fence_or_a_file_name():
    for name in ("maple", "lilypond", "systemd", "autohotkey", "easytrieve", "promela", "rst",
                 "restructuredtext", "swig", "xpp", "cpp", "c", "objective-c", "pike", "ragel-cpp",
                 "markdown", "javascript", "typescript", "yaml", "toml", "ini", "go", "rust", "java",
                 "kotlin", "csharp", "html", "css", "bash", "diff", "text"):
        assert _lexer_by_name(name) is None, name
    for file in ("x.service", "x.socket", "doc.rst", "a.c", "a.cpp", "a.h", "a.m", "a.i",
                 "a.js", "a.yml", "Makefile", "x.diff"):
        assert _lexer_for_filename(file) is None, file
    # Fences name a lexer by any of its aliases, in any case; files by our own extension table.
    assert isinstance(_lexer_by_name("Py"), _PythonLexer)
    assert isinstance(_lexer_by_name("python3 "), _PythonLexer)
    assert isinstance(_lexer_for_filename("src/pkg/mod.PY"), _PythonLexer)
    assert set(HIGHLIGHT_EXTENSIONS.values()) <= set(HIGHLIGHT_LEXERS)
    lexer = _lexer_by_name("json")
    assert (lexer.stripnl, lexer.ensurenl) == (False, False)


@pytest.mark.parametrize(("fence", "code"), [
    ("python", "def f(x):\n    return 'a'  # c\n"),
    ("json", '{"a": [1, "b", true]}\n'),
    ("sql", "SELECT name FROM users WHERE id = 1; -- c\n"),
])
def test_a_fence_naming_an_allowed_language_is_still_highlighted(fence, code):
    html = frame_body(normalise(f"Text.\n\n```{fence}\n{code}```\n", "markdown", []),
                      "markdown").html
    assert highlighted(html[:html.index('<div class="frame plain">')]), fence


def test_a_diff_of_an_allowed_file_is_still_highlighted_and_others_are_plain():
    def diff(name):
        return (f"--- a/{name}\n+++ b/{name}\n@@ -0,0 +1,2 @@\n"
                '+def total(x):  # c\n+    return {"a": 1}\n')

    assert highlighted(frame_body(normalise(diff("m.py"), "diff", []), "diff").html)
    assert highlighted(frame_body(normalise(diff("m.json"), "diff", []), "diff").html)
    assert not highlighted(frame_body(normalise(diff("m.js"), "diff", []), "diff").html)


def test_our_python_lexer_colours_real_code_as_pygments_does():
    """Only where a docstring follows a whitespace-only line do the tokens differ (its spaces and
    newline are Text and Whitespace instead of one Whitespace), and neither is coloured."""
    from pygments.lexers import PythonLexer  # noqa: PLC0415 - only here

    # Both docstring rules were rewritten (a Pygments upgrade that changed them fails here).
    rules = [rule[0] for rule in _PythonLexer.tokens["root"] if isinstance(rule, tuple)]
    assert sum(rule.startswith(r"^([^\S\n]*)") for rule in rules) == 2
    assert not any(r"^(\s*)" in rule for rule in rules)
    source = (ROOT / "content" / "rendering.py").read_text() + '\n  \n"""doc"""\n    r"""x"""\n'
    assert _highlighted_lines(_PythonLexer(stripnl=False, ensurenl=False), source) == (
        _highlighted_lines(PythonLexer(stripnl=False, ensurenl=False), source))
    assert '    <span class="s">r"""x"""</span>' in _highlighted_lines(
        _PythonLexer(stripnl=False, ensurenl=False), source)
