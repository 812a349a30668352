"""The report as one standalone HTML page a person reads first: what was found, in plain sentences
generated from the figures; a table of contents; the sections, each with its plots and tables;
then, in appendices, the preregistration and frozen protocol, and the hashes, salts and
commitments that let anyone check them.

The page is a single file that renders offline: no script, no external anything, one <style>
block allowed by its hash in the page's own Content-Security-Policy (a <meta> element, so the
policy travels with a saved file; the host's download sends the same policy as a header, plus
frame-ancestors, which a <meta> policy cannot carry). It follows the reader's colour scheme: the
style block sets its colours as variables, again for prefers-color-scheme: dark. Plots
(reports/plots.py) are inline SVG drawn with presentation attributes only (fill, stroke, x, y),
which a style-src policy does not govern, in their light-scheme colours; the style block's dark
part recolours them by name. The only links are to the page's own sections.

Builders and reviewers are named by model (and family) after the reveal, their bundle ids beside;
proportions read as percentages and differences between them as percentage points
(content/numbers.py). Every text that came from a bundle, a judge or a host (names, reasons, the
task, the preregistration) goes through Django's autoescaping or format_html.
"""

import json

from django.template.loader import render_to_string
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from content.rendering import style_source_hash
from reports import numbers
from reports.headline import (
    builder_names,
    headline,
    listed,
    oriented,
    plural,
    primary_words,
    reviewer_names,
)
from reports.plots import (
    PHASE1,
    PHASE2,
    RECALL,
    TNR,
    TRUTH,
    VALUE,
    Row,
    Series,
    dark_style,
    dot_plot,
    points_scale,
)

# The page's colours are variables, set for the light scheme and again for the dark one (the
# reader's own choice, prefers-color-scheme): the report is one standalone file, so its one hashed
# style block holds both; the plots' SVG colours are recoloured by name (reports.plots.dark_style).
REPORT_STYLE = """
:root { color-scheme: light dark;
        --ink: #1f2328; --paper: #ffffff; --muted: #57606a; --line: #d0d7de; --rule: #eaeef2;
        --tint: #f6f8fa; --link: #0550ae; --accent: #0969da; --label: #7a4d00; --good: #1a7f37;
        --bad: #cf222e; }
body { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink);
       background: var(--paper); margin: 0 auto; max-width: 62rem; padding: 0.5rem 1rem 3rem; }
h1 { font-size: 1.6rem; line-height: 1.25; margin: 1rem 0 0.25rem; }
h2 { font-size: 1.3rem; margin: 2.5rem 0 0.5rem; padding-bottom: 0.2rem;
     border-bottom: 1px solid var(--line); }
h3 { font-size: 1.05rem; margin: 1.5rem 0 0.4rem; }
p, li, figcaption { max-width: 50rem; }
a { color: var(--link); }
table { border-collapse: collapse; margin: 0.4rem 0 0.8rem; font-size: 0.9rem; }
th, td { border: 1px solid var(--line); padding: 3px 7px; text-align: left; vertical-align: top; }
thead th, tr.head th { background: var(--tint); }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
code, .hash { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 0.85em;
              overflow-wrap: anywhere; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--tint); padding: 0.5rem;
      border: 1px solid var(--line); font-size: 0.85rem; }
.meta { color: var(--muted); margin: 0 0 1rem; }
.findings { background: var(--tint); border: 1px solid var(--line); border-left: 4px solid var(--accent);
            padding: 0.25rem 1.25rem 0.75rem; margin: 1rem 0; }
.findings h2 { border: 0; margin-top: 0.75rem; }
.findings h3 { margin: 0.9rem 0 0.2rem; }
.findings p { margin: 0.2rem 0; }
.findings ul { margin: 0.2rem 0; padding-left: 1.2rem; }
.findings li { margin: 0.15rem 0; }
.src { color: var(--muted); font-size: 0.85rem; }
nav.toc ol { columns: 2 16rem; padding-left: 1.5rem; margin: 0.3rem 0; }
.label { font-weight: bold; color: var(--label); }
.fired { font-weight: bold; color: var(--good); } .not-fired { color: var(--muted); }
.missing { color: var(--bad); }
.note { color: var(--muted); font-size: 0.9rem; }
.id { color: var(--muted); font-size: 0.85em; }
.wide { overflow-x: auto; max-width: 100%; }
.wide:focus { outline: 2px solid var(--accent); }
figure.plot { margin: 0.75rem 0 1.25rem; }
figure.plot figcaption { font-size: 0.9rem; margin-bottom: 0.25rem; }
figcaption .keys { display: block; color: var(--muted); }
figcaption .key { white-space: nowrap; }
table.plot { width: 100%; margin: 0; }
table.plot th, table.plot td { border: 0; border-bottom: 1px solid var(--rule); padding: 4px 8px;
                               vertical-align: middle; }
table.plot thead th { font-weight: 600; font-size: 0.8rem; vertical-align: bottom; }
table.plot th.lbl { font-weight: 600; line-height: 1.3; }
table.plot .sub { display: block; font-weight: 400; font-size: 0.8rem; color: var(--muted); }
table.plot td.chart, table.plot th.chart { width: 60%; min-width: 7rem; padding: 4px 14px; }
table.plot .fig { white-space: nowrap; width: 1%; }
table.plot .line { display: block; line-height: 20px; font-size: 0.85rem; }
svg.marks { display: block; overflow: visible; }
svg.key { vertical-align: -2px; overflow: visible; margin-right: 2px; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0);
      white-space: nowrap; }
details { margin: 0.5rem 0; }
summary { cursor: pointer; font-weight: 600; }
.nw { white-space: nowrap; }
table.copies td.n, table.copies th[scope="row"], table.copies td.right, table.copies td.wrong {
  white-space: nowrap; }
.right { color: var(--good); } .wrong { color: var(--bad); font-weight: 600; }
.appendix h2 { color: var(--muted); }
@media (max-width: 40rem) {
  body { padding: 0.25rem 0.6rem 2rem; }
  .findings { padding: 0.1rem 0.75rem 0.5rem; }
  table.plot th, table.plot td { padding: 3px 4px; }
  table.plot td.chart, table.plot th.chart { min-width: 4.5rem; padding: 3px 8px; }
  table.plot .line { font-size: 0.75rem; }
  table.plot th.lbl { font-size: 0.85rem; }
  svg.axis text.mid { display: none; }
}
@media (prefers-color-scheme: dark) {
  :root { --ink: #e6edf3; --paper: #0d1117; --muted: #9198a1; --line: #3d444d; --rule: #21262d;
          --tint: #151b23; --link: #4493f8; --accent: #4493f8; --label: #d29922; --good: #3fb950;
          --bad: #f85149; }
""".strip() + "\n" + dark_style() + "\n}"

