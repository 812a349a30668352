"""The "builders_compared" section: how the builders compare, judged blind — the answer a host
runs a model matrix for (issue 14 item 1).

Scope. Each builder is measured on its own copies of truth tests_pass, tests_fail or unknown
(current truth, after corrections). Copies of truth known_good and seeded_defect are the host's
controls: counted per builder apart (`controls`), never in a builder's rates.

Per builder, each a k/n with its Wilson 95% interval (reports.scoring.rate):
- truth: the tests_pass share of the copies whose truth is tests_pass or tests_fail;
- judges: per group of judges (invited; guests and the host, self-blinded, apart; removed judges
  never), per phase, the share of locked verdicts on its copies that said pass. Copies sessions
  only: a findings session's judges judged findings, not copies;
- reviewers: per model reviewer, under the run's default condition, the share of its scored
  reviews of these copies that said pass, an abstention scored by the run's abstain_scoring
  (reports.scoring.scored_verdict); reviews whose seal failed (or that reports.sections.
  model_reviewers.review_group otherwise sets apart) are left out, reviews of the reviewer's own
  family's copies are kept and marked (same_family).

Between each pair of builders (a, b), within each source (truth; each judge group and phase; each
reviewer), the difference a − b in pass rate, paired by task (`paired_difference`): over the tasks
where both have something scored, Σ passes / Σ scored of a minus the same of b; its 95% interval
(Newcombe's hybrid score for the paired 2×2 design of one pass or fail per builder and task, at
any size; otherwise a bootstrap that resamples tasks, or clusters of tasks where the bundle gives
clusters: data.bundle.unit_of_copy, only at 20 units or more, and for human verdicts of 10 judges
or more judges as well: reports.stats.judges_clusters_weights); its p (McNemar's exact test, a
cluster sign-flip or a sign-flip on the per-task differences summed within each resampling unit:
`test` names it); and the Holm-adjusted p within the source
(reports.stats.holm_adjust over its pairs).

The primary comparison is the preregistration's (the protocol's "primary_comparison"), else the
invited judges' phase-1 pass rate. A builder is said to be above another only where the primary
difference's Holm-adjusted p is below 0.05 and its interval excludes 0 (the exact test alone where
no interval is valid at the number of units); otherwise the two are not
distinguished. With one builder, or one task and no judges, nothing is compared.

Nothing here reaches a judge's scorecard (judging/selectors/scorecard.py reads none of the report).
"""

from itertools import combinations

import numpy as np

from content.scoring import rate, scored_verdict
from reports import numbers, stats
from reports.loading import ReportData
from reports.scoring import GROUPS
from reports.sections.common import alpha_of, finite
from reports.sections.model_reviewers import review_group
from reports.sections.pooled import BOOTSTRAP_SEED, RESAMPLES

SCOPE = ("tests_pass", "tests_fail", "unknown")
CONTROLS = ("known_good", "seeded_defect")
HUMAN_GROUPS = tuple(g for g in GROUPS if g != "removed")  # removed judges are never counted
SCORED_REVIEWS = ("main", "same_family")  # review_group's groups kept; seal failures left out
JUDGE_SOURCES = ("judges_phase1", "judges_phase2")
DEFAULT_PRIMARY = {"source": "judges_phase1", "group": "invited"}

SCOPE_TEXT = ("copies of truth tests_pass, tests_fail or unknown; seeded_defect and known_good are "
              "the host's controls, reported apart")
FINDINGS_REASON = ("a findings session: its judges judged findings, not copies, so builders are "
                   "compared under truth and model reviewers only")
REASONS_REASON = ("a reasons session: its judges audited model reviews' reasons, not copies, so "
                  "builders are compared under truth and model reviewers only")
PAIRS_REASON = ("a pairs session: its judges compared copies two at a time, so their comparison "
                "of the builders is the Bradley–Terry ranking in the pairs section; here builders "
                "are compared under truth and model reviewers only")
NO_JUDGES_REASON = "no judge gave a locked verdict on a copy in scope"
GROUP_WORDS = {"invited": "the invited judges'", "guest": "the guests'",
               "self_blinded_host": "the host's (self-blinded)"}

