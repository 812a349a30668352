"""Live sockets against a real `deploy/serve` process (Uvicorn), where a client can vanish at any
moment of a consumer's work: the server must forget every socket whose client is gone, however
it went, or the host's dashboard counts ghosts ("yes (2 tabs)") until they go stale."""

import json
import signal
import socket
import time

import pytest
from django.conf import settings
from django.db import connection
from websockets.sync.client import connect as ws_connect

from judging.models import LiveSocket
from judging.services import session_close, session_reopen
from tests.support.deployment import ServeProcess, free_port, serve_env
from tests.worlds import host_cookie, invite_and_join, judge_cookie

pytestmark = pytest.mark.django_db(transaction=True)
ABANDONED = 30


def abandon_handshake(port: int, path: str, cookie: str, origin: str, after: float):
    """Send a websocket upgrade request and hang up at once, before the server answers: what a
    tab does when it navigates away while its socket is still connecting."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        raw.sendall((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                     "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                     f"Sec-WebSocket-Version: 13\r\nOrigin: {origin}\r\nCookie: {cookie}\r\n\r\n").encode())
        time.sleep(after)


def test_a_socket_whose_client_hangs_up_mid_handshake_is_forgotten(open_session, host, tmp_path):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = ServeProcess(port=port, log_path=tmp_path / "serve.log", env=serve_env(site_url=base, extra={
        "BLINDJUDGE_TEST_DATABASE_NAME": str(connection.settings_dict["NAME"])})).start()
    try:
        judge = invite_and_join(open_session, "Ada").judge
        cookie = judge_cookie(judge)
        with ws_connect(f"ws://127.0.0.1:{port}/ws/host/sessions/{open_session.pk}/", origin=base,
                        additional_headers={"Cookie": host_cookie(host)}, open_timeout=10) as feed:
            assert json.loads(feed.recv(timeout=10))["type"] == "snapshot"
            # Hang-ups spread over the consumer's whole handshake: the moment before it records the
            # socket, while it does, and after, when it answers into a closed connection.
            for n in range(ABANDONED):
                abandon_handshake(port, f"/ws/s/{open_session.url_id}/", cookie, base, after=n * 0.002)
            connected_seen = []
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:
                try:
                    connected_seen.append(json.loads(feed.recv(timeout=2))["judge"]["connected"])
                except TimeoutError:
                    if not LiveSocket.objects.filter(judge=judge).exists():
                        break
        left = LiveSocket.objects.filter(judge=judge).count()
    finally:
        stopped = server.stop()
    # Positive control: consumers did get as far as recording sockets, and the host was told.
    assert max(connected_seen, default=0) >= 1, "no abandoned socket reached the consumer"
    assert left == 0, (f"{left} of {ABANDONED} abandoned sockets still count as connected; the server "
                       f"said:\n{server.log()[-3000:]}")
    assert connected_seen[-1] == 0, "the host's dashboard was left counting a ghost"
    # A consumer that died mid-handshake may leave its teardown waiting in the channel layer (see
    # LiveConsumer.dispatch); a restart still ends by itself (Uvicorn exits by the signal it
    # handled), never needing SIGKILL.
    assert stopped == -signal.SIGTERM, f"deploy/serve ended with {stopped}:\n{server.log()[-3000:]}"


@pytest.mark.skipif(not settings.REDIS_URL, reason=(
    "a change made in another process reaches sockets only through the Redis channel layer (runs "
    "in the PostgreSQL + Redis run)"))
def test_a_change_made_outside_the_server_reaches_its_sockets(open_session, host, tmp_path):
    """What a management command does: a service called in a process with no event loop of its
    own (this test's) sends its event through Redis to the server process holding the sockets."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = ServeProcess(port=port, log_path=tmp_path / "serve.log", env=serve_env(site_url=base, extra={
        "BLINDJUDGE_TEST_DATABASE_NAME": str(connection.settings_dict["NAME"])})).start()
    try:
        with ws_connect(f"ws://127.0.0.1:{port}/ws/host/sessions/{open_session.pk}/", origin=base,
                        additional_headers={"Cookie": host_cookie(host)}, open_timeout=10) as feed:
            assert json.loads(feed.recv(timeout=10))["type"] == "snapshot"
            session_close(session=open_session, actor="test")
            assert json.loads(feed.recv(timeout=10)) == {"type": "session", "state": "closed"}
            session_reopen(session=open_session, actor="test")
            assert json.loads(feed.recv(timeout=10)) == {"type": "session", "state": "open"}
    finally:
        server.stop()
