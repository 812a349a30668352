"""The ASGI application: Django's HTTP handling, and the live websockets (blindjudge/routing.py).

Django's own HTTP handler, but with the threads its requests run in kept for the next request
(blindjudge/request_threads.py). Outside Django, before any of its work:
- HTTP request bodies are capped before they are read (`BodyCap`): a declared Content-Length
  over the route's cap is answered 413 at once; a chunked body is counted as it streams and
  answered 413 the moment it passes the cap. The rest is never read.
- Websockets pass the Origin check first (`SiteOriginOnly`: exactly SITE_URL's scheme, host and
  port; a page on another site or port cannot open a socket with the visitor's cookies), then the
  per-address opening limit (`SocketOpeningLimit`, counted in the store every process shares),
  then the session and user are read from the cookie, as for a page; the consumers' guards
  decide from those.

Refusals, uniformly: a socket that may not exist for this client (foreign or missing Origin, not
the session's host or admitted judge, an unknown path) is refused at the handshake (HTTP 403,
nothing sent); a socket that was allowed is closed with a code in 4000-4999
(judging/live_consumer.py), which tells the page whether to reconnect.
"""

import asyncio
import json
import logging
import math
import os
import time
from urllib.parse import urlsplit

import django
import redis
import redis.asyncio
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "blindjudge.settings")
django.setup(set_prefix=False)  # what django.core.asgi.get_asgi_application does first

from blindjudge.request_threads import KeptThreadsASGIHandler  # noqa: E402

# Django's HTTP handling, each request's sync work on a thread kept for the next request.
django_asgi_app = KeptThreadsASGIHandler()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402

from blindjudge.credential_paths import RedactCredentials  # noqa: E402
from blindjudge.routing import websocket_urlpatterns  # noqa: E402
from judging.live_consumer import CLOSE_TOO_MANY  # noqa: E402

logger = logging.getLogger(__name__)

IMPORT_PATH = "/host/runs/import"
HOST_PREFIX = "/host/"

# The server's own access log (Uvicorn, under ./bj start) never writes a token path; Django's
# loggers get the same filter from settings.LOGGING.
for _name in ("uvicorn.access", "uvicorn.error"):
    logging.getLogger(_name).addFilter(RedactCredentials())


# --- HTTP: request bodies ------------------------------------------------------------------------

def body_cap(path: str) -> int:
    """The most bytes a request body to `path` may have: the host's bundle import, the host's
    other forms (rubric, preregistration, redaction patterns), and everything else (a judge's
    verdict is the largest of those)."""
    if path == IMPORT_PATH:
        return settings.BLINDJUDGE_MAX_IMPORT_UPLOAD_BYTES
    if path.startswith(HOST_PREFIX):
        return settings.BLINDJUDGE_MAX_HOST_FORM_BYTES
    return settings.BLINDJUDGE_MAX_REQUEST_BYTES


def _size(n: int) -> str:
    if n >= 1024 * 1024:
        return f"{n / (1024 * 1024):.1f} MB"
    if n >= 1024:
        return f"{math.floor(n / 1024)} KB"
    return f"{n} bytes"


async def _too_large(scope, send, limit: int):
    message = (f"Request too large: this address accepts at most {_size(limit)}. "
               "Nothing was read or saved.")
    # The judge page's autosave asks for JSON and shows its message (as every other refusal it
    # gets: blindjudge/errors.py); everyone else gets one line of text.
    accept = b",".join(value for name, value in scope["headers"] if name == b"accept")
    if b"application/json" in accept:
        body = json.dumps({"saved": False, "error": "too_large", "message": message}).encode()
        content_type = b"application/json"
    else:
        body = (message + "\n").encode()
        content_type = b"text/plain; charset=utf-8"
    await send({"type": "http.response.start", "status": 413, "headers": [
        (b"content-type", content_type),
        (b"content-length", str(len(body)).encode()),
        # The rest of the body is never read: the connection cannot carry another request.
        (b"connection", b"close"),
        (b"cache-control", b"no-store"),
        (b"x-content-type-options", b"nosniff"),
        # Answered before Django, so its CSP middleware never sees this: nothing here may load.
        (b"content-security-policy", b"default-src 'none'; frame-ancestors 'none'"),
        (b"referrer-policy", b"no-referrer"),
    ]})
    await send({"type": "http.response.body", "body": body})