DEFINITIONS = {
    "scope": "which copies count: a builder's copies of truth tests_pass, tests_fail or unknown "
             "(current truth); known_good and seeded_defect copies are the host's controls, "
             "counted per builder in controls and never in a rate",
    "rate": "k/n with its Wilson 95% interval; null when n is 0",
    "truth.pass_rate": "tests_pass copies / (tests_pass + tests_fail copies); unknown truth is "
                       "counted, never scored",
    "judges": "per group of judges (invited; guests and the host, self-blinded, apart; removed "
              "judges never) and phase: locked verdicts of pass / locked verdicts, on the "
              "builder's copies in scope (unknown truth included: a pass rate needs no truth); "
              "copies sessions only",
    "reviewers": "per model reviewer, default condition: reviews of pass / scored reviews of the "
                 "builder's copies in scope; an abstention is scored by the run's abstain_scoring "
                 "(not_flagged: a pass; excluded: left out); reviews whose seal failed are left "
                 "out; same_family marks a reviewer of the builder's own family, whose figures may "
                 "carry self-preference",
    "left_out": "the reviewer's default-condition reviews of these copies not scored: excluded "
                "abstentions and failed seals",
    "differences": "per source (truth, each judge group and phase, each reviewer) and pair of "
                   "builders [a, b]: the difference a − b in pass rate over the tasks where both "
                   "have something scored (pass_rates: each builder's k/n over those tasks)",
    "tasks": "tasks where both builders of the pair have a scored label or verdict",
    "units": "resampling units among those tasks: tasks, or clusters of tasks where the bundle "
             "gives clusters (a task whose copies fall in two clusters joins them)",
    "difference": "a − b, pass rate, with its 95% interval of the kind named in `interval` "
                  "(low and high null where there is none: no_interval says why)",
    "interval": "Newcombe hybrid score: where each builder has one pass or fail per task (the "
                "paired 2×2 design), Newcombe's (1998) method 10, valid at any number of tasks; "
                "'tasks treated as independent' where the tasks lie in fewer than 20 declared "
                "clusters. bootstrap: a 95% percentile interval over the units (20 or more), "
                "judges held fixed for human verdicts; two-way bootstrap: judges and units drawn "
                "independently (human verdicts of 10 or more judges). A bootstrap is never given "
                "over fewer than 20 units: with fewer it is too narrow (docs/statistics.md)",
    "no_interval": "why there is no interval: no paired task, or fewer than 20 units with more "
                   "than one label per task (no interval is valid at that size)",
    "resampled": "what the bootstrap drew (tasks, clusters, or judges and tasks); null where the "
                 "interval is not a bootstrap",
    "differences.judges": "for human verdicts: the judges with a verdict on the paired tasks "
                          "(null for truth and reviewers)",
    "conditional_on_judges": "for human verdicts: true where fewer than 10 judges gave them, so "
                             "the interval holds the judges fixed and speaks for these judges "
                             "only, not for judges like them",
    "p_value": "the test named in `test`. McNemar exact: where each builder has one pass or "
               "fail per task and the tasks are the units, the two-sided exact binomial test "
               "on the discordant tasks, at any number of tasks. Cluster sign-flip: the same "
               "design with tasks in declared clusters, the per-task differences summed within "
               "each cluster and their signs flipped (exact up to 16 clusters, else 20,000 "
               "random flips). Sign-flip: otherwise (several verdicts per task), the same over "
               "the resampling units. Null when no task is paired",
    "test": "which test gave p_value: McNemar exact, cluster sign-flip or sign-flip",
    "discordant": "for a one-pass-or-fail-per-task design: [tasks a passed and b failed, tasks "
                  "b passed and a failed]; null otherwise",
    "mcnemar_p": "McNemar's exact p on those discordant tasks (beside a cluster sign-flip, as if "
                 "the tasks were independent); null when the design is not one label per task",
    "smallest_p": "the smallest two-sided p those discordant tasks could give, 2^(1−G) for G "
                  "discordant tasks: a large p on few discordant tasks says little",
    "p_holm": "Holm's step-down adjustment of p_value over the pairs of the same source (one "
              "family per source, judge group and phase, or reviewer)",
    "primary": "the comparison the preregistration names (the protocol's primary_comparison), "
               "else the invited judges' phase-1 pass rate",
    "alpha": "the significance level the ranking reads p_holm at: the preregistration's "
             "(alpha_named_by: preregistration), else 0.05 (default)",
    "ranking": "order: builders by the primary pass rate, high first (descriptive); a builder "
               "is stated above another only where the primary difference's p_holm is below alpha "
               "and its interval excludes 0 (supported; where no interval is valid at the "
               "number of units, the exact test alone); otherwise they are not distinguished",
}


