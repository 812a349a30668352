"""Adjudication (issue 29 item 1): truth the tests cannot settle, decided once, blind, by one person
outside the matrix, and kept beside the imported truth, never over it.

An adjudication is a session of its own kind: its items are the run's findings of unknown truth
(and, when the host asks, its copies of unknown truth, and any finding or copy the host picks, such
as one whose truth was corrected), so it gets what every session has (redactions, the blinding
check, renders made at opening, a frozen protocol, a commitment, the immutability of locked
verdicts). One adjudicator answers every item in one phase: real / false alarm (a finding) or
pass / fail (a copy), or cannot tell, each with a reason.

"Outside the matrix" means: not a judge of any session on the run that holds those items (shares a
copy with the adjudication: a findings session shows a finding's copy too), and not the host. Only
an identity that persists across sessions can be checked, GitHub's numeric account id: it is
checked both ways (an adjudicator cannot then judge such a session, nor a judge of one
adjudicate), and the host is refused through the GitHub account linked to them. A person who
joins by link alone is outside the matrix as declared, not as checked, and the report says so
(its adjudicated section: `outside_the_matrix.status`).
"""

from allauth.socialaccount.models import SocialAccount
from django.db.models import Q

from accounts.enums import JudgeStatus
from accounts.models import Judge
from blindjudge.errors import Conflict, Invalid, Refused
from judging.enums import CopyTruth, FindingTruth, SessionKind, SessionState
from judging.models import Item, Run, Session


class InsideMatrix(Refused):
    """The person would judge both sides of the matrix. Unlike the other refusals, it says why:
    it tells the person only what they know already (that they judge, or adjudicate, on this
    run), and without it they could not tell the host what went wrong."""

    code = "inside_matrix"


ADJUDICATOR_JUDGES = ("You judge {kind} session {session} on this run, which holds items of this "
                      "adjudication: an adjudicator must be outside the matrix, so you cannot "
                      "adjudicate it. Nothing was recorded.")
JUDGE_ADJUDICATES = ("You adjudicate items of this run (adjudication session {session}): a judge "
                     "of the same items would be inside the matrix, so you cannot judge this "
                     "session. Nothing was recorded.")
AUDITOR_JUDGES = ("You judge {kind} session {session} on this run, which is not revealed yet: an "
                  "audit of reasons shows model verdicts and truth, so you cannot audit this "
                  "run's reasons until it is. Nothing was recorded.")
JUDGE_AUDITS = ("You audit this run's model reasons (reasons session {session}), which showed you "
                "model verdicts and truth: you cannot judge this session blind. Nothing was "
                "recorded.")
HOST_ADJUDICATES = ("The host of the run cannot adjudicate it: an adjudicator must be outside the "
                    "matrix, and the host is not blind. Invite someone else. Nothing was recorded.")
HOST_AUDITS = ("The host of the run cannot audit its reasons: the host knows the copies' truth, "
               "and phase 1 of an audit is given without it. Invite someone else. Nothing was "
               "recorded.")
HOST_REFUSALS = {SessionKind.ADJUDICATION: HOST_ADJUDICATES, SessionKind.REASONS: HOST_AUDITS}
ONE_ADJUDICATOR = ("This adjudication already has its adjudicator ({pseudonym}): truth is decided "
                   "once, by one person. Nothing was recorded.")
NO_GUESTS = ("an adjudication has no guests: its adjudicator is invited, so that who they are can "
             "be checked against the run's judges")

# How each kind of item of an adjudication is keyed: a finding and a copy may share a bundle id.
FINDING_KEY, COPY_KEY = "finding:", "copy:"


def item_key(*, finding=None, copy=None) -> str:
    return FINDING_KEY + finding.bundle_id if finding is not None else COPY_KEY + copy.bundle_id


def adjudication_sources(run: Run, *, unknown_copies: bool = False, findings=(), copies=()):
    """(copy, finding or None, key) of every item of a new adjudication on `run`: its findings of
    unknown truth, its copies of unknown truth when `unknown_copies`, and the findings and copies
    the host names by bundle id (`findings`, `copies`), each once, findings first, in import
    order. Invalid for a bundle id the run lacks, and when there is nothing to adjudicate."""
    wanted_findings, wanted_copies = set(findings), set(copies)
    run_findings = list(run.findings.select_related("copy").defer("copy__content"))
    run_copies = list(run.copies.defer("content"))
    missing = sorted(wanted_findings - {f.bundle_id for f in run_findings}) + sorted(
        wanted_copies - {c.bundle_id for c in run_copies})
    if missing:
        raise Invalid(f"run {run.pk} has no finding or copy {', '.join(missing)} (named to "
                      "adjudicate)")
    sources = [(f.copy, f, item_key(finding=f)) for f in run_findings
               if f.truth == FindingTruth.UNKNOWN or f.bundle_id in wanted_findings]
    sources += [(c, None, item_key(copy=c)) for c in run_copies
                if (unknown_copies and c.truth == CopyTruth.UNKNOWN) or c.bundle_id in wanted_copies]
    if not sources:
        raise Invalid(f"run {run.pk} has nothing to adjudicate: no finding of unknown truth"
                      + ("" if unknown_copies else " (add its copies of unknown truth with "
                         "--unknown-copies)")
                      + " and none named")
    return sources


def refuse_adjudicated_elsewhere(session: Session) -> None:
    """Conflict when an item of the adjudication `session` is an item of another adjudication on
    the run that is not a draft: truth is adjudicated once."""
    mine = Item.objects.filter(session=session)
    other = (Item.objects.filter(session__run_id=session.run_id,
                                 session__kind=SessionKind.ADJUDICATION)
             .exclude(session=session).exclude(session__state=SessionState.DRAFT)
             .filter(Q(finding_id__in=mine.filter(finding__isnull=False).values("finding_id"))
                     | Q(finding__isnull=True,
                         copy_id__in=mine.filter(finding__isnull=True).values("copy_id")))
             .select_related("session").order_by("session_id", "key").first())
    if other is not None:
        raise Conflict(f"{other.key} is adjudicated already, in session {other.session_id}: "
                       "truth is adjudicated once. Leave it out of this adjudication.")


