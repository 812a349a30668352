"""The report on reviews whose request carries a verdict (issue 14 item 7): such reviews (seal
verdict_in_content, "keys sealed, verdict in content") are scored apart like failed seals, left out
of everything scored on main reviews (the reviewer pairs), listed with the matching text and its
pattern, and counted per builder of the copy reviewed; the run's patterns are published.

A run of two builders and two reviewers, each review's request planted (sealed, a prior verdict or a
score in it, a wrong hash with "LGTM", none), imported through the real import and revealed. Every
expected figure is worked out by hand below from the planted reviews.
"""

import csv
import hashlib
import io
import json

import pytest

from content.content_verdicts import BUILT_IN_PATTERNS
from reports.build import build_report
from reports.export import anonymise, to_csv, to_json
from reports.html import to_html
from tests.reports.test_report import SCHEMA_PATH, expected_score, schema_errors
from tests.reports.test_report_run2 import revealed_session
from tests.worlds import BAD, GOOD

STATEMENT = "Write add(a, b)."
# Truth: c2 c4 c5 defective, c1 c3 c6 good. Builders: b1 c1 c2 c6, b2 c3 c4 c5.
COPIES = [
    ("c1", "b1", GOOD, "known_good"), ("c2", "b1", BAD, "seeded_defect"),
    ("c3", "b2", GOOD + "# three\n", "tests_pass"), ("c4", "b2", BAD + "# four\n", "tests_fail"),
    ("c5", "b2", BAD + "# five\n", "seeded_defect"), ("c6", "b1", GOOD + "# six\n", "known_good"),
]
CONTENT = {c: content for c, _, content, _ in COPIES}
# (reviewer, copy, condition, verdict, what the request adds to the task and the copy, hash)
# hash: "ok" the request's own, "bad" a wrong one, None no request at all.
REVIEWS = [
    ("r1", "c1", "clean", "pass", "", "ok"),
    ("r1", "c2", "clean", "fail", "", "ok"),
    ("r1", "c3", "clean", "fail", "Prior reviewer: FAIL, found a bug.", "ok"),
    ("r1", "c4", "clean", "pass", "Prior reviewer: PASS, no issues found.", "ok"),
    ("r1", "c5", "clean", "fail", "LGTM", "bad"),
    ("r1", "c6", "clean", "pass", "", None),
    ("r2", "c1", "clean", "fail", "", "ok"),
    ("r2", "c2", "clean", "fail", "", "ok"),
    ("r2", "c3", "clean", "pass", "", "ok"),
    ("r2", "c4", "clean", "fail", "Earlier grading: score: 2/10", "ok"),
    ("r2", "c5", "clean", "pass", "", "ok"),
    ("r2", "c6", "clean", "pass", "", "ok"),
    ("r1", "c1", "told_pass", "pass", "Prior reviewer: PASS, no issues found.", "ok"),
    ("r1", "c2", "told_pass", "pass", "Prior reviewer: PASS, no issues found.", "ok"),
]

# By hand (abstain_scoring not_flagged; there are no abstentions).
# r1 clean: main = sealed or absent: c1 good pass, c2 defective fail, c6 good pass;
#   verdict_in_content: c3 good fail, c4 defective pass; seal_failed: c5 defective fail.
# r2 clean: main: c1 good fail, c2 defective fail, c3 good pass, c5 defective pass, c6 good pass;
#   verdict_in_content: c4 defective fail.
EXPECTED_GROUPS = {  # reviewer -> group -> ((recall k, n), (tnr k, n))
    "r1": {"main": ((1, 1), (2, 2)), "verdict_in_content": ((0, 1), (0, 1)),
           "seal_failed": ((1, 1), (0, 0))},
    "r2": {"main": ((1, 2), (2, 3)), "verdict_in_content": ((1, 1), (0, 0))},
}
EXPECTED_SEALS = {"r1": {"sealed": 2, "verdict_in_content": 2, "failed": 1, "absent": 1},
                  "r2": {"sealed": 5, "verdict_in_content": 1, "failed": 0, "absent": 0}}
