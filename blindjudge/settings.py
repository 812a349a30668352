"""One settings module, read from the environment (every variable is listed in .env.example).

Safe by default: DEBUG is off unless asked for, hosts come from SITE_URL (never a wildcard), and a
secret key must be given except on the embedded default, where one is generated once and kept in
the data directory. Setting DATABASE_URL or REDIS_URL moves the product to PostgreSQL / Redis.
A SITE_URL starting with https:// turns on the production transport settings (secure cookies,
HSTS, redirect to HTTPS behind a proxy that sets X-Forwarded-Proto).
"""

import os
import secrets
from pathlib import Path
from urllib.parse import urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env(name, default=None):
    return os.environ.get(name, default)


def env_bool(name, default=False):
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    lowered = value.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise ImproperlyConfigured(f"{name}={value!r}: expected one of 1/0, true/false, yes/no, on/off")


def env_int(name, default, minimum=0):
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r}: expected a whole number") from None
    if number < minimum:
        raise ImproperlyConfigured(f"{name}={value!r}: must be at least {minimum}")
    return number


def env_secret(name):
    """A secret from NAME or from the file named by NAME_FILE (for container secrets)."""
    path = os.environ.get(f"{name}_FILE")
    if path:
        try:
            return Path(path).read_text().strip()
        except OSError as error:
            raise ImproperlyConfigured(f"{name}_FILE={path!r}: {error.strerror}") from None
    return os.environ.get(name)


DATA_DIR = Path(env("BLINDJUDGE_DATA_DIR", str(BASE_DIR / "var"))).resolve()

SITE_URL = env("SITE_URL", "http://127.0.0.1:8000").rstrip("/")
_site = urlsplit(SITE_URL)
if _site.scheme not in ("http", "https") or not _site.hostname:
    raise ImproperlyConfigured(f"SITE_URL={SITE_URL!r}: expected http(s)://host[:port]")
HTTPS = _site.scheme == "https"

DATABASE_URL = env("DATABASE_URL", "")
EMBEDDED = DATABASE_URL == ""
DEBUG = env_bool("DEBUG", False)

SECRET_KEY = env_secret("SECRET_KEY")
if not SECRET_KEY:
    if not EMBEDDED:
        raise ImproperlyConfigured(
            "SECRET_KEY (or SECRET_KEY_FILE) must be set when DATABASE_URL is set; "
            'generate one with: python -c "import secrets; print(secrets.token_urlsafe(50))"'
        )
    # The embedded default keeps its own key beside its database, created once, never shared.
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    _key_file = DATA_DIR / "secret_key"
    if not _key_file.exists():
        _key_file.touch(mode=0o600)
        _key_file.write_text(secrets.token_urlsafe(50))
    SECRET_KEY = _key_file.read_text().strip()

_hosts = env("ALLOWED_HOSTS", "")
if _hosts:
    ALLOWED_HOSTS = [host.strip() for host in _hosts.split(",") if host.strip()]
else:
    ALLOWED_HOSTS = [_site.hostname]
    if EMBEDDED:
        ALLOWED_HOSTS += [h for h in ("127.0.0.1", "localhost") if h != _site.hostname]
if "*" in ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS must not contain a wildcard; list the host names")
CSRF_TRUSTED_ORIGINS = [f"{_site.scheme}://{_site.netloc}"]

# No "daphne" here: the one server everywhere is Uvicorn (./bj start, deploy/serve, the browser
# tests), so `manage.py runserver` stays Django's own (WSGI, no websockets) and is not used.
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "allauth",
    "allauth.account",
    "allauth.socialaccount",
    "allauth.socialaccount.providers.github",
    "csp",
    "accounts",
    "judging",
    "host",
    "judge",
    "reports",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Static files from the app process itself, so the embedded default needs no web server;
    # behind nginx, nginx serves /static/ first and this is never reached. WhiteNoise, without
    # collectstatic's manifest (blindjudge/staticfiles.py).
    "blindjudge.staticfiles.StaticFilesMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    "blindjudge.middleware.ServiceErrorMiddleware",
    "blindjudge.credential_paths.CredentialPageReferrerPolicy",
]

