"""The host's dashboard sockets end with the sign-in they were opened with (issue 12, item 7).

A real websocket through the ASGI application (channels' WebsocketCommunicator: Origin check,
cookies, routing, the consumer, the configured channel layer) held by a browser that signs in
with its password; the same browser then signs out or changes its password through the pages.
And a socket that missed the "signed out" event is refused at its next ping or refresh, which
re-read the browser session.
"""

import asyncio

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client

from blindjudge.asgi import application
from host.consumers import CLOSE_IDLE, CLOSE_SIGNED_OUT
from judging.services import host_password_set
from tests.worlds import HOST_PASSWORD, invite_and_join

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("fresh_channel_layer")]

TIMEOUT = 5
NEW_PASSWORD = "a quite different passphrase"


@database_sync_to_async
def signed_in_browser(host) -> Client:
    browser = Client()
    response = browser.post("/accounts/login/", {"login": host.user.username,
                                                 "password": HOST_PASSWORD})
    assert response.status_code == 302, response.content.decode()
    return browser


def cookie_of(browser: Client) -> str:
    return f"{settings.SESSION_COOKIE_NAME}={browser.cookies[settings.SESSION_COOKIE_NAME].value}"


async def dashboard(session, browser: Client) -> WebsocketCommunicator:
    communicator = WebsocketCommunicator(
        application, f"/ws/host/sessions/{session.pk}/",
        headers=[(b"origin", settings.SITE_URL.encode()), (b"cookie", cookie_of(browser).encode())])
    assert (await communicator.connect(timeout=TIMEOUT))[0]
    assert (await communicator.receive_json_from(timeout=TIMEOUT))["type"] == "snapshot"
    return communicator


async def told_and_closed(communicator) -> bool:
    told = await communicator.receive_json_from(timeout=TIMEOUT)
    closed = await communicator.receive_output(timeout=TIMEOUT)
    await communicator.disconnect()
    return told == {"type": "signed_out"} and closed == {"type": "websocket.close",
                                                          "code": CLOSE_SIGNED_OUT}


async def refused(session, browser: Client) -> bool:
    communicator = WebsocketCommunicator(
        application, f"/ws/host/sessions/{session.pk}/",
        headers=[(b"origin", settings.SITE_URL.encode()), (b"cookie", cookie_of(browser).encode())])
    connected, _ = await communicator.connect(timeout=TIMEOUT)
    await communicator.disconnect()
    return not connected


async def test_signing_out_closes_the_hosts_sockets_in_every_browser(open_session, host):
    browser, elsewhere = await signed_in_browser(host), await signed_in_browser(host)
    tabs = [await dashboard(open_session, browser), await dashboard(open_session, browser),
            await dashboard(open_session, elsewhere)]
    response = await database_sync_to_async(browser.post)("/accounts/logout/")
    assert response.status_code == 302
    for tab in tabs:
        assert await told_and_closed(tab)
    assert await refused(open_session, browser)


async def test_a_password_change_closes_the_hosts_sockets(open_session, host):
    browser, elsewhere = await signed_in_browser(host), await signed_in_browser(host)
    tabs = [await dashboard(open_session, browser), await dashboard(open_session, elsewhere)]
    response = await database_sync_to_async(browser.post)("/accounts/password/change/", {
        "oldpassword": HOST_PASSWORD, "password1": NEW_PASSWORD, "password2": NEW_PASSWORD})
    assert response.status_code == 302
    for tab in tabs:
        assert await told_and_closed(tab)
    # The browser that changed it is still signed in and may open its dashboard again; the
    # other browser's sign-in no longer holds.
    await (await dashboard(open_session, browser)).disconnect()
    assert await refused(open_session, elsewhere)


async def test_a_wrong_current_password_changes_nothing_and_closes_nothing(open_session, host):
    browser = await signed_in_browser(host)
    tab = await dashboard(open_session, browser)
    response = await database_sync_to_async(browser.post)("/accounts/password/change/", {
        "oldpassword": "not my password", "password1": NEW_PASSWORD, "password2": NEW_PASSWORD})
    assert response.status_code == 200
    await tab.send_json_to({"type": "ping"})
    assert await tab.receive_json_from(timeout=TIMEOUT) == {"type": "pong"}
    await tab.disconnect()


