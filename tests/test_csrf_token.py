"""The CSRF token in a page's forms is masked with one draw of random bytes (blindjudge/csrf.py):
each character uniform, a fresh mask on every page, accepted by Django's own check exactly as
Django's token is, and the cookie handled as Django handles it."""

import re
from collections import Counter

import pytest
from django.middleware.csrf import CSRF_ALLOWED_CHARS, CSRF_SECRET_LENGTH, _unmask_cipher_token
from scipy.stats import chisquare

from blindjudge.csrf import random_csrf_string
from judging.models import Verdict
from tests.worlds import client_as, codes, invite_and_join

TOKEN = re.compile(rb'name="csrfmiddlewaretoken" value="([A-Za-z0-9]+)"')


def test_every_character_of_the_mask_is_uniform_over_the_alphabet():
    drawn = "".join(random_csrf_string() for _ in range(4000))  # 128,000 characters
    assert len(drawn) == 4000 * CSRF_SECRET_LENGTH and set(drawn) <= set(CSRF_ALLOWED_CHARS)
    counts = Counter(drawn)
    # Keeping every byte (byte % 62) would favour the first 8 characters by 5 in 4: at this size
    # that is p < 1e-30; uniform draws fall below 1e-6 once in a million runs.
    assert chisquare([counts[c] for c in CSRF_ALLOWED_CHARS]).pvalue > 1e-6
    assert len(set(random_csrf_string() for _ in range(100))) == 100


def page_token(response) -> str:
    found = TOKEN.search(response.content)
    assert found, "the page has no CSRF token"
    return found.group(1).decode()


@pytest.fixture
def judge(open_session):
    return invite_and_join(open_session, "Ada").judge


def flag_page(judge) -> str:
    """A judge page with a form: the item page (its task-flag form carries the token)."""
    return f"/s/{judge.session.url_id}/i/{codes(judge)[0]}/"


@pytest.mark.django_db
def test_a_page_masks_the_cookies_secret_afresh_and_django_accepts_the_token(judge):
    browser = client_as(judge, enforce_csrf_checks=True)
    first = browser.get(flag_page(judge))  # no cookie yet: Django's own token sets one
    assert first.status_code == 200
    secret = first.cookies["csrftoken"].value
    assert _unmask_cipher_token(page_token(first)) == secret
    tokens = []
    for _ in range(3):
        page = browser.get(flag_page(judge))
        tokens.append(page_token(page))
        # As with Django's token: the cookie's secret stands, sent again to renew it.
        assert page.cookies["csrftoken"].value == secret
    assert len(set(tokens)) == 3
    assert all(len(t) == 2 * CSRF_SECRET_LENGTH and _unmask_cipher_token(t) == secret for t in tokens)

    code = codes(judge)[0]
    forged = tokens[0][:CSRF_SECRET_LENGTH] + random_csrf_string()
    refused = browser.post(flag_page(judge), {"verdict": "pass", "phase": "1",
                                              "csrfmiddlewaretoken": forged})
    assert refused.status_code == 403 and not Verdict.objects.exists()
    saved = browser.post(flag_page(judge), {"verdict": "pass", "phase": "1",
                                            "csrfmiddlewaretoken": tokens[-1]})
    assert saved.status_code in (200, 302, 303), saved.content[:500]
    assert Verdict.objects.filter(assignment__code=code, assignment__judge=judge).count() == 1
