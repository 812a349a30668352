"""Joining as services: join links, guest codes, the host as judge, resume tokens, removal and
erasure (docs/threats.md cases 13, 15, 16 at the service level)."""

import hashlib
import threading
from collections import Counter
from datetime import timedelta

import pytest
from django.db import connection, connections, transaction
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.enums import AdmittedAs, CredentialKind, IdentifiedBy
from accounts.models import Credential, Invitation, Judge
from blindjudge.errors import Conflict, Invalid, NotFound, Refused
from content.commitments import commitment_sha256
from content.draws import ITEM_CODE_ALPHABET, draw_order
from judging.models import Assignment, AuditEvent
from judging.selectors import judge as selectors
from judging.services import (
    GUEST_REFUSAL,
    JOIN_REFUSAL,
    guest_join,
    guests_configure,
    host_join,
    invitation_create,
    join_token_exchange,
    judge_erase,
    judge_remove,
    resume_token_reissue,
    resume_token_revoke,
    session_close,
    session_open,
)
from judging.services import admission as admitting
from tests.worlds import a_run, a_session, invite_and_join


def test_a_join_token_admits_once_and_is_stored_hashed(open_session):
    invited = invitation_create(session=open_session, actor="test", name="Ada")
    stored = Credential.objects.get(kind=CredentialKind.JOIN)
    assert stored.token_sha256 == hashlib.sha256(invited.join_token.encode()).hexdigest()
    assert invited.join_token not in str(list(Credential.objects.values()))

    admission = join_token_exchange(token=invited.join_token)
    judge = admission.judge
    assert (judge.admitted_as, judge.identified_by, judge.display_name) == (
        AdmittedAs.INVITED, IdentifiedBy.TOKEN, "Ada")
    assert Invitation.objects.get(pk=invited.invitation.pk).judge == judge
    assert admission.protocol_sha256 == open_session.protocol_sha256
    # Case 16: a second use is refused with the one message, and admits nobody.
    with pytest.raises(Refused) as error:
        join_token_exchange(token=invited.join_token)
    assert error.value.message == JOIN_REFUSAL
    assert Judge.objects.count() == 1


def test_unknown_revoked_and_expired_join_tokens_get_the_same_refusal(open_session):
    expired = invitation_create(session=open_session, actor="test", name="Late")
    Credential.objects.filter(invitation=expired.invitation).update(
        expires_at=timezone.now() - timedelta(seconds=1))
    revoked = invitation_create(session=open_session, actor="test", name="Gone")
    Credential.objects.filter(invitation=revoked.invitation).update(revoked_at=timezone.now())
    messages = set()
    for token in ("no-such-token", expired.join_token, revoked.join_token, ""):
        with pytest.raises(Refused) as error:
            join_token_exchange(token=token)
        messages.add(error.value.message)
    assert messages == {JOIN_REFUSAL}
    assert not Judge.objects.exists()


def test_joining_a_draft_is_refused_without_using_the_token_up(draft):
    invited = invitation_create(session=draft, actor="test", name="Early")
    with pytest.raises(Conflict, match="joining is possible while it is open"):
        join_token_exchange(token=invited.join_token)
    session_open(session=draft, actor="test")
    assert join_token_exchange(token=invited.join_token).judge.display_name == "Early"


def test_joining_draws_codes_order_and_a_commitment_that_recomputes(open_session):
    admission = invite_and_join(open_session)
    judge = admission.judge
    assignments = list(judge.assignments.select_related("item__copy__builder"))
    assert len(assignments) == 6
    assert [a.position for a in assignments] == [1, 2, 3, 4, 5, 6]
    codes = [a.code for a in assignments]
    assert len(set(codes)) == len(codes)
    assert all(len(c) == 4 and set(c) <= set(ITEM_CODE_ALPHABET) for c in codes)
    # The order is the items sorted by HMAC(order seed, item key).
    assert [a.item.key for a in assignments] == draw_order(judge.order_seed,
                                                           [a.item.key for a in assignments])
    recomputed = commitment_sha256(
        session_url_id=open_session.url_id, pseudonym=judge.pseudonym,
        order_seed=judge.order_seed, salt=judge.commitment_salt,
        assignments=[{"position": a.position, "code": a.code, "item": a.item.key,
                      "copy": a.item.copy.bundle_id, "builder": a.item.copy.builder.bundle_id}
                     for a in assignments],
    )
    assert recomputed == admission.commitment_sha256 == judge.commitment_sha256


