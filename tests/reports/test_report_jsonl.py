"""The JSON Lines export and the CSV's task, cluster and condition columns (README.md "The report",
issue 15 item 2).

The realistic revealed session of test_report (six judges of every admission, drafts, sealed and
failed reviews, a same-family reviewer, clusters on c1 and c2, a truth correction after the reveal)
and the run/2 session of test_report_run2 (three tasks, a second condition, abstentions under
each abstention rule) are exported; every expected row, count and type below is worked out by hand
from the planted verdicts, not read back from the code under test. Last, the README's snippet
(pandas and Hugging Face `datasets`), cut out of README.md as it stands, runs on a real export.
"""

import csv
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from accounts.models import Judge
from judging.enums import SessionKind, SessionState
from judging.services import item_save, phase_lock
from reports.build import build_report
from reports.export import CSV_COLUMNS, JSONL_COLUMNS, anonymise, neutralise_cell, to_csv, to_jsonl
from reports.render import REPORT_FORMATS, render_report
from reports.verify import verify
from tests.reports.test_report import (
    BUILDER_OF,
    FORMULA_REASONS,
    GITHUB_LOGIN,
    J01,
    J02,
    J03,
    J04,
    J05,
    J06,
    NAME_PARTS,
    NAMES,
    build_revealed,
)
from tests.reports.test_report_run2 import COPIES as RUN2_COPIES
from tests.reports.test_report_run2 import REVIEWS as RUN2_REVIEWS
from tests.reports.test_report_run2 import revealed_session, run2_bundle
from tests.worlds import a_run, a_session, advance, invite_and_join, make_run2_bundle

ROOT = Path(__file__).resolve().parents[2]
ROW_SCHEMA_PATH = ROOT / "reports" / "schemas" / "verdict-row-2.schema.json"

# Columns that do not apply to the other kind of row: always null there.
HUMAN_ONLY = {"phase", "kept", "locked", "position", "code", "seconds_spent", "server_seconds",
              "judge", "created_at", "updated_at"}
MODEL_ONLY = {"condition", "seal", "same_family", "reviewer", "reviewer_model", "reviewer_family",
              "default_condition", "scored_as"}
TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$")

# The realistic world by hand: current truth (c3 corrected to tests_fail) and its class, clusters.
TRUTH = {"c1": "known_good", "c2": "seeded_defect", "c3": "tests_fail", "c4": "tests_fail",
         "c5": "known_good", "c6": "unknown"}
CLASS = {"c1": "good", "c2": "defective", "c3": "defective", "c4": "defective", "c5": "good",
         "c6": None}
CLUSTER = {"c1": "k1", "c2": "k1", "c3": None, "c4": None, "c5": None, "c6": None}
BUILDER_MODEL = {"b1": ("gpt-4o-2024-08-06", "OpenAI"), "b2": ("claude-3-5-sonnet-20241022", "Anthropic"),
                 "b3": ("gemini-1.5-pro", "Google")}
# judge -> (group, plan by phase, phase 1 locked, phase 2 locked)
JUDGES = {"J01": ("invited", J01, True, True), "J02": ("invited", J02, True, False),
          "J03": ("guest", J03, True, True), "J04": ("self_blinded_host", J04, True, False),
          "J05": ("removed", J05, True, False), "J06": ("invited", J06, False, False)}
# Model rows in import order, by hand: (reviewer, copy, verdict, group, seal, same_family, correct).
# r2 is OpenAI like b1 (c1, c2); c4's truth tests_fail, c3's tests_fail since the correction.
MODEL_ROWS = [
    ("r1", "c1", "pass", "main", "absent", False, True),
    ("r1", "c2", "fail", "main", "absent", False, True),
    ("r1", "c3", "fail", "main", "absent", False, True),
    ("r1", "c4", "pass", "seal_failed", "failed", False, False),
    ("r1", "c6", "fail", "main", "absent", False, None),
    ("r2", "c1", "fail", "same_family", "absent", True, False),
    ("r2", "c2", "fail", "same_family", "absent", True, True),
    ("r2", "c3", "pass", "main", "sealed", False, False),
    ("r2", "c4", "fail", "main", "absent", False, True),
    ("r2", "c5", "pass", "seal_failed", "failed", False, True),
]
REVIEWER_MODEL = {"r1": ("qwen3-1.7b", "Alibaba"), "r2": ("gpt-4o-mini", "OpenAI")}


