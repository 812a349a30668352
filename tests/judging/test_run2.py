"""Runs of many tasks (format blindjudge.run/2): what the import stores, what each judge sees of
tasks, conditions and abstentions, and the null rule of both formats (issue 13)."""

import json

import pytest

from judging.models import Copy, FindingRaise, Review, TaskRender
from judging.selectors.host import blinding_check
from judging.services import phase_lock, run_import
from tests.worlds import (
    a_run,
    a_session,
    answer_all,
    client_as,
    invite_and_join,
    make_bundle,
    make_run2_bundle,
)

pytestmark = pytest.mark.django_db


def page(session, judge, code) -> str:
    return client_as(judge).get(f"/s/{session.url_id}/i/{code}/").content.decode()


def code_of(judge, copy_id: str) -> str:
    return judge.assignments.get(item__copy__bundle_id=copy_id).code


def test_a_run2_bundle_imports_its_tasks_conditions_abstentions_and_raisers(host):
    run = a_run(host, make_run2_bundle())
    assert run.format == "blindjudge.run/2"
    assert run.default_condition == "clean" and run.abstain_scoring == "not_flagged"
    assert run.bundle_run == make_run2_bundle()["run"]
    assert [(t.bundle_id, t.title, t.format, t.cluster) for t in run.tasks.all()] == [
        ("t-add", "add(a, b)", "markdown", "arith"), ("t-sub", "", "markdown", "")]
    copies = {c.bundle_id: c for c in run.copies.select_related("task")}
    assert {k: c.task.bundle_id for k, c in copies.items()} == {
        "c1": "t-add", "c2": "t-add", "c3": "t-add", "c4": "t-sub", "c5": "t-sub", "c6": "t-sub"}
    # A copy's cluster defaults to its task's; a null defect is no defect.
    assert (copies["c1"].cluster, copies["c1"].defect) == ("arith", "")
    assert copies["c4"].cluster == ""
    reviews = {(r.reviewer.bundle_id, r.copy.bundle_id, r.condition): r
               for r in Review.objects.filter(run=run).select_related("reviewer", "copy")}
    assert set(reviews) == {("r1", "c1", "clean"), ("r1", "c2", "clean"), ("r1", "c1", "told_pass"),
                            ("r1", "c2", "told_pass"), ("r2", "c1", "clean"), ("r2", "c2", "clean")}
    abstained = reviews["r2", "c1", "clean"]
    assert (abstained.verdict, abstained.reason, abstained.authorship_guess) == ("abstain", "", "")
    raises = {(r.finding.bundle_id, r.reviewer.bundle_id, r.condition)
              for r in FindingRaise.objects.filter(finding__run=run).select_related("finding", "reviewer")}
    assert raises == {("f1", "r2", "clean"), ("f1", "r1", "told_pass"), ("f2", "r1", "clean")}


@pytest.mark.parametrize("field, value", [("defect", None), ("cluster", None)])
def test_an_explicit_null_in_a_run1_copy_means_absent_not_a_crash(host, field, value):
    bundle = make_bundle()
    bundle["copies"][0][field] = value
    bundle["reviews"][0]["authorship_guess"] = None
    run = a_run(host, bundle)
    copy = Copy.objects.get(run=run, bundle_id=bundle["copies"][0]["id"])
    assert getattr(copy, field) == ""
    assert run.reviews.get(position=0).authorship_guess == ""
    assert run.tasks.get().statement == bundle["run"]["task"]


def test_every_null_optional_field_of_a_run1_bundle_imports(host):
    bundle = make_bundle()
    for copy in bundle["copies"]:
        copy.update(defect=None, cluster=None)
    for review in bundle["reviews"]:
        review.update(authorship_guess=None, request=None, request_sha256=None)
    bundle.update(request_keys=None)
    run = run_import(host=host, raw=json.dumps(bundle).encode(), actor="test")
    assert run.copies.count() == len(bundle["copies"])
    assert set(run.reviews.values_list("seal", flat=True)) == {"absent"}


def test_each_item_shows_its_own_task_and_only_default_condition_reviews_in_phase_2(host):
    run = a_run(host, make_run2_bundle())
    session = a_session(run, "open")
    assert TaskRender.objects.filter(session=session).count() == 2
    judge = invite_and_join(session, "Reader").judge
    add_page = page(session, judge, code_of(judge, "c2"))
    sub_page = page(session, judge, code_of(judge, "c5"))
    assert "Write add(a, b)." in add_page and "sub(a, b)" not in add_page
    assert "<em>sub(a, b)</em>" in sub_page and "Write add" not in sub_page
    assert "add(a, b)</strong>" in add_page  # the task's title above its statement
    answer_all(judge, 1)
    phase_lock(judge=judge, phase=1)
    phase2 = page(session, judge, code_of(judge, "c2"))
    assert "subtracts" in phase2 and "wrong sign" in phase2
    assert "told-pass-reason-marker" not in phase2, "a review under another condition was shown"
    with_abstention = page(session, judge, code_of(judge, "c1"))
    assert "No verdict" in with_abstention  # the judge pages' one vocabulary (issue 16)
    assert "the prior reviewer passed it" not in with_abstention


def test_a_findings_session_names_only_the_default_condition_raisers(host):
    run = a_run(host, make_run2_bundle())
    session = a_session(run, "open", kind="findings")
    judge = invite_and_join(session, "Reader").judge
    answer_all(judge, 1, value="real")
    phase_lock(judge=judge, phase=1)
    f1 = page(session, judge, judge.assignments.get(item__finding__bundle_id="f1").code)
    # r1 raised f1 only when told a prior verdict; r2 (Reviewer B) raised it clean.
    assert "Raised by: Reviewer B." in f1


def test_the_blinding_check_scans_every_task_and_says_which(host):
    bundle = make_run2_bundle()
    bundle["tasks"][1]["statement"] += " Claude wrote the reference."
    bundle["tasks"][0]["title"] = "add, as Gemini would"
    session = a_session(a_run(host, bundle), "draft")
    texts = {t["where"]: t for t in blinding_check(session)["texts"]}
    assert {"task t-add title", "task t-add", "task t-sub", "rubric"} >= set(texts) >= {
        "task t-add title", "task t-sub"}
    assert [m["term"] for m in texts["task t-sub"]["matches"]]
    assert [m["term"] for m in texts["task t-add title"]["matches"]]


def test_the_protocol_names_each_items_task(host):
    session = a_session(a_run(host, make_run2_bundle()), "open")
    tasks = {item["key"]: item["task"] for item in session.protocol["items"]}
    assert tasks == {"c1": "t-add", "c2": "t-add", "c3": "t-add", "c4": "t-sub", "c5": "t-sub",
                     "c6": "t-sub"}
    assert [t["key"] for t in session.protocol["tasks"]] == ["t-add", "t-sub"]


def test_the_demo_is_a_run2_run_of_two_tasks_with_a_second_condition_for_one_reviewer(host):
    from judging.demo import demo_bundle  # noqa: PLC0415 - the demo's data, nothing else uses it here

    run = a_run(host, demo_bundle())
    assert run.format == "blindjudge.run/2" and run.tasks.count() == 2
    conditions = {(r, c) for r, c in run.reviews.values_list("reviewer__bundle_id", "condition")}
    assert conditions == {("r-qwen", "clean"), ("r-mini", "clean"), ("r-mini", "told_pass")}
    assert run.reviews.filter(verdict="abstain").count() == 1
    # Both tasks have a copy from more than one builder, so builders compare within a task.
    for task in run.tasks.all():
        assert task.copies.values("builder").distinct().count() > 1
