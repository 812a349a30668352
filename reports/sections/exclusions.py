"""The "preregistered_exclusions" section: the results again without what a preregistered rule
excludes (issue 29 item 4, issue 30 item 5), beside the full ones, never instead of them.

A rule that acts (content.rules ACTIONS), frozen with the protocol (its "actions"), is the only
way anything is left out: without one the section says so and analyses nothing again, since a
rule chosen after seeing the data is what preregistration exists to prevent. The report gives
two versions at most: everyone and everything (every other section), and all preregistered
exclusions together (this one), which is then the primary one (`primary`). Each rule reads the
session as it was run, never what another rule left out; what they exclude is then left out
together.

exclude_tasks: a task is left out where the share of the judges who saw it (had an item of it)
that flagged it in phase 1 (alone, before any model was shown) meets the rule
(content.rules.tasks_excluded). Each judge is scored again with their own flags left out of the
shares (leave-one-out), so that no one's flags can take a task they did badly on out of their
own score.

exclude_judge: a judge is left out where a metric of their own locked phase-1 verdicts meets the
rule (content.rules.JUDGE_METRICS): their recall on the screening seeded defects, their
true-negative rate on the screening known-good copies, the share of their answers faster than the
rule's seconds, their median seconds per answer (the page-measured Verdict.seconds_spent). The
screening controls are drawn by content.draws.screening_items from the seed the opening committed
to (the protocol's "screening"), published here with what it draws (reports.verify recomputes
both). Scores that exclude are never the scores reported: where screening controls were drawn,
every judge's scores here, the excluded judges' included, leave them out; a figure that could
not be computed (a judge given no screening control) excludes no one.

With both, the builders are compared again (reports.sections.builders) without the excluded
tasks and judges (the controls are never in a builder's rate), the model reviewers scored again
without the excluded tasks, and every judge scored again as said above.
"""

import statistics

import numpy as np

from content.draws import screening_items
from content.rules import (
    CONTROL_TRUTHS,
    JUDGE_METRICS,
    is_fast,
    judge_excluded,
    judge_metric,
    screening_count,
    tasks_excluded,
)
from reports.loading import ReportData
from reports.restrict import without_items, without_judges, without_tasks
from reports.sections.builders import builders_compared
from reports.sections.common import judges_by_task
from reports.sections.decision_rules import decision_rules
from reports.sections.pairs import pairs
from reports.sections.pooled import pooled_by_group
from reports.sections.reviewer_conditions import reviewer_conditions
from reports.sections.scores import judge_scores, other_conditions, reviewer_scores
from reports.sections.self_preference import self_preference

NO_RULE = ("No exclusion was preregistered, so nothing is analysed again: a rule chosen after "
           "seeing the data is what preregistration exists to prevent. Task flags, where the "
           "session collected them, are listed as they are.")
PHASE = 1  # the flags counted, the verdicts screened: phase 1's, given alone

DEFINITIONS = {
    "rules": "the preregistration's rules that act, as frozen with the protocol",
    "primary": "whether these results are the primary ones: they are wherever a rule that acts "
               "was preregistered; the other sections then state everyone and everything",
    "excluded_tasks": "the tasks the rules exclude, by bundle id, from every judge's phase-1 "
                      "flags (the share of the judges who saw a task that flagged it)",
    "screening": "the controls judges are screened on: of the session's seeded_defect copies and "
                 "of its known_good copies apart, the share the rules name (rounded up), first in "
                 "the order HMAC-SHA256(seed, item key) draws; the seed is the one whose SHA-256 "
                 "the protocol froze at opening, published here; null where no rule reads the "
                 "controls",
    "screened": "each judge's figures for each exclude_judge rule, on their own locked phase-1 "
                "verdicts: judge_recall_controls, the screening seeded defects judged fail; "
                "judge_tnr_controls, the screening known-good copies judged pass; "
                "judge_fast_answers, the answers whose page-measured time (seconds_spent, summed "
                "over visits) the rule's seconds call fast; judge_median_seconds, the median "
                "of those times. A figure that cannot be computed (null) excludes no one",
    "excluded_judges": "the judges the rules exclude, each with the rules that exclude them",
    "builders_compared": "the builders compared as in builders_compared, without the excluded "
                         "tasks and the excluded judges",
    "reviewers": "each model reviewer scored as in scores.reviewers, on the other tasks",
    "judges": "every judge, excluded or not, scored as in scores.judges, on the tasks the rules "
              "exclude when that judge's own flags are left out (leave-one-out: excluded_tasks "
              "may differ from the run's) and, where screening controls were drawn, without them: "
              "the scores that exclude are never the scores reported",
    "decision_rules": "the preregistered decision rules evaluated as in decision_rules, on these "
                      "results (without the excluded tasks and judges, every figure a rule may "
                      "name computed again): the primary evaluation; decision_rules is "
                      "everyone's",
}