def expected_human_rows() -> set:
    """(judge, phase, item, verdict, kept, locked, correct) for every human verdict, from the plans:
    "keep" in phase 2 is the phase-1 verdict, kept."""
    rows = set()
    for judge, (_, plan, locked1, locked2) in JUDGES.items():
        for phase, locked in ((1, locked1), (2, locked2)):
            for item, value in plan.get(phase, {}).items():
                kept = value == "keep"
                verdict = plan[1][item] if kept else value
                correct = None if CLASS[item] is None else (verdict == "fail") == (CLASS[item] == "defective")
                rows.add((judge, phase, item, verdict, kept, locked, correct))
    return rows


def parse_jsonl(data: bytes) -> list[dict]:
    text = data.decode("utf-8")
    assert text.endswith("\n") and "\r" not in text
    return [json.loads(line) for line in text.split("\n")[:-1]]


@pytest.fixture
def revealed(host):
    return build_revealed(host)


@pytest.fixture
def report(revealed):
    return build_report(revealed[0])


@pytest.fixture(scope="module")
def row_schema():
    return json.loads(ROW_SCHEMA_PATH.read_text(encoding="utf-8"))


def row_errors(schema, row) -> list[str]:
    validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(row)]


# --- Rows and columns, by hand ---------------------------------------------------------------------

def test_the_jsonl_has_one_typed_row_per_verdict_and_per_review(report):
    rows = parse_jsonl(to_jsonl(report))
    assert all(list(row) == JSONL_COLUMNS for row in rows)  # every key, in one order
    assert JSONL_COLUMNS[:len(CSV_COLUMNS)] == CSV_COLUMNS
    human = [r for r in rows if r["rater_kind"] == "human"]
    model = [r for r in rows if r["rater_kind"] == "model"]
    # J01 6 + 6, J02 6 + 2 drafts, J03 6 + 6, J04 6, J05 6 + 1 draft, J06 3 drafts; 10 reviews
    assert (len(rows), len(human), len(model)) == (58, 48, 10)
    assert rows == human + model  # humans first
    assert [sum(1 for r in human if r["phase"] == phase) for phase in (1, 2)] == [33, 15]
    assert {(r["judge"], r["phase"], r["item"], r["verdict"], r["kept"], r["locked"], r["correct"])
            for r in human} == expected_human_rows()
    for r in human:
        assert r["rater"] == dict(zip(("J01", "J02", "J03", "J04", "J05", "J06"),
                                      (*NAMES[:3], "alice", *NAMES[3:]), strict=True))[r["judge"]]
        assert r["group"] == JUDGES[r["judge"]][0]
        assert (r["copy"], r["task"], r["cluster"]) == (r["item"], "task", CLUSTER[r["item"]])
        assert (r["builder"], r["builder_model"], r["builder_family"]) == (
            BUILDER_OF[r["item"]], *BUILDER_MODEL[BUILDER_OF[r["item"]]])
        assert (r["truth"], r["truth_class"]) == (TRUTH[r["item"]], CLASS[r["item"]])
        assert TIME.match(r["created_at"]) and TIME.match(r["updated_at"])
    assert [(r["rater"], r["copy"], r["verdict"], r["group"], r["seal"], r["same_family"], r["correct"])
            for r in model] == MODEL_ROWS
    for r in model:
        assert (r["reviewer"], r["item"], r["condition"], r["default_condition"], r["scored_as"]) == (
            r["rater"], r["copy"], "clean", True, r["verdict"])  # run/1: one condition, no abstention
        assert (r["reviewer_model"], r["reviewer_family"]) == REVIEWER_MODEL[r["reviewer"]]
        assert (r["task"], r["cluster"], r["builder"]) == ("task", CLUSTER[r["copy"]], BUILDER_OF[r["copy"]])
        assert (r["truth"], r["truth_class"]) == (TRUTH[r["copy"]], CLASS[r["copy"]])

    # One row whole: J01's phase-1 verdict on c1, its reason as written (the CSV's gets "'").
    row = next(r for r in human if (r["judge"], r["item"], r["phase"]) == ("J01", "c1", 1))
    assert {k: v for k, v in row.items()
            if k not in ("position", "code", "created_at", "updated_at", "server_seconds")} == {
        "rater_kind": "human", "rater": "Zebediah Quux", "group": "invited", "phase": 1,
        "condition": None, "item": "c1", "copy": "c1", "task": "task", "cluster": "k1",
        "builder": "b1", "builder_model": "gpt-4o-2024-08-06", "builder_family": "OpenAI",
        "truth": "known_good", "verdict": "pass", "correct": True, "kept": False, "locked": True,
        "seconds_spent": 12.5, "seal": None, "same_family": None, "reason": "=1+2", "judge": "J01",
        "reviewer": None, "reviewer_model": None, "reviewer_family": None, "default_condition": None,
        "scored_as": None, "truth_class": "good", "audited_reviewer": None, "excluded": False,
        "adjudicated": None}
    assert type(row["position"]) is int and re.fullmatch(r"[ACDEFGHJKMNPQRTUVWXY34679]{4}", row["code"])
    reasons = {r["item"]: r["reason"] for r in human if (r["judge"], r["phase"]) == ("J01", 1)}
    assert reasons == FORMULA_REASONS