REPORT_STYLE_HASH = style_source_hash(REPORT_STYLE)

# The policy in the page's <meta> element (no frame-ancestors: a <meta> policy may not hold it).
REPORT_META_CSP = (
    f"default-src 'none'; style-src '{REPORT_STYLE_HASH}'; img-src 'none'; base-uri 'none'; "
    "form-action 'none'"
)
# The same policy as the download's header, which also refuses to be framed.
REPORT_CSP = f"{REPORT_META_CSP}; frame-ancestors 'none'"

# How a judge joined, from what their record holds: how they were admitted and how they are
# identified. An invited judge identified by GitHub came by a login the host listed, or by a join
# link and then linked GitHub: the report's records do not tell the two apart, so neither does this.
HOW_JOINED = {
    ("invited", "token"): "by a single-use join link",
    ("invited", "github"): "by GitHub sign-in (a login the host listed, or a join link, then GitHub)",
    ("guest", "token"): "with the session's guest code",
    ("guest", "github"): "with the session's guest code, then GitHub sign-in",
    ("host", "token"): "as the session's host, from their host account",
    ("host", "github"): "as the session's host, then GitHub sign-in",
}
GROUP_LABELS = {"invited": "Invited", "guest": "Guests", "self_blinded_host": "The host (self-blinded)",
                "removed": "Removed"}
GROUP_ONE = {"invited": "invited", "guest": "guest", "self_blinded_host": "the host, self-blinded",
             "removed": "removed"}
GROUP_PLURAL = {"invited": "invited judges", "guest": "guests",
                "self_blinded_host": "the host (self-blinded)", "removed": "removed judges"}
REVIEW_GROUPS = {"main": "main", "same_family": "own family's copies", "seal_failed": "seal failed",
                 "verdict_in_content": "verdict in content"}
UNIT_NAMES = {"task": ("task", "tasks"), "cluster": ("cluster", "clusters")}
EFFECT_NAMES = {
    "recall_phase1": "Recall, phase 1", "recall_phase2": "Recall, phase 2",
    "delta_recall": "Change in recall", "tnr_phase1": "True-negative rate, phase 1",
    "tnr_phase2": "True-negative rate, phase 2", "delta_tnr": "Change in true-negative rate",
    "shift_towards_truth": "Changed towards truth", "shift_away_from_truth": "Changed away from truth",
}

# The page's sections, in order: (anchor, title); the appendices last.
SECTIONS = [
    ("builders-compared", "Builders compared"),
    ("judges", "Judges"),
    ("phase-shift", "Phase shift: alone, then beside the models"),
    ("decision-rules", "Decision rules"),
    ("reviewers", "Model reviewers"),
    ("copies", "Copies, one by one"),
    ("task-flags", "Task flags"),
    ("adjudicated", "Adjudicated truth, scored apart"),
    ("sample", "Sample and blinding"),
]
APPENDICES = [
    ("protocol", "Appendix A. Preregistration and frozen protocol"),
    ("hashes", "Appendix B. Hashes, salts and commitments"),
]


def _judge_label(judges: dict, pseudonym: str) -> tuple[str, str]:
    """A judge's row label and note: the pseudonym, and their name where the report has one
    (never in the anonymised export, whose names are the pseudonyms)."""
    j = judges.get(pseudonym) or {}
    name = j.get("github_login") and f"@{j['github_login']}" or j.get("name")
    return pseudonym, (name if name and name != pseudonym else "")


def _reviewer_plot_row(name: str, where: list[str], rates: dict) -> Row:
    """A reviewer's recall and true-negative rate as a plot row. The labels stay short: the table
    below the plot says how many replies with no verdict each rate holds."""
    return Row(name, ", ".join(x for x in where if x),
               [_triple(rates["recall"]), _triple(rates["tnr"])],
               [numbers.rate_text(_counted(rates["recall"])), numbers.rate_text(_counted(rates["tnr"]))])


def _without_text(score: dict) -> str:
    """A reviewer's rates with its replies with no verdict left out, where the report gives them."""
    without = score.get("without_abstentions")
    if not without:
        return ""
    return f"{numbers.rate_text(without['recall'])}; {numbers.rate_text(without['tnr'])}"


def _counted(value: dict) -> dict:
    """A rate without its count of replies with no verdict (for a plot's short labels)."""
    return {k: v for k, v in value.items() if k != "no_verdict"}


def test_text(difference: dict) -> str:
    """Which test gave a difference's p, with what it rests on: the discordant tasks, the
    smallest p they could give when the p is large, McNemar beside a cluster sign-flip."""
    test, discordant = difference.get("test"), difference.get("discordant")
    if not test:
        return ""
    if discordant is None:
        return test
    text = f"{test}, {discordant[0]} vs {discordant[1]} discordant tasks"
    p_value, smallest = difference.get("p_value"), difference.get("smallest_p")
    if p_value is not None and p_value >= 0.05 and smallest is not None:
        text += f" (the smallest p they could give: {numbers.p_text(smallest)})"
    if test == "cluster sign-flip":
        text += (f"; McNemar, tasks treated as independent: p = "
                 f"{numbers.p_text(difference.get('mcnemar_p'))}")
    return text


def interval_text(difference: dict) -> str:
    """What a difference's interval is (issue 28 item 3): its kind, the units (and judges) it
    rests on, "conditional on these judges" where it holds fewer than ten fixed, or why there is
    none."""
    kind = difference.get("interval")
    if not kind:
        reason = difference.get("no_interval")
        return f"none: {reason}" if reason else ""
    units, judges = difference.get("units"), difference.get("judges")
    unit = "clusters" if difference.get("resampled", "") and "clusters" in difference["resampled"] \
        else "tasks"
    if kind == "two-way bootstrap":
        text = f"two-way bootstrap over {judges} judges and {units} {unit}"
    elif kind == "bootstrap":
        text = f"bootstrap over {units} {unit}"
    else:
        text = kind
    if difference.get("conditional_on_judges"):
        text += f"; {numbers.conditional_on_judges(judges)}"
    return text


