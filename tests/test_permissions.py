"""The permission matrix: every URL the resolver knows, walked by every persona.

Personas (as in tests/conftest.py): the host (alice), another host (bob), a host signed in with
GitHub, an invited judge, a judge signed in with GitHub, a guest, a judge of another session, a
removed judge, and an anonymous visitor. Each cell asserts behaviour: what the page shows, or that
the refusal is the same 404 a URL that does not exist gives.
"""

import re

import pytest
from django.test import Client, override_settings
from django.urls import URLPattern, URLResolver, get_resolver

from tests.support import github_standin
from tests.worlds import client_as

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


@pytest.fixture
def world(open_session, host, other_host, invited_judge, guest, judge_of_another_session,
          removed_judge, github_judge, anonymous, standin):
    """Every persona's browser (conftest's personas, each held by client_as), and a host signed in
    with GitHub."""
    clients = {"invited": client_as(invited_judge), "guest": client_as(guest),
               "other_session_judge": client_as(judge_of_another_session),
               "removed": client_as(removed_judge), "anonymous": anonymous,
               "host": client_as(host), "other_host": client_as(other_host),
               "github_judge": client_as(github_judge), "github_host": github_host(standin)}
    return {"session": open_session, "clients": clients,
            "invited_codes": own_codes(clients["invited"], open_session)}


def judge_routes():
    return [(route, name) for route, name in all_patterns() if route.startswith(JUDGE_PREFIX)]


def test_the_matrix_knows_every_judge_page():
    """A new judge URL must be added to the expectations below, or this fails."""
    assert sorted(name for _, name in judge_routes()) == sorted([
        "judge_home", "judge_welcome", "judge_item", "judge_frame", "judge_lock",
        "judge_scorecard", "github_judge_link", "github_judge_link_done", "judge_reissue",
        "judge_instructions", "judge_card", "judge_card_frame", "judge_task_flag"])


NOT_FOUND_FOR_EVERYONE_BUT_THE_JUDGE = ["guest", "github_judge", "other_session_judge", "removed",
                                        "anonymous", "host", "other_host", "github_host"]
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
                 f"/host/sessions/{session.pk}/report/json", f"/host/sessions/{session.pk}/judges"):
        assert client.get(path).status_code == 404, path