ROOT_URLCONF = "blindjudge.urls"
ASGI_APPLICATION = "blindjudge.asgi.application"
WSGI_APPLICATION = "blindjudge.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "csp.context_processors.nonce",
                "accounts.context.github",
                # After Django's built-in one, whose csrf_token it replaces (blindjudge/csrf.py).
                "blindjudge.csrf.csrf",
            ],
        },
    },
]

# --- Databases ------------------------------------------------------------------------------
# SQLite is a real product database here: WAL so readers never block the writer, a busy timeout
# so a writer waits instead of failing, and IMMEDIATE transactions so two writers serialise at
# BEGIN instead of deadlocking on a read-to-write lock upgrade.
SQLITE_OPTIONS = {
    "transaction_mode": "IMMEDIATE",
    "timeout": env_int("SQLITE_BUSY_TIMEOUT_SECONDS", 20, minimum=1),
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON;",
}


# Django's SQLite backend with the process's writers queued on a lock instead of SQLite's
# sleep-and-retry busy handler (see blindjudge/sqlite_backend/base.py).
SQLITE_ENGINE = "blindjudge.sqlite_backend"


def _database_from_url(url):
    scheme = urlsplit(url).scheme
    if scheme not in ("sqlite", "postgres", "postgresql"):
        raise ImproperlyConfigured(
            f"DATABASE_URL scheme {scheme!r} is not supported; use sqlite:///path or postgres://…"
        )
    config = dj_database_url.parse(url, conn_max_age=env_int("DB_CONN_MAX_AGE", 0))
    if config["ENGINE"] == "django.db.backends.sqlite3":
        config["ENGINE"] = SQLITE_ENGINE
        config["OPTIONS"] = dict(SQLITE_OPTIONS)
        config["TEST"] = {"NAME": str(Path(config["NAME"]).with_suffix(".test.sqlite3"))}
    elif pool := env_int("DB_POOL_MAX_SIZE", 8):
        # Under ASGI a request's database work runs in a thread Django's handler gives it (kept
        # for later requests by blindjudge/request_threads.py, but not tied to a client), so
        # Django's docs advise a pool over persistent connections; without either, every
        # request would open a connection:
        # a PostgreSQL backend process started, ~17 ms here (bench/). psycopg's pool, through
        # Django's own `pool` option, hands each request a connection already open.
        if config["CONN_MAX_AGE"]:
            raise ImproperlyConfigured(
                "DB_POOL_MAX_SIZE and DB_CONN_MAX_AGE exclude each other: set DB_POOL_MAX_SIZE=0 "
                "to keep connections with DB_CONN_MAX_AGE, or leave DB_CONN_MAX_AGE at 0")
        config["OPTIONS"] = {"pool": {"min_size": 2, "max_size": pool, "timeout": 10}}
        # Django then has the pool try each connection before handing it out, so after a
        # PostgreSQL restart the pool drops its dead connections instead of failing a request
        # with each of them.
        config["CONN_HEALTH_CHECKS"] = True
    return config


if EMBEDDED:
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    DATABASES = {
        "default": {
            "ENGINE": SQLITE_ENGINE,
            "NAME": str(DATA_DIR / "blindjudge.sqlite3"),
            "OPTIONS": dict(SQLITE_OPTIONS),
            # Pinned to a file: in memory, WAL and the busy timeout would never be exercised.
            "TEST": {"NAME": str(DATA_DIR / "test-blindjudge.sqlite3")},
        }
    }
else:
    DATABASES = {"default": _database_from_url(DATABASE_URL)}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Channels and the shared store --------------------------------------------------------
REDIS_URL = env("REDIS_URL", "")
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            # Redis pub/sub: a group_send is one PUBLISH and each process reads every message
            # from one subscription, where the list-based layer (channels_redis.core) spends
            # several round trips per message behind one receive lock per process; that lock
            # queued the host's dashboard by seconds at 50 verdicts/s (bench/README.md). What
            # pub/sub gives up, delivery to a process that is not listening, nothing here relies
            # on: a socket that reconnects re-reads the state.
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            # The prefix keeps deployments (or test runs) sharing one Redis apart.
            # socket_timeout: redis-py 8 times reads out at 5 s by default; a loaded server must
            # not drop its subscription for a slow reply.
            "CONFIG": {"hosts": [{"address": REDIS_URL, "socket_timeout": 30}],
                       "prefix": env("REDIS_CHANNEL_PREFIX") or "blindjudge"},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# --- Authentication -----------------------------------------------------------------------
