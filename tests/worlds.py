"""The worlds tests run in, built the way the product builds them: hosts, bundles, runs, sessions in
every state, judges of every kind and the browsers that hold them.

Every state change goes through the real services (judging.services), and a GitHub judge through
the real sign-in (the OAuth dance against the local stand-in, tests/support/github_standin.py):
nothing here writes the ORM itself. tests/conftest.py's personas and default world are these
builders called with their defaults; a module that needs a world of its own (a bundle with
planted values, a session with scorecards) calls them with arguments.
"""

import copy
import json
import os
import time
from pathlib import Path

from django.conf import settings
from django.contrib.sessions.backends.db import SessionStore
from django.test import Client
from django.urls import reverse

from accounts.guards import JUDGE_SESSION_KEY, judge_binding
from accounts.models import Host, Judge
from judging.demo import DEMO_KEPT, DEMO_REDACTIONS, demo_bundle
from judging.enums import SessionState
from judging.models import Run, Session
from judging.selectors.host import opening_progress
from judging.services import (
    Admission,
    blinding_dismiss,
    host_create,
    invitation_create,
    join_token_exchange,
    phase_lock,
    redactions_accept,
    run_import,
    session_close,
    session_create,
    session_open,
    session_reveal,
)
from tests.support import github_standin
from tests.support.verdicts import verdict_record

GOOD = "def add(a, b):\n    return a + b\n"
BAD = "def add(a, b):\n    return a - b\n"
HOST_PASSWORD = "correct horse battery staple"
STATES = (SessionState.DRAFT, SessionState.OPEN, SessionState.CLOSED, SessionState.REVEALED)


# --- Bundles ------------------------------------------------------------------------------------

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


def make_run2_bundle(**overrides) -> dict:
    """A small valid blindjudge.run/2 bundle: 2 tasks, 3 builders, 6 copies (each builder one copy
    of each task), reviewer r1 asked clean and told "PASS" (condition told_pass), reviewer r2
    asked clean only, with one abstention; findings raised under either condition."""
    bundle = {
        "format": "blindjudge.run/2",
        "run": {"name": "add() and sub() across three models", "default_condition": "clean",
                "abstain_scoring": "not_flagged"},
        "tasks": [
            {"id": "t-add", "title": "add(a, b)", "statement": "Write add(a, b).",
             "cluster": "arith"},
            {"id": "t-sub", "statement": "Write *sub(a, b)*: a minus b.", "format": "markdown",
             "title": None, "cluster": None},
        ],
        "builders": [
            {"id": "b1", "model": "gpt-4o-2024-08-06", "family": "OpenAI"},
            {"id": "b2", "model": "claude-3-5-sonnet-20241022", "family": "Anthropic"},
            {"id": "b3", "model": "gemini-1.5-pro", "family": "Google"},
        ],
        "copies": [
            {"id": "c1", "task": "t-add", "builder": "b1", "format": "text", "content": GOOD,
             "truth": "known_good", "defect": None, "cluster": None},
            {"id": "c2", "task": "t-add", "builder": "b2", "format": "text", "content": BAD,
             "truth": "seeded_defect", "defect": "subtracts"},
            {"id": "c3", "task": "t-add", "builder": "b3", "format": "diff", "content": "+" + GOOD,
             "truth": "tests_pass"},
            {"id": "c4", "task": "t-sub", "builder": "b1", "format": "text", "content": BAD,
             "truth": "tests_pass"},
            {"id": "c5", "task": "t-sub", "builder": "b2", "format": "text", "content": GOOD,
             "truth": "tests_fail"},
            {"id": "c6", "task": "t-sub", "builder": "b3", "format": "text",
             "content": BAD + "# unsure\n", "truth": "unknown"},
        ],
        "reviewers": [
            {"id": "r1", "model": "qwen3-1.7b", "family": "Alibaba"},
            {"id": "r2", "model": "gpt-4o-mini", "family": "OpenAI"},
        ],
        "reviews": [
            {"reviewer": "r1", "copy": "c1", "verdict": "pass", "reason": "fine"},
            {"reviewer": "r1", "copy": "c2", "verdict": "fail", "reason": "subtracts"},
            {"reviewer": "r1", "copy": "c1", "condition": "told_pass", "verdict": "pass",
             "reason": "the prior reviewer passed it"},
            {"reviewer": "r1", "copy": "c2", "condition": "told_pass", "verdict": "pass",
             "reason": "told-pass-reason-marker"},
            {"reviewer": "r2", "copy": "c1", "verdict": "abstain", "reason": None,
             "authorship_guess": None},
            {"reviewer": "r2", "copy": "c2", "condition": None, "verdict": "fail",
             "reason": "wrong sign"},
        ],
        "findings": [
            {"id": "f1", "copy": "c2", "text": "uses minus",
             "raised_by": ["r2", {"reviewer": "r1", "condition": "told_pass"}],
             "proposed_verdict": "confirmed", "truth": "real"},
            {"id": "f2", "copy": "c1", "text": "no type checks",
             "raised_by": [{"reviewer": "r1", "condition": "clean"}],
             "proposed_verdict": "confirmed", "truth": "false_alarm"},
        ],
    }
    bundle.update(copy.deepcopy(overrides))
    return bundle


