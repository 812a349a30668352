"""The permission matrix: every URL the resolver knows, walked by every persona.

Personas (as in tests/conftest.py): the host (alice), another host (bob), a host signed in with
GitHub, an invited judge, a judge signed in with GitHub, a guest, a judge of another session, a
removed judge, and an anonymous visitor; an adjudicator (issue 29 item 5), invited by join link
to an open adjudication on alice's run whose items (copies c2 and c6, finding f1) are items of the
copies session the other judges judge; and an auditor (issue 30 item 6), invited by join link to
an open reasons session on alice's run auditing its model reviews of c1 and c2 (copies the other
judges judge). Each cell asserts behaviour: what the page shows, or that the refusal is the same
404 a URL that does not exist gives.
"""

import re
import sys

import pytest
from django.db import transaction
from django.test import Client, override_settings
from django.urls import URLPattern, URLResolver, get_resolver

from accounts.models import Host
from judging.enums import SessionKind, SessionState
from judging.models import Run, Session
from judging.services import guest_join, guests_configure, judge_remove
from tests.support import github_standin
from tests.worlds import a_github_judge, a_host, a_run, a_session, advance, client_as, invite_and_join

JUDGE_PREFIX = "s/<str:url_id>/"


def all_patterns(resolver=None, prefix=""):
    """(route, name) for every URL pattern, walking includes."""
    resolver = resolver or get_resolver()
    for entry in resolver.url_patterns:
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            yield from all_patterns(entry, route)
        elif isinstance(entry, URLPattern):
            yield route, entry.name


def fill(route, **values):
    path = route
    for name, value in values.items():
        path = re.sub(rf"<(?:\w+:)?{name}>", value, path)
    assert "<" not in path, f"the matrix cannot fill {route}"
    return "/" + path


def own_codes(client, session):
    page = client.get(f"/s/{session.url_id}/").content.decode()
    return re.findall(rf'<li><a href="/s/{session.url_id}/i/([A-Z0-9]+)/"', page)


def github_host(standin):
    client = Client()
    with override_settings(BLINDJUDGE_HOST_GITHUB_ALLOWLIST=["hubhost"]):
        callback, _ = github_standin.sign_in(client, standin, github_id=5151, login="hubhost",
                                             start_url="/accounts/host-github/")
        assert client.get(callback["Location"])["Location"] == "/host/"
    return client


@pytest.fixture(scope="module")
def _world(django_db_setup, django_db_blocker, _standin_server):
    """Every persona's rows, built once for the module (a world took 0.3 s on SQLite and 0.9 s on
    PostgreSQL, 58 times) inside a transaction rolled back after the module's last test. Each
    test runs in a savepoint inside it (pytest-django's `db`), so what one test writes is gone
    before the next; each gets fresh browsers and objects (`world`), so none inherits another's
    cookies or in-memory changes.

    The personas are conftest's, made as its fixtures make them: the host (alice), another host
    (bob), an invited judge, a guest, a judge signed in with GitHub, a removed judge, a judge of
    another open session of alice's run; an open adjudication on the run whose copy of unknown
    truth is c6 and whose named copy and finding are c2 and f1 (items of the copies session the
    others judge), with its one adjudicator invited by join link (outside the matrix as
    declared); an open reasons session on the run (its three default-condition reviews: r1 of c1
    and c2, r2 of c1) with an auditor invited by join link; and a host signed in with GitHub."""
    with django_db_blocker.unblock():
        outer = transaction.atomic()
        outer.__enter__()
        try:
            host, other_host = a_host("alice"), a_host("bob", "another long passphrase")
            run = a_run(host)
            session = advance(a_session(run, "draft", rubric="Is add() right?"), "open")
            invited = invite_and_join(session).judge
            guest_code = guests_configure(session=session, actor="test", allow=True).guest_code
            guest = guest_join(code=guest_code, display_name="Guest",
                               client_address="192.0.2.77").judge
            other_session = a_session(run, "open")
            elsewhere = invite_and_join(other_session, name="Elsewhere Judge").judge
            removed = judge_remove(judge=invite_and_join(session, name="Removed Judge").judge,
                                   actor="test")
            _standin_server.requests.clear()
            github_judge = a_github_judge(session, _standin_server)
            adjudication = a_session(run, SessionState.OPEN, kind=SessionKind.ADJUDICATION,
                                     unknown_copies=True, adjudicate_copies=("c2",),
                                     adjudicate_findings=("f1",))
            adjudicator = invite_and_join(adjudication, name="Ada Adjudicator").judge
            reasons = a_session(run, SessionState.OPEN, kind=SessionKind.REASONS)
            auditor = invite_and_join(reasons, name="Audrey Auditor").judge
            clients = {"invited": client_as(invited), "guest": client_as(guest),
                       "other_session_judge": client_as(elsewhere),
                       "removed": client_as(removed), "anonymous": Client(),
                       "host": client_as(host), "other_host": client_as(other_host),
                       "github_judge": client_as(github_judge),
                       "github_host": github_host(_standin_server),
                       "adjudicator": client_as(adjudicator), "auditor": client_as(auditor)}
            _standin_server.requests.clear()
            built = {"host": host.pk, "run": run.pk, "session": session.pk,
                     "other_session": other_session.pk, "adjudication": adjudication.pk,
                     "reasons": reasons.pk,
                     "cookies": {name: {key: morsel.value for key, morsel in c.cookies.items()}
                                 for name, c in clients.items()},
                     "invited_codes": own_codes(clients["invited"], session),
                     "adjudicator_codes": own_codes(clients["adjudicator"], adjudication),
                     "auditor_codes": own_codes(clients["auditor"], reasons)}
        except BaseException:
            outer.__exit__(*sys.exc_info())
            raise
    yield built
    with django_db_blocker.unblock():
        transaction.set_rollback(True)
        outer.__exit__(None, None, None)


