"""Issue 12 item 11 at the ASGI level: request bodies are capped before they are read
(blindjudge/asgi.py, BodyCap, outside Django). The same against a real server process is in
tests/e2e/test_server.py."""

import asyncio
import json

import pytest
from django.test import override_settings

from blindjudge.asgi import application

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

CHUNK = 32 * 1024


class Client:
    """An HTTP client at the ASGI interface: counts what the application read of the body."""

    def __init__(self, chunks: int, chunk: bytes = b"x" * CHUNK):
        self.left, self.chunk = chunks, chunk
        self.read = 0
        self.sent: list[dict] = []

    async def receive(self):
        if self.left == 0:  # the body is all sent; the client waits for its answer
            await asyncio.Event().wait()
        self.left -= 1
        self.read += 1
        return {"type": "http.request", "body": self.chunk, "more_body": self.left > 0}

    async def send(self, message):
        self.sent.append(message)

    @property
    def status(self) -> int:
        return next(m["status"] for m in self.sent if m["type"] == "http.response.start")

    @property
    def body(self) -> bytes:
        return b"".join(m.get("body", b"") for m in self.sent if m["type"] == "http.response.body")


def scope(path: str, content_length: int | None = None) -> dict:
    headers = [(b"host", b"127.0.0.1"), (b"content-type", b"application/x-www-form-urlencoded")]
    if content_length is not None:
        headers.append((b"content-length", str(content_length).encode()))
    else:
        headers.append((b"transfer-encoding", b"chunked"))
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
            "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"",
            "root_path": "", "headers": headers, "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8000)}


async def test_a_declared_length_over_the_cap_is_413_without_reading_a_byte():
    client = Client(chunks=6400)  # 200 MB
    await application(scope("/guest/", 200 * 1024 * 1024), client.receive, client.send)
    assert client.status == 413
    assert client.read == 0
    assert b"Request too large: this address accepts at most 160 KB" in client.body
    assert (b"connection", b"close") in next(m for m in client.sent if m["status"] == 413)["headers"]


async def test_a_chunked_body_is_413_as_soon_as_it_passes_the_cap_and_the_rest_is_never_read():
    client = Client(chunks=6400)
    await application(scope("/guest/"), client.receive, client.send)
    assert client.status == 413
    assert client.read == 160 * 1024 // CHUNK + 1  # the chunk that passed the cap, no more
    assert [m["type"] for m in client.sent] == ["http.response.start", "http.response.body"]


@override_settings(BLINDJUDGE_MAX_REQUEST_BYTES=1000, BLINDJUDGE_MAX_HOST_FORM_BYTES=5000,
                   BLINDJUDGE_MAX_IMPORT_UPLOAD_BYTES=20_000)
@pytest.mark.parametrize("path,allowed", [("/guest/", 1000), ("/join/abc", 1000), ("/accounts/login/", 1000),
                                          ("/host/sessions/1/edit", 5000), ("/host/runs/import", 20_000)])
async def test_each_route_has_its_configured_cap(path, allowed):
    over = Client(chunks=1, chunk=b"x" * (allowed + 1))
    await application(scope(path, allowed + 1), over.receive, over.send)
    assert over.status == 413 and over.read == 0
    # Positive control: at the cap the body reaches Django (CSRF refuses an anonymous POST).
    at = Client(chunks=1, chunk=b"x" * allowed)
    await application(scope(path, allowed), at.receive, at.send)
    assert at.read == 1 and at.status != 413


async def test_the_413_is_json_for_the_autosave_and_allows_nothing_to_load():
    """The judge page's autosave asks for JSON and shows the message it gets back; the 413 is
    answered before Django, so it carries its own CSP and Referrer-Policy."""
    autosave = Client(chunks=6400)
    request = scope("/s/abc/i/CODE/", 200 * 1024 * 1024)
    request["headers"].append((b"accept", b"application/json"))
    await application(request, autosave.receive, autosave.send)
    assert autosave.status == 413 and autosave.read == 0
    assert json.loads(autosave.body) == {
        "saved": False, "error": "too_large",
        "message": "Request too large: this address accepts at most 160 KB. Nothing was read or saved."}
    headers = dict(next(m for m in autosave.sent if m["type"] == "http.response.start")["headers"])
    assert headers[b"content-type"] == b"application/json"
    assert headers[b"content-security-policy"] == b"default-src 'none'; frame-ancestors 'none'"
    assert headers[b"referrer-policy"] == b"no-referrer"
    page = Client(chunks=6400)
    await application(scope("/guest/", 200 * 1024 * 1024), page.receive, page.send)
    headers = dict(next(m for m in page.sent if m["type"] == "http.response.start")["headers"])
    assert headers[b"content-type"] == b"text/plain; charset=utf-8"
    assert b"content-security-policy" in headers
