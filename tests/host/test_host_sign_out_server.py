"""The host's dashboard socket on a real `deploy/serve` process (Uvicorn) ends when the host signs
out in another tab, served by another process (this test's): with Redis the "signed out" event
crosses to the server's process and closes it; on the embedded default it cannot, and the
socket's next ping, which re-reads the browser session, closes it (issue 12, item 7)."""

import json

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect as ws_connect

from host.consumers import CLOSE_SIGNED_OUT
from tests.support.deployment import ServeProcess, free_port, serve_env
from tests.worlds import HOST_PASSWORD

pytestmark = pytest.mark.django_db(transaction=True)


def test_signing_out_in_another_process_ends_the_dashboard_socket(open_session, host, tmp_path):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = ServeProcess(port=port, log_path=tmp_path / "serve.log", env=serve_env(site_url=base, extra={
        "BLINDJUDGE_TEST_DATABASE_NAME": str(connection.settings_dict["NAME"])})).start()
    browser = Client()
    assert browser.post("/accounts/login/", {"login": host.user.username,
                                             "password": HOST_PASSWORD}).status_code == 302
    cookie = f"{settings.SESSION_COOKIE_NAME}={browser.cookies[settings.SESSION_COOKIE_NAME].value}"
    try:
        with ws_connect(f"ws://127.0.0.1:{port}/ws/host/sessions/{open_session.pk}/", origin=base,
                        additional_headers={"Cookie": cookie}, open_timeout=10) as feed:
            assert json.loads(feed.recv(timeout=10))["type"] == "snapshot"
            feed.send(json.dumps({"type": "ping"}))
            assert json.loads(feed.recv(timeout=10)) == {"type": "pong"}  # positive control
            assert browser.post("/accounts/logout/").status_code == 302
            if not settings.REDIS_URL:
                feed.send(json.dumps({"type": "ping"}))
            assert json.loads(feed.recv(timeout=10)) == {"type": "signed_out"}
            with pytest.raises(ConnectionClosed) as closed:
                feed.recv(timeout=10)
            assert closed.value.rcvd.code == CLOSE_SIGNED_OUT
    finally:
        server.stop()
    assert "Traceback" not in server.log(), server.log()[-3000:]
