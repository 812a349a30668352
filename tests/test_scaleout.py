"""Scale-out: two `deploy/serve` processes behind Debian's nginx running the shipped
`deploy/nginx/blindjudge.conf` (see tests/support/deployment.py), on this run's database.

- A judge's lock, answered by one process, reaches the host's socket held by the other (needs the
  Redis channel layer: skipped on the embedded default, where one process is the design).
- nginx serves the static files itself and passes websockets, refusing a foreign Origin.
- The guest-code rate limit keys on the client address nginx reports, not on anything the client
  sends, and holds across both processes (docs/threats.md case 15).
- No join or resume token (nor an OAuth code) reaches nginx's access log or the processes' logs.
- Websocket openings per client address are counted in Redis, together by both processes
  (docs/threats.md case 40).
"""

import http.client
import http.cookies
import json
import re
import time
from urllib.parse import urlencode

import pytest
import redis
from django.conf import settings
from django.db import connection
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect as ws_connect

from accounts.models import Judge, Throttle
from judging.models import Assignment
from judging.services import guests_configure, invitation_create, resume_token_reissue
from tests.support.deployment import (
    Nginx,
    ServeProcess,
    collectstatic,
    free_port,
    nginx_available,
    serve_env,
    wait_for_http,
)
from tests.worlds import host_cookie, invite_and_join, is_saved_reply, judge_cookie

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not nginx_available(), reason="needs Debian's nginx: apt-get install nginx"),
]
GUEST_ATTEMPTS = 4


class Visitor:
    """A client with its own cookies, connecting from a chosen loopback address (nginx sees
    127.0.0.2, 127.0.0.3 … as different clients)."""

    def __init__(self, port: int, source: str = "127.0.0.1", origin: str = ""):
        self.port, self.source, self.origin = port, source, origin
        self.cookies: dict[str, str] = {}

    def request(self, method, path, form=None, headers=None):
        connection_ = http.client.HTTPConnection("127.0.0.1", self.port, timeout=20,
                                                 source_address=(self.source, 0))
        headers = dict(headers or {})
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        body = None
        if form is not None:
            body = urlencode(form)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            headers["Origin"] = self.origin
        connection_.request(method, path, body=body, headers=headers)
        response = connection_.getresponse()
        data = response.read()
        for value in response.headers.get_all("Set-Cookie") or []:
            for name, morsel in http.cookies.SimpleCookie(value).items():
                self.cookies[name] = morsel.value
        connection_.close()
        return response.status, response.headers, data

    def csrf_token(self, path) -> str:
        status, _, body = self.request("GET", path)
        assert status == 200, (path, status)
        return re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', body).group(1).decode()

    def csrf_post(self, path, form, headers=None, token=None):
        token = token or self.csrf_token(path)
        return self.request("POST", path, {**form, "csrfmiddlewaretoken": token}, headers)


@pytest.fixture(scope="module")
def static_root(tmp_path_factory):
    """collectstatic once, as a deployment does, into the folder nginx serves."""
    folder = tmp_path_factory.mktemp("static")
    collectstatic(folder, serve_env(site_url="http://127.0.0.1"))
    return folder


@pytest.fixture
def deployment(request, transactional_db, tmp_path, static_root):
    """Two deploy/serve processes (one worker each) on this test's database, behind nginx. A
    `server_env(NAME="value", …)` mark adds to both processes' environment."""
    nginx_port = free_port()
    site = f"http://127.0.0.1:{nginx_port}"
    env = serve_env(site_url=site, extra={
        "BLINDJUDGE_TEST_DATABASE_NAME": str(connection.settings_dict["NAME"]),
        "BLINDJUDGE_GUEST_ATTEMPTS": str(GUEST_ATTEMPTS),
        "STATIC_ROOT": str(static_root),
    })
    for mark in request.node.iter_markers("server_env"):
        env.update(mark.kwargs)
    request.node.serve_env = env
    servers = [ServeProcess(port=free_port(), env=env, log_path=tmp_path / f"serve-{i}.log")
               for i in range(2)]
    nginx = Nginx(port=nginx_port, upstreams=[s.port for s in servers],
                  static_root=static_root, folder=tmp_path / "nginx")
    try:
        for server in servers:
            server.start(wait=False)  # both start at once; then wait for each
        for server in servers:
            wait_for_http(f"http://127.0.0.1:{server.port}/guest/", alive=server.alive,
                          what=f"deploy/serve on {server.port}")
        nginx.start()
        yield nginx, servers
    finally:
        nginx.stop()
        for server in servers:
            server.stop()


