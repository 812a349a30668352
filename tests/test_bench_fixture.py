"""The benchmark's set-up (bench/fixture.py) at a tiny size: it goes through the product's
services, so a change there that would break `bench/run.py` shows up here, not at benchmark time.
Nothing is timed."""

import json

import pytest
from django.contrib.sessions.backends.db import SessionStore

from accounts.guards import JUDGE_SESSION_KEY, judge_binding
from accounts.models import Judge
from bench.fixture import make_bundle, prefill, reveal, setup
from content.bundle import validate_bundle


def test_the_benchmark_bundle_is_valid_and_about_two_kilobytes_a_copy():
    bundle = make_bundle(6)
    assert all(1800 <= len(c["content"].encode()) <= 2300 for c in bundle["copies"])
    validate_bundle(json.dumps(bundle).encode(), max_bundle_bytes=10**7, max_copy_bytes=10**6)


@pytest.mark.django_db
def test_the_benchmark_fixture_makes_judges_with_browser_sessions_and_fills_them_through_services():
    fixture = setup(items=5, judges=3, per_judge=2)
    assert [len(j["codes"]) for j in fixture["judges"]] == [2, 2, 2]
    first = fixture["judges"][0]
    browser = SessionStore(session_key=first["sessionid"])
    # Bound as the join page binds (id and credential generation), so the guard admits it as is.
    assert browser[JUDGE_SESSION_KEY.format(url_id=fixture["url_id"])] == judge_binding(
        Judge.objects.get(pk=first["pk"]))
    assert prefill(fixture, 1, [first["pseudonym"]], lock=True)["verdicts"] == 2
    judge = Judge.objects.get(pk=first["pk"])
    assert judge.phase1_locked_at and judge.phase1_answered == 2
    assert prefill(fixture, 2, [first["pseudonym"]], lock=False)["verdicts"] == 2
    assert reveal(fixture)["verdicts"] == 4
