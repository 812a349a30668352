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
           "interval", "missing", "p_text", "percent", "points", "rate_text", "signed_whole"]