def browser_holding(cookies: dict) -> Client:
    client = Client()
    for key, value in cookies.items():
        client.cookies[key] = value
    return client


@pytest.fixture
def world(_world, db):
    """The module's world for one test: its sessions read afresh, a fresh browser per persona
    holding that persona's cookies."""
    sessions = {name: Session.objects.get(pk=_world[name])
                for name in ("session", "other_session", "adjudication", "reasons")}
    return {**sessions, "host": Host.objects.get(pk=_world["host"]),
            "run": Run.objects.get(pk=_world["run"]),
            "clients": {name: browser_holding(cookies)
                        for name, cookies in _world["cookies"].items()},
            "invited_codes": _world["invited_codes"],
            "adjudicator_codes": _world["adjudicator_codes"],
            "auditor_codes": _world["auditor_codes"]}


def judge_routes():
    return [(route, name) for route, name in all_patterns() if route.startswith(JUDGE_PREFIX)]


def test_the_matrix_knows_every_judge_page():
    """A new judge URL must be added to the expectations below, or this fails."""
    assert sorted(name for _, name in judge_routes()) == sorted([
        "judge_home", "judge_welcome", "judge_item", "judge_frame", "judge_lock",
        "judge_scorecard", "github_judge_link", "github_judge_link_done", "judge_reissue",
        "judge_instructions", "judge_card", "judge_card_frame", "judge_task_flag"])


# The adjudicator judges the same copies in another session, and the auditor audits their
# reviews in another: to them this session is any other.
NOT_FOUND_FOR_EVERYONE_BUT_THE_JUDGE = ["guest", "github_judge", "other_session_judge", "removed",
                                        "anonymous", "host", "other_host", "github_host",
                                        "adjudicator", "auditor"]
# Pages every judge of the session has (their own), whatever the URL's item code.
OWN_IN_THE_SESSION = ("judge_home", "judge_welcome", "judge_lock", "github_judge_link",
                      "github_judge_link_done", "judge_reissue", "judge_instructions")


def test_a_judge_reaches_their_own_pages(world):
    session, invited = world["session"], world["clients"]["invited"]
    code = world["invited_codes"][0]
    values = {"url_id": session.url_id, "code": code}
    pages = {name: invited.get(fill(route, **values)) for route, name in judge_routes()}
    assert b"Phase 1: judge alone" in pages["judge_home"].content
    assert f"Item <span class=\"code\">{code}</span>".encode() in pages["judge_item"].content
    assert pages["judge_frame"]["Content-Security-Policy"].startswith("sandbox")
    assert b"items have no phase-1 verdict yet" in pages["judge_lock"].content
    assert b"Your commitment" in pages["judge_welcome"].content
    assert b"Read the instructions" in pages["judge_welcome"].content
    assert pages["judge_instructions"].status_code == 200
    assert b"Link your GitHub account" in pages["github_judge_link"].content
    # Without a GitHub round trip first, the confirming page has nothing to confirm: home.
    assert pages["github_judge_link_done"]["Location"] == f"/s/{session.url_id}/"
    # The reissue is a POST from the items page; the URL opened by hand leads there.
    assert pages["judge_reissue"]["Location"] == f"/s/{session.url_id}/"
    # The scorecard exists only after the reveal.
    assert pages["judge_scorecard"].status_code == 404
    # So is each code's card page with its copy (judging uses the item pages).
    assert pages["judge_card"].status_code == 404
    assert pages["judge_card_frame"].status_code == 404
    # A task flag is only ever posted, and only where the session collects them (this one does
    # not): the judge's own code gets the service's refusal, nothing stored.
    assert pages["judge_task_flag"]["Location"] == f"/s/{session.url_id}/"
    flag_url = fill(JUDGE_PREFIX + "i/<str:code>/flag", **values)
    refused = invited.post(flag_url, {"phase": "1", "kind": "other", "severity": "1",
                                      "reason": "r"}, HTTP_ACCEPT="application/json")
    assert refused.status_code == 409
    assert refused.json()["message"] == "this session does not collect task flags"


