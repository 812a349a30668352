"""Admission: a judge joins by join link, guest code, GitHub sign-in or as the host.

Admitting a judge allocates their items, draws their order and codes and computes their
commitment before the write lock (`_admitting`), then checks and stores them in one short
transaction. Every credential is stored hashed.
"""

import secrets
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Count
from django.utils import timezone

from accounts import throttle
from accounts.enums import AdmittedAs, CredentialKind, IdentifiedBy, JudgeStatus
from accounts.models import Credential, Host, Invitation, Judge
from blindjudge.errors import Conflict, Invalid, NotFound, Refused, TooMany
from content import invitees
from content.canonical import form_of
from content.commitments import commitment_sha256
from content.credentials import (
    GITHUB_REFUSAL,
    GUEST_JOINS_REFUSAL,
    GUEST_REFUSAL,
    JOIN_REFUSAL,
    token_sha256,
)
from content.draws import (
    Draws,
    balanced_pick,
    by_task_pick,
    canonical_guest_code,
    draw_codes_with_copies,
    draw_order,
    draw_order_by_task,
    one_per_copy_pick,
    order_key,
    pair_swapped,
)
from content.invitees import Invitee
from content.stored_text import TextRefused
from judging import audit, live
from judging.enums import SessionKind, SessionState
from judging.models import Assignment, AuditEvent, Item, Session
from judging.services.adjudication import (
    HOST_REFUSALS,
    InsideMatrix,
    invited_login_refusal,
    refuse_inside_matrix,
    refuse_second_adjudicator,
)
from judging.services.checks import checked_github_login, clean_display_name, display_name_limit


def issue_credential(kind: str, *, session, token: str, **fields) -> Credential:
    return Credential.objects.create(
        kind=kind, session=session, token_sha256=token_sha256(token), **fields
    )


@dataclass(frozen=True)
class Admission:
    """What a newly admitted judge is shown once: the resume token and the two hashes."""
    judge: Judge
    resume_token: str
    commitment_sha256: str
    protocol_sha256: str


@dataclass(frozen=True, slots=True)
class _ItemRow:
    pk: int
    task: str  # bundle ids only: opaque labels for the spread, never names, content or truth
    copy: str
    builder: str
    second_copy: str | None = None  # a pair's second copy and its builder (pairs sessions)
    second_builder: str | None = None


def session_item_rows(session_id: int) -> dict[str, _ItemRow]:
    """The session's items by key, as admission needs them: ids only, never a copy's content
    (megabytes each) or a task's statement. Items never change once a session has opened, so
    callers read them before they take the write lock (on SQLite, the whole database's)."""
    return {key: _ItemRow(pk, task, copy, builder, second, second_builder)
            for pk, key, task, copy, builder, second, second_builder in
            Item.objects.filter(session_id=session_id).order_by("key").values_list(
                "pk", "key", "task__bundle_id", "copy__bundle_id", "copy__builder__bundle_id",
                "pair_copy__bundle_id", "pair_copy__builder__bundle_id")}


@dataclass(frozen=True)
class _Drawn:
    """A judge's admission drawn, before the write lock, for the session as it was then read:
    `seen` (_seen: the number of judges joined, and where the session gives each judge fewer
    items than it has, how many are active, which the balanced pick counts) must still hold under
    the lock, or it was drawn for someone else's place."""

    seen: tuple[int, int | None]
    number: int
    order_seed: str
    salt: str
    mapping: list[dict]
    commitment: str
    # item id, code, position, order key, and for a pair: swapped, first code, second code
    assignments: list[tuple]


class _DrawnForAnother(Exception):  # noqa: N818 - an outcome, not an error
    """Another judge joined (or left) between the draw and the write lock: draw again."""


# A join draws the judge's order, codes and commitment before it takes the write lock (on SQLite
# the whole database's: at 80,000 items that drawing is seconds of CPU, and every other session's
# saves would wait for it), then writes them under the lock if nobody joined in between. Joins of
# one session in one process take turns (JOIN_TURNS): each draws once, for the number it gets,
# rather than all drawing for the same number and all but one drawing again (40 guests at once
# at 5,000 items: 38 s of joins and other sessions' saves waiting seconds for the GIL). Joins in
# other processes (PostgreSQL with several workers) can still land in between: such a join draws
# again, at most DRAW_ATTEMPTS times, then under the lock.
DRAW_ATTEMPTS = 5
ALREADY_JOINED = "you have already joined this session"
# Striped by session id: two sessions that share a stripe only take turns with each other.
JOIN_TURNS = tuple(threading.Lock() for _ in range(64))


