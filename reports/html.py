"""The report as one standalone HTML page a person reads first: summary, interval plots, tables.

The page is a single file that renders offline: no script, no external anything, one <style>
block allowed by its hash in the page's own Content-Security-Policy (a <meta> element, so the
policy travels with a saved file; the host's download sends the same policy as a header, plus
frame-ancestors, which a <meta> policy cannot carry). Plots are inline SVG drawn with presentation
attributes only (fill, stroke, x, y), which a style-src policy does not govern.

Every text that came from a bundle, a judge or a host (names, reasons, the task, the
preregistration) goes through Django's autoescaping; the SVG is built from numbers and escaped
labels with format_html.
"""


from django.template.loader import render_to_string
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from content.rendering import style_source_hash

REPORT_STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; color: #1f2328; margin: 0 auto; max-width: 62rem;
       padding: 1rem; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #d0d7de; }
h3 { font-size: 1rem; margin-top: 1.2rem; }
table { border-collapse: collapse; margin: 0.5rem 0; }
th, td { border: 1px solid #d0d7de; padding: 2px 6px; text-align: left; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
code, .hash { font-family: ui-monospace, monospace; font-size: 0.85em; overflow-wrap: anywhere; }
pre { white-space: pre-wrap; background: #f6f8fa; padding: 0.5rem; border: 1px solid #d0d7de; }
.label { font-weight: bold; color: #7a4d00; }
.fired { font-weight: bold; color: #1a7f37; } .not-fired { color: #57606a; }
.missing { color: #cf222e; }
.plot { display: block; max-width: 100%; height: auto; }
.note { color: #57606a; font-size: 0.9em; }
.wide { overflow-x: auto; }
""".strip()

REPORT_STYLE_HASH = style_source_hash(REPORT_STYLE)

# The policy in the page's <meta> element (no frame-ancestors: a <meta> policy may not hold it).
REPORT_META_CSP = (
    f"default-src 'none'; style-src '{REPORT_STYLE_HASH}'; img-src 'none'; base-uri 'none'; "
    "form-action 'none'"
)
# The same policy as the download's header, which also refuses to be framed.
REPORT_CSP = f"{REPORT_META_CSP}; frame-ancestors 'none'"

# Plot geometry: label column, then the scale from PLOT_X0 to PLOT_X0 + PLOT_WIDTH.
PLOT_X0 = 160
PLOT_WIDTH = 400
PLOT_ROW = 22
PLOT_TOP = 24
COLOURS = {"1": "#0969da", "2": "#bc4c00", "value": "#1f2328"}


def x_of(value: float, lo: float = 0.0, hi: float = 1.0) -> float:
    """Horizontal position of a value on a plot's scale, to two decimals."""
    return round(PLOT_X0 + (value - lo) / (hi - lo) * PLOT_WIDTH, 2)


def interval_plot(rows, *, title: str, lo: float = 0.0, hi: float = 1.0):
    """An SVG of dots (estimates) and bars (95% intervals), one row per (label, [series]).

    `rows` is a list of (label, [(series, value, low, high), …]); a series is "1", "2" (phase
    colours) or "value"; a value of None is drawn as "no items". Each dot and bar carries
    data-row/data-series so a reader (or a test) can find it."""
    height = PLOT_TOP + PLOT_ROW * max(len(rows), 1) + 8
    ticks = [lo + (hi - lo) * k / 4 for k in range(5)]
    parts = [format_html(
        '<svg class="plot" role="img" aria-label="{}" width="{}" height="{}" viewBox="0 0 {} {}" '
        'xmlns="http://www.w3.org/2000/svg">', title, PLOT_X0 + PLOT_WIDTH + 20, height,
        PLOT_X0 + PLOT_WIDTH + 20, height)]
    parts.append(format_html("<title>{}</title>", title))
    for tick in ticks:
        x = x_of(tick, lo, hi)
        parts.append(format_html(
            '<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#d0d7de" stroke-width="1"/>'
            '<text x="{}" y="14" font-size="11" text-anchor="middle" fill="#57606a">{}</text>',
            x, PLOT_TOP - 4, x, height - 4, x, f"{tick:g}"))
    for index, (label, series) in enumerate(rows):
        y_row = PLOT_TOP + PLOT_ROW * index
        parts.append(format_html(
            '<text x="{}" y="{}" font-size="12" text-anchor="end" fill="#1f2328">{}</text>',
            PLOT_X0 - 8, y_row + 14, label))
        offsets = {1: [11], 2: [7, 15]}.get(len(series), [11] * len(series))
        for (name, value, low, high), dy in zip(series, offsets, strict=False):
            y = y_row + dy
            colour = COLOURS.get(name, COLOURS["value"])
            if value is None:
                parts.append(format_html(
                    '<text x="{}" y="{}" font-size="11" fill="#57606a" data-row="{}" '
                    'data-series="{}">no items</text>', PLOT_X0 + 4, y + 4, label, name))
                continue
            if low is not None and high is not None:
                parts.append(format_html(
                    '<line class="bar" x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" '
                    'stroke-width="2" data-row="{}" data-series="{}"/>',
                    x_of(low, lo, hi), y, x_of(high, lo, hi), y, colour, label, name))
            parts.append(format_html(
                '<circle class="dot" cx="{}" cy="{}" r="4" fill="{}" data-row="{}" '
                'data-series="{}"/>', x_of(value, lo, hi), y, colour, label, name))
    parts.append(mark_safe("</svg>"))  # noqa: S308 - a literal closing tag
    return mark_safe("".join(parts))  # noqa: S308 - every part above is format_html'd


def _rate_series(phases: dict, key: str, version: str = "current"):
    series = []
    for phase in ("1", "2"):
        rate = phases[phase][version][key]
        series.append((phase, rate["rate"], rate["low"], rate["high"]))
    return series


def _judge_plots(report) -> dict:
    rows = [(s["judge"], s) for s in report["scores"]["judges"]]
    return {
        key: interval_plot([(label, _rate_series(s["phases"], key)) for label, s in rows],
                           title=f"{name} per judge, phase 1 (blue) and phase 2 (orange)")
        for key, name in (("recall", "Recall"), ("tnr", "True-negative rate"))
    }


def _effects_plot(effects: dict, title: str):
    rows = [(name, [("value", e["value"], e["low"], e["high"])]) for name, e in effects.items()
            if name.startswith("delta_") or name.startswith("shift_")]
    return interval_plot(rows, title=title, lo=-1.0, hi=1.0)


def _reviewer_plot(report):
    rows = []
    for entry in report["scores"]["reviewers"]:
        for group, versions in entry["groups"].items():
            score = versions["current"]
            rows.append((f"{entry['reviewer']} {group}", [
                ("1", score["recall"]["rate"], score["recall"]["low"], score["recall"]["high"]),
                ("2", score["tnr"]["rate"], score["tnr"]["low"], score["tnr"]["high"]),
            ]))
    return interval_plot(rows, title="Model reviewers: recall (blue) and true-negative rate "
                                     "(orange), current truth")


def _order_plot(order: dict, title: str):
    rows = []
    for third in ("first", "middle", "last"):
        rows.append((f"{third} third", [
            (phase, order[phase][third]["rate"], order[phase][third]["low"],
             order[phase][third]["high"]) for phase in ("1", "2")]))
    return interval_plot(rows, title=title)


def _builders_compared(report) -> dict:
    """The builders table's columns (the judges' groups and phases present, then each reviewer)
    and rows, and each difference with its source in words."""
    section = report["builders_compared"]
    groups = list(section["builders"][0]["judges"]) if section["builders"] else []
    reviewers = [r["reviewer"] for r in section["builders"][0]["reviewers"]] if section["builders"] else []
    columns = ["Truth pass rate"] + [f"{GROUP_LABELS[g]}, phase {p}" for g in groups for p in ("1", "2")]
    columns += [f"Reviewer {r}" for r in reviewers]
    rows = []
    for entry in section["builders"]:
        cells = [{"rate": entry["truth"]["pass_rate"]}]
        cells += [{"rate": entry["judges"][g][p]} for g in groups for p in ("1", "2")]
        cells += [{"rate": r["pass_rate"], "same_family": r["same_family"]} for r in entry["reviewers"]]
        rows.append({**entry, "cells": cells})

    def label(source, group, reviewer):
        if source == "truth":
            return "truth"
        if source == "reviewer":
            return f"reviewer {reviewer}"
        return f"{GROUP_LABELS.get(group, group)}, phase {source[-1]}"

    primary = section["primary"]
    return {
        "columns": columns, "rows": rows, "abstain_scoring": report["run"]["abstain_scoring"],
        "differences": [{**d, "label": label(d["source"], d["group"], d["reviewer"])}
                        for d in section["differences"]],
        "primary_label": label(primary["source"], primary["group"], primary["reviewer"]),
    }


def reviewer_pairs(report) -> dict:
    """The pairs the page shows (different models under the same condition) and how many others
    the JSON report holds."""
    pairs = report["model_reviewers"]["pairs"]
    shown = [p for p in pairs if p["shown_by_default"]]
    return {"shown": shown, "total": len(pairs), "others": len(pairs) - len(shown)}


UNIT_NAMES = {"task": ("task", "tasks"), "cluster": ("cluster", "clusters")}


def _resampled_text(value) -> str:
    """value [low, high] of a resampled rate; the value alone where its items lie in one unit."""
    if value["value"] is None:
        return "—"
    if value["low"] is None or value["high"] is None:
        return f"{value['value']:.2f} (one unit: no interval)"
    return f"{value['value']:.2f} [{value['low']:.2f}, {value['high']:.2f}]"


def _resampled_row(labels: list, resampled: dict) -> dict:
    singular, plural = UNIT_NAMES[resampled["by"]]
    units = resampled["units"]
    return {"labels": labels, "figures": [f"{units} {singular if units == 1 else plural}",
                                          _resampled_text(resampled["recall"]),
                                          _resampled_text(resampled["tnr"])]}


def resampled_tables(report) -> dict:
    """The judges' and the reviewers' rates resampled by cluster or task (current truth), as two
    tables for the page: judges by phase; reviewers by condition (the default one, then the others
    of other_conditions) and group."""
    scores = report["scores"]
    default = report["run"]["default_condition"]
    judges = [([s["judge"], s["group"], phase], s["phases"][phase]["current"]["resampled"])
              for s in scores["judges"] for phase in ("1", "2")]
    reviewers = [([e["reviewer"], default, group], versions["current"]["resampled"])
                 for e in scores["reviewers"] for group, versions in e["groups"].items()]
    reviewers += [([e["reviewer"], e["condition"], group], versions["current"]["resampled"])
                  for e in report["other_conditions"]["reviewers"]
                  for group, versions in e["groups"].items()]
    by = next((res["by"] for _, res in judges + reviewers if res), None)
    note = scores["definitions"]["resampled"]

    def block(title, columns, rows):
        return {"title": title, "by": by, "note": note, "empty": not (judges or reviewers),
                "columns": [*columns, "Units", "Recall", "TNR"],
                "rows": [_resampled_row(labels, res) for labels, res in rows if res]}

    return {
        "judges": block("Intervals by cluster or task, beside Wilson's", ["Judge", "Group", "Phase"],
                        judges),
        "reviewers": block("Reviewers' intervals by cluster or task, beside Wilson's",
                           ["Reviewer", "Condition", "Group"], reviewers),
    }


IDENTITY_LABELS = {"github": "signed in with GitHub", "token": "by join link, guest code or host account"}
GROUP_LABELS = {"invited": "Invited", "guest": "Guests", "self_blinded_host": "The host (self-blinded)",
                "removed": "Removed"}


def _people_by_group_and_identity(judges) -> list[dict]:
    """Who judged, grouped by admission (removed judges apart) and identity: GitHub judges by
    @login, others by the name on their join link or the name they chose (pseudonyms only in the
    anonymised export)."""
    rows = []
    for group, label in GROUP_LABELS.items():
        for identity, identity_label in IDENTITY_LABELS.items():
            members = [j for j in judges if j["group"] == group and j["identified_by"] == identity]
            if not members:
                continue
            names = []
            for j in members:
                if j["github_login"]:
                    names.append(f"{j['pseudonym']} @{j['github_login']}")
                elif j["name"] and j["name"] != j["pseudonym"]:
                    names.append(f"{j['pseudonym']} {j['name']}")
                else:
                    names.append(j["pseudonym"] + (" (erased)" if j["erased"] else ""))
            rows.append({"group": label, "identity": identity_label, "count": len(members),
                         "names": ", ".join(names)})
    return rows


def seal_context(report: dict) -> dict:
    """The seals-per-builder partial's context: each builder's row with its model, the patterns
    the run applied (none when it was imported before the content check) and how many reviews
    each pattern that fired found a verdict in, in the run's pattern order."""
    models = {b["id"]: b["model"] for b in report["builders"]}
    patterns = report["run"]["verdict_patterns"]
    fired: dict[str, int] = {}
    for review in report["reviews"]:
        if review["content_verdict_pattern"]:
            fired[review["content_verdict_pattern"]] = fired.get(review["content_verdict_pattern"],
                                                                 0) + 1
    return {
        "rows": [{**row, "model": models.get(row["builder"], "")}
                 for row in report["model_reviewers"]["seals_by_builder"]],
        "checked": patterns is not None,
        "patterns": patterns or [],
        "fired": [{"name": p["name"], "origin": p["origin"], "reviews": fired[p["name"]]}
                  for p in patterns or [] if p["name"] in fired],
    }


def to_html(report: dict) -> str:
    pooled = report["phase_shift"]["pooled"]
    plots = {
        "judges": _judge_plots(report),
        "reviewers": _reviewer_plot(report),
        "effects": {
            group: _effects_plot(entry["effects"], f"Pooled effects, {group} judges: estimate "
                                 "and 95% bootstrap interval over judges and items")
            for group, entry in pooled.items() if entry.get("effects")
        },
        "order": {group: _order_plot(entry["order_effects"], f"Accuracy by third of the drawn "
                                     f"order, {group} judges, phase 1 (blue) and 2 (orange)")
                  for group, entry in pooled.items()},
    }
    in_force = next((s for s in report["decision_rules"]["rule_sets"] if s["in_force"]), None)
    commitments = format_html_join(
        "", "<tr><td>{}</td><td class=\"hash\">{}</td><td class=\"hash\">{}</td></tr>",
        ((j["pseudonym"], j["commitment"]["sha256"], j["commitment"]["salt"])
         for j in report["judges"]))
    people = _people_by_group_and_identity(report["judges"])
    return render_to_string("reports/report.html", {
        "people": people, "builders": _builders_compared(report),
        "r": report, "style": mark_safe(REPORT_STYLE),  # noqa: S308 - our own constant
        "meta_csp": REPORT_META_CSP, "plots": plots, "pooled": pooled,
        "rules_in_force": in_force, "commitments": commitments,
        "judges": {j["pseudonym"]: j for j in report["judges"]},
        "seals": seal_context(report),
        "reviewer_pairs": reviewer_pairs(report), "resampled": resampled_tables(report),
    })