@pytest.mark.parametrize("persona", NOT_FOUND_FOR_EVERYONE_BUT_THE_JUDGE)
def test_everyone_else_gets_the_same_404_on_the_judges_item_pages(world, persona):
    session = world["session"]
    client = world["clients"][persona]
    values = {"url_id": session.url_id, "code": world["invited_codes"][0]}
    nonexistent = Client().get(fill(JUDGE_PREFIX + "i/<str:code>/", url_id="zzzz", code="ZZZZ"))
    for route, name in judge_routes():
        if persona in ("guest", "github_judge") and name in OWN_IN_THE_SESSION:
            continue  # their own pages in the same session; checked below
        if persona in ("guest", "github_judge") and name == "judge_task_flag":
            # A judge of the same session: a GET leads to their own items whatever the code (so
            # it tells nothing of another judge's code), and a flag on another judge's code is
            # the same 404 as no code.
            assert client.get(fill(route, **values))["Location"] == f"/s/{session.url_id}/"
            post = client.post(fill(route, **values), {"phase": "1", "kind": "other",
                                                       "severity": "1", "reason": "r"})
            assert post.status_code == 404 and post.content == nonexistent.content, persona
            continue
        response = client.get(fill(route, **values))
        assert response.status_code == 404, (persona, name)
        assert response.content == nonexistent.content, (persona, name)
        post = client.post(fill(route, **values), {"verdict": "pass", "confirm": "yes"})
        assert post.status_code in (404, 405), (persona, name)


def test_a_guest_in_the_same_session_sees_only_their_own_items(world):
    session = world["session"]
    guest = world["clients"]["guest"]
    guest_codes = own_codes(guest, session)
    assert len(guest_codes) == 6
    home = guest.get(f"/s/{session.url_id}/").content.decode()
    for code in set(world["invited_codes"]) - set(guest_codes):
        assert code not in home
        assert guest.get(f"/s/{session.url_id}/i/{code}/").status_code == 404


def test_credentials_pages_show_nothing_until_a_valid_post(world):
    for persona, client in world["clients"].items():
        for path in ("/join/unknown-token", "/resume/unknown-token"):
            page = client.get(path)
            assert page.status_code == 200 and b"<form method=\"post\"" in page.content, persona
            refused = client.post(path)
            assert refused.status_code == 403, persona
        assert client.get("/guest/").status_code == 200


def test_judges_and_visitors_are_sent_to_sign_in_on_every_host_page(world):
    host_routes = [route for route, _ in all_patterns() if route.startswith("host/")]
    assert host_routes, "no host pages found"
    for persona in ("invited", "guest", "removed", "anonymous"):
        client = world["clients"][persona]
        for route in host_routes:
            # The guard answers before any object is looked up, so any value will do.
            path = "/" + re.sub(r"<(?:\w+:)?\w+>", "1", route)
            response = client.get(path)
            assert response.status_code == 302, (persona, path)
            assert response["Location"].startswith("/accounts/login/?next="), (persona, path)


def test_a_github_judge_in_the_same_session_sees_only_their_own_items(world):
    session = world["session"]
    github_judge = world["clients"]["github_judge"]
    codes = own_codes(github_judge, session)
    assert len(codes) == 6
    home = github_judge.get(f"/s/{session.url_id}/").content.decode()
    assert "Link your GitHub account" not in home  # already identified by GitHub
    for code in set(world["invited_codes"]) - set(codes):
        assert github_judge.get(f"/s/{session.url_id}/i/{code}/").status_code == 404


