"""Sessions over many tasks (issue 13 item 2): the balanced allocation's spread across tasks and
builders at admission, by-task sessions (service, command line, host's form, protocol), and the
report's verification of a by-task order."""

import io
import json
from collections import Counter

import pytest
from django.core.management import call_command
from django.urls import reverse

from blindjudge.errors import Invalid
from content.draws import draw_order_by_task
from host.judge_rows import _row_contexts  # the rows the host's dashboard draws
from judging.models import Assignment, Session
from reports.build import build_report
from reports.export import to_json
from reports.verify import verify
from tests.worlds import GOOD, a_run, a_session, advance, answer_all, client_as, invite_and_join
from tests.worlds import make_run2_bundle as run2

SEED = "cd" * 32


def many_tasks_bundle(tasks: int = 10, builders: int = 3) -> dict:
    """A run/2 bundle of `tasks` tasks, each built once by every one of `builders` builders."""
    return run2(
        tasks=[{"id": f"task-{t:02d}", "statement": f"Write function number {t}."}
               for t in range(tasks)],
        builders=[{"id": f"b{b}", "model": f"model-{b}", "family": f"Org{b}"}
                  for b in range(builders)],
        copies=[{"id": f"c{t:02d}{b}", "task": f"task-{t:02d}", "builder": f"b{b}",
                 "format": "text", "content": f"{GOOD}# {t} {b}\n",
                 "truth": "known_good" if (t + b) % 2 else "seeded_defect"}
                for t in range(tasks) for b in range(builders)],
        reviews=[], findings=[])


@pytest.fixture
def many_tasks_run(host):
    return a_run(host, many_tasks_bundle())


def items_of(judge):
    """The judge's (item key, task, builder) in position order."""
    return list(judge.assignments.order_by("position").values_list(
        "item__key", "item__task__bundle_id", "item__copy__builder__bundle_id"))


def per_item_counts(session):
    counts = Counter(Assignment.objects.filter(judge__session=session)
                     .values_list("item__key", flat=True))
    return [counts.get(key, 0) for key in session.items.values_list("key", flat=True)]


# --- The balanced allocation's spread ----------------------------------------------------------

def test_each_judge_is_spread_across_tasks_and_builders_and_items_stay_balanced(many_tasks_run):
    session = a_session(many_tasks_run, "open", items_per_judge=6, draw_seed=SEED)
    for i in range(12):
        judge = invite_and_join(session, name=f"J{i}").judge
        mine = items_of(judge)
        assert len(mine) == 6
        assert len({task for _, task, _ in mine}) == 6
        assert Counter(builder for *_, builder in mine) == {"b0": 2, "b1": 2, "b2": 2}
        counts = per_item_counts(session)
        assert max(counts) - min(counts) <= 1, counts


# --- By task: the setting ----------------------------------------------------------------------

def test_by_task_is_refused_on_a_findings_session_and_on_a_run_of_one_task(host, run):
    with pytest.raises(Invalid, match="by task: only a copies session"):
        a_session(run, kind="findings", by_task=True)
    with pytest.raises(Invalid, match=f"by task: run {run.pk} has 1 task, so every judge would "
                                      "get every copy"):
        a_session(run, by_task=True)
    assert not Session.objects.exists()


def test_the_protocol_says_by_task_only_when_set(many_tasks_run):
    plain = a_session(many_tasks_run, "open")
    by_task = a_session(many_tasks_run, "open", by_task=True)
    assert "by_task" not in plain.protocol
    assert by_task.protocol["by_task"] is True


def test_create_session_by_task_from_the_command_line(many_tasks_run):
    out = io.StringIO()
    call_command("create_session", str(many_tasks_run.pk), "--kind", "copies",
                       "--by-task", "--items-per-judge", "6", "--json", stdout=out)
    session = Session.objects.get(pk=json.loads(out.getvalue())["session"])
    assert (session.by_task, session.items_per_judge) == (True, 6)