# One backend: allauth's (usernames without case), handing the pooled connection back before it
# hashes a password (accounts/auth_backends.py). Django's ModelBackend before it hashed every
# wrong password a second time.
AUTHENTICATION_BACKENDS = ["accounts.auth_backends.PasswordBackend"]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
     "OPTIONS": {"min_length": 12}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/host/"
ACCOUNT_ADAPTER = "accounts.adapters.ClosedSignupAccountAdapter"
SOCIALACCOUNT_ADAPTER = "judge.adapters.InvitedGitHubSocialAccountAdapter"
ACCOUNT_LOGIN_METHODS = {"username"}
ACCOUNT_SIGNUP_FIELDS = ["username*", "password1*", "password2*"]
ACCOUNT_EMAIL_VERIFICATION = "none"
# allauth keeps its sign-in limits in Django's cache, per process here (N processes gave N times
# the attempts, a restart reset them, and 5 wrong passwords for a username locked its owner out
# from everywhere): off, and counted in the database instead (accounts/throttle.py,
# BLINDJUDGE_SIGNIN_* below). Its password-change limit (per signed-in user) stays.
ACCOUNT_RATE_LIMITS = {"login": None, "login_failed": None}
# Nothing can make the server send mail: no password reset, email confirmation or email management
# is mounted (blindjudge/urls.py), and should anything still try, this backend drops the message.
EMAIL_BACKEND = "django.core.mail.backends.dummy.EmailBackend"
ADMINS = MANAGERS = []
SOCIALACCOUNT_QUERY_EMAIL = False
SOCIALACCOUNT_STORE_TOKENS = False
SOCIALACCOUNT_LOGIN_ON_GET = False
SOCIALACCOUNT_PROVIDERS = {
    "github": {
        "SCOPE": [],
        "APP": {
            "client_id": env("GITHUB_CLIENT_ID", ""),
            "secret": env_secret("GITHUB_CLIENT_SECRET") or "",
        },
    }
}
if env("GITHUB_URL"):
    SOCIALACCOUNT_PROVIDERS["github"]["GITHUB_URL"] = env("GITHUB_URL")

# --- Security headers ----------------------------------------------------------------------
# Django's database sessions, their per-request read written out (blindjudge/sessions.py).
SESSION_ENGINE = "blindjudge.sessions"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_HTTPONLY = True
CSRF_FAILURE_VIEW = "blindjudge.errors.csrf_failure"  # JSON for the autosave, else 403_csrf.html
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
if HTTPS:
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
    # Preloading asks browser makers to hard-code HTTPS for the whole domain, subdomains included,
    # and is slow to undo: the operator opts in (and then submits the domain at hstspreload.org).
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
    if not SECURE_HSTS_PRELOAD:
        # `check --deploy` warns that the site cannot be submitted to the preload list: that is
        # the operator's choice here, not an oversight.
        SILENCED_SYSTEM_CHECKS = ["security.W021"]

CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'"],
        # The live pages' websocket; some browsers do not count ws(s): as 'self'.
        "connect-src": ["'self'", f"{'wss' if HTTPS else 'ws'}://{_site.netloc}"],
        "frame-src": ["'self'"],
        "frame-ancestors": ["'self'"],
        "form-action": ["'self'"],
        "base-uri": ["'none'"],
        "object-src": ["'none'"],
    }
}

# --- Static files, locale -----------------------------------------------------------------
STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env("STATIC_ROOT", str(DATA_DIR / "static")))
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # Hashed names, so a cached old stylesheet never meets a new page.
    "staticfiles": {"BACKEND": "blindjudge.staticfiles.ManifestStaticFilesStorage"},
}
LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- Logging: errors to stderr, never tracebacks to clients (DEBUG is off) ---------------
# Every record is passed through RedactCredentials: no token path (/join/…, /resume/…) or OAuth
# code reaches a log (Django logs the path of each 4xx; see blindjudge/credential_paths.py).
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"redact_credentials": {"()": "blindjudge.credential_paths.RedactCredentials"}},
    "handlers": {"stderr": {"class": "logging.StreamHandler", "filters": ["redact_credentials"]}},
    "root": {"handlers": ["stderr"], "level": env("LOG_LEVEL", "WARNING")},
}