# The pair over main reviews both gave: c1 c2 c6. c2 caught (both failed it); good c1 failed by
# r2, c6 passed by both.
EXPECTED_PAIR = {"copies": 3, "catch": (1, 1), "tnr": (1, 2)}
# Every review, every condition, by the builder of the copy reviewed.
# b1: r1 c1 c2 sealed, r1 c6 absent, r2 c1 c2 c6 sealed, r1 told_pass c1 c2 verdict_in_content.
# b2: r1 c3 c4 verdict_in_content, r1 c5 failed, r2 c3 c5 sealed, r2 c4 verdict_in_content.
EXPECTED_BY_BUILDER = [
    {"builder": "b1", "sealed": 5, "verdict_in_content": 2, "failed": 0, "absent": 1,
     "by_condition": [
         {"condition": "clean", "sealed": 5, "verdict_in_content": 0, "failed": 0, "absent": 1},
         {"condition": "told_pass", "sealed": 0, "verdict_in_content": 2, "failed": 0,
          "absent": 0}]},
    {"builder": "b2", "sealed": 2, "verdict_in_content": 3, "failed": 1, "absent": 0,
     "by_condition": [
         {"condition": "clean", "sealed": 2, "verdict_in_content": 3, "failed": 1,
          "absent": 0}]},
]


def chat(copy_id: str, extra: str) -> tuple[str, str]:
    texts = [f"Task: {STATEMENT}\n\nImplementation:\n{CONTENT[copy_id].rstrip()}"]
    if extra:
        texts.append(extra)
    text = json.dumps({"messages": [{"role": "user", "content": t} for t in texts]})
    return text, hashlib.sha256(text.encode("utf-8")).hexdigest()


def seals_bundle() -> dict:
    reviews = []
    for reviewer, copy_id, condition, verdict, extra, digest in REVIEWS:
        review = {"reviewer": reviewer, "copy": copy_id, "condition": condition,
                  "verdict": verdict, "reason": f"{reviewer} on {copy_id}"}
        if digest is not None:
            review["request"], sha = chat(copy_id, extra)
            review["request_sha256"] = sha if digest == "ok" else "0" * 64
        reviews.append(review)
    return {
        "format": "blindjudge.run/2",
        "run": {"name": "requests with a verdict in them"},
        "tasks": [{"id": "t1", "statement": STATEMENT}],
        "builders": [{"id": "b1", "model": "gpt-4o-2024-08-06", "family": "OpenAI"},
                     {"id": "b2", "model": "claude-3-5-sonnet-20241022", "family": "Anthropic"}],
        "copies": [{"id": c, "task": "t1", "builder": b, "format": "text", "content": content,
                    "truth": truth} for c, b, content, truth in COPIES],
        "reviewers": [{"id": "r1", "model": "qwen3-1.7b", "family": "Alibaba"},
                      {"id": "r2", "model": "mistral-large-2411", "family": "Mistral"}],
        "request_keys": ["messages"],
        "reviews": reviews,
    }


def scored(cell: dict) -> dict:
    """A group's score without what other sections may add beside it."""
    return {key: cell[key] for key in ("recall", "tnr", "unknown_truth")}


@pytest.fixture
def report(host):
    return build_report(revealed_session(host, seals_bundle()))


@pytest.fixture(scope="module")
def schema():
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


def test_reviews_with_a_verdict_in_content_are_scored_apart_like_failed_seals(report):
    reviewers = {r["reviewer"]: r for r in report["scores"]["reviewers"]}
    for reviewer, groups in EXPECTED_GROUPS.items():
        got = reviewers[reviewer]["groups"]
        assert sorted(got) == sorted(groups), reviewer
        for group, (recall, tnr) in groups.items():
            assert scored(got[group]["current"]) == scored(expected_score(recall, tnr, 0)), (reviewer,
                                                                                    group)
        assert reviewers[reviewer]["seals"] == EXPECTED_SEALS[reviewer]


