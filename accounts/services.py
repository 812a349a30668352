"""Every state change of hosts, judges and credentials: one keyword-only function each.

Joining (by join link, guest code or as the host) admits a judge: their items are allocated, their
order and codes drawn, and their commitment stored, all in one transaction.
"""

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from allauth.socialaccount.models import SocialAccount
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Count
from django.utils import timezone

from accounts import throttle
from accounts.models import (
    AdmittedAs,
    Credential,
    CredentialKind,
    Host,
    IdentifiedBy,
    Invitation,
    Judge,
    JudgeStatus,
)
from blindjudge.errors import Conflict, Invalid, NotFound, Refused
from content.commitments import commitment_sha256
from content.draws import (
    Draws,
    balanced_pick,
    canonical_guest_code,
    draw_item_codes,
    draw_order,
    new_guest_code,
    order_key,
)
from judging import audit, live
from judging.models import Assignment, Session, SessionState, Verdict
from judging.services import check_guest_cap, checked_text

JOIN_REFUSAL = "This join link is not valid: it was used, revoked or has expired. Ask the host for a new one."
GUEST_REFUSAL = "That guest code was not accepted."
RESUME_REFUSAL = "This resume link is not valid. Ask the host for a new one."
MAX_DISPLAY_NAME = 60


def token_sha256(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _issue(kind: str, *, session, token: str, **fields) -> Credential:
    return Credential.objects.create(
        kind=kind, session=session, token_sha256=token_sha256(token), **fields
    )


# --- Hosts ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class HostCreated:
    host: Host
    password: str
    generated: bool


def host_create(*, username: str, password: str | None = None) -> HostCreated:
    """Create a host account that signs in with a password.

    A generated password (shown once to the caller) is used when none is given; a given password
    must pass the password validators. Side effects: creates the User and its Host row.
    """
    username = username.strip()
    User = get_user_model()
    try:
        User.username_validator(username)
    except ValidationError as error:
        raise Invalid(f"username: {' '.join(error.messages)}") from None
    if not username:
        raise Invalid("username: must not be empty")
    generated = password is None
    if generated:
        password = secrets.token_urlsafe(18)
    user = User(username=username)
    try:
        validate_password(password, user)
    except ValidationError as error:
        raise Invalid("password: " + " ".join(error.messages)) from None
    with transaction.atomic():
        if User.objects.filter(username__iexact=username).exists():
            raise Conflict(f'a user named "{username}" already exists')
        user.set_password(password)
        user.save()
        host = Host.objects.create(user=user)
    return HostCreated(host=host, password=password, generated=generated)


def host_password_set(*, host: Host, password: str | None = None) -> HostCreated:
    """Set a host's password (a generated one, returned once, when none is given).

    Side effects: replaces the password hash of the host's account.
    """
    generated = password is None
    if generated:
        password = secrets.token_urlsafe(18)
    try:
        validate_password(password, host.user)
    except ValidationError as error:
        raise Invalid("password: " + " ".join(error.messages)) from None
    host.user.set_password(password)
    host.user.save(update_fields=["password"])
    return HostCreated(host=host, password=password, generated=generated)


# --- Admission -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Admission:
    """What a newly admitted judge is shown once: the resume token and the two hashes."""

    judge: Judge
    resume_token: str
    commitment_sha256: str
    protocol_sha256: str


def _admit(session: Session, *, admitted_as: str, identified_by: str, display_name: str,
           actor: str, user=None, github_id=None, github_login: str = "") -> Admission:
    """Admit one judge to an open session. Must run inside transaction.atomic().

    The session row is locked so concurrent admissions get distinct numbers and a balanced
    allocation (each sees the counts the previous one left).
    """
    session = (Session.objects.select_for_update(of=("self",)).select_related("run")
               .get(pk=session.pk))
    if session.state != SessionState.OPEN:
        raise Conflict(f"the session is {session.state}; joining is possible while it is open")
    number = session.joined_judges + 1
    draws = Draws(session.draw_seed)
    order_seed = draws.hex(f"judge:{number}:order")
    salt = draws.hex(f"judge:{number}:salt")

    items = {item.key: item for item in session.items.select_related("copy__builder")}
    keys = list(items)
    if session.items_per_judge and session.items_per_judge < len(keys):
        counts = dict(
            Assignment.objects.filter(item__session=session, judge__status=JudgeStatus.ACTIVE)
            .values_list("item__key").annotate(n=Count("id")).values_list("item__key", "n")
        )
        keys = balanced_pick(keys, counts, session.items_per_judge, session.allocation_seed,
                             number)
    ordered = draw_order(order_seed, keys)
    codes = draw_item_codes(draws, f"judge:{number}:codes", len(ordered))

    pseudonym = f"J{number:02d}"
    mapping = [
        {"position": position, "code": code, "item": key, "copy": items[key].copy.bundle_id,
         "builder": items[key].copy.builder.bundle_id}
        for position, (key, code) in enumerate(zip(ordered, codes, strict=True), start=1)
    ]
    commitment = commitment_sha256(
        session_url_id=session.url_id, pseudonym=pseudonym, order_seed=order_seed, salt=salt,
        assignments=mapping,
    )
    try:
        with transaction.atomic():
            judge = Judge.objects.create(
                session=session, number=number, pseudonym=pseudonym, admitted_as=admitted_as,
                identified_by=identified_by, display_name=display_name, user=user,
                github_id=github_id, github_login=github_login, order_seed=order_seed,
                commitment_salt=salt, commitment_sha256=commitment,
            )
    except IntegrityError:
        raise Conflict("you have already joined this session") from None
    Assignment.objects.bulk_create(
        Assignment(judge=judge, item=items[m["item"]], code=m["code"], position=m["position"],
                   order_key=order_key(order_seed, m["item"]))
        for m in mapping
    )
    session.joined_judges = number
    session.save(update_fields=["joined_judges"])
    resume_token = secrets.token_urlsafe(32)
    _issue(CredentialKind.RESUME, session=session, judge=judge, token=resume_token)
    audit.record("judge.admitted", actor=actor, session=session, judge=pseudonym,
                 admitted_as=admitted_as, identified_by=identified_by, items=len(mapping),
                 commitment_sha256=commitment)
    live.judge_changed(judge)  # after commit: the host's dashboard shows the newcomer
    return Admission(judge=judge, resume_token=resume_token, commitment_sha256=commitment,
                     protocol_sha256=session.protocol_sha256)


def _clean_display_name(name: str) -> str:
    name = " ".join(checked_text(name, field="name", limit=10 * MAX_DISPLAY_NAME).split())
    if not name:
        raise Invalid("name: choose a name to be shown by")
    if len(name) > MAX_DISPLAY_NAME:
        raise Invalid(f"name: at most {MAX_DISPLAY_NAME} characters")
    if any(ord(ch) < 32 or 0x202A <= ord(ch) <= 0x202E or 0x2066 <= ord(ch) <= 0x2069
           for ch in name):
        raise Invalid("name: control and direction characters are not allowed")
    return name


@dataclass(frozen=True)
class Invited:
    invitation: Invitation
    join_token: str
    expires_at: object


def invitation_create(*, session: Session, actor: str, name: str = "",
                      github_login: str = "") -> Invited:
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
            login = github_login.strip().lstrip("@")
            if Invitation.objects.filter(session=session, github_login__iexact=login).exists():
                raise Conflict(f'GitHub login "{login}" is already listed for this session')
            invitation = Invitation.objects.create(session=session, github_login=login)
        else:
            invitation = Invitation.objects.create(session=session,
                                                   name=_clean_display_name(name))
            token = secrets.token_urlsafe(32)
            expires_at = timezone.now() + timedelta(days=settings.BLINDJUDGE_JOIN_TOKEN_DAYS)
            _issue(CredentialKind.JOIN, session=session, invitation=invitation, token=token,
                   expires_at=expires_at)
        audit.record("judge.invited", actor=actor, session=session, invitation=invitation.pk,
                     by="github" if github_login.strip() else "join_link")
    return Invited(invitation=invitation, join_token=token, expires_at=expires_at)


def join_token_exchange(*, token: str) -> Admission:
    """Exchange a join token, once, for admission as an invited judge identified by token.

    Side effects: marks the token used (the same token is then refused), creates the Judge with
    their assignments, commitment and resume token, links the invitation to the judge.
    Refuses an unknown, used, revoked or expired token with one message (JOIN_REFUSAL); refuses
    while the session is not open without using the token up.
    """
    with transaction.atomic():
        credential = (
            Credential.objects.select_for_update(of=("self",))
            .select_related("invitation", "session")
            .filter(kind=CredentialKind.JOIN, token_sha256=token_sha256(token or ""))
            .first()
        )
        now = timezone.now()
        if (credential is None or credential.used_at or credential.revoked_at
                or (credential.expires_at and credential.expires_at <= now)):
            raise Refused(JOIN_REFUSAL)
        admission = _admit(
            credential.session, admitted_as=AdmittedAs.INVITED, identified_by=IdentifiedBy.TOKEN,
            display_name=credential.invitation.name, actor="join_link",
        )
        credential.used_at = now
        credential.judge = admission.judge
        credential.save(update_fields=["used_at", "judge"])
        credential.invitation.judge = admission.judge
        credential.invitation.save(update_fields=["judge"])
    return admission


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

    Every refusal (wrong code, guests not allowed, cap reached, session not open, too many wrong
    attempts from this address) gives the same Refused(GUEST_REFUSAL). Wrong codes are counted per
    client address in the database, which every server process shares; past
    BLINDJUDGE_GUEST_ATTEMPTS in a window even a right code is refused.
    Side effects: counts a wrong attempt (committed even though the call fails); on success
    creates the guest Judge with assignments, commitment and resume token.
    """
    display_name = _clean_display_name(display_name)
    throttle_key = f"guest-code:{client_address}"
    if throttle.exceeded(throttle_key, limit=settings.BLINDJUDGE_GUEST_ATTEMPTS,
                         window_seconds=settings.BLINDJUDGE_GUEST_WINDOW_SECONDS):
        raise Refused(GUEST_REFUSAL)
    credential = (
        Credential.objects.select_related("session")
        .filter(kind=CredentialKind.GUEST, revoked_at__isnull=True,
                token_sha256=token_sha256(canonical_guest_code(code or "")))
        .first()
    )
    if credential is None:
        throttle.hit(throttle_key, window_seconds=settings.BLINDJUDGE_GUEST_WINDOW_SECONDS)
        raise Refused(GUEST_REFUSAL)
    with transaction.atomic():
        session = Session.objects.select_for_update().get(pk=credential.session_id)
        if not session.guests_allowed or session.state != SessionState.OPEN:
            raise Refused(GUEST_REFUSAL)
        if session.url_id in held_sessions:
            raise AlreadyAdmitted(session.url_id)
        if session.guest_cap is not None:
            guests = Judge.objects.filter(session=session, admitted_as=AdmittedAs.GUEST).count()
            if guests >= session.guest_cap:
                raise Refused(GUEST_REFUSAL)
        return _admit(session, admitted_as=AdmittedAs.GUEST, identified_by=IdentifiedBy.TOKEN,
                      display_name=display_name, actor="guest_code")


def host_join(*, session: Session, host: Host) -> Admission:
    """The session's own host joins as a judge; their verdicts are reported as self-blinded.

    Side effects: creates the host's Judge (admitted as host, bound to their account) with
    assignments, commitment and resume token. Refused for another host's session (404) and when
    the host already judges it.
    """
    if session.run.host_id != host.pk:
        raise NotFound(f"no session {session.pk}")
    with transaction.atomic():
        return _admit(session, admitted_as=AdmittedAs.HOST, identified_by=IdentifiedBy.TOKEN,
                      display_name=host.user.get_username(), user=host.user,
                      actor=f"host:{host.user.get_username()}")


# --- Guests ----------------------------------------------------------------------------------

UNSET = object()


@dataclass(frozen=True)
class GuestSettings:
    session: Session
    guest_code: str | None  # set only when a new code was issued by this call


def guests_configure(*, session: Session, actor: str, allow: bool | None = None,
                     cap=UNSET, rotate: bool = False) -> GuestSettings:
    """Allow or deny guests, cap their number, rotate the guest code.

    A code is stored only hashed, so it is shown once, when issued: allowing guests issues one if
    none is active, and rotating replaces it (the old one stops working at once). Denying guests
    revokes the active code. Side effects: updates the session's guest settings, issues or
    revokes guest-code credentials, appends `guests.configured`.
    """
    if cap is not UNSET:
        check_guest_cap(cap)
    with transaction.atomic():
        session = Session.objects.select_for_update().get(pk=session.pk)
        if session.state == SessionState.REVEALED:
            raise Conflict("the session is revealed; guest settings no longer apply")
        fields = []
        if allow is not None:
            session.guests_allowed = allow
            fields.append("guests_allowed")
        if cap is not UNSET:
            session.guest_cap = cap
            fields.append("guest_cap")
        if rotate and not session.guests_allowed:
            raise Conflict("guests are not allowed in this session; allow them first")
        if fields:
            session.save(update_fields=fields)
        active = Credential.objects.filter(session=session, kind=CredentialKind.GUEST,
                                           revoked_at__isnull=True)
        code = None
        now = timezone.now()
        if not session.guests_allowed:
            active.update(revoked_at=now)
        elif rotate or not active.exists():
            active.update(revoked_at=now)
            draws = Draws()  # guest codes are credentials: always from the OS CSPRNG
            code = new_guest_code(draws, "guest")
            _issue(CredentialKind.GUEST, session=session, token=code)
        audit.record("guests.configured", actor=actor, session=session,
                     allowed=session.guests_allowed, cap=session.guest_cap,
                     new_code=code is not None)
    return GuestSettings(session=session, guest_code=code)


# --- Judges ----------------------------------------------------------------------------------

def resume_token_reissue(*, judge: Judge, actor: str) -> str:
    """Revoke a judge's resume links and issue a new one (a lost link is reissued, not lost).

    Side effects: revokes every active resume credential of the judge, issues a new one (stored
    hashed) and returns it; appends `resume.reissued`. Refused for removed judges.
    """
    with transaction.atomic():
        judge = _locked_judge(judge)
        if judge.status != JudgeStatus.ACTIVE:
            raise Conflict(f"judge {judge.pseudonym} was removed")
        _revoke_resume(judge)
        token = secrets.token_urlsafe(32)
        _issue(CredentialKind.RESUME, session=judge.session, judge=judge, token=token)
        audit.record("resume.reissued", actor=actor, session=judge.session,
                     judge=judge.pseudonym)
    return token


def resume_token_revoke(*, judge: Judge, actor: str) -> int:
    """Revoke a judge's resume links; a revoked link answers like an unknown one.

    Side effects: revokes every active resume credential of the judge; appends `resume.revoked`.
    """
    with transaction.atomic():
        count = _revoke_resume(judge)
        audit.record("resume.revoked", actor=actor, session=judge.session,
                     judge=judge.pseudonym, revoked=count)
    return count


def _locked_judge(judge: Judge) -> Judge:
    """Re-read a judge under a row lock (the session is joined in, not locked)."""
    return Judge.objects.select_for_update(of=("self",)).select_related("session").get(pk=judge.pk)


def _revoke_resume(judge: Judge) -> int:
    return Credential.objects.filter(
        judge=judge, kind=CredentialKind.RESUME, revoked_at__isnull=True
    ).update(revoked_at=timezone.now())


def judge_remove(*, judge: Judge, actor: str) -> Judge:
    """Remove a judge from a session: their pages and credentials stop at once.

    Their verdicts stay and are reported apart. Side effects: marks the judge removed with the
    time, revokes all their credentials, appends `judge.removed`; after commit, closes their
    websockets. Refused after the reveal.
    """
    with transaction.atomic():
        judge = _locked_judge(judge)
        if judge.session.state == SessionState.REVEALED:
            raise Conflict("the session is revealed; its judges are final")
        if judge.status == JudgeStatus.REMOVED:
            raise Conflict(f"judge {judge.pseudonym} was already removed")
        judge.status = JudgeStatus.REMOVED
        judge.removed_at = timezone.now()
        judge.save(update_fields=["status", "removed_at"])
        Credential.objects.filter(judge=judge, revoked_at__isnull=True).update(
            revoked_at=judge.removed_at
        )
        audit.record("judge.removed", actor=actor, session=judge.session, judge=judge.pseudonym)
        live.judge_removed(judge)  # after commit: their open sockets are told and closed
    return judge


def judge_erase(*, judge: Judge, actor: str) -> Judge:
    """Erase a judge's personal identity, keeping their pseudonymous verdicts.

    Side effects: clears the display name, GitHub id and login and the account link of the judge
    and the name or login on their invitation; deletes the account GitHub sign-in made for them
    (it holds the GitHub id and login too) when it is not a host's and judges nowhere else; stamps
    the erasure; appends `judge.erased`. The audit log never held the name, so it needs no change.
    """
    with transaction.atomic():
        judge = _locked_judge(judge)
        if judge.erased_at:
            raise Conflict(f"judge {judge.pseudonym} was already erased")
        former_user_id = judge.user_id
        judge.display_name = ""
        judge.github_id = None
        judge.github_login = ""
        judge.user = None
        judge.erased_at = timezone.now()
        judge.save(update_fields=["display_name", "github_id", "github_login", "user",
                                  "erased_at"])
        Invitation.objects.filter(judge=judge).update(name="", github_login="")
        if (former_user_id and not Host.objects.filter(user_id=former_user_id).exists()
                and not Judge.objects.filter(user_id=former_user_id).exists()):
            get_user_model().objects.filter(pk=former_user_id).delete()
        audit.record("judge.erased", actor=actor, session=judge.session, judge=judge.pseudonym)
        live.judge_changed(judge)
    return judge


# --- GitHub ----------------------------------------------------------------------------------

GITHUB_REFUSAL = ("You are not invited to this session with this GitHub account. If you should be, "
                  "ask the host to list your GitHub login.")
HOST_GITHUB_REFUSAL = "This GitHub account is not allowed to host."


def github_judge_join(*, session: Session | None, github_id: int, github_login: str,
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
    if session is None or not github_id or not login:
        raise Refused(GITHUB_REFUSAL)
    with transaction.atomic():
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
                           user=user, github_id=github_id, github_login=login)
        invitation.judge = admission.judge
        invitation.save(update_fields=["judge"])
    return admission


def host_from_github(*, user, github_login: str) -> Host:
    """A person signed in with GitHub is a host when their account already is one (a host who
    linked GitHub from their account page) or when their login is on
    BLINDJUDGE_HOST_GITHUB_ALLOWLIST; anyone else is refused with HOST_GITHUB_REFUSAL.

    Side effects: creates the Host row for an allowlisted account the first time, appending
    `host.created` (without the login).
    """
    existing = Host.objects.filter(user=user).first()
    if existing is not None:
        return existing
    login = (github_login or "").strip().lower()
    if not login or login not in settings.BLINDJUDGE_HOST_GITHUB_ALLOWLIST:
        raise Refused(HOST_GITHUB_REFUSAL)
    with transaction.atomic():
        host, created = Host.objects.get_or_create(user=user)
        if created:
            audit.record("host.created", actor="github", by="github")
    return host


GITHUB_LINKED_ELSEWHERE = "This GitHub account is already linked to another account here."


def host_github_link(*, host: Host, github_id: int, github_login: str) -> SocialAccount:
    """Link a GitHub account (as verified by a GitHub sign-in in the host's browser) to the host's
    own account, so the host can sign in with GitHub whether or not their login is allowlisted.

    Refused when that GitHub account already belongs to another account here (a judge's, or
    another host's) or when the host already has a different GitHub account linked.
    Side effects: creates the SocialAccount (id and login only), appends `host.github_linked`.
    """
    login = (github_login or "").strip()
    if not github_id or not login:
        raise Invalid("GitHub did not identify an account; try again")
    with transaction.atomic():
        holder = SocialAccount.objects.filter(provider="github", uid=str(github_id)).first()
        if holder is not None:
            if holder.user_id != host.user_id:
                raise Conflict(GITHUB_LINKED_ELSEWHERE)
            return holder
        if SocialAccount.objects.filter(provider="github", user=host.user).exists():
            raise Conflict("Your account already has a GitHub account linked; unlink it first.")
        account = SocialAccount.objects.create(
            user=host.user, provider="github", uid=str(github_id),
            extra_data={"id": github_id, "login": login})
        audit.record("host.github_linked", actor=f"host:{host.user.get_username()}")
    return account


def host_github_unlink(*, host: Host) -> int:
    """Unlink the host's GitHub account; they sign in with their password again (or with GitHub
    where their login is allowlisted). Refused when the host has no usable password, which would
    leave them no way in. Side effects: deletes the SocialAccount, appends `host.github_unlinked`.
    """
    with transaction.atomic():
        accounts = SocialAccount.objects.filter(provider="github", user=host.user)
        if not accounts.exists():
            raise Conflict("No GitHub account is linked to your account.")
        if not host.user.has_usable_password():
            raise Conflict("Your account has no password, so without GitHub you could not sign in. "
                           "Set one first: manage.py createhost USERNAME --set-password.")
        count, _ = accounts.delete()
        audit.record("host.github_unlinked", actor=f"host:{host.user.get_username()}")
    return count


LINK_BOTH_HOLD_VERDICTS = ("This GitHub account already judges this session and both have verdicts, "
                           "so they cannot be joined into one. Continue with the one you used; ask "
                           "the host if this is a mistake.")


@dataclass(frozen=True)
class GitHubLinked:
    judge: Judge  # the judge the person continues as
    retired: Judge | None  # the other judge of the same person, retired without verdicts


def _holds_verdicts(judge: Judge) -> bool:
    return Verdict.objects.filter(assignment__judge=judge).exists()


def judge_github_link(*, judge: Judge, github_id: int, github_login: str) -> GitHubLinked:
    """A token judge links their GitHub account (as verified by a GitHub sign-in in their browser):
    from then on they are identified by GitHub and may come back by signing in with it.

    One person is one judge per session. When that GitHub account already judges this session,
    the two become one when at most one of them holds verdicts: the one with verdicts (or else this
    one) continues, bound to GitHub; the other is retired (removed, its credentials revoked, its
    GitHub binding moved). When both hold verdicts, linking is refused (LINK_BOTH_HOLD_VERDICTS).
    Refused for a removed judge, after the reveal, and when the judge is already bound to another
    GitHub account. Linking the account already bound changes nothing.
    Side effects: sets the judge's GitHub id and login and identifies them by GitHub; retires the
    other judge as above; appends `judge.github_linked` (and `judge.removed` for a retired one),
    without the login.
    """
    login = (github_login or "").strip()
    if not github_id or not login:
        raise Invalid("GitHub did not identify an account; try again")
    with transaction.atomic():
        judge = _locked_judge(judge)
        if judge.status != JudgeStatus.ACTIVE:
            raise Conflict(f"judge {judge.pseudonym} was removed")
        if judge.session.state == SessionState.REVEALED:
            raise Conflict("the session is revealed; its judges are final")
        if judge.github_id == github_id:
            return GitHubLinked(judge=judge, retired=None)
        if judge.github_id is not None:
            raise Conflict("You are already linked to another GitHub account in this session.")
        other = (Judge.objects.select_for_update(of=("self",)).select_related("session")
                 .filter(session=judge.session, github_id=github_id).first())
        if other is not None and other.status != JudgeStatus.ACTIVE:
            raise Refused(GITHUB_REFUSAL)  # a removed GitHub judge does not come back by linking
        keep, retire = judge, other
        if other is not None:
            judge_has, other_has = _holds_verdicts(judge), _holds_verdicts(other)
            if judge_has and other_has:
                raise Conflict(LINK_BOTH_HOLD_VERDICTS)
            if other_has:
                keep, retire = other, judge
        now = timezone.now()
        if retire is not None:
            user = retire.user if keep.user_id is None else None
            retire.status = JudgeStatus.REMOVED
            retire.removed_at = now
            retire.github_id = None
            retire.github_login = ""
            if user is not None:
                retire.user = None
            retire.save(update_fields=["status", "removed_at", "github_id", "github_login", "user"])
            Credential.objects.filter(judge=retire, revoked_at__isnull=True).update(revoked_at=now)
            audit.record("judge.removed", actor="github", session=retire.session,
                         judge=retire.pseudonym, reason="same person linked GitHub",
                         continues_as=keep.pseudonym)
            if user is not None:
                keep.user = user
        keep.github_id = github_id
        keep.github_login = login
        keep.identified_by = IdentifiedBy.GITHUB
        keep.save(update_fields=["github_id", "github_login", "identified_by", "user"])
        audit.record("judge.github_linked", actor=f"judge:{judge.pseudonym}", session=keep.session,
                     judge=keep.pseudonym)
    return GitHubLinked(judge=keep, retired=retire)