def test_orders_are_drawn_per_judge(open_session):
    """Case 13: different judges get different orders and codes (CSPRNG seeds)."""
    judges = [invite_and_join(open_session, name=f"J{i}").judge for i in range(8)]
    orders = {tuple(j.assignments.values_list("item__key", flat=True)) for j in judges}
    seeds = {j.order_seed for j in judges}
    assert len(seeds) == 8
    assert len(orders) > 1
    assert [j.pseudonym for j in judges] == [f"J{i:02d}" for i in range(1, 9)]


def test_position_does_not_follow_builder_across_judges(open_session):
    """Case 13: across many judges, each builder's copies land in the first position about as
    often as their share of items predicts (a fixed order would put one builder first always)."""
    judges = [invite_and_join(open_session, name=f"J{i}").judge for i in range(60)]
    first_builders = Counter(
        Assignment.objects.filter(judge__in=judges, position=1)
        .values_list("item__copy__builder__bundle_id", flat=True)
    )
    assert set(first_builders) == {"b1", "b2", "b3"}
    assert max(first_builders.values()) < 40  # each builder has 2 of 6 items: expect about 20


def test_balanced_allocation_and_reproducible_orders(run):
    """With k < n items per judge, every item's judge count differs by at most one after each
    admission; a pinned draw seed reproduces every order and code."""
    seed = "ab" * 32

    def admit_all(count):
        session = a_session(run, "open", items_per_judge=4, draw_seed=seed)
        judges = []
        for i in range(count):
            judges.append(invite_and_join(session, name=f"J{i}").judge)
            counts = Counter(Assignment.objects.filter(judge__session=session)
                             .values_list("item__key", flat=True))
            per_item = [counts.get(item.key, 0) for item in session.items.all()]
            assert max(per_item) - min(per_item) <= 1, per_item
            assert judges[-1].assignments.count() == 4
        return [list(j.assignments.values_list("item__key", "code")) for j in judges]

    first = admit_all(7)
    second = admit_all(7)
    assert first == second


def test_guest_join_with_a_typed_code(open_session):
    code = guests_configure(session=open_session, actor="test", allow=True).guest_code
    assert len(code.replace("-", "")) == 13  # 13 Crockford symbols = 65 bits
    typed = code.lower().replace("-", " ").replace("0", "o")
    admission = guest_join(code=typed, display_name="  Curious   Guest ", client_address="10.0.0.1")
    assert (admission.judge.admitted_as, admission.judge.display_name) == (
        AdmittedAs.GUEST, "Curious Guest")
    assert code not in str(list(Credential.objects.values()))


def test_every_guest_refusal_is_the_same(open_session, run):
    """Wrong code, guests denied, cap reached, session closed: one message, nothing learnt."""
    code = guests_configure(session=open_session, actor="test", allow=True, cap=1).guest_code
    guest_join(code=code, display_name="First", client_address="10.0.0.2")
    refusals = []
    attempts = [
        lambda: guest_join(code="AAAA-BBBB-CCCC-D", display_name="x", client_address="10.0.0.3"),
        lambda: guest_join(code=code, display_name="Second", client_address="10.0.0.3"),  # cap
    ]
    for attempt in attempts:
        with pytest.raises(Refused) as error:
            attempt()
        refusals.append(error.value.message)
    guests_configure(session=open_session, actor="test", cap=None)
    session_close(session=open_session, actor="test")
    with pytest.raises(Refused) as error:
        guest_join(code=code, display_name="Third", client_address="10.0.0.3")
    refusals.append(error.value.message)
    assert set(refusals) == {GUEST_REFUSAL}
    assert Judge.objects.filter(admitted_as=AdmittedAs.GUEST).count() == 1