def _limited(session: Session, item_count: int) -> bool:
    return bool(session.items_per_judge) and session.items_per_judge < item_count


def _seen(session: Session, items: dict[str, _ItemRow]) -> tuple[int, int | None]:
    active = (Judge.objects.filter(session=session, status=JudgeStatus.ACTIVE).count()
              if _limited(session, len(items)) else None)
    return session.joined_judges, active


def _draw(session: Session, items: dict[str, _ItemRow]) -> _Drawn:
    """The next judge's items, order, codes and commitment for the session as given."""
    seen = _seen(session, items)
    number = session.joined_judges + 1
    draws = Draws(session.draw_seed)
    order_seed = draws.hex(f"judge:{number}:order")
    salt = draws.hex(f"judge:{number}:salt")
    keys = list(items)
    limited = _limited(session, len(keys))
    reasons = session.kind == SessionKind.REASONS
    counts = {}
    if limited or reasons:
        counts = dict(
            Assignment.objects.filter(item__session=session, judge__status=JudgeStatus.ACTIVE)
            .values_list("item__key").annotate(n=Count("id")).values_list("item__key", "n")
        )
    # Tasks and builders by bundle id only: opaque labels for the spread, never names or truth.
    if session.by_task:
        task_items: dict[str, list[str]] = {}
        for key in keys:
            task_items.setdefault(items[key].task, []).append(key)
        if limited:
            keys = by_task_pick(task_items, counts, session.items_per_judge,
                                session.allocation_seed, number)
        ordered = draw_order_by_task(order_seed, {key: items[key].task for key in keys})
    elif reasons:
        # At most one review of any copy per judge (content.draws.one_per_copy_pick).
        keys = one_per_copy_pick({key: item.copy for key, item in items.items()}, counts,
                                 session.items_per_judge, session.allocation_seed, number)
        ordered = draw_order(order_seed, keys)
    else:
        if limited:
            # A pair's "builder" for the spread is its pair of builders: each judge gets the
            # builder pairs as evenly as the tasks.
            groups = {key: (item.task, item.builder if item.second_builder is None
                            else f"{item.builder}|{item.second_builder}")
                      for key, item in items.items()}
            keys = balanced_pick(keys, counts, session.items_per_judge, session.allocation_seed,
                                 number, groups)
        ordered = draw_order(order_seed, keys)
    pairs = session.kind == SessionKind.PAIRS
    # A pair's copies have codes of their own, one per copy for the judge (the same on each of
    # their pairs that holds it), drawn with the pairs' codes so that none repeats.
    codes, copy_codes = draw_codes_with_copies(
        draws, f"judge:{number}:codes", len(ordered),
        [c for key in ordered for c in (items[key].copy, items[key].second_copy)] if pairs else ())
    mapping = []
    for position, (key, code) in enumerate(zip(ordered, codes, strict=True), start=1):
        item = items[key]
        entry = {"position": position, "code": code, "item": key, "copy": item.copy,
                 "builder": item.builder}
        if pairs:
            entry.update(second_copy=item.second_copy, second_builder=item.second_builder,
                         swapped=pair_swapped(order_seed, key), first_code=copy_codes[item.copy],
                         second_code=copy_codes[item.second_copy])
        mapping.append(entry)
    # In the form the session's protocol froze in: a session opened before RFC 8785 keeps
    # committing its judges in the legacy form, so every commitment verifies like its protocol.
    commitment = commitment_sha256(
        session_url_id=session.url_id, pseudonym=_pseudonym(number), order_seed=order_seed,
        salt=salt, assignments=mapping, canonical=form_of(session.protocol),
    )
    assignments = [(items[m["item"]].pk, m["code"], m["position"], order_key(order_seed, m["item"]),
                    m.get("swapped", False), m.get("first_code", ""), m.get("second_code", ""))
                   for m in mapping]
    return _Drawn(seen=seen, number=number, order_seed=order_seed, salt=salt, mapping=mapping,
                  commitment=commitment, assignments=assignments)