# --- blindjudge ---------------------------------------------------------------------------
BLINDJUDGE_MAX_BUNDLE_BYTES = env_int("BLINDJUDGE_MAX_BUNDLE_BYTES", 50 * 1024 * 1024, minimum=1)
BLINDJUDGE_MAX_COPY_BYTES = env_int("BLINDJUDGE_MAX_COPY_BYTES", 5 * 1024 * 1024, minimum=1)


def _text_limit(name, default, ceiling=None):
    """A limit on one kind of text (README, Configuration): at least 1, and never above the
    database column that stores the text."""
    value = env_int(name, default, minimum=1)
    if ceiling is not None and value > ceiling:
        raise ImproperlyConfigured(f"{name}={value}: at most {ceiling} (the database column's size)")
    return value


# Every other text a bundle or a form carries. Characters are code points; requests are counted
# in UTF-8 bytes. The bundle's limits go to content.limits.TextLimits (same defaults there).
BLINDJUDGE_MAX_NAME_CHARS = _text_limit("BLINDJUDGE_MAX_NAME_CHARS", 200, ceiling=200)
BLINDJUDGE_MAX_ID_CHARS = _text_limit("BLINDJUDGE_MAX_ID_CHARS", 200, ceiling=200)
BLINDJUDGE_MAX_TASK_CHARS = _text_limit("BLINDJUDGE_MAX_TASK_CHARS", 100_000)
BLINDJUDGE_MAX_FINDING_CHARS = _text_limit("BLINDJUDGE_MAX_FINDING_CHARS", 20_000)
BLINDJUDGE_MAX_REVIEW_REASON_CHARS = _text_limit("BLINDJUDGE_MAX_REVIEW_REASON_CHARS", 20_000)
BLINDJUDGE_MAX_REVIEW_REQUEST_BYTES = _text_limit("BLINDJUDGE_MAX_REVIEW_REQUEST_BYTES", 6 * 1024 * 1024)
BLINDJUDGE_MAX_NOTE_CHARS = _text_limit("BLINDJUDGE_MAX_NOTE_CHARS", 10_000)
BLINDJUDGE_MAX_RUBRIC_CHARS = _text_limit("BLINDJUDGE_MAX_RUBRIC_CHARS", 20_000)
BLINDJUDGE_MAX_PREREG_CHARS = _text_limit("BLINDJUDGE_MAX_PREREG_CHARS", 100_000)
BLINDJUDGE_MAX_PATTERN_CHARS = _text_limit("BLINDJUDGE_MAX_PATTERN_CHARS", 500)
BLINDJUDGE_MAX_VERDICT_REASON_CHARS = _text_limit("BLINDJUDGE_MAX_VERDICT_REASON_CHARS", 10_000)
BLINDJUDGE_MAX_DISPLAY_NAME_CHARS = _text_limit("BLINDJUDGE_MAX_DISPLAY_NAME_CHARS", 60,
                                                ceiling=200)
# The bundle validator's error list stops after this many problems (the rest are counted).
BLINDJUDGE_MAX_BUNDLE_ERRORS = env_int("BLINDJUDGE_MAX_BUNDLE_ERRORS", 100, minimum=1)
BLINDJUDGE_JOIN_TOKEN_DAYS = env_int("BLINDJUDGE_JOIN_TOKEN_DAYS", 14, minimum=1)
# Wrong guest codes allowed per client address in each window before every attempt is refused.
BLINDJUDGE_GUEST_ATTEMPTS = env_int("BLINDJUDGE_GUEST_ATTEMPTS", 10, minimum=1)
BLINDJUDGE_GUEST_WINDOW_SECONDS = env_int("BLINDJUDGE_GUEST_WINDOW_SECONDS", 900, minimum=1)
# Host sign-in: wrong passwords allowed per client address (IPv6: per /64), and per username from
# one address, in each window, before that address (or that username from it) is refused until
# the window ends. After BLINDJUDGE_SIGNIN_USERNAME_SLOW_AFTER wrong passwords for a username from
# anywhere, an address that has just failed for it waits BLINDJUDGE_SIGNIN_SLOW_SECONDS before
# its next try; an address that has not is never held back, so the owner can always sign in.
BLINDJUDGE_SIGNIN_ADDRESS_FAILURES = env_int("BLINDJUDGE_SIGNIN_ADDRESS_FAILURES", 30, minimum=1)
BLINDJUDGE_SIGNIN_FAILURES = env_int("BLINDJUDGE_SIGNIN_FAILURES", 5, minimum=1)
BLINDJUDGE_SIGNIN_WINDOW_SECONDS = env_int("BLINDJUDGE_SIGNIN_WINDOW_SECONDS", 900, minimum=1)
BLINDJUDGE_SIGNIN_USERNAME_SLOW_AFTER = env_int("BLINDJUDGE_SIGNIN_USERNAME_SLOW_AFTER", 10,
                                                minimum=1)