def test_the_hosts_new_session_form_has_the_by_task_box(host, many_tasks_run):
    alice = client_as(host)
    page = alice.get(reverse("host:run", kwargs={"run_id": many_tasks_run.pk})).content.decode()
    assert 'name="by_task"' in page
    alice.post(reverse("host:session_create", kwargs={"run_id": many_tasks_run.pk}), {
        "kind": "copies", "reviewer_display": "letters", "items_per_judge": "6",
        "by_task": "on", "guest_cap": "50"})
    session = Session.objects.get()
    assert session.by_task and session.items_per_judge == 6


# --- By task: allocation and order -------------------------------------------------------------

def test_a_by_task_judge_gets_whole_tasks_balanced_and_interleaved(many_tasks_run):
    session = a_session(many_tasks_run, "open", items_per_judge=7, by_task=True, draw_seed=SEED)
    judged_tasks = Counter()
    for i in range(9):
        judge = invite_and_join(session, name=f"J{i}").judge
        mine = items_of(judge)
        tasks = Counter(task for _, task, _ in mine)
        # 7 items per judge: two whole tasks of three copies fit, a third does not.
        assert len(mine) == 6 and set(tasks.values()) == {3}
        assert {builder for *_, builder in mine} == {"b0", "b1", "b2"}
        assert all(mine[p][1] != mine[p - 1][1] for p in range(1, 6))  # never two of one task in a row
        assert [key for key, *_ in mine] == draw_order_by_task(
            judge.order_seed, {key: task for key, task, _ in mine})
        judged_tasks.update(tasks)
        per_task = [judged_tasks.get(f"task-{t:02d}", 0) // 3 for t in range(10)]
        assert max(per_task) - min(per_task) <= 1, per_task


def test_by_task_without_a_limit_gives_every_copy_in_the_interleaved_order(many_tasks_run):
    session = a_session(many_tasks_run, "open", by_task=True)
    judge = invite_and_join(session).judge
    mine = items_of(judge)
    assert len(mine) == 30
    assert all(mine[p][1] != mine[p - 1][1] for p in range(1, 30))


# --- By task: the report recomputes the order --------------------------------------------------

@pytest.fixture
def by_task_report(many_tasks_run):
    session = a_session(many_tasks_run, "open", items_per_judge=6, by_task=True, draw_seed=SEED)
    judges = [invite_and_join(session, name=f"J{i}").judge for i in range(3)]
    for judge in judges:
        answer_all(judge, 1, lock=True)
    session = advance(session, "revealed")
    return json.loads(to_json(build_report(session)))


def test_verify_recomputes_a_by_task_order(by_task_report):
    problems, checks = verify(by_task_report)
    assert problems == [] and checks > 0
    assert by_task_report["protocol"]["frozen"]["by_task"] is True


def test_verify_fails_on_a_by_task_order_with_one_position_moved(by_task_report):
    data = by_task_report
    mine = sorted((a for a in data["assignments"] if a["judge"] == "J01"),
                  key=lambda a: a["position"])
    # Swap the first two positions' items (and what goes with them), keeping the positions.
    first, second = mine[0], mine[1]
    for field in ("item", "copy", "builder", "order_key", "code"):
        first[field], second[field] = second[field], first[field]
    problems, _ = verify(data)
    assert "judges[J01]: positions are not the order drawn from the order seed (by task)" in problems


def test_verify_fails_when_a_by_task_judge_holds_part_of_a_task(by_task_report):
    data = by_task_report
    frozen_items = data["protocol"]["frozen"]["items"]
    # The report's protocol is what is verified: a task with one more item than J01 was given
    # shows as a task held in part (and the protocol's hash no longer matches).
    mine = {a["item"] for a in data["assignments"] if a["judge"] == "J01"}
    task = next(i["task"] for i in frozen_items if i["key"] in mine)
    frozen_items.append({"key": "extra", "task": task, "copy_sha256": "0" * 64})
    problems, _ = verify(data)
    assert f"judges[J01]: a by-task judge holds only part of task {task}" in problems
    assert "protocol.sha256 does not match the frozen protocol" in problems


def test_the_hosts_dashboard_counts_each_by_task_judges_own_items(many_tasks_run):
    session = a_session(many_tasks_run, "open", items_per_judge=7, by_task=True)
    invite_and_join(session)
    _state, rows = _row_contexts(session.pk, None, "csrf")
    assert [(row["items"], row["row"]["items"]) for row in rows] == [("6", 6)]