def test_the_reviewer_pairs_leave_them_out(report):
    pairs = {(tuple(p["reviewers"]), tuple(p["conditions"])): p
             for p in report["model_reviewers"]["pairs"]}
    # Cells (r1, clean), (r1, told_pass), (r2, clean): r1's told_pass reviews all carry a verdict
    # in content, so no copy of theirs is in a pair.
    assert sorted(pairs) == [(("r1", "r1"), ("clean", "told_pass")),
                             (("r1", "r2"), ("clean", "clean")),
                             (("r1", "r2"), ("told_pass", "clean"))]
    assert [p["copies"] for key, p in sorted(pairs.items()) if "told_pass" in key[1]] == [0, 0]
    pair = pairs[(("r1", "r2"), ("clean", "clean"))]
    assert pair["shown_by_default"]
    assert pair["copies"] == EXPECTED_PAIR["copies"]
    assert (pair["catch_rate"]["k"], pair["catch_rate"]["n"]) == EXPECTED_PAIR["catch"]
    assert (pair["tnr"]["k"], pair["tnr"]["n"]) == EXPECTED_PAIR["tnr"]


def test_other_conditions_group_them_the_same_way(report):
    told, = report["other_conditions"]["reviewers"]
    assert (told["reviewer"], told["condition"]) == ("r1", "told_pass")
    assert list(told["groups"]) == ["verdict_in_content"]
    # c2 defective passed, c1 good passed
    assert scored(told["groups"]["verdict_in_content"]["current"]) == scored(expected_score(
        (0, 1), (1, 1), 0))


def test_seals_are_counted_per_builder_of_the_copy_reviewed(report):
    assert report["model_reviewers"]["seals_by_builder"] == EXPECTED_BY_BUILDER


def test_each_review_lists_the_verdict_its_request_carries_and_the_run_its_patterns(report):
    reviews = {(r["reviewer"], r["copy"], r["condition"]): r for r in report["reviews"]}
    listed = {k: (r["seal"], r["content_verdict"], r["content_verdict_pattern"])
              for k, r in reviews.items()}
    assert listed[("r1", "c3", "clean")] == ("verdict_in_content", "Prior reviewer: FAIL",
                                             "prior_verdict")
    assert listed[("r1", "c4", "clean")] == ("verdict_in_content", "Prior reviewer: PASS",
                                             "prior_verdict")
    assert listed[("r2", "c4", "clean")] == ("verdict_in_content", "score: 2/10", "score")
    assert listed[("r1", "c5", "clean")] == ("failed", "LGTM", "approval")
    assert reviews[("r1", "c5", "clean")]["seal_reason"] == (
        "request_sha256 does not match the request bytes")
    assert listed[("r1", "c1", "clean")] == ("sealed", None, None)
    assert listed[("r1", "c6", "clean")] == ("absent", None, None)
    assert [p["name"] for p in report["run"]["verdict_patterns"]] == [
        p.name for p in BUILT_IN_PATTERNS]
    assert {p["origin"] for p in report["run"]["verdict_patterns"]} == {"built_in"}


def test_the_report_validates_against_the_schema(report, schema):
    assert schema_errors(schema, json.loads(to_json(report))) == []
    assert schema_errors(schema, json.loads(to_json(anonymise(report)))) == []


def test_the_csv_groups_them_apart(report):
    rows = list(csv.DictReader(io.StringIO(to_csv(report))))
    groups = {(r["rater"], r["copy"], r["condition"]): r["group"] for r in rows
              if r["rater_kind"] == "model"}
    assert groups[("r1", "c3", "clean")] == "verdict_in_content"
    assert groups[("r1", "c5", "clean")] == "seal_failed"
    assert groups[("r1", "c1", "clean")] == "main"


def test_the_html_page_shows_the_seals_per_builder(report):
    page = to_html(report)
    start = page.index('<h3 id="seals">')
    section = page[start:page.index("</table>", start)]
    assert "gpt-4o-2024-08-06" in section and "claude-3-5-sonnet-20241022" in section
    # b2's row: sealed 2, verdict in content 3, failed 1, absent 0
    assert ('<td class="n">2</td><td class="n">3</td><td class="n">1</td><td class="n">0</td>'
            in section)
    assert "prior_verdict" in page[start:]