def test_denying_guests_revokes_the_code_and_rotation_replaces_it(open_session):
    first = guests_configure(session=open_session, actor="test", allow=True).guest_code
    assert guests_configure(session=open_session, actor="test", allow=True).guest_code is None
    second = guests_configure(session=open_session, actor="test", rotate=True).guest_code
    assert second and second != first
    with pytest.raises(Refused):
        guest_join(code=first, display_name="Old code", client_address="10.0.0.4")
    guests_configure(session=open_session, actor="test", allow=False)
    with pytest.raises(Refused):
        guest_join(code=second, display_name="Denied", client_address="10.0.0.4")
    with pytest.raises(Conflict, match="allow them first"):
        guests_configure(session=open_session, actor="test", rotate=True)


@override_settings(BLINDJUDGE_GUEST_ATTEMPTS=3)
def test_wrong_guest_codes_are_rate_limited_per_address(open_session):
    """Case 15 (service level): after the limit even the right code is refused, with the same
    message, for that address only; the count lives in the shared database."""
    code = guests_configure(session=open_session, actor="test", allow=True).guest_code
    for _ in range(3):
        with pytest.raises(Refused):
            guest_join(code="WRNG-WRNG-WRNG-W", display_name="Guesser", client_address="10.9.9.9")
    with pytest.raises(Refused) as error:
        guest_join(code=code, display_name="Guesser", client_address="10.9.9.9")
    assert error.value.message == GUEST_REFUSAL
    assert guest_join(code=code, display_name="Neighbour", client_address="10.9.9.10").judge


def test_a_bad_display_name_is_refused_before_the_code_is_checked(open_session):
    with pytest.raises(Invalid, match="choose a name"):
        guest_join(code="whatever", display_name="   ", client_address="10.0.0.5")
    with pytest.raises(Invalid, match="direction characters"):
        guest_join(code="whatever", display_name="evil\u202ename", client_address="10.0.0.5")


def test_the_host_judges_their_own_session_once(open_session, host, other_host):
    admission = host_join(session=open_session, host=host)
    assert (admission.judge.admitted_as, admission.judge.user) == (AdmittedAs.HOST, host.user)
    with pytest.raises(Conflict, match="already joined"):
        host_join(session=open_session, host=host)
    with pytest.raises(NotFound):
        host_join(session=open_session, host=other_host)


def test_resume_tokens_reissue_and_revoke(admission):
    judge = admission.judge
    assert selectors.judge_by_resume_token(admission.resume_token) == judge
    fresh = resume_token_reissue(judge=judge, actor="test")
    assert selectors.judge_by_resume_token(fresh) == judge
    with pytest.raises(Refused) as revoked:
        selectors.judge_by_resume_token(admission.resume_token)
    with pytest.raises(Refused) as unknown:
        selectors.judge_by_resume_token("never-issued")
    assert revoked.value.message == unknown.value.message  # case 16: revoked looks unknown
    resume_token_revoke(judge=judge, actor="test")
    with pytest.raises(Refused):
        selectors.judge_by_resume_token(fresh)


def test_removal_stops_every_credential_at_once(admission):
    judge = judge_remove(judge=admission.judge, actor="test")
    assert judge.status == "removed" and judge.removed_at
    with pytest.raises(Refused):
        selectors.judge_by_resume_token(admission.resume_token)
    with pytest.raises(Conflict, match="already removed"):
        judge_remove(judge=judge, actor="test")
    with pytest.raises(Conflict, match="was removed"):
        resume_token_reissue(judge=judge, actor="test")


def test_erasure_removes_identity_and_keeps_the_pseudonym(open_session):
    judge = invite_and_join(open_session, name="Grace Hopper").judge
    judge_erase(judge=judge, actor="test")
    judge.refresh_from_db()
    assert (judge.display_name, judge.github_login, judge.github_id, judge.pseudonym) == (
        "", "", None, "J01")
    assert not Invitation.objects.filter(name="Grace Hopper").exists()
    assert "Grace Hopper" not in str(list(AuditEvent.objects.values("details")))
    with pytest.raises(Conflict, match="already erased"):
        judge_erase(judge=judge, actor="test")