def rate_cell(value):
    """A rate for a table cell: "64% (32/50)" and "[50–76%]", each kept on one line, the two
    free to wrap apart in a narrow column."""
    text = numbers.rate_text(value)
    head, sep, bounds = text.partition(" [")
    if not sep:
        return format_html('<span class="nw">{}</span>', text)
    return format_html('<span class="nw">{}</span> <span class="nw">[{}</span>', head, bounds)


def difference_cell(value):
    """A difference for a table cell: "+16 pp" and "[−40 to +64 pp]", each on one line."""
    text = numbers.difference_text(value)
    head, sep, bounds = text.partition(" [")
    if not sep:
        return format_html('<span class="nw">{}</span>', text)
    return format_html('<span class="nw">{}</span> <span class="nw">[{}</span>', head, bounds)


def _triple(value) -> tuple | None:
    """(value, low, high) of a rate ({k, n, rate, low, high}) or an estimate ({value, low, high})."""
    if not value:
        return None
    point = value.get("rate", value.get("value"))
    return None if point is None else (point, value.get("low"), value.get("high"))


# --- Builders --------------------------------------------------------------------------------------

def _source_label(source, group, reviewer, names_r) -> str:
    if source == "truth":
        return "By the tests"
    if source == "reviewer":
        return f"Reviewer {names_r.get(reviewer, reviewer)}"
    return f"{GROUP_LABELS.get(group, group)}, phase {source[-1]}"


def exclusions_context(report: dict) -> dict:
    """The preregistered exclusions beside the builders: the rules, what they left out (tasks,
    judges and by which rule), the screening draw, the ranking statements again, and each judge's
    screening figures and phase-1 scores without their exclusions."""
    section = report["preregistered_exclusions"]
    if not section["stated"]:
        return {"stated": False, "why": section["why"]}
    names = ", ".join(f"“{rule['name']}”" for rule in section["rules"])
    screening = section["screening"]
    screening_text = None
    if screening:
        counts = screening["controls"]
        screening_text = (
            f"Screening controls: {screening['share']:g} of each kind, drawn with the seed the "
            f"protocol committed to ({counts['seeded_defect']['screening']} of "
            f"{counts['seeded_defect']['controls']} seeded defects, "
            f"{counts['known_good']['screening']} of {counts['known_good']['controls']} known-good "
            "copies). Judges are screened on these alone, and every judge's scores here leave "
            "them out.")
    screened = {entry["judge"]: entry for entry in section["screened"]}
    return {
        "stated": True,
        "primary": section["primary"],
        "rules_text": f"Preregistered rule{'s' if len(section['rules']) != 1 else ''}: {names}",
        "excluded": section["excluded_tasks"],
        "excluded_judges": [f"{e['judge']} (by “{'”, “'.join(e['rules'])}”)"
                            for e in section["excluded_judges"]],
        "judge_rules": bool(section["screened"]),
        "screening_text": screening_text,
        "statements": section["builders_compared"]["ranking"]["statements"],
        "rules_in_force": next((s for s in (section.get("decision_rules") or {}).get("rule_sets", [])
                                if s["in_force"] and s["rules"]), None),
        "judges": [{"judge": j["judge"], "excluded": ", ".join(j["excluded_tasks"]),
                    "excluded_by": ", ".join(j["excluded_by"]),
                    "figures": "; ".join(_figure_text(f)
                                         for f in screened.get(j["judge"], {}).get("rules", [])),
                    "recall": numbers.rate_text(j["phases"]["1"]["current"]["recall"]),
                    "tnr": numbers.rate_text(j["phases"]["1"]["current"]["tnr"])}
                   for j in section["judges"]],
    }


def _figure_text(figure: dict) -> str:
    """One screening figure in words: “rule” 0/3, or “rule” 4.2 s over 33 for a median; "not
    computable" where it could not be computed; "(excludes)" where it excludes the judge."""
    if figure["value"] is None:
        shown = "not computable"
    elif figure["k"] is None:
        shown = f"{figure['value']:.1f} s over {figure['n']}"
    else:
        shown = f"{figure['k']}/{figure['n']}"
    return f"“{figure['rule']}” {shown}" + (" (excludes)" if figure["excludes"] else "")


