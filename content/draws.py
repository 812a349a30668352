"""Every random draw a session makes, recorded so it can be audited and, if pinned, replayed.

Draws come from the OS CSPRNG (`secrets`), unless the session was created with a pinned draw seed,
in which case each draw is HMAC-SHA256(draw seed, label): the same session set-up then gives the
same allocation, orders, codes and salts, which is what reproducible demos and the byte-identical
blinding tests need. Either way the seeds actually used are stored host-side and published at the
reveal. Pure: no Django.
"""

import hashlib
import heapq
import hmac
import secrets
from collections import Counter
from fractions import Fraction

# Item codes: no 0/O, 1/I/L, 2/Z, 5/S, 8/B, so a judge can read a code aloud or type it back.
ITEM_CODE_ALPHABET = "ACDEFGHJKMNPQRTUVWXY34679"
ITEM_CODE_LENGTH = 4

# Guest codes: Crockford's base32 (no I, L, O, U), 13 symbols = 65 bits, typed in groups of four.
GUEST_CODE_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
GUEST_CODE_SYMBOLS = 13
_GUEST_CODE_TYPOS = str.maketrans({"O": "0", "I": "1", "L": "1", "U": "V"})


class Draws:
    """The randomness source of one session."""

    def __init__(self, pinned_seed_hex: str = ""):
        self._pinned = bytes.fromhex(pinned_seed_hex) if pinned_seed_hex else None

    def bytes(self, label: str, length: int = 32) -> bytes:
        if self._pinned is None:
            return secrets.token_bytes(length)
        out = b""
        counter = 0
        while len(out) < length:
            out += hmac.new(self._pinned, f"{label}#{counter}".encode(), hashlib.sha256).digest()
            counter += 1
        return out[:length]

    def hex(self, label: str, length: int = 32) -> str:
        return self.bytes(label, length).hex()

    def symbols(self, label: str, alphabet: str, count: int) -> str:
        """`count` symbols drawn uniformly from alphabet (rejection sampling, no modulo bias)."""
        size = len(alphabet)
        limit = 256 - (256 % size)
        chosen = []
        round_ = 0
        while len(chosen) < count:
            for byte in self.bytes(f"{label}/{round_}", 64):
                if byte < limit:
                    chosen.append(alphabet[byte % size])
                    if len(chosen) == count:
                        break
            round_ += 1
        return "".join(chosen)


def order_key(order_seed_hex: str, item_key: str) -> str:
    """HMAC-SHA256(order seed, item key) in hex; a judge's order sorts items by it."""
    return hmac.new(bytes.fromhex(order_seed_hex), item_key.encode("utf-8"), hashlib.sha256).hexdigest()


def draw_order(order_seed_hex: str, item_keys: list[str]) -> list[str]:
    """The judge's order: item keys sorted by their HMAC (ties, never seen in practice, by key)."""
    return sorted(item_keys, key=lambda key: (order_key(order_seed_hex, key), key))


def pair_swapped(order_seed_hex: str, item_key: str) -> bool:
    """Whether a judge sees a pair's second copy on the left: one bit of HMAC(order seed, "side:"
    + the pair's key). Drawn from the seed the judge's order comes from, so the sides are committed
    with the order and a verifier redraws them from the published seed."""
    return bool(int(_hmac_hex(order_seed_hex, f"side:{item_key}")[:2], 16) & 1)


def draw_item_codes(draws: Draws, label: str, count: int) -> list[str]:
    """`count` distinct item codes for one judge."""
    codes: list[str] = []
    seen = set()
    attempt = 0
    while len(codes) < count:
        code = draws.symbols(f"{label}/code{attempt}", ITEM_CODE_ALPHABET, ITEM_CODE_LENGTH)
        attempt += 1
        if code not in seen:
            seen.add(code)
            codes.append(code)
    return codes


def _hmac_hex(seed_hex: str, message: str) -> str:
    return hmac.new(bytes.fromhex(seed_hex), message.encode("utf-8"), hashlib.sha256).hexdigest()


def draw_codes_with_copies(draws: Draws, label: str, count: int,
                           copies=()) -> tuple[list[str], dict]:
    """`count` item codes, and one more code for each of `copies` (a pairs session's copies: each
    its own code for the judge, the same on every pair holding it), all distinct, drawn in one
    go: (item codes, {copy: code}), the copies taken in sorted order."""
    copies = sorted(set(copies))
    codes = draw_item_codes(draws, label, count + len(copies))
    return codes[:count], dict(zip(copies, codes[count:], strict=True))


