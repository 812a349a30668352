"""Judges after joining: resume links reissued or revoked, removal, erasure, linking GitHub."""

import secrets
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from accounts.enums import CredentialKind, IdentifiedBy, JudgeStatus
from accounts.models import Credential, Host, Invitation, Judge
from blindjudge.errors import Conflict, Invalid, Refused
from content.credentials import GITHUB_REFUSAL
from judging import audit, live
from judging.enums import SessionState
from judging.models import Verdict
from judging.services.adjudication import refuse_inside_matrix
from judging.services.admission import issue_credential


def resume_token_reissue(*, judge: Judge, actor: str) -> str:
    """Revoke a judge's resume links and issue a new one (a lost link is reissued, not lost).

    Every browser session opened before, with whichever credential, ends: a leaked link that was
    already used stops judging too, and the judge comes back with the new link (or GitHub, when
    the host listed their login).
    Side effects: revokes every active resume credential of the judge, issues a new one (stored
    hashed) and returns it; bumps the judge's credential generation and drops a GitHub account
    they linked later (`judge.github_unlinked`); appends `resume.reissued`; after commit, closes
    the judge's open sockets. Refused for removed judges.
    """
    with transaction.atomic():
        judge = _locked_judge(judge)
        if judge.status != JudgeStatus.ACTIVE:
            raise Conflict(f"judge {judge.pseudonym} was removed")
        _revoke_resume(judge)
        _end_browser_sessions(judge, actor=actor)
        token = secrets.token_urlsafe(32)
        issue_credential(CredentialKind.RESUME, session=judge.session, judge=judge, token=token)
        audit.record("resume.reissued", actor=actor, session=judge.session,
                     judge=judge.pseudonym)
    return token


def resume_token_revoke(*, judge: Judge, actor: str) -> int:
    """Revoke a judge's resume links; a revoked link answers like an unknown one.

    Every browser session opened before, with whichever credential, ends as at a reissue, and a
    GitHub account the judge linked later is dropped as there.
    Side effects: revokes every active resume credential of the judge; bumps the judge's
    credential generation; drops a later-linked GitHub account (`judge.github_unlinked`); appends
    `resume.revoked`; after commit, closes the judge's open sockets.
    """
    with transaction.atomic():
        judge = _locked_judge(judge)
        count = _revoke_resume(judge)
        _end_browser_sessions(judge, actor=actor)
        audit.record("resume.revoked", actor=actor, session=judge.session,
                     judge=judge.pseudonym, revoked=count)
    return count


def _end_browser_sessions(judge: Judge, *, actor: str):
    """A locked judge's browser sessions stop being admitted (accounts.guards checks the
    generation on every request and socket message); after commit, their sockets close.

    A GitHub account the judge linked later (they were admitted by a link, a guest code or as the
    host) was linked from one of those browser sessions, so the link ends with them: otherwise
    whoever held a leaked resume link could link their own GitHub account and keep judging by
    signing in with it. The judge links GitHub again, if they wish, after opening the new link. A
    judge admitted by their GitHub login (the host listed it) keeps it."""
    judge.credential_generation += 1
    fields = ["credential_generation"]
    if judge.github_id is not None and not (
            Invitation.objects.filter(judge=judge).exclude(github_login="").exists()):
        judge.github_id = None
        judge.github_login = ""
        judge.identified_by = IdentifiedBy.TOKEN
        fields += ["github_id", "github_login", "identified_by"]
        if judge.user_id is not None and not Host.objects.filter(user_id=judge.user_id).exists():
            judge.user = None  # the account GitHub sign-in made for them
            fields.append("user")
        audit.record("judge.github_unlinked", actor=actor, session=judge.session,
                     judge=judge.pseudonym, reason="resume links reissued or revoked")
    judge.save(update_fields=fields)
    live.judge_credentials_ended(judge)
    live.judge_changed(judge)  # the host's row: identified by, GitHub login


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
    and the name, login and note on their invitation; deletes the account GitHub sign-in made for them
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
        Invitation.objects.filter(judge=judge).update(name="", github_login="", note="")
        if (former_user_id and not Host.objects.filter(user_id=former_user_id).exists()
                and not Judge.objects.filter(user_id=former_user_id).exists()):
            get_user_model().objects.filter(pk=former_user_id).delete()
        audit.record("judge.erased", actor=actor, session=judge.session, judge=judge.pseudonym)
        live.judge_changed(judge)
    return judge


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
        # Linking makes who they are checkable: an adjudicator who judges the same items
        # elsewhere on the run (or the reverse, or the host) is refused now, as at joining.
        refuse_inside_matrix(judge.session, github_id=github_id)
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