def test_signed_in_people_who_are_not_hosts_get_404_on_every_host_page(world):
    """A judge signed in with GitHub has an account, but no host's: the host guard's 404."""
    nonexistent = Client().get("/nonexistent/")
    client = world["clients"]["github_judge"]
    for route, _ in all_patterns():
        if route.startswith("host/"):
            response = client.get("/" + re.sub(r"<(?:\w+:)?\w+>", "1", route))
            assert response.status_code == 404, route
            assert response.content == nonexistent.content, route


def test_a_github_host_sees_their_own_pages_and_nothing_of_alices(world):
    session = world["session"]
    client = world["clients"]["github_host"]
    assert client.get("/host/").status_code == 200
    assert b"hubhost" in client.get("/host/account/").content
    for path in (f"/host/sessions/{session.pk}/", f"/host/runs/{session.run.pk}/",
                 f"/host/runs/{session.run.pk}/reviews",
                 f"/host/sessions/{session.pk}/report/json", f"/host/sessions/{session.pk}/judges"):
        assert client.get(path).status_code == 404, path


# --- The adjudicator (issue 29 items 1 and 5) ---------------------------------------------------

def test_the_adjudicator_reaches_their_own_adjudication_pages(world):
    session, adjudicator = world["adjudication"], world["clients"]["adjudicator"]
    codes = world["adjudicator_codes"]
    assert len(codes) == 3  # c2, c6 and f1: every item is the adjudicator's
    values = {"url_id": session.url_id, "code": codes[0]}
    pages = {name: adjudicator.get(fill(route, **values)) for route, name in judge_routes()}
    home = pages["judge_home"].content.decode()
    assert "Adjudication: decide what the tests could not" in home
    assert "Phase 2" not in home
    for code in codes:
        item = adjudicator.get(fill(JUDGE_PREFIX + "i/<str:code>/", url_id=session.url_id,
                                    code=code))
        assert f"Item <span class=\"code\">{code}</span>".encode() in item.content
        assert b"cannot_tell" in item.content
        frame = adjudicator.get(fill(JUDGE_PREFIX + "i/<str:code>/frame", url_id=session.url_id,
                                     code=code))
        assert frame.status_code == 200 and frame["Content-Security-Policy"].startswith("sandbox")
    assert pages["judge_item"].status_code == 200
    assert b"3 of 3 items have no phase-1 verdict yet" in pages["judge_lock"].content
    assert b"Your commitment" in pages["judge_welcome"].content
    assert b"One phase: decide what the tests could not" in pages["judge_instructions"].content
    assert b"Link your GitHub account" in pages["github_judge_link"].content
    assert pages["github_judge_link_done"]["Location"] == f"/s/{session.url_id}/"
    assert pages["judge_reissue"]["Location"] == f"/s/{session.url_id}/"
    # No scorecard (an adjudication has none), no card pages, no task flags.
    for name in ("judge_scorecard", "judge_card", "judge_card_frame"):
        assert pages[name].status_code == 404, name
    assert pages["judge_task_flag"]["Location"] == f"/s/{session.url_id}/"
    refused = adjudicator.post(fill(JUDGE_PREFIX + "i/<str:code>/flag", **values),
                               {"phase": "1", "kind": "other", "severity": "1", "reason": "r"},
                               HTTP_ACCEPT="application/json")
    assert refused.status_code == 409
    assert refused.json()["message"] == "this session does not collect task flags"


# Everyone but the adjudicator: the judges of the copies session on the same run (by join link, as
# a guest, by GitHub), a judge of another session, a removed judge, a stranger, the host of the
# run (never an adjudicator: refused by account and by GitHub), other hosts.
NOT_FOUND_FOR_EVERYONE_BUT_THE_ADJUDICATOR = ["invited", "guest", "github_judge",
                                              "other_session_judge", "removed", "anonymous",
                                              "host", "other_host", "github_host", "auditor"]


@pytest.mark.parametrize("persona", NOT_FOUND_FOR_EVERYONE_BUT_THE_ADJUDICATOR)
def test_everyone_else_gets_the_same_404_on_the_adjudicators_pages(world, persona):
    session = world["adjudication"]
    client = world["clients"][persona]
    nonexistent = Client().get(fill(JUDGE_PREFIX + "i/<str:code>/", url_id="zzzz", code="ZZZZ"))
    for code in world["adjudicator_codes"]:
        values = {"url_id": session.url_id, "code": code}
        for route, name in judge_routes():
            response = client.get(fill(route, **values))
            assert response.status_code == 404, (persona, name)
            assert response.content == nonexistent.content, (persona, name)
            post = client.post(fill(route, **values), {"verdict": "real", "phase": "1",
                                                       "reason": "r", "confirm": "yes"})
            assert post.status_code in (404, 405), (persona, name)
            if post.status_code == 404:
                assert post.content == nonexistent.content, (persona, name)