def builders_context(report: dict) -> dict:
    """The builders section: the table's columns and rows, the plot of each builder's pass rate on
    the tests and the primary comparison, the differences in percentage points."""
    section = report["builders_compared"]
    names_b, names_r = builder_names(report), reviewer_names(report)
    entries = section["builders"]
    groups = list(entries[0]["judges"]) if entries else []
    reviewers = [r["reviewer"] for r in entries[0]["reviewers"]] if entries else []
    columns = ["By the tests"] + [f"{GROUP_LABELS[g]}, phase {p}" for g in groups for p in ("1", "2")]
    columns += [f"Reviewer {names_r.get(r, r)}" for r in reviewers]
    rows = []
    for entry in entries:
        cells = [{"text": rate_cell(entry["truth"]["pass_rate"])}]
        cells += [{"text": rate_cell(entry["judges"][g][p])} for g in groups for p in ("1", "2")]
        cells += [{"text": rate_cell(r["pass_rate"]), "same_family": r["same_family"]}
                  for r in entry["reviewers"]]
        rows.append({**entry, "name": names_b.get(entry["builder"], entry["builder"]), "cells": cells})

    primary = section["primary"]
    series, picks = [TRUTH], [lambda e: e["truth"]["pass_rate"]]
    if primary["source"] in ("judges_phase1", "judges_phase2") and primary.get("group") in groups:
        group = primary["group"]
    else:
        group = "invited" if "invited" in groups else (groups[0] if groups else None)
    if group:
        who = GROUP_LABELS[group]
        series += [Series("1", f"{who}, phase 1", PHASE1.colour, PHASE1.colour_name, PHASE1.shape),
                   Series("2", f"{who}, phase 2", PHASE2.colour, PHASE2.colour_name, PHASE2.shape)]
        picks += [lambda e, g=group: e["judges"][g]["1"], lambda e, g=group: e["judges"][g]["2"]]
    if primary["source"] == "reviewer" and primary.get("reviewer") in reviewers:
        series.append(Series("reviewer", f"Reviewer {names_r.get(primary['reviewer'])}",
                             RECALL.colour, RECALL.colour_name, RECALL.shape))
        picks.append(lambda e: next(r["pass_rate"] for r in e["reviewers"]
                                    if r["reviewer"] == primary["reviewer"]))
    scoped = [e for e in entries if e["copies"]]
    plot = dot_plot(
        plot_id="plot-builders", label_header="Builder",
        caption="Pass rate per builder: the share of its copies that passed their tests, and "
                "that judges passed; bars are Wilson 95% intervals.",
        series=series,
        rows=[Row(names_b.get(e["builder"], e["builder"]), f"{e['family']} · {e['builder']}",
                  [_triple(pick(e)) for pick in picks], [numbers.rate_text(pick(e)) for pick in picks])
              for e in scoped])

    def label(source, group, reviewer):
        return _source_label(source, group, reviewer, names_r)

    differences = []
    for d in section["differences"]:
        a, b = (names_b.get(x, x) for x in d["builders"])
        differences.append({**d, "label": label(d["source"], d["group"], d["reviewer"]),
                            "pair": f"{a} − {b}", "text": difference_cell(d["difference"]),
                            "rates": [rate_cell(r) for r in d["pass_rates"]],
                            "p": numbers.p_text(d["p_value"]), "holm": numbers.p_text(d["p_holm"]),
                            "test_text": test_text(d), "interval_text": interval_text(d)})
    chosen = [d for d in section["differences"] if d["primary"] and d["difference"]["value"] is not None]
    diff_rows = []
    for d in chosen:
        o = oriented(d, d["builders"][0] if d["difference"]["value"] >= 0 else d["builders"][1])
        a, b = (names_b.get(x, x) for x in o["builders"])
        diff_rows.append(Row(f"{a} − {b}", f"Holm-adjusted p = {numbers.p_text(d['p_holm'])}",
                             [(o["value"], o["low"], o["high"])], [numbers.difference_text(o)]))
    bounds = [x for d in chosen for x in (d["difference"]["value"], d["difference"]["low"],
                                          d["difference"]["high"])]
    primary_label = primary_words(primary, names_r, report["run"]["default_condition"])
    diff_plot = dot_plot(
        plot_id="plot-builder-differences", label_header="Higher − lower",
        caption=f"Differences between builders on the primary comparison ({primary_label}), in "
                "percentage points, paired by task; bars are 95% bootstrap intervals.",
        series=[Series("value", "Difference", VALUE.colour, VALUE.colour_name, VALUE.shape)],
        rows=diff_rows, scale=points_scale(bounds)) if diff_rows else None
    return {
        "columns": columns, "rows": rows, "abstain_scoring": report["run"]["abstain_scoring"],
        "differences": differences, "primary_label": primary_label,
        "plot": plot if scoped else None, "diff_plot": diff_plot,
        "controls": [{**c, "name": names_b.get(c["builder"], c["builder"])} for c in section["controls"]],
        "exclusions": exclusions_context(report),
    }


# --- Judges ----------------------------------------------------------------------------------------

def _people_by_group_and_identity(judges) -> list[dict]:
    """Who judged, grouped by admission (removed judges apart) and by how they joined (HOW_JOINED):
    GitHub judges by @login, others by the name on their join link or the name they chose
    (pseudonyms only in the anonymised export)."""
    rows = []
    for group, label in GROUP_LABELS.items():
        for (admitted, identity), how in HOW_JOINED.items():
            members = [j for j in judges if j["group"] == group and j["admitted_as"] == admitted
                       and j["identified_by"] == identity]
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
            rows.append({"group": label, "how": how, "count": len(members),
                         "names": ", ".join(names)})
    return rows


def _without_verdicts(report: dict) -> str:
    """The judges who joined and gave no verdict, each once: "J02 Walk-in (guest) and J03 Drafty
    (invited; 6 unlocked drafts, never scored)"; "" when every judge gave one."""
    judges = {j["pseudonym"]: j for j in report["judges"]}
    drafts = {s["judge"]: s["unlocked_drafts"] for s in report["scores"]["judges"]}
    parts = []
    for pseudonym in report["sample"]["achieved"]["judges_without_verdicts"]:
        _, person = _judge_label(judges, pseudonym)
        about = [GROUP_ONE.get(judges[pseudonym]["group"], judges[pseudonym]["group"])]
        if drafts.get(pseudonym):
            about.append(f"{plural(drafts[pseudonym], 'unlocked draft')}, never scored")
        parts.append(" ".join(x for x in (pseudonym, person) if x) + f" ({'; '.join(about)})")
    return listed(parts)


def _scored_judges(report: dict) -> list[dict]:
    """scores.judges without the judges who gave no verdict (their rows would all read 0/0)."""
    silent = set(report["sample"]["achieved"]["judges_without_verdicts"])
    return [s for s in report["scores"]["judges"] if s["judge"] not in silent]


def judges_context(report: dict) -> dict:
    judges = {j["pseudonym"]: j for j in report["judges"]}
    scores = _scored_judges(report)
    plots = {}
    for key, name, measures in (("recall", "Recall", "the share of defective items each judge flagged"),
                                ("tnr", "True-negative rate", "the share of good items each judge passed")):
        rows = []
        for s in scores:
            label, person = _judge_label(judges, s["judge"])
            note = ", ".join(x for x in (person, GROUP_LABELS.get(s["group"], s["group"]).lower()
                                         if s["group"] != "invited" else "") if x)
            values = [s["phases"][p]["current"][key] for p in ("1", "2")]
            rows.append(Row(label, note, [_triple(v) for v in values],
                            [numbers.rate_text(v) for v in values]))
        plots[key] = dot_plot(
            plot_id=f"plot-judges-{key}", label_header="Judge", rows=rows, series=[PHASE1, PHASE2],
            caption=f"{name} per judge ({measures}), current truth; bars are Wilson 95% intervals.")
    imported = [s for s in scores if s["phases"]["1"].get("imported")]
    return {"people": _people_by_group_and_identity(report["judges"]), "plots": plots,
            "scored": bool(scores), "without_verdicts": _without_verdicts(report),
            "imported": [{"judge": s["judge"], "group": s["group"],
                          "cells": [rate_cell(s["phases"][p]["imported"][k])
                                    for k in ("recall", "tnr") for p in ("1", "2")]}
                         for s in imported],
            "counts": [{"judge": s["judge"], "group": GROUP_LABELS.get(s["group"], s["group"]),
                        "unknown": s["phases"]["1"]["current"]["unknown_truth"],
                        "drafts": s["unlocked_drafts"]} for s in scores],
            "dwell": _dwell_rows(scores)}