def upstream(headers) -> str:
    return headers.get("X-Test-Upstream", "")


def test_nginx_serves_static_files_itself_and_refuses_a_foreign_origins_websocket(deployment, open_session,
                                                                                 host, static_root):
    nginx, servers = deployment
    visitor = Visitor(nginx.port, origin=nginx.base)
    status, headers, body = visitor.request("GET", "/static/live/socket.js")
    assert status == 200 and b"blindjudgeLive" in body
    assert upstream(headers) == "", "a static file went to the application"
    assert headers["X-Content-Type-Options"] == "nosniff"
    # The test settings' storage writes no manifest; the shipped one does, beside the files.
    for manifest in ("/static/staticfiles.json", "/static/staticfiles.json.gz"):
        (static_root / manifest.rsplit("/", 1)[1]).write_text('{"paths": {}}')
        status, headers, _ = visitor.request("GET", manifest)
        assert status == 404 and upstream(headers) == "", manifest
    status, headers, _ = visitor.request("GET", "/guest/")
    assert status == 200 and upstream(headers) in {f"127.0.0.1:{s.port}" for s in servers}
    path = f"/ws/host/sessions/{open_session.pk}/"
    cookie = host_cookie(host)
    with pytest.raises(InvalidStatus) as refused:
        ws_connect(f"ws://127.0.0.1:{nginx.port}{path}", origin="http://evil.example",
                   additional_headers={"Cookie": cookie}, open_timeout=10)
    assert refused.value.response.status_code == 403
    # Positive control: the site's own Origin with the same cookie gets the snapshot.
    with ws_connect(f"ws://127.0.0.1:{nginx.port}{path}", origin=nginx.base,
                    additional_headers={"Cookie": cookie}, open_timeout=10) as socket:
        assert json.loads(socket.recv(timeout=10))["type"] == "snapshot"


@pytest.mark.skipif(not settings.REDIS_URL, reason=(
    "events cross processes only through the Redis channel layer; the embedded default is one "
    "process (runs in the PostgreSQL + Redis run)"))
def test_a_judges_lock_through_one_process_reaches_the_hosts_socket_on_the_other(deployment, open_session,
                                                                                 host):
    nginx, servers = deployment
    judge = invite_and_join(open_session, "Ada").judge
    token = resume_token_reissue(judge=judge, actor="test")
    codes = list(Assignment.objects.filter(judge=judge).order_by("position").values_list("code", flat=True))
    ada = Visitor(nginx.port, origin=nginx.base)
    status, _, _ = ada.csrf_post(f"/resume/{token}", {})
    assert status == 302
    csrf = ada.cookies["csrftoken"]

    with ws_connect(f"ws://127.0.0.1:{nginx.port}/ws/host/sessions/{open_session.pk}/",
                    origin=nginx.base, additional_headers={"Cookie": host_cookie(host)},
                    open_timeout=10) as feed:
        host_process = feed.response.headers["X-Test-Upstream"]
        assert json.loads(feed.recv(timeout=10))["type"] == "snapshot"
        served_by = set()
        for count, code in enumerate(codes, start=1):
            status, headers, body = ada.request(
                "POST", f"/s/{open_session.url_id}/i/{code}/",
                {"verdict": "pass", "phase": "1", "seconds_spent": "1", "go": "stay",
                 "csrfmiddlewaretoken": csrf},
                {"Accept": "application/json"})
            assert status == 200 and is_saved_reply(json.loads(body))
            served_by.add(upstream(headers))
            row = json.loads(feed.recv(timeout=10))["judge"]
            assert (row["pseudonym"], row["answered1"]) == ("J01", count)
        assert len(served_by) == 2, f"nginx sent every verdict to one process: {served_by}"
        # Round robin: after a request the host's process answered, the next goes to the other.
        for _ in range(4):
            if upstream(ada.request("GET", "/guest/")[1]) == host_process:
                break
        started = time.monotonic()
        status, headers, _ = ada.request("POST", f"/s/{open_session.url_id}/lock/",
                                         {"confirm": "yes", "phase": "1", "csrfmiddlewaretoken": csrf})
        assert status == 302
        assert upstream(headers) not in ("", host_process), "the lock went to the host's own process"
        row = json.loads(feed.recv(timeout=10))["judge"]
        assert row["phase1_locked"] and row["pseudonym"] == "J01"
        assert time.monotonic() - started < 5


