"""Configuration is safe by default and fails loudly (docs/threats.md case 33).

Settings are read once per process, so each case runs `manage.py` in a fresh subprocess with its
own environment.
"""

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PRODUCTION = {
    "SITE_URL": "https://judge.example.org",
    "SECRET_KEY": secrets.token_urlsafe(50),
    "DATABASE_URL": "postgres://blindjudge@db.example.org:5432/blindjudge",
    "REDIS_URL": "redis://cache.example.org:6379/0",
}


def manage(*args, env, tmp_path):
    clean = {k: v for k, v in os.environ.items()
             if k not in {"DATABASE_URL", "REDIS_URL", "SECRET_KEY", "SITE_URL", "DEBUG",
                          "ALLOWED_HOSTS", "DJANGO_SETTINGS_MODULE", "BLINDJUDGE_DATA_DIR"}}
    clean.update({"DJANGO_SETTINGS_MODULE": "blindjudge.settings",
                  "BLINDJUDGE_DATA_DIR": str(tmp_path / "data")}, **env)
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=clean,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def test_production_settings_pass_check_deploy(tmp_path):
    result = manage("check", "--deploy", "--fail-level", "WARNING", env=PRODUCTION,
                    tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_the_check_fires_on_an_unsafe_configuration(tmp_path):
    """Positive control: the same check fails when DEBUG is on, so its silence above counts."""
    result = manage("check", "--deploy", "--fail-level", "WARNING",
                    env={**PRODUCTION, "DEBUG": "1"}, tmp_path=tmp_path)
    assert result.returncode != 0
    assert "security.W018" in result.stderr  # DEBUG must not be on in deployment


def printed_setting(expression, env, tmp_path):
    result = manage("shell", "--no-imports", "-c",
                    f"from django.conf import settings; print({expression})",
                    env=env, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_production_transport_settings(tmp_path):
    values = printed_setting(
        "settings.DEBUG, settings.SESSION_COOKIE_SECURE, settings.CSRF_COOKIE_SECURE, "
        "settings.SECURE_SSL_REDIRECT, settings.SECURE_HSTS_SECONDS, settings.ALLOWED_HOSTS, "
        "settings.SECURE_CROSS_ORIGIN_OPENER_POLICY, settings.X_FRAME_OPTIONS, "
        "settings.CHANNEL_LAYERS['default']['BACKEND']", PRODUCTION, tmp_path)
    assert values == ("False True True True 31536000 ['judge.example.org'] same-origin DENY "
                      "channels_redis.pubsub.RedisPubSubChannelLayer")


def test_the_embedded_default_is_sqlite_in_memory_channels_and_debug_off(tmp_path):
    values = printed_setting(
        "settings.DEBUG, settings.DATABASES['default']['ENGINE'], "
        "settings.DATABASES['default']['OPTIONS']['transaction_mode'], "
        "settings.CHANNEL_LAYERS['default']['BACKEND'], sorted(settings.ALLOWED_HOSTS)",
        {}, tmp_path)
    assert values == ("False blindjudge.sqlite_backend IMMEDIATE "
                      "channels.layers.InMemoryChannelLayer ['127.0.0.1', 'localhost']")
    # Its secret key was generated once, kept private, and is reused.
    key_file = tmp_path / "data" / "secret_key"
    assert oct(key_file.stat().st_mode & 0o777) == "0o600"
    first = key_file.read_text()
    printed_setting("1", {}, tmp_path)
    assert key_file.read_text() == first and len(first) >= 50


@pytest.mark.parametrize("env, message", [
    ({"DATABASE_URL": "postgres://x@localhost/db"}, "SECRET_KEY (or SECRET_KEY_FILE) must be set"),
    ({"ALLOWED_HOSTS": "*"}, "ALLOWED_HOSTS must not contain a wildcard"),
    ({"DATABASE_URL": "mysql://x@localhost/db", "SECRET_KEY": "k" * 50},
     "DATABASE_URL scheme 'mysql' is not supported"),
    ({"DEBUG": "maybe"}, "DEBUG='maybe': expected one of"),
    ({"SITE_URL": "judge.example.org"}, "SITE_URL='judge.example.org': expected http(s)://"),
    ({"BLINDJUDGE_MAX_COPY_BYTES": "lots"}, "BLINDJUDGE_MAX_COPY_BYTES='lots': expected a whole"),
    ({"SECRET_KEY_FILE": "/nonexistent/secret"}, "SECRET_KEY_FILE='/nonexistent/secret'"),
])
def test_bad_configuration_fails_loudly(env, message, tmp_path):
    result = manage("check", env=env, tmp_path=tmp_path)
    assert result.returncode != 0
    assert message in result.stderr


def test_a_sqlite_database_url_gets_the_product_pragmas(tmp_path):
    url = f"sqlite:///{tmp_path}/custom.sqlite3"
    values = printed_setting(
        "settings.DATABASES['default']['NAME'], "
        "settings.DATABASES['default']['OPTIONS']['transaction_mode'], "
        "settings.DATABASES['default']['TEST']['NAME']",
        {"DATABASE_URL": url, "SECRET_KEY": "k" * 50}, tmp_path)
    assert values == f"{tmp_path}/custom.sqlite3 IMMEDIATE {tmp_path}/custom.test.sqlite3"


def test_collectstatic_builds_the_hashed_manifest_the_product_serves(tmp_path):
    result = manage("collectstatic", "--no-input", env={"STATIC_ROOT": str(tmp_path / "static")},
                    tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    manifest = (tmp_path / "static" / "staticfiles.json").read_text()
    assert '"css/base.css": "css/base.' in manifest


def test_the_embedded_default_serves_its_own_static_files(client):
    page = client.get("/")
    assert page.status_code == 200
    stylesheet = client.get("/static/css/base.css")
    assert stylesheet.status_code == 200
    assert b"font-family" in b"".join(stylesheet.streaming_content)


def test_hsts_preload_is_opt_in(tmp_path):
    """Preloading hard-codes HTTPS for the domain in browsers and is slow to undo: off unless the
    operator sets SECURE_HSTS_PRELOAD=1, and `check --deploy` stays clean either way."""
    header = ("from django.test import Client; "
              "print(Client().get('/host/', secure=True, headers={'host': 'judge.example.org'})"
              "['Strict-Transport-Security'])")
    assert printed_setting("settings.SECURE_HSTS_PRELOAD", PRODUCTION, tmp_path) == "False"
    result = manage("shell", "--no-imports", "-c", header, env=PRODUCTION, tmp_path=tmp_path)
    assert result.stdout.strip() == "max-age=31536000; includeSubDomains", result.stderr
    opted_in = {**PRODUCTION, "SECURE_HSTS_PRELOAD": "1"}
    assert printed_setting("settings.SECURE_HSTS_PRELOAD", opted_in, tmp_path) == "True"
    result = manage("shell", "--no-imports", "-c", header, env=opted_in, tmp_path=tmp_path)
    assert result.stdout.strip() == "max-age=31536000; includeSubDomains; preload", result.stderr
    check = manage("check", "--deploy", "--fail-level", "WARNING", env=opted_in, tmp_path=tmp_path)
    assert check.returncode == 0 and "no issues" in check.stdout, check.stderr


def test_collected_static_files_leave_out_the_manifest_and_the_admin(tmp_path):
    """collectstatic as a deployment runs it, then the product serving its own static files:
    the stylesheet is served under its hashed name, the manifest (a map of every file shipped)
    and the Django admin's files (the admin is not installed) are not."""
    env = {"STATIC_ROOT": str(tmp_path / "static")}
    result = manage("collectstatic", "--no-input", env=env, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "static" / "staticfiles.json").exists()  # written, for the storage's use
    assert not (tmp_path / "static" / "admin").exists()
    probe = ("from django.test import Client; from django.templatetags.static import static; "
             "c = Client(HTTP_HOST='127.0.0.1'); paths = [static('css/base.css'), '/static/css/base.css', "
             "'/static/staticfiles.json', '/static/staticfiles.json.gz', "
             "'/static/admin/css/base.css']; "
             "print(' '.join(f'{p}={c.get(p).status_code}' for p in paths))")
    result = manage("shell", "--no-imports", "-c", probe, env=env, tmp_path=tmp_path)
    assert result.returncode == 0, result.stderr
    served = dict(pair.split("=") for pair in result.stdout.split())
    hashed = next(path for path in served
                  if path.startswith("/static/css/base.") and path != "/static/css/base.css")
    assert served == {hashed: "200", "/static/css/base.css": "200",
                      "/static/staticfiles.json": "404", "/static/staticfiles.json.gz": "404",
                      "/static/admin/css/base.css": "404"}


def test_the_django_admin_is_not_installed(tmp_path):
    assert printed_setting("'django.contrib.admin' in settings.INSTALLED_APPS", {}, tmp_path) == "False"


def test_the_shipped_email_backend_sends_nothing(tmp_path):
    """docs/threats.md case 38: should anything still try to send mail, nothing leaves."""
    assert printed_setting("settings.EMAIL_BACKEND, settings.ADMINS", PRODUCTION, tmp_path) == (
        "django.core.mail.backends.dummy.EmailBackend []")


def _test_settings_prefix(tmp_path, **env) -> str:
    """The channel-layer prefix a process on the test settings uses, given its environment."""
    clean = {k: v for k, v in os.environ.items() if k not in {"REDIS_CHANNEL_PREFIX", "PYTEST_XDIST_WORKER"}}
    clean.update({"DJANGO_SETTINGS_MODULE": "blindjudge.settings_test", "REDIS_URL": "redis://127.0.0.1:6379/0",
                  "BLINDJUDGE_DATA_DIR": str(tmp_path / "data")}, **env)
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup(); from django.conf import settings; "
                               "print(settings.CHANNEL_LAYERS['default']['CONFIG']['prefix'])"],
        cwd=ROOT, env=clean, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_each_test_worker_and_the_servers_it_starts_have_a_channel_prefix_of_their_own(tmp_path):
    """xdist's workers inherit the controller's environment, prefix included, and their databases
    number sessions alike: on one prefix, one worker's server told another's judge "removed"."""
    controller = _test_settings_prefix(tmp_path)
    gw0 = _test_settings_prefix(tmp_path, REDIS_CHANNEL_PREFIX=controller, PYTEST_XDIST_WORKER="gw0")
    gw1 = _test_settings_prefix(tmp_path, REDIS_CHANNEL_PREFIX=controller, PYTEST_XDIST_WORKER="gw1")
    assert len({controller, gw0, gw1}) == 3
    # A server a worker starts inherits the worker's environment: the worker's prefix, kept.
    assert _test_settings_prefix(tmp_path, REDIS_CHANNEL_PREFIX=gw0, PYTEST_XDIST_WORKER="gw0") == gw0
