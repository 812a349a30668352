"""The report of a blindjudge.run/2 session: tasks, review conditions and abstentions (issue 13).

A run of three tasks, two builders, two reviewers; reviewer r1 asked clean and again told a prior
"PASS" (condition told_pass), with abstentions under both conditions, imported once per
abstention rule (not_flagged, excluded) through the real import, judged by one judge, revealed,
exported in every form and verified. Every expected score is worked out by hand below from the
planted reviews, never read back from the code under test. Then the two older shapes still
export and verify: a run/1 bundle, and a session whose protocol was frozen as version 1 (before
the run/2 change; the migration leaves such a protocol as it was).
"""

import csv
import html
import io
import json

import pytest

from content.canonical import canonical_sha256
from content.scoring import rate
from judging.models import Session
from judging.services import phase_lock, session_create, session_open
from reports.build import build_report
from reports.export import anonymise, to_csv, to_json
from reports.html import REPORT_META_CSP, to_html
from reports.verify import verify
from tests.reports.test_report import SCHEMA_PATH, expected_score, schema_errors
from tests.support.verdicts import verdict_record
from tests.worlds import BAD, GOOD, a_run, advance, invite_and_join, make_bundle

# Truth: defective c2 c3 c5, good c1 c4 c6. Tasks: t1 = c1 c2, t2 = c3 c4, t3 = c5 c6.
COPIES = [
    ("c1", "t1", "b1", GOOD, "known_good"),
    ("c2", "t1", "b2", BAD, "seeded_defect"),
    ("c3", "t2", "b1", BAD + "# three\n", "tests_fail"),
    ("c4", "t2", "b2", GOOD + "# four\n", "tests_pass"),
    ("c5", "t3", "b1", BAD + "# five\n", "seeded_defect"),
    ("c6", "t3", "b2", GOOD + "# six\n", "known_good"),
]
# (reviewer, copy, condition or None for the default, verdict)
REVIEWS = [
    ("r1", "c1", "clean", "pass"), ("r1", "c2", "clean", "fail"), ("r1", "c3", "clean", "abstain"),
    ("r1", "c4", "clean", "pass"), ("r1", "c5", "clean", "abstain"), ("r1", "c6", "clean", "fail"),
    ("r2", "c1", None, "pass"), ("r2", "c2", None, "abstain"), ("r2", "c3", None, "fail"),
    ("r2", "c4", None, "fail"), ("r2", "c5", None, "fail"), ("r2", "c6", None, "pass"),
    ("r1", "c1", "told_pass", "pass"), ("r1", "c2", "told_pass", "pass"),
    ("r1", "c3", "told_pass", "abstain"), ("r1", "c4", "told_pass", "pass"),
    ("r1", "c5", "told_pass", "fail"), ("r1", "c6", "told_pass", "abstain"),
]

# By hand. not_flagged: an abstention is a pass. excluded: it is left out.
# r1 clean: defective c2 fail (caught), c3 abstain, c5 abstain; good c1 pass, c4 pass, c6 fail.
# r2 clean: defective c2 abstain, c3 fail, c5 fail; good c1 pass, c4 fail, c6 pass.
# r1 told_pass: defective c2 pass, c3 abstain, c5 fail; good c1 pass, c4 pass, c6 abstain.
# not_flagged only: the replies with no verdict inside each rate (recall's, tnr's), by hand from
# REVIEWS: r1 clean c3 c5 (defective); r2 clean c2 (defective); r1 told_pass c3 (defective), c6
# (good). Each reviewer gave no verdict to more than a tenth of its six replies, so its rates
# without them stand beside: the excluded rule's figures (issue 28 item 6).
NO_VERDICT = {"r1": (2, 0), "r2": (1, 0), "r1 told_pass": (1, 1)}


def reviewer_score(rule: str, key: str):
    recall, tnr = EXPECTED[rule][key]
    block = expected_score(recall, tnr, 0)
    if rule == "not_flagged":
        for rate_key, held in zip(("recall", "tnr"), NO_VERDICT[key], strict=True):
            if held:
                block[rate_key] = {**block[rate_key], "no_verdict": held}
        without = EXPECTED["excluded"][key]
        block["without_abstentions"] = {"recall": rate(*without[0]), "tnr": rate(*without[1])}
    return block