def test_types_and_nulls_follow_the_row_schema(report, row_schema):
    Draft202012Validator.check_schema(row_schema)
    assert row_schema["required"] == JSONL_COLUMNS == list(row_schema["properties"])
    assert all(p.get("description") for p in row_schema["properties"].values())
    rows = parse_jsonl(to_jsonl(report))
    for row in rows:
        assert row_errors(row_schema, row) == [], row
        # Null exactly where the column does not apply, and where truth or cluster is unknown.
        unknown = {"correct", "truth_class"} if row["copy"] == "c6" else set()
        cluster = set() if row["cluster"] else {"cluster"}
        # A judge's first answer of the phase (or a draft without one) has no interval before it.
        first = {"server_seconds"} if row["rater_kind"] == "human" and row["server_seconds"] is None \
            else set()
        nulls = {k for k, v in row.items() if v is None}
        # A copies session (no review audited) on a run with no adjudication.
        assert nulls == (MODEL_ONLY if row["rater_kind"] == "human" else HUMAN_ONLY) | unknown | \
            cluster | first | {"audited_reviewer", "adjudicated"}
        assert row["excluded"] is False  # no exclusion was preregistered
    human = [r for r in rows if r["rater_kind"] == "human"]
    # The server's interval, as the report gives it for each verdict (the dwell section reads it).
    intervals = {(v["judge"], v["item"], v["phase"]): v["server_seconds"] for v in report["verdicts"]}
    assert {(r["judge"], r["item"], r["phase"]): r["server_seconds"] for r in human} == intervals
    assert {type(r["server_seconds"]) for r in human} == {float, type(None)}
    # Numbers as numbers: a whole number of seconds is still a float, phase and position ints.
    assert all(type(r["seconds_spent"]) is float for r in human)
    assert {(r["item"], r["seconds_spent"]) for r in human if r["judge"] == "J01" and r["phase"] == 1
            and r["item"] in ("c1", "c2")} == {("c1", 12.5), ("c2", 3.0)}
    assert all(type(r["phase"]) is int and type(r["position"]) is int for r in human)
    assert {type(r[k]) for r in human for k in ("kept", "locked")} == {bool}
    # The schema refuses a column of the other kind filled in, and a row missing a column.
    model = next(r for r in rows if r["rater_kind"] == "model")
    assert row_errors(row_schema, {**human[0], "reviewer": "r1"}) != []
    assert row_errors(row_schema, {**model, "phase": 1}) != []
    assert row_errors(row_schema, {k: v for k, v in model.items() if k != "cluster"}) != []


