"""The host's instructions to judges (issue 17 item 2): written and previewed in the draft (the
preview inert, nothing saved), frozen with the protocol at opening (in it as text, rendered once
with the session's redactions and stored), scanned by the blinding check like the rubric, and
listed among the overview's setup steps.
"""

import pytest
from django.urls import reverse

from blindjudge.errors import Conflict
from content.canonical import canonical_sha256, form_of
from judging import renders
from judging.enums import SessionState
from judging.models import SessionRender
from judging.services import protocol_of, redactions_accept, session_update_draft
from tests.worlds import a_session, advance, client_as

pytestmark = pytest.mark.django_db

TEXT = ("# Before you start\n\nRead each copy **to the end**. <script>alert('x')</script>\n\n"
        "[the style guide](https://example.invalid/guide)")
BUILDER_MODEL = "gpt-4o-2024-08-06"  # tests.worlds.make_bundle's first builder


def url(session, name="instructions"):
    return reverse(f"host:{name}", kwargs={"session_id": session.pk})


@pytest.fixture
def alice(host):
    return client_as(host)


def save(client, session, text=TEXT, minutes=4):
    return client.post(url(session), {"instructions": text, "minutes_per_item": minutes,
                                      "action": "save"})


def test_the_host_writes_and_previews_instructions_in_a_draft(alice, draft):
    page = alice.get(url(draft)).content.decode()
    assert '<textarea name="instructions"' in page and 'value="preview"' in page

    preview = alice.post(url(draft), {"instructions": TEXT, "minutes_per_item": 4,
                                      "action": "preview"})
    assert preview.status_code == 200
    body = preview.content.decode()
    shown = body.split('id="instructions-preview">', 1)[1].split("</div>", 1)[0]
    # The same inert renderer as the rubric: the script stays text, the link is shown as text.
    assert "<script" not in shown and "&lt;script&gt;alert" in shown
    assert "<strong>to the end</strong>" in shown and "<a " not in shown
    assert "example.invalid/guide" in shown
    assert "Preview: what judges will see (not saved)" in body
    # The product's parts, with the estimate from the form's (unsaved) minutes: 6 items × 4.
    assert '<strong id="item-count">6 items</strong>' in body and "24 minutes" in body
    # What the host typed stays in the box; nothing was saved.
    assert "Read each copy **to the end**." in body
    draft.refresh_from_db()
    assert draft.instructions == "" and draft.minutes_per_item == 3

    overview = url(draft, "session")
    assert "not written" in alice.get(overview).content.decode().split('id="instructions-status">')[1][:40]
    response = save(alice, draft)
    assert response.status_code == 303 and response["Location"] == url(draft)
    draft.refresh_from_db()
    assert draft.instructions == TEXT and draft.minutes_per_item == 4
    status = alice.get(overview).content.decode().split('id="instructions-status">')[1][:40]
    assert status.startswith("written")


def test_bad_input_keeps_the_text_and_saves_nothing(alice, draft):
    response = alice.post(url(draft), {"instructions": TEXT, "minutes_per_item": 0,
                                       "action": "save"})
    assert response.status_code == 400
    assert "Read each copy **to the end**." in response.content.decode()
    draft.refresh_from_db()
    assert draft.instructions == ""


