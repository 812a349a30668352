"""The pairs session's planner and its balanced sample of pairs (issue 31 item 1). Pure: no Django,
no numpy, no scipy (the host's pages compute it in the serving process; content/stdlib_stats.py).

A pairs session's items are pairs of copies of one task by two builders. The host chooses the
design: every pair of builders on every task (``all``: tasks × C(builders, 2) pairs where every
builder has a copy of every task), or a balanced sample of a given size (``balanced_pairs``). The
planner (``pairs_plan``) says how many comparisons, and how many judges at a given number of pairs
each, a target needs: the half-width of the 95 % interval of a builder-vs-builder difference, or
of a judge type's pairwise accuracy. docs/statistics.md ("Pairs") gives the formulas.
"""

import heapq
import math
import numbers
from itertools import combinations
from statistics import NormalDist

from content.draws import order_key

# The design effect the planner assumes unless told otherwise: answers of one judge, and on one
# task, are correlated, so n of them carry the information of fewer independent ones. Kish's
# 1 + (m − 1)ρ with about ten answers per judge and an intra-class correlation of about 0.05 gives
# 1.45; 1.5 rounds it up. A host who knows better sets it (1 for independent answers).
DESIGN_EFFECT = 1.5
# The planner's proportion: the worst case, where p(1 − p) is largest (so the plan holds whatever
# the true win rate or accuracy turns out to be).
WORST_P = 0.5
TARGETS = ("difference", "accuracy")
DESIGNS = ("all", "balanced")