def builders_compared(data: ReportData) -> dict:
    bundle = data.bundle
    builders, tasks = bundle.builders, bundle.tasks
    task_index = {t.pk: i for i, t in enumerate(tasks)}
    builder_index = {b.pk: i for i, b in enumerate(builders)}
    n_builders, n_tasks = len(builders), len(tasks)
    in_scope = [c for c in bundle.copies if c.truth in SCOPE]
    units = task_units((c.task_id, bundle.unit_of_copy.get(c.pk, ("task", c.task_id)))
                       for c in in_scope)
    # A task without a copy in scope is never paired; it still needs a label of its own.
    labels = [units.get(t.pk, -1 - i) for i, t in enumerate(tasks)]

    truth_k, truth_n = np.zeros((n_builders, n_tasks)), np.zeros((n_builders, n_tasks))
    counts = [dict.fromkeys(SCOPE + CONTROLS, 0) for _ in builders]
    builder_tasks = [set() for _ in builders]
    for c in bundle.copies:
        b = builder_index[c.builder_id]
        if c.truth in counts[b]:
            counts[b][c.truth] += 1
        if c.truth in SCOPE:
            builder_tasks[b].add(c.task_id)
        if c.truth in ("tests_pass", "tests_fail"):
            truth_k[b, task_index[c.task_id]] += c.truth == "tests_pass"
            truth_n[b, task_index[c.task_id]] += 1

    human_not_compared, groups, human = _human(data, builder_index, task_index)
    reviewer_sums = _reviewer_sums(data, builder_index, task_index)

    entries = []
    for b, builder in enumerate(builders):
        entries.append({
            "builder": builder.bundle_id, "model": builder.model, "family": builder.family,
            "copies": sum(counts[b][t] for t in SCOPE), "tasks": len(builder_tasks[b]),
            "truth": {"tests_pass": counts[b]["tests_pass"], "tests_fail": counts[b]["tests_fail"],
                      "unknown": counts[b]["unknown"],
                      "pass_rate": rate(int(truth_k[b].sum()), int(truth_n[b].sum()))},
            "judges": {group: {str(phase): rate(int(human[(phase, group)][0][b].sum()),
                                                int(human[(phase, group)][1][b].sum()))
                               for phase in (1, 2)} for group in groups},
            "reviewers": [{"reviewer": r.bundle_id, "pass_rate": rate(int(k[b].sum()), int(n[b].sum())),
                           "same_family": r.family.casefold() == builder.family.casefold(),
                           "left_out": int(left_out[b])}
                          for r, (k, n, left_out) in zip(bundle.reviewers, reviewer_sums, strict=True)],
        })

    scoped = [b for b in range(n_builders) if entries[b]["copies"]]
    if n_builders < 2:
        not_compared = "one builder"
    elif len(scoped) < 2:
        not_compared = "fewer than two builders have copies in scope"
    elif len({c.task_id for c in in_scope}) == 1 and human_not_compared is not None:
        not_compared = "one task and no judges"
    else:
        not_compared = None

    primary = _primary(data)
    alpha, alpha_named_by = alpha_of(data.session)
    differences = []
    if not_compared is None:
        families = [("truth", None, None, truth_k, truth_n)]
        if human_not_compared is None:
            families += [(f"judges_phase{phase}", group, None, *human[(phase, group)])
                         for phase in (1, 2) for group in groups]
        families += [("reviewer", None, r.bundle_id, k, n)
                     for r, (k, n, _) in zip(bundle.reviewers, reviewer_sums, strict=True)]
        for source, group, reviewer, k, n in families:
            differences += _family(source, group, reviewer, k, n, labels, scoped, builders,
                                   primary)

    return {
        "compared": not_compared is None,
        "not_compared": not_compared,
        "human_not_compared": human_not_compared,
        "definitions": dict(DEFINITIONS),
        "scope": SCOPE_TEXT,
        "resampling": {
            "by": bundle.resampling_by, "resamples": RESAMPLES, "seed": BOOTSTRAP_SEED,
            "method": "where a difference's interval is a bootstrap: a percentile bootstrap over "
                      "the paired tasks (whole clusters of tasks where the bundle gives "
                      "clusters), only at 20 units or more; for judges' verdicts of 10 judges or "
                      "more, judges and tasks drawn independently (a crossed two-way "
                      "bootstrap), else judges held fixed; numpy default_rng(seed)",
        },
        "controls": [{"builder": b.bundle_id, "known_good": counts[i]["known_good"],
                      "seeded_defect": counts[i]["seeded_defect"]} for i, b in enumerate(builders)],
        "primary": primary,
        "alpha": alpha, "alpha_named_by": alpha_named_by,
        "builders": entries,
        "differences": differences,
        "ranking": _ranking(primary, entries, differences, not_compared, human_not_compared,
                            bundle.run.default_condition, alpha),
    }