def test_the_guest_code_limit_keys_on_nginxs_client_address_and_holds_across_processes(deployment,
                                                                                       open_session):
    nginx, servers = deployment
    code = guests_configure(session=open_session, actor="test", allow=True, rotate=True).guest_code
    attacker = Visitor(nginx.port, source="127.0.0.2", origin=nginx.base)
    token = attacker.csrf_token("/guest/")
    served_by = set()
    for attempt in range(GUEST_ATTEMPTS):
        # A forged X-Forwarded-For changes nothing: nginx overwrites it with the real address.
        # (POSTs one after another, so nginx's round robin alternates the processes.)
        status, headers, body = attacker.csrf_post(
            "/guest/", {"code": f"WRONG-{attempt}", "name": "Mallory"},
            {"X-Forwarded-For": f"203.0.113.{attempt + 1}"}, token=token)
        assert status == 403 and b"That guest code was not accepted." in body
        served_by.add(upstream(headers))
    assert len(served_by) == 2, f"every attempt went to one process: {served_by}"
    # The limit is reached: even the right code is refused, with the same answer, on either process.
    refusers = set()
    for _ in range(2):
        status, headers, body = attacker.csrf_post("/guest/", {"code": code, "name": "Mallory"},
                                                   {"X-Forwarded-For": "198.51.100.7"}, token=token)
        assert status == 403 and b"That guest code was not accepted." in body
        refusers.add(upstream(headers))
    assert len(refusers) == 2, f"the right code was tried on one process only: {refusers}"
    throttles = dict(Throttle.objects.values_list("key", "count"))
    assert throttles == {"guest-code:127.0.0.2": GUEST_ATTEMPTS}, throttles
    # Another client address is not affected: the right code admits them.
    neighbour = Visitor(nginx.port, source="127.0.0.3", origin=nginx.base)
    status, headers, _ = neighbour.csrf_post("/guest/", {"code": code, "name": "Nell"})
    assert status == 302 and f"/s/{open_session.url_id}/" in headers["Location"]


def test_no_token_reaches_nginxs_access_log_or_the_servers_logs(deployment, open_session):
    """Issue 12 item 14: after a join, a refused second use of the link, a resume and GitHub's
    callback, neither nginx's access log (the shipped format) nor the processes' logs hold a
    token, a code or a state; they show the requests with the credential redacted."""
    nginx, servers = deployment
    join_token = invitation_create(session=open_session, actor="test", name="Ada").join_token
    ada = Visitor(nginx.port, origin=nginx.base)
    assert ada.csrf_post(f"/join/{join_token}", {})[0] == 302
    again = Visitor(nginx.port, origin=nginx.base)
    assert again.csrf_post(f"/join/{join_token}", {})[0] == 403  # Django logs its 4xx paths
    judge = Judge.objects.get(session=open_session)
    resume_token = resume_token_reissue(judge=judge, actor="test")
    elsewhere = Visitor(nginx.port, origin=nginx.base)
    status, _, _ = elsewhere.csrf_post(f"/resume/{resume_token}", {},
                                       {"Referer": f"{nginx.base}/resume/{resume_token}"})
    assert status == 302
    secrets = [join_token, resume_token, "oauthcode1234567", "oauthstate7654321"]
    elsewhere.request("GET", f"/accounts/github/login/callback/?code={secrets[2]}&state={secrets[3]}")
    for server in servers:
        server.stop()  # its log is complete
    logs = {"nginx": nginx.access_log(), **{f"serve {s.port}": s.log() for s in servers}}
    for name, text in logs.items():
        for secret in secrets:
            assert secret not in text, f"the {name} log holds a credential:\n{text[-3000:]}"
    # Positive controls: the requests were logged, redacted.
    access = logs["nginx"]
    assert access.count('"GET /join/[redacted] HTTP/1.1" 200') == 2
    assert access.count('"POST /join/[redacted] HTTP/1.1"') == 2
    assert '"POST /resume/[redacted] HTTP/1.1" 302' in access and '"[redacted]"' in access
    assert '"GET /accounts/github/login/callback/?[redacted] HTTP/1.1"' in access
    assert "Forbidden: /join/[redacted]" in "".join(s.log() for s in servers)


