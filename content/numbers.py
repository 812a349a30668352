"""How the HTML report and the judge's scorecard write their numbers, for people: proportions as
percentages, differences between proportions as percentage points, p-values by one rule (three
decimals from 0.001 up, below that two significant figures in powers of ten); a missing value
reads "—", never "None" or "nan".

    percent(0.5111)                          -> "51%"
    rate_text({"k": 46, "n": 90, ...})       -> "51% (46/90) [41–61%]"
    estimate_text({"value": .74, ...})       -> "74% [54–92%]"
    points(0.16)                             -> "+16 pp"
    difference_text({"value": .16, ...})     -> "+16 pp [−40 to +64 pp]"
    p_text(0.14599) -> "0.146"    p_text(2.98e-6) -> "3.0 × 10⁻⁶"    p_text(1.0) -> "1.000"

Percentages are rounded to whole numbers, halves away from zero, except that a value strictly
between 0 and 1% reads "<1%" and one strictly between 99% and 100% reads ">99%" (a rate is never
shown as 0% or 100% when it is not). Negative numbers carry a true minus sign (U+2212). Pure: no
Django, no numpy. Here in content/ so that the judge's scorecard (judging.selectors.scorecard, which
may not import reports/) writes a judge's rates exactly as the report writes the same rates;
reports/numbers.py names this module for the report's own modules.
"""

import math

MISSING = "—"
MINUS = "\u2212"


def missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _whole(value: float) -> int:
    """value × 100 rounded half away from zero (12.5 -> 13, as people round; Python's round()
    would give 12)."""
    scaled = abs(value) * 100
    whole = int(math.floor(scaled + 0.5 + 1e-9))
    return whole if value >= 0 else -whole


def percent(value) -> str:
    """A proportion in [0, 1] as a whole percentage ("51%"), "<1%" / ">99%" near the ends."""
    if missing(value):
        return MISSING
    whole = _whole(value)
    if whole == 0 and value > 0:
        return "<1%"
    if whole == 100 and value < 1:
        return ">99%"
    return f"{whole}%"


def interval(low, high) -> str:
    """A 95% interval of a proportion: "[41–61%]"; "" where it has no bounds."""
    if missing(low) or missing(high):
        return ""
    return f"[{_whole(low)}–{_whole(high)}%]"


def rate_text(value) -> str:
    """One of the report's rate objects ({k, n, rate, low, high}): "51% (46/90) [41–61%]". A
    model reviewer's rate that holds replies with no verdict (scored as not flagged, the run's
    rule) says how many: "99% (89/90; 46 no verdict, scored as not flagged) [94–100%]"."""
    if not value or not value.get("n"):
        return f"{MISSING} (0/0)"
    bounds = interval(value.get("low"), value.get("high"))
    held = value.get("no_verdict")
    counts = f"{value['k']}/{value['n']}" + (
        f"; {held} no verdict, scored as not flagged" if held else "")
    return f"{percent(value['rate'])} ({counts})" + (f" {bounds}" if bounds else "")


def estimate_text(value) -> str:
    """A pooled or resampled proportion ({value, low, high}): "74% [54–92%]"."""
    if not value or missing(value.get("value")):
        return MISSING
    bounds = interval(value.get("low"), value.get("high"))
    return percent(value["value"]) + (f" {bounds}" if bounds else "")


def signed_whole(value: float) -> str:
    whole = _whole(value)
    if whole > 0:
        return f"+{whole}"
    if whole < 0:
        return f"{MINUS}{-whole}"
    return "0"


def points(value) -> str:
    """A difference of two proportions in percentage points: "+16 pp", "−4 pp", "0 pp"."""
    if missing(value):
        return MISSING
    return f"{signed_whole(value)} pp"


def difference_text(value) -> str:
    """A difference with its interval ({value, low, high}): "+16 pp [−40 to +64 pp]"."""
    if not value or missing(value.get("value")):
        return MISSING
    low, high = value.get("low"), value.get("high")
    if missing(low) or missing(high):
        return points(value["value"])
    return f"{points(value['value'])} [{signed_whole(low)} to {signed_whole(high)} pp]"


SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def p_text(value) -> str:
    """A p-value by the report's one rule, wherever it is printed: from 0.001 up to three
    decimals ("0.146", "0.125", "0.020", "1.000"); below 0.001 to two significant figures in
    powers of ten ("3.0 × 10⁻⁶", "1.5 × 10⁻¹⁰"). Two significant figures throughout would read
    0.146 as 0.15 and 0.125 as 0.12; three decimals alone would read every small p as 0.000.
    The JSON keeps the exact value."""
    if missing(value):
        return MISSING
    if value >= 0.001:
        return f"{value:.3f}"
    if value <= 0:
        return "0"
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(SUPERSCRIPT)}"


def decimal(value, places: int = 2) -> str:
    """A statistic that is not a proportion (kappa, alpha, a rule's value) to fixed places, with
    a true minus sign."""
    if missing(value):
        return MISSING
    text = f"{round(value, places) + 0.0:.{places}f}"
    return text.replace("-", MINUS)