EXPECTED = {
    "not_flagged": {
        "r1": ((1, 3), (2, 3)), "r2": ((2, 3), (2, 3)), "r1 told_pass": ((1, 3), (3, 3)),
        "excluded": {"r1": 0, "r2": 0, "r1 told_pass": 0},
        # pair over all six copies: caught c2 (r1), c3 and c5 (r2); good passed by both: c1 only
        "pair": {"copies": 6, "dropped": 0, "catch": (3, 3), "tnr": (1, 3)},
    },
    "excluded": {
        "r1": ((1, 1), (2, 3)), "r2": ((2, 2), (2, 3)), "r1 told_pass": ((1, 2), (2, 2)),
        "excluded": {"r1": 2, "r2": 1, "r1 told_pass": 2},
        # c2 (r2 abstained), c3 and c5 (r1 abstained) dropped: c1 c4 c6 left, none defective
        "pair": {"copies": 3, "dropped": 3, "catch": (0, 0), "tnr": (1, 3)},
    },
}


def run2_bundle(abstain_scoring: str) -> dict:
    reviews = []
    for reviewer, copy_id, condition, verdict in REVIEWS:
        review = {"reviewer": reviewer, "copy": copy_id, "verdict": verdict,
                  "reason": f"{reviewer} on {copy_id}"}
        if condition is not None:
            review["condition"] = condition
        reviews.append(review)
    # An authorship guess in each condition: only the default condition's is counted.
    reviews[0]["authorship_guess"] = "claude"  # c1 is b1's: wrong
    reviews[12]["authorship_guess"] = "gpt-4o"  # right, but under told_pass
    return {
        "format": "blindjudge.run/2",
        "run": {"name": "three tasks, two conditions", "abstain_scoring": abstain_scoring},
        "tasks": [
            {"id": "t1", "title": "add", "statement": "Write add(a, b).", "cluster": "arith"},
            {"id": "t2", "statement": "Write *add* again.", "format": "markdown", "title": None},
            {"id": "t3", "statement": "Plain add.", "format": "text", "cluster": None},
        ],
        "builders": [{"id": "b1", "model": "gpt-4o-2024-08-06", "family": "OpenAI"},
                     {"id": "b2", "model": "claude-3-5-sonnet-20241022", "family": "Anthropic"}],
        "copies": [{"id": c, "task": t, "builder": b, "format": "text", "content": content,
                    "truth": truth} for c, t, b, content, truth in COPIES],
        "reviewers": [{"id": "r1", "model": "qwen3-1.7b", "family": "Alibaba"},
                      {"id": "r2", "model": "mistral-large-2411", "family": "Mistral"}],
        "reviews": reviews,
        "findings": [
            {"id": "f1", "copy": "c2", "text": "subtracts", "proposed_verdict": "confirmed",
             "truth": "real",
             "raised_by": ["r1", {"reviewer": "r1", "condition": "told_pass"}]},
            {"id": "f2", "copy": "c3", "text": "minus", "proposed_verdict": "confirmed",
             "truth": "real", "raised_by": [{"reviewer": "r2", "condition": "clean"}]},
        ],
    }


def revealed_session(host, bundle: dict):
    run = a_run(host, bundle)
    session = session_create(run=run, kind="copies", actor="test", rubric="Is add() right?").session
    session = session_open(session=session, actor="test")
    judge = invite_and_join(session, name="Ada").judge
    codes = dict(judge.assignments.values_list("item__key", "code"))
    for key, code in codes.items():
        verdict_record(judge=judge, code=code, phase=1, value="fail" if key in ("c2", "c5") else "pass")
    phase_lock(judge=judge, phase=1)
    return advance(session, "revealed")


@pytest.fixture(scope="module")
def schema():
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def exported(report) -> dict:
    return json.loads(to_json(report))


def csv_rows(report) -> list[dict]:
    reader = csv.DictReader(io.StringIO(to_csv(report), newline=""))
    return list(reader)


# run 3 + tasks (3 statements + ids + 3 hashes + copies' tasks) + builders (1 + 2)
# + reviewers (1 + 2) + copies (1 + 6) + bindings (1 + 6) + protocol 1 + one judge (2 + 6 × 2)
RUN2_CHECKS = 3 + (3 + 1 + 3 + 1) + 3 + 3 + 7 + 7 + 1 + (2 + 6 * 2)


