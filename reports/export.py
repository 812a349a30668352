"""The report's file forms: JSON, CSV (one row per verdict, human and model) and anonymised JSON."""

import copy
import csv
import io
import json

# A spreadsheet runs a cell that starts with one of these as a formula (CSV injection).
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")

CSV_COLUMNS = [
    "rater_kind", "rater", "group", "phase", "item", "copy", "builder", "builder_model",
    "builder_family", "truth", "verdict", "correct", "kept", "locked", "position", "code",
    "seconds_spent", "seal", "same_family", "reason",
]


def to_json(report: dict) -> bytes:
    return json.dumps(report, indent=2, ensure_ascii=False, sort_keys=False).encode("utf-8") + b"\n"


def neutralise_cell(value):
    """Text cells a spreadsheet would run as formulas get a leading apostrophe; numbers stay."""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
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
            "phase": v["phase"], "item": v["item"], "copy": copy_id, "builder": builder["id"],
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
            "group": "seal_failed" if r["seal"] == "failed" else
                     ("same_family" if r["same_family"] else "main"),
            "phase": "", "item": r["copy"], "copy": r["copy"], "builder": builder["id"],
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
    anon = copy.deepcopy(report)
    anon["anonymised"] = True
    for judge in anon["judges"]:
        judge["name"] = judge["pseudonym"]
        judge["display_name"] = None
        judge["github_login"] = None
    return anon