BLINDJUDGE_SIGNIN_SLOW_SECONDS = env_int("BLINDJUDGE_SIGNIN_SLOW_SECONDS", 60, minimum=1)
# How often the server re-reads the sign-in behind each open host dashboard socket (it also does
# before sending any event, and at each ping): a socket that never pings still ends with its sign-in.
BLINDJUDGE_HOST_SOCKET_RECHECK_SECONDS = env_int("BLINDJUDGE_HOST_SOCKET_RECHECK_SECONDS", 30,
                                                 minimum=1)
# A host dashboard socket that sent no frame this long (its client pings every 25 s) is closed:
# the live feeds' stale limit (judging.live.STALE_SECONDS); the page reconnects when it wakes.
BLINDJUDGE_HOST_SOCKET_IDLE_SECONDS = env_int("BLINDJUDGE_HOST_SOCKET_IDLE_SECONDS", 70, minimum=1)
# Host sign-ins under way at once from one address (IPv6: per /64); the rest are refused before
# any password is hashed (a password hash is CPU spent on purpose).
BLINDJUDGE_SIGNIN_CONCURRENT = env_int("BLINDJUDGE_SIGNIN_CONCURRENT", 4, minimum=1)
# A judge's requests (every path under /s/) worked on at once in each serving process,
# reads and writes counted apart; the rest wait their turn on the event loop. Python runs one
# thread at a time, so more at once only hand the GIL back and forth (blindjudge/request_threads.py).
# 0: no turns, every request at once.
BLINDJUDGE_JUDGE_REQUESTS_AT_ONCE = env_int("BLINDJUDGE_JUDGE_REQUESTS_AT_ONCE", 2, minimum=0)
# Guests admitted per client address (every session together) in each window; past it a join
# is refused with a 429 until the window ends. A class behind one NAT counts as one address.
BLINDJUDGE_GUEST_JOINS = env_int("BLINDJUDGE_GUEST_JOINS", 30, minimum=1)
BLINDJUDGE_GUEST_JOIN_WINDOW_SECONDS = env_int("BLINDJUDGE_GUEST_JOIN_WINDOW_SECONDS", 3600,
                                               minimum=1)
# A new session's guest cap unless the host gives another (0: no cap unless the host sets one).
BLINDJUDGE_DEFAULT_GUEST_CAP = env_int("BLINDJUDGE_DEFAULT_GUEST_CAP", 50, minimum=0)
if BLINDJUDGE_DEFAULT_GUEST_CAP > 100_000:  # judging.services.checks.MAX_GUEST_CAP
    raise ImproperlyConfigured(f"BLINDJUDGE_DEFAULT_GUEST_CAP={BLINDJUDGE_DEFAULT_GUEST_CAP}: "
                               "at most 100000")
BLINDJUDGE_HOST_GITHUB_ALLOWLIST = [
    login.strip().lower()
    for login in env("BLINDJUDGE_HOST_GITHUB_ALLOWLIST", "").split(",")
    if login.strip()
]
DATA_UPLOAD_MAX_MEMORY_SIZE = BLINDJUDGE_MAX_BUNDLE_BYTES + 1024 * 1024
# Request bodies, capped before they are read (blindjudge/asgi.py, BodyCap): over the cap the
# answer is 413 and the rest is never read. The bundle upload: the largest bundle plus the form's
# envelope (raise it when uploads are converted, e.g. evaluation logs larger than their bundle;
# keep nginx's client_max_body_size in step). The host's other forms: rubric, preregistration,
# amendments and redaction patterns of a few hundred thousand characters. Everything else
# (judges, guests, sign-in): the largest is a verdict with a reason of MAX_REASON_CHARS (10,000)
# characters, at most 120,000 bytes form-encoded (4-byte characters, each byte as %XX).
BLINDJUDGE_MAX_IMPORT_UPLOAD_BYTES = env_int("BLINDJUDGE_MAX_IMPORT_UPLOAD_BYTES",
                                             BLINDJUDGE_MAX_BUNDLE_BYTES + 1024 * 1024, minimum=1)
