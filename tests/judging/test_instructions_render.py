"""The host's instructions among an opening's render inputs (issue 17 item 2): instructions
changed while the session renders (a draft edit that lands before the opening's last step) are
the ones it opens with, in the stored render and in the protocol."""

import pytest

from judging import renders
from judging.enums import SessionState
from judging.models import CopyRender, SessionRender
from judging.services import session_open, session_update_draft
from tests.judging.test_renders import big_bundle, in_thread, wait_for
from tests.worlds import a_run, a_session


@pytest.mark.django_db(transaction=True)
def test_instructions_changed_while_the_session_renders_are_the_ones_it_opens_with(host, monkeypatch):
    monkeypatch.setattr(renders, "BATCH_ROWS", 1)
    session = a_session(a_run(host, big_bundle(9, 200_000)), "draft")
    session_update_draft(session=session, actor="test", instructions="First *draft*.")
    thread, errors, _ = in_thread(lambda: session_open(session=session, actor="test"))
    wait_for(lambda: CopyRender.objects.filter(session=session).exists(),
             "the opening storing a render", alive=thread)
    session_update_draft(session=session, actor="test", instructions="Second **version**.")
    thread.join(300)
    assert not errors, errors
    session.refresh_from_db()
    assert session.state == SessionState.OPEN
    assert session.protocol["instructions"] == "Second **version**."
    stored = SessionRender.objects.get(session=session)
    assert "<strong>version</strong>" in stored.instructions_html
    assert "First" not in stored.instructions_html
