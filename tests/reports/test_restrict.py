"""reports.restrict.without_tasks, without_items, without_judges: a session's data without some
tasks (items, judges) is the data of a session that never had them. Checked by building both on
hand-made records (tests/reports/sections/arrays.py) and comparing what the report's sections
compute from each."""

import hashlib
from dataclasses import replace

import numpy as np
import pytest

from reports.restrict import without_items, without_judges, without_tasks
from reports.sections.builders import builders_compared
from reports.sections.exclusions import NO_RULE, preregistered_exclusions
from reports.sections.scores import judge_scores, reviewer_scores
from tests.reports.sections.arrays import (
    a_session,
    builder,
    bundle,
    copy,
    item,
    judge,
    report_data,
    review,
    reviewer,
    task,
)

pytestmark = pytest.mark.pure

B1, B2 = builder("b1", "gpt-4o", "OpenAI"), builder("b2", "claude", "Anthropic")
R1 = reviewer("r1", "qwen", "Alibaba")


def world(n_tasks: int, seed: int = 3):
    """n_tasks tasks, a copy of each by each builder (random truth), a control per task, one
    reviewer's review of every copy, three judges' verdicts in both phases (random)."""
    rng = np.random.default_rng(seed)
    tasks = [task(f"t{t}") for t in range(n_tasks)]
    copies, reviews = [], []
    for t in tasks:
        for b in (B1, B2):
            truth = "tests_pass" if rng.random() < (0.7 if b is B1 else 0.4) else "tests_fail"
            copies.append(copy(f"{t.bundle_id}-{b.bundle_id}", t, b, truth))
        copies.append(copy(f"{t.bundle_id}-ctl", t, B1, "seeded_defect"))
    for c in copies:
        reviews.append(review(R1, c, "fail" if rng.random() < 0.5 else "pass"))
    items = [item(c) for c in copies]
    marks = {p: ["".join(rng.choice(["P", "F", "p"]) for _ in items) for _ in range(3)]
             for p in (1, 2)}
    return tasks, copies, reviews, items, marks


def data_of(tasks, copies, reviews, items, marks, keep=None):
    keep = keep if keep is not None else {t.pk for t in tasks}
    columns = [i for i, it in enumerate(items)
               if next(c for c in copies if c.pk == it.copy_id).task_id in keep]
    kept_copies = [c for c in copies if c.task_id in keep]
    return report_data(
        bundle(tasks=[t for t in tasks if t.pk in keep], builders=[B1, B2], copies=kept_copies,
               reviewers=[R1], reviews=[r for r in reviews if r.copy_id in {c.pk for c in kept_copies}]),
        items=[items[i] for i in columns], judges=JUDGES,
        grid={p: ["".join(line[i] for i in columns) for line in lines] for p, lines in marks.items()})


JUDGES = [judge("J1"), judge("J2"), judge("J3")]


@pytest.mark.parametrize("n_tasks, excluded", [(3, [1]), (24, [0, 5, 17]), (22, [21])])
def test_without_tasks_is_a_session_that_never_had_them(n_tasks, excluded):
    tasks, copies, reviews, items, marks = world(n_tasks)
    full = data_of(tasks, copies, reviews, items, marks)
    gone = {tasks[t].pk for t in excluded}
    restricted = without_tasks(full, gone)
    direct = data_of(tasks, copies, reviews, items, marks, keep={t.pk for t in tasks} - gone)
    assert restricted.items.keys == direct.items.keys
    assert [t.pk for t in restricted.bundle.tasks] == [t.pk for t in direct.bundle.tasks]
    for phase in (1, 2):
        assert np.array_equal(restricted.verdicts.says[phase], direct.verdicts.says[phase])
    assert np.array_equal(restricted.verdicts.paired, direct.verdicts.paired)
    # Every verdict on a kept item, in the same order, pointing at the same judge and item.
    assert [(restricted.verdicts.judge[n], restricted.items.keys[restricted.verdicts.item[n]],
             restricted.verdicts.phase[n], restricted.verdicts.value[n])
            for n in restricted.verdicts.sort] == [
        (direct.verdicts.judge[n], direct.items.keys[direct.verdicts.item[n]],
         direct.verdicts.phase[n], direct.verdicts.value[n]) for n in direct.verdicts.sort]
    assert {a[2] for a in restricted.assignments.rows} == {i.pk for i in direct.items.rows}
    # What the sections compute from each is the same, intervals and p-values included.
    assert builders_compared(restricted) == builders_compared(direct)
    assert judge_scores(restricted) == judge_scores(direct)
    assert reviewer_scores(restricted) == reviewer_scores(direct)
    # And the exclusion mattered: the full data say something else.
    assert builders_compared(full)["builders"] != builders_compared(restricted)["builders"]


