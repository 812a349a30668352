"""Task flags on the host's pages (issue 29 item 3): set when creating a session or editing the
draft, refused on a findings session with the service's message, shown as a setting."""

import pytest
from django.urls import reverse

from judging.models import Session
from tests.worlds import a_run, a_session, client_as
from tests.worlds import make_run2_bundle as run2

EXCLUDE = ('```rules\n[{"name": "drop", "action": "exclude_tasks", '
           '"when": {"flag_share": ">=0.5"}}]\n```\n')


def url(name, **kwargs):
    return reverse(f"host:{name}", kwargs=kwargs)


@pytest.fixture
def alice(host):
    return client_as(host)


@pytest.fixture
def run_of_two_tasks(host):
    return a_run(host, run2())


def test_creating_a_session_with_task_flags_from_the_run_page(alice, run_of_two_tasks):
    form = alice.get(url("run", run_id=run_of_two_tasks.pk)).content.decode()
    assert 'name="task_flags"' in form
    response = alice.post(url("session_create", run_id=run_of_two_tasks.pk), {
        "kind": "copies", "reviewer_display": "letters", "task_flags": "on",
        "preregistration": EXCLUDE})
    assert response.status_code == 303, response.content[:500]
    session = Session.objects.get()
    assert session.task_flags is True
    shown = alice.get(url("session", session_id=session.pk)).content.decode()
    assert "collected: judges may flag a task as invalid" in shown


def test_task_flags_on_a_findings_session_are_refused_with_the_reason(alice, run_of_two_tasks):
    response = alice.post(url("session_create", run_id=run_of_two_tasks.pk), {
        "kind": "findings", "reviewer_display": "letters", "task_flags": "on"})
    assert response.status_code == 400
    assert "task flags: only a copies session" in response.content.decode()
    assert not Session.objects.exists()


def test_the_draft_page_turns_task_flags_on_and_off(alice, run_of_two_tasks):
    draft = a_session(run_of_two_tasks)
    page = alice.get(url("session", session_id=draft.pk)).content.decode()
    assert 'name="draft-task_flags"' in page
    on = alice.post(url("session_edit", session_id=draft.pk), {
        "draft-reviewer_display": "letters", "draft-advance_on_key": "on",
        "draft-task_flags": "on", "draft-preregistration": EXCLUDE})
    assert on.status_code == 303
    draft.refresh_from_db()
    assert draft.task_flags is True
    # Off again while the preregistration still excludes flagged tasks: refused, kept on.
    off = alice.post(url("session_edit", session_id=draft.pk), {
        "draft-reviewer_display": "letters", "draft-advance_on_key": "on",
        "draft-preregistration": EXCLUDE})
    assert off.status_code == 400
    assert "this session does not collect them" in off.content.decode()
    draft.refresh_from_db()
    assert draft.task_flags is True
