"""The "pairs" section (issue 31 item 4): a pairs session's preferences, scored against truth.
Null for every other kind of session. Every definition is in docs/statistics.md ("Pairs").

A judge's answer on a pair names the sides they saw: left, right, tie (both fine) or both bad;
the side drawn for them (the assignment's `swapped`) turns it into the copy preferred. A model
reviewer's comparison (run/2 `comparisons`) names the order it saw the copies in: first, second,
tie or both bad. From these, per judge, per judge type and per model reviewer, phase 1 apart from
phase 2 (phase 1, given alone, is the primary measure):
- pairwise accuracy: over pairs whose copies' truths differ (one good: known_good or tests_pass;
  one defective: seeded_defect or tests_fail), the share where the good copy was preferred, ties
  and both-bad counted as not right; decisive accuracy beside it, over left/right answers only;
  each k/n with its Wilson interval, taking answers as independent;
- what was preferred on pairs of equal truth (both good, both defective), counted;
- position bias: the left (first) share among left/right answers, per judge, and across the judges
  of a type a test that takes the judge as the unit; for each reviewer its first-shown share and
  its inconsistency over pairs it saw both ways round;
- the Bradley–Terry ranking of the builders and the style fit (reports.pairwise);
- the phase shift: per judge, on truth-differing pairs answered in both phases, the preferences
  that moved towards the good copy and away from it once the reviewers' verdicts were shown
  (McNemar's exact test on correctness).
"""

from collections import Counter

from content.scoring import rate
from content.truth import truth_class
from judging.enums import SessionKind
from reports import pairwise
from reports.groups import SEAL_GROUPS, SEALS
from reports.loading import ReportData
from reports.sections.pooled import BOOTSTRAP_SEED, RESAMPLES

ANSWERS = ("left", "right", "tie", "both_bad")
REVIEWER_ANSWERS = ("first", "second", "tie", "both_bad")
GROUP_ORDER = ("invited", "guest", "self_blinded_host", "removed")
MINIMAL_PAIRS_NOTE = ("the bundle does not say which known-good copy a seeded defect was made "
                      "from, so no pair is known to differ by the defect alone")

DEFINITIONS = {
    "answer": "a judge's locked answer on a pair in a phase, as the sides were shown to them: "
              "left, right, tie (both fine) or both_bad; `swapped` (the assignment's) says which "
              "copy was on the left",
    "accuracy": "over pairs whose copies' truth classes differ (good: known_good or tests_pass; "
                "defective: seeded_defect or tests_fail), the answers that preferred the good "
                "copy; ties and both_bad count as not right. Wilson 95% interval, answers taken "
                "as independent",
    "decisive_accuracy": "the same over left/right (first/second) answers only",
    "equal_truth": "answers on pairs whose copies are both good or both defective, counted",
    "left_share": "left answers among left/right answers (for a reviewer: first among "
                  "first/second), with its Wilson interval; 0.5 is no position bias",
    "position_bias_across_judges": "each judge's left share is one observation: the mean share "
                                   "and a two-sided test of mean 0.5 across the judges of a type "
                                   "(reports.pairwise), not one pooled binomial",
    "inconsistency": "a reviewer's pairs seen both ways round, decisive both times, on which the "
                     "copy it preferred changed with the order",
    "phase_shift": "per judge, over truth-differing pairs with a locked answer in both phases: "
                   "toward = wrong in phase 1, right in phase 2; away = the reverse; McNemar's "
                   "exact two-sided p on the two",
    "primary": "phase 1: given alone, before any model's verdict was shown",
    "minimal_pairs": "pairs of a seeded defect and the known-good copy it was made from, "
                     "reported apart where the bundle says which that is",
    "reviewer_comparisons": "a model reviewer's comparisons under the run's default condition on "
                            "the session's pairs (either order), its seal neither failed nor "
                            "carrying a verdict in the request (those are counted in seals, and "
                            "left out, as reviews are)",
    "own_family": "comparisons of one copy by a builder of the reviewer's own family against one "
                  "of another family, decisive: the share preferring its own family's",
}


# A reviewer's order (first, second) in a judge's terms (left, right): the first shown is left.
_AS_SIDE = {"left": "left", "right": "right", "first": "left", "second": "right", "tie": "tie",
            "both_bad": "both_bad"}


def _good_side(left_truth: str, right_truth: str) -> str | None:
    """The side of the good copy of a truth-differing pair ("left" or "right"), None where the
    truths do not differ (or one is unknown)."""
    classes = (truth_class(left_truth), truth_class(right_truth))
    if classes == ("good", "defective"):
        return "left"
    if classes == ("defective", "good"):
        return "right"
    return None


def _equal_kind(first_truth: str, second_truth: str) -> str | None:
    classes = {truth_class(first_truth), truth_class(second_truth)}
    if classes == {"good"}:
        return "both_good"
    if classes == {"defective"}:
        return "both_defective"
    return None