BLINDJUDGE_MAX_HOST_FORM_BYTES = env_int("BLINDJUDGE_MAX_HOST_FORM_BYTES", 2 * 1024 * 1024, minimum=1)
BLINDJUDGE_MAX_REQUEST_BYTES = env_int("BLINDJUDGE_MAX_REQUEST_BYTES", 160 * 1024, minimum=1)

# An opening started from the host's page renders in a process of its own (judging/opening.py);
# each text it renders (a copy, a task statement, the rubric) has BLINDJUDGE_RENDER_SECONDS, past
# which it is shown as plain text (judging.renders.deadline).
BLINDJUDGE_RENDER_SECONDS = env_int("BLINDJUDGE_RENDER_SECONDS", 30, minimum=1)

# The revealed report is built by builder processes beside each serving process, never inside it
# (reports/offprocess.py): a build that takes longer than BLINDJUDGE_REPORT_BUILD_TIMEOUT seconds
# is stopped (504); a builder idle for BLINDJUDGE_REPORT_BUILDER_IDLE seconds exits (0: a fresh
# builder for every report); at most BLINDJUDGE_REPORT_BUILDERS build at once per serving process.
BLINDJUDGE_REPORT_BUILD_TIMEOUT = env_int("BLINDJUDGE_REPORT_BUILD_TIMEOUT", 120, minimum=1)
BLINDJUDGE_REPORT_BUILDER_IDLE = env_int("BLINDJUDGE_REPORT_BUILDER_IDLE", 600, minimum=0)
BLINDJUDGE_REPORT_BUILDERS = env_int("BLINDJUDGE_REPORT_BUILDERS", 2, minimum=1)
# A host opening a revealed session's page starts a builder then, so the download finds it ready.
BLINDJUDGE_REPORT_BUILDER_PRESTART = env_bool("BLINDJUDGE_REPORT_BUILDER_PRESTART", True)
# Evaluation files (`import_run --from …`, the host's import page) are converted in a child
# process, never in the serving one (judging/importing.py): its address space is limited to
# BLINDJUDGE_IMPORT_MEMORY_MB and it is stopped after BLINDJUDGE_IMPORT_TIMEOUT seconds; either
# is a refusal that says so, and nothing is imported. The limit covers the files themselves (up
# to BLINDJUDGE_MAX_IMPORT_UPLOAD_BYTES from the page) and what parsing them takes.
BLINDJUDGE_IMPORT_MEMORY_MB = env_int("BLINDJUDGE_IMPORT_MEMORY_MB", 2048, minimum=64)
BLINDJUDGE_IMPORT_TIMEOUT = env_int("BLINDJUDGE_IMPORT_TIMEOUT", 300, minimum=1)
# Websocket openings per client address, counted by all server processes together (blindjudge/
# asgi.py, SocketOpeningLimit): a burst, refilled at a steady rate. Each judge page (item,
# session, lock) opens one as it loads, and reconnects with backoff; past the limit the socket is
# closed with 4429 and the page waits (it still saves: only its live updates wait). Judges sharing
# one address (a lab behind NAT) share its limit: raise both for them. With REDIS_URL the counts
# live in Redis, under BLINDJUDGE_WS_OPEN_KEY_PREFIX (default: the channel layer's prefix and
# ":ws-open"); on the embedded default, in the one process's memory.
BLINDJUDGE_WS_OPEN_BURST = env_int("BLINDJUDGE_WS_OPEN_BURST", 120, minimum=1)
BLINDJUDGE_WS_OPEN_PER_MINUTE = env_int("BLINDJUDGE_WS_OPEN_PER_MINUTE", 120, minimum=1)
BLINDJUDGE_WS_OPEN_KEY_PREFIX = (env("BLINDJUDGE_WS_OPEN_KEY_PREFIX")
                                 or f"{env('REDIS_CHANNEL_PREFIX') or 'blindjudge'}:ws-open")