def _positive_int(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a whole number of at least 1, got {value!r}")
    return int(value)


def _open_unit(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 < value < 1.0:
        raise ValueError(f"{name} must be a number strictly between 0 and 1, got {value!r}")
    return float(value)


def _up(x: float) -> int:
    """x rounded up to a whole number, a value within 1e-9 of one not pushed up by rounding noise
    (as content.stdlib_stats.paired_sample_plan rounds)."""
    return max(1, math.ceil(x - 1e-9))


def all_pairs_count(builders: int, tasks: int) -> int:
    """tasks × C(builders, 2): the pairs of the ``all`` design where every builder built every task."""
    builders = _positive_int("builders", builders)
    tasks = _positive_int("tasks", tasks)
    return tasks * math.comb(builders, 2)


def pairs_plan(builders: int, tasks: int, half_width: float = 0.10, *, target: str = "difference",
               pairs_per_judge: int = 20, differing_share: float | None = None,
               design: str = "all", balanced_count: int | None = None,
               design_effect: float = DESIGN_EFFECT, confidence: float = 0.95) -> dict:
    """How many comparisons and judges a pairs session needs for a target half-width.

    With z the two-sided normal quantile of ``confidence`` (``statistics.NormalDist``), D the
    design effect, h the half-width and the worst case p = 1/2 (``WORST_P``):

    - target ``difference``: a builder-vs-builder difference, the share of their direct
      comparisons a won minus the share b won (ties half each), 2w − 1 for a's win rate w against
      b. Its variance is 4 p(1 − p)/n, at most 1/n, so each builder pair needs
      ``per_builder_pair`` = ⌈D z² 4 p(1 − p) / h²⌉ = ⌈D z² / h²⌉ comparisons (a half-width h on the
      difference is h/2 on the win rate), and the session ``comparisons`` = that × C(builders, 2),
      every builder pair measured to the target;
    - target ``accuracy``: a judge type's pairwise accuracy (answers preferring the copy that is
      right / answers on pairs whose truths differ). It needs ``differing_needed`` =
      ⌈D z² p(1 − p) / h²⌉ answers on truth-differing pairs, and so ``comparisons`` =
      ⌈differing_needed / differing_share⌉ in all, ``differing_share`` (required) being the share
      of the design's pairs whose truths differ.

    The design offers ``distinct_pairs``: tasks × C(builders, 2) for ``all`` (every builder pair
    on every task, each builder with a copy of each), ``balanced_count`` for ``balanced`` (at most
    that). A judge sees a pair at most once, so each distinct pair is judged ``judgings_per_pair``
    = ⌈comparisons / distinct_pairs⌉ times, by as many judges at least; a judge takes at most
    ``pairs_per_judge`` pairs (capped at the distinct pairs), so ``judges`` = the larger of
    ⌈comparisons / pairs per judge⌉ and ``judgings_per_pair``.

    Returns those, with the inputs and ``z``, ``p``, ``exact`` (the count before rounding up),
    ``builder_pairs`` and ``per_builder_pair_offered`` (distinct pairs per builder pair, the
    fewest). Raises ValueError for fewer than 2 builders, no task, a half-width outside (0, 1), a
    design effect below 1, an unknown target or design, a balanced design without its count (or
    with more than the pairs there are), or an accuracy target without the share of differing
    pairs.
    """
    builders = _positive_int("builders", builders)
    if builders < 2:
        raise ValueError("a pairs session needs at least two builders")
    tasks = _positive_int("tasks", tasks)
    half_width = _open_unit("half_width", half_width)
    confidence = _open_unit("confidence", confidence)
    pairs_per_judge = _positive_int("pairs_per_judge", pairs_per_judge)
    if isinstance(design_effect, bool) or not isinstance(design_effect, numbers.Real) \
            or not 1.0 <= design_effect < math.inf:
        raise ValueError(f"design_effect must be a number of at least 1, got {design_effect!r}")
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, got {target!r}")
    if design not in DESIGNS:
        raise ValueError(f"design must be one of {DESIGNS}, got {design!r}")
    builder_pairs = math.comb(builders, 2)
    every = tasks * builder_pairs
    if design == "balanced":
        distinct = _positive_int("balanced_count", balanced_count)
        if distinct > every:
            raise ValueError(f"balanced_count ({distinct}) exceeds the {every} pairs of "
                             f"{builders} builders on {tasks} tasks")
    else:
        if balanced_count is not None:
            raise ValueError("balanced_count is for the balanced design only")
        distinct = every
    z = NormalDist().inv_cdf(1.0 - (1.0 - confidence) / 2.0)
    variance = WORST_P * (1.0 - WORST_P)
    plan = {"target": target, "half_width": half_width, "confidence": confidence, "z": z,
            "p": WORST_P, "design_effect": float(design_effect), "builders": builders,
            "tasks": tasks, "builder_pairs": builder_pairs, "design": design,
            "distinct_pairs": distinct, "per_builder_pair_offered": distinct // builder_pairs,
            "differing_share": None, "per_builder_pair": None, "differing_needed": None}
    if target == "difference":
        if differing_share is not None:
            raise ValueError("differing_share is for the accuracy target only")
        exact = design_effect * z * z * 4.0 * variance / (half_width * half_width)
        per_pair = _up(exact)
        comparisons = per_pair * builder_pairs
        plan["per_builder_pair"] = per_pair
    else:
        if isinstance(differing_share, bool) or not isinstance(differing_share, numbers.Real) \
                or not 0.0 < differing_share <= 1.0:
            raise ValueError("the accuracy target needs differing_share, the share of the design's "
                             f"pairs whose truths differ, in (0, 1]; got {differing_share!r}")
        share = float(differing_share)
        exact = design_effect * z * z * variance / (half_width * half_width)
        needed = _up(exact)
        comparisons = _up(needed / share)
        plan.update(differing_share=share, differing_needed=needed)
    per_judge = min(pairs_per_judge, distinct)
    judgings = _up(comparisons / distinct)
    plan.update({"exact": exact, "comparisons": comparisons, "pairs_per_judge": per_judge,
                 "judgings_per_pair": judgings,
                 "judges": max(_up(comparisons / per_judge), judgings)})
    return plan


def balanced_pairs(task_builders: dict[str, list[str]], count: int,
                   seed_hex: str) -> list[tuple[str, str, str]]:
    """``count`` pairs (task, builder_a, builder_b), builder_a < builder_b, for a balanced design.

    ``task_builders`` maps each task id to the ids of the builders with a copy of it; a pair is
    eligible where both builders have a copy of the task. Ids are opaque labels, never read.

    Picked greedily, one at a time, among the eligible pairs not yet picked: first a builder pair
    picked fewest times so far (so every builder pair occurs equally often, within one, for as
    long as it has eligible tasks left), then, within those, the task picked fewest times so far
    (tasks as even as the builder pairs allow), then the lowest HMAC-SHA256(seed, "pair:" + a +
    "|" + b) for the builder pair and the lowest HMAC-SHA256(seed, task + "|" + a + "|" + b) for
    the task (content.draws.order_key): ties are drawn from the seed, so the sample is the same for
    a seed and can be drawn again by anyone who has it. Where some builder pairs share fewer tasks
    than the balance asks of them, they give what they have and the rest is spread over the others.

    Returns the pairs sorted. Raises ValueError for a count below 0 or above the eligible pairs,
    or a seed that is not hex.
    """
    if isinstance(count, bool) or not isinstance(count, numbers.Integral) or count < 0:
        raise ValueError(f"count must be a non-negative whole number, got {count!r}")
    try:
        bytes.fromhex(seed_hex)
    except (TypeError, ValueError):
        raise ValueError("seed_hex must be a hexadecimal string") from None
    by_pair: dict[tuple[str, str], list[str]] = {}
    for task, ids in task_builders.items():
        for a, b in combinations(sorted(set(ids)), 2):
            by_pair.setdefault((a, b), []).append(task)
    eligible = sum(len(t) for t in by_pair.values())
    if count > eligible:
        raise ValueError(f"count ({count}) exceeds the {eligible} eligible pairs")
    task_count: dict[str, int] = dict.fromkeys(task_builders, 0)
    pair_tie = {pair: order_key(seed_hex, f"pair:{pair[0]}|{pair[1]}") for pair in by_pair}

    task_tie = {(task, pair): order_key(seed_hex, f"{task}|{pair[0]}|{pair[1]}")
                for pair, tasks in by_pair.items() for task in tasks}

    def rank(task, pair):
        return (task_count[task], task_tie[(task, pair)], task)

    # One heap of tasks per builder pair, by (task count, HMAC, task); a task's count only grows,
    # so a stale head is re-ranked and pushed back (a lazy heap, as content.draws.balanced_pick).
    heaps = {pair: [rank(task, pair) for task in tasks] for pair, tasks in by_pair.items()}
    for heap in heaps.values():
        heapq.heapify(heap)
    pair_count = dict.fromkeys(by_pair, 0)

    def best_of(pair):
        heap = heaps[pair]
        while True:
            current = rank(heap[0][-1], pair)
            if current == heap[0]:
                return current
            heapq.heapreplace(heap, current)

    chosen: list[tuple[str, str, str]] = []
    while len(chosen) < count:
        best = None
        for pair, heap in heaps.items():
            if not heap:
                continue
            task_rank = best_of(pair)
            candidate = (pair_count[pair], task_rank[0], pair_tie[pair], task_rank[1], pair)
            if best is None or candidate < best:
                best = candidate
        pair = best[-1]
        task = heapq.heappop(heaps[pair])[-1]
        chosen.append((task, *pair))
        pair_count[pair] += 1
        task_count[task] += 1
    _even_tasks(chosen, by_pair, task_count, lambda task: order_key(seed_hex, f"task:{task}"))
    return sorted(chosen)


def _even_tasks(chosen: list, by_pair: dict, task_count: dict, task_tie) -> None:
    """Move picks between tasks, never between builder pairs, until no task has two more than
    another that it can pass one to (in place).

    The greedy pick can leave a task two above another (a builder pair's least-picked task was
    taken by the pairs before it). A pick (task t, pair p) can move to task t' where p is eligible
    on t' and not yet picked there; a chain of such moves (t → t' by p, t' → t'' by p', …) takes
    one from the first task and gives one to the last, every other count unchanged. Each round
    searches breadth-first from the fullest task (ties by HMAC(seed, "task:" + task)) for the
    nearest task holding at least two fewer and moves one along the chain: the sum of squared
    counts falls each round, so it ends; where no chain exists the eligibility allows no better."""
    picked_in: dict[str, set] = {task: set() for task in task_count}
    for task, a, b in chosen:
        picked_in[task].add((a, b))
    eligible_on = {pair: set(tasks) for pair, tasks in by_pair.items()}
    order = sorted(task_count, key=lambda task: (task_tie(task), task))
    while True:
        moved = False
        for source in sorted(order, key=lambda task: -task_count[task]):
            goal = task_count[source] - 2
            if goal < 0 or all(task_count[t] > goal for t in order):
                break
            parent: dict[str, tuple[str, tuple]] = {}
            frontier, found = [source], None
            while frontier and found is None:
                following = []
                for task in frontier:
                    for pair in sorted(picked_in[task]):
                        for other in order:
                            if other == source or other in parent or other not in eligible_on[pair] \
                                    or pair in picked_in[other]:
                                continue
                            parent[other] = (task, pair)
                            if task_count[other] <= goal:
                                found = other
                                break
                            following.append(other)
                        if found is not None:
                            break
                    if found is not None:
                        break
                frontier = following
            if found is None:
                continue
            task = found
            while task != source:
                before, pair = parent[task]
                picked_in[before].remove(pair)
                picked_in[task].add(pair)
                task = before
            task_count[source] -= 1
            task_count[found] += 1
            moved = True
            break
        if not moved:
            break
    chosen[:] = [(task, a, b) for task, pairs in picked_in.items() for a, b in pairs]