class _Shown:
    """One answer as every figure takes it: the copies and builders as shown (left/first, then
    right/second), the answer in those terms, the side of the good copy (if the truths differ),
    the resampling unit, who answered."""

    __slots__ = ("answer", "good_side", "judge", "left", "left_builder", "right", "right_builder",
                 "unit")

    def __init__(self, left, right, answer, unit, judge):
        self.left, self.right, self.answer, self.unit, self.judge = left, right, answer, unit, judge
        self.left_builder, self.right_builder = left.builder_id, right.builder_id
        self.good_side = _good_side(left.truth, right.truth)


def _tally(shown: list, names: tuple) -> dict:
    """The counts every scope (a judge, a judge type, a reviewer) reports in one phase: its
    answers, pairwise and decisive accuracy (reports.pairwise.pairwise_accuracy), the left (first)
    share and what was preferred on pairs of equal truth."""
    sides = [(_AS_SIDE[a.answer], a.good_side) for a in shown]
    accuracy = pairwise.pairwise_accuracy(sides)
    decisive = [side for side, _ in sides if side in ("left", "right")]
    counts = Counter(a.answer for a in shown)
    equal = {"both_good": Counter(), "both_defective": Counter()}
    for a in shown:
        kind = _equal_kind(a.left.truth, a.right.truth)
        if kind is not None:
            equal[kind][a.answer] += 1
    return {
        "answers": {name: counts[name] for name in names},
        "accuracy": accuracy["accuracy"],
        "decisive_accuracy": accuracy["decisive_accuracy"],
        "left_share": rate(decisive.count("left"), len(decisive)),
        "equal_truth": {kind: {name: by[name] for name in names} for kind, by in equal.items()},
    }


def _judge_answers(data: ReportData):
    """Every locked answer of the session's judges: (judge row, item column, phase, answer,
    first copy on the left)."""
    v = data.verdicts
    for k in range(len(v.phase)):
        if not v.locked[k]:
            continue
        assignment_pk = data.assignments.rows[v.assignment[k][0]][0]
        swapped = data.pair_sides[assignment_pk][0]
        yield int(v.judge[k]), int(v.item[k]), v.phase[k], v.value[k], not swapped


def _statistics(data: ReportData, shown: list, *, across_judges: bool) -> dict:
    """The ranking, the style fit and (`across_judges`) the position bias of one scope's
    answers: a judge type in a phase, or a model reviewer."""
    builders = data.bundle.builders
    name = {b.pk: b.bundle_id for b in builders}
    prepared = pairwise.preference_records(
        [(name[a.left_builder], name[a.right_builder], a.answer, a.unit, a.judge) for a in shown])
    out = {"both_bad": prepared["both_bad"]}
    if prepared["records"]:
        ranking = pairwise.bradley_terry_bootstrap(
            prepared["records"], [b.bundle_id for b in builders], resamples=RESAMPLES,
            seed=BOOTSTRAP_SEED)
        out["ranking"] = ranking
        strength = dict(zip(ranking["builders"], ranking["strengths"], strict=True))
    else:
        out["ranking"] = None
        strength = {}
    rows = []
    for a in shown:
        if a.answer not in ("left", "right", "first", "second"):
            continue
        rows.append((int(a.answer in ("left", "first")),
                     strength.get(name[a.left_builder], 0.0) - strength.get(name[a.right_builder], 0.0),
                     len(a.left.content), len(a.right.content),
                     {"left": 1, "right": -1, None: 0}[a.good_side]))
    out["style"] = pairwise.style_fit(rows)
    if across_judges:
        counts: dict = {}
        for a in shown:
            left, decisive = counts.get(a.judge, (0, 0))
            counts[a.judge] = (left + (a.answer == "left"),
                               decisive + (a.answer in ("left", "right")))
        out["position_bias"] = pairwise.position_bias(
            [(judge, left, decisive) for judge, (left, decisive) in counts.items()],
            seed=BOOTSTRAP_SEED, resamples=RESAMPLES)
    return out


def pairs(data: ReportData) -> dict | None:
    session = data.session
    if session.kind != SessionKind.PAIRS:
        return None
    copies = data.bundle.copy_by_pk
    items = data.items.rows
    unit_of = data.bundle.unit_of_copy
    groups = data.judges.groups
    by_judge = {(j, phase): [] for j in range(len(data.judges.rows)) for phase in (1, 2)}
    by_pair: dict[tuple[int, int], dict[int, _Shown]] = {}  # (judge, item) -> phase -> answer
    for j, i, phase, answer, first_on_left in _judge_answers(data):
        first, second = copies[items[i].copy_id], copies[items[i].pair_copy_id]
        left, right = (first, second) if first_on_left else (second, first)
        shown = _Shown(left, right, answer, unit_of.get(first.pk, ("task", first.task_id)),
                       data.judges.pseudonyms[j])
        by_judge[(j, phase)].append(shown)
        by_pair.setdefault((j, i), {})[phase] = shown
    present = [g for g in GROUP_ORDER if g in groups]
    truth_differing = sum(_good_side(copies[i.copy_id].truth, copies[i.pair_copy_id].truth)
                          is not None for i in items)
    return {
        "definitions": DEFINITIONS,
        "design": ({**session.pairs_design, "seed": session.pairs_seed}
                   if session.pairs_seed else session.pairs_design),
        "pairs": len(items),
        "truth_differing_pairs": truth_differing,
        "judges": [
            {"judge": pseudonym, "group": group,
             **{f"phase{phase}": _tally(by_judge[(j, phase)], ANSWERS) for phase in (1, 2)}}
            for j, (pseudonym, group) in enumerate(zip(data.judges.pseudonyms, groups,
                                                        strict=True))],
        "groups": [_group(data, by_judge, group) for group in present],
        "phase_shift": _phase_shift(data, by_pair),
        "reviewers": _reviewers(data),
        "minimal_pairs": None,
        "minimal_pairs_note": MINIMAL_PAIRS_NOTE,
    }