def preregistered_exclusions(data: ReportData, flags=None) -> dict:
    """`flags`: (task pk, judge row, kind, severity, phase) of every locked task flag; by default
    the session's (data.task_flags, drafts never counted)."""
    if flags is None:
        flags = [(task, data.judges.index[judge], kind, severity, phase)
                 for judge, task, phase, kind, severity, _reason, locked in data.task_flags
                 if locked]
    protocol = data.session.protocol or {}
    actions = [a for a in protocol.get("actions") or []
               if a["action"] in ("exclude_tasks", "exclude_judge")]
    if not actions:
        return {"stated": False, "primary": False, "why": NO_RULE, "rules": [],
                "definitions": dict(DEFINITIONS), "excluded_tasks": [], "screening": None,
                "screened": [], "excluded_judges": [], "builders_compared": None,
                "reviewers": None, "judges": [], "decision_rules": None}
    task_rules = [a for a in actions if a["action"] == "exclude_tasks"]
    judge_rules = [a for a in actions if a["action"] == "exclude_judge"]
    counted = [(task, judge, kind, severity) for task, judge, kind, severity, phase in flags
               if phase == PHASE]
    seen = _seen(data)
    excluded = _excluded(task_rules, counted, seen, leave_out=None)
    screening = _screening(data, protocol.get("screening"))
    screening_keys = set(screening["items"]) if screening else set()
    screened = _screened(data, judge_rules, screening_keys)
    excluded_rows = [j for j, entry in enumerate(screened) if entry["excluded_by"]]
    restricted = without_judges(without_tasks(data, excluded), excluded_rows)
    reported = without_items(data, screening_keys)  # what every judge's score here is on
    task_ids = {t.pk: t.bundle_id for t in data.bundle.tasks}
    judges = []
    by_set: dict = {}
    for j, judge in enumerate(data.judges.rows):
        own = _excluded(task_rules, counted, seen, leave_out=j)
        if own not in by_set:
            by_set[own] = judge_scores(without_tasks(reported, own))
        judges.append({"judge": judge.pseudonym, "excluded_by": screened[j]["excluded_by"],
                       "excluded_tasks": sorted(task_ids[t] for t in own),
                       "phases": by_set[own][j]["phases"]})
    compared = builders_compared(restricted)
    # (Reviewers are scored on the reviews alone: the excluded judges change nothing there.)
    reviewers = reviewer_scores(without_tasks(data, excluded))
    return {
        "stated": True, "primary": True, "why": None, "rules": actions,
        "definitions": dict(DEFINITIONS),
        "excluded_tasks": [t.bundle_id for t in data.bundle.tasks if t.pk in excluded],
        "screening": screening,
        "screened": screened if judge_rules else [],
        "excluded_judges": [{"judge": entry["judge"], "rules": entry["excluded_by"]}
                            for entry in screened if entry["excluded_by"]],
        "builders_compared": compared,
        "reviewers": reviewers,
        "judges": judges,
        "decision_rules": _decision_rules(restricted, compared, reviewers),
    }