def _human(data: ReportData, builder_index: dict, task_index: dict):
    """(why there is no human comparison or None, the groups of judges present, (phase, group) ->
    (passes, verdicts): builders × judges × tasks counts of locked verdicts on copies in scope)."""
    bundle, n_builders, n_tasks = data.bundle, len(builder_index), len(task_index)
    if data.session.kind != "copies":
        return ({"reasons": REASONS_REASON, "pairs": PAIRS_REASON}.get(data.session.kind,
                                                                       FINDINGS_REASON), [], {})
    present = set(data.judges.groups)
    groups = [g for g in HUMAN_GROUPS if g in present]
    columns, column_builder, column_task = [], [], []
    for i, item in enumerate(data.items.rows):
        c = bundle.copy_by_pk[item.copy_id]
        if c.truth in SCOPE:
            columns.append(i)
            column_builder.append(builder_index[c.builder_id])
            column_task.append(task_index[c.task_id])
    columns = np.asarray(columns, dtype=np.int64)
    # each column's (builder, task) cell, numbered builder-major
    cells = (np.asarray(column_builder, dtype=np.int64) * n_tasks
             + np.asarray(column_task, dtype=np.int64))
    group_of = np.asarray(data.judges.groups, dtype=object)
    human, judged = {}, 0
    for phase in (1, 2):
        for group in groups:
            says = data.verdicts.says[phase][np.ix_(np.flatnonzero(group_of == group), columns)]
            passed, locked = says == 0, says >= 0
            human[(phase, group)] = (_cell_sums(passed, cells, n_builders, n_tasks),
                                     _cell_sums(locked, cells, n_builders, n_tasks))
            judged += int(locked.sum())
    return (None if judged else NO_JUDGES_REASON), groups, human


def _cell_sums(matrix, cells, n_builders: int, n_tasks: int):
    """builders × judges × tasks sums of a judges × columns 0/1 matrix, each column added to its
    (builder, task) cell: one bincount (a product with a columns × tasks indicator per builder
    gave the same whole numbers, in a fifth of a second at 30 judges × 1,500 copies)."""
    judges, size = matrix.shape[0], n_builders * n_tasks
    flat = (np.arange(judges, dtype=np.int64)[:, None] * size + cells[None, :]).ravel()
    sums = np.bincount(flat, weights=matrix.ravel().astype(np.float64), minlength=judges * size)
    return np.ascontiguousarray(sums.reshape(judges, n_builders, n_tasks).transpose(1, 0, 2))


def _reviewer_sums(data: ReportData, builder_index: dict, task_index: dict) -> list:
    """Per reviewer (bundle order): (passes, scored) as builders × tasks arrays over its
    default-condition reviews of copies in scope, and per builder how many were left out."""
    bundle = data.bundle
    rule = bundle.run.abstain_scoring
    shape = (len(builder_index), len(task_index))
    sums = {r.pk: (np.zeros(shape), np.zeros(shape), np.zeros(shape[0], dtype=np.int64))
            for r in bundle.reviewers}
    for review in bundle.default_reviews:
        c = bundle.copy_by_pk[review.copy_id]
        if c.truth not in SCOPE:
            continue
        k, n, left_out = sums[review.reviewer_id]
        b, t = builder_index[c.builder_id], task_index[c.task_id]
        verdict = scored_verdict(review.verdict, rule)
        if verdict is None or review_group(review, bundle) not in SCORED_REVIEWS:
            left_out[b] += 1
            continue
        n[b, t] += 1
        k[b, t] += verdict == "pass"
    return [sums[r.pk] for r in bundle.reviewers]


