"""Host redaction patterns cannot stall a page (issue 12, item 1): `re:` patterns run on RE2, and
one that needs backtracking is refused where the host enters it, with a message naming it."""

import html

import pytest
from django.urls import reverse

from tests.worlds import a_run, a_session, client_as, make_bundle


@pytest.fixture
def draft(host):
    return a_session(a_run(host, make_bundle()), "draft")


@pytest.mark.django_db
@pytest.mark.parametrize("pattern", ["re:(claude)\\1", "re:claude(?=-3)"])
def test_a_backtracking_pattern_is_refused_at_the_form_with_a_message_naming_it(host, draft, pattern):
    response = client_as(host).post(reverse("host:redactions", kwargs={"session_id": draft.pk}),
                                    {"action": "accept", "accept-patterns": pattern})

    assert response.status_code == 400
    body = html.unescape(response.content.decode())
    assert f"pattern {pattern!r}: the linear-time regex engine refuses it" in body
    assert f"{pattern}</textarea>" in body  # the host's input is kept
    draft.refresh_from_db()
    assert draft.redaction_patterns == []


@pytest.mark.django_db
def test_a_catastrophic_looking_pattern_is_accepted_and_harmless(host, draft):
    response = client_as(host).post(reverse("host:redactions", kwargs={"session_id": draft.pk}),
                                    {"action": "accept", "accept-patterns": "re:(a+)+$"})

    assert response.status_code == 303
    draft.refresh_from_db()
    assert draft.redaction_patterns == ["re:(a+)+$"]