def test_excluding_nothing_is_the_data_itself():
    full = data_of(*world(3))
    assert without_tasks(full, set()) is full


# --- The section that analyses again without what a preregistered rule excludes --------------------

RULE = {"name": "drop unclear tasks", "action": "exclude_tasks",
        "when": {"flag_share": ">0.5", "severity": ">=2"}}


def test_preregistered_exclusions_by_share_with_each_judge_left_out_of_their_own():
    tasks, copies, reviews, items, marks = world(24)
    full = data_of(tasks, copies, reviews, items, marks)
    with_rule = replace(full, session=a_session(protocol={"actions": [RULE]}))
    t = [task_.pk for task_ in tasks]
    # Every judge saw every task. Phase-1 flags (task, judge row, kind, severity, phase):
    # t0 J0 and J1 (2 of 3 > 0.5: out; without J0 or J1, 1 of 2: in); t3 J0 and J2 (likewise);
    # t2 J1 at severity 3 and J2 at 1 (1 of 3 counts: in); t5 flagged by two, but in phase 2.
    flags = [(t[0], 0, "tests_unfair", 3, 1), (t[0], 1, "underspecified", 2, 1),
             (t[3], 0, "other", 3, 1), (t[3], 2, "tests_unfair", 2, 1),
             (t[2], 1, "tests_unfair", 3, 1), (t[2], 2, "tests_unfair", 1, 1),
             (t[5], 0, "tests_unfair", 3, 2), (t[5], 1, "tests_unfair", 3, 2)]
    section = preregistered_exclusions(with_rule, flags)
    assert (section["stated"], section["rules"], section["excluded_tasks"]) == (True, [RULE], ["t0", "t3"])

    def without(*numbers):
        return data_of(tasks, copies, reviews, items, marks,
                       keep=set(t) - {t[n] for n in numbers})

    assert section["builders_compared"] == builders_compared(without(0, 3))
    assert section["reviewers"] == reviewer_scores(without(0, 3))
    # Leave-one-out: J0's own flags made both exclusions, so J0 is scored on every task; J1 on
    # all but t3 (J0 and J2 flagged it); J2 on all but t0.
    expected = [([], judge_scores(full)[0]), (["t3"], judge_scores(without(3))[1]),
                (["t0"], judge_scores(without(0))[2])]
    for entry, (own, scores) in zip(section["judges"], expected, strict=True):
        assert (entry["excluded_tasks"], entry["phases"]) == (own, scores["phases"])
    assert section["judges"][0]["phases"] != judge_scores(without(0, 3))[0]["phases"]


def test_no_preregistered_rule_no_analysis_again():
    full = data_of(*world(3))
    section = preregistered_exclusions(full, [(full.bundle.tasks[0].pk, 0, "other", 3, 1)])
    assert (section["stated"], section["why"], section["excluded_tasks"]) == (False, NO_RULE, [])
    assert section["builders_compared"] is None and section["judges"] == []


# --- Items and judges left out (issue 30 item 5: screening controls, excluded judges) ------------

def session_of(tasks, copies, reviews, items, marks, *, columns=None, judges=None):
    """The run whole; the session with only the items in `columns` and the judges (rows of
    JUDGES) in `judges`."""
    columns = columns if columns is not None else list(range(len(items)))
    judges = judges if judges is not None else list(range(len(JUDGES)))
    return report_data(
        bundle(tasks=tasks, builders=[B1, B2], copies=copies, reviewers=[R1], reviews=reviews),
        items=[items[i] for i in columns], judges=[JUDGES[j] for j in judges],
        grid={p: ["".join(lines[j][i] for i in columns) for j in judges]
              for p, lines in marks.items()})