def _family(source, group, reviewer, k, n, labels, scoped, builders, primary) -> list:
    """The differences of every pair of builders in scope on one source, Holm within it."""
    is_primary = (source == primary["source"] and group == primary["group"]
                  and reviewer == primary["reviewer"])
    entries = []
    for a, b in combinations(scoped, 2):
        result = paired_difference(k[a], n[a], k[b], n[b], labels)
        entries.append({
            "source": source, "group": group, "reviewer": reviewer,
            "builders": [builders[a].bundle_id, builders[b].bundle_id],
            "tasks": result["tasks"], "units": result["units"],
            "pass_rates": [rate(result["k_a"], result["n_a"]), rate(result["k_b"], result["n_b"])],
            "difference": {"value": result["value"], "low": result["low"], "high": result["high"]},
            "p_value": result["p_value"], "p_holm": None, "test": result["test"],
            "discordant": result["discordant"], "mcnemar_p": result["mcnemar_p"],
            "smallest_p": result["smallest_p"], "interval": result["interval"],
            "no_interval": result["no_interval"], "resampled": result["resampled"],
            "judges": result["judges"], "conditional_on_judges": result["conditional_on_judges"],
            "primary": is_primary,
        })
    for entry, adjusted in zip(entries, stats.holm_adjust([e["p_value"] for e in entries]),
                               strict=True):
        entry["p_holm"] = adjusted
    return entries


def _primary(data: ReportData) -> dict:
    """The primary comparison: the protocol's primary_comparison, else the default; a reviewer
    may be named by bundle id or by model (then the reviewer of that model, where only one is)."""
    named = (data.session.protocol or {}).get("primary_comparison")
    named_by = "preregistration" if isinstance(named, dict) and named.get("source") else "default"
    chosen = named if named_by == "preregistration" else DEFAULT_PRIMARY
    source = chosen["source"]
    reviewer = None
    if source == "reviewer":
        reviewer = chosen.get("reviewer")
        ids = {r.bundle_id for r in data.bundle.reviewers}
        of_model = [r.bundle_id for r in data.bundle.reviewers if r.model == reviewer]
        if reviewer not in ids and len(of_model) == 1:
            reviewer = of_model[0]
    return {"source": source,
            "group": chosen.get("group", "invited") if source in JUDGE_SOURCES else None,
            "reviewer": reviewer, "named_by": named_by}


def _label(primary: dict, condition: str) -> str:
    source = primary["source"]
    if source in JUDGE_SOURCES:
        words = GROUP_WORDS.get(primary["group"], f"the {primary['group']} judges'")
        return f"{words} phase-{source[-1]} pass rate"
    if source == "truth":
        return "the truth pass rate (the tests_pass share)"
    if source == "reviewer":
        return f"reviewer {primary['reviewer']}'s pass rate (condition {condition})"
    return f"the source {source!r}"


def _primary_rate(entry: dict, primary: dict):
    source = primary["source"]
    if source == "truth":
        return entry["truth"]["pass_rate"]["rate"]
    if source in JUDGE_SOURCES:
        return entry["judges"].get(primary["group"], {}).get(source[-1], {}).get("rate")
    return next((r["pass_rate"]["rate"] for r in entry["reviewers"]
                 if r["reviewer"] == primary["reviewer"]), None)


def _unavailable(primary: dict, human_not_compared) -> str:
    source, group = primary["source"], primary["group"]
    if source in JUDGE_SOURCES:
        if group not in HUMAN_GROUPS:
            return f"{group!r} is not a group of judges this section counts"
        if human_not_compared:
            return human_not_compared
        return f"no judge of the group {group!r} joined"
    if source == "reviewer":
        return f"no one reviewer of the run is named {primary['reviewer']!r}"
    return f"the source {source!r} is not one this section computes"