def _pseudonym(number: int) -> str:
    return f"J{number:02d}"


def _admitting(session_id: int | None, items: dict[str, _ItemRow] | None, admit):
    """`admit(drawn)` in a transaction of its own, with the judge drawn before it (DRAW_ATTEMPTS
    times, while others' joins land in between), else with None: `_admit` draws under the lock."""
    if not session_id or items is None:
        with transaction.atomic():
            return admit(None)
    with JOIN_TURNS[session_id % len(JOIN_TURNS)]:
        for _ in range(DRAW_ATTEMPTS):
            session = Session.objects.filter(pk=session_id, state=SessionState.OPEN).first()
            if session is None:
                break  # refused under the lock, with the caller's own words
            drawn = _draw(session, items)
            try:
                with transaction.atomic():
                    return admit(drawn)
            except _DrawnForAnother:
                continue
        with transaction.atomic():
            return admit(None)


def _admit(session: Session, *, admitted_as: str, identified_by: str, display_name: str,
           actor: str, user=None, github_id=None, github_login: str = "",
           items: dict[str, _ItemRow] | None = None, drawn: _Drawn | None = None) -> Admission:
    """Admit one judge to an open session. Must run inside transaction.atomic() (`_admitting`).

    The session row is locked so concurrent admissions get distinct numbers and a balanced
    allocation (each sees the counts the previous one left). `items`: session_item_rows, read
    before the caller's transaction (else read here, inside it). `drawn`: the judge drawn before
    the transaction; raises _DrawnForAnother when the session changed since (the caller's
    transaction rolls back and `_admitting` draws again).
    """
    session = (Session.objects.select_for_update(of=("self",)).select_related("run")
               .get(pk=session.pk))
    if session.state != SessionState.OPEN:
        raise Conflict(f"the session is {session.state}; joining is possible while it is open")
    if session.kind == SessionKind.ADJUDICATION:
        refuse_second_adjudicator(session)
    # Under the session's row lock, so a judge and an adjudicator of the same person joining at
    # once are checked one after the other (the second sees the first).
    refuse_inside_matrix(session, github_id=github_id, user=user,
                         host_admission=admitted_as == AdmittedAs.HOST)
    if items is None:
        items = session_item_rows(session.pk)
    if drawn is None:
        drawn = _draw(session, items)
    elif drawn.seen != _seen(session, items):
        raise _DrawnForAnother
    number, pseudonym = drawn.number, _pseudonym(drawn.number)
    try:
        with transaction.atomic():
            judge = Judge.objects.create(
                session=session, number=number, pseudonym=pseudonym, admitted_as=admitted_as,
                identified_by=identified_by, display_name=display_name, user=user,
                github_id=github_id, github_login=github_login, order_seed=drawn.order_seed,
                commitment_salt=drawn.salt, commitment_sha256=drawn.commitment,
            )
    except IntegrityError:
        raise Conflict(ALREADY_JOINED) from None
    Assignment.objects.bulk_create(
        Assignment(judge=judge, item_id=item_id, code=code, position=position, order_key=key,
                   swapped=swapped, first_code=first_code, second_code=second_code)
        for item_id, code, position, key, swapped, first_code, second_code in drawn.assignments
    )
    session.joined_judges = number
    session.save(update_fields=["joined_judges"])
    resume_token = secrets.token_urlsafe(32)
    issue_credential(CredentialKind.RESUME, session=session, judge=judge, token=resume_token)
    audit.record("judge.admitted", actor=actor, session=session, judge=pseudonym,
                 admitted_as=admitted_as, identified_by=identified_by, items=len(drawn.mapping),
                 commitment_sha256=drawn.commitment)
    live.judge_changed(judge)  # after commit: the host's dashboard shows the newcomer
    return Admission(judge=judge, resume_token=resume_token, commitment_sha256=drawn.commitment,
                     protocol_sha256=session.protocol_sha256)


@dataclass(frozen=True)
class Invited:
    invitation: Invitation
    join_token: str
    expires_at: object


