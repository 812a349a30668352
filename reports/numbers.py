"""The report's number formatting: content/numbers.py, shared with the judge's scorecard (which may
not import reports/), named here for the report's modules (`from reports import numbers`)."""

from content.numbers import (
    MINUS,
    MISSING,
    SUPERSCRIPT,
    decimal,
    difference_text,
    estimate_text,
    interval,
    missing,
    p_text,
    percent,
    points,
    rate_text,
    signed_whole,
)

__all__ = ["MINUS", "MISSING", "SUPERSCRIPT", "decimal", "difference_text", "estimate_text",
           "interval", "missing", "p_text", "percent", "points", "rate_text", "signed_whole",
           "conditional_on_judges"]


def conditional_on_judges(judges: int) -> str:
    """The label of an interval that holds its (fewer than ten) judges fixed (issue 28 item 3)."""
    return "conditional on this judge" if judges == 1 else f"conditional on these {judges} judges"