@pytest.mark.django_db
@pytest.mark.parametrize("rule", ["not_flagged", "excluded"])
def test_a_run2_session_is_scored_on_the_default_condition_by_the_abstention_rule(host, schema, rule):
    report = build_report(revealed_session(host, run2_bundle(rule)))
    expected = EXPECTED[rule]
    assert (report["run"]["default_condition"], report["run"]["abstain_scoring"]) == ("clean", rule)
    assert report["run"]["record"] == {"name": "three tasks, two conditions", "abstain_scoring": rule}

    reviewers = {e["reviewer"]: e for e in report["scores"]["reviewers"]}
    for reviewer in ("r1", "r2"):
        assert reviewers[reviewer]["groups"] == {
            "main": {"current": reviewer_score(rule, reviewer)}}, reviewer
        assert reviewers[reviewer]["reviews"] == 6
        assert reviewers[reviewer]["excluded"] == expected["excluded"][reviewer]
    assert (reviewers["r1"]["abstained"], reviewers["r2"]["abstained"]) == (2, 1)
    assert reviewers["r1"]["abstentions_by_condition"] == {"clean": 2, "told_pass": 2}
    assert reviewers["r2"]["abstentions_by_condition"] == {"clean": 1}
    assert reviewers["r1"]["seals"] == {"sealed": 0, "verdict_in_content": 0, "failed": 0,
                                      "absent": 6}

    other = report["other_conditions"]
    assert (other["default_condition"], other["abstain_scoring"]) == ("clean", rule)
    assert "never pooled with the default condition" in other["label"]
    [told] = other["reviewers"]
    assert told == {"reviewer": "r1", "condition": "told_pass", "reviews": 6, "flagged": 1,
                    "abstained": 2, "excluded": expected["excluded"]["r1 told_pass"],
                    "groups": {"main": {"current": reviewer_score(rule, "r1 told_pass")}}}

    # Cells (r1, clean), (r1, told_pass), (r2, clean): three pairs, one of two models under one
    # condition (test_report_pairs_resampled.py checks the others).
    pairs = report["model_reviewers"]["pairs"]
    assert len(pairs) == 3
    [pair] = [p for p in pairs if p["shown_by_default"]]
    want = expected["pair"]
    assert report["model_reviewers"]["condition"] == "clean"
    assert pair == {"reviewers": ["r1", "r2"], "conditions": ["clean", "clean"],
                    "same_model": False, "same_condition": True, "shown_by_default": True,
                    "copies": want["copies"],
                    "dropped_abstentions": want["dropped"],
                    "catch_rate": expected_score(want["catch"], (0, 0), 0)["recall"],
                    "tnr": expected_score((0, 0), want["tnr"], 0)["tnr"]}
    # The told_pass guess (right) is not counted; the clean one (wrong) is.
    [guesser] = report["model_reviewers"]["authorship"]["reviewers"]
    assert (guesser["reviewer"], guesser["guesses"], guesser["model"]["k"]) == ("r1", 1, 0)

    # The records: tasks, each copy's task, each review's condition and how it was scored.
    assert [(t["id"], t["title"], t["format"], t["cluster"], t["copies"]) for t in report["tasks"]] == [
        ("t1", "add", "markdown", "arith", 2), ("t2", "", "markdown", None, 2),
        ("t3", "", "text", None, 2)]
    assert report["tasks"][1]["statement"] == "Write *add* again."
    assert {c["id"]: c["task"] for c in report["copies"]} == {c: t for c, t, *_ in COPIES}
    assert {c["id"]: c["cluster"] for c in report["copies"]}["c1"] == "arith"  # the task's
    reviews = {(r["reviewer"], r["copy"], r["condition"]): r for r in report["reviews"]}
    assert len(reviews) == 18
    assert sum(r["default_condition"] for r in reviews.values()) == 12
    abstention = reviews[("r1", "c3", "clean")]
    assert abstention["verdict"] == "abstain"
    assert (abstention["scored_as"], abstention["correct"]) == (
        ("pass", False) if rule == "not_flagged" else (None, None))
    findings = {f["id"]: f for f in report["findings"]}
    assert findings["f1"]["raised_by"] == ["r1"]  # default condition: the phase-2 table's
    assert findings["f1"]["raised_by_conditions"] == [
        {"reviewer": "r1", "condition": "clean"}, {"reviewer": "r1", "condition": "told_pass"}]
    assert findings["f2"]["raised_by"] == ["r2"]

    frozen = report["protocol"]["frozen"]
    assert frozen["blindjudge_protocol"] == 2
    assert [t["key"] for t in frozen["tasks"]] == ["t1", "t2", "t3"]
    assert [t["statement_sha256"] for t in frozen["tasks"]] == [
        t["statement_sha256"] for t in report["tasks"]]

    # Every form: the JSON and the anonymised export validate and verify, the CSV has the task
    # and condition of each row, the HTML shows the tasks and the other conditions.
    for form in (report, anonymise(report)):
        assert schema_errors(schema, exported(form)) == []
        assert verify(exported(form)) == ([], RUN2_CHECKS)
    rows = csv_rows(report)
    model = [r for r in rows if r["rater_kind"] == "model"]
    assert len(model) == 18
    assert {(r["rater"], r["copy"], r["condition"], r["task"], r["verdict"]) for r in model} == {
        (reviewer, c, condition or "clean", c_task, verdict)
        for reviewer, c, condition, verdict in REVIEWS
        for copy_id, c_task, *_ in COPIES if copy_id == c}
    human = [r for r in rows if r["rater_kind"] == "human"]
    assert {(r["copy"], r["task"], r["condition"]) for r in human} == {
        (c, t, "") for c, t, *_ in COPIES}
    page = to_html(report)
    assert html.escape(REPORT_META_CSP) in page and "<script" not in page
    assert "3 tasks, 6 copies, 2 builders." in page
    assert 'id="other-conditions"' in page and "Not pooled with the default condition." in page
    # the mapping: each copy's task and builder, named by model
    assert '<th scope="row">c3</th><td>t2</td><td>gpt-4o-2024-08-06<span class="id"> b1</span>' in page


