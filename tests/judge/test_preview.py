"""A host previews the judge's pages (issue 17 item 3): in draft and open sessions, on host-guarded
URLs, the judge's own templates and context builders on the session's items, in both phases.

What is checked:
- a preview walk (welcome, instructions, items, every item page and frame, the forms posted as
  a page without scripts would, the review; then all of it in phase 2) changes no row of any
  table of the project (judges, assignments, verdicts, drafts, sockets, audit, renders, sessions
  and the rest, row by row), and leaves the host's browser session as it was; the snapshot is
  shown to see a real judge's join and verdict first;
- every byte of every preview response passes the canary scan of tests/judge/test_leaks.py
  (builders, truth, defect notes, bundle ids, judges' names and reasons, database ids other than
  the session's own number, which is in the host's URL); reviewers' reasons only on phase-2 item
  pages, where a judge sees them too;
- a draft's preview renders with the opening's functions: each frame is byte for byte the one the
  opening then stores, with the redactions accepted so far;
- the guards: anonymous visitors go to sign-in; another host, a judge, a closed or revealed
  session, an unknown draw or code get 404.
"""

import gzip
import re

import pytest
from django.apps import apps
from django.contrib.sessions.models import Session as BrowserSession
from django.test import Client

from judging.enums import SessionKind
from judging.models import CopyRender, Session
from judging.services import join_token_exchange, phase_lock, redactions_accept, session_open
from tests.judge.test_leaks import (
    allowed_in_phase2,
    build_world,
    canary_bundle,
    content_canaries,
    id_canaries,
    move_ids_to_distinctive_ranges,
    people_canaries,
    phase2_canaries,
    restore_ids,
    service_verdicts,
)
from tests.support.leakcheck import Scanner, page_urls
from tests.support.verdicts import verdict_record
from tests.worlds import a_host, advance, client_as, codes

pytestmark = pytest.mark.django_db

PREVIEW_PATH = re.compile(r"^/host/sessions/(\d+)/preview/([0-9a-f]{16})/([12])/")


def project_rows() -> dict:
    """Every row of every table of the project's apps (and the browser sessions), in full."""
    rows = {}
    for app in ("judging", "accounts"):
        for model in apps.get_app_config(app).get_models():
            rows[model._meta.db_table] = list(model.objects.order_by("pk").values())
    rows["django_session"] = list(BrowserSession.objects.order_by("pk").values())
    return rows


def changed_tables(before: dict, after: dict) -> list[str]:
    return sorted(table for table in before if before[table] != after[table])


@pytest.fixture
def canary_world():
    saved = move_ids_to_distinctive_ranges()
    try:
        host = a_host("preview-host")
        yield host
    finally:
        restore_ids(saved)


def walk_preview(client: Client, session: Session, on_response) -> dict:
    """A host's whole preview, as a browser without scripts would walk it; returns what it saw:
    {"pages": [(path, phase)], "codes": [...]}. Every response goes to on_response."""
    def get(path, phase):
        response = client.get(path)
        on_response(path, phase, response)
        return response

    start = get(f"/host/sessions/{session.pk}/preview/", 1)
    assert start.status_code == 302
    welcome = start["Location"]
    match = PREVIEW_PATH.match(welcome)
    assert match and match.group(1) == str(session.pk) and match.group(3) == "1", welcome
    root = f"/host/sessions/{session.pk}/preview/{match.group(2)}"
    seen = {"pages": [], "codes": []}
    assert get(welcome, 1).status_code == 200
    for phase in (1, 2):
        base = f"{root}/{phase}/"
        for path in (f"{base}welcome/", f"{base}instructions", base):
            response = get(path, phase)
            assert response.status_code == 200, (path, response.status_code)
            seen["pages"].append((path, phase))
        links = [url for _, _, url in page_urls(response.content)]
        item_paths = list(dict.fromkeys(u for u in links if u.startswith(f"{base}i/")))
        assert item_paths, "the items page lists the preview's items"
        if phase == 1:
            seen["codes"] = [p.rstrip("/").rsplit("/", 1)[1] for p in item_paths]
        else:  # the same draw in both phases
            assert [p.rstrip("/").rsplit("/", 1)[1] for p in item_paths] == seen["codes"]
        for path in item_paths:
            page = get(path, phase)
            assert page.status_code == 200, path
            assert b'data-preview="1"' in page.content and b'data-autosave=""' in page.content
            assert b"/ws/" not in page.content, "a preview opens no socket"
            frame = get(path + "frame", phase)
            assert frame.status_code == 200 and frame["Content-Security-Policy"].startswith("sandbox")
            # Posted as a page without scripts would: it moves on and keeps nothing.
            posted = client.post(path, {"verdict": "pass", "phase": str(phase),
                                        "reason": "PreviewReasonKeptNowhere", "go": "next"})
            on_response(path, phase, posted)
            assert posted.status_code == 302
            seen["pages"].append((path, phase))
            flag_task(client, session, page, path, phase, on_response)
        review = get(f"{base}review/", phase)
        assert review.status_code == 200
        assert b"nothing can be locked" in review.content
        assert client.post(f"{base}review/", {"confirm": "yes"}).status_code == 405
    return seen