def test_the_csv_is_the_same_rows_neutralised(report):
    """Each CSV row is the JSON Lines row's CSV columns: null an empty cell, formula-like text with
    an apostrophe, everything else as Python writes it."""
    rows = parse_jsonl(to_jsonl(report))
    text = to_csv(report)
    header, *cells = list(csv.reader(io.StringIO(text, newline="")))
    assert header == CSV_COLUMNS
    assert len(cells) == len(rows) == 58

    def cell(value):
        return "" if value is None else str(neutralise_cell(value))

    assert cells == [[cell(row[c]) for c in CSV_COLUMNS] for row in rows]
    clusters = {(c[0], c[CSV_COLUMNS.index("copy")], c[CSV_COLUMNS.index("cluster")]) for c in cells}
    assert clusters == {(kind, c, CLUSTER[c] or "") for kind in ("human", "model") for c in CLUSTER}


def test_rows_keep_the_report_order_on_every_database(report, revealed):
    """Human rows by judge, position and phase; model rows in import order: the order the report
    sets, never the database's (run on SQLite and on PostgreSQL)."""
    rows = parse_jsonl(to_jsonl(report))
    human = [(r["judge"], r["position"], r["phase"]) for r in rows if r["rater_kind"] == "human"]
    assert human == sorted(human) and len(set(human)) == len(human)
    assert [(r["judge"], r["item"], r["phase"]) for r in rows if r["rater_kind"] == "human"] == [
        (v["judge"], v["item"], v["phase"]) for v in report["verdicts"]]
    assert [(r["reviewer"], r["copy"]) for r in rows if r["rater_kind"] == "model"] == [
        (reviewer, copy) for reviewer, copy, *_ in MODEL_ROWS]
    # A second build of the same session gives the same bytes but for the verdicts' times
    # (the same) and nothing else: the whole file is equal.
    assert to_jsonl(build_report(revealed[0])) == to_jsonl(report)


def test_every_line_break_inside_a_text_stays_inside_its_line(report):
    """LF and CR are escaped by JSON; NEL, LINE and PARAGRAPH SEPARATOR, which str.splitlines()
    also breaks at, are escaped too: a reader splitting lines either way gets one row a line."""
    planted = "one\ntwo\rthree\x85four\u2028five\u2029six\x0bseven"
    verdicts = [dict(report["verdicts"][0], reason=planted), *report["verdicts"][1:]]
    data = to_jsonl({**report, "verdicts": verdicts})
    text = data.decode("utf-8")
    assert len(text.splitlines()) == text.count("\n") == 58
    assert "\u2028" not in text and "\\u2028" in text and "\x85" not in text
    assert json.loads(text.splitlines()[0])["reason"] == planted


# --- Anonymised ------------------------------------------------------------------------------------

def test_the_anonymised_jsonl_names_judges_by_pseudonym_only(revealed):
    session, judges = revealed
    Judge.objects.filter(pk=judges["J02"].pk).update(github_login=GITHUB_LOGIN, github_id=583231)
    report = build_report(session)
    plain = render_report(report, "jsonl")
    # Positive control: the host's rows name people (J02, Ada Lovelace, by the GitHub login now).
    for secret in (NAMES[0], *NAMES[2:], GITHUB_LOGIN, "alice"):
        assert secret.encode() in plain
    anon = render_report(report, "anon-jsonl")
    folded = anon.decode("utf-8").casefold()
    for secret in (*NAMES, *NAME_PARTS, GITHUB_LOGIN, "alice"):
        assert secret.casefold() not in folded, secret
    plain_rows, anon_rows = parse_jsonl(plain), parse_jsonl(anon)
    # Only the judges' names change: each human row's rater is its pseudonym.
    assert anon_rows == [dict(r, rater=r["judge"]) if r["rater_kind"] == "human" else r
                         for r in plain_rows]
    assert REPORT_FORMATS["jsonl"] == ("jsonl", "application/jsonl")
    assert REPORT_FORMATS["anon-jsonl"] == ("anon.jsonl", "application/jsonl")
    assert report["anonymised"] is False and anonymise(report)["anonymised"] is True


