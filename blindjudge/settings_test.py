"""Test settings: the production settings module, with only what tests need changed."""

import os
import socket

# A database URL means a shared server; the product then insists on a real secret. Tests supply one.
os.environ.setdefault("SECRET_KEY", "test-only-secret-key-not-for-any-deployment-0123456789")
# Test runs share the machine's Redis: each run (and the servers it starts, which inherit the
# environment) uses its own channel-layer prefix, so no run ever sees another's groups. So does
# each xdist worker: workers inherit the controller's prefix, and their databases number sessions
# alike, so one worker's server once told another's judge "removed" (its session 1's event).
_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
if _worker and not os.environ.get("REDIS_CHANNEL_PREFIX", "").endswith(f"-{_worker}"):
    os.environ["REDIS_CHANNEL_PREFIX"] = f"bjtest-{os.getpid()}-{os.urandom(4).hex()}-{_worker}"
os.environ.setdefault("REDIS_CHANNEL_PREFIX", f"bjtest-{os.getpid()}-{os.urandom(4).hex()}")

from blindjudge.settings import *  # noqa: E402,F403
from blindjudge.settings import DATABASES  # noqa: E402

# Hashing passwords slowly is the point in production and wasted time in tests.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Several checkouts testing at once on one server each name their own (default: one name).
    DATABASES["default"].setdefault("TEST", {})["NAME"] = os.environ.get(
        "BLINDJUDGE_PG_TEST_NAME", "test_blindjudge")

# A server or command the tests start as a subprocess joins the test run's database, by name.
if os.environ.get("BLINDJUDGE_TEST_DATABASE_NAME"):
    DATABASES["default"]["NAME"] = os.environ["BLINDJUDGE_TEST_DATABASE_NAME"]

# A revealed session's page starts no report builder ahead of a download: the host pages' tests
# view many, and download few (tests/reports/test_offprocess.py turns it on where it is tested).
BLINDJUDGE_REPORT_BUILDER_PRESTART = False

# Tests serve static files from the apps' folders without a collectstatic step; the shipped
# manifest storage is exercised by tests/test_settings.py, which runs collectstatic for real.
STORAGES = {**STORAGES, "staticfiles": {  # noqa: F405
    "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}
WHITENOISE_USE_FINDERS = True

# WhiteNoise looks for STATIC_ROOT at start-up even when it serves from the finders.
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # noqa: F405

# GitHub sign-in runs against a local stand-in (tests/support/github_standin.py) on 127.0.0.1. allauth reads
# GITHUB_URL once, at import, so the port is chosen here: BLINDJUDGE_TEST_GITHUB_PORT, or a free one.
def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


TEST_GITHUB_STANDIN_PORT = int(os.environ.get("BLINDJUDGE_TEST_GITHUB_PORT") or 0) or _free_port()
SOCIALACCOUNT_PROVIDERS["github"]["GITHUB_URL"] = f"http://127.0.0.1:{TEST_GITHUB_STANDIN_PORT}"  # noqa: F405
SOCIALACCOUNT_PROVIDERS["github"]["APP"] = {  # noqa: F405
    "client_id": "test-client-id", "secret": "test-client-secret"}