@pytest.mark.django_db
def test_verify_names_a_changed_task(host):
    report = exported(build_report(revealed_session(host, run2_bundle("not_flagged"))))
    report["tasks"][0]["title"] = "subtract"
    assert verify(report)[0] == [
        "tasks[t1]: the statement, title, format and cluster do not hash to the manifest's entry"]
    report = exported(build_report(revealed_session(host, run2_bundle("not_flagged"))))
    report["tasks"][2]["statement"] = "Plain sub."
    assert verify(report)[0] == [
        "tasks[t3].statement_sha256 does not match the statement",
        "tasks[t3]: the statement, title, format and cluster do not hash to the manifest's entry"]
    report = exported(build_report(revealed_session(host, run2_bundle("not_flagged"))))
    report["copies"][0]["task"] = "t9"
    assert verify(report)[0] == ["copies c1: their task is not among the published tasks",
                                 "copies[c1].task is 't9'; the manifest binds the copy to task 't1'"]


def frozen_as_protocol_1(session: Session) -> Session:
    """The session as a session frozen before the run/2 change is after the migration: its
    protocol (and the hash judges were shown) of version 1, one `task` string and items without
    a task, left as it was; the run's record the run/1 object. Written to the row directly, as
    the migration leaves it: no service makes an old protocol."""
    protocol = dict(session.protocol)
    protocol["blindjudge_protocol"] = 1
    protocol["task"] = session.run.tasks.get().statement
    del protocol["tasks"]
    protocol["items"] = [{k: v for k, v in item.items() if k != "task"}
                         for item in protocol["items"]]
    Session.objects.filter(pk=session.pk).update(protocol=protocol,
                                                 protocol_sha256=canonical_sha256(protocol))
    session.refresh_from_db()
    return session


# run 3 + tasks (1 statement + the run/1 statement + copies' tasks) + builders (1 + 3)
# + reviewers (1 + 2) + copies (1 + 6) + bindings (1 + 6) + protocol 1 + one judge (2 + 6 × 2)
RUN1_CHECKS = 3 + 3 + 4 + 3 + 7 + 7 + 1 + (2 + 6 * 2)


@pytest.mark.django_db
@pytest.mark.parametrize("protocol_version", [2, 1])
def test_a_run1_session_still_exports_and_verifies(host, schema, protocol_version):
    session = revealed_session(host, make_bundle())
    if protocol_version == 1:
        session = frozen_as_protocol_1(session)
    report = build_report(session)
    assert report["protocol"]["frozen"]["blindjudge_protocol"] == protocol_version
    assert report["run"]["record"] == {"name": "add() across three models",
                                       "task": "Write add(a, b)."}
    assert [(t["id"], t["statement"], t["copies"]) for t in report["tasks"]] == [
        ("task", "Write add(a, b).", 6)]
    assert {c["task"] for c in report["copies"]} == {"task"}
    assert {r["condition"] for r in report["reviews"]} == {"clean"}
    assert report["other_conditions"]["reviewers"] == []
    for form in (report, anonymise(report)):
        assert schema_errors(schema, exported(form)) == []
        assert verify(exported(form)) == ([], RUN1_CHECKS)
    assert {r["task"] for r in csv_rows(report)} == {"task"}
    assert "1 task, 6 copies, 3 builders." in to_html(report)
    tampered = exported(report)
    tampered["tasks"][0]["statement"] = "Write sub(a, b)."
    assert verify(tampered)[0] == [
        "tasks[task].statement_sha256 does not match the statement",
        'tasks: a run/1 bundle gives one task, "task", whose statement is the run object\'s task']