# --- Tasks, clusters and conditions of a run/2 session ------------------------------------------------

@pytest.mark.django_db
@pytest.mark.parametrize("rule", ["not_flagged", "excluded"])
def test_a_run2_session_has_each_rows_task_cluster_and_condition(host, row_schema, rule):
    report = build_report(revealed_session(host, run2_bundle(rule)))
    rows = parse_jsonl(to_jsonl(report))
    task_of = {c: t for c, t, *_ in RUN2_COPIES}
    cluster_of = {"c1": "arith", "c2": "arith"}  # t1's cluster; t2 and t3 name none
    human = [r for r in rows if r["rater_kind"] == "human"]
    model = [r for r in rows if r["rater_kind"] == "model"]
    assert (len(human), len(model)) == (6, 18)  # one judge, phase 1; 18 reviews
    assert {(r["copy"], r["task"], r["cluster"], r["condition"]) for r in human} == {
        (c, task_of[c], cluster_of.get(c), None) for c in task_of}
    expected = []
    for reviewer, copy_id, condition, verdict in RUN2_REVIEWS:
        scored = "pass" if verdict == "abstain" and rule == "not_flagged" else (
            None if verdict == "abstain" else verdict)
        defective = copy_id in ("c2", "c3", "c5")
        correct = None if scored is None else (scored == "fail") == defective
        expected.append((reviewer, copy_id, task_of[copy_id], cluster_of.get(copy_id),
                         condition or "clean", condition in (None, "clean"), verdict, scored, correct,
                         "defective" if defective else "good"))
    assert [(r["reviewer"], r["copy"], r["task"], r["cluster"], r["condition"], r["default_condition"],
             r["verdict"], r["scored_as"], r["correct"], r["truth_class"]) for r in model] == expected
    assert [error for r in rows for error in row_errors(row_schema, r)] == []
    # The CSV has the same task, cluster and condition per row.
    cells = list(csv.DictReader(io.StringIO(to_csv(report), newline="")))
    assert [(c["task"], c["cluster"], c["condition"]) for c in cells] == [
        (r["task"], r["cluster"] or "", r["condition"] or "") for r in rows]


# --- Reasons and pairs sessions: the answers their judges give --------------------------------------

