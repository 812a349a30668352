"""Value forms several sections share: timestamps as ISO text, NaN as null, estimates."""

import math


def iso(value) -> str | None:
    return value.isoformat() if value else None


def finite(value) -> float | None:
    """A float for the JSON, or None where it could not be computed (NaN)."""
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def estimate(point, low=None, high=None) -> dict:
    return {"value": finite(point), "low": finite(low), "high": finite(high)}