def _ranking(primary, entries, differences, not_compared, human_not_compared, condition,
             alpha: float) -> dict:
    ranking = {"source": primary["source"], "group": primary["group"],
               "reviewer": primary["reviewer"], "order": [], "supported": [], "statements": []}
    if not_compared is not None:
        ranking["statements"] = [f"Not compared: {not_compared}."]
        return ranking
    label = _label(primary, condition)
    chosen = [d for d in differences if d["primary"]]
    if not chosen:
        why = _unavailable(primary, human_not_compared)
        ranking["statements"] = [f"The primary comparison, {label}, could not be made: {why}. "
                                 "No ranking is stated."]
        return ranking
    in_scope = [e for e in entries if e["copies"]]
    ranked = sorted(range(len(in_scope)), key=lambda i: (
        _primary_rate(in_scope[i], primary) is None, -(_primary_rate(in_scope[i], primary) or 0.0), i))
    ranking["order"] = [in_scope[i]["builder"] for i in ranked]
    statements = []
    for d in chosen:
        a, b = d["builders"]
        value, low, high = d["difference"]["value"], d["difference"]["low"], d["difference"]["high"]
        p = d["p_holm"]
        tasks = f"{d['tasks']} task{'s' if d['tasks'] != 1 else ''}"
        if value is None:
            statements.append(f"{a} and {b} not compared: no task where both have something scored.")
            continue
        judges = (f", {numbers.conditional_on_judges(d['judges'])}" if d["conditional_on_judges"]
                  else "")
        sized_out = low is None and d["interval"] is None  # no interval is valid at this size
        if p is not None and p < alpha and (sized_out or low > 0 or high < 0):
            sign = 1 if value > 0 else -1
            above, below = (a, b) if sign > 0 else (b, a)
            if sized_out:
                interval = f"(no interval: {d['no_interval']})"
            else:
                lo, hi = sorted((sign * low, sign * high))
                interval = f"[{lo:+.3f}, {hi:+.3f}]"
            ranking["supported"].append([above, below])
            statements.append(f"{above} above {below}: difference {sign * value:+.3f} {interval}, "
                              f"Holm-adjusted p {numbers.p_text(p)}, {tasks}{judges}.")
        else:
            interval = (f"[{low:+.3f}, {high:+.3f}]" if low is not None
                        else f"(no interval: {d['no_interval']})")
            holm = numbers.p_text(p)
            statements.append(f"{a} and {b} not distinguished: difference {value:+.3f} {interval}, "
                              f"Holm-adjusted p {holm}, {tasks}{judges}.")
    if ranking["supported"]:
        head = (f"Ranked on the primary comparison, {label}, only where the Holm-adjusted p is "
                f"below {alpha:g} and the 95% interval, where one is valid, excludes 0.")
    else:
        head = f"The builders are not distinguished on the primary comparison, {label}."
    ranking["statements"] = [head, *statements]
    return ranking


# --- pure helpers ------------------------------------------------------------------------------


def task_units(copy_units) -> dict:
    """task -> resampling unit number, from (task, unit) pairs of copies (data.bundle.unit_of_copy).

    Each task belongs to its copies' unit (its cluster, or itself); a task whose copies fall in
    two units joins them into one (a union of the units it spans), so that the copies of one task
    are always drawn together and a paired difference is never split between draws. Units are
    numbered 0, 1, … in the order their first task appears."""
    parent: dict = {}

    def find(node):
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    order = []
    for task, unit in copy_units:
        task_node, unit_node = ("task", task), ("unit", unit)
        if task_node not in parent:
            parent[task_node] = task_node
            order.append(task)
        parent.setdefault(unit_node, unit_node)
        root_task, root_unit = find(task_node), find(unit_node)
        if root_task != root_unit:
            parent[root_unit] = root_task
    numbers: dict = {}
    return {task: numbers.setdefault(find(("task", task)), len(numbers)) for task in order}