class BodyCap:
    """A request body over its route's cap is answered 413 without being read."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = body_cap(scope["path"])
        for name, value in scope["headers"]:
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    declared = 0  # the server refuses a malformed length before we are called
                if declared > limit:
                    return await _too_large(scope, send, limit)
        received = 0
        answered = False
        started = False

        async def counted_receive():
            nonlocal received, answered
            if answered:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    answered = True
                    if not started:
                        await _too_large(scope, send, limit)
                    # Django stops reading at a disconnect and answers nothing itself.
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message):
            nonlocal started
            if answered:
                return  # the 413 is the answer
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        return await self.app(scope, counted_receive, guarded_send)


# --- Websockets ----------------------------------------------------------------------------------

async def _refuse_handshake(receive, send):
    """Close before accepting: the server answers the upgrade with 403 and sends nothing else."""
    message = await receive()
    if message["type"] == "websocket.connect":
        await send({"type": "websocket.close"})


def site_origin() -> str:
    site = urlsplit(settings.SITE_URL)
    return _origin(site.scheme, site.hostname, site.port)


def _origin(scheme: str, host: str | None, port: int | None) -> str:
    scheme = scheme.lower()
    port = port or {"http": 80, "https": 443}.get(scheme)
    return f"{scheme}://{(host or '').lower()}:{port}"


def origin_of(scope) -> str | None:
    """The handshake's Origin, normalised like `site_origin` (explicit port), or None."""
    values = [value for name, value in scope["headers"] if name == b"origin"]
    if len(values) != 1:
        return None
    try:
        parts = urlsplit(values[0].decode("latin-1").strip())
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/"):
            return None
        return _origin(parts.scheme, parts.hostname, parts.port)
    except ValueError:  # a port that is not a number, a malformed IPv6 literal
        return None


class SiteOriginOnly:
    """Websockets only from pages of this site: the Origin must be SITE_URL's origin exactly.

    Not Channels' AllowedHostsOriginValidator, which compares host names only: any port or
    scheme on the same host passed, so another service on 127.0.0.1 (or plain http on the
    site's name) could open a host's dashboard with the host's cookies."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "websocket" and origin_of(scope) != site_origin():
            return await _refuse_handshake(receive, send)
        return await self.app(scope, receive, send)


class MemoryOpeningCount:
    """The opening buckets in this process's memory: the shared store on the embedded default
    (SQLite and the in-memory channel layer, which run as one process: `deploy/serve` refuses
    more than one worker without REDIS_URL), so every opening of the deployment is counted here."""

    MAX_ADDRESSES = 10_000  # past this, full buckets (addresses idle for a while) are forgotten

    def __init__(self, clock=time.monotonic):
        self.clock = clock
        self.buckets: dict[str, tuple[float, float]] = {}  # address -> (tokens, when)

    def allow(self, address: str, burst: float, rate: float) -> bool:
        now = self.clock()
        tokens, when = self.buckets.get(address, (burst, now))
        tokens = min(burst, tokens + (now - when) * rate)
        allowed = tokens >= 1
        self.buckets[address] = (tokens - 1 if allowed else tokens, now)
        if len(self.buckets) > self.MAX_ADDRESSES:
            self.buckets = {a: (t, w) for a, (t, w) in self.buckets.items()
                            if min(burst, t + (now - w) * rate) < burst}
        return allowed


# One address's bucket, taken in one atomic step on Redis's clock (so the processes' clocks do
# not matter): refilled since its last opening, one token taken if there is one. The key expires
# when the bucket would be full again, when a missing key means the same thing.
# KEYS[1]: the address's key; ARGV: the burst, the refill per second. Returns 1 (allowed) or 0.
OPENING_SCRIPT = """
local burst = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local held = redis.call('HMGET', KEYS[1], 'tokens', 'when')
local tokens = tonumber(held[1])
local when = tonumber(held[2])
if tokens == nil or when == nil then
    tokens = burst
    when = now
end
tokens = math.min(burst, tokens + math.max(0, now - when) * rate)
local allowed = 0
if tokens >= 1 then
    tokens = tokens - 1
    allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.6f', tokens), 'when', string.format('%.6f', now))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / rate * 1000) + 1000)