def balanced_pick(item_keys: list[str], judge_counts: dict[str, int], k: int,
                  allocation_seed_hex: str, judge_number: int,
                  groups: dict[str, tuple[str, str]] | None = None) -> list[str]:
    """The k items a new judge gets: always among those with the fewest judges so far, and spread
    over tasks and builders.

    The pick is greedy, one item at a time. Each time, among the items left with the fewest
    judges, it prefers, in this order:
    1. the item whose task the judge has fewest of so far in this pick,
    2. then whose builder the judge has fewest of,
    3. then whose task is least judged overall (the mean judge count of its items before this
       admission), then whose builder is; without this, later judges could be left with the
       unjudged remainder of a few tasks, several copies each, and no spread left to choose from;
    4. then the lowest HMAC(allocation seed, judge number + item key), so ties are seeded and
       recorded.
    Because every pick is a least-judged item among those left, every item's judge count stays
    within one of every other's after each admission, as with no groups at all.

    `groups` maps each item key to its (task, builder) *bundle ids*, used as opaque labels that
    are counted, never read: the pick cannot depend on names, families or truth. Without groups
    the pick is the k least-judged items, ties by the same HMAC.
    """
    if k >= len(item_keys):
        return list(item_keys)

    def tie_break(key):
        return _hmac_hex(allocation_seed_hex, f"{judge_number}:{key}")

    if not groups:
        ranked = sorted(item_keys, key=lambda key: (judge_counts.get(key, 0), tie_break(key), key))
        return ranked[:k]
    mean_task = _mean_counts(item_keys, judge_counts, lambda key: groups[key][0])
    mean_builder = _mean_counts(item_keys, judge_counts, lambda key: groups[key][1])
    own_task: Counter = Counter()
    own_builder: Counter = Counter()

    # One heap per builder: within a builder, the judge's builder count and the builder's mean are
    # the same for every item, so a builder's best item is its heap's least (count, judge's count
    # of the task, task's mean, HMAC), and the judge's next item is the best of the builders' best.
    # An entry goes stale only when the judge takes an item of its task, and only grows then, so a
    # stale head is re-ranked and pushed back (a lazy heap).
    def rank_within_builder(key):
        task = groups[key][0]
        return (judge_counts.get(key, 0), own_task[task], mean_task[task], tie_break(key), key)

    heaps: dict[str, list] = {}
    for key in item_keys:
        heaps.setdefault(groups[key][1], []).append(rank_within_builder(key))
    for heap in heaps.values():
        heapq.heapify(heap)

    def best_of(heap):
        while True:
            current = rank_within_builder(heap[0][-1])
            if current == heap[0]:
                return current
            heapq.heapreplace(heap, current)

    chosen: list[str] = []
    while len(chosen) < k:
        best = None
        for builder, heap in heaps.items():
            if not heap:
                continue
            count, task_n, task_mean, tie, key = best_of(heap)
            candidate = (count, task_n, own_builder[builder], task_mean, mean_builder[builder],
                         tie, key, builder)
            if best is None or candidate < best:
                best = candidate
        key, builder = best[-2], best[-1]
        heapq.heappop(heaps[builder])
        chosen.append(key)
        own_task[groups[key][0]] += 1
        own_builder[builder] += 1
    return chosen


def _mean_counts(item_keys, judge_counts, group_of) -> dict[str, Fraction]:
    """Each group's mean judge count per item (exact, so comparisons never depend on rounding)."""
    totals: dict[str, list[int]] = {}
    for key in item_keys:
        total = totals.setdefault(group_of(key), [0, 0])
        total[0] += judge_counts.get(key, 0)
        total[1] += 1
    return {group: Fraction(n, size) for group, (n, size) in totals.items()}


def by_task_pick(task_items: dict[str, list[str]], judge_counts: dict[str, int],
                 items_per_judge: int | None, allocation_seed_hex: str,
                 judge_number: int) -> list[str]:
    """A by-task judge's items: every item of each task they get, whole tasks only.

    Tasks are ranked by how many judges have them so far (a task's count is the most judges any
    of its items has: in a by-task session every item of a task has the same count), fewest first,
    ties by the lowest HMAC(allocation seed, judge number + "task:" + task key). Whole tasks are
    taken in that rank while the next one fits in `items_per_judge` items; the first that does not
    fit ends the pick (skipping to a smaller task would favour small tasks and unbalance the
    tasks' counts), but a judge always gets at least one task, however large. No limit (None), or
    one at least as large as every item, gives every task. Taking a prefix of the least-judged
    tasks keeps every task's judge count within one of every other's after each admission.

    Task keys are bundle ids, used as opaque labels: never builders, names or truth.
    Returns the item keys, task by task in rank order (the order is draw_order_by_task's job).
    """
    total = sum(len(items) for items in task_items.values())
    if items_per_judge is None or items_per_judge >= total:
        return [key for items in task_items.values() for key in items]

    def task_count(task):
        return max((judge_counts.get(key, 0) for key in task_items[task]), default=0)

    ranked = sorted(task_items, key=lambda task: (
        task_count(task), _hmac_hex(allocation_seed_hex, f"{judge_number}:task:{task}"), task))
    chosen: list[str] = []
    for task in ranked:
        items = task_items[task]
        if chosen and len(chosen) + len(items) > items_per_judge:
            break
        chosen.extend(items)
    return chosen