def flag_task(client: Client, session: Session, page, path: str, phase: int, on_response):
    """Where the session collects task flags, the item page has the judge's flag control, posting
    to the preview: a flag is answered as a judge's is (JSON, or back to the item without
    scripts) and a flag without a kind refused, and none is kept (the walk's snapshot)."""
    form = re.search(rb'<form method="post" action="([^"]+)" class="task-flag-form"', page.content)
    assert bool(form) == session.task_flags, path
    if not form:
        return
    action = form.group(1).decode()
    assert action == path + "flag"
    flag = {"kind": "tests_unfair", "severity": "2", "reason": " PreviewFlagReason ",
            "phase": str(phase)}
    saved = client.post(action, flag, HTTP_ACCEPT="application/json")
    refused = client.post(action, {**flag, "kind": ""}, HTTP_ACCEPT="application/json")
    plain = client.post(action, flag)
    for response in (saved, refused, plain):
        on_response(action, phase, response)
    assert saved.status_code == 200 and saved.json() == {"saved": True, "preview": True, "flag": {
        "kind": "tests_unfair", "severity": 2, "reason": "PreviewFlagReason", "locked": False}}
    assert refused.status_code == 400 and refused.json()["saved"] is False
    assert 'kind "" is not one of' in refused.json()["message"]
    assert plain.status_code == 302 and plain["Location"] == path
    opened = client.get(action)  # a flag is only ever posted: the URL opened leads to the item
    assert opened.status_code == 302 and opened["Location"] == path


def scanning(world, *, phase2_allowed: set[str]):
    """(on_response, hits): every response scanned for the judge-facing canaries."""
    session_pk = str(world.session.pk)
    ids = {label: value for label, value in id_canaries(world).items() if value != session_pk}
    always = Scanner({**content_canaries(world), **people_canaries(world), **ids,
                      "a preview's own posted reason": "PreviewReasonKeptNowhere"})
    before_lock = Scanner(phase2_canaries(world))
    after_lock = Scanner({label: value for label, value in phase2_canaries(world).items()
                          if label not in phase2_allowed})
    hits = []

    def on_response(path, phase, response):
        hits.extend(always.scan_response(response, path))
        item_page = "/i/" in path and not path.endswith("frame")
        scanner = after_lock if phase == 2 and item_page else before_lock
        hits.extend(scanner.scan_response(response, path))

    return on_response, hits


def host_client(host) -> Client:
    client = client_as(host)
    client.get("/host/")  # the sign-in's own session writes are done before the snapshot
    return client


@pytest.mark.parametrize("kind", [SessionKind.COPIES, SessionKind.FINDINGS])
def test_a_preview_of_an_open_session_records_nothing_and_leaks_nothing(canary_world, kind):
    world = build_world(canary_world, canary_bundle(), kind=kind, display="letters")
    session_open(session=world.session, actor="test")
    world.reload()
    # A real judge in the session, phase 1 locked, with reasons: their name and reasons are
    # canaries for the preview, and their rows must stay as they are.
    judge = join_token_exchange(token=world.tokens["join_A"]).judge
    service_verdicts(world, judge, "A", 1)
    phase_lock(judge=judge, phase=1)
    client = host_client(world.run.host)
    on_response, hits = scanning(world, phase2_allowed=allowed_in_phase2(world))
    before = project_rows()
    seen = walk_preview(client, world.session, on_response)
    assert changed_tables(before, project_rows()) == []
    assert hits == []
    assert len(seen["codes"]) == world.session.items.count()


