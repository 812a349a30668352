"""Rendering once, when a session opens (issue 12, item 1): every text a judge will see is rendered
before the state changes, outside any long transaction and in batches; a second opening meanwhile
is refused; an opening that dies leaves renders a retry reuses; a change of redactions while the
session renders is never served stale; sessions opened before renders were stored get theirs from
the data migration; and on SQLite, judges of another session keep saving while a large one opens.
"""

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from django.db import connection, connections, transaction
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from blindjudge.errors import Conflict, Invalid
from content.normalise import normalise
from content.rendering import FRAME_STYLE_HASH, copy_html, frame_document, inline_html, prose_html
from judging import renders
from judging.enums import SessionState
from judging.models import AuditEvent, Copy, CopyRender, FindingRender, Session, SessionRender, TaskRender
from judging.services import redactions_accept, session_open
from judging.services import sessions as session_services
from tests.support.verdicts import verdict_record
from tests.worlds import a_run, a_session, client_as, codes, invite_and_join, make_bundle

ROOT = Path(__file__).resolve().parents[2]
LINE = "def add(a, b):  # naïve «quoted» <b>x</b> & [link](http://e.x) Zeta\u200bLab\n"


def big_bundle(copies: int, size: int) -> dict:
    content = LINE * (size // len(LINE.encode("utf-8")))
    return make_bundle(copies=[
        {"id": f"c{n}", "builder": f"b{1 + n % 3}", "format": ("text", "diff", "markdown")[n % 3],
         "content": ("+" + content.replace("\n", "\n+")) if n % 3 == 1 else content,
         "truth": "known_good"} for n in range(copies)
    ], reviews=[], findings=[])


def expected_frame(copy, patterns) -> str:
    return frame_document(copy_html(normalise(copy.content, copy.format, patterns), copy.format))


def renders_of(session) -> dict:
    """What a session has stored: {copy bundle id: (frame, style hash, reviews)}, finding renders
    by bundle id, the task renders by bundle id, and the rubric."""
    session_render = SessionRender.objects.get(session=session)
    return {
        "copies": {r.copy.bundle_id: (r.frame, r.style_hash, r.reviews)
                   for r in CopyRender.objects.filter(session=session).select_related("copy")},
        "findings": {r.finding.bundle_id: r.html
                     for r in FindingRender.objects.filter(session=session).select_related("finding")},
        "tasks": {r.task.bundle_id: r.html
                  for r in TaskRender.objects.filter(session=session).select_related("task")},
        "rubric": session_render.rubric_html,
        "complete": session_render.complete, "opener": session_render.opener,
    }


# --- What an opening stores ----------------------------------------------------------------------

@pytest.mark.django_db
def test_opening_renders_every_copy_finding_reason_task_and_rubric_with_the_sessions_redactions(host):
    bundle = make_bundle()
    bundle["run"]["task"] = "Fix [the bug](http://e.x/issue) in Zeta\u200bLab's ![logo](http://e.x/l.png)"
    bundle["reviews"][0]["reason"] = "Zeta wrote this \u202eevil"
    run = a_run(host, bundle)
    draft = a_session(run, "draft", rubric="Judge *correctness* only, not Zeta's style.")
    redactions_accept(session=draft, patterns=["Zeta"], actor="test")
    session = session_open(session=draft, actor="test")
    stored = renders_of(session)
    patterns = ["Zeta"]
    assert stored["complete"] and stored["opener"] == ""
    assert set(stored["copies"]) == set(run.copies.values_list("bundle_id", flat=True))
    for copy in run.copies.all():
        frame, style_hash, reviews = stored["copies"][copy.bundle_id]
        assert frame == expected_frame(copy, patterns)
        assert style_hash == FRAME_STYLE_HASH
        assert [r["reason_html"] for r in reviews] == [
            inline_html(normalise(r.reason, "text", patterns))
            for r in copy.reviews.order_by("reviewer__position")]
    assert "[redacted]" in stored["copies"][bundle["reviews"][0]["copy"]][2][0]["reason_html"]
    task = run.tasks.get()
    assert stored["tasks"] == {task.bundle_id: prose_html(normalise(task.statement, "markdown", patterns),
                                                         "markdown")}
    assert "[redacted]" in stored["tasks"]["task"] and "U+200B" in stored["tasks"]["task"]
    assert 'class="link"' in stored["tasks"]["task"] and "href" not in stored["tasks"]["task"]
    assert "<em>correctness</em>" in stored["rubric"] and "Zeta" not in stored["rubric"]
    # A findings session stores each finding's text too.
    findings = a_session(run, "open", kind="findings")
    assert set(renders_of(findings)["findings"]) == set(run.findings.values_list("bundle_id", flat=True))
    for finding in run.findings.all():
        assert renders_of(findings)["findings"][finding.bundle_id] == inline_html(
            normalise(finding.text, "text", []))


@pytest.mark.django_db
def test_a_refused_opening_renders_nothing_and_changes_nothing(open_session):
    with pytest.raises(Conflict):
        session_open(session=open_session, actor="test")
    assert AuditEvent.objects.filter(session=open_session, action="session.opened").count() == 1
    assert SessionRender.objects.get(session=open_session).opener == ""


# --- Openings that race, die, or meet a change -----------------------------------------------------

def in_thread(target):
    """Run `target` in a thread with its own database connection; (thread, errors, results)."""
    errors, results = [], []

    def run():
        try:
            results.append(target())
        except Exception as error:  # noqa: BLE001 - reported by the caller's assertion
            errors.append(error)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, errors, results


def wait_for(condition, what: str, *, alive=None):
    """Poll the database until `condition()`; fails if `alive` (a thread) ends first."""
    for _ in range(200_000):
        if condition():
            return
        if alive is not None and not alive.is_alive():
            break
        threading.Event().wait(0.005)
    assert condition(), f"never saw: {what}"


@pytest.mark.django_db(transaction=True)
def test_a_second_opening_while_one_renders_is_refused_and_the_session_opens_once(host, monkeypatch):
    monkeypatch.setattr(renders, "BATCH_ROWS", 1)  # many short batches: a window to race in
    session = a_session(a_run(host, big_bundle(12, 300_000)), "draft")
    thread, errors, _ = in_thread(lambda: session_open(session=session, actor="first"))
    wait_for(lambda: CopyRender.objects.filter(session=session).exists(),
             "the first opening storing a render", alive=thread)
    with pytest.raises(Conflict) as refused:
        session_open(session=session, actor="second")
    assert "being opened already" in refused.value.message
    thread.join(300)
    assert not errors, errors
    session.refresh_from_db()
    assert session.state == SessionState.OPEN
    opened = AuditEvent.objects.filter(session=session, action="session.opened")
    assert [e.actor for e in opened] == ["first"]
    assert CopyRender.objects.filter(session=session).count() == 12
    assert renders_of(session)["complete"]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks are PostgreSQL's")
@pytest.mark.django_db(transaction=True)
def test_a_second_opening_between_its_two_locks_never_deadlocks_a_rendering_batch(host, monkeypatch):
    """The second opening locks the session row, then the render claim. A rendering batch stores
    renders whose foreign key needs the session row (KEY SHARE): had it taken the claim first, the
    two would wait on each other and PostgreSQL would kill one (CI saw this once). Held here at the
    worst moment: the session locked, the batch made to wait on it, then the claim taken."""
    monkeypatch.setattr(renders, "BATCH_ROWS", 1)
    session = a_session(a_run(host, big_bundle(12, 300_000)), "draft")
    thread, errors, _ = in_thread(lambda: session_open(session=session, actor="first"))
    wait_for(lambda: CopyRender.objects.filter(session=session).exists(),
             "the first opening storing a render", alive=thread)

    def waiting_on_a_lock() -> bool:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                           "AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'")
            return cursor.fetchone()[0] > 0

    with transaction.atomic():
        Session.objects.select_for_update().get(pk=session.pk)
        wait_for(waiting_on_a_lock, "the rendering batch waiting on the locked session", alive=thread)
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL lock_timeout = '20s'")
        claim = SessionRender.objects.select_for_update().get(session=session)
        assert claim.opener  # the first opening's claim, read without waiting on its batch
    thread.join(300)
    assert not errors, errors
    session.refresh_from_db()
    assert session.state == SessionState.OPEN