def invitation_create(*, session: Session, actor: str, name: str = "",
                      github_login: str = "", note: str = "") -> Invited:
    """Invite one named person to a session by a join link (or list a GitHub login).

    Side effects: creates the Invitation and, for a named invitee, a single-use join token
    (stored hashed) that expires after BLINDJUDGE_JOIN_TOKEN_DAYS; appends `judge.invited`
    (without the name). Refused after the session has closed for good (revealed).
    """
    if bool(name.strip()) == bool(github_login.strip()):
        raise Invalid("invite: give either a name or a GitHub login")
    if session.state == SessionState.REVEALED:
        raise Conflict("the session is revealed; nobody can join it now")
    token = None
    expires_at = None
    with transaction.atomic():
        if github_login.strip():
            login = checked_github_login(github_login)
            if Invitation.objects.filter(session=session, github_login__iexact=login).exists():
                raise Conflict(f'GitHub login "{login}" is already listed for this session')
            inside = invited_login_refusal(session, login)
            if inside:
                raise Invalid(inside)
            invitation = Invitation.objects.create(session=session, github_login=login)
        else:
            invitation = Invitation.objects.create(session=session, name=clean_display_name(name),
                                                   note=_checked_note(note))
            token = secrets.token_urlsafe(32)
            expires_at = _join_expiry()
            issue_credential(CredentialKind.JOIN, session=session, invitation=invitation, token=token,
                   expires_at=expires_at)
        audit.record("judge.invited", actor=actor, session=session, invitation=invitation.pk,
                     by="github" if github_login.strip() else "join_link")
    return Invited(invitation=invitation, join_token=token, expires_at=expires_at)


def _join_expiry():
    return timezone.now() + timedelta(days=settings.BLINDJUDGE_JOIN_TOKEN_DAYS)


def _checked_note(note: str) -> str:
    try:
        return invitees.checked_note(note)
    except TextRefused as refused:
        raise Invalid(refused.message) from None


class InvalidLines(Invalid):
    """A list of invitees with bad lines: each problem names its line; nothing was created."""

    def __init__(self, problems: list[str]):
        message, shown = invitees.lines_refusal(problems)
        super().__init__(message)
        self.problems = shown


@contextmanager
def _list_refusals():
    """content.invitees' refusals as the services' own, the messages unchanged."""
    try:
        yield
    except invitees.BadLines as refused:
        raise InvalidLines(refused.every) from None
    except invitees.InviteesRefused as refused:
        raise Invalid(refused.message) from None


def invitee_list_parse(text: str) -> list[Invitee]:
    """One invitee per line (content.invitees.invitee_list_parse), names held to the display-name
    limit in force. Raises InvalidLines naming every bad line, Invalid for a list refused whole."""
    with _list_refusals():
        return invitees.invitee_list_parse(text, name_limit=display_name_limit())


def invitee_text_from_file(filename: str, data: bytes) -> str:
    """An uploaded or named list of invitees as the text invitee_list_parse reads
    (content.invitees.invitee_text_from_file: a .csv file's rows become "name<TAB>note" lines;
    UTF-8 only); Invalid otherwise."""
    with _list_refusals():
        return invitees.invitee_text_from_file(filename, data)