def bundle_bytes(bundle: dict | None = None) -> bytes:
    return json.dumps(bundle if bundle is not None else make_bundle()).encode("utf-8")


# --- Hosts, runs, sessions ------------------------------------------------------------------------

def a_host(username: str = "alice", password: str = HOST_PASSWORD) -> Host:
    """A host account, as `createhost` makes one."""
    return host_create(username=username, password=password).host


def a_run(host: Host, bundle: dict | bytes | None = None, *, actor: str = "test") -> Run:
    """The host's run imported from `bundle`: a dict (serialised as JSON), the bytes of an upload,
    or by default make_bundle()."""
    raw = bundle if isinstance(bundle, bytes) else bundle_bytes(bundle)
    return run_import(host=host, raw=raw, actor=actor)


def a_session(run: Run, state: str = SessionState.DRAFT, *, kind: str = "copies", actor: str = "test",
              **options) -> Session:
    """A session on the run, created by session_create (with `options`: rubric, scorecards,
    draw_seed, …) and taken to `state` (draft, open, closed, revealed) by the services."""
    session = session_create(run=run, kind=kind, actor=actor, **options).session
    return advance(session, state, actor=actor)


def a_demo_session(host: Host, state: str = SessionState.DRAFT, *, actor: str = "test",
                   bundle: dict | None = None, **options) -> Session:
    """A session on a new run of the demo bundle (or `bundle`, a variant of it), with the demo's
    blinding decisions (its patterns redacted, `openai` kept on purpose, as `manage.py demo`
    decides them), taken to `state`."""
    run = a_run(host, bundle or demo_bundle(), actor=actor)
    session = session_create(run=run, kind="copies", actor=actor, **options).session
    session = redactions_accept(session=session, patterns=DEMO_REDACTIONS, actor=actor)
    session = blinding_dismiss(session=session, matches=DEMO_KEPT, actor=actor)
    return advance(session, state, actor=actor)


def advance(session: Session, state: str, *, actor: str = "test") -> Session:
    """Take a session forward to `state` the way a host does: open, close, reveal, in that order.
    Returns the session as the last service left it."""
    steps = {SessionState.OPEN: session_open, SessionState.CLOSED: session_close,
             SessionState.REVEALED: session_reveal}
    here, there = STATES.index(session.state), STATES.index(state)
    if there < here:
        raise ValueError(f"a session goes forward only: {session.state} is past {state}")
    for step in STATES[here + 1:there + 1]:
        session = steps[step](session=session, actor=actor)
    return session


# --- Judges ----------------------------------------------------------------------------------------

def invite_and_join(session: Session, name: str = "Judge Dredd") -> Admission:
    """A person invited by name who used their join link: their admission (judge, resume token)."""
    invited = invitation_create(session=session, actor="test", name=name)
    return join_token_exchange(token=invited.join_token)


def a_github_judge(session: Session, standin, *, login: str = "octocat", github_id: int = 42,
                   client: Client | None = None) -> Judge:
    """Someone whose GitHub login the host listed, who signed in with GitHub (the whole OAuth dance
    against the stand-in, in `client` or a fresh browser) and confirmed on the "done" page. The
    stand-in's record of the dance is cleared, so a test sees only the requests it makes."""
    invitation_create(session=session, actor="test", github_login=login)
    browser = client or Client()
    start = reverse("github_judge_start", kwargs={"url_id": session.url_id})
    callback, _ = github_standin.sign_in(browser, standin, github_id=github_id, login=login,
                                         start_url=start)
    assert callback.status_code == 302, callback.content[:300]
    done = browser.post(callback["Location"])
    assert done.status_code == 302, done.content[:300]
    standin.requests.clear()
    return Judge.objects.get(session=session, github_id=github_id)