def same_sections(restricted, direct):
    for phase in (1, 2):
        assert np.array_equal(restricted.verdicts.says[phase], direct.verdicts.says[phase])
    assert np.array_equal(restricted.verdicts.paired, direct.verdicts.paired)
    assert [(restricted.judges.pseudonyms[restricted.verdicts.judge[n]],
             restricted.items.keys[restricted.verdicts.item[n]], restricted.verdicts.phase[n],
             restricted.verdicts.value[n]) for n in restricted.verdicts.sort] == [
        (direct.judges.pseudonyms[direct.verdicts.judge[n]],
         direct.items.keys[direct.verdicts.item[n]], direct.verdicts.phase[n],
         direct.verdicts.value[n]) for n in direct.verdicts.sort]
    assert builders_compared(restricted) == builders_compared(direct)
    assert judge_scores(restricted) == judge_scores(direct)
    assert reviewer_scores(restricted) == reviewer_scores(direct)


@pytest.mark.parametrize("n_tasks, left_out", [(3, [2, 5]), (24, [0, 7, 8, 40, 71])])
def test_without_items_is_a_session_that_never_had_them_on_the_same_run(n_tasks, left_out):
    world_ = world(n_tasks)
    full = session_of(*world_)
    items = world_[3]
    restricted = without_items(full, {items[i].key for i in left_out})
    kept = [i for i in range(len(items)) if i not in left_out]
    direct = session_of(*world_, columns=kept)
    assert restricted.items.keys == direct.items.keys
    assert restricted.bundle is full.bundle  # the run's copies and reviews all stay
    same_sections(restricted, direct)
    assert judge_scores(full) != judge_scores(restricted)
    assert without_items(full, set()) is full


@pytest.mark.parametrize("left_out", [[1], [0, 2]])
def test_without_judges_is_a_session_they_never_joined(left_out):
    world_ = world(24)
    full = session_of(*world_)
    restricted = without_judges(full, left_out)
    direct = session_of(*world_, judges=[j for j in range(3) if j not in left_out])
    assert restricted.judges.pseudonyms == direct.judges.pseudonyms
    assert [r[1] for r in restricted.assignments.rows] == [r[1] for r in direct.assignments.rows]
    assert np.array_equal(restricted.assignments.thirds, direct.assignments.thirds)
    same_sections(restricted, direct)
    assert without_judges(full, []) is full


MISSED = {"name": "missed the seeded defects", "action": "exclude_judge",
          "when": {"judge_recall_controls": "<0.5"}, "screening_share": 0.5}


def test_a_judge_given_no_screening_control_is_kept_and_every_score_leaves_them_out():
    tasks, copies, reviews, items, marks = world(3)
    ctl = [i for i, it in enumerate(items) if it.key.endswith("-ctl")]  # 3 seeded defects
    # J1 and J2 pass every control in phase 1 (locked); J3 was given none of them.
    marks = {p: [("".join("P" if i in ctl and p == 1 else m for i, m in enumerate(line))
                  if j < 2 else "".join("." if i in ctl else m for i, m in enumerate(line)))
                 for j, line in enumerate(lines)] for p, lines in marks.items()}
    seed = "7a" * 32
    data = report_data(
        bundle(tasks=tasks, builders=[B1, B2], copies=copies, reviewers=[R1], reviews=reviews),
        items=items, judges=JUDGES, grid=marks,
        orders={2: [i for i in range(len(items)) if i not in ctl]},
        session=a_session(protocol={"actions": [MISSED], "screening": {
            "share": 0.5, "seed_sha256": hashlib.sha256(bytes.fromhex(seed)).hexdigest()}}))
    section = preregistered_exclusions(replace(data, screening_seed=seed), [])
    # Half of 3, rounded up: 2 screen.
    assert section["screening"]["controls"]["seeded_defect"] == {"controls": 3, "screening": 2}
    assert section["excluded_judges"] == [{"judge": "J1", "rules": [MISSED["name"]]},
                                          {"judge": "J2", "rules": [MISSED["name"]]}]
    figure = section["screened"][2]["rules"][0]
    assert (figure["value"], figure["k"], figure["n"], figure["excludes"]) == (None, 0, 0, False)
    expected = judge_scores(without_items(data, set(section["screening"]["items"])))
    assert [j["phases"] for j in section["judges"]] == [j["phases"] for j in expected]
    assert section["judges"][0]["phases"] != judge_scores(data)[0]["phases"]
    # J3 alone compared the builders again.
    assert section["builders_compared"] == builders_compared(without_judges(data, [0, 1]))
