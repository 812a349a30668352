"""The canary crawl of tests/judge/test_leaks.py, extended to every websocket frame a judge receives
(docs/threats.md case 12: "… JSON, websocket frames …").

The same canary world is driven through every state by the same driver (`drive`: judges join
over HTTP, a rival judge races ahead and locks, another is removed, drafts, locks, close, reveal).
Each judge persona holds a live socket from the moment they exist, and opens a fresh one at every
state (the snapshot a reconnecting page gets); a guest is removed while their sockets are open.
Every frame any of them receives is scanned with the same scanner, for every content, phase-2,
people and id canary: zero hits. The frames must include every kind a judge's socket sends (state,
saved, locked, session, removed), so silence is not an empty transcript.

Positive control: the host's dashboard socket, fed by the same drive, carries the judges' names;
the same scanner finds them there.
"""

import asyncio
import json

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client, override_settings

from accounts.models import Judge
from blindjudge.asgi import application
from judging.services import judge_remove
from tests.judge.test_leaks import (
    JUDGE_NAMES,
    build_adjudication_world,
    build_reasons_world,
    build_world,
    canary_bundle,
    content_canaries,
    drive,
    drive_adjudication,
    drive_reasons,
    id_canaries,
    move_ids_to_distinctive_ranges,
    people_canaries,
    phase2_canaries,
    reasons_bundle,
    restore_ids,
)
from tests.support.leakcheck import Scanner
from tests.worlds import a_host

JUDGE_FRAME_TYPES = {"state", "saved", "locked", "session", "removed"}


@pytest.fixture
def canary_host_tx(transactional_db):
    saved = move_ids_to_distinctive_ranges()
    yield a_host("canaryhost")
    restore_ids(saved)


class Listener:
    """Every socket a persona opened, and every frame received on any of them."""

    def __init__(self, label, cookie, path):
        self.label, self.cookie, self.path = label, cookie, path
        self.sockets, self.frames, self.refused = [], [], 0

    async def open(self):
        communicator = WebsocketCommunicator(application, self.path, headers=[
            (b"origin", settings.SITE_URL.encode()), (b"cookie", self.cookie.encode())])
        connected, _ = await communicator.connect(timeout=5)
        if connected:
            self.sockets.append(communicator)
        else:
            self.refused += 1
            await communicator.disconnect()

    async def drain(self):
        """Every frame until each socket has been silent for 0.3 s; the sockets side by side, so
        the wait is 0.3 s, not 0.3 s for each of the dozens a drive opens."""
        await asyncio.gather(*(self._drain_one(communicator) for communicator in list(self.sockets)))

    async def _drain_one(self, communicator):
        while not await communicator.receive_nothing(timeout=0.3, interval=0.01):
            output = await communicator.receive_output()
            if output["type"] == "websocket.send":
                self.frames.append(output["text"].encode("utf-8"))
            elif output["type"] == "websocket.close":
                self.sockets.remove(communicator)
                await communicator.disconnect(code=output.get("code", 1000))
                return

    async def close(self):
        for communicator in self.sockets:
            await communicator.disconnect()
        self.sockets = []


async def drain_all(listeners):
    await asyncio.gather(*(listener.drain() for listener in listeners))


def cookie_of(client: Client) -> str:
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


@pytest.mark.asyncio
@pytest.mark.usefixtures("fresh_channel_layer")
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind,display", [("copies", "letters"), ("findings", "names"),
                                          ("pairs", "names")])