def test_the_adjudicator_gets_the_same_404_on_every_other_session_of_the_run(world):
    """The copies session (judged by the others, world["session"]) is covered by the matrix
    above; here, every session on the run the adjudicator is not in, with its judges' codes."""
    adjudicator = world["clients"]["adjudicator"]
    nonexistent = Client().get(fill(JUDGE_PREFIX + "i/<str:code>/", url_id="zzzz", code="ZZZZ"))
    other_session = world["other_session"]
    others = [s for s in other_session.run.sessions.all() if s.pk != world["adjudication"].pk]
    assert len(others) >= 2
    invite_and_join(other_session, name="Elsewhere Too")
    for session in others:
        codes = [c for judge in session.judges.all()
                 for c in judge.assignments.values_list("code", flat=True)]
        for code in codes or ["ZZZZ"]:
            for route, name in judge_routes():
                response = adjudicator.get(fill(route, url_id=session.url_id, code=code))
                assert response.status_code == 404, (session.kind, name)
                assert response.content == nonexistent.content, (session.kind, name)


def preview_routes():
    return [(route, name) for route, name in all_patterns() if name and name.startswith("preview_")
            and name != "preview_start"]


def test_the_phase_2_preview_of_an_adjudication_is_404_for_the_host(world):
    """The host previews an adjudication's one phase; every preview URL of phase 2 is the same 404
    as a preview phase that does not exist (phase 3). Other hosts get 404 on both phases."""
    session = world["adjudication"]
    client = world["clients"]["host"]
    start = client.get(f"/host/sessions/{session.pk}/preview/")
    assert start.status_code == 302
    seed = re.match(rf"/host/sessions/{session.pk}/preview/([^/]+)/1/", start["Location"]).group(1)
    phase1 = client.get(f"/host/sessions/{session.pk}/preview/{seed}/1/").content.decode()
    codes = re.findall(rf'href="/host/sessions/{session.pk}/preview/{seed}/1/i/([A-Z0-9]+)/"', phase1)
    assert codes, phase1[:2000]
    assert sorted(name for _, name in preview_routes()) == sorted([
        "preview_home", "preview_welcome", "preview_instructions", "preview_item", "preview_frame",
        "preview_review", "preview_task_flag"])
    for route, name in preview_routes():
        values = {"session_id": str(session.pk), "seed": seed, "code": codes[0]}
        # An adjudication collects no task flags: its preview has no flag page.
        own = 404 if name == "preview_task_flag" else 200
        assert client.get(fill(route, phase="1", **values)).status_code == own, name
        nowhere = client.get(fill(route, phase="3", **values))
        assert nowhere.status_code == 404, name
        refused = client.get(fill(route, phase="2", **values))
        assert refused.status_code == 404, name
        assert refused.content == nowhere.content, name
        for persona in ("other_host", "github_host", "adjudicator", "invited"):
            for phase in ("1", "2"):
                assert world["clients"][persona].get(fill(route, phase=phase, **values)).status_code \
                    in (302, 404), (persona, name, phase)


# --- The auditor of model reasons (issue 30 item 6) ------------------------------------------------

