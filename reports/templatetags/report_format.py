"""Number formats for the HTML report: a missing value reads "—", never "None" or "nan"."""

import math
from datetime import UTC, datetime

from django import template

from reports import numbers

register = template.Library()

MISSING = "—"


@register.filter
def num(value, decimals=3):
    """A number to fixed decimals (signed where it is a change)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    return f"{round(value, int(decimals)) + 0.0:.{int(decimals)}f}"  # + 0.0: no "-0.000"


@register.filter
def signed(value, decimals=3):
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    return f"{round(value, int(decimals)) + 0.0:+.{int(decimals)}f}"


@register.filter
def pvalue(value):
    """A p-value by the report's one rule (content.numbers.p_text)."""
    return numbers.p_text(value)


@register.filter
def rate(value):
    """k/n (rate) [low, high] for one of the report's rate objects."""
    if not value or not value.get("n"):
        return f"0/0 {MISSING}"
    return (f"{value['k']}/{value['n']} ({value['rate']:.2f}) "
            f"[{value['low']:.2f}, {value['high']:.2f}]")


@register.filter
def estimate(value):
    """value [low, high] for one of the report's pooled estimates."""
    if not value or value.get("value") is None:
        return MISSING
    low, high = value.get("low"), value.get("high")
    interval = f" [{low:+.3f}, {high:+.3f}]" if low is not None and high is not None else ""
    return f"{value['value']:+.3f}{interval}"


@register.filter
def get(mapping, key):
    """mapping[key], for keys a template cannot spell (e.g. "imported")."""
    return (mapping or {}).get(key)


@register.filter
def selectors(value):
    """A rule condition's selectors as text: "reviewer r1, condition told_pass", "builders b1 − b2"
    (the difference's order)."""
    return ", ".join(f"builders {v[0]} − {v[1]}" if key == "builders" else f"{key} {v}"
                     for key, v in (value or {}).items())


@register.filter
def when(value):
    """An ISO 8601 time as people read it, in UTC to the minute: "2026-12-02 05:07 UTC"."""
    if not value:
        return MISSING
    try:
        moment = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        return value
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M UTC")


@register.filter
def percent(value):
    return numbers.percent(value)


@register.filter
def rate_text(value):
    return numbers.rate_text(value)