@override_settings(BLINDJUDGE_GUEST_ATTEMPTS=1000)
async def test_no_canary_in_any_websocket_frame_a_judge_receives(canary_host_tx, standin, kind, display):
    world = await sync_to_async(build_world)(canary_host_tx, canary_bundle(), kind=kind, display=display,
                                             standin=standin)
    host_client = Client()
    await sync_to_async(host_client.force_login)(canary_host_tx.user)
    dashboard = Listener("host", cookie_of(host_client), f"/ws/host/sessions/{world.session.pk}/")
    listeners: dict[str, Listener] = {}
    steps = drive(world, lambda *args: None)
    # (state, personas) until the driver is done; StopIteration cannot cross a future.
    next_state = sync_to_async(lambda: next(steps, (None, None))[0])
    state = await next_state()
    await dashboard.open()
    while True:
        for label, persona in world.personas.items():
            if persona.judge_pk and label not in listeners:
                listeners[label] = Listener(label, cookie_of(persona.client),
                                            f"/ws/s/{world.session.url_id}/")
        for listener in listeners.values():
            await listener.open()  # a fresh page's socket at every state: its snapshot
        await drain_all([*listeners.values(), dashboard])
        if state == "locked":
            # The guest is removed while their sockets are open: they are told, then closed.
            guest = await sync_to_async(Judge.objects.get)(pk=world.personas["G"].judge_pk)
            await sync_to_async(judge_remove)(judge=guest, actor="test")
            await listeners["G"].drain()
        state = await next_state()
        if state is None:
            break
        await drain_all([*listeners.values(), dashboard])
    await drain_all([*listeners.values(), dashboard])
    for listener in [*listeners.values(), dashboard]:
        await listener.close()

    content = await sync_to_async(content_canaries)(world)
    phase2 = await sync_to_async(phase2_canaries)(world)
    ids = await sync_to_async(id_canaries)(world)
    hits, kinds = [], set()
    for label, listener in listeners.items():
        judge_pk = world.personas[label].judge_pk
        people = await sync_to_async(people_canaries)(world, judge_pk)
        scanner = Scanner({**content, **phase2, **people, **ids})
        for frame in listener.frames:
            hits += scanner.scan_bytes(frame, "websocket frame", f"{label} {listener.path}")
            kinds.add(json.loads(frame)["type"])
    assert not hits, "canaries in websocket frames:\n" + "\n".join(str(h) for h in hits[:40])
    assert kinds == JUDGE_FRAME_TYPES, f"the judges' sockets never carried {JUDGE_FRAME_TYPES - kinds}"
    assert listeners["R"].refused and listeners["G"].refused, "a removed judge's socket was accepted"
    assert {"A", "G"} <= set(listeners)

    # Positive control: the judges' names are on the host's dashboard, and the scanner finds them.
    names = {f"name {label}": JUDGE_NAMES[label] for label in ("A", "G")}
    found = {hit.canary for frame in dashboard.frames
             for hit in Scanner(names).scan_bytes(frame, "host frame")}
    assert found == set(names), found


ADJUDICATOR_FRAME_TYPES = {"state", "saved", "locked", "session"}  # no one is removed here


@pytest.mark.asyncio
@pytest.mark.usefixtures("fresh_channel_layer")
@pytest.mark.django_db(transaction=True)
@override_settings(BLINDJUDGE_GUEST_ATTEMPTS=1000)
async def test_no_canary_in_any_websocket_frame_an_adjudicator_receives(canary_host_tx, standin):
    """Issue 29 item 5: the adjudication's world and driver (tests/judge/test_leaks.py), the
    adjudicator holding a socket from joining and opening a fresh one at every state (before
    answering, answering, answered, locked, closed, revealed): every frame is scanned for every
    content, reviewer, people (the judges of the copies and findings sessions on the same run)
    and id canary, none allowed after the lock. Positive control: the host's dashboard socket of
    the copies session on the same run, fed by the same drive (a judge joins it while the
    adjudicator answers), carries that judge's name, and the scanner finds it; the adjudication's
    own dashboard never names its adjudicator (the host sees a pseudonym)."""
    world = await sync_to_async(build_adjudication_world)(
        canary_host_tx, canary_bundle(adjudication=True), standin=standin)
    host_client = Client()
    await sync_to_async(host_client.force_login)(canary_host_tx.user)
    copies_dashboard = Listener("host", cookie_of(host_client), f"/ws/host/sessions/{world.other.pk}/")
    own_dashboard = Listener("host", cookie_of(host_client), f"/ws/host/sessions/{world.session.pk}/")
    listeners: dict[str, Listener] = {}
    steps = drive_adjudication(world, lambda *args: None)
    next_state = sync_to_async(lambda: next(steps, (None, None))[0])
    state = await next_state()
    await copies_dashboard.open()
    await own_dashboard.open()
    dashboards = [copies_dashboard, own_dashboard]
    while state is not None:
        for label, persona in world.personas.items():
            if persona.judge_pk and label not in listeners:
                listeners[label] = Listener(label, cookie_of(persona.client),
                                            f"/ws/s/{world.session.url_id}/")
        for listener in listeners.values():
            await listener.open()  # a fresh page's socket at every state: its snapshot
        await drain_all([*listeners.values(), *dashboards])
        state = await next_state()
        await drain_all([*listeners.values(), *dashboards])
    for listener in [*listeners.values(), *dashboards]:
        await listener.close()

    assert set(listeners) == {"A"}
    adjudicator = listeners["A"]
    content = await sync_to_async(content_canaries)(world)
    phase2 = await sync_to_async(phase2_canaries)(world)
    ids = await sync_to_async(id_canaries)(world)
    people = await sync_to_async(people_canaries)(world, world.personas["A"].judge_pk)
    scanner = Scanner({**content, **phase2, **people, **ids})
    hits, kinds = [], set()
    for frame in adjudicator.frames:
        hits += scanner.scan_bytes(frame, "websocket frame", f"A {adjudicator.path}")
        kinds.add(json.loads(frame)["type"])
    assert not hits, "canaries in websocket frames:\n" + "\n".join(str(h) for h in hits[:40])
    assert kinds == ADJUDICATOR_FRAME_TYPES, f"the socket never carried {ADJUDICATOR_FRAME_TYPES - kinds}"
    assert adjudicator.refused == 0

    # Positive control: the late judge of the copies session is named on its dashboard.
    names = {"late copies judge": "CanaryLateJudgeMo JM9"}
    found = {hit.canary for frame in copies_dashboard.frames
             for hit in Scanner(names).scan_bytes(frame, "host frame")}
    assert found == set(names), found
    # The adjudication's dashboard is live (it follows the adjudicator) and names no one.
    assert own_dashboard.frames
    named = [hit for frame in own_dashboard.frames
             for hit in Scanner({"adjudicator": JUDGE_NAMES["A"]}).scan_bytes(frame, "host frame")]
    assert not named, named