OPEN_BURST = 4


def open_socket(nginx, path: str, cookie: str, source: str) -> tuple[str, int | None]:
    """Open a judge's socket through nginx from `source`: the process that answered the
    handshake, and None if the socket was kept (its first frame is the judge's state) or the
    code it was closed with at once."""
    with ws_connect(f"ws://127.0.0.1:{nginx.port}{path}", origin=nginx.base,
                    additional_headers={"Cookie": cookie}, open_timeout=10,
                    source_address=(source, 0)) as feed:
        served_by = feed.response.headers["X-Test-Upstream"]
        try:
            assert json.loads(feed.recv(timeout=10))["type"] == "state"
        except ConnectionClosed as closed:
            return served_by, closed.rcvd.code if closed.rcvd else 1006
        return served_by, None


@pytest.mark.skipif(not settings.REDIS_URL, reason=(
    "the processes share the opening counts in Redis; the embedded default is one process, whose "
    "own memory is the shared store (runs in the PostgreSQL + Redis run)"))
@pytest.mark.server_env(BLINDJUDGE_WS_OPEN_BURST=str(OPEN_BURST), BLINDJUDGE_WS_OPEN_PER_MINUTE="1")
def test_websocket_openings_per_address_are_counted_together_by_both_processes(request, deployment,
                                                                               open_session):
    """docs/threats.md case 40: a flood of socket openings is limited per address in the store
    every process shares. Per-process buckets let an address open N times the burst across N
    processes; here the burst is split across both and the next opening is refused with 4429,
    whichever process gets it."""
    nginx, servers = deployment
    cookie = judge_cookie(invite_and_join(open_session, "Ada").judge)
    path = f"/ws/s/{open_session.url_id}/"
    kept = [open_socket(nginx, path, cookie, "127.0.0.2") for _ in range(OPEN_BURST)]
    assert [code for _, code in kept] == [None] * OPEN_BURST, kept
    processes = {f"127.0.0.1:{s.port}" for s in servers}
    assert {served_by for served_by, _ in kept} == processes, f"one process had every opening: {kept}"
    # Round robin: the next openings alternate the processes; each of them refuses.
    refused = [open_socket(nginx, path, cookie, "127.0.0.2") for _ in range(2)]
    assert [code for _, code in refused] == [4429, 4429], refused
    assert {served_by for served_by, _ in refused} == processes, refused
    # Another address has its own count.
    assert open_socket(nginx, path, cookie, "127.0.0.3")[1] is None
    # The counts are keys of this deployment's namespace in the Redis it shares, and they expire.
    store = redis.Redis.from_url(settings.REDIS_URL)
    try:
        prefix = request.node.serve_env["BLINDJUDGE_WS_OPEN_KEY_PREFIX"]
        keys = sorted(key.decode() for key in store.scan_iter(match=f"{prefix}:*"))
        assert keys == [f"{prefix}:127.0.0.2", f"{prefix}:127.0.0.3"], keys
        assert all(0 < store.ttl(key) <= 61 * OPEN_BURST for key in keys)
    finally:
        store.close()