def _decision_rules(restricted: ReportData, compared: dict, reviewers: list) -> dict:
    """The preregistered decision rules evaluated as the decision_rules section evaluates them,
    on the data without what the rules exclude: every figure a rule may name computed again on
    it (the pooled effects, the reviewers' scores and conditions, self-preference, a pairs
    session's figures), the builders compared and the reviewers' scores being this section's
    own (`compared`, `reviewers`), so a rule reads the figures the section shows."""
    sections = {
        "scores": {"reviewers": reviewers},
        "other_conditions": other_conditions(restricted),
        "reviewer_conditions": reviewer_conditions(restricted),
        "self_preference": self_preference(restricted),
        "builders_compared": compared,
        "pairs": pairs(restricted),
    }
    return decision_rules(restricted, pooled_by_group(restricted), sections)


def _screening(data: ReportData, frozen: dict | None) -> dict | None:
    """The screening draw, from the seed the opening recorded: the share, the seed and its
    committed hash, the items drawn (by key, sorted) and how many controls of each truth there
    were and were drawn. None where the protocol froze no screening."""
    if not frozen:
        return None
    controls = {key: truth for key, truth in zip(data.items.keys, data.items.truths["current"],
                                                 strict=True) if truth in CONTROL_TRUTHS}
    share = frozen["share"]
    seed = data.screening_seed or None
    drawn = screening_items(seed, lambda n: screening_count(share, n), controls) if seed else set()
    counts = {truth: {"controls": sum(1 for t in controls.values() if t == truth),
                      "screening": sum(1 for k in drawn if controls[k] == truth)}
              for truth in CONTROL_TRUTHS}
    return {"share": share, "seed": seed, "seed_sha256": frozen["seed_sha256"],
            "items": sorted(drawn), "controls": counts}


def _screened(data: ReportData, rules: list[dict], screening_keys: set) -> list[dict]:
    """Per judge (in row order): each exclude_judge rule's figure and whether it excludes them."""
    says = data.verdicts.says[PHASE]
    truths = data.items.truths["current"]
    columns = {truth: np.asarray([i for i, key in enumerate(data.items.keys)
                                  if key in screening_keys and truths[i] == truth], dtype=np.int64)
               for truth in CONTROL_TRUTHS}
    v = data.verdicts
    times: list[list[float]] = [[] for _ in data.judges.rows]
    for n in np.flatnonzero(v.locked).tolist():
        if v.phase[n] == PHASE:
            times[int(v.judge[n])].append(float(v.seconds_spent[n]))
    entries = []
    for j, judge in enumerate(data.judges.rows):
        figures = []
        for rule in rules:
            figure = _figure(rule, says[j], columns, times[j])
            figure["excludes"] = judge_excluded(rule, figure["value"])
            figures.append(figure)
        entries.append({"judge": judge.pseudonym, "rules": figures,
                        "excluded_by": [f["rule"] for f in figures if f["excludes"]]})
    return entries


def _figure(rule: dict, says, columns: dict, times: list[float]) -> dict:
    """One judge's figure for one rule: {rule, metric, value, k, n} (k null for the median)."""
    metric = judge_metric(rule)
    truth = JUDGE_METRICS[metric]
    if truth is not None:
        answered = says[columns[truth]]
        n = int((answered >= 0).sum())
        k = int((answered == (1 if truth == "seeded_defect" else 0)).sum())
    elif metric == "judge_fast_answers":
        n, k = len(times), sum(1 for t in times if is_fast(rule, t))
    else:
        n, k = len(times), None
        value = statistics.median(times) if times else None
        return {"rule": rule["name"], "metric": metric, "value": value, "k": k, "n": n}
    return {"rule": rule["name"], "metric": metric, "value": k / n if n else None, "k": k, "n": n}


def _seen(data: ReportData) -> dict:
    """task pk -> the judge rows that had an item of it."""
    return {task: {data.judges.index[pk] for pk in judges}
            for task, judges in judges_by_task(data).items()}


def _excluded(actions, flags, seen, *, leave_out) -> frozenset:
    out: set = set()
    for rule in actions:
        out |= tasks_excluded(rule, flags, seen, leave_out=leave_out)
    return frozenset(out)
