"""Allocation and order over many tasks: the balanced pick's spread, by-task picks and orders."""

import random
from collections import Counter

import pytest

from content.draws import (
    balanced_pick,
    by_task_pick,
    draw_order_by_task,
    order_key,
    task_order_key,
)

# No database, no socket, no process: run once (tests/support/pure.py).
pytestmark = pytest.mark.pure

SEED = "5a" * 32


def grid(tasks: int, builders: int) -> dict[str, tuple[str, str]]:
    """One copy per (task, builder), as a SWE-bench run gives: item key -> (task, builder)."""
    return {f"t{t}-b{b}": (f"t{t}", f"b{b}") for t in range(tasks) for b in range(builders)}


def admit(groups, per_judge, judges, seed=SEED, removed=()):
    """Admit judges one after another as admission does, the counts each sees being the items of
    the judges before it (less those removed); yields each judge's pick and the counts after it."""
    keys = list(groups)
    picks = {}
    for number in range(1, judges + 1):
        counts = Counter(key for n, pick in picks.items() if n not in removed for key in pick)
        picks[number] = balanced_pick(keys, counts, per_judge, seed, number, groups)
        yield picks[number], Counter(key for n, pick in picks.items() if n not in removed
                                     for key in pick)


def spread(pick, groups):
    return (Counter(groups[key][0] for key in pick), Counter(groups[key][1] for key in pick))


def test_each_judge_gets_distinct_tasks_and_an_even_share_of_builders():
    groups = grid(10, 3)
    for pick, counts in admit(groups, 6, judges=40):
        tasks, builders = spread(pick, groups)
        assert len(pick) == 6 and len(tasks) == 6
        assert builders == {"b0": 2, "b1": 2, "b2": 2}
        assert max(counts[key] for key in groups) - min(counts[key] for key in groups) <= 1


@pytest.mark.parametrize("tasks, builders, per_judge", [
    (7, 4, 5), (30, 5, 10), (12, 2, 5), (5, 5, 7), (60, 5, 20)])
