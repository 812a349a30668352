"""The "task_flags" section: the tasks judges flagged as invalid as posed (issue 29 item 3).

Per flagged task: the judges who saw it (had an item of it), and per phase the share of them who
flagged it (k/n with its Wilson 95% interval, content.scoring.rate), any kind, then per kind and
per severity; and every flag with its judge, phase, kind, severity and reason. Locked flags only,
as verdicts: a flag left a draft (its judge never locked that phase) is counted apart, never
shown. Without flags the section says so; in a session that did not collect them, says that."""

from content.rules import FLAG_KINDS, MAX_SEVERITY
from content.scoring import rate
from reports.loading import ReportData
from reports.sections.common import judges_by_task

NOT_COLLECTED = "This session did not collect task flags."
NONE_FLAGGED = "No judge flagged a task."
SOME_FLAGGED = ("Tasks judges flagged as invalid as posed, with the share of the judges who saw "
                "each that flagged it. Shown only now, after the reveal: before it, no one but "
                "the judge saw a flag.")
DEFINITIONS = {
    "seen_by": "the judges who had an item of the task (removed judges included, as in the "
               "mapping), by pseudonym",
    "flagged": "judges who flagged the task in that phase (locked flags only) over the judges who "
               "saw it, with the Wilson 95% interval",
    "by_kind": "the same, counting only flags of that kind; by_severity: only flags of that kind "
               "at exactly that severity (each judge has at most one flag per task and phase)",
    "severity": f"0 (minor) to {MAX_SEVERITY} (the task cannot be judged fairly), as the judge "
                "gave it",
    "kinds": "underspecified: the statement leaves the answer open; tests_unfair: the tests would "
             "reject a correct solution or accept a wrong one; other: the reason says",
    "drafts_left_out": "flags never locked (their judge did not lock that phase): not counted, "
                       "not shown",
}


def task_flags(data: ReportData) -> dict:
    session = data.session
    if not session.task_flags:
        return {"collected": False, "note": NOT_COLLECTED, "definitions": DEFINITIONS,
                "kinds": list(FLAG_KINDS), "max_severity": MAX_SEVERITY, "drafts_left_out": 0,
                "tasks": []}
    pseudonym = {j.pk: j.pseudonym for j in data.judges.rows}
    seen = judges_by_task(data)
    locked = [f for f in data.task_flags if f[6]]
    drafts = len(data.task_flags) - len(locked)
    by_task: dict[int, list] = {}
    for flag in locked:
        by_task.setdefault(flag[1], []).append(flag)
    tasks = []
    for task in data.bundle.tasks:
        flags = by_task.get(task.pk)
        if not flags:
            continue
        judges = seen.get(task.pk, set())
        n = len(judges)
        phases = []
        for phase in (1, 2):
            mine = [f for f in flags if f[2] == phase and f[0] in judges]
            phases.append({
                "phase": phase,
                "flagged": rate(len(mine), n),
                "by_kind": [{
                    "kind": kind,
                    "flagged": rate(sum(f[3] == kind for f in mine), n),
                    "by_severity": [
                        {"severity": level,
                         "share": rate(sum(f[3] == kind and f[4] == level for f in mine), n)}
                        for level in range(MAX_SEVERITY + 1)],
                } for kind in FLAG_KINDS],
            })
        tasks.append({
            "task": task.bundle_id, "title": task.title,
            "seen_by": sorted(pseudonym[j] for j in judges),
            "phases": phases,
            "flags": [{"judge": pseudonym[f[0]], "phase": f[2], "kind": f[3], "severity": f[4],
                       "reason": f[5]}
                      for f in sorted(flags, key=lambda f: (pseudonym[f[0]], f[2]))],
        })
    return {"collected": True, "note": SOME_FLAGGED if tasks else NONE_FLAGGED,
            "definitions": DEFINITIONS, "kinds": list(FLAG_KINDS), "max_severity": MAX_SEVERITY,
            "drafts_left_out": drafts, "tasks": tasks}
