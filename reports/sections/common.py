"""Value forms several sections share: timestamps as ISO text, NaN as null, estimates."""

import math

from content.rules import DEFAULT_ALPHA


def judges_by_task(data) -> dict:
    """task pk -> the pks of the judges who saw the task (had an item of it), for tasks seen."""
    task_of_item = {item.pk: item.task_id for item in data.items.rows}
    seen: dict = {}
    for _pk, judge_pk, item_pk, *_rest in data.assignments.rows:
        seen.setdefault(task_of_item[item_pk], set()).add(judge_pk)
    return seen


def iso(value) -> str | None:
    return value.isoformat() if value else None


def finite(value) -> float | None:
    """A float for the JSON, or None where it could not be computed (NaN)."""
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def alpha_of(session) -> tuple[float, str]:
    """The significance level the report reads its tests at, and who named it: the
    preregistration's (frozen with the protocol, content.rules), else the default, 0.05."""
    named = (session.protocol or {}).get("alpha")
    return (float(named), "preregistration") if named is not None else (DEFAULT_ALPHA, "default")


def estimate(point, low=None, high=None) -> dict:
    return {"value": finite(point), "low": finite(low), "high": finite(high)}