@pytest.mark.django_db
def test_a_reasons_sessions_rows_name_the_reviewer_each_audits(host, row_schema):
    """A reasons session audits reviews: each human row names the reviewer whose review it audits
    (a bundle id may hold the item key's ":", so the key is no place to read it from), and its
    answers (grounded, partly, ...) follow the row schema."""
    bundle = make_run2_bundle()
    bundle["reviewers"].append({"id": "lab:r3", "model": "gpt-4o-mini", "family": "OpenAI"})
    bundle["reviews"].append({"reviewer": "lab:r3", "copy": "c1", "verdict": "pass",
                              "reason": "looks right"})
    session = a_session(a_run(host, bundle), SessionState.OPEN, kind=SessionKind.REASONS)
    # The default condition's five reviews, by hand: each item's answer, reviewer and copy.
    audits = {"review:r1:c1": ("grounded", "r1", "c1"), "review:r1:c2": ("partly", "r1", "c2"),
              "review:r2:c1": ("no_claim", "r2", "c1"), "review:r2:c2": ("not_grounded", "r2", "c2"),
              "review:lab:r3:c1": ("grounded", "lab:r3", "c1")}
    audited = set()
    for n in range(8):  # judges join until every review has been given to one (each gets a share)
        judge = invite_and_join(session, name=f"Judge {n}").judge
        for key, code in judge.assignments.values_list("item__key", "code"):
            item_save(judge=judge, code=code, phase=1, value=audits[key][0], reason="read it")
            audited.add(key)
        phase_lock(judge=judge, phase=1)
        if audited == set(audits):
            break
    assert audited == set(audits)
    report = build_report(advance(session, SessionState.REVEALED))
    assert verify(report)[0] == []
    rows = parse_jsonl(to_jsonl(report))
    human = [r for r in rows if r["rater_kind"] == "human"]
    assert {r["item"] for r in human} == set(audits)
    for r in human:
        assert (r["verdict"], r["audited_reviewer"], r["copy"]) == audits[r["item"]]
    assert all(r["audited_reviewer"] is None for r in rows if r["rater_kind"] == "model")
    assert [error for r in rows for error in row_errors(row_schema, r)] == []
    cells = list(csv.DictReader(io.StringIO(to_csv(report), newline="")))
    assert [c["audited_reviewer"] for c in cells] == [r["audited_reviewer"] or "" for r in rows]
    # The verifier holds the named reviewer to the review the item's key names.
    tampered = json.loads(json.dumps(report))
    tampered["assignments"][0]["reviewer"] = "r2" if report["assignments"][0]["reviewer"] != "r2" \
        else "r1"
    assert any("did not review copy" in problem for problem in verify(tampered)[0])


@pytest.mark.django_db
def test_a_pairs_sessions_preferences_follow_the_row_schema(host, row_schema):
    session = a_session(a_run(host, make_run2_bundle()), SessionState.OPEN, kind=SessionKind.PAIRS)
    judge = invite_and_join(session).judge
    codes = list(judge.assignments.values_list("code", flat=True))
    for n, code in enumerate(codes):
        value = ("left", "right", "tie", "both_bad")[n % 4]
        item_save(judge=judge, code=code, phase=1, value=value)
    phase_lock(judge=judge, phase=1)
    rows = parse_jsonl(to_jsonl(build_report(advance(session, SessionState.REVEALED))))
    human = [r for r in rows if r["rater_kind"] == "human"]
    assert {r["verdict"] for r in human} == {"left", "right", "tie", "both_bad"} and len(codes) >= 4
    assert [error for r in rows for error in row_errors(row_schema, r)] == []


# --- The README's snippet ----------------------------------------------------------------------------

SNIPPET = re.compile(r"<!-- snippet: load-jsonl -->\n```python\n(.*?)\n```\n", re.DOTALL)

# Run after the snippet, in its namespace: what it loaded, as JSON, for the test to compare.
CHECKS = '''
import json as _json
_out = {
    "columns": list(rows.columns), "rows": len(rows), "humans": len(humans), "models": len(models),
    "dtypes": {c: str(t) for c, t in rows.dtypes.items()},
    "human_means": [[*k, float(v)] for k, v in humans.groupby(["phase", "builder"]).correct.mean().items()],
    "model_means": [[*k, float(v)] for k, v in
                    models.groupby(["reviewer", "condition", "task"]).correct.mean().items()],
    "code_j01": sorted(rows[rows.judge == "J01"].code.unique().tolist()),
    "dataset_rows": verdicts.num_rows, "dataset_columns": verdicts.column_names,
    "features": {k: str(v) for k, v in verdicts.features.items()},
    "reviews": reviews.num_rows, "conditions": reviews.unique("condition"),
    "dataset_first": {k: v for k, v in verdicts[0].items() if k in ("phase", "kept", "reviewer",
                                                                   "seconds_spent", "cluster")},
}
with open("summary.json", "w") as _f:
    _json.dump(_out, _f)
'''