JUDGED = (SessionKind.COPIES, SessionKind.FINDINGS, SessionKind.PAIRS)


def matrix_sessions(session: Session):
    """The sessions on the other side of the matrix from `session`, whose judges may not judge it:
    - an adjudication: the copies, findings and reasons sessions on its run sharing a copy with
      it (their judges saw those copies, and a reasons judge their reviews and truth);
    - a reasons session (issue 30 item 2: its phase 1 shows model verdicts, its phase 2 truth):
      every session on its run not yet revealed, whose judges are still to judge blind;
    - a copies, findings or pairs session: the adjudications sharing a copy with it, and every
      reasons session on its run (a pair's two copies both count as its copies).
    A session of the same kind is never on the other side."""
    others = Session.objects.filter(run_id=session.run_id).exclude(pk=session.pk)
    if session.kind == SessionKind.REASONS:
        return others.exclude(kind=SessionKind.REASONS).exclude(state=SessionState.REVEALED)
    mine = Item.objects.filter(session_id=session.pk)
    sharing = Q()
    for theirs in ("items__copy_id__in", "items__pair_copy_id__in"):
        for ours in ("copy_id", "pair_copy_id"):
            sharing |= Q(**{theirs: mine.exclude(**{f"{ours}__isnull": True}).values(ours)})
    if session.kind == SessionKind.ADJUDICATION:
        inside = Q(kind__in=(*JUDGED, SessionKind.REASONS)) & sharing
    else:
        inside = (Q(kind=SessionKind.ADJUDICATION) & sharing) | Q(kind=SessionKind.REASONS)
    return others.filter(pk__in=others.filter(inside).values("pk"))


def refuse_inside_matrix(session: Session, *, github_id: int | None, user=None,
                         host_admission: bool = False) -> None:
    """InsideMatrix when the person would judge both sides of the matrix on the run (see the
    module docstring). `github_id`: their GitHub account's id when they are identified by it
    (None: joined by link, nothing to check); `user`: their signed-in account, if any."""
    if session.kind in HOST_REFUSALS:
        host_user_id = Run.objects.filter(pk=session.run_id).values_list("host__user_id",
                                                                         flat=True)[0]
        if host_admission or (user is not None and user.pk == host_user_id) or (
                github_id and SocialAccount.objects.filter(
                    provider="github", uid=str(github_id), user_id=host_user_id).exists()):
            raise InsideMatrix(HOST_REFUSALS[session.kind])
    if not github_id:
        return
    other = (Judge.objects.filter(github_id=github_id, session__in=matrix_sessions(session))
             .select_related("session").order_by("session_id").first())
    if other is not None:
        raise InsideMatrix(_inside(session, other.session))


def _inside(session: Session, other: Session) -> str:
    """Why a judge of `other` cannot judge `session`, as the person reads it."""
    if session.kind == SessionKind.ADJUDICATION and other.kind != SessionKind.REASONS:
        return ADJUDICATOR_JUDGES.format(kind=other.kind, session=other.pk)
    if other.kind == SessionKind.ADJUDICATION:
        return JUDGE_ADJUDICATES.format(session=other.pk)
    if other.kind == SessionKind.REASONS:
        return JUDGE_AUDITS.format(session=other.pk)
    return AUDITOR_JUDGES.format(kind=other.kind, session=other.pk)


def refuse_second_adjudicator(session: Session) -> None:
    """Conflict when the adjudication has an adjudicator already (one who was removed does not
    count: the host may invite another in their place)."""
    holder = (Judge.objects.filter(session_id=session.pk, status=JudgeStatus.ACTIVE)
              .values_list("pseudonym", flat=True).first())
    if holder is not None:
        raise Conflict(ONE_ADJUDICATOR.format(pseudonym=holder))


def invited_login_refusal(session: Session, login: str) -> str | None:
    """Why a GitHub login cannot be invited to `session` (the matrix, by login: logins can change
    hands, so joining checks again by id), or None."""
    login = login.strip()
    if session.kind in HOST_REFUSALS:
        host_user_id = Run.objects.filter(pk=session.run_id).values_list("host__user_id",
                                                                         flat=True)[0]
        for account in SocialAccount.objects.filter(provider="github", user_id=host_user_id):
            if str((account.extra_data or {}).get("login", "")).lower() == login.lower():
                return HOST_REFUSALS[session.kind]
    other = (Judge.objects.filter(github_login__iexact=login,
                                  session__in=matrix_sessions(session))
             .select_related("session").order_by("session_id").first())
    if other is None:
        return None
    if session.kind == SessionKind.ADJUDICATION and other.session.kind != SessionKind.REASONS:
        return (f'GitHub login "{login}" judges {other.session.kind} session {other.session_id} '
                "on this run, which holds items of this adjudication: an adjudicator must be "
                "outside the matrix")
    if other.session.kind == SessionKind.ADJUDICATION:
        return (f'GitHub login "{login}" adjudicates items of this run (session '
                f"{other.session_id}): a judge of the same items would be inside the matrix")
    if other.session.kind == SessionKind.REASONS:
        return (f'GitHub login "{login}" audits this run\'s model reasons (session '
                f"{other.session_id}), which showed them model verdicts and truth")
    return (f'GitHub login "{login}" judges {other.session.kind} session {other.session_id} on '
            "this run, not revealed yet: they cannot audit its model reasons until it is")
