"""The report's file forms: JSON, CSV and JSON Lines (one row per verdict, human and model),
anonymised JSON, and the task flags' CSV.

CSV and JSON Lines carry the same rows (`verdict_rows`): every human verdict (both phases, drafts
included), then every model review (every condition), in the report's order, which the database
does not choose (verdicts by judge, position and phase; reviews in import order). A row names the
copy's task and cluster; a model row its review's condition (the report's scores keep the default
one apart from the others, the rows list them all, a reader filters by the column) and its verdict
as given (abstain included), `correct` being the verdict as scored under the run's abstention rule.
The CSV has `CSV_COLUMNS`; a JSON Lines row has `JSONL_COLUMNS` (the CSV's, then the judge's
pseudonym, the reviewer with its model, the verdict's times and what scoring read), typed, with
null where a column does not apply (reports/schemas/verdict-row-2.schema.json; version 2 added,
last of the CSV's, `server_seconds`, the server's interval since the judge's previous answer;
`audited_reviewer`, the model reviewer a reasons session's answer audits; `excluded`, whether
the preregistered exclusions leave the row's task or judge out; and `adjudicated`, what an
adjudication decided on the row's copy or finding, beside `truth`).

The CSV neutralises formula-like text cells (a spreadsheet would run them: content/spreadsheet.py,
the guard every CSV uses, `neutralise_cell` here for this module's readers); JSON Lines needs no
such step: a JSON string is data to every JSON parser (pandas, `datasets`, jq), never evaluated,
and an apostrophe would change the text an analysis compares."""

import csv
import io
import json

from content.spreadsheet import neutralise_cell
from content.truth import truth_class
from reports.groups import SEAL_GROUPS

CSV_COLUMNS = [
    "rater_kind", "rater", "group", "phase", "condition", "item", "copy", "task", "cluster",
    "builder", "builder_model", "builder_family", "truth", "verdict", "correct", "kept", "locked",
    "position", "code", "seconds_spent", "seal", "same_family", "reason", "server_seconds",
    "audited_reviewer", "excluded", "adjudicated",
]
# The CSV's columns, then: judge (pseudonym) and reviewer (bundle id) apart from `rater`, the
# reviewer's model and family, whether a review is under the run's default condition and how it
# was scored, the truth's class, and a human verdict's times.
JSONL_COLUMNS = [
    *CSV_COLUMNS, "judge", "reviewer", "reviewer_model", "reviewer_family", "default_condition",
    "scored_as", "truth_class", "created_at", "updated_at",
]


# Top-level lists that grow with the session: written one compact element per line. Python's json
# module formats with indentation in pure Python and without it in C; for a report of 200,000
# verdicts that is the difference between seconds and a fraction of one.
ROW_LISTS = ("copies", "reviews", "findings", "judges", "assignments", "verdicts")

# Characters besides LF and CR that str.splitlines() breaks at and JSON leaves raw outside ASCII
# (the encoder escapes every control character below U+0020 already): NEL, LINE and PARAGRAPH
# SEPARATOR.
LINE_BREAKS_ESCAPED = (("\x85", "\\u0085"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))

# One encoder for every JSON Lines row (json.dumps with options builds a new one per call).
_ROW_ENCODER = json.JSONEncoder(ensure_ascii=False, check_circular=False, allow_nan=False)


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


def fixed_time(text: str) -> str:
    """A report time ("YYYY-MM-DDTHH:MM:SS[.ffffff]+00:00") with its fraction always written: the
    same instant, one width, so a reader that infers timestamps (pyarrow: whole seconds only)
    reads every file's times as one type, text."""
    return text if text[19] == "." else text[:19] + ".000000" + text[19:]