def _group(data: ReportData, by_judge: dict, group: str) -> dict:
    """A judge type's figures per phase: its judges' answers together."""
    members = [j for j, g in enumerate(data.judges.groups) if g == group]
    out = {"group": group, "judges": len(members)}
    for phase in (1, 2):
        shown = [a for j in members for a in by_judge[(j, phase)]]
        out[f"phase{phase}"] = {**_tally(shown, ANSWERS),
                                **_statistics(data, shown, across_judges=True)}
    return out


def _phase_shift(data: ReportData, by_pair: dict) -> list[dict]:
    """Per judge, their truth-differing pairs answered in both phases (reports.pairwise
    .phase_shift): toward and away from the good copy, McNemar's p where anything moved."""
    rows_of: dict[int, list] = {j: [] for j in range(len(data.judges.rows))}
    for (j, _), answers in by_pair.items():
        if len(answers) == 2:
            rows_of[j].append((answers[1].answer, answers[2].answer, answers[1].good_side))
    out = []
    for j, pseudonym in enumerate(data.judges.pseudonyms):
        shift = pairwise.phase_shift(rows_of[j])
        out.append({"judge": pseudonym, "group": data.judges.groups[j], "pairs": shift["pairs"],
                    "toward": shift["toward"], "away": shift["away"],
                    "p_value": shift["p_value"] if shift["toward"] + shift["away"] else None})
    return out


def _reviewers(data: ReportData) -> list[dict]:
    """Per model reviewer, its comparisons under the run's default condition on the session's
    pairs of copies (either order)."""
    copies = data.bundle.copy_by_pk
    default = data.bundle.run.default_condition
    pair_of = {frozenset((i.copy_id, i.pair_copy_id)) for i in data.items.rows}
    by_reviewer: dict[int, list] = {}
    seals: dict[int, dict] = {}
    for c in data.comparisons:
        if c.condition == default and frozenset((c.first_id, c.second_id)) in pair_of:
            seals.setdefault(c.reviewer_id, dict.fromkeys(SEALS, 0))[c.seal] += 1
            if SEAL_GROUPS.get(c.seal) is None:
                by_reviewer.setdefault(c.reviewer_id, []).append(c)
    builders = data.bundle.builder_by_pk
    unit_of = data.bundle.unit_of_copy
    out = []
    for reviewer in data.bundle.reviewers:
        mine = by_reviewer.get(reviewer.pk, [])
        orders: dict[frozenset, dict] = {}
        shown = []
        own = own_preferred = 0
        family = reviewer.family.casefold()
        for c in mine:
            first, second = copies[c.first_id], copies[c.second_id]
            mine_first = builders[first.builder_id].family.casefold() == family
            mine_second = builders[second.builder_id].family.casefold() == family
            if mine_first != mine_second and c.verdict in ("first", "second"):
                own += 1
                own_preferred += (c.verdict == "first") == mine_first
            # Each pair's two orders, keyed by its copies in the pair's own (item) order.
            orders.setdefault(frozenset((c.first_id, c.second_id)), {})[
                (c.first_id, c.second_id)] = c.verdict
            shown.append(_Shown(first, second, c.verdict,
                                unit_of.get(first.pk, ("task", first.task_id)), reviewer.bundle_id))
        both_ways = [(o[min(o)], o[max(o)]) for o in orders.values() if len(o) == 2]
        report = _tally(shown, REVIEWER_ANSWERS)
        report["first_share"] = report.pop("left_share")
        out.append({"reviewer": reviewer.bundle_id, "model": reviewer.model,
                    "family": reviewer.family, "comparisons": len(mine),
                    "seals": seals.get(reviewer.pk, dict.fromkeys(SEALS, 0)), **report,
                    "own_family": rate(own_preferred, own),
                    "inconsistency": pairwise.order_inconsistency(both_ways),
                    **(_statistics(data, shown, across_judges=False) if mine else
                       {"both_bad": 0, "ranking": None, "style": None})})
    return out