def paired_difference(k_a, n_a, k_b, n_b, units, *, resamples: int = RESAMPLES,
                      seed: int = BOOTSTRAP_SEED) -> dict:
    """The difference in pass rate of builder a minus builder b, paired by task.

    k_x[t], n_x[t] are builder x's passes and scored labels or verdicts on task t: 1-D arrays over
    tasks (truth, a model reviewer) or judges × tasks matrices (human verdicts). `units` labels each
    task's resampling unit (the task, or its cluster). Tasks where either builder has nothing
    scored are dropped; over the T remaining (paired) tasks, and for judges over the judges with
    a verdict on them::

        value = Σ k_a / Σ n_a − Σ k_b / Σ n_b
        d_t   = k_a(t) / n_a(t) − k_b(t) / n_b(t)          (summed over judges first)
        p     = sign_flip_p(Σ_{t in u} d_t for each unit u)  (two-sided, exact up to 16 units)

    The interval is the 95% percentile interval of `value` over `resamples` bootstrap draws of the
    units with replacement (reports.stats.cluster_weights), and, for judges × tasks input, of the
    judges too, independently (reports.stats.judges_clusters_weights, resampled_sums): a crossed
    two-way bootstrap (Owen 2007; Davison & Hinkley 1997, §3.8). Resamples where a builder drew
    nothing scored are dropped (NaN). No interval (None) with one unit and, for judges, one
    judge: there is nothing to resample.

    Returns {"tasks", "units", "judges" (None for 1-D input), "k_a", "n_a", "k_b", "n_b",
    "value", "low", "high", "p_value"}; value, low, high and p_value are None with no paired task.
    """
    arrays = [np.asarray(x, dtype=np.float64) for x in (k_a, n_a, k_b, n_b)]
    two_way = arrays[0].ndim == 2
    if not two_way:
        arrays = [x[None, :] for x in arrays]
    if any(x.shape != arrays[0].shape for x in arrays) or arrays[0].shape[1] != len(units):
        raise ValueError("k_a, n_a, k_b, n_b must have one shape, with a unit label per task")
    result = {"tasks": 0, "units": 0, "judges": 0 if two_way else None, "k_a": 0, "n_a": 0,
              "k_b": 0, "n_b": 0, "value": None, "low": None, "high": None, "p_value": None,
              "test": None, "discordant": None, "mcnemar_p": None, "smallest_p": None,
              "interval": None, "no_interval": "no task where both builders have something scored",
              "resampled": None, "conditional_on_judges": None}
    paired = np.flatnonzero((arrays[1].sum(axis=0) > 0) & (arrays[3].sum(axis=0) > 0))
    if paired.size == 0:
        return result
    arrays = [x[:, paired] for x in arrays]
    if two_way:
        judges = np.flatnonzero((arrays[1] + arrays[3]).sum(axis=1) > 0)
        arrays = [x[judges] for x in arrays]
    ka, na, kb, nb = arrays
    labels = [units[t] for t in paired]
    numbers: dict = {}
    index = np.asarray([numbers.setdefault(label, len(numbers)) for label in labels])
    per_task = [x.sum(axis=0) for x in arrays]
    d = per_task[0] / per_task[1] - per_task[2] / per_task[3]
    totals = [int(round(float(x.sum()))) for x in arrays]
    result.update({
        "tasks": int(paired.size), "units": len(numbers),
        "judges": int(ka.shape[0]) if two_way else None,
        "k_a": totals[0], "n_a": totals[1], "k_b": totals[2], "n_b": totals[3],
        "value": totals[0] / totals[1] - totals[2] / totals[3],
        "p_value": stats.sign_flip_p(np.bincount(index, weights=d, minlength=len(numbers)),
                                     seed=seed),
        "test": "sign-flip",
    })
    if np.all(per_task[1] == 1) and np.all(per_task[3] == 1):
        # One pass-or-fail per builder and task: a paired binary design, tested exactly on its
        # discordant tasks (McNemar), at any number of tasks. Where tasks are nested in declared
        # clusters, the clusters are the independent units: the cluster sign-flip stays the
        # p-value, and McNemar is given beside it, as if the tasks were independent.
        a_only = int(np.sum((per_task[0] == 1) & (per_task[2] == 0)))
        b_only = int(np.sum((per_task[0] == 0) & (per_task[2] == 1)))
        mcnemar = stats.mcnemar_exact(a_only, b_only)
        clustered = len(numbers) < paired.size
        result.update({
            "discordant": [a_only, b_only], "mcnemar_p": mcnemar,
            # The smallest two-sided p these discordant tasks could give: 2^(1−G).
            "smallest_p": min(1.0, 2.0 ** (1 - (a_only + b_only))),
            "test": "cluster sign-flip" if clustered else "McNemar exact",
        })
        if not clustered:
            result["p_value"] = mcnemar
    result.update(_interval(arrays, per_task, index, labels, len(numbers), two_way, paired.size,
                            resamples=resamples, seed=seed))
    return result


# What each interval is, as the report names it (`interval` in each difference).
NEWCOMBE = "Newcombe hybrid score"
NEWCOMBE_INDEPENDENT = "Newcombe hybrid score, tasks treated as independent"
BOOTSTRAP = "bootstrap"
TWO_WAY = "two-way bootstrap"


