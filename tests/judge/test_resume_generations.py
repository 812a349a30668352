"""Reissuing or revoking a resume link ends the browser sessions opened with it (issue 12 item 3;
docs/threats.md case 37).

A browser session opened with a leaked resume link must stop judging at the host's reissue, on
every judge path (home, item page, verdict save by form and by autosave, the copy's frame, the
lock), and its open socket must close; the new link works. The same holds for a revocation, and
for every other browser session of the judge (the join link's, GitHub's): the judge comes back
with the new link or by signing in again.
"""

import json

import pytest
from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client

from accounts.guards import JUDGE_SESSION_KEY
from blindjudge.asgi import application
from blindjudge.errors import NOT_FOUND_MESSAGE
from judging import live_consumer as consumers
from judging.models import Verdict
from judging.services import invitation_create, resume_token_reissue, resume_token_revoke
from tests.worlds import codes, invite_and_join, is_saved_reply

ORIGIN = settings.SITE_URL.encode()
TIMEOUT = 5
JSON = {"HTTP_ACCEPT": "application/json"}


def resumed_browser(token: str) -> Client:
    """A browser (someone else's device, say) that opened a resume link."""
    browser = Client()
    assert browser.post(f"/resume/{token}").status_code == 302
    return browser


def judge_paths(judge) -> dict:
    url_id, code = judge.session.url_id, codes(judge)[0]
    return {"home": f"/s/{url_id}/", "item": f"/s/{url_id}/i/{code}/",
            "frame": f"/s/{url_id}/i/{code}/frame", "lock": f"/s/{url_id}/lock/"}


def assert_still_judging(browser, judge):
    paths = judge_paths(judge)
    for name in ("home", "item", "frame", "lock"):
        assert browser.get(paths[name]).status_code == 200, name
    saved = browser.post(paths["item"], {"verdict": "pass", "phase": "1", "go": "stay"}, **JSON)
    assert saved.status_code == 200 and is_saved_reply(saved.json())


def assert_ended(browser, judge):
    """Every judge path answers this browser as it answers a stranger, and saves nothing."""
    paths = judge_paths(judge)
    stranger = Client()
    verdicts = Verdict.objects.filter(assignment__judge=judge).count()
    for name in ("home", "item", "frame", "lock"):
        refused = browser.get(paths[name])
        assert refused.status_code == 404, name
        assert refused.content == stranger.get(paths[name]).content, name
    form = browser.post(paths["item"], {"verdict": "fail", "phase": "1", "go": "stay"})
    assert form.status_code == 404
    autosave = browser.post(paths["item"], {"verdict": "fail", "phase": "1", "go": "stay"}, **JSON)
    assert autosave.status_code == 404
    strangers = stranger.post(paths["item"], {"verdict": "fail", "phase": "1"}, **JSON)
    assert autosave.json() == strangers.json() == {"error": "not_found", "message": NOT_FOUND_MESSAGE}
    lock = browser.post(paths["lock"], {"confirm": "yes"})
    assert lock.status_code == 404
    assert Verdict.objects.filter(assignment__judge=judge).count() == verdicts
    assert not Verdict.objects.filter(assignment__judge=judge, value="fail").exists()
    judge.refresh_from_db()
    assert judge.phase1_locked_at is None
    # The guard forgot the dead binding: the browser no longer lists the session as its own.
    assert JUDGE_SESSION_KEY.format(url_id=judge.session.url_id) not in browser.session


@pytest.mark.django_db
def test_a_reissue_ends_the_browser_sessions_opened_with_the_old_link_and_the_new_link_works(
        client, open_session):
    admission = invite_and_join(open_session, "Ada")
    judge = admission.judge
    leaked = resumed_browser(admission.resume_token)
    assert_still_judging(leaked, judge)

    new_token = resume_token_reissue(judge=judge, actor="test")

    assert_ended(leaked, judge)
    # The old link itself is refused, like an unknown one.
    assert Client().post(f"/resume/{admission.resume_token}").status_code == 403
    # The judge comes back with the new link, and their saved verdict is there.
    judge.refresh_from_db()
    back = resumed_browser(new_token)
    assert_still_judging(back, judge)
    assert Verdict.objects.filter(assignment__judge=judge, phase=1).count() == 1


@pytest.mark.django_db
def test_a_revocation_ends_every_browser_session_of_the_judge(open_session):
    invited = invitation_create(session=open_session, actor="test", name="Bea")
    joined = Client()
    assert joined.post(f"/join/{invited.join_token}").status_code == 302  # the join link's browser
    judge = open_session.judges.get(display_name="Bea")
    resume_token = resume_token_reissue(judge=judge, actor="test")  # ends `joined` already
    assert_ended(joined, judge)
    judge.refresh_from_db()
    elsewhere = resumed_browser(resume_token)
    assert_still_judging(elsewhere, judge)

    resume_token_revoke(judge=judge, actor="test")

    assert_ended(elsewhere, judge)
    assert Client().post(f"/resume/{resume_token}").status_code == 403


# --- The judge's socket ----------------------------------------------------------------------------

def _socket(path: str, cookie: str):
    return WebsocketCommunicator(application, path,
                                 headers=[(b"origin", ORIGIN), (b"cookie", cookie.encode())])


def _cookie(browser: Client) -> str:
    return f"{settings.SESSION_COOKIE_NAME}={browser.cookies[settings.SESSION_COOKIE_NAME].value}"


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("fresh_channel_layer")
async def test_the_socket_opened_with_the_old_link_closes_at_the_reissue(open_session):
    admission = await database_sync_to_async(invite_and_join)(open_session, "Ada")
    judge = admission.judge
    leaked = await sync_to_async(resumed_browser)(admission.resume_token)
    path = f"/ws/s/{open_session.url_id}/"
    feed = _socket(path, _cookie(leaked))
    assert (await feed.connect(timeout=TIMEOUT))[0]
    assert (await feed.receive_json_from(timeout=TIMEOUT))["type"] == "state"

    new_token = await database_sync_to_async(resume_token_reissue)(judge=judge, actor="test")

    assert await feed.receive_json_from(timeout=TIMEOUT) == {"type": "ended"}
    assert await feed.receive_output(timeout=TIMEOUT) == {
        "type": "websocket.close", "code": consumers.CLOSE_REMOVED}
    await feed.disconnect(code=1000)
    # It cannot come back; a socket of the new link's browser opens and stays.
    again = _socket(path, _cookie(leaked))
    connected, _ = await again.connect(timeout=TIMEOUT)
    assert not connected
    await again.disconnect()
    fresh = _socket(path, _cookie(await sync_to_async(resumed_browser)(new_token)))
    assert (await fresh.connect(timeout=TIMEOUT))[0]
    assert (await fresh.receive_json_from(timeout=TIMEOUT))["type"] == "state"
    await fresh.send_to(text_data=json.dumps({"type": "ping"}))
    assert await fresh.receive_json_from(timeout=TIMEOUT) == {"type": "pong"}
    await fresh.disconnect()