AUDITOR_FRAME_TYPES = {"state", "saved", "locked", "session"}  # no one is removed here


@pytest.mark.asyncio
@pytest.mark.usefixtures("fresh_channel_layer")
@pytest.mark.django_db(transaction=True)
@override_settings(BLINDJUDGE_GUEST_ATTEMPTS=1000)
async def test_no_canary_in_any_websocket_frame_an_auditor_of_reasons_receives(canary_host_tx,
                                                                               standin):
    """Issue 30 item 6: the reasons session's world and driver (tests/judge/test_leaks.py), the
    auditor holding a socket from joining and opening a fresh one at every state (before
    answering, answering, answered, phase 2, phase 2 part answered, both locked, closed,
    revealed): every frame is scanned for every content, reviewer, review-reason (the audited
    ones too: a frame is no item page), people (the other auditor, and the judges of the copies
    and findings sessions on the same run) and id canary. Positive control: the host's
    dashboard socket of the copies session on the same run, fed by the same drive (a judge joins
    it while the auditor answers), carries that judge's name, and the scanner finds it; the
    reasons session's own dashboard is live."""
    world = await sync_to_async(build_reasons_world)(canary_host_tx, reasons_bundle(),
                                                     standin=standin)
    host_client = Client()
    await sync_to_async(host_client.force_login)(canary_host_tx.user)
    copies_dashboard = Listener("host", cookie_of(host_client), f"/ws/host/sessions/{world.other.pk}/")
    own_dashboard = Listener("host", cookie_of(host_client), f"/ws/host/sessions/{world.session.pk}/")
    listeners: dict[str, Listener] = {}
    steps = drive_reasons(world, lambda *args: None)
    next_state = sync_to_async(lambda: next(steps, (None, None))[0])
    state = await next_state()
    await copies_dashboard.open()
    await own_dashboard.open()
    dashboards = [copies_dashboard, own_dashboard]
    while state is not None:
        for label, persona in world.personas.items():
            if persona.judge_pk and label not in listeners:
                listeners[label] = Listener(label, cookie_of(persona.client),
                                            f"/ws/s/{world.session.url_id}/")
        for listener in listeners.values():
            await listener.open()  # a fresh page's socket at every state: its snapshot
        await drain_all([*listeners.values(), *dashboards])
        state = await next_state()
        await drain_all([*listeners.values(), *dashboards])
    for listener in [*listeners.values(), *dashboards]:
        await listener.close()

    assert set(listeners) == {"A"}
    auditor = listeners["A"]
    content = await sync_to_async(content_canaries)(world)
    phase2 = await sync_to_async(phase2_canaries)(world)
    ids = await sync_to_async(id_canaries)(world)
    people = await sync_to_async(people_canaries)(world, world.personas["A"].judge_pk)
    assert any(label.startswith("review ") for label in phase2)
    scanner = Scanner({**content, **phase2, **people, **ids})
    hits, kinds = [], set()
    for frame in auditor.frames:
        hits += scanner.scan_bytes(frame, "websocket frame", f"A {auditor.path}")
        kinds.add(json.loads(frame)["type"])
    assert not hits, "canaries in websocket frames:\n" + "\n".join(str(h) for h in hits[:40])
    assert kinds == AUDITOR_FRAME_TYPES, f"the socket never carried {AUDITOR_FRAME_TYPES - kinds}"
    assert auditor.refused == 0

    # Positive control: the late judge of the copies session is named on its dashboard.
    names = {"late copies judge": "CanaryLateJudgeMo JM9"}
    found = {hit.canary for frame in copies_dashboard.frames
             for hit in Scanner(names).scan_bytes(frame, "host frame")}
    assert found == set(names), found
    assert own_dashboard.frames