def test_the_auditor_reaches_their_own_reasons_pages(world):
    session, auditor = world["reasons"], world["clients"]["auditor"]
    codes = world["auditor_codes"]
    assert len(codes) == 2  # one review of c1 and one of c2: never two reviews of one copy
    values = {"url_id": session.url_id, "code": codes[0]}
    pages = {name: auditor.get(fill(route, **values)) for route, name in judge_routes()}
    assert pages["judge_home"].status_code == 200
    for code in codes:
        item = auditor.get(fill(JUDGE_PREFIX + "i/<str:code>/", url_id=session.url_id, code=code))
        text = item.content.decode()
        assert f"Item <span class=\"code\">{code}</span>" in text
        assert "The review to audit" in text and "not_grounded" in text
        # Phase 1: the review's verdict and reason, never its reviewer nor the copy's truth.
        assert "Known truth" not in text and "What the model reviewers said" not in text
        for name in ("qwen3", "gpt-4o-mini", "Alibaba", "OpenAI", "clean"):
            assert name not in text, name
        frame = auditor.get(fill(JUDGE_PREFIX + "i/<str:code>/frame", url_id=session.url_id,
                                 code=code))
        assert frame.status_code == 200 and frame["Content-Security-Policy"].startswith("sandbox")
    assert pages["judge_item"].status_code == 200
    assert b"2 of 2 items have no phase-1 verdict yet" in pages["judge_lock"].content
    assert b"Your commitment" in pages["judge_welcome"].content
    assert pages["judge_instructions"].status_code == 200
    assert b"Link your GitHub account" in pages["github_judge_link"].content
    assert pages["github_judge_link_done"]["Location"] == f"/s/{session.url_id}/"
    assert pages["judge_reissue"]["Location"] == f"/s/{session.url_id}/"
    # No scorecard (a reasons session has none), no card pages, no task flags.
    for name in ("judge_scorecard", "judge_card", "judge_card_frame"):
        assert pages[name].status_code == 404, name
    assert pages["judge_task_flag"]["Location"] == f"/s/{session.url_id}/"
    refused = auditor.post(fill(JUDGE_PREFIX + "i/<str:code>/flag", **values),
                           {"phase": "1", "kind": "other", "severity": "1", "reason": "r"},
                           HTTP_ACCEPT="application/json")
    assert refused.status_code == 409
    assert refused.json()["message"] == "this session does not collect task flags"


# Everyone but the auditor: the judges of the copies session on the same run (by join link, as a
# guest, by GitHub), a judge of another session, the adjudicator, a removed judge, a stranger, the
# host of the run, other hosts.
NOT_FOUND_FOR_EVERYONE_BUT_THE_AUDITOR = ["invited", "guest", "github_judge",
                                          "other_session_judge", "removed", "anonymous", "host",
                                          "other_host", "github_host", "adjudicator"]


@pytest.mark.parametrize("persona", NOT_FOUND_FOR_EVERYONE_BUT_THE_AUDITOR)
def test_everyone_else_gets_the_same_404_on_the_auditors_pages(world, persona):
    session = world["reasons"]
    client = world["clients"][persona]
    nonexistent = Client().get(fill(JUDGE_PREFIX + "i/<str:code>/", url_id="zzzz", code="ZZZZ"))
    for code in world["auditor_codes"]:
        values = {"url_id": session.url_id, "code": code}
        for route, name in judge_routes():
            response = client.get(fill(route, **values))
            assert response.status_code == 404, (persona, name)
            assert response.content == nonexistent.content, (persona, name)
            post = client.post(fill(route, **values), {"verdict": "grounded", "phase": "1",
                                                       "reason": "r", "confirm": "yes"})
            assert post.status_code in (404, 405), (persona, name)
            if post.status_code == 404:
                assert post.content == nonexistent.content, (persona, name)


def test_the_auditor_gets_the_same_404_on_every_other_session_of_the_run(world):
    """The copies session (world["session"]) is covered by the matrix above; here, every session
    on the run the auditor is not in (the adjudication among them), with its judges' codes."""
    auditor = world["clients"]["auditor"]
    nonexistent = Client().get(fill(JUDGE_PREFIX + "i/<str:code>/", url_id="zzzz", code="ZZZZ"))
    other_session = world["other_session"]
    others = [s for s in other_session.run.sessions.all() if s.pk != world["reasons"].pk]
    assert {s.kind for s in others} >= {"copies", "adjudication"}
    invite_and_join(other_session, name="Elsewhere Too")
    for session in others:
        codes = [c for judge in session.judges.all()
                 for c in judge.assignments.values_list("code", flat=True)]
        for code in codes or ["ZZZZ"]:
            for route, name in judge_routes():
                response = auditor.get(fill(route, url_id=session.url_id, code=code))
                assert response.status_code == 404, (session.kind, name)
                assert response.content == nonexistent.content, (session.kind, name)