def readme_snippet() -> str:
    [snippet] = SNIPPET.findall((ROOT / "README.md").read_text(encoding="utf-8"))
    return snippet


def test_the_readme_snippet_loads_a_real_export_with_pandas_and_datasets(report, tmp_path):
    snippet = readme_snippet()
    assert 'path = "report.jsonl"' in snippet and "load_dataset(" in snippet and "read_json(" in snippet
    (tmp_path / "report.jsonl").write_bytes(render_report(report, "jsonl"))
    (tmp_path / "run.py").write_text(snippet + "\n" + CHECKS, encoding="utf-8")
    # The snippet as a reader runs it, in a fresh interpreter (pandas, pyarrow and datasets stay
    # out of the test process); datasets' cache in the temporary folder, nothing fetched.
    env = {**os.environ, "HF_HOME": str(tmp_path / "hf"), "HF_HUB_OFFLINE": "1",
           "HF_DATASETS_OFFLINE": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}
    done = subprocess.run([sys.executable, "run.py"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    assert out["columns"] == out["dataset_columns"] == JSONL_COLUMNS
    # Invited judges' locked verdicts: J01 both phases, J02 phase 1 (J06 left drafts only);
    # main-group reviews: r1 on c1 c2 c3 c6, r2 on c3 c4.
    assert (out["rows"], out["humans"], out["models"]) == (58, 18, 6)
    # By hand, the share matching the current truth (c6 unknown, left out): phase 1, J01 and
    # J02: b1 c1 1/2 + c2 2/2 = 0.75, b2 c3 1/2 + c4 1/2 = 0.5, b3 c5 0/2; phase 2, J01: all right.
    assert out["human_means"] == [[1, "b1", 0.75], [1, "b2", 0.5], [1, "b3", 0.0],
                                  [2, "b1", 1.0], [2, "b2", 1.0], [2, "b3", 1.0]]
    # r1 main: c1 c2 c3 right (recall 2/2, TNR 1/1 in the report's scores); r2 main: c4 right,
    # c3 wrong (recall 1/2).
    assert out["model_means"] == [["r1", "clean", "task", 1.0], ["r2", "clean", "task", 0.5]]
    text, nullable_int, nullable_bool, nullable_float = "string", "Int64", "boolean", "Float64"
    assert out["dtypes"] == {
        **dict.fromkeys(JSONL_COLUMNS, text),
        "phase": nullable_int, "position": nullable_int, "seconds_spent": nullable_float,
        "server_seconds": nullable_float,
        **dict.fromkeys(("correct", "kept", "locked", "same_family", "default_condition"), nullable_bool),
        "excluded": nullable_bool,
        # Null on every row here: pandas reads a column of nulls alone as Int64.
        "audited_reviewer": nullable_int, "adjudicated": nullable_int,
    }
    assert all(re.fullmatch(r"[ACDEFGHJKMNPQRTUVWXY34679]{4}", code) for code in out["code_j01"])
    assert len(out["code_j01"]) == 6  # codes stay text, never numbers
    assert out["dataset_rows"] == 58 and out["reviews"] == 10 and out["conditions"] == ["clean"]
    assert out["features"] == {
        **{c: "Value('string')" for c in JSONL_COLUMNS},
        "phase": "Value('int64')", "position": "Value('int64')", "seconds_spent": "Value('float64')",
        "server_seconds": "Value('float64')",
        **{c: "Value('bool')" for c in ("correct", "kept", "locked", "same_family", "default_condition",
                                         "excluded")},
        # Null on every row (a copies session, no adjudication).
        "audited_reviewer": "Value('null')", "adjudicated": "Value('null')",
    }
    first = report["verdicts"][0]
    assert out["dataset_first"] == {"phase": first["phase"], "kept": first["kept"], "reviewer": None,
                                    "seconds_spent": float(first["seconds_spent"]),
                                    "cluster": CLUSTER[first["item"]]}