return allowed
"""


class RedisOpeningCount:
    """The opening buckets in Redis (REDIS_URL, the channel layer's server), counted together by
    every process: keys `<BLINDJUDGE_WS_OPEN_KEY_PREFIX>:<address>`, each expiring once its bucket
    has refilled. One connection pool per process (per event loop: Uvicorn runs one per
    process; tests run one per test), a few connections shared by every handshake.

    If Redis does not answer, the opening is allowed uncounted (the limit protects the server; a
    Redis fault must not lock judges out), logged once until Redis answers again."""

    POOL_SIZE = 16
    TIMEOUT_SECONDS = 2  # to connect, to answer, and to wait for a free pooled connection

    def __init__(self):
        self._client: tuple[asyncio.AbstractEventLoop, str, redis.asyncio.Redis] | None = None
        self._script = None
        self.failing = False

    def client(self, url: str) -> redis.asyncio.Redis:
        loop = asyncio.get_running_loop()
        if self._client is None or self._client[0] is not loop or self._client[1] != url:
            no_retry = Retry(NoBackoff(), 0)  # an unanswered opening is allowed, not retried
            pool = redis.asyncio.BlockingConnectionPool.from_url(
                url, max_connections=self.POOL_SIZE, timeout=self.TIMEOUT_SECONDS,
                socket_connect_timeout=self.TIMEOUT_SECONDS, socket_timeout=self.TIMEOUT_SECONDS,
                retry=no_retry)
            client = redis.asyncio.Redis(connection_pool=pool, retry=no_retry)
            self._client = (loop, url, client)
            self._script = client.register_script(OPENING_SCRIPT)
        return self._client[2]

    async def allow(self, url: str, key: str, burst: float, rate: float) -> bool:
        client = self.client(url)
        try:
            allowed = await self._script(keys=[key], args=[burst, rate], client=client)
        except (redis.RedisError, OSError, TimeoutError) as error:
            if not self.failing:
                self.failing = True
                logger.warning("Websocket opening limit: Redis did not answer (%s); openings are "
                               "allowed uncounted until it does.", error)
            return True
        if self.failing:
            self.failing = False
            logger.warning("Websocket opening limit: Redis answers again; openings are counted.")
        return bool(allowed)


class SocketOpeningLimit:
    """At most BLINDJUDGE_WS_OPEN_BURST websocket openings per client address at once, refilled
    at BLINDJUDGE_WS_OPEN_PER_MINUTE; past that the socket is accepted and closed at once with
    CLOSE_TOO_MANY (4429), which the page answers by waiting its longest backoff (static/live/socket.js).

    Counted in the store every process shares (docs/threats.md case 40), so N processes give an
    address no more openings than one: with REDIS_URL, in Redis (`RedisOpeningCount`, one round
    trip per opening; if Redis does not answer, the opening is allowed); on the embedded default,
    which is one process, in its memory (`MemoryOpeningCount`). A judge is never locked out for
    long: a refusal lasts until one opening has refilled (60 / BLINDJUDGE_WS_OPEN_PER_MINUTE
    seconds), and the burst covers many tabs reconnecting at once after a restart. The client
    address is the one the server sees (behind nginx, the forwarded one nginx sets; see
    deploy/README.md)."""

    def __init__(self, app, clock=time.monotonic):
        self.app = app
        self.memory = MemoryOpeningCount(clock)
        self.redis = RedisOpeningCount()

    async def allow(self, address: str) -> bool:
        burst = float(settings.BLINDJUDGE_WS_OPEN_BURST)
        rate = settings.BLINDJUDGE_WS_OPEN_PER_MINUTE / 60.0
        if settings.REDIS_URL:
            key = f"{settings.BLINDJUDGE_WS_OPEN_KEY_PREFIX}:{address}"
            return await self.redis.allow(settings.REDIS_URL, key, burst, rate)
        return self.memory.allow(address, burst, rate)

    async def __call__(self, scope, receive, send):
        # Without a client address (a Unix socket with no proxy headers) there is nothing to
        # key on; the servers this project runs always know it.
        client = scope.get("client")
        if scope["type"] == "websocket" and client:
            if not await self.allow(client[0]):
                message = await receive()
                if message["type"] == "websocket.connect":
                    await send({"type": "websocket.accept"})
                    await send({"type": "websocket.close", "code": CLOSE_TOO_MANY})
                return None
        return await self.app(scope, receive, send)


application = BodyCap(ProtocolTypeRouter({
    "http": django_asgi_app,
    "websocket": SiteOriginOnly(SocketOpeningLimit(AuthMiddlewareStack(URLRouter(websocket_urlpatterns)))),
}))