@pytest.mark.django_db(transaction=True)
def test_redactions_accepted_while_the_session_renders_are_in_every_render_it_opens_with(host, monkeypatch):
    monkeypatch.setattr(renders, "BATCH_ROWS", 1)
    session = a_session(a_run(host, big_bundle(9, 200_000)), "draft")
    thread, errors, _ = in_thread(lambda: session_open(session=session, actor="test"))
    wait_for(lambda: CopyRender.objects.filter(session=session).exists(),
             "the opening storing a render", alive=thread)
    redactions_accept(session=session, patterns=["Zeta"], actor="test")
    thread.join(300)
    assert not errors, errors
    session.refresh_from_db()
    assert session.state == SessionState.OPEN and session.redaction_patterns == ["Zeta"]
    stored = renders_of(session)["copies"]
    assert len(stored) == 9
    for copy in session.run.copies.all():
        assert stored[copy.bundle_id][0] == expected_frame(copy, ["Zeta"])
        assert "Zeta" not in stored[copy.bundle_id][0]


@pytest.mark.django_db(transaction=True)
def test_an_opening_that_dies_leaves_renders_that_a_retry_reuses(host, monkeypatch):
    """A real process opening the session is killed (SIGKILL) after it stored some renders: the
    session stays a draft; its claim holds off a second opening for the lease, after which a
    retry takes over, keeps every render already stored and renders only the rest."""
    session = a_session(a_run(host, big_bundle(12, 300_000)), "draft")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "blindjudge.settings_test",
           "BLINDJUDGE_TEST_DATABASE_NAME": str(connection.settings_dict["NAME"])}
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    opener = subprocess.Popen([sys.executable, str(ROOT / "manage.py"), "open_session", str(session.pk)],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        wait_for(lambda: CopyRender.objects.filter(session=session).count() >= 2 or opener.poll() is not None,
                 "the opening process storing renders")
        opener.send_signal(signal.SIGKILL)
    finally:
        output = opener.communicate(timeout=60)[0]
    assert opener.returncode == -signal.SIGKILL, output
    session.refresh_from_db()
    assert session.state == SessionState.DRAFT
    kept = dict(CopyRender.objects.filter(session=session).values_list("copy_id", "pk"))
    assert 2 <= len(kept) < 12
    with pytest.raises(Conflict):  # the dead opening's claim still stands
        session_open(session=session, actor="test")
    monkeypatch.setattr(session_services, "OPEN_LEASE_SECONDS", 0)  # the lease runs out
    opened = session_open(session=session, actor="test")
    assert opened.state == SessionState.OPEN
    after = dict(CopyRender.objects.filter(session=session).values_list("copy_id", "pk"))
    assert len(after) == 12
    assert {copy_id: after[copy_id] for copy_id in kept} == kept  # reused, not rendered again
    for copy in session.run.copies.all():
        assert CopyRender.objects.get(session=session, copy=copy).frame == expected_frame(copy, [])


# --- SQLite: another session's judges keep saving ----------------------------------------------------

@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's one writer at a time")
@pytest.mark.django_db(transaction=True)
def test_judges_of_another_session_keep_saving_while_a_large_session_opens(host, monkeypatch):
    """While session B (many large copies) renders for its opening, a judge of session A saves
    verdicts from another connection, and those saves complete while B is still rendering: B's
    renders are stored in short transactions between which A's writers get the lock (rendering
    inside the opening's transaction would hold every writer off until B was open)."""
    monkeypatch.setattr(renders, "BATCH_ROWS", 2)
    a = a_session(a_run(host, make_bundle()), "open")
    judge = invite_and_join(a, "Saver").judge
    own = codes(judge)
    b = a_session(a_run(host, big_bundle(24, 300_000)), "draft")
    thread, errors, _ = in_thread(lambda: session_open(session=b, actor="test"))
    during = []
    saved = 0
    while thread.is_alive():
        rendering = CopyRender.objects.filter(session=b).exists()
        verdict_record(judge=judge, code=own[saved % len(own)], phase=1,
                       value=("pass", "fail")[saved % 2], seconds_spent=1)
        saved += 1
        still_draft = Session.objects.filter(pk=b.pk, state=SessionState.DRAFT).exists()
        if rendering and still_draft:
            during.append(timezone.now())
    thread.join(300)
    assert not errors, errors
    b.refresh_from_db()
    assert b.state == SessionState.OPEN
    assert len(during) >= 3, f"only {len(during)} of {saved} saves completed while B rendered"


# --- The data migration ------------------------------------------------------------------------------

@pytest.mark.django_db(transaction=True)
def test_the_data_migration_renders_sessions_opened_before_renders_were_stored(host):
    """Sessions opened and closed before migration 0004 get exactly the renders an opening makes
    (the migration is run backwards and forwards by Django's executor; drafts and revealed
    sessions get none)."""
    run = a_run(host)
    opened = a_session(run, "open", rubric="Be *fair*.")
    redactions_draft = a_session(run, "draft")
    redactions_accept(session=redactions_draft, patterns=["Zeta"], actor="test")
    closed = a_session(run, "closed", kind="findings")
    revealed = a_session(run, "revealed")
    draft = a_session(run, "draft")
    made_at_opening = {s.pk: renders_of(s) for s in (opened, closed)}

    executor = MigrationExecutor(connection)
    executor.migrate([("judging", "0003_live_sockets")])
    executor.loader.build_graph()
    # Forward to every leaf (0004 and whatever came after it), so the database is whole again.
    executor.migrate(executor.loader.graph.leaf_nodes())
    for session in (opened, closed):
        migrated = renders_of(session)
        assert migrated == made_at_opening[session.pk]
    assert not SessionRender.objects.filter(session__in=[draft, revealed, redactions_draft]).exists()
    assert not CopyRender.objects.filter(session__in=[draft, revealed]).exists()
    # And what it made is served: a judge of the migrated session sees its copy's frame.
    judge = invite_and_join(Session.objects.get(pk=opened.pk), "After").judge
    response = client_as(judge).get(f"/s/{opened.url_id}/i/{codes(judge)[0]}/frame")
    assert response.status_code == 200 and response.content.startswith(b"<!doctype html>")


@pytest.mark.django_db(transaction=True)
def test_a_pattern_frozen_before_re2_redacts_in_the_migration_and_a_draft_is_told_to_withdraw_it(host):
    """Python's `re` ran redaction patterns before RE2 did, so a session can hold a lookaround
    accepted then. The migration renders such a session with it, as it was always redacted, and
    a draft holding one is refused at opening with what to do, never a crash halfway through."""
    run = a_run(host)
    legacy = "re:Ze(?=ta)"
    opened = a_session(run, "open")
    Session.objects.filter(pk=opened.pk).update(redaction_patterns=[legacy])
    draft = a_session(run, "draft")
    Session.objects.filter(pk=draft.pk).update(redaction_patterns=[legacy])
    Copy.objects.filter(run=run).update(content="Built by Zeta, not by Zeus.")

    executor = MigrationExecutor(connection)
    executor.migrate([("judging", "0003_live_sockets")])
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    frames = [render.frame for render in CopyRender.objects.filter(session=opened)]
    assert frames and all("[redacted]" in frame and "Zeus" in frame for frame in frames)

    with pytest.raises(Invalid, match=r"cannot open: pattern 're:Ze\(\?=ta\)'.*Withdraw that pattern"):
        session_open(session=Session.objects.get(pk=draft.pk), actor="test")
    assert Session.objects.get(pk=draft.pk).state == SessionState.DRAFT
    assert not CopyRender.objects.filter(session=draft).exists()