def _dwell_rows(scores: list) -> list[dict]:
    """Each scored judge's time per item, a row per phase they have locked answers in
    (scores.judges[].dwell): the median page-measured seconds, and the answers under one second
    by the page's measure and by the server's."""
    return [{"judge": s["judge"], "group": GROUP_LABELS.get(s["group"], s["group"]),
             "phase": phase, "answers": block["answers"],
             "median": f"{numbers.decimal(block['median_seconds'], 1)} s",
             "quick": block["under_one_second"], "server_quick": block["server_under_one_second"]}
            for s in scores for phase, block in s["dwell"].items() if block["answers"]]


def _resampled_text(value) -> str:
    """value [low, high] of a resampled rate; the value alone where its items lie in fewer
    units than a bootstrap needs."""
    if value["value"] is None:
        return numbers.MISSING
    if value["low"] is None or value["high"] is None:
        return f"{numbers.percent(value['value'])} (under 20 units: no bootstrap interval)"
    return numbers.estimate_text(value)


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
    names_r = reviewer_names(report)
    default = report["run"]["default_condition"]
    judges = [([s["judge"], s["group"], phase], s["phases"][phase]["current"]["resampled"])
              for s in _scored_judges(report) for phase in ("1", "2")]
    reviewers = [([names_r.get(e["reviewer"], e["reviewer"]), default, group],
                  versions["current"]["resampled"])
                 for e in scores["reviewers"] for group, versions in e["groups"].items()]
    reviewers += [([names_r.get(e["reviewer"], e["reviewer"]), e["condition"], group],
                   versions["current"]["resampled"])
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


# --- Phase shift -----------------------------------------------------------------------------------

def phase_shift_context(report: dict) -> dict:
    pooled = report["phase_shift"]["pooled"]
    groups = []
    for group, entry in pooled.items():
        words = GROUP_PLURAL.get(group, group)
        effects = entry.get("effects")
        context = {"group": group, "words": words, "entry": entry, "rates": None, "changes": None,
                   "effects": [], "order": None}
        if effects:
            for name, e in effects.items():
                as_points = name.startswith("delta_")
                text = numbers.difference_text if as_points else numbers.estimate_text
                context["effects"].append({
                    "name": EFFECT_NAMES.get(name, name), "metric": name, "text": text(e)})
            context["interval"] = numbers.pooled_interval_text(entry["resampling"])
            context["rates"] = dot_plot(
                plot_id=f"plot-pooled-{group}", label_header="Measure", series=[PHASE1, PHASE2],
                caption=f"Pooled over the {words}: recall and true-negative rate in each phase; bars "
                        f"are 95% intervals where there are any ({context['interval']}).",
                rows=[Row("Recall", "defective items", [_triple(effects["recall_phase1"]),
                                                        _triple(effects["recall_phase2"])],
                          [numbers.estimate_text(effects["recall_phase1"]),
                           numbers.estimate_text(effects["recall_phase2"])]),
                      Row("True-negative rate", "good items", [_triple(effects["tnr_phase1"]),
                                                                _triple(effects["tnr_phase2"])],
                          [numbers.estimate_text(effects["tnr_phase1"]),
                           numbers.estimate_text(effects["tnr_phase2"])])])
            deltas = [effects["delta_recall"], effects["delta_tnr"]]
            context["changes"] = dot_plot(
                plot_id=f"plot-changes-{group}", label_header="Change, phase 2 − phase 1",
                series=[Series("value", "Change", VALUE.colour, VALUE.colour_name, VALUE.shape)],
                caption=f"Pooled over the {words}: the change from phase 1 to phase 2, in "
                        "percentage points; bars are 95% bootstrap intervals over judges and items.",
                rows=[Row("Recall", "", [_triple(deltas[0])], [numbers.difference_text(deltas[0])]),
                      Row("True-negative rate", "", [_triple(deltas[1])],
                          [numbers.difference_text(deltas[1])])],
                scale=points_scale([x for d in deltas for x in (d["value"], d["low"], d["high"])]))
        order = entry.get("order_effects")
        if order:
            context["order"] = dot_plot(
                plot_id=f"plot-order-{group}", label_header="Third of the drawn order",
                series=[PHASE1, PHASE2],
                caption=f"Accuracy of the {words} by the third of each judge's drawn order the "
                        "item fell in; bars are Wilson 95% intervals.",
                rows=[Row(f"{third.capitalize()} third", "",
                          [_triple(order[p][third]) for p in ("1", "2")],
                          [numbers.rate_text(order[p][third]) for p in ("1", "2")])
                      for third in ("first", "middle", "last")])
        groups.append(context)
    return {"groups": groups}


# --- Model reviewers -------------------------------------------------------------------------------

def reviewers_context(report: dict) -> dict:
    names_r = reviewer_names(report)
    models = {r["id"]: r for r in report["reviewers"]}
    rows, side = [], []
    pooled = (report["phase_shift"]["pooled"].get("invited") or {}).get("effects")
    if pooled:
        side.append(Row("Invited judges, alone", "pooled, phase 1",
                        [_triple(pooled["recall_phase1"]), _triple(pooled["tnr_phase1"])],
                        [numbers.estimate_text(pooled["recall_phase1"]),
                         numbers.estimate_text(pooled["tnr_phase1"])]))
    for entry in report["scores"]["reviewers"]:
        reviewer = entry["reviewer"]
        family = models.get(reviewer, {}).get("family", "")
        for group, versions in entry["groups"].items():
            score = versions["current"]
            name = names_r.get(reviewer, reviewer)
            where = [family, REVIEW_GROUPS.get(group, group) if group != "main" else ""]
            rows.append(_reviewer_plot_row(name, where, score))
            if group == "main":
                side.append(rows[-1])
            if score.get("without_abstentions"):
                # More than a tenth of its replies gave no verdict: the same rates without them.
                rows.append(_reviewer_plot_row(name, [*where, "replies with no verdict left out"],
                                               score["without_abstentions"]))
    condition = report["run"]["default_condition"]
    plot = dot_plot(
        plot_id="plot-reviewers", label_header="Reviewer", series=[RECALL, TNR], rows=rows,
        caption=f"Model reviewers under the default condition ({condition}): recall and "
                "true-negative rate, current truth, each group of reviews apart; bars are Wilson "
                "95% intervals.") if rows else None
    if report["session"]["kind"] == "findings":
        side = []  # the judges judged findings, the reviewers copies: not one measure
    side_plot = dot_plot(
        plot_id="plot-judges-and-models", label_header="Who", series=[RECALL, TNR], rows=side,
        caption="The judges alone beside each model reviewer: recall and true-negative rate. The "
                "judges' bars are 95% bootstrap intervals over judges and items, the reviewers' "
                "Wilson's; no test sets the two against each other.") if pooled and len(side) > 1 else None
    return {"names": names_r, "plot": plot, "side_plot": side_plot,
            "rows": [{**e, "name": names_r.get(e["reviewer"], e["reviewer"]), "id": e["reviewer"],
                      "family": models.get(e["reviewer"], {}).get("family", ""),
                      "groups": [{"group": REVIEW_GROUPS.get(g, g),
                                  "recall": numbers.rate_text(v["current"]["recall"]),
                                  "tnr": numbers.rate_text(v["current"]["tnr"]),
                                  "without": _without_text(v["current"])}
                                 for g, v in e["groups"].items()]}
                     for e in report["scores"]["reviewers"]],
            "authorship": [{**g, "name": names_r.get(g["reviewer"], g["reviewer"]),
                            "model_text": rate_cell(g["model"]),
                            "family_text": rate_cell(g["family"]),
                            "model_chance": numbers.percent(g["model"]["chance"]),
                            "family_chance": numbers.percent(g["family"]["chance"]),
                            "model_p": numbers.p_text(g["model"]["p_value"]),
                            "family_p": numbers.p_text(g["family"]["p_value"])}
                           for g in report["model_reviewers"]["authorship"]["reviewers"]],
            "other": [{**e, "name": names_r.get(e["reviewer"], e["reviewer"]),
                       "groups": [{"group": REVIEW_GROUPS.get(g, g),
                                   "recall": rate_cell(v["current"]["recall"]),
                                   "tnr": rate_cell(v["current"]["tnr"])}
                                  for g, v in e["groups"].items()]}
                      for e in report["other_conditions"]["reviewers"]]}


def reviewer_pairs(report) -> dict:
    """The pairs the page shows (different models under the same condition) and how many others
    the JSON report holds."""
    names_r = reviewer_names(report)
    pairs = report["model_reviewers"]["pairs"]
    shown = [{**p, "names": " + ".join(names_r.get(r, r) for r in p["reviewers"]),
              "catch_text": rate_cell(p["catch_rate"]), "tnr_text": rate_cell(p["tnr"])}
             for p in pairs if p["shown_by_default"]]
    return {"shown": shown, "total": len(pairs), "others": len(pairs) - len(shown)}


def seal_context(report: dict) -> dict:
    """The seals-per-builder partial's context: each builder's row with its model, the patterns
    the run applied (none when it was imported before the content check) and how many reviews
    each pattern that fired found a verdict in, in the run's pattern order."""
    names_b = builder_names(report)
    patterns = report["run"]["verdict_patterns"]
    fired: dict[str, int] = {}
    for review in report["reviews"]:
        if review["content_verdict_pattern"]:
            fired[review["content_verdict_pattern"]] = fired.get(review["content_verdict_pattern"],
                                                                 0) + 1
    return {
        "rows": [{**row, "model": names_b.get(row["builder"], row["builder"])}
                 for row in report["model_reviewers"]["seals_by_builder"]],
        "checked": patterns is not None,
        "patterns": patterns or [],
        "fired": [{"name": p["name"], "origin": p["origin"], "reviews": fired[p["name"]]}
                  for p in patterns or [] if p["name"] in fired],
    }


def conditions_context(report: dict) -> dict:
    """reviewer_conditions with names and texts: flag rates as percentages, differences in points."""
    section = report["reviewer_conditions"]
    names_r = reviewer_names(report)
    rows, comparisons = [], []
    for e in section["reviewers"]:
        name = names_r.get(e["reviewer"], e["reviewer"])
        for c in e["conditions"]:
            rows.append({"name": name, "condition": c["condition"], "default": c["default"],
                         "reviews": c["reviews"],
                         "classes": [(_flag_text(c["by_class"][k]), c["by_class"][k]["no_verdict"])
                                     for k in ("defective", "good")]})
        for c in e["comparisons"]:
            comparisons.append({**c, "name": name, "text": difference_cell(
                {"value": c["difference"], **(c["interval"] or {})}), "p": numbers.p_text(c["p_value"])})
    return {"s": section, "rows": rows, "comparisons": comparisons}


def _flag_text(value: dict):
    return rate_cell({"k": value["flagged"], "n": value["n"], "rate": value["rate"],
                              "low": value["low"], "high": value["high"]})


def self_preference_context(report: dict) -> dict:
    section = report["self_preference"]
    names_r = reviewer_names(report)
    rows = []
    for e in section["reviewers"]:
        for index, (cls, c) in enumerate(e["by_class"].items()):
            rows.append({"name": names_r.get(e["reviewer"], e["reviewer"]), "family": e["family"],
                         "cls": cls, "own": rate_cell(c["own"]),
                         "others": rate_cell(c["others"]),
                         "difference": difference_cell(c["difference"]), "tasks": c["tasks"],
                         "tasks_with_both": c["tasks_with_both"], "first": index == 0,
                         "authorship": (f"{numbers.rate_text(e['authorship']['model'])}; "
                                        f"{numbers.rate_text(e['authorship']['family'])}")
                         if e["authorship"] else "no guesses",
                         "set_apart": e["set_apart"]})
    return {"s": section, "rows": rows}


def task_flags_context(report: dict) -> dict:
    """The task flags section's rows: per flagged task and phase, one row per kind."""
    section = report["task_flags"]
    rows, flags = [], []
    levels = list(range(section["max_severity"] + 1))
    for t in section["tasks"]:
        span = sum(len(p["by_kind"]) for p in t["phases"])
        for p_index, p in enumerate(t["phases"]):
            for k_index, k in enumerate(p["by_kind"]):
                rows.append({
                    "first": p_index == 0 and k_index == 0, "span": span, "task": t["task"],
                    "title": t["title"], "seen_by": ", ".join(t["seen_by"]),
                    "phase_first": k_index == 0, "kinds": len(p["by_kind"]), "phase": p["phase"],
                    "flagged": rate_cell(p["flagged"]), "kind": k["kind"],
                    "of_kind": rate_cell(k["flagged"]),
                    "levels": [rate_cell(s["share"]) for s in k["by_severity"]]})
        flags += [{"task": t["task"], **f} for f in t["flags"]]
    return {"s": section, "rows": rows, "flags": flags, "levels": levels}


def reasons_context(report: dict) -> dict | None:
    """A reasons session's audit per reviewer and phase: the three rates and the answers."""
    section = report.get("reasons")
    if not section:
        return None
    rows = []
    for r in section["reviewers"]:
        for phase in ("1", "2"):
            p = r["phases"][phase]
            rows.append({"reviewer": r["reviewer"], "phase": phase, "audits": p["audits"],
                         "correct": rate_cell(p["grounded_when_correct"]),
                         "wrong": rate_cell(p["grounded_when_wrong"]),
                         "right": rate_cell(p["right_for_right_reasons"]),
                         "answers": ", ".join(f"{n} {a.replace('_', ' ')}"
                                              for a, n in p["answers"].items() if n)})
    return {"s": section, "rows": rows}


def _strength_cell(strength: float, interval) -> str:
    """A Bradley–Terry strength, signed, with its interval where there is one."""
    text = numbers.decimal(strength, 2) if strength < 0 else "+" + numbers.decimal(strength, 2)
    if interval:
        text += f" [{numbers.decimal(interval[0], 2)} to {numbers.decimal(interval[1], 2)}]"
    return text


def _ranking_rows(ranking: dict | None) -> list[dict]:
    """A ranking's builders strongest first, each with its strength, interval and record."""
    if not ranking:
        return []
    intervals = ranking["intervals"] or [None] * len(ranking["builders"])
    rows = [{"builder": b, "strength": _strength_cell(s, i), "value": s,
             "record": f"{w} won, {t} tied, {lost} lost"}
            for b, s, i, w, t, lost in zip(ranking["builders"], ranking["strengths"], intervals,
                                           ranking["wins"], ranking["ties"], ranking["losses"],
                                           strict=True)]
    return sorted(rows, key=lambda r: -r["value"])


def _style_text(style: dict | None) -> str:
    """The style fit in one line: each coefficient with its interval, or why there is none."""
    if not style:
        return "no comparisons"
    if not style["fitted"]:
        return style["reason"]
    parts = []
    for term, c in style["coefficients"].items():
        if c is not None:
            parts.append(f"{term} {numbers.decimal(c['estimate'], 2)} "
                         f"[{numbers.decimal(c['low'], 2)} to {numbers.decimal(c['high'], 2)}]")
    return "; ".join(parts) + f" (n = {style['n']})"


def pairs_context(report: dict) -> dict | None:
    """A pairs session's preferences: per judge type and phase the ranking, accuracy against
    truth, left share and position bias, the style fit; per judge; per model reviewer."""
    section = report.get("pairs")
    if not section:
        return None
    groups = []
    for g in section["groups"]:
        for phase in ("phase1", "phase2"):
            p = g[phase]
            bias = p["position_bias"]
            groups.append({
                "group": g["group"], "phase": phase[-1], "judges": g["judges"],
                "accuracy": rate_cell(p["accuracy"]), "decisive": rate_cell(p["decisive_accuracy"]),
                "left": rate_cell(p["left_share"]),
                "bias": (f"mean {numbers.percent(bias['mean_share'])}, "
                         f"{numbers.p_text(bias['p_value'])}" if bias["mean_share"] is not None
                         else "no decisive answer"),
                "ranking": _ranking_rows(p["ranking"]),
                "apart": [d for d in (p["ranking"] or {}).get("differences", []) if d["apart"]],
                "no_interval": (p["ranking"] or {}).get("no_interval"),
                "style": _style_text(p["style"]), "both_bad": p["both_bad"]})
    judges = [{"judge": j["judge"], "group": j["group"], "phase": phase[-1],
               "accuracy": rate_cell(j[phase]["accuracy"]),
               "decisive": rate_cell(j[phase]["decisive_accuracy"]),
               "left": rate_cell(j[phase]["left_share"])}
              for j in section["judges"] for phase in ("phase1", "phase2")]
    reviewers = [{"reviewer": r["reviewer"], "comparisons": r["comparisons"],
                  "accuracy": rate_cell(r["accuracy"]), "first": rate_cell(r["first_share"]),
                  "inconsistent": rate_cell(r["inconsistency"]["inconsistent_decisive"]),
                  "ranking": _ranking_rows(r["ranking"]), "style": _style_text(r["style"])}
                 for r in section["reviewers"] if r["comparisons"]]
    return {"s": section, "groups": groups, "judges": judges, "reviewers": reviewers}


def adjudicated_context(report: dict) -> dict:
    """The adjudicated section: each adjudication (used or why not, the matrix check, opened
    after a reveal), each answer beside the item's truth, and the scores on adjudicated items
    alone, per judge and phase and per reviewer (its main group)."""
    section = report["adjudicated"]
    judges, reviewers = [], []
    if section["scores"]:
        for j in section["scores"]["judges"]:
            for phase in ("1", "2"):
                rates = j["phases"][phase]["current"]
                if rates["recall"]["n"] or rates["tnr"]["n"]:
                    judges.append({"judge": j["judge"], "group": j["group"], "phase": phase,
                                   "recall": rate_cell(rates["recall"]),
                                   "tnr": rate_cell(rates["tnr"])})
        for r in section["scores"]["reviewers"]:
            for group, versions in r["groups"].items():
                rates = versions["current"]
                if rates["recall"]["n"] or rates["tnr"]["n"]:
                    reviewers.append({"reviewer": r["reviewer"], "group": group,
                                      "recall": rate_cell(rates["recall"]),
                                      "tnr": rate_cell(rates["tnr"])})
    return {"s": section, "judges": judges, "reviewers": reviewers}


# --- Copies ----------------------------------------------------------------------------------------

def _verdict_counts(values: list[str]) -> str:
    if not values:
        return ""
    counts = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return ", ".join(f"{counts[v]} {v}" for v in sorted(counts))


def _right(verdicts: list[dict]) -> str:
    scored = [v for v in verdicts if v["correct"] is not None]
    return f"{sum(v['correct'] for v in scored)}/{len(scored)}" if scored else ""


def copies_table(report: dict) -> dict:
    """One row per item (copy, or finding in a findings session): its task, builder and truth, the
    judges' locked verdicts in each phase (every judge not removed), how many were right, and the
    models': each reviewer's default-condition verdict on a copy, ✓ right or ✗ wrong; a finding's
    proposed verdict and who raised it. Rows are built here with format_html: a run of thousands of
    copies renders in milliseconds."""
    names_b, names_r = builder_names(report), reviewer_names(report)
    findings = report["session"]["kind"] == "findings"
    default = report["run"]["default_condition"]
    abstain_scoring = report["run"]["abstain_scoring"]
    copies = {c["id"]: c for c in report["copies"]}
    removed = {j["pseudonym"] for j in report["judges"] if j["group"] == "removed"}
    by_item: dict = {}
    for v in report["verdicts"]:
        if v["locked"] and v["judge"] not in removed:
            by_item.setdefault(v["item"], {1: [], 2: []})[v["phase"]].append(v)
    reviewers = [r["id"] for r in report["reviewers"]]
    reviews: dict = {}
    for r in report["reviews"]:
        if r["default_condition"]:
            reviews[(r["copy"], r["reviewer"])] = r
    items = ([(f, copies[f["copy"]], f["text"]) for f in report["findings"]] if findings
             else [(c, c, c["defect"]) for c in report["copies"]])

    def review_cell(copy_id, reviewer):
        r = reviews.get((copy_id, reviewer))
        if r is None:
            return mark_safe("<td></td>")  # noqa: S308 - a literal
        mark = "" if r["correct"] is None else (" ✓" if r["correct"] else " ✗")
        cls = "" if r["correct"] is None else ("right" if r["correct"] else "wrong")
        seal = " (seal failed)" if r["seal"] == "failed" else ""
        verdict = r["verdict"]
        if verdict == "abstain":
            verdict = ("no verdict (scored as pass)" if abstain_scoring == "not_flagged"
                       else "no verdict (left out)")
        return format_html('<td class="{}">{}{}{}</td>', cls, verdict, mark, seal)

    def finding_cells(finding):
        raised = ", ".join(names_r.get(x["reviewer"], x["reviewer"])
                           + ("" if x["condition"] == default else f" ({x['condition']})")
                           for x in finding["raised_by_conditions"])
        return format_html("<td>{}</td><td>{}</td>", finding["proposed_verdict"], raised)

    rows = []
    for item, copy, note in items:
        phases = by_item.get(item["id"], {1: [], 2: []})
        truth = item["truth"]
        if item.get("imported_truth", truth) != truth:
            truth = f"{truth} (imported: {item['imported_truth']})"
        right = [_right(phases[1]), _right(phases[2])]
        models = (finding_cells(item) if findings else
                  mark_safe("".join(review_cell(copy["id"], r) for r in reviewers)))  # noqa: S308 - format_html'd
        rows.append(format_html(
            "<tr><th scope=\"row\">{}</th><td>{}</td><td>{}<span class=\"id\"> {}</span></td>"
            "<td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
            "<td class=\"n\">{}</td>{}</tr>",
            item["id"], copy["task"], names_b.get(copy["builder"], copy["builder"]), copy["builder"],
            truth, note or "", _verdict_counts([v["value"] for v in phases[1]]),
            _verdict_counts([v["value"] for v in phases[2]]),
            " → ".join(right) if any(right) else "", models))
    return {"findings": findings,
            "columns": (["Proposed verdict", "Raised by"] if findings
                        else [names_r.get(r, r) for r in reviewers]),
            "rows": mark_safe("\n".join(rows)), "count": len(items)}  # noqa: S308 - format_html'd rows


# --- The page --------------------------------------------------------------------------------------

def _setting(key: str, value) -> str:
    """A frozen protocol setting as text: lists joined, yes/no, "all" items where none was set."""
    if key == "items_per_judge" and value is None:
        return "all"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) if value else "none"
    return numbers.MISSING if value is None or value == "" else str(value)


