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
           "conditional_on_judges", "pooled_interval_text"]


def conditional_on_judges(judges: int) -> str:
    """The label of an interval that holds its (fewer than ten) judges fixed (issue 28 item 3)."""
    return "conditional on this judge" if judges == 1 else f"conditional on these {judges} judges"


def pooled_interval_text(resampling: dict) -> str:
    """What the pooled effects' intervals are, as a phrase: "intervals: two-way bootstrap over
    12 judges and 24 tasks", "intervals: bootstrap over 24 tasks, conditional on these 3 judges",
    or "no interval: " and why."""
    if resampling["no_interval"]:
        return f"no interval: {resampling['no_interval']}"
    unit = {"cluster": "clusters", "task": "tasks"}.get(resampling["by"], "units")
    if resampling["method"] == "two-way bootstrap":
        return (f"intervals: two-way bootstrap over {resampling['judges']} judges and "
                f"{resampling['units']} {unit}")
    return (f"intervals: bootstrap over {resampling['units']} {unit}, "
            f"{conditional_on_judges(resampling['judges'])}")