def test_invitations_need_exactly_one_of_name_and_login(open_session):
    with pytest.raises(Invalid, match="either a name or a GitHub login"):
        invitation_create(session=open_session, actor="test")
    with pytest.raises(Invalid, match="either a name or a GitHub login"):
        invitation_create(session=open_session, actor="test", name="A", github_login="a")
    listed = invitation_create(session=open_session, actor="test", github_login="@octocat")
    assert (listed.invitation.github_login, listed.join_token) == ("octocat", None)
    with pytest.raises(Conflict, match="already listed"):
        invitation_create(session=open_session, actor="test", github_login="OctoCat")


@pytest.mark.django_db
def test_a_join_reads_the_items_ids_only_and_before_the_lock(host):
    """On SQLite a join's transaction holds the whole database's write lock: it used to load
    every item with its copy's content inside it (80,000 items: another session's save waited
    20.8 s and failed; issue 25 item 4). Now the items are read before the lock, ids only."""
    session = a_session(a_run(host), "open")
    code = guests_configure(session=session, actor="test", allow=True).guest_code
    token = invitation_create(session=session, actor="test", name="Ada").join_token
    for join in (lambda: guest_join(code=code, display_name="Gus", client_address="10.9.8.7"),
                 lambda: join_token_exchange(token=token)):
        with CaptureQueriesContext(connection) as queries:
            admission = join()
        sql = [q["sql"] for q in queries.captured_queries]
        assert admission.judge.assignments.count() == session.items.count() > 0
        assert not any('"content"' in q or '"statement"' in q for q in sql), sql
        items_read = next(i for i, q in enumerate(sql) if 'FROM "judging_item"' in q)
        locked = [i for i, q in enumerate(sql) if "FOR UPDATE" in q]  # PostgreSQL's row locks
        assert not locked or items_read < locked[0], sql


def test_a_join_draws_before_its_transaction_and_writes_only_inside_it(host, transactional_db):
    """The judge's draw (allocation counts, order, codes, commitment: seconds of CPU at 80,000
    items) used to run inside the join's transaction, which on SQLite holds the whole database's
    write lock: another session's save waited behind it (issue 25 item 4). Each query is seen
    with whether a transaction was open when it ran."""
    session = a_session(a_run(host), "open", items_per_judge=1)
    invite_and_join(session, name="First")  # so the allocation has counts to read
    token = invitation_create(session=session, actor="test", name="Ada").join_token
    seen = []

    def watch(execute, sql, params, many, context):
        seen.append((sql, connection.in_atomic_block))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(watch):
        admission = join_token_exchange(token=token)
    counts_read = [inside for sql, inside in seen
                   if 'FROM "judging_assignment"' in sql and "GROUP BY" in sql]
    items_read = [inside for sql, inside in seen if 'FROM "judging_item"' in sql]
    written = [inside for sql, inside in seen if sql.startswith("INSERT")]
    assert counts_read == [False] and items_read == [False], seen
    assert written and all(written), seen
    assert admission.judge.number == 2 and admission.judge.assignments.count() == 1


def test_a_judge_drawn_for_a_place_another_took_meanwhile_is_drawn_again(open_session):
    """Drawn before the lock for the next number; another judge joins in between: the draw is
    for someone else's place, refused under the lock (the transaction rolls back), and the join
    draws again, so numbers stay distinct and every commitment recomputes."""
    items = admitting.session_item_rows(open_session.pk)
    stale = admitting._draw(open_session, items)
    other = invite_and_join(open_session, name="Quicker").judge
    assert other.number == stale.number == 1
    with pytest.raises(admitting._DrawnForAnother), transaction.atomic():
        admitting._admit(open_session, admitted_as=AdmittedAs.INVITED,
                         identified_by=IdentifiedBy.TOKEN, display_name="Late", actor="test",
                         items=items, drawn=stale)
    assert Judge.objects.filter(session=open_session).count() == 1
    late = invite_and_join(open_session, name="Late").judge
    assert late.number == 2 and late.commitment_sha256 != stale.commitment
    mapping = [{"position": a.position, "code": a.code, "item": a.item.key,
                "copy": a.item.copy.bundle_id, "builder": a.item.copy.builder.bundle_id}
               for a in late.assignments.select_related("item__copy__builder").order_by("position")]
    assert late.commitment_sha256 == commitment_sha256(
        session_url_id=open_session.url_id, pseudonym=late.pseudonym, order_seed=late.order_seed,
        salt=late.commitment_salt, assignments=mapping)