def invitations_create_bulk(*, session: Session, actor: str, text: str,
                            issue_links: bool = True) -> list[Invited]:
    """Invite a list of named people at once, each by a single-use join link (see
    invitee_list_parse for the list's shape).

    The whole list is checked before anything is written: bad names or notes, names repeated in
    the list, and names already invited to the session or already judging in it (as the same
    name), each reported by line number in one InvalidLines; then everything is created in one
    transaction, or nothing. Returns each invitation with its join token, in the list's order:
    the tokens exist in clear only here (stored hashed). With `issue_links=False` the invitations
    are created without links (join_token None), for join_links_issue to issue in the response
    that hands them over (the host's page), so no link exists anywhere before then.
    Side effects: creates the Invitations and (with issue_links) their JOIN credentials
    (expiring after BLINDJUDGE_JOIN_TOKEN_DAYS); appends one `judge.invited` per invitation
    (without names). Refused after the reveal.
    """
    with _list_refusals():
        listed, problems = invitees.invitee_lines(text, name_limit=display_name_limit())
    if not listed and not problems:
        raise Invalid(invitees.NO_NAMES)
    if session.state == SessionState.REVEALED:
        raise Conflict("the session is revealed; nobody can join it now")
    with transaction.atomic():
        # The session row is locked so two lists sent at once cannot both pass the duplicate check.
        session = Session.objects.select_for_update(of=("self",)).select_related("run").get(pk=session.pk)
        taken = {}
        for name in (Judge.objects.filter(session=session).exclude(display_name="")
                     .values_list("display_name", flat=True)):
            taken.setdefault(name.casefold(), "already judging in this session")
        for name in (Invitation.objects.filter(session=session).exclude(name="")
                     .values_list("name", flat=True)):
            taken.setdefault(name.casefold(), "already invited")
        problems += [(i.line, f'line {i.line}: "{i.name}" is {taken[i.name.casefold()]}')
                     for i in listed if i.name.casefold() in taken]
        if problems:
            raise InvalidLines([problem for _, problem in sorted(problems, key=lambda p: p[0])])
        invitations = Invitation.objects.bulk_create(
            Invitation(session=session, name=i.name, note=i.note) for i in listed)
        if any(invitation.pk is None for invitation in invitations):  # a database without RETURNING
            invitations = list(Invitation.objects.filter(session=session)
                               .order_by("-pk")[:len(listed)])[::-1]
        AuditEvent.objects.bulk_create(
            AuditEvent(action="judge.invited", actor=actor, run=session.run, session=session,
                       details={"invitation": invitation.pk, "by": "join_link", "list": True})
            for invitation in invitations)
        if not issue_links:
            return [Invited(invitation=invitation, join_token=None, expires_at=None)
                    for invitation in invitations]
        return _join_links_create(session, invitations)


def _join_links_create(session: Session, invitations: list[Invitation]) -> list[Invited]:
    expires_at = _join_expiry()
    tokens = [secrets.token_urlsafe(32) for _ in invitations]
    Credential.objects.bulk_create(
        Credential(kind=CredentialKind.JOIN, session=session, invitation=invitation,
                   token_sha256=token_sha256(token), expires_at=expires_at)
        for invitation, token in zip(invitations, tokens, strict=True))
    return [Invited(invitation=invitation, join_token=token, expires_at=expires_at)
            for invitation, token in zip(invitations, tokens, strict=True)]


def join_links_issue(*, session: Session, invitation_ids: list[int], actor: str) -> list[Invited]:
    """Issue the join links of invitations created without one (invitations_create_bulk with
    issue_links=False), once: returns them in clear, in the order of `invitation_ids`.

    Refused (Conflict) when any of them already has a link (used, revoked or not: a replayed
    download must not mint a second set), has joined, is a GitHub listing or is not the
    session's, and after the reveal; then nothing is issued.
    Side effects: creates the JOIN credentials (stored hashed, expiring after
    BLINDJUDGE_JOIN_TOKEN_DAYS); appends `invitation.links_issued` with their count.
    """
    with transaction.atomic():
        session = Session.objects.select_for_update(of=("self",)).select_related("run").get(pk=session.pk)
        if session.state == SessionState.REVEALED:
            raise Conflict("the session is revealed; nobody can join it now")
        found = {i.pk: i for i in Invitation.objects.select_for_update(of=("self",))
                 .filter(session=session, pk__in=invitation_ids)}
        with_link = set(Credential.objects.filter(invitation_id__in=found, kind=CredentialKind.JOIN)
                        .values_list("invitation_id", flat=True))
        if (len(found) != len(set(invitation_ids)) or with_link
                or any(i.judge_id or i.github_login for i in found.values())):
            raise Conflict("these join links were issued already; reissue a lost one from the "
                           "list of invitations")
        invited = _join_links_create(session, [found[pk] for pk in invitation_ids])
        audit.record("invitation.links_issued", actor=actor, session=session, links=len(invited))
    return invited