def verdict_rows(report: dict):
    """Every verdict as one dict of JSONL_COLUMNS, human verdicts first, then model reviews; a
    column that does not apply to the row's kind is None. The CSV is these rows' CSV_COLUMNS."""
    builders = {b["id"]: b for b in report["builders"]}
    reviewers = {r["id"]: r for r in report["reviewers"]}
    copies = {c["id"]: c for c in report["copies"]}
    groups = {j["pseudonym"]: j["group"] for j in report["judges"]}
    names = {j["pseudonym"]: j["name"] or j["pseudonym"] for j in report["judges"]}
    item_copy = {a["item"]: a["copy"] for a in report["assignments"]}
    audited = {a["item"]: a["reviewer"] for a in report["assignments"] if "reviewer" in a}
    excluded_tasks, excluded_judges = _excluded(report)
    copy_answer, finding_answer = _adjudicated(report)
    # A findings session's human rows are of findings (a finding and a copy may share an id).
    human_answer = finding_answer if report["session"]["kind"] == "findings" else None
    for v in report["verdicts"]:
        copy = copies[item_copy[v["item"]]]
        builder = builders[copy["builder"]]
        yield {
            "rater_kind": "human", "rater": names[v["judge"]], "group": groups[v["judge"]],
            "phase": v["phase"], "condition": None, "item": v["item"], "copy": copy["id"],
            "task": copy["task"], "cluster": copy["cluster"], "builder": builder["id"],
            "builder_model": builder["model"], "builder_family": builder["family"],
            "truth": v["truth"], "verdict": v["value"], "correct": v["correct"],
            "kept": v["kept"], "locked": v["locked"], "position": v["position"],
            "code": v["code"], "seconds_spent": float(v["seconds_spent"]), "seal": None,
            "same_family": None, "reason": v["reason"],
            "server_seconds": None if v["server_seconds"] is None else float(v["server_seconds"]),
            "audited_reviewer": audited.get(v["item"]),
            "excluded": copy["task"] in excluded_tasks or v["judge"] in excluded_judges,
            "adjudicated": human_answer.get(v["item"]) if human_answer is not None
            else copy_answer.get(copy["id"]),
            "judge": v["judge"], "reviewer": None, "reviewer_model": None,
            "reviewer_family": None, "default_condition": None, "scored_as": None,
            "truth_class": truth_class(v["truth"]), "created_at": fixed_time(v["created_at"]),
            "updated_at": fixed_time(v["updated_at"]),
        }
    for r in report["reviews"]:
        copy = copies[r["copy"]]
        builder = builders[copy["builder"]]
        reviewer = reviewers[r["reviewer"]]
        yield {
            "rater_kind": "model", "rater": r["reviewer"],
            "group": SEAL_GROUPS.get(r["seal"]) or ("same_family" if r["same_family"] else "main"),
            "phase": None, "condition": r["condition"], "item": r["copy"], "copy": r["copy"],
            "task": copy["task"], "cluster": copy["cluster"], "builder": builder["id"],
            "builder_model": builder["model"], "builder_family": builder["family"],
            "truth": r["truth"], "verdict": r["verdict"], "correct": r["correct"], "kept": None,
            "locked": None, "position": None, "code": None, "seconds_spent": None,
            "seal": r["seal"], "same_family": r["same_family"], "reason": r["reason"],
            "server_seconds": None, "audited_reviewer": None,
            "excluded": copy["task"] in excluded_tasks,
            "adjudicated": copy_answer.get(copy["id"]),
            "judge": None, "reviewer": r["reviewer"],
            "reviewer_model": reviewer["model"],
            "reviewer_family": reviewer["family"], "default_condition": r["default_condition"],
            "scored_as": r["scored_as"], "truth_class": truth_class(r["truth"]),
            "created_at": None, "updated_at": None,
        }


def _excluded(report: dict) -> tuple[set, set]:
    """(task ids, judge pseudonyms) the preregistered exclusions leave out: what their section
    lists (nothing where no rule that acts was preregistered)."""
    section = report.get("preregistered_exclusions") or {}
    return (set(section.get("excluded_tasks") or ()),
            {entry["judge"] for entry in section.get("excluded_judges") or ()})


def _adjudicated(report: dict) -> tuple[dict, dict]:
    """(copy id -> answer, finding id -> answer): what the run's used adjudications decided (the
    adjudicated section's items; cannot_tell included), kept beside the truth, never over it."""
    copies, findings = {}, {}
    for item in (report.get("adjudicated") or {}).get("items", ()):
        if item["finding"] is None:
            copies[item["copy"]] = item["adjudicated"]
        else:
            findings[item["finding"]] = item["adjudicated"]
    return copies, findings


def to_csv(report: dict) -> str:
    """verdict_rows as CSV (CRLF, a header row): None an empty cell, formula-like text neutralised."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for row in verdict_rows(report):
        writer.writerow([neutralise_cell(row[column]) for column in CSV_COLUMNS])
    return out.getvalue()


# The task flags' CSV (`to_flags_csv`): a flag is a judge's word on a task, not a verdict.
FLAG_COLUMNS = ["judge", "group", "phase", "task", "kind", "severity", "reason"]


def to_flags_csv(report: dict) -> str:
    """One row per locked task flag (the report's task_flags section: drafts are left out), by
    judge pseudonym then phase then task; judges by pseudonym only (the JSON report maps them to
    names). A session that collected no flags gives the header alone."""
    groups = {j["pseudonym"]: j["group"] for j in report["judges"]}
    rows = sorted(
        [flag["judge"], groups[flag["judge"]], flag["phase"], task["task"], flag["kind"],
         flag["severity"], flag["reason"]]
        for task in report["task_flags"]["tasks"] for flag in task["flags"])
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(FLAG_COLUMNS)
    for row in rows:
        writer.writerow([neutralise_cell(cell) for cell in row])
    return out.getvalue()


def to_jsonl(report: dict) -> bytes:
    """verdict_rows as JSON Lines, UTF-8: one JSON object per line, keys in JSONL_COLUMNS order,
    each line ended by LF (a JSON string escapes every LF and CR inside it, and the other line
    breaks Unicode knows are escaped here), no header line."""
    encode = _ROW_ENCODER.encode
    text = "".join([encode(row) + "\n" for row in verdict_rows(report)])
    # Left raw, these would end a line for a reader that splits with str.splitlines(); they can
    # stand only inside strings, where the escape is the same text.
    for char, escape in LINE_BREAKS_ESCAPED:
        text = text.replace(char, escape)
    return text.encode("utf-8")


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