def task_order_key(order_seed_hex: str, task_key: str) -> str:
    """HMAC-SHA256(order seed, "task:" + task key), hex: ranks a by-task judge's tasks."""
    return order_key(order_seed_hex, f"task:{task_key}")


def draw_order_by_task(order_seed_hex: str, item_tasks: dict[str, str]) -> list[str]:
    """A by-task judge's order, interleaving tasks so that two items of one task are adjacent only
    when nothing else is left.

    Within a task, items go in their order_key order (HMAC(order seed, item key)). Position by
    position, the next item comes from the task with the most items left that is not the task of
    the previous item, ties by the lowest task_order_key; only when the previous item's task is
    the only one with items left does it come next again. This greedy leaves the fewest adjacent
    pairs possible: none when no task holds more than half the items (rounded up), otherwise
    2m - n - 1 for a task of m items out of n, all at the end, once that task holds more than half
    of what remains. Every key is an HMAC of a bundle id (item or task), never of a builder.
    """
    queues: dict[str, list[str]] = {}
    for item in sorted(item_tasks, key=lambda item: (order_key(order_seed_hex, item), item),
                       reverse=True):
        queues.setdefault(item_tasks[item], []).append(item)  # reversed: pop() takes the next
    heap = [(-len(items), task_order_key(order_seed_hex, task), task)
            for task, items in queues.items()]
    heapq.heapify(heap)
    order: list[str] = []
    previous = None
    while heap:
        entry = heapq.heappop(heap)
        if entry[2] == previous and heap:
            entry, held = heapq.heappop(heap), entry
            heapq.heappush(heap, held)
        task = entry[2]
        order.append(queues[task].pop())
        if queues[task]:
            heapq.heappush(heap, (-len(queues[task]), entry[1], task))
        previous = task
    return order


def screening_items(seed_hex: str, count_of, controls: dict[str, str]) -> set[str]:
    """The controls an exclude_judge rule screens judges on: of each control truth apart
    (seeded_defect, known_good), the first count_of(n) of its n controls in the seed's order
    (HMAC-SHA256(seed, item key), ties by key), so each class gets its share whatever the other
    has. `controls`: item key -> its truth, for the items that are controls; `count_of`:
    content.rules.screening_count with the rule's share. The order is drawn over item keys alone:
    the seed says nothing of which items are controls. Every reported score uses the rest."""
    chosen: set[str] = set()
    for truth in ("seeded_defect", "known_good"):
        keys = sorted((k for k, t in controls.items() if t == truth),
                      key=lambda key: (order_key(seed_hex, key), key))
        chosen.update(keys[:count_of(len(keys))])
    return chosen


def new_guest_code(draws: Draws, label: str) -> str:
    raw = draws.symbols(label, GUEST_CODE_ALPHABET, GUEST_CODE_SYMBOLS)
    return "-".join(raw[i:i + 4] for i in range(0, len(raw), 4))


def canonical_guest_code(typed: str) -> str:
    """What a person typed, as the code was issued: case, spaces, dashes and look-alikes forgiven."""
    cleaned = "".join(ch for ch in typed.upper() if ch not in " -\t").translate(_GUEST_CODE_TYPOS)
    return "-".join(cleaned[i:i + 4] for i in range(0, len(cleaned), 4))


def stratified_sample(strata: dict[str, list[str]], per_stratum: int, seed_hex: str) -> list[str]:
    """A reasons session's sample (issue 30 item 1): from each stratum (a label -> its item keys),
    the `per_stratum` keys with the lowest HMAC(seed, key), all of them where it has fewer; in
    key order. Drawn from a recorded seed, so the sample can be drawn again by anyone who knows
    the seed and the strata (the report publishes both)."""
    picked: list[str] = []
    for keys in strata.values():
        picked += sorted(keys, key=lambda key: (_hmac_hex(seed_hex, key), key))[:per_stratum]
    return sorted(picked)


def one_per_copy_pick(item_copies: dict[str, str], judge_counts: dict[str, int], k: int | None,
                      allocation_seed_hex: str, judge_number: int) -> list[str]:
    """A reasons session's items for a new judge (issue 30 item 1): at most one review of any
    copy, so no judge audits two reviewers of one copy (the second reason would be read knowing
    the first). Of each copy's reviews, the least audited so far, ties by HMAC(allocation seed,
    judge number + key); then, where `k` is smaller than the number of copies, the k least
    audited of those, ties the same way. `item_copies` maps each item key to its copy's bundle
    id (an opaque label)."""
    def rank(key):
        return (judge_counts.get(key, 0), _hmac_hex(allocation_seed_hex, f"{judge_number}:{key}"),
                key)

    by_copy: dict[str, list[str]] = {}
    for key, copy in item_copies.items():
        by_copy.setdefault(copy, []).append(key)
    chosen = [min(keys, key=rank) for keys in by_copy.values()]
    if k is not None and k < len(chosen):
        chosen = sorted(chosen, key=rank)[:k]
    return sorted(chosen)
