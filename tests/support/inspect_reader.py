"""inspect-ai's own reader, run on the logs export_report writes (tests/reports/test_export_interop.py).

inspect-ai brings about 80 packages (pydantic, fastapi, boto3, textual, …: 195 MB and 45 s on top
of the test install, 300 MB and 43 s in a fresh venv), and some of them are packages the product
pins or runs beside (uvicorn, anyio, aiohttp): installed into the test environment, they would
change what every other test runs against. So it never enters the product's or the test
install: the pin is the `interop` extra of pyproject.toml, and the tests install it into a venv
of its own, made once under var/interop/ (a lock keeps two test workers from making it at once;
a venv whose install did not finish is made again), and run its reader in a subprocess that
prints what it read as JSON.

The install is mostly waiting on the package index (about 60 s, a third of it CPU), so a run that
collects the export's tests starts it in the background at collection (tests/conftest.py,
`install_in_background`) and the tests, which take the same lock, find it made or wait for the
rest of it, instead of holding a worker for the whole install.
"""

import fcntl
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
[REQUIREMENT] = PYPROJECT["project"]["optional-dependencies"]["interop"]  # "inspect-ai==…"
HOME = ROOT / "var" / "interop" / REQUIREMENT.replace("==", "-")

# Runs in the inspect-ai venv: every log named on the command line read by inspect-ai itself
# (read_eval_log, the header alone, the sample summaries), printed as JSON.
READER = r"""
import json, sys
from inspect_ai.log import read_eval_log, read_eval_log_sample_summaries

out = {}
for path in sys.argv[1:]:
    log = read_eval_log(path)
    header = read_eval_log(path, header_only=True)
    out[path] = {
        "task": log.eval.task, "model": log.eval.model, "status": log.status,
        "metadata": log.eval.metadata, "header_metadata": header.eval.metadata,
        "header_samples": header.samples,
        "samples": [{
            "id": s.id, "epoch": s.epoch,
            "scores": {name: score.model_dump(mode="json") for name, score in (s.scores or {}).items()},
            "provenance_types": {name: [type(e.provenance).__name__ for e in score.history]
                                 for name, score in (s.scores or {}).items()},
            "score_edits": [e.model_dump(mode="json") for e in s.events if e.event == "score_edit"],
            "events": len(s.events),
        } for s in log.samples],
        "summaries": {f"{s.id}/{s.epoch}": sorted(s.scores or {})
                      for s in read_eval_log_sample_summaries(path)},
    }
print(json.dumps(out))
"""


def installed() -> bool:
    done = HOME / ".installed"
    return done.exists() and done.read_text() == REQUIREMENT


def install_in_background() -> None:
    """Start making the venv in a process of its own, if it is not made (module docstring); its
    output goes to var/interop/install.log. Two workers may both start one: the second waits
    on the lock and finds the venv made."""
    if installed():
        return
    HOME.parent.mkdir(parents=True, exist_ok=True)
    with (HOME.parent / "install.log").open("ab") as log:
        subprocess.Popen([sys.executable, "-m", "tests.support.inspect_reader", "--install"],  # noqa: S603
                         cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                         start_new_session=True, env={**os.environ, "PYTHONPATH": str(ROOT)})


def inspect_python() -> Path:
    """The python of the inspect-ai venv, made if it is not there yet (module docstring)."""
    HOME.parent.mkdir(parents=True, exist_ok=True)
    python, done = HOME / "bin" / "python", HOME / ".installed"
    with (HOME.parent / f"{HOME.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if installed():
            return python
        shutil.rmtree(HOME, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(HOME)], check=True, timeout=120)
        pip = subprocess.run(
            # --no-compile, as ./bj installs: what the reader imports is compiled on first import.
            [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
             "--no-compile", REQUIREMENT], capture_output=True, text=True, timeout=900)
        assert pip.returncode == 0, f"pip install {REQUIREMENT} failed:\n{pip.stderr}"
        done.write_text(REQUIREMENT)
    return python


def read_with_inspect(*paths: Path, then: str = "") -> dict:
    """What inspect-ai's own reader sees in each log: {path: {task, model, metadata, samples…}};
    `then`: more code run after it in the same process (a snippet of the docs; inspect-ai takes
    seconds to import), which must print nothing."""
    done = subprocess.run([str(inspect_python()), "-c", READER + "\n" + then, *map(str, paths)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"inspect-ai could not read {paths}:\n{done.stderr[-4000:]}"
    return json.loads(done.stdout)



if __name__ == "__main__":  # python -m tests.support.inspect_reader --install
    if sys.argv[1:] != ["--install"]:
        raise SystemExit("usage: python -m tests.support.inspect_reader --install")
    print(inspect_python(), flush=True)
