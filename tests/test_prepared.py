"""Prepared queries and the session store's written-out read (issue 32): the same rows, the same
objects, as the querysets they stand for."""

from datetime import timedelta

import pytest
from django.contrib.sessions.models import Session
from django.utils import timezone

from accounts.guards import _HELD_JUDGE, JUDGE_SESSION_KEY, judge_held_by
from accounts.models import Judge
from blindjudge.prepared import PreparedQuery
from blindjudge.sessions import SessionStore
from judging.services import resume_token_reissue
from tests.worlds import invite_and_join


def fields(instance) -> dict:
    return {name: value for name, value in instance.__dict__.items() if name != "_state"}


@pytest.mark.django_db
def test_the_guards_prepared_judge_is_the_querysets(open_session):
    judge = invite_and_join(open_session, "Ada").judge
    Judge.objects.filter(pk=judge.pk).update(phase1_locked_at=timezone.now())  # a datetime too
    prepared = _HELD_JUDGE.first(pk=judge.pk, url_id=open_session.url_id,
                                 generation=judge.credential_generation)
    orm = (Judge.objects.select_related("session__run")
           .defer("session__protocol", "session__run__manifest", "session__run__request_keys")
           .get(pk=judge.pk))
    assert fields(prepared) == fields(orm)
    assert fields(prepared.session) == fields(orm.session)
    assert fields(prepared.session.run) == fields(orm.session.run)
    assert prepared.session.get_deferred_fields() == orm.session.get_deferred_fields() \
        == {"protocol"}
    assert prepared.session.protocol == orm.session.protocol  # loaded on access, as deferred
    assert prepared._state.adding is False and prepared._state.db == "default"


@pytest.mark.django_db
def test_the_guard_admits_only_the_bound_judge_of_the_session(open_session):
    judge = invite_and_join(open_session, "Ada").judge
    key = JUDGE_SESSION_KEY.format(url_id=open_session.url_id)
    assert judge_held_by({key: [judge.pk, judge.credential_generation]}, open_session.url_id) == judge
    assert judge_held_by({key: [judge.pk, judge.credential_generation + 1]}, open_session.url_id) is None
    other = JUDGE_SESSION_KEY.format(url_id="elsewhere")
    assert judge_held_by({other: [judge.pk, 0]}, "elsewhere") is None
    assert judge_held_by({key: [-1, 0]}, open_session.url_id) is None
    assert judge_held_by({key: [2**70, 0]}, open_session.url_id) is None
    resume_token_reissue(judge=judge, actor="test")  # the generation moves on
    assert judge_held_by({key: [judge.pk, judge.credential_generation]}, open_session.url_id) is None


def test_a_prepared_query_takes_only_values_passed_as_given():
    with pytest.raises(TypeError):
        PreparedQuery(lambda when: Judge.objects.filter(created_at=when), when=timezone.now())
    query = PreparedQuery(lambda pk: Judge.objects.filter(pk=pk), pk=2_147_480_001)
    with pytest.raises(TypeError):
        query.first(pk="1")


@pytest.mark.django_db
def test_a_value_missing_from_the_query_is_refused():
    query = PreparedQuery(lambda pk: Judge.objects.filter(pk=1), pk=2_147_480_001)
    with pytest.raises(RuntimeError, match="not among"):
        query.first(pk=1)
    twice = PreparedQuery(lambda pk: Judge.objects.filter(pk=pk, number__lt=pk), pk=2_147_480_001)
    assert twice.first(pk=10**6) is None  # every place a value appears takes it


@pytest.mark.django_db
def test_the_session_store_reads_live_rows_only():
    store = SessionStore()
    store["judge:x"] = [1, 0]
    store.save()
    assert SessionStore(session_key=store.session_key)["judge:x"] == [1, 0]
    Session.objects.filter(session_key=store.session_key).update(
        expire_date=timezone.now() - timedelta(seconds=1))
    expired = SessionStore(session_key=store.session_key)
    assert expired.get("judge:x") is None
    assert expired.session_key is None  # a new key when it is saved, as Django's store does
    assert SessionStore(session_key="nosuchsessionkey00000000").load() == {}
