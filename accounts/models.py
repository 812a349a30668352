"""Hosts, judges and their credentials.

Credentials (join tokens, resume tokens, guest codes) are stored only as SHA-256 hashes: every one
carries at least 64 bits from the OS CSPRNG, so a plain hash is enough and a database leak hands
out nothing usable.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q

from accounts.enums import (
    AdmittedAs,
    CredentialKind,
    IdentifiedBy,
    JudgeStatus,
)


class Host(models.Model):
    """A person who owns runs and sessions. Nobody becomes one merely by signing in."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="host"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return self.user.get_username()


class Invitation(models.Model):
    """One named invitee of a session; its join token is a Credential of kind JOIN."""

    session = models.ForeignKey(
        "judging.Session", on_delete=models.CASCADE, related_name="invitations"
    )
    name = models.CharField(max_length=200, blank=True, help_text="Name on the join link.")
    github_login = models.CharField(max_length=100, blank=True)
    note = models.CharField(
        max_length=200, blank=True,
        help_text="The host's own note on the invitee (a team, a role); never shown to judges.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    judge = models.OneToOneField(
        "Judge", null=True, blank=True, on_delete=models.SET_NULL, related_name="invitation",
        help_text="The judge this invitation admitted, once used.",
    )


class Judge(models.Model):
    session = models.ForeignKey("judging.Session", on_delete=models.PROTECT, related_name="judges")
    number = models.PositiveIntegerField(help_text="Order of admission in the session, from 1.")
    pseudonym = models.CharField(max_length=20, help_text="J01, J02, … by order of admission.")
    admitted_as = models.CharField(max_length=10, choices=AdmittedAs.choices)
    identified_by = models.CharField(max_length=10, choices=IdentifiedBy.choices)
    display_name = models.CharField(
        max_length=200, blank=True,
        help_text="Name on the join link, or the name a guest chose; erased on request.",
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="judgings", help_text="The signed-in account (host or GitHub), if any.",
    )
    github_id = models.BigIntegerField(
        null=True, blank=True, help_text="GitHub's numeric account id, bound at first sign-in."
    )
    github_login = models.CharField(max_length=100, blank=True)
    status = models.CharField(
        max_length=10, choices=JudgeStatus.choices, default=JudgeStatus.ACTIVE
    )
    joined_at = models.DateTimeField(auto_now_add=True)
    removed_at = models.DateTimeField(null=True, blank=True)
    erased_at = models.DateTimeField(null=True, blank=True)
    order_seed = models.CharField(max_length=64, help_text="Seed of this judge's order (hex).")
    commitment_salt = models.CharField(max_length=64, help_text="Published at the reveal.")
    commitment_sha256 = models.CharField(
        max_length=64, help_text="SHA-256 of the salted canonical mapping; shown at joining."
    )
    # Bound into every browser session admitted as this judge (accounts.guards.remember_judge)
    # and checked by the guard on every request and socket: reissuing or revoking the judge's
    # resume links bumps it, so every browser session opened before then stops being admitted.
    credential_generation = models.PositiveIntegerField(
        default=0, help_text="Bumped when the resume links are reissued or revoked: browser "
                             "sessions opened before then are no longer admitted.",
    )
    phase1_locked_at = models.DateTimeField(null=True, blank=True)
    phase2_locked_at = models.DateTimeField(null=True, blank=True)
    # Kept by item_save in the transaction that adds the verdict, under the judge's row
    # lock, so the host's progress page reads counts without counting verdicts (its cost then
    # stays flat as verdicts accumulate).
    phase1_answered = models.PositiveIntegerField(
        default=0, help_text="Items with a phase-1 verdict (a count, never a value)."
    )
    phase2_answered = models.PositiveIntegerField(
        default=0, help_text="Items with a phase-2 verdict (a count, never a value)."
    )
    # Kept by the services where a judge acts (judging.services.activity: a verdict or a reason
    # saved, a page opened) so the host's pages read a judge's last activity from this row,
    # not from their verdicts, drafts and sockets (issue 32 item 2: the progress page's cost
    # then stays flat as verdicts accumulate). Joining and the locks are on the row already.
    last_acted_at = models.DateTimeField(
        null=True, blank=True,
        help_text="The judge's latest save that changed a verdict or a reason, or page opened "
                  "(a socket opened); null before any. Pings of an open tab are not acts.",
    )

    class Meta:
        ordering = ["session", "number"]
        constraints = [
            models.UniqueConstraint(fields=["session", "number"], name="judge_unique_number"),
            models.UniqueConstraint(
                fields=["session", "user"], condition=Q(user__isnull=False),
                name="judge_one_per_user",
            ),
            models.UniqueConstraint(
                fields=["session", "github_id"], condition=Q(github_id__isnull=False),
                name="judge_one_per_github_id",
            ),
        ]

    def __str__(self):
        return f"{self.pseudonym} in session {self.session_id}"

    @property
    def is_active(self):
        return self.status == JudgeStatus.ACTIVE

    @staticmethod
    def answered_field(phase: int) -> str:
        return f"phase{phase}_answered"

    def answered(self, phase: int) -> int:
        """How many of the judge's items have a verdict of the phase: the one count of them,
        read by the host's dashboard, the judge's pages and socket, and the lock."""
        return getattr(self, self.answered_field(phase))


class Credential(models.Model):
    kind = models.CharField(max_length=10, choices=CredentialKind.choices)
    token_sha256 = models.CharField(max_length=64, unique=True)
    session = models.ForeignKey(
        "judging.Session", on_delete=models.CASCADE, related_name="credentials"
    )
    invitation = models.ForeignKey(
        Invitation, null=True, blank=True, on_delete=models.CASCADE, related_name="credentials"
    )
    judge = models.ForeignKey(
        Judge, null=True, blank=True, on_delete=models.CASCADE, related_name="credentials"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    used_at = models.DateTimeField(null=True, blank=True, help_text="Join tokens: when exchanged.")
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["session", "kind"], name="credential_session_kind")]


class Throttle(models.Model):
    """A fixed-window attempt counter in the database, so every server process shares it."""

    key = models.CharField(max_length=200, unique=True)
    window_start = models.DateTimeField()
    count = models.PositiveIntegerField(default=0)
