"""`./bj start` run again (issue 17, item 6): `manage.py demo` in real processes on a fresh data
directory loads the demo once, keeps its host's password in a file only its owner may read and
prints it again; `--fresh` loads a new demo and password and keeps the old run."""

import json
import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def manage(data_dir: Path, *args: str) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items()
           if key not in ("DATABASE_URL", "REDIS_URL", "SECRET_KEY")}
    env["BLINDJUDGE_DATA_DIR"] = str(data_dir)
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True,
                          capture_output=True, text=True)


def demo_sessions(data_dir: Path) -> list[tuple]:
    with sqlite3.connect(data_dir / "blindjudge.sqlite3") as db:
        return db.execute("SELECT s.id, r.id FROM judging_session s JOIN judging_run r "
                          "ON r.id = s.run_id ORDER BY s.id").fetchall()


def test_demo_twice_is_one_demo_with_the_same_password_and_fresh_makes_another(tmp_path):
    manage(tmp_path, "migrate", "--no-input", "-v0")
    first = manage(tmp_path, "demo").stdout
    second = manage(tmp_path, "demo").stdout
    password_file = tmp_path / "demo-host-password"
    password = password_file.read_text().strip()
    assert stat.S_IMODE(password_file.stat().st_mode) == 0o600
    for printed in (first, second):
        assert f"user demo-host  password {password}  (kept in {password_file})" in printed
    assert "loaded now" in first and "loaded before" in second
    assert len(demo_sessions(tmp_path)) == 1

    fresh = json.loads(manage(tmp_path, "demo", "--fresh", "--json").stdout)
    assert fresh["password"] != password and fresh["loaded"]
    assert password_file.read_text().strip() == fresh["password"]
    assert stat.S_IMODE(password_file.stat().st_mode) == 0o600
    sessions = demo_sessions(tmp_path)
    assert len(sessions) == 2 and sessions[-1][0] == fresh["session"]  # the old demo is kept
    again = json.loads(manage(tmp_path, "demo", "--json").stdout)
    assert (again["session"], again["password"]) == (fresh["session"], fresh["password"])


def test_bj_start_takes_only_the_fresh_demo_flag():
    """`./bj start --fresh-demo` passes `--fresh` to `demo`; anything else is refused before any
    install or migration."""
    done = subprocess.run([str(ROOT / "bj"), "start", "--fresh"], cwd=ROOT, capture_output=True,
                          text=True, env={**os.environ, "VENV": "/nonexistent"})
    assert done.returncode == 2 and done.stderr == "usage: ./bj start [--fresh-demo]\n"
    script = (ROOT / "bj").read_text()
    assert 'if [ "${2:-}" = --fresh-demo ]; then\n            demo_options=(--fresh)' in script
