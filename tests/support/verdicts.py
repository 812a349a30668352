"""A verdict saved the way tests write one: judging.services.item_save with a value required.

The product saves through item_save (the item page's autosave and its keys); tests that only need
a verdict in place say so in one call."""

from blindjudge.errors import Invalid
from judging.models import Verdict
from judging.services import item_save, verdict_values


def verdict_record(*, judge, code: str, phase: int, value: str, reason: str = "",
                   seconds_spent: float = 0.0, revision=None, overwrite: bool = False) -> Verdict:
    """item_save for a verdict (an empty value is refused, never a draft); the Verdict row."""
    if not (value or "").strip():
        raise Invalid(f'verdict: choose one of {", ".join(verdict_values(judge.session.kind))}')
    return item_save(judge=judge, code=code, phase=phase, value=value, reason=reason,
                     seconds_spent=seconds_spent, revision=revision, overwrite=overwrite).verdict
