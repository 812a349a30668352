"""A judge's latest act, kept on their row (accounts.models.Judge.last_acted_at) where the act is
recorded, so the host's progress page and live dashboard read it without scanning verdicts,
drafts or sockets (judging.selectors.live.last_activity)."""

from django.db.models import DateTimeField, F, Value
from django.db.models.functions import Coalesce, Greatest

from accounts.models import Judge


def judge_acted(judge_pk: int, at, *, answered_field: str | None = None) -> None:
    """The judge acted at `at`: their stamp becomes `at` unless it is later already (an act
    recorded outside the judge's row lock, a socket's, may commit after a newer one). With
    `answered_field`, the same UPDATE adds one to that answered count (a new verdict), so a save
    writes the judge's row once."""
    moment = Value(at, output_field=DateTimeField())
    changes = {"last_acted_at": Greatest(Coalesce(F("last_acted_at"), moment), moment)}
    if answered_field:
        changes[answered_field] = F(answered_field) + 1
    Judge.objects.filter(pk=judge_pk).update(**changes)
