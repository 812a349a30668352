"""The production deployment, run locally: `deploy/serve` processes behind Debian's nginx with the
shipped `deploy/nginx/blindjudge.conf`, and a private PostgreSQL cluster. Used by the scale-out
and fault tests and by bench/live.py, so what they exercise is what deploy/ ships.

- `ServeProcess`: one `deploy/serve PORT WORKERS` (Uvicorn) in its own process group, so SIGKILL
  reaches every worker.
- `Nginx`: the shipped site config turned into a runnable one by a few checked substitutions (a
  local port instead of 443 and the certificate, the test's upstream ports and static folder) and
  wrapped in a main config whose paths are all in a temporary folder. Each substitution must
  match, so a change to the shipped file that the generator no longer understands fails loudly.
  For the tests' eyes only, each proxied response carries `X-Test-Upstream` (which process
  answered); the access log is the shipped one (its format records the upstream), in the folder.
- `PrivatePostgres`: initdb in a temporary folder, its own port, started and stopped with pg_ctl;
  never the machine's shared server.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the repository
SHIPPED_NGINX = ROOT / "deploy" / "nginx" / "blindjudge.conf"
SERVE = ROOT / "deploy" / "serve"
START_SECONDS = 60


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_http(url: str, *, alive=lambda: True, seconds: float = START_SECONDS, what: str = "server"):
    deadline = time.monotonic() + seconds
    last = None
    while time.monotonic() < deadline:
        if not alive():
            raise RuntimeError(f"the {what} exited before answering {url}")
        try:
            # S310: our own local http:// URL.
            with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310
                if response.status < 500:
                    return
        except urllib.error.HTTPError as error:
            if error.code < 500:
                return
            last = error
        except (urllib.error.URLError, ConnectionError, TimeoutError) as error:
            last = error
        time.sleep(0.1)
    raise RuntimeError(f"the {what} did not answer {url} in {seconds}s: {last}")


# --- deploy/serve -----------------------------------------------------------------------------

@dataclass
class ServeProcess:
    port: int
    env: dict
    log_path: Path
    workers: int = 1
    process: subprocess.Popen | None = None

    def start(self, wait: bool = True) -> ServeProcess:
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [str(SERVE), str(self.port), str(self.workers)], cwd=ROOT, env=self.env,
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
        if wait:
            wait_for_http(f"http://127.0.0.1:{self.port}/guest/", alive=self.alive,
                          what=f"deploy/serve on {self.port}")
        return self

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self):
        """SIGKILL to the whole process group: no clean shutdown, no closing frames."""
        if self.process is not None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.process.wait(timeout=10)

    def stop(self) -> int | None:
        """SIGTERM, as systemd stops it; SIGKILL if it is not gone in 10 s. Returns the exit
        status (negative: the signal that ended it)."""
        if self.alive():
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()
        return self.process.returncode if self.process is not None else None

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""


def serve_env(*, site_url: str, extra: dict | None = None) -> dict:
    """The environment of a deploy/serve process in tests: the test settings (the parent's
    database and Redis URLs, secret key and channel-layer prefix are inherited), the venv running
    the tests, a websocket-opening key prefix of its own (shared by the processes started with
    this environment), and a test database name when the parent is inside a test run."""
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env.update({
        "DJANGO_SETTINGS_MODULE": env.get("DJANGO_SETTINGS_MODULE_SERVE", "blindjudge.settings_test"),
        "VENV": sys.prefix,
        "SITE_URL": site_url,
        "ALLOWED_HOSTS": "127.0.0.1",
        "PYTHONUNBUFFERED": "1",
        # The processes of one deployment count websocket openings together in Redis; another
        # deployment (another test, or another run on the same Redis) starts from zero.
        "BLINDJUDGE_WS_OPEN_KEY_PREFIX": f"bjtest-ws-open-{os.urandom(6).hex()}",
    })
    env.update(extra or {})
    return env


# --- nginx --------------------------------------------------------------------------------------

def _substitute(text: str, pattern: str, replacement: str, *, count: int = 1, flags=0) -> str:
    new, made = re.subn(pattern, replacement, text, flags=flags)
    assert made == count, (f"the shipped nginx config changed: expected {count} match(es) of "
                           f"{pattern!r}, found {made}; update tests/support/deployment.py")
    return new


def site_config(shipped: str, *, port: int, upstreams: list[int], static_root: Path,
                access_log: Path) -> str:
    """The shipped site, served on 127.0.0.1:PORT over plain HTTP, proxying to `upstreams`,
    logging in the shipped format to `access_log`."""
    text = shipped
    text = _substitute(text, r"(upstream blindjudge \{.*?)((?:\n\s*server 127\.0\.0\.1:\d+;)+)",
                       lambda m: m.group(1) + "".join(f"\n    server 127.0.0.1:{p};" for p in upstreams),
                       flags=re.S)
    # The port-80 server only redirects to HTTPS; locally there is no HTTPS.
    text = _substitute(text, r"server \{\s*listen 80;.*?\n\}\n", "", flags=re.S)
    text = _substitute(text, r"listen 443 ssl[^;]*;", f"listen 127.0.0.1:{port};")
    text = _substitute(text, r"\n\s*ssl_certificate(_key)? [^;]+;", "", count=2)
    text = _substitute(text, r"alias [^;]+;", f"alias {static_root}/;")
    text = _substitute(text, r"access_log /var/log/nginx/blindjudge\.access\.log blindjudge;",
                       f"access_log {access_log} blindjudge;")
    text = _substitute(text, r"(location / \{)",
                       r"\1\n        add_header X-Test-Upstream $upstream_addr always;")
    return text


@dataclass
class Nginx:
    port: int
    upstreams: list[int]
    static_root: Path
    folder: Path
    process: subprocess.Popen | None = None
    extra_http: list[str] = field(default_factory=list)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def write_config(self) -> Path:
        self.folder.mkdir(parents=True, exist_ok=True)
        site = site_config(SHIPPED_NGINX.read_text(), port=self.port, upstreams=self.upstreams,
                           static_root=self.static_root, access_log=self.folder / "access.log")
        temp = {name: self.folder / name for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")}
        main = "\n".join([
            # As root, workers would otherwise run as nobody and not reach the temporary folders.
            "user root;" if os.geteuid() == 0 else "",
            "worker_processes 1;",
            "worker_rlimit_nofile 16384;",
            "daemon off;",
            f"pid {self.folder / 'nginx.pid'};",
            f"error_log {self.folder / 'error.log'} warn;",
            "events { worker_connections 4096; }",
            "http {",
            "    include /etc/nginx/mime.types;",
            "    default_type application/octet-stream;",
            *(f"    {kind}_temp_path {path};" for kind, path in temp.items()),
            # The site's own access log (the shipped format, which records the upstream) is
            # moved into the folder; nothing else is logged.
            "    access_log off;",
            *self.extra_http,
            site,
            "}",
            "",
        ])
        path = self.folder / "nginx.conf"
        path.write_text(main)
        return path

    def start(self) -> Nginx:
        config = self.write_config()
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        checked = subprocess.run([nginx, "-t", "-c", str(config), "-p", str(self.folder)],
                                 capture_output=True, text=True)
        assert checked.returncode == 0, checked.stderr
        self.process = subprocess.Popen([nginx, "-c", str(config), "-p", str(self.folder)],
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=open(self.folder / "stderr.log", "wb"),  # noqa: SIM115
                                        start_new_session=True)
        wait_for_http(self.base + "/guest/", alive=lambda: self.process.poll() is None, what="nginx")
        return self

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()  # SIGTERM: nginx's fast shutdown, workers included
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)

    def access_log(self) -> str:
        try:
            return (self.folder / "access.log").read_text()
        except OSError:
            return ""


def nginx_available() -> bool:
    return bool(shutil.which("nginx") or Path("/usr/sbin/nginx").exists())


def collectstatic(static_root: Path, env: dict):
    subprocess.run([sys.executable, "manage.py", "collectstatic", "--no-input", "-v0"], cwd=ROOT,
                   env={**env, "STATIC_ROOT": str(static_root)}, check=True)


# --- A private PostgreSQL cluster ----------------------------------------------------------------

def postgres_bin() -> Path | None:
    for candidate in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (candidate / "initdb").exists() and (candidate / "pg_ctl").exists():
            return candidate
    return None


@dataclass
class PrivatePostgres:
    """A throwaway cluster: initdb under `folder`, listening on 127.0.0.1:`port` only. As root,
    the cluster's files belong to the postgres user and its commands run as that user (PostgreSQL
    refuses to run as root)."""

    folder: Path
    port: int
    bin: Path

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/blindjudge"

    def _run(self, *args, check=True, **kwargs):
        command = [str(a) for a in args]
        if os.geteuid() == 0:
            command = ["runuser", "-u", "postgres", "--", *command]
        return subprocess.run(command, check=check, capture_output=True, text=True, **kwargs)

    def init(self) -> PrivatePostgres:
        self.folder.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres", "postgres")
            os.chmod(self.folder, 0o700)
        data = self.folder / "data"
        self._run(self.bin / "initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8",
                  "--no-instructions")
        # Durability stays at its defaults (fsync, synchronous_commit on): the test must show that
        # an acknowledged verdict survives with the settings production uses.
        with open(data / "postgresql.conf", "a") as conf:
            conf.write(f"\nlisten_addresses = '127.0.0.1'\nport = {self.port}\n"
                       f"unix_socket_directories = '{self.folder}'\nmax_connections = 200\n")
        return self

    def start(self):
        self._run(self.bin / "pg_ctl", "-D", self.folder / "data", "-l", self.folder / "log", "-w",
                  "-t", "60", "start")

    def stop(self, mode: str = "fast"):
        self._run(self.bin / "pg_ctl", "-D", self.folder / "data", "-m", mode, "-w", "-t", "60",
                  "stop", check=False)

    def create_database(self, name: str = "blindjudge"):
        self._run(self.bin / "createdb", "-h", "127.0.0.1", "-p", self.port, "-U", "postgres", name)

    def log(self) -> str:
        try:
            return (self.folder / "log").read_text(errors="replace")
        except OSError:
            return ""
