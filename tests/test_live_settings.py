"""Settings and the server command as the live features need them (each case in a fresh process)."""

import os
import subprocess

from tests.test_settings import PRODUCTION, ROOT, manage, printed_setting


def test_the_production_csp_lets_pages_open_their_own_websocket_and_nothing_else(tmp_path):
    connect = printed_setting('" ".join(settings.CONTENT_SECURITY_POLICY["DIRECTIVES"]["connect-src"])',
                              PRODUCTION, tmp_path)
    assert connect.split() == ["'self'", "wss://judge.example.org"]


def test_the_redis_channel_layer_takes_its_prefix_from_the_environment(tmp_path):
    config = printed_setting('settings.CHANNEL_LAYERS["default"]["CONFIG"]',
                             {**PRODUCTION, "REDIS_CHANNEL_PREFIX": "site-b"}, tmp_path)
    assert "'prefix': 'site-b'" in config
    assert "'address': 'redis://cache.example.org:6379/0', 'socket_timeout': 30" in config
    default = printed_setting('settings.CHANNEL_LAYERS["default"]["CONFIG"]["prefix"]',
                              {**PRODUCTION, "REDIS_CHANNEL_PREFIX": ""}, tmp_path)  # unset
    assert default == "blindjudge"


def test_a_postgresql_pool_per_process_by_default_and_never_with_persistent_connections(tmp_path):
    default = printed_setting('settings.DATABASES["default"]["OPTIONS"]["pool"]["max_size"], '
                              'settings.DATABASES["default"]["CONN_HEALTH_CHECKS"]',
                              {**PRODUCTION, "DB_POOL_MAX_SIZE": ""}, tmp_path)  # unset
    assert default == "8 True"  # each pooled connection tried before it is handed out
    pool = printed_setting('settings.DATABASES["default"]["OPTIONS"]["pool"]["max_size"]',
                           {**PRODUCTION, "DB_POOL_MAX_SIZE": "12"}, tmp_path)
    assert pool == "12"
    off = printed_setting('settings.DATABASES["default"].get("OPTIONS", {}).get("pool")',
                          {**PRODUCTION, "DB_POOL_MAX_SIZE": "0"}, tmp_path)
    assert off == "None"
    both = manage("check", env={**PRODUCTION, "DB_CONN_MAX_AGE": "60"}, tmp_path=tmp_path)
    assert both.returncode != 0
    assert "DB_POOL_MAX_SIZE and DB_CONN_MAX_AGE exclude each other" in both.stderr
    persistent = printed_setting('settings.DATABASES["default"]["CONN_MAX_AGE"]',
                                 {**PRODUCTION, "DB_POOL_MAX_SIZE": "0", "DB_CONN_MAX_AGE": "60"},
                                 tmp_path)
    assert persistent == "60"


def test_deploy_serve_refuses_several_workers_without_redis():
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    result = subprocess.run([str(ROOT / "deploy" / "serve"), "1", "2"], env=env, capture_output=True,
                            text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert result.returncode == 2
    assert "2 workers need REDIS_URL" in result.stderr