async def test_createhost_set_password_closes_the_hosts_sockets(open_session, host):
    tab = await dashboard(open_session, await signed_in_browser(host))
    await database_sync_to_async(host_password_set)(host=host, password=NEW_PASSWORD)
    assert await told_and_closed(tab)


@pytest.mark.parametrize("frame", ["ping", "refresh"])
async def test_a_stale_socket_is_refused_at_its_next_frame_after_a_sign_out_it_missed(
        open_session, host, frame):
    """Signed out in another tab while this socket missed the event (here: the browser session is
    ended without our sign-out view, as when the event is lost): its next ping or refresh reads
    the session again and closes it instead of answering."""
    browser = await signed_in_browser(host)
    tab = await dashboard(open_session, browser)
    await database_sync_to_async(browser.logout)()
    await tab.send_json_to({"type": frame})
    assert await told_and_closed(tab)


@pytest.mark.parametrize("frame", ["ping", "refresh"])
async def test_a_stale_socket_is_refused_at_its_next_frame_after_a_password_change_it_missed(
        open_session, host, frame):
    browser = await signed_in_browser(host)
    tab = await dashboard(open_session, browser)

    @database_sync_to_async
    def changed_elsewhere():  # as by another process, whose event never arrived
        host.user.set_password(NEW_PASSWORD)
        host.user.save(update_fields=["password"])

    await changed_elsewhere()
    await tab.send_json_to({"type": frame})
    assert await told_and_closed(tab)


async def test_a_socket_that_never_pings_is_closed_when_its_sign_in_ends_elsewhere(
        open_session, host, settings):
    """A password changed on the command line of another process (its event never reaches this
    one, as on the in-memory channel layer), and a dashboard that sends no frame at all: the
    server's own re-check closes it (issue 25 item 6)."""
    settings.BLINDJUDGE_HOST_SOCKET_RECHECK_SECONDS = 1
    browser = await signed_in_browser(host)
    tab = await dashboard(open_session, browser)
    quiet = await dashboard(open_session, browser)
    assert await quiet.receive_nothing(timeout=1.5)  # still signed in: nothing said, nothing closed

    @database_sync_to_async
    def changed_elsewhere():
        host.user.set_password(NEW_PASSWORD)
        host.user.save(update_fields=["password"])

    await changed_elsewhere()
    assert await told_and_closed(tab)
    assert await told_and_closed(quiet)


async def test_no_event_is_sent_on_a_sign_in_that_no_longer_holds(open_session, host, settings):
    """The re-check before each event: a judge joins after the host's sign-in ended elsewhere;
    the dashboard is told it is signed out instead of being sent the newcomer's row."""
    settings.BLINDJUDGE_HOST_SOCKET_RECHECK_SECONDS = 3600
    browser = await signed_in_browser(host)
    tab = await dashboard(open_session, browser)
    await database_sync_to_async(browser.logout)()
    await database_sync_to_async(invite_and_join)(open_session, "Late Judge")
    assert await told_and_closed(tab)


async def test_a_socket_silent_past_the_stale_limit_is_closed_and_a_pinging_one_is_not(
        open_session, host, settings):
    """Its client pings every 25 s; one silent for BLINDJUDGE_HOST_SOCKET_IDLE_SECONDS is gone or
    asleep, and is closed (the page reconnects when it wakes). One that pings stays open."""
    settings.BLINDJUDGE_HOST_SOCKET_IDLE_SECONDS = 1
    browser = await signed_in_browser(host)
    silent, pinging = await dashboard(open_session, browser), await dashboard(open_session, browser)
    for _ in range(4):
        await pinging.send_json_to({"type": "ping"})
        assert await pinging.receive_json_from(timeout=TIMEOUT) == {"type": "pong"}
        await asyncio.sleep(0.5)
    assert await silent.receive_output(timeout=TIMEOUT) == {"type": "websocket.close",
                                                            "code": CLOSE_IDLE}
    await silent.disconnect()
    await pinging.send_json_to({"type": "ping"})
    assert await pinging.receive_json_from(timeout=TIMEOUT) == {"type": "pong"}
    await pinging.disconnect()