def a_github_attempt(session: Session, standin, *, login: str, github_id: int):
    """Someone listed by `login` who signs in with GitHub as account `github_id` and confirms:
    the answer to their confirmation (or to the sign-in, when it was refused before)."""
    invitation_create(session=session, actor="test", github_login=login)
    browser = Client()
    start = reverse("github_judge_start", kwargs={"url_id": session.url_id})
    callback, _ = github_standin.sign_in(browser, standin, github_id=github_id, login=login,
                                         start_url=start)
    return browser.post(callback["Location"]) if callback.status_code == 302 else callback


def codes(judge: Judge) -> list[str]:
    """The judge's item codes, in the order the judge sees them."""
    return list(judge.assignments.order_by("position").values_list("code", flat=True))


def answer_all(judge: Judge, phase: int = 1, value: str = "pass", *, reason: str = "",
               lock: bool = False):
    """A verdict of `value` on every item of the judge in `phase`, then the phase's lock if asked."""
    for code in codes(judge):
        verdict_record(judge=judge, code=code, phase=phase, value=value, reason=reason)
    if lock:
        phase_lock(judge=judge, phase=phase)


# --- Browsers --------------------------------------------------------------------------------------

def client_as(who: Host | Judge | None = None, **client_options) -> Client:
    """A test browser holding `who`: a host signed in; a judge admitted in their session (and
    signed in as their account, for a judge who came by GitHub); nobody, for None."""
    client = Client(**client_options)
    if isinstance(who, Host):
        client.force_login(who.user)
    elif isinstance(who, Judge):
        if who.user_id is not None:
            client.force_login(who.user)
        browser = client.session
        browser[JUDGE_SESSION_KEY.format(url_id=who.session.url_id)] = judge_binding(who)
        browser.save()
    elif who is not None:
        raise TypeError(f"client_as: a Host, a Judge or None, not {who!r}")
    return client


def judge_cookie(*judges: Judge) -> str:
    """A browser session holding these judges, as the join pages leave it, as a Cookie header."""
    store = SessionStore()
    for judge in judges:
        store[JUDGE_SESSION_KEY.format(url_id=judge.session.url_id)] = judge_binding(judge)
    store.create()
    return f"{settings.SESSION_COOKIE_NAME}={store.session_key}"


def host_cookie(host: Host) -> str:
    """A browser session signed in as this host, as a Cookie header."""
    client = Client()
    client.force_login(host.user)
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


def is_saved_reply(reply: dict) -> bool:
    """A save's JSON answer: saved, the item's revision after it (1 or more), its time (ISO 8601)."""
    from datetime import datetime  # noqa: PLC0415 - only this check needs it

    return (set(reply) == {"saved", "revision", "saved_at"} and reply["saved"] is True
            and isinstance(reply["revision"], int) and reply["revision"] >= 1
            and datetime.fromisoformat(reply["saved_at"]).tzinfo is not None)


def children_running(module: str) -> list[int]:
    """The processes this (test) process started, by any of its threads, that still run
    `python -m module` (or name it on their command line). Read from every process's parent in
    /proc/<pid>/stat: /proc/self/task/*/children is only reliable while the children are
    stopped, and under load it missed an opening process that was running."""
    pids, me = [], os.getpid()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:  # a process may end while we read
            stat = (entry / "stat").read_text()
            parent = int(stat[stat.rindex(")") + 2:].split()[1])
            if parent == me and module.encode() in (entry / "cmdline").read_bytes():
                pids.append(int(entry.name))
        except (FileNotFoundError, ProcessLookupError, ValueError, IndexError):
            continue
    return pids


def opening_children() -> list[int]:
    """The opening processes (judging/opening.py) this (test) process started that still run."""
    return children_running("judging.opening")


def opened_from_page(session: Session, *, within: float = 120.0) -> Session:
    """Wait for the opening the host's page started (its own process) to end, opened or refused,
    and its process with it; the session as it then is. Needs the `opening_processes` fixture."""
    give_up = time.monotonic() + within
    while opening_progress(session)["running"] or opening_children():
        assert time.monotonic() < give_up, f"session {session.pk}'s opening did not end in {within} s"
        time.sleep(0.05)
    return Session.objects.get(pk=session.pk)
