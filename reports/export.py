"""The report's file forms: JSON, CSV (one row per verdict, human and model) and anonymised JSON.

A CSV row names the copy's task; a model row its review's condition (every condition: the
report's scores keep the default one apart from the others, the CSV lists them all, a reader
filters by the column) and its verdict as given (abstain included), `correct` being the verdict
as scored under the run's abstention rule."""

import csv
import io
import json

from reports.groups import SEAL_GROUPS

# A spreadsheet runs a cell that starts with one of these as a formula (CSV injection): the four
# formula signs, their full-width forms (which some spreadsheets read as the ASCII ones), and `;`
# (a separator in some locales, so a cell can start a new one). Any leading whitespace counts
# too (tab, CR, newline, space, no-break space, ideographic space, …): spreadsheets trim it and
# then read what follows.
FORMULA_PREFIXES = ("=", "+", "-", "@", ";", "\uff1d", "\uff0b", "\uff0d", "\uff20")

CSV_COLUMNS = [
    "rater_kind", "rater", "group", "phase", "condition", "item", "copy", "task", "builder",
    "builder_model", "builder_family", "truth", "verdict", "correct", "kept", "locked", "position",
    "code", "seconds_spent", "seal", "same_family", "reason",
]


# Top-level lists that grow with the session: written one compact element per line. Python's json
# module formats with indentation in pure Python and without it in C; for a report of 200,000
# verdicts that is the difference between seconds and a fraction of one.
ROW_LISTS = ("copies", "reviews", "findings", "judges", "assignments", "verdicts")


def to_json(report: dict) -> bytes:
    """The report as UTF-8 JSON: indented, except that each element of the long lists is one line."""
    parts = []
    for key, value in report.items():
        name = json.dumps(key, ensure_ascii=False)
        if key in ROW_LISTS and isinstance(value, list) and value:
            rows = ",\n    ".join(json.dumps(row, ensure_ascii=False) for row in value)
            parts.append(f"  {name}: [\n    {rows}\n  ]")
        else:
            text = json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n  ")
            parts.append(f"  {name}: {text}")
    return ("{\n" + ",\n".join(parts) + "\n}\n").encode("utf-8")


def neutralise_cell(value):
    """Text cells a spreadsheet would run as formulas get a leading apostrophe; numbers stay."""
    if isinstance(value, str) and value and (value.startswith(FORMULA_PREFIXES)
                                             or value[0].isspace()):
        return "'" + value
    return value


def csv_rows(report: dict):
    builders = {b["id"]: b for b in report["builders"]}
    copies = {c["id"]: c for c in report["copies"]}
    groups = {j["pseudonym"]: j["group"] for j in report["judges"]}
    names = {j["pseudonym"]: j["name"] or j["pseudonym"] for j in report["judges"]}
    item_copy = {a["item"]: a["copy"] for a in report["assignments"]}
    for v in report["verdicts"]:
        copy_id = item_copy[v["item"]]
        builder = builders[copies[copy_id]["builder"]]
        yield {
            "rater_kind": "human", "rater": names[v["judge"]], "group": groups[v["judge"]],
            "phase": v["phase"], "condition": "", "item": v["item"], "copy": copy_id,
            "task": copies[copy_id]["task"], "builder": builder["id"],
            "builder_model": builder["model"], "builder_family": builder["family"],
            "truth": v["truth"], "verdict": v["value"], "correct": v["correct"],
            "kept": v["kept"], "locked": v["locked"], "position": v["position"],
            "code": v["code"], "seconds_spent": v["seconds_spent"], "seal": "",
            "same_family": "", "reason": v["reason"],
        }
    for r in report["reviews"]:
        builder = builders[copies[r["copy"]]["builder"]]
        yield {
            "rater_kind": "model", "rater": r["reviewer"],
            "group": SEAL_GROUPS.get(r["seal"]) or ("same_family" if r["same_family"] else "main"),
            "phase": "", "condition": r["condition"], "item": r["copy"], "copy": r["copy"],
            "task": copies[r["copy"]]["task"], "builder": builder["id"],
            "builder_model": builder["model"], "builder_family": builder["family"],
            "truth": r["truth"], "verdict": r["verdict"], "correct": r["correct"], "kept": "",
            "locked": "", "position": "", "code": "", "seconds_spent": "", "seal": r["seal"],
            "same_family": r["same_family"], "reason": r["reason"],
        }


def to_csv(report: dict) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\r\n")
    writer.writeheader()
    for row in csv_rows(report):
        writer.writerow({key: neutralise_cell(value) for key, value in row.items()})
    return out.getvalue()


def anonymise(report: dict) -> dict:
    """The report for publication: every judge known only by pseudonym (names, GitHub logins and
    the admission link's name removed); verdicts, hashes and salts kept so it still verifies."""
    # A shallow copy: only the judges' entries change, and the host's report is left untouched
    # (a deep copy of 200,000 verdict rows took seconds and doubled the memory).
    anon = dict(report)
    anon["anonymised"] = True
    anon["judges"] = [
        {**judge, "name": judge["pseudonym"], "display_name": None, "github_login": None}
        for judge in report["judges"]
    ]
    return anon
