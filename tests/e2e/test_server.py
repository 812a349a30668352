"""The server `./bj start` runs (Uvicorn, tests/e2e/conftest.py's SERVER_FLAGS), as a real process:
websocket refusals, request-body caps and its access log. No browser here.

Issue 12 items 8, 11 and 14 (the access log), and the per-address limit on websocket openings.
"""

import http.client
import json
import re
import shlex
import socket
import tomllib

import pytest
from django.conf import settings
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect as ws_connect

from judging.services import judge_remove
from tests.e2e.conftest import ROOT, SERVER_FLAGS
from tests.worlds import host_cookie, invite_and_join, judge_cookie

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 10
REQUEST_CAP = 160 * 1024  # settings' default BLINDJUDGE_MAX_REQUEST_BYTES
TRACEBACK = re.compile(r"Traceback|Exception in ASGI|ERROR", re.I)


def test_bj_start_serves_with_the_flags_the_browser_tests_use():
    """The browser tests exercise what ./bj start serves: the same server and flags."""
    bj = (ROOT / "bj").read_text()
    line = re.search(r'exec "\$VENV/bin/python" -m uvicorn blindjudge\.asgi:application((?:.*\\\n)*.*)', bj)
    assert line, "./bj start no longer execs Uvicorn"
    words = shlex.split(line.group(1).replace("\\\n", " "))
    flags = [w for w in words if not w.startswith('"') and "${" not in w and "address" not in w]
    assert [w for w in flags if w not in ("--host", "--port")] == SERVER_FLAGS
    # Daphne serves nothing: it is only a test extra, because channels.testing imports it.
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not [d for d in project["dependencies"] if d.lower().startswith("daphne")]
    assert "daphne" not in settings.INSTALLED_APPS


# --- Websocket refusals ----------------------------------------------------------------------------

def ws_url(server, path: str) -> str:
    return server.base.replace("http://", "ws://") + path


def handshake_status(server, path: str, *, cookie: str = "", origin: str | None = None) -> int:
    """The HTTP status the server refused the handshake with (101 if it accepted)."""
    headers = {"Cookie": cookie} if cookie else {}
    try:
        with ws_connect(ws_url(server, path), origin=origin, additional_headers=headers,
                        open_timeout=TIMEOUT):
            return 101
    except InvalidStatus as refused:
        return refused.response.status_code


def close_code_after(server, path: str, cookie: str, frame, *, then=None) -> int:
    """Open an allowed socket, read its first frame, run `then`, send `frame`, and return the
    code the server closed it with."""
    with ws_connect(ws_url(server, path), origin=server.origin, additional_headers={"Cookie": cookie},
                    open_timeout=TIMEOUT, max_size=2 ** 20) as feed:
        try:
            json.loads(feed.recv(timeout=TIMEOUT))
            if then is not None:
                then()
            if frame is not None:
                feed.send(frame)
            while True:
                feed.recv(timeout=TIMEOUT)
        except ConnectionClosed as closed:
            return closed.rcvd.code if closed.rcvd else 1006


def test_each_websocket_refusal_is_a_403_or_a_4xxx_close_and_the_log_holds_no_traceback(
        e2e_server, open_session, host):
    """Item 8. At the handshake (the socket may not exist for this client): 403, nothing sent.
    After it (the socket was allowed, then ends): a code in 4000-4999. Under Daphne every
    refusal code outside 1000/3000-4999 raised, closed with 1011 and logged a traceback."""
    judge = invite_and_join(open_session, "Ada").judge
    cookie = judge_cookie(judge)
    judge_path = f"/ws/s/{open_session.url_id}/"
    dashboard = f"/ws/host/sessions/{open_session.pk}/"
    port = e2e_server.base.rsplit(":", 1)[1]
    hosts = host_cookie(host)

    refused = {
        "another port": handshake_status(e2e_server, dashboard, cookie=hosts, origin="http://127.0.0.1:9999"),
        "another scheme": handshake_status(e2e_server, dashboard, cookie=hosts,
                                           origin=f"https://127.0.0.1:{port}"),
        "no origin": handshake_status(e2e_server, dashboard, cookie=hosts, origin=None),
        "not the host": handshake_status(e2e_server, dashboard, cookie=cookie, origin=e2e_server.origin),
        "not admitted": handshake_status(e2e_server, judge_path, origin=e2e_server.origin),
        "no such socket": handshake_status(e2e_server, "/ws/nothing/", cookie=cookie,
                                           origin=e2e_server.origin),
    }
    assert set(refused.values()) == {403}, refused
    # Positive control: the exact origin with the host's cookies opens the dashboard.
    assert handshake_status(e2e_server, dashboard, cookie=hosts, origin=e2e_server.origin) == 101

    closed = {
        "binary frame": close_code_after(e2e_server, judge_path, cookie, b"\x00\x01"),
        "not JSON": close_code_after(e2e_server, judge_path, cookie, "{not json"),
        "another shape": close_code_after(e2e_server, judge_path, cookie, '{"type": "subscribe"}'),
        "too big": close_code_after(e2e_server, judge_path, cookie, '{"type": "' + "x" * 300 + '"}'),
        # Removed by the host meanwhile (in this process: without Redis its event cannot reach
        # the server's sockets), so the server learns it at the socket's next ping.
        "removed": close_code_after(e2e_server, judge_path, cookie, '{"type": "ping"}',
                                    then=lambda: judge_remove(judge=judge, actor="test")),
    }
    assert closed == {"binary frame": 4003, "not JSON": 4007, "another shape": 4008, "too big": 4009,
                      "removed": 4403}, closed
    # The removed judge's browser is now refused at the handshake.
    assert handshake_status(e2e_server, judge_path, cookie=cookie, origin=e2e_server.origin) == 403
    log = e2e_server.stderr()
    assert "Uvicorn running" in log  # positive control: this is the server's log
    assert not TRACEBACK.search(log), log[-3000:]