def test_a_removal_between_the_draw_and_the_lock_makes_a_balanced_draw_stale(run):
    """Where each judge gets fewer items than the session has, the draw balances against the
    active judges' counts: a judge removed in between changes them, so the draw is made again."""
    session = a_session(run, "open", items_per_judge=2)
    first = invite_and_join(session, name="First").judge
    items = admitting.session_item_rows(session.pk)
    stale = admitting._draw(session, items)
    judge_remove(judge=first, actor="test")
    with pytest.raises(admitting._DrawnForAnother), transaction.atomic():
        admitting._admit(session, admitted_as=AdmittedAs.INVITED, identified_by=IdentifiedBy.TOKEN,
                         display_name="Late", actor="test", items=items, drawn=stale)
    assert invite_and_join(session, name="Late").judge.number == 2


def test_joins_sent_at_once_each_draw_once_and_outside_their_transactions(host, transactional_db):
    """Six judges join one session at the same moment. Each draws exactly once (the session's
    joins take turns in the process, so no join draws for a place another then takes), before
    its transaction; numbers are distinct and the allocation stays balanced."""
    session = a_session(a_run(host), "open", items_per_judge=2)
    tokens = [invitation_create(session=session, actor="test", name=f"J{i}").join_token
              for i in range(6)]
    draws, errors = [], []
    start = threading.Barrier(len(tokens))

    def join(token):
        def watch(execute, sql, params, many, context):
            if 'FROM "judging_assignment"' in sql and "GROUP BY" in sql:  # a draw's counts
                draws.append((token, connection.in_atomic_block))
            return execute(sql, params, many, context)

        try:
            with connection.execute_wrapper(watch):
                start.wait(30)
                join_token_exchange(token=token)
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=join, args=(token,)) for token in tokens]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors, errors
    assert sorted(draws) == sorted((token, False) for token in tokens), draws
    judges = Judge.objects.filter(session=session)
    assert sorted(judges.values_list("number", flat=True)) == [1, 2, 3, 4, 5, 6]
    per_item = Counter(Assignment.objects.filter(judge__session=session)
                       .values_list("item__key", flat=True))
    assert max(per_item.values()) - min(per_item.values()) <= 1, per_item


def test_a_guest_join_the_session_would_refuse_reads_no_items_and_draws_no_judge(open_session, host):
    """Past the guest cap, from a browser already in the session, or by a host judging already,
    the join is refused as before, and before any item is read or any judge drawn: a draw is
    seconds of CPU at 80,000 items, which a refused request must never cost."""
    code = guests_configure(session=open_session, actor="test", allow=True, cap=1).guest_code
    guest_join(code=code, display_name="First", client_address="10.0.0.1")
    host_join(session=open_session, host=host)

    def refused_without_items(join, refusal):
        with CaptureQueriesContext(connection) as queries, pytest.raises(refusal):
            join()
        assert not any('FROM "judging_item"' in q["sql"] for q in queries.captured_queries)

    refused_without_items(lambda: guest_join(code=code, display_name="Second",
                                             client_address="10.0.0.2"), Refused)
    refused_without_items(lambda: guest_join(code=code, display_name="Again",
                                             client_address="10.0.0.1",
                                             held_sessions=frozenset({open_session.url_id})),
                          admitting.AlreadyAdmitted)
    refused_without_items(lambda: host_join(session=open_session, host=host), Conflict)