def test_the_snapshot_sees_a_real_judges_join_and_verdict(canary_world):
    """The detector the walk relies on, shown to fire: a join and one verdict change its rows."""
    world = build_world(canary_world, canary_bundle())
    session_open(session=world.session, actor="test")
    before = project_rows()
    judge = join_token_exchange(token=world.tokens["join_A"]).judge
    after_join = project_rows()
    assert {"accounts_judge", "judging_assignment", "judging_auditevent"} <= set(
        changed_tables(before, after_join))
    verdict_record(judge=judge, code=codes(judge)[0], phase=1, value="pass", reason="r")
    assert "judging_verdict" in changed_tables(after_join, project_rows())


def test_the_scan_sees_a_reviewers_reason_on_phase_2_preview_pages_only(canary_world):
    """The phase-2 allowance is not what keeps the scan quiet: with nothing allowed, the phase-2
    item pages of a preview show the reviewers' reasons (a judge's phase 2 shows them too), and
    no phase-1 page does."""
    world = build_world(canary_world, canary_bundle())
    session_open(session=world.session, actor="test")
    world.reload()
    on_response, hits = scanning(world, phase2_allowed=set())
    walk_preview(host_client(world.run.host), world.session, on_response)
    assert hits, "the reviewers' reasons are shown in phase 2"
    assert {hit.canary.split(" ")[0] for hit in hits} == {"review"}
    assert all("/2/i/" in hit.url for hit in hits), [str(hit) for hit in hits]


def test_a_drafts_preview_renders_what_opening_stores_with_the_redactions_so_far(canary_world):
    world = build_world(canary_world, canary_bundle())
    session = redactions_accept(session=world.session, patterns=["operator"], actor="test")
    client = host_client(world.run.host)
    on_response, hits = scanning(world, phase2_allowed=allowed_in_phase2(world))
    before = project_rows()
    seen = walk_preview(client, session, on_response)
    assert changed_tables(before, project_rows()) == []
    assert hits == []
    assert CopyRender.objects.filter(session=session).count() == 0  # nothing rendered was kept

    # The same frames, fetched in the draft, then stored by the opening.
    root = [p for p, _ in seen["pages"] if "/i/" in p][0].split("/i/")[0]
    drafted = {code: client.get(f"{root}/i/{code}/frame", HTTP_ACCEPT_ENCODING="gzip").content
               for code in seen["codes"]}
    redacted = [body for body in drafted.values() if b"operator" in gzip.decompress(body)]
    assert redacted == [], "the accepted redaction applies in the draft's preview"
    session_open(session=session, actor="test")
    stored = {bytes(frame) for frame in CopyRender.objects.filter(session=session)
              .values_list("frame_gzip", flat=True)}
    assert set(drafted.values()) == stored


def test_preview_guards(canary_world):
    world = build_world(canary_world, canary_bundle())
    session = world.session
    own = host_client(world.run.host)
    start = own.get(f"/host/sessions/{session.pk}/preview/")
    root = start["Location"].rsplit("/", 3)[0]  # …/preview/<seed>
    welcome = start["Location"]
    assert own.get(welcome).status_code == 200

    anonymous = Client().get(welcome)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith("/accounts/login/")
    other_host = host_client(a_host("someone-else"))
    assert other_host.get(welcome).status_code == 404
    assert other_host.get(f"/host/sessions/{session.pk}/preview/").status_code == 404
    for bad in (f"{root}/3/", f"{root[:-1]}g/1/", f"{root}/1/i/QQQQ/", f"{root}/1/i/QQQQ/frame"):
        assert own.get(bad).status_code == 404, bad

    session_open(session=session, actor="test")
    judge = join_token_exchange(token=world.tokens["join_A"]).judge
    as_judge = client_as(judge)  # admitted as a judge, signed in as nobody
    refused = as_judge.get(welcome)
    assert refused.status_code == 302 and refused["Location"].startswith("/accounts/login/")
    for state in ("closed", "revealed"):
        session = advance(Session.objects.get(pk=session.pk), state)
        assert own.get(welcome).status_code == 404
        assert own.get(f"/host/sessions/{session.pk}/preview/").status_code == 404
