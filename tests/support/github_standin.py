"""A local stand-in for GitHub's OAuth and profile endpoints, on 127.0.0.1.

allauth's GITHUB_URL (blindjudge/settings_test.py) points here. It serves the three endpoints a
sign-in may use and records every request, so a test can assert that nothing else reached GitHub.
"""

import http.client
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

CALLBACK = "/accounts/github/login/callback/"
KEEP = object()

ACCESS_TOKEN = "gho_standin_token"


@dataclass
class Recorded:
    method: str
    path: str
    query: dict
    body: dict
    authorization: str


@dataclass
class Standin:
    url: str
    user: dict = field(default_factory=lambda: {"id": 1, "login": "nobody"})
    requests: list[Recorded] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def paths(self) -> list[str]:
        return [f"{r.method} {r.path}" for r in self.requests]


class _Handler(BaseHTTPRequestHandler):
    standin: Standin  # set on the subclass made per server

    def log_message(self, *args):  # quiet test output
        pass

    def _record(self) -> Recorded:
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length).decode("utf-8") if length else ""
        recorded = Recorded(self.command, parts.path, parse_qs(parts.query, keep_blank_values=True),
                            parse_qs(raw, keep_blank_values=True),
                            self.headers.get("Authorization", ""))
        with self.standin.lock:
            self.standin.requests.append(recorded)
        return recorded

    def _json(self, payload, status=200):
        body = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):  # noqa: N802 - http.server's name
        recorded = self._record()
        if recorded.path == "/login/oauth/authorize":
            back = {"code": "standin-code"}
            if "state" in recorded.query:
                back["state"] = recorded.query["state"][0]
            self.send_response(302)
            self.send_header("Location", recorded.query["redirect_uri"][0] + "?" + urlencode(back))
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif recorded.path == "/api/v3/user" and recorded.authorization == f"token {ACCESS_TOKEN}":
            self._json(self.standin.user)
        else:
            self._json({"message": "Not Found"}, status=404)

    def do_POST(self):  # noqa: N802
        recorded = self._record()
        if recorded.path == "/login/oauth/access_token":
            self._json({"access_token": ACCESS_TOKEN, "token_type": "bearer", "scope": ""})
        else:
            self._json({"message": "Not Found"}, status=404)


def start(port: int) -> tuple[Standin, ThreadingHTTPServer]:
    standin = Standin(url=f"http://127.0.0.1:{port}")
    handler = type("Handler", (_Handler,), {"standin": standin})
    ThreadingHTTPServer.allow_reuse_address = True
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return standin, server


def via_github(standin: Standin, authorize_url: str) -> str:
    """What the browser does at GitHub: visit the authorize URL, get sent back (Location)."""
    parts = urlsplit(authorize_url)
    assert f"{parts.scheme}://{parts.netloc}" == standin.url
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
    try:
        connection.request("GET", f"{parts.path}?{parts.query}")
        response = connection.getresponse()
        assert response.status == 302
        return response.getheader("Location")
    finally:
        connection.close()


def sign_in(client, standin: Standin, *, github_id, login, start_url, state=KEEP):
    """With a Django test client: start by POST, pass through the stand-in, come back to the
    callback (optionally with another `state`, or none). Returns (callback response, session key
    before the callback)."""
    standin.user = {"id": github_id, "login": login, "name": "Secret Name",
                    "email": f"{login}@example.com", "bio": "secret bio"}
    start = client.post(start_url)
    assert start.status_code == 302, start
    back = urlsplit(via_github(standin, start["Location"]))
    assert back.path == CALLBACK
    query = {key: values[0] for key, values in parse_qs(back.query).items()}
    if state is None:
        query.pop("state")
    elif state is not KEEP:
        query["state"] = state
    key_before = client.session.session_key
    return client.get(back.path, query), key_before