@pytest.mark.server_env(BLINDJUDGE_WS_OPEN_BURST="5", BLINDJUDGE_WS_OPEN_PER_MINUTE="1")
def test_too_many_openings_from_one_address_close_with_4429(e2e_server, open_session):
    judge = invite_and_join(open_session, "Ada").judge
    cookie = judge_cookie(judge)
    path = f"/ws/s/{open_session.url_id}/"
    for _ in range(5):
        assert handshake_status(e2e_server, path, cookie=cookie, origin=e2e_server.origin) == 101
    assert close_code_after(e2e_server, path, cookie, None, then=lambda: None) == 4429
    assert not TRACEBACK.search(e2e_server.stderr()), e2e_server.stderr()[-3000:]


# --- Request bodies --------------------------------------------------------------------------------

def raw_request(server, head: str) -> socket.socket:
    port = int(server.base.rsplit(":", 1)[1])
    connection = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    connection.sendall(head.encode())
    return connection


def read_response(connection: socket.socket) -> tuple[int, bytes]:
    """The status and body of the one response on `connection`; raises TimeoutError if the
    server never answers (as today's code, waiting for the rest of the body, never does)."""
    data = b""
    while True:
        chunk = connection.recv(65536)
        if not chunk:
            break
        data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
        if length and len(body) >= int(length.group(1)):
            break
    status = int(data.split(b" ", 2)[1])
    return status, data.partition(b"\r\n\r\n")[2]


def test_a_huge_declared_body_is_answered_413_before_it_is_sent(e2e_server):
    """Item 11: an anonymous `POST /guest/` declaring 200 MB gets 413 while the client has sent
    16 KB of it: the server does not wait for (or read) the rest."""
    connection = raw_request(e2e_server, "POST /guest/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                             "Content-Type: application/x-www-form-urlencoded\r\n"
                             f"Content-Length: {200 * 1024 * 1024}\r\n\r\n")
    with connection:
        connection.sendall(b"x" * 16384)
        status, body = read_response(connection)
    assert status == 413
    assert b"Request too large: this address accepts at most 160 KB" in body


def test_a_chunked_body_is_counted_as_it_streams_and_answered_413_past_the_cap(e2e_server):
    connection = raw_request(e2e_server, "POST /guest/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                             "Content-Type: application/x-www-form-urlencoded\r\n"
                             "Transfer-Encoding: chunked\r\n\r\n")
    chunk = 16384
    with connection:
        for _ in range(REQUEST_CAP // chunk + 1):  # just past the cap, and no final chunk: the
            connection.sendall(f"{chunk:x}\r\n".encode() + b"x" * chunk + b"\r\n")  # body never ends
        status, body = read_response(connection)
    assert status == 413 and b"at most 160 KB" in body


def test_the_import_route_has_the_upload_cap_and_every_other_post_the_small_one(e2e_server):
    """A body between the two caps passes on the import route (read, then refused by CSRF as
    any anonymous POST is) and is 413 anywhere else; past the upload cap, the import is 413 too."""
    between = b"x" * (REQUEST_CAP + 1)

    def post(path: str, body: bytes, declared: int | None = None) -> int:
        port = int(e2e_server.base.rsplit(":", 1)[1])
        client = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
        try:
            client.putrequest("POST", path)
            client.putheader("Content-Type", "application/octet-stream")
            client.putheader("Content-Length", str(declared if declared is not None else len(body)))
            client.endheaders()
            client.send(body)
            return client.getresponse().status
        finally:
            client.close()

    assert post("/host/runs/import", between) == 403  # CSRF: the body was read, not capped
    assert post("/guest/", between) == 413
    assert post("/guest/", b"code=x") == 403  # positive control: a small POST reaches Django
    assert post("/host/runs/import", b"", declared=51 * 1024 * 1024 + 1) == 413
