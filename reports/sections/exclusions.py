"""The "preregistered_exclusions" section: the results again without what a preregistered rule
excludes (issue 29 item 4), beside the full ones, never instead of them.

A rule that acts (content.rules ACTIONS), frozen with the protocol (its "actions"), is the only
way anything is left out: without one the section says so and analyses nothing again, since a
rule chosen after seeing the data is what preregistration exists to prevent. The report gives
two versions at most: everyone and everything (every other section), and all preregistered
exclusions together (this one).

exclude_tasks: a task is left out where the share of the judges who saw it (had an item of it)
that flagged it in phase 1 (alone, before any model was shown) meets the rule
(content.rules.tasks_excluded). The builders are compared again on the rest
(reports.sections.builders, on reports.restrict.without_tasks), the model reviewers scored again;
each judge is scored again with their own flags left out of the shares (leave-one-out), so that
no one's flags can take a task they did badly on out of their own score.
"""

from content.rules import tasks_excluded
from reports.loading import ReportData
from reports.restrict import without_tasks
from reports.sections.builders import builders_compared
from reports.sections.common import judges_by_task
from reports.sections.scores import judge_scores, reviewer_scores

NO_RULE = ("No exclusion was preregistered, so nothing is analysed again: a rule chosen after "
           "seeing the data is what preregistration exists to prevent. Task flags, where the "
           "session collected them, are listed as they are.")
PHASE = 1  # the flags counted: phase 1's, given alone

DEFINITIONS = {
    "rules": "the preregistration's rules that act, as frozen with the protocol",
    "excluded_tasks": "the tasks the rules exclude, by bundle id, from every judge's phase-1 "
                      "flags (the share of the judges who saw a task that flagged it)",
    "builders_compared": "the builders compared as in builders_compared, on the other tasks",
    "reviewers": "each model reviewer scored as in scores.reviewers, on the other tasks",
    "judges": "each judge scored as in scores.judges, on the tasks the rules exclude when that "
              "judge's own flags are left out (leave-one-out): excluded_tasks may differ from "
              "the run's",
}


def preregistered_exclusions(data: ReportData, flags=None) -> dict:
    """`flags`: (task pk, judge row, kind, severity, phase) of every locked task flag; by default
    the session's (data.task_flags, drafts never counted)."""
    if flags is None:
        flags = [(task, data.judges.index[judge], kind, severity, phase)
                 for judge, task, phase, kind, severity, _reason, locked in data.task_flags
                 if locked]
    actions = [a for a in (data.session.protocol or {}).get("actions") or []
               if a["action"] == "exclude_tasks"]
    if not actions:
        return {"stated": False, "why": NO_RULE, "rules": [], "definitions": dict(DEFINITIONS),
                "excluded_tasks": [], "builders_compared": None, "reviewers": None, "judges": []}
    counted = [(task, judge, kind, severity) for task, judge, kind, severity, phase in flags
               if phase == PHASE]
    seen = _seen(data)
    excluded = _excluded(actions, counted, seen, leave_out=None)
    restricted = without_tasks(data, excluded)
    task_ids = {t.pk: t.bundle_id for t in data.bundle.tasks}
    judges = []
    by_set: dict = {}
    for j, judge in enumerate(data.judges.rows):
        own = _excluded(actions, counted, seen, leave_out=j)
        if own not in by_set:
            by_set[own] = judge_scores(without_tasks(data, own))
        judges.append({"judge": judge.pseudonym,
                       "excluded_tasks": sorted(task_ids[t] for t in own),
                       "phases": by_set[own][j]["phases"]})
    return {
        "stated": True, "why": None, "rules": actions, "definitions": dict(DEFINITIONS),
        "excluded_tasks": [t.bundle_id for t in data.bundle.tasks if t.pk in excluded],
        "builders_compared": builders_compared(restricted),
        "reviewers": reviewer_scores(restricted),
        "judges": judges,
    }


def _seen(data: ReportData) -> dict:
    """task pk -> the judge rows that had an item of it."""
    return {task: {data.judges.index[pk] for pk in judges}
            for task, judges in judges_by_task(data).items()}


def _excluded(actions, flags, seen, *, leave_out) -> frozenset:
    out: set = set()
    for rule in actions:
        out |= tasks_excluded(rule, flags, seen, leave_out=leave_out)
    return frozenset(out)