def test_the_hosts_preview_of_a_reasons_session_works_in_both_phases(world):
    """The host previews both phases of a reasons session (phase 2 shows the copy's truth beside
    the review audited, as the auditor's phase 2 does); every preview URL answers in both, none
    in a phase that does not exist. Other hosts, the auditor and a judge of the run get nothing."""
    session = world["reasons"]
    client = world["clients"]["host"]
    start = client.get(f"/host/sessions/{session.pk}/preview/")
    assert start.status_code == 302
    seed = re.match(rf"/host/sessions/{session.pk}/preview/([^/]+)/1/", start["Location"]).group(1)
    phase1 = client.get(f"/host/sessions/{session.pk}/preview/{seed}/1/").content.decode()
    codes = re.findall(rf'href="/host/sessions/{session.pk}/preview/{seed}/1/i/([A-Z0-9]+)/"', phase1)
    assert codes, phase1[:2000]
    for phase in ("1", "2"):
        item = client.get(fill("host/sessions/<int:session_id>/preview/<str:seed>/<int:phase>/i/"
                               "<str:code>/", session_id=str(session.pk), seed=seed, phase=phase,
                               code=codes[0])).content.decode()
        assert "The review to audit" in item
        assert ("Known truth" in item) == (phase == "2")
        assert "What the model reviewers said" not in item
    for route, name in preview_routes():
        values = {"session_id": str(session.pk), "seed": seed, "code": codes[0]}
        own = 404 if name == "preview_task_flag" else 200  # a reasons session has no task flags
        for phase in ("1", "2"):
            assert client.get(fill(route, phase=phase, **values)).status_code == own, (name, phase)
        assert client.get(fill(route, phase="3", **values)).status_code == 404, name
        for persona in ("other_host", "github_host", "auditor", "invited"):
            for phase in ("1", "2"):
                assert world["clients"][persona].get(fill(route, phase=phase, **values)).status_code \
                    in (302, 404), (persona, name, phase)


# --- A pairs session (issue 31 item 6) -----------------------------------------------------------
# An open pairs session on alice's run (every pair of its builders' copies: 12 pairs, 6 copies),
# beside the copies session the other judges judge, with a judge invited by join link and a guest
# (guests are allowed in a pairs session). A pairs judge has two kinds of code: each pair's (its
# item page) and each copy's (its frame); a pair's code frames nothing, a copy's is no item.

@pytest.fixture
def pairs(world):
    session = a_session(world["run"], SessionState.OPEN, kind=SessionKind.PAIRS)
    judge = invite_and_join(session, name="Paula Pairs").judge
    code = guests_configure(session=session, actor="test", allow=True).guest_code
    guest = guest_join(code=code, display_name="Gil Pairs Guest", client_address="192.0.2.78").judge
    return {"session": session, "judge": judge, "guest": guest,
            "clients": {**world["clients"], "pairs_judge": client_as(judge),
                        "pairs_guest": client_as(guest)}}


def pair_and_copy_codes(judge) -> tuple[list[str], list[str]]:
    rows = list(judge.assignments.order_by("position").values_list("code", "first_code",
                                                                   "second_code"))
    return [r[0] for r in rows], sorted({c for r in rows for c in r[1:]})


def test_a_pairs_judge_reaches_their_own_pairs_and_frames_only_by_copy_codes(pairs):
    session, client = pairs["session"], pairs["clients"]["pairs_judge"]
    pair_codes, copy_codes = pair_and_copy_codes(pairs["judge"])
    assert len(pair_codes) == 12 and len(copy_codes) == 6
    assert own_codes(client, session) == pair_codes
    nonexistent = Client().get(fill(JUDGE_PREFIX + "i/<str:code>/", url_id="zzzz", code="ZZZZ"))
    for code in pair_codes:
        item = client.get(fill(JUDGE_PREFIX + "i/<str:code>/", url_id=session.url_id, code=code))
        text = item.content.decode()
        assert f"Pair <span class=\"code\">{code}</span>" in text
        framed = re.findall(rf'<iframe class="copy-frame" sandbox src="/s/{session.url_id}/i/'
                            r'([A-Z0-9]+)/frame"', text)
        assert len(framed) == 2 and set(framed) <= set(copy_codes), framed
        # The pair's own code frames nothing: the same 404 as a code nobody holds.
        frame = client.get(fill(JUDGE_PREFIX + "i/<str:code>/frame", url_id=session.url_id,
                                code=code))
        assert frame.status_code == 404 and frame.content == nonexistent.content
    for code in copy_codes:
        frame = client.get(fill(JUDGE_PREFIX + "i/<str:code>/frame", url_id=session.url_id,
                                code=code))
        assert frame.status_code == 200 and frame["Content-Security-Policy"].startswith("sandbox")
        # A copy's code is no item, no card, no flag.
        for route in ("i/<str:code>/", "card/<str:code>/", "card/<str:code>/frame"):
            response = client.get(fill(JUDGE_PREFIX + route, url_id=session.url_id, code=code))
            assert response.status_code == 404 and response.content == nonexistent.content, route
    # No scorecard (a pairs session has none), no task flags.
    values = {"url_id": session.url_id, "code": pair_codes[0]}
    pages = {name: client.get(fill(route, **values)) for route, name in judge_routes()}
    for name in ("judge_scorecard", "judge_card", "judge_card_frame"):
        assert pages[name].status_code == 404, name
    assert pages["judge_task_flag"]["Location"] == f"/s/{session.url_id}/"


