"""Reads about judges and credentials."""

from django.db.models import Q
from django.utils import timezone

from accounts.models import Credential, CredentialKind, Judge, JudgeStatus
from blindjudge.errors import Refused
from judging.services import RESUME_REFUSAL, token_sha256


def judge_by_resume_token(token: str) -> Judge:
    """The active judge a resume token belongs to. Unknown, revoked, expired and removed all give
    the same Refused, so a revoked link looks exactly like one that never existed."""
    credential = (
        Credential.objects.select_related("judge__session")
        .filter(kind=CredentialKind.RESUME, token_sha256=token_sha256(token or ""),
                revoked_at__isnull=True)
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()))
        .first()
    )
    if credential is None or credential.judge.status != JudgeStatus.ACTIVE:
        raise Refused(RESUME_REFUSAL)
    return credential.judge