def invitation_link_reissue(*, invitation: Invitation, actor: str) -> Invited:
    """A new join link for an invitee who lost theirs before joining; the old link stops working.

    Side effects: revokes the invitation's join links not yet used, issues a new one (stored
    hashed, expiring after BLINDJUDGE_JOIN_TOKEN_DAYS) and returns it in clear, once; appends
    `invitation.reissued`. Refused once the invitee has joined (their resume link is reissued
    instead, on the judges page), for a GitHub listing (it has no link) and after the reveal.
    """
    with transaction.atomic():
        invitation = (Invitation.objects.select_for_update(of=("self",))
                      .select_related("session").get(pk=invitation.pk))
        session = invitation.session
        if session.state == SessionState.REVEALED:
            raise Conflict("the session is revealed; nobody can join it now")
        if invitation.github_login:
            raise Conflict("a GitHub listing has no join link: the person signs in with GitHub")
        if invitation.judge_id is not None:
            raise Conflict("this invitee has joined; reissue their resume link on the judges page")
        now = timezone.now()
        Credential.objects.filter(invitation=invitation, kind=CredentialKind.JOIN,
                                  revoked_at__isnull=True, used_at__isnull=True).update(revoked_at=now)
        token = secrets.token_urlsafe(32)
        expires_at = _join_expiry()
        issue_credential(CredentialKind.JOIN, session=session, invitation=invitation, token=token,
                         expires_at=expires_at)
        audit.record("invitation.reissued", actor=actor, session=session, invitation=invitation.pk)
    return Invited(invitation=invitation, join_token=token, expires_at=expires_at)


def join_token_exchange(*, token: str, held_judges: frozenset[int] = frozenset()) -> Admission:
    """Exchange a join token, once, for admission as an invited judge identified by token.

    Side effects: marks the token used (the same token is then refused), creates the Judge with
    their assignments, commitment and resume token, links the invitation to the judge.
    Refuses an unknown, used, revoked or expired token with one message (JOIN_REFUSAL); refuses
    while the session is not open without using the token up. A used token opened again in the
    browser that holds the judge it admitted (`held_judges`: the ids of the judges the browser is
    admitted as now) raises AlreadyAdmitted instead: nothing is told to anyone else.
    """
    digest = token_sha256(token or "")
    # The session's items, ids only, and the judge's draw before the write lock (on SQLite the
    # whole database's); none for a token that cannot admit (the transaction refuses it).
    usable = (Credential.objects.filter(kind=CredentialKind.JOIN, token_sha256=digest,
                                        used_at__isnull=True, revoked_at__isnull=True)
              .values_list("session_id", "expires_at").first())
    session_id = usable[0] if usable and not (usable[1] and usable[1] <= timezone.now()) else None
    items = session_item_rows(session_id) if session_id else None

    def admit(drawn: _Drawn | None) -> Admission:
        credential = (
            Credential.objects.select_for_update(of=("self",))
            .select_related("invitation", "session")
            .filter(kind=CredentialKind.JOIN, token_sha256=digest)
            .first()
        )
        now = timezone.now()
        if (credential is not None and credential.used_at
                and credential.judge_id is not None and credential.judge_id in held_judges):
            raise AlreadyAdmitted(credential.session.url_id)
        if (credential is None or credential.used_at or credential.revoked_at
                or (credential.expires_at and credential.expires_at <= now)):
            raise Refused(JOIN_REFUSAL)
        ours = credential.session_id == session_id
        admission = _admit(
            credential.session, admitted_as=AdmittedAs.INVITED, identified_by=IdentifiedBy.TOKEN,
            display_name=credential.invitation.name, actor="join_link",
            items=items if ours else None, drawn=drawn if ours else None,
        )
        credential.used_at = now
        credential.judge = admission.judge
        credential.save(update_fields=["used_at", "judge"])
        credential.invitation.judge = admission.judge
        credential.invitation.save(update_fields=["judge"])
        return admission

    return _admitting(session_id, items, admit)


class AlreadyAdmitted(Exception):  # noqa: N818 - an outcome, not an error
    """The browser already holds a judge in the session this code opens (a replayed join)."""
    def __init__(self, url_id: str):
        super().__init__(url_id)
        self.url_id = url_id