def protocol_context(report: dict) -> dict:
    frozen = report["protocol"]["frozen"]
    return {"frozen_json": json.dumps(frozen, indent=2, sort_keys=True, ensure_ascii=False),
            "fields": [(key, _setting(key, frozen[key]))
                       for key in ("kind", "rubric", "items_per_judge", "reviewer_display",
                                   "redaction_patterns", "blinding_dismissed", "scorecards",
                                   "allocation_seed")
                       if key in frozen]}


def contents(report: dict) -> list[tuple[str, str]]:
    sections = list(SECTIONS)
    if report["truth_corrections"]:
        sections.append(("corrections", "Truth corrections"))
    return sections + APPENDICES


def to_html(report: dict) -> str:
    in_force = next((s for s in report["decision_rules"]["rule_sets"] if s["in_force"]), None)
    commitments = format_html_join(
        "", "<tr><th scope=\"row\">{}</th><td class=\"hash\">{}</td><td class=\"hash\">{}</td></tr>",
        ((j["pseudonym"], j["commitment"]["sha256"], j["commitment"]["salt"])
         for j in report["judges"]))
    names_b = builder_names(report)
    return render_to_string("reports/report.html", {
        "r": report, "style": mark_safe(REPORT_STYLE),  # noqa: S308 - our own constant
        "meta_csp": REPORT_META_CSP, "headline": headline(report), "contents": contents(report),
        "builders": builders_context(report), "judges": judges_context(report),
        "resampled": resampled_tables(report), "shift": phase_shift_context(report),
        "rules_in_force": in_force, "reviewers": reviewers_context(report),
        "seals": seal_context(report), "reviewer_pairs": reviewer_pairs(report),
        "conditions": conditions_context(report), "self_preference": self_preference_context(report),
        "task_flags": task_flags_context(report), "copies": copies_table(report),
        "adjudicated": adjudicated_context(report), "reasons": reasons_context(report),
        "pairs_section": pairs_context(report),
        "protocol": protocol_context(report),
        "commitments": commitments,
        "redactions": [{"builder": b, "name": names_b.get(b, b), "count": n}
                       for b, n in report["redactions_per_builder"].items()],
        "shapes": [{**s, "name": names_b.get(s["builder"], s["builder"])}
                   for s in report.get("shapes_of_one_builder") or []],
        "builder_list": [{**b, "name": names_b.get(b["id"], b["id"])} for b in report["builders"]],
        "reviewer_list": [{**r, "name": reviewer_names(report).get(r["id"], r["id"])}
                          for r in report["reviewers"]],
    })