# Everyone but the pairs judge: the pairs session's guest, the judges of the copies session on
# the same run (by join link, as a guest, by GitHub), a judge of another session, the
# adjudicator, the auditor, a removed judge, a stranger, the host of the run, other hosts.
NOT_FOUND_FOR_EVERYONE_BUT_THE_PAIRS_JUDGE = ["pairs_guest", "invited", "guest", "github_judge",
                                              "other_session_judge", "removed", "anonymous",
                                              "host", "other_host", "github_host", "adjudicator",
                                              "auditor"]
# The pairs guest's own pages in the session take no code (or, a flag, lead to their own items).
CODELESS = (*OWN_IN_THE_SESSION, "judge_scorecard", "judge_task_flag")


@pytest.mark.parametrize("persona", NOT_FOUND_FOR_EVERYONE_BUT_THE_PAIRS_JUDGE)
def test_everyone_else_gets_the_same_404_on_the_pairs_judges_pairs_and_frames(pairs, persona):
    session, client = pairs["session"], pairs["clients"][persona]
    pair_codes, copy_codes = pair_and_copy_codes(pairs["judge"])
    mine = set()
    if persona == "pairs_guest":
        mine = set(sum(pair_and_copy_codes(pairs["guest"]), []))  # a chance collision is theirs
    nonexistent = Client().get(fill(JUDGE_PREFIX + "i/<str:code>/", url_id="zzzz", code="ZZZZ"))
    for code in [c for c in (pair_codes[:2] + copy_codes) if c not in mine]:
        values = {"url_id": session.url_id, "code": code}
        for route, name in judge_routes():
            if persona == "pairs_guest" and name in CODELESS:
                continue
            response = client.get(fill(route, **values))
            assert response.status_code == 404, (persona, name, code)
            assert response.content == nonexistent.content, (persona, name, code)
            post = client.post(fill(route, **values), {"verdict": "left", "phase": "1",
                                                       "reason": "r", "confirm": "yes"})
            assert post.status_code in (404, 405), (persona, name)
            if post.status_code == 404:
                assert post.content == nonexistent.content, (persona, name)


def test_a_guest_of_a_pairs_session_sees_only_their_own_pairs_and_copies(pairs):
    session, guest = pairs["session"], pairs["clients"]["pairs_guest"]
    guest_pairs, guest_copies = pair_and_copy_codes(pairs["guest"])
    assert own_codes(guest, session) == guest_pairs and len(guest_copies) == 6
    for code in guest_pairs:
        assert guest.get(f"/s/{session.url_id}/i/{code}/").status_code == 200
    for code in guest_copies:
        assert guest.get(f"/s/{session.url_id}/i/{code}/frame").status_code == 200
    home = guest.get(f"/s/{session.url_id}/").content.decode()
    judge_pairs, judge_copies = pair_and_copy_codes(pairs["judge"])
    for code in set(judge_pairs + judge_copies) - set(guest_pairs + guest_copies):
        assert code not in home
        assert guest.get(f"/s/{session.url_id}/i/{code}/").status_code == 404
        assert guest.get(f"/s/{session.url_id}/i/{code}/frame").status_code == 404


def test_the_pairs_judge_gets_the_same_404_on_every_other_session_of_the_run(pairs):
    """Every session on the run the pairs judge is not in (the copies session, the adjudication
    and the reasons session), with its judges' codes."""
    client = pairs["clients"]["pairs_judge"]
    nonexistent = Client().get(fill(JUDGE_PREFIX + "i/<str:code>/", url_id="zzzz", code="ZZZZ"))
    others = [s for s in pairs["session"].run.sessions.all() if s.pk != pairs["session"].pk]
    assert {s.kind for s in others} >= {"copies", "adjudication", "reasons"}
    for session in others:
        codes = [c for judge in session.judges.all()
                 for c in judge.assignments.values_list("code", flat=True)]
        for code in codes[:3] or ["ZZZZ"]:
            for route, name in judge_routes():
                response = client.get(fill(route, url_id=session.url_id, code=code))
                assert response.status_code == 404, (session.kind, name)
                assert response.content == nonexistent.content, (session.kind, name)
