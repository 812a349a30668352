"""Pairs sessions (issue 31): judges compare two copies of one task by two builders side by side,
and prefer the left, the right, both (a tie: both fine) or neither (both bad).

Each item is a pair: its first copy (`Item.copy`) and its second (`Item.pair_copy`), in the
builders' import order, keyed "pair:<first copy id>|<second copy id>". Which of the two a judge
sees on the left is drawn per judge and pair from their order seed (content.draws.pair_swapped):
recorded on the assignment, committed with the order, redrawn by the verifiers. Each copy carries
its own code per judge, the same on every pair of theirs that holds it.

The host chooses the design: every pair of builders on every task ("all"), or a balanced sample
of a given number of pairs (each builder pair equally often, each task as evenly as possible:
content.pairs_plan.balanced_pairs), drawn with a seed that is recorded and committed like an order
(its SHA-256 in the frozen protocol, the seed itself published at the reveal).
"""

from itertools import combinations

from blindjudge.errors import Invalid
from content.canonical import sha256_hex
from content.pairs_plan import DESIGN_EFFECT, balanced_pairs, pairs_plan
from content.truth import truth_class
from judging.models import Run

PAIR_KEY = "pair:"
NO_PAIRS = ("run {run} has no task with copies by two builders; a pairs session compares two "
            "builders' copies of one task")
NO_TRUTH_DIFFERING = ("run {run} has no pair of one good and one defective copy: pairwise "
                      "accuracy against truth cannot be measured on it")
PAIR_VERDICTS = ("left", "right", "tie", "both_bad")
DESIGNS = ("all", "balanced")


def pair_key(first_copy_id: str, second_copy_id: str) -> str:
    """A pair's item key, from its copies' bundle ids in the builders' import order."""
    return f"{PAIR_KEY}{first_copy_id}|{second_copy_id}"


def _all_pairs(run: Run) -> dict[tuple[str, str, str], tuple]:
    """Every pair of copies of one task by two builders: (task, first builder, second builder)
    → (first copy, second copy), the builders in import order. A builder with several copies of
    one task pairs each of them (the key tells them apart)."""
    by_task: dict[int, list] = {}
    for copy in (run.copies.select_related("builder", "task").defer("content")
                 .order_by("task__position", "builder__position", "position")):
        by_task.setdefault(copy.task_id, []).append(copy)
    pairs = {}
    for copies in by_task.values():
        for first, second in combinations(copies, 2):
            if first.builder_id == second.builder_id:
                continue
            pairs[(first.task.bundle_id, first.builder.bundle_id, second.builder.bundle_id,
                   first.bundle_id, second.bundle_id)] = (first, second)
    return pairs


def pairs_sources(run: Run, *, design: str, count: int | None, seed: str):
    """(sources, design): the items of a new pairs session, each (first copy, second copy, key),
    and how they were chosen, as the protocol freezes it."""
    if design not in DESIGNS:
        raise Invalid(f'design "{design}": expected one of {", ".join(DESIGNS)}')
    pairs = _all_pairs(run)
    if not pairs:
        raise Invalid(NO_PAIRS.format(run=run.pk))
    if design == "all":
        if count is not None:
            raise Invalid("pairs: the design \"all\" takes every pair; give a number of pairs only "
                          "with the balanced design")
        chosen = sorted(pairs)
        drawn = {"by": "all", "pairs": len(chosen)}
    else:
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise Invalid("pairs: the balanced design needs a whole number of pairs, 1 or more")
        if count > len(pairs):
            raise Invalid(f"pairs: run {run.pk} has {len(pairs)} pairs of copies by two builders "
                          f"of one task; ask for at most that many (or the design \"all\")")
        task_builders: dict[str, list[str]] = {}
        for task, first, second, _, _ in pairs:
            builders = task_builders.setdefault(task, [])
            builders.extend(b for b in (first, second) if b not in builders)
        picked = set(balanced_pairs(task_builders, count, seed))
        chosen = sorted(key for key in pairs if key[:3] in picked)
        # A builder with several copies of a task: one pair of copies per picked builder pair.
        seen, unique = set(), []
        for key in chosen:
            if key[:3] not in seen:
                seen.add(key[:3])
                unique.append(key)
        chosen = unique
        drawn = {"by": "balanced", "pairs": len(chosen),
                 "seed_sha256": sha256_hex(bytes.fromhex(seed))}
    sources = [(pairs[key][0], pairs[key][1], pair_key(key[3], key[4])) for key in chosen]
    return sources, drawn


def pairs_overview(run: Run) -> dict:
    """What the planner needs of a run (content.pairs_plan.pairs_plan): its builders and tasks,
    how many pairs the design "all" offers, and how many of them are of one good and one
    defective copy (the accuracy target's share)."""
    pairs = _all_pairs(run)
    differing = sum({truth_class(a.truth), truth_class(b.truth)} == {"good", "defective"}
                    for a, b in pairs.values())
    return {"builders": run.builders.count(), "tasks": run.tasks.count(), "pairs": len(pairs),
            "truth_differing_pairs": differing}


def pairs_plan_on(run: Run, half_width: float, *, target: str, pairs_per_judge: int,
                  design: str = "all", balanced_count: int | None = None,
                  design_effect: float = DESIGN_EFFECT, overview: dict | None = None) -> dict:
    """content.pairs_plan.pairs_plan on the run's pairs (`overview`: pairs_overview's, read here
    when not given), the accuracy target over the share of its truth-differing pairs; Invalid,
    saying why, for a run without pairs (or without a truth-differing one, for that target) and
    for figures the planner refuses. The plan_pairs command and the host's planner page call it."""
    overview = overview or pairs_overview(run)
    if not overview["pairs"]:
        raise Invalid(NO_PAIRS.format(run=run.pk))
    share = None
    if target == "accuracy":
        if not overview["truth_differing_pairs"]:
            raise Invalid(NO_TRUTH_DIFFERING.format(run=run.pk))
        share = overview["truth_differing_pairs"] / overview["pairs"]
    try:
        return pairs_plan(overview["builders"], overview["tasks"], half_width, target=target,
                          pairs_per_judge=pairs_per_judge, differing_share=share, design=design,
                          balanced_count=balanced_count, design_effect=design_effect)
    except ValueError as error:
        raise Invalid(str(error)) from None