def guest_join(*, code: str, display_name: str, client_address: str,
               held_sessions: frozenset[str] = frozenset()) -> Admission:
    """Join a session as a guest with its guest code.

    `held_sessions` are the session URL ids the caller's browser already judges in: a replayed
    join into one of them raises AlreadyAdmitted instead of admitting a second guest.

    Every refusal about the code (wrong code, guests not allowed, cap reached, session not open,
    too many wrong attempts from this address) gives the same Refused(GUEST_REFUSAL). Wrong codes
    are counted per client address in the database, which every server process shares; past
    BLINDJUDGE_GUEST_ATTEMPTS in a window even a right code is refused.
    Successful joins are counted per client address too, across every session: past
    BLINDJUDGE_GUEST_JOINS in BLINDJUDGE_GUEST_JOIN_WINDOW_SECONDS the join is refused with
    TooMany(GUEST_JOINS_REFUSAL) (429), checked before the code, so it says nothing about it.
    Both limits count first and decide after (accounts.throttle.take), so attempts sent at once
    are held to them: an attempt counts as a wrong code until its code is found (committed even
    though the call fails), and a join counts before the guest is admitted, in the same
    transaction.
    Side effects: counts the attempt; on success creates the guest Judge with assignments,
    commitment and resume token and counts the join against the address.
    """
    display_name = clean_display_name(display_name)
    joins_key = f"guest-join:{client_address}"
    joins_window = settings.BLINDJUDGE_GUEST_JOIN_WINDOW_SECONDS
    if throttle.exceeded(joins_key, limit=settings.BLINDJUDGE_GUEST_JOINS,
                         window_seconds=joins_window):
        raise TooMany(GUEST_JOINS_REFUSAL.format(minutes=max(1, round(joins_window / 60))))
    # Counted first, as a wrong code until it turns out right: guest codes tried at once are held
    # to the limit as surely as codes tried one by one (accounts.throttle.take).
    code_key, code_window = f"guest-code:{client_address}", settings.BLINDJUDGE_GUEST_WINDOW_SECONDS
    if throttle.take(code_key, limit=settings.BLINDJUDGE_GUEST_ATTEMPTS, window_seconds=code_window):
        # Not tried, so not counted: given back once decided (an attempt sent with it saw it).
        throttle.give_back(code_key, window_seconds=code_window)
        raise Refused(GUEST_REFUSAL)
    credential = (
        Credential.objects.select_related("session")
        .filter(kind=CredentialKind.GUEST, revoked_at__isnull=True,
                token_sha256=token_sha256(canonical_guest_code(code or "")))
        .first()
    )
    if credential is None:
        raise Refused(GUEST_REFUSAL)
    throttle.give_back(code_key, window_seconds=code_window)
    # The items (ids only) and the guest's draw before the write lock, and only for a join the
    # session would admit as it is now: a refused one (guests off, the cap reached, a replay)
    # costs no draw, which at 80,000 items is seconds of CPU. The transaction checks again.
    admissible = _guest_refusal(credential.session, held_sessions) is None
    items = session_item_rows(credential.session_id) if admissible else None

    def admit(drawn: _Drawn | None) -> Admission:
        session = Session.objects.select_for_update().get(pk=credential.session_id)
        refusal = _guest_refusal(session, held_sessions)
        if refusal is not None:
            raise refusal
        # Counted before admitting, in this transaction: joins sent at once each see the ones
        # before them, and a refused one rolls its count back with it.
        if throttle.take(joins_key, limit=settings.BLINDJUDGE_GUEST_JOINS, window_seconds=joins_window):
            raise TooMany(GUEST_JOINS_REFUSAL.format(minutes=max(1, round(joins_window / 60))))
        return _admit(session, admitted_as=AdmittedAs.GUEST, identified_by=IdentifiedBy.TOKEN,
                      display_name=display_name, actor="guest_code", items=items, drawn=drawn)

    return _admitting(credential.session_id if admissible else None, items, admit)


def _guest_refusal(session: Session, held_sessions: frozenset[str]) -> Exception | None:
    """Why a guest code would not admit to the session now (None: it would)."""
    if not session.guests_allowed or session.state != SessionState.OPEN:
        return Refused(GUEST_REFUSAL)
    if session.url_id in held_sessions:
        return AlreadyAdmitted(session.url_id)
    if session.guest_cap is not None:
        guests = Judge.objects.filter(session=session, admitted_as=AdmittedAs.GUEST).count()
        if guests >= session.guest_cap:
            return Refused(GUEST_REFUSAL)
    return None