def test_instructions_freeze_at_opening_in_the_protocol_and_the_stored_render(alice, draft):
    save(alice, draft)
    confirm = alice.get(url(draft, "session_open")).content.decode()
    assert "your instructions to judges" in confirm
    assert "the minutes-per-item estimate judges are told (4)" in confirm
    opened = advance(draft, SessionState.OPEN)

    assert opened.protocol["instructions"] == TEXT and opened.protocol["minutes_per_item"] == 4
    assert opened.protocol_sha256 == canonical_sha256(opened.protocol, form_of(opened.protocol))
    stored = SessionRender.objects.get(session=opened).instructions_html
    assert stored == renders.prose_of(TEXT, opened.redaction_patterns)
    assert "<strong>to the end</strong>" in stored and "<script" not in stored

    refused = save(alice, opened, text="Something else")
    assert refused.status_code == 409
    assert "froze with the protocol when the session opened" in refused.content.decode()
    preview = alice.post(url(opened), {"instructions": "x", "minutes_per_item": 3,
                                       "action": "preview"})
    assert preview.status_code == 409
    with pytest.raises(Conflict):
        session_update_draft(session=opened, actor="test", instructions="Something else")
    opened.refresh_from_db()
    assert opened.instructions == TEXT
    # The page shows them frozen, with what judges get.
    page = alice.get(url(opened)).content.decode()
    assert "<textarea" not in page and 'id="instructions-stored"' in page


def test_a_session_without_instructions_keeps_its_protocol_and_render_key(run):
    """No instructions and the default estimate: the protocol names neither (so its hash is as
    before), and the render key is the one sessions had before instructions existed."""
    session = a_session(run, SessionState.OPEN, rubric="Is add() right?")
    assert "instructions" not in session.protocol and "minutes_per_item" not in session.protocol
    key = SessionRender.objects.get(session=session).inputs_sha256
    tasks = session.protocol["tasks"]
    assert len(tasks) == 1
    assert renders.inputs_sha256(task="t", rubric="r", patterns=[]) == canonical_sha256(
        {"task": "t", "rubric": "r", "patterns": [], "renderer": renders.FRAME_STYLE_HASH})
    assert renders.inputs_sha256(task="t", rubric="r", patterns=[], instructions="i") != \
        renders.inputs_sha256(task="t", rubric="r", patterns=[])
    assert len(key) == 64


def test_the_blinding_check_lists_a_builder_name_in_them_and_a_pattern_redacts_them(alice, draft):
    save(alice, draft, text=f"These copies come from {BUILDER_MODEL} and two others.")
    blinding = alice.get(url(draft, "blinding")).content.decode()
    assert 'id="text-instructions">The instructions: 1 match' in blinding
    # Accepted on the blinding page (the suggestion's button), as a host does.
    response = alice.post(url(draft, "redactions"), {"action": "suggest", "pattern": BUILDER_MODEL})
    assert response.status_code == 303
    draft.refresh_from_db()
    assert BUILDER_MODEL in draft.redaction_patterns
    preview = alice.post(url(draft), {"instructions": draft.instructions, "minutes_per_item": 3,
                                      "action": "preview"}).content.decode()
    shown = preview.split('id="instructions-preview">', 1)[1].split("</div>", 1)[0]
    assert BUILDER_MODEL not in shown and "[redacted]" in shown
    opened = advance(draft, SessionState.OPEN)
    stored = SessionRender.objects.get(session=opened).instructions_html
    assert BUILDER_MODEL not in stored and "[redacted]" in stored
    assert protocol_of(opened)["instructions"] == opened.instructions  # frozen as written


def test_a_change_of_instructions_changes_the_render_key(draft):
    """Instructions are among the render inputs: an opening whose draft changed them while it
    rendered finds the key changed and renders again (judging.services.sessions)."""
    from judging.services.sessions import _inputs_of  # noqa: PLC0415 - the opening's own key

    before = _inputs_of(draft)
    changed = session_update_draft(session=draft, actor="test", instructions="Be careful.")
    assert _inputs_of(changed) != before
    redactions_accept(session=changed, patterns=["careful"], actor="test")
    opened = advance(changed, SessionState.OPEN)
    assert SessionRender.objects.get(session=opened).inputs_sha256 == _inputs_of(opened)
    assert "[redacted]" in SessionRender.objects.get(session=opened).instructions_html


def test_another_host_cannot_see_or_write_them(other_host, draft):
    bob = client_as(other_host)
    assert bob.get(url(draft)).status_code == 404
    assert save(bob, draft).status_code == 404
    draft.refresh_from_db()
    assert draft.instructions == ""