def _interval(arrays, per_task, index, labels, n_units: int, two_way: bool, n_tasks: int, *,
              resamples: int, seed: int) -> dict:
    """The interval of a paired difference, and what it is (issue 28 item 3).

    One binary outcome per builder and task (the paired 2×2 design): Newcombe's hybrid score
    interval (reports.stats.newcombe_paired_interval), valid at any number of tasks — where the
    tasks are the units; where they are nested in declared clusters it is given only below
    MIN_BOOTSTRAP_UNITS clusters, labelled "tasks treated as independent", and a cluster bootstrap
    at or above. Otherwise (several labels per task): a percentile bootstrap over the units only
    at MIN_BOOTSTRAP_UNITS or more, else no interval and why. Human verdicts of fewer than
    MIN_JUDGES_RESAMPLED judges hold the judges fixed (the interval is conditional on them); of
    more, judges are resampled as well (a crossed two-way bootstrap)."""
    ka, na, kb, nb = arrays
    judges = ka.shape[0] if two_way else None
    conditional = two_way and judges < stats.MIN_JUDGES_RESAMPLED
    out = {"interval": None, "no_interval": None, "resampled": None,
           "conditional_on_judges": conditional if two_way else None}
    binary = bool(np.all(per_task[1] == 1) and np.all(per_task[3] == 1))
    clustered = n_units < n_tasks
    if binary and (not clustered or n_units < stats.MIN_BOOTSTRAP_UNITS):
        a_pass, b_pass = per_task[0] == 1, per_task[2] == 1
        _, low, high = stats.newcombe_paired_interval(
            int(np.sum(a_pass & b_pass)), int(np.sum(a_pass & ~b_pass)),
            int(np.sum(~a_pass & b_pass)), int(np.sum(~a_pass & ~b_pass)))
        out.update(low=low, high=high, interval=NEWCOMBE_INDEPENDENT if clustered else NEWCOMBE)
        return out
    if n_units < stats.MIN_BOOTSTRAP_UNITS:
        unit = ("cluster" if clustered else "task") + ("s" if n_units != 1 else "")
        out.update(low=None, high=None, no_interval=(
            f"{n_units} {unit}, fewer than {stats.MIN_BOOTSTRAP_UNITS}, and more than one label "
            f"per task: no interval is valid at this size (a bootstrap over so few units is too "
            f"narrow); the p-value's test is exact"))
        return out
    # The draws give every task of a unit the unit's weight, so each resampled sum is a sum over
    # units of (draws of the unit) × (the unit's total): summed per unit first, the products
    # shrink from tasks to units (25 times at 300 tasks in 12 clusters). Every term is a whole
    # number far below 2**53, so the sums, and every figure, are exactly those over tasks.
    first = np.unique(index, return_index=True)[1]  # each unit's first task, in unit order
    unit_word = "clusters" if clustered else "tasks"
    if two_way and not conditional:
        judge_weights, unit_weights = stats.judges_clusters_weights(
            judges, labels, resamples=resamples, seed=seed)
        sums = stats.resampled_sums([_unit_sums(x, index, n_units) for x in arrays],
                                    judge_weights, unit_weights[:, first])
        out.update(interval=TWO_WAY, resampled=f"judges and {unit_word}")
    else:
        # Judges held fixed (or none): each array summed over its rows first.
        weights = stats.cluster_weights(labels, resamples=resamples, seed=seed)
        by_unit = np.stack([_unit_sums(x, index, n_units).sum(axis=0) for x in arrays], axis=1)
        sums = (weights[:, first] @ by_unit).T
        out.update(interval=BOOTSTRAP, resampled=unit_word)
    with np.errstate(invalid="ignore", divide="ignore"):
        estimates = sums[0] / sums[1] - sums[2] / sums[3]
    low, high = stats.percentile_interval(estimates)
    out.update(low=finite(low), high=finite(high))
    return out


def _unit_sums(matrix, index, n_units: int):
    """rows × units sums of a rows × tasks matrix, each task added to its unit (index[t])."""
    rows = matrix.shape[0]
    flat = (np.arange(rows, dtype=np.int64)[:, None] * n_units + index[None, :]).ravel()
    return np.bincount(flat, weights=matrix.ravel(), minlength=rows * n_units).reshape(rows, n_units)