def host_join(*, session: Session, host: Host) -> Admission:
    """The session's own host joins as a judge; their verdicts are reported as self-blinded.

    Side effects: creates the host's Judge (admitted as host, bound to their account) with
    assignments, commitment and resume token. Refused for another host's session (404) and when
    the host already judges it.
    """
    if session.run.host_id != host.pk:
        raise NotFound(f"no session {session.pk}")
    if session.kind in HOST_REFUSALS:
        raise InsideMatrix(HOST_REFUSALS[session.kind])  # before any draw (_admit refuses too)
    if Judge.objects.filter(session=session, user=host.user).exists():
        raise Conflict(ALREADY_JOINED)  # before any draw (the unique constraint holds it anyway)
    items = session_item_rows(session.pk)
    return _admitting(session.pk, items, lambda drawn: _admit(
        session, admitted_as=AdmittedAs.HOST, identified_by=IdentifiedBy.TOKEN,
        display_name=host.user.get_username(), user=host.user,
        actor=f"host:{host.user.get_username()}", items=items, drawn=drawn))



def github_login_invited(login: str, github_id: int | None = None) -> bool:
    """Whether a GitHub account may sign up to judge: its login is listed by a host for a session
    that is open now, or its numeric id is already bound to an active judge of an open session
    (a token judge who linked GitHub). Whether it may judge a given session is github_judge_join's
    to decide."""
    login = login.strip().lower()
    if not login:
        return False
    if github_id and Judge.objects.filter(github_id=github_id, status=JudgeStatus.ACTIVE,
                                          session__state=SessionState.OPEN).exists():
        return True
    return Invitation.objects.filter(
        github_login__iexact=login, session__state=SessionState.OPEN
    ).exists()


def github_judge_join(*, url_id: str, github_id: int, github_login: str,
                      user) -> Admission | Judge:
    """A person signed in with GitHub enters a session as a judge.

    Returns the existing Judge when this GitHub account (by numeric id) already judges the session,
    whatever its login is now; otherwise admits them (an Admission) when their login is listed for
    the session on an invitation not yet used by another GitHub account. Everything else (no such
    session, not listed, listed for another account, removed from the session) is refused with one
    message, GITHUB_REFUSAL, which says nothing about the session.
    Side effects: for a returning judge, updates their GitHub login when it changed, binds the
    account when the judge had none (a token judge who linked GitHub) and appends
    `judge.github_signin`; for a new one, creates the Judge (admitted as invited, identified by
    github, bound to the GitHub id and the account) with assignments, commitment and resume token,
    links the invitation to it and appends `judge.admitted`. The audit log never holds the login.
    """
    login = (github_login or "").strip()
    session = Session.objects.filter(url_id=url_id).first() if url_id else None
    if session is None or not github_id or not login:
        raise Refused(GITHUB_REFUSAL)
    # A newcomer's items and draw before the write lock; none for a returning judge.
    returning = Judge.objects.filter(session=session, github_id=github_id).exists()
    items = None if returning else session_item_rows(session.pk)

    def admit(drawn: _Drawn | None) -> Admission | Judge:
        judge = (Judge.objects.select_for_update(of=("self",)).select_related("session")
                 .filter(session=session, github_id=github_id).first())
        if judge is not None:
            if judge.status != JudgeStatus.ACTIVE:
                raise Refused(GITHUB_REFUSAL)
            changed = []
            if judge.github_login != login:
                judge.github_login = login
                changed.append("github_login")
            if judge.user_id is None and user is not None:
                judge.user = user  # a token judge who linked GitHub, signing in for the first time
                changed.append("user")
            if changed:
                judge.save(update_fields=changed)
            audit.record("judge.github_signin", actor="github", session=judge.session,
                         judge=judge.pseudonym)
            return judge
        invitation = (Invitation.objects.select_for_update()
                      .filter(session=session, github_login__iexact=login).first())
        if invitation is None or invitation.judge_id is not None:
            raise Refused(GITHUB_REFUSAL)
        admission = _admit(session, admitted_as=AdmittedAs.INVITED,
                           identified_by=IdentifiedBy.GITHUB, display_name="", actor="github",
                           user=user, github_id=github_id, github_login=login, items=items,
                           drawn=drawn)
        invitation.judge = admission.judge
        invitation.save(update_fields=["judge"])
        return admission

    return _admitting(None if returning else session.pk, items, admit)
