"""Shared fixtures: personas, bundles and sessions built through the real services.

Personas, named as in healthchecks' tests: `host` (alice) owns the run; `other_host` (bob) must see
nothing of it.
"""

import copy
import json

import pytest
from channels.layers import channel_layers
from django.conf import settings
from django.contrib.sessions.backends.db import SessionStore
from django.db import connection
from django.test import Client

from accounts.guards import JUDGE_SESSION_KEY
from judging import immutability
from judging.services import (
    host_create,
    invitation_create,
    join_token_exchange,
    run_import,
    session_create,
    session_open,
)
from tests.support import github_standin

GOOD = "def add(a, b):\n    return a + b\n"
BAD = "def add(a, b):\n    return a - b\n"


def make_bundle(**overrides) -> dict:
    """A small valid bundle: 3 builders, 6 copies of known truth, 2 reviewers, 2 findings."""
    bundle = {
        "format": "blindjudge.run/1",
        "run": {"name": "add() across three models", "task": "Write add(a, b)."},
        "builders": [
            {"id": "b1", "model": "gpt-4o-2024-08-06", "family": "OpenAI"},
            {"id": "b2", "model": "claude-3-5-sonnet-20241022", "family": "Anthropic"},
            {"id": "b3", "model": "gemini-1.5-pro", "family": "Google"},
        ],
        "copies": [
            {"id": "c1", "builder": "b1", "format": "text", "content": GOOD, "truth": "known_good"},
            {"id": "c2", "builder": "b1", "format": "text", "content": BAD,
             "truth": "seeded_defect", "defect": "subtracts"},
            {"id": "c3", "builder": "b2", "format": "text", "content": GOOD + "\n",
             "truth": "tests_pass"},
            {"id": "c4", "builder": "b2", "format": "diff", "content": "+" + BAD,
             "truth": "tests_fail"},
            {"id": "c5", "builder": "b3", "format": "markdown", "content": "```\n" + GOOD + "```",
             "truth": "known_good"},
            {"id": "c6", "builder": "b3", "format": "text", "content": BAD + "# unsure\n",
             "truth": "unknown"},
        ],
        "reviewers": [
            {"id": "r1", "model": "qwen3-1.7b", "family": "Alibaba"},
            {"id": "r2", "model": "gpt-4o-mini", "family": "OpenAI"},
        ],
        "reviews": [
            {"reviewer": "r1", "copy": "c1", "verdict": "pass", "reason": "fine"},
            {"reviewer": "r1", "copy": "c2", "verdict": "fail", "reason": "subtracts"},
            {"reviewer": "r2", "copy": "c1", "verdict": "fail", "reason": "hmm"},
        ],
        "findings": [
            {"id": "f1", "copy": "c2", "text": "uses minus", "raised_by": ["r1", "r2"],
             "proposed_verdict": "confirmed", "truth": "real"},
            {"id": "f2", "copy": "c1", "text": "no type checks", "raised_by": ["r2"],
             "proposed_verdict": "confirmed", "truth": "false_alarm"},
        ],
    }
    bundle.update(copy.deepcopy(overrides))
    return bundle


def bundle_bytes(bundle: dict | None = None) -> bytes:
    return json.dumps(bundle if bundle is not None else make_bundle()).encode("utf-8")


@pytest.fixture
def host(db):
    return host_create(username="alice", password="correct horse battery staple").host


@pytest.fixture
def other_host(db):
    return host_create(username="bob", password="another long passphrase").host


@pytest.fixture
def run(host):
    return run_import(host=host, raw=bundle_bytes(), actor="test")


@pytest.fixture
def draft(run):
    return session_create(run=run, kind="copies", actor="test", rubric="Is add() right?").session


@pytest.fixture
def open_session(draft):
    return session_open(session=draft, actor="test")


def invite_and_join(session, name="Judge Dredd"):
    invited = invitation_create(session=session, actor="test", name=name)
    return join_token_exchange(token=invited.join_token)


def judge_cookie(*judges) -> str:
    """A browser session holding these judges, as the join pages leave it, as a Cookie header."""

    store = SessionStore()
    for judge in judges:
        store[JUDGE_SESSION_KEY.format(url_id=judge.session.url_id)] = judge.pk
    store.create()
    return f"{settings.SESSION_COOKIE_NAME}={store.session_key}"


def host_cookie(host) -> str:
    """A browser session signed in as this host, as a Cookie header."""
    client = Client()
    client.force_login(host.user)
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


@pytest.fixture
def admission(open_session):
    return invite_and_join(open_session)


@pytest.fixture
def judge(admission):
    return admission.judge


@pytest.fixture(autouse=True)
def _flushable_immutable_tables(request):
    """Transactional tests end with a flush, a DELETE of every row, which the immutability
    triggers rightly refuse. Drop them just for that flush; the next test gets them back."""
    marker = request.node.get_closest_marker("django_db")
    transactional = "transactional_db" in request.fixturenames or (
        marker is not None and marker.kwargs.get("transaction", False)
    )
    if not transactional:
        yield
        return
    request.getfixturevalue("transactional_db")
    immutability.install(connection)
    yield
    immutability.uninstall(connection)


@pytest.fixture(scope="session")
def _standin_server():
    standin, server = github_standin.start(settings.TEST_GITHUB_STANDIN_PORT)
    yield standin
    server.shutdown()
    server.server_close()


@pytest.fixture
def standin(_standin_server):
    """The local stand-in for GitHub's endpoints (tests/support/github_standin.py), its record cleared."""
    _standin_server.requests.clear()
    yield _standin_server
    _standin_server.requests.clear()


@pytest.fixture
def fresh_channel_layer():
    """A channel layer made for this test's event loop: channels keeps one per process, and the
    Redis layer's locks belong to the loop that first used them (pytest-asyncio gives each test
    its own)."""
    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()