def test_the_spread_is_as_even_as_the_numbers_allow(tasks, builders, per_judge):
    groups = grid(tasks, builders)
    for seed in ("00" * 32, "ff" * 32, SEED):
        for pick, counts in admit(groups, per_judge, judges=3 * tasks * builders // per_judge,
                                  seed=seed):
            mine_tasks, mine_builders = spread(pick, groups)
            assert max(mine_tasks.values()) <= -(-per_judge // tasks)
            assert max(mine_builders.values()) <= -(-per_judge // builders)
            assert max(counts[key] for key in groups) - min(counts[key] for key in groups) <= 1


def test_balance_per_item_holds_over_many_admissions_of_uneven_runs():
    rng = random.Random(13)
    for _ in range(40):
        groups = {f"c{i}": (f"t{rng.randrange(9)}", f"b{rng.randrange(4)}")
                  for i in range(rng.randint(2, 40))}
        per_judge = rng.randint(1, len(groups) - 1)
        for _pick, counts in admit(groups, per_judge, judges=30, seed=rng.randbytes(32).hex()):
            assert max(counts[key] for key in groups) - min(counts[key] for key in groups) <= 1


def test_after_a_removal_the_pick_still_takes_least_judged_items_first():
    groups = grid(6, 2)
    picks = [pick for pick, _ in admit(groups, 4, judges=5, removed={2})]
    counts = Counter(key for n, pick in enumerate(picks[:4], start=1) if n != 2 for key in pick)
    last = picks[4]
    assert max(counts[key] for key in last) <= min(counts[key] for key in groups if key not in last)


def test_group_keys_are_opaque_labels():
    """Renaming every task and builder (say, to names that sort the other way) changes nothing:
    the pick depends on which items share a task or a builder, never on what they are called."""
    groups = grid(8, 3)
    renamed_task = {f"t{t}": f"zz-{7 - t}-task" for t in range(8)}
    renamed_builder = {"b0": "openai/gpt", "b1": "anthropic/claude", "b2": "aaa"}
    renamed = {key: (renamed_task[t], renamed_builder[b]) for key, (t, b) in groups.items()}
    assert [pick for pick, _ in admit(groups, 5, 20)] == [pick for pick, _ in admit(renamed, 5, 20)]


def test_without_groups_the_pick_is_the_least_judged_items():
    keys = [f"c{i}" for i in range(10)]
    counts = {key: i % 3 for i, key in enumerate(keys)}
    pick = balanced_pick(keys, counts, 4, SEED, 1)
    assert sorted(counts[key] for key in pick) == [0, 0, 0, 0]


# --- By task ---------------------------------------------------------------------------------

def tasks_of(sizes: dict[str, int]) -> dict[str, list[str]]:
    return {task: [f"{task}/c{i}" for i in range(size)] for task, size in sizes.items()}


def test_a_by_task_judge_gets_whole_tasks_while_they_fit():
    task_items = tasks_of({"a": 3, "b": 3, "c": 3, "d": 3})
    pick = by_task_pick(task_items, {}, 7, SEED, 1)
    tasks = Counter(key.split("/")[0] for key in pick)
    assert len(pick) == 6 and set(tasks.values()) == {3}
    assert by_task_pick(task_items, {}, None, SEED, 1) == [k for ks in task_items.values() for k in ks]
    assert len(by_task_pick(task_items, {}, 12, SEED, 1)) == 12


def test_a_by_task_judge_gets_at_least_one_task_however_large():
    task_items = tasks_of({"a": 5, "b": 5})
    assert len(by_task_pick(task_items, {}, 2, SEED, 1)) == 5


def test_the_first_task_that_does_not_fit_ends_the_pick():
    """Skipping to a smaller task would favour small tasks: the pick takes a prefix of the rank."""
    task_items = tasks_of({"big": 4, "small": 1})
    for number in range(1, 40):
        pick = by_task_pick(task_items, {}, 4, SEED, number)
        assert pick in (task_items["big"], task_items["small"])


def test_by_task_ties_are_broken_by_the_hmac_of_the_judge_number_and_task():
    task_items = tasks_of({f"t{i}": 2 for i in range(10)})
    firsts = {by_task_pick(task_items, {}, 2, SEED, number)[0].split("/")[0]
              for number in range(1, 30)}
    assert len(firsts) > 5  # judges differ, by seed, not by task name
    pick = by_task_pick(task_items, {}, 2, SEED, 3)
    expected = min(task_items, key=lambda t: order_key(SEED, f"3:task:{t}"))
    assert pick == task_items[expected]


def test_by_task_tasks_stay_balanced_over_many_admissions():
    rng = random.Random(7)
    for _ in range(30):
        task_items = tasks_of({f"t{i}": rng.randint(1, 5) for i in range(rng.randint(2, 12))})
        per_judge = rng.randint(1, sum(map(len, task_items.values())) - 1)
        picks = []
        for number in range(1, 40):
            counts = Counter(key for pick in picks for key in pick)
            pick = by_task_pick(task_items, counts, per_judge, SEED, number)
            picks.append(pick)
            judged = Counter(task for task, keys in task_items.items() for p in picks
                             if keys[0] in p)
            assert all(set(keys) <= set(pick) or not set(keys) & set(pick)
                       for keys in task_items.values())
            per_task = [judged[task] for task in task_items]
            assert max(per_task) - min(per_task) <= 1


def adjacent_pairs(order, item_tasks):
    return [i for i in range(1, len(order)) if item_tasks[order[i]] == item_tasks[order[i - 1]]]


def test_the_by_task_order_interleaves_tasks_and_keeps_hmac_order_within_each():
    item_tasks = {key: task for task, keys in tasks_of({"a": 3, "b": 3, "c": 2}).items()
                  for key in keys}
    order = draw_order_by_task(SEED, item_tasks)
    assert sorted(order) == sorted(item_tasks)
    assert adjacent_pairs(order, item_tasks) == []
    for task in "abc":
        mine = [key for key in order if item_tasks[key] == task]
        assert mine == sorted(mine, key=lambda key: order_key(SEED, key))
    # The two largest tasks come first, the one with the lower task key before the other.
    first_two = sorted("ab", key=lambda t: task_order_key(SEED, t))
    assert [item_tasks[key] for key in order[:2]] == first_two
    assert task_order_key(SEED, "a") == order_key(SEED, "task:a")
    # The order does not depend on how the items were listed.
    assert draw_order_by_task(SEED, dict(reversed(item_tasks.items()))) == order


def test_by_task_adjacency_happens_only_when_one_task_holds_more_than_half_of_what_is_left():
    rng = random.Random(12)
    for _ in range(500):
        sizes = {f"t{i}": rng.randint(1, 6) for i in range(rng.randint(1, 6))}
        item_tasks = {key: task for task, keys in tasks_of(sizes).items() for key in keys}
        order = draw_order_by_task(rng.randbytes(32).hex(), item_tasks)
        assert sorted(order) == sorted(item_tasks)
        n, largest = len(order), max(sizes.values())
        pairs = adjacent_pairs(order, item_tasks)
        # The fewest possible: no arrangement has fewer than 2m - n - 1 for a task of m of n.
        assert len(pairs) == max(0, 2 * largest - n - 1)
        for i in range(1, n):
            task = item_tasks[order[i - 1]]
            remaining = order[i - 1:]
            if i in pairs:
                assert 2 * sum(item_tasks[k] == task for k in remaining) > len(remaining)
