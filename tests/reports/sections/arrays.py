"""Report data made by hand for the section builders: what reports/loading.py hands on (a
ReportData of lists, lookups and judges × items numpy matrices), built here in Python from small
lists, with plain stand-ins (SimpleNamespace) for the model instances. No database, no Django
model, no build_report.

    t1 = task("t1")
    b1 = builder("b1", "gpt-4o", "OpenAI")
    c1 = copy("t1-b1", t1, b1, "seeded_defect")
    data = report_data(bundle(tasks=[t1], builders=[b1], copies=[c1]),
                       items=[item(c1)], judges=[judge("J1")],
                       grid={1: ["F"], 2: ["P"]})

A verdict grid gives one string per judge and one character per item, per phase: F a locked
verdict of fail (findings: real), P of pass (findings: false_alarm), f and p the same unlocked (a
draft), "." none. Every judge is assigned every item in item order unless `orders` says otherwise.

The derived parts (the judges × items matrices, truth classes, resampling units) are computed
here, independently of reports.loading, in the plainest way; the expected figures of each test
are worked out in the test itself.
"""

import itertools
from datetime import UTC, datetime
from types import SimpleNamespace

import numpy as np
from scipy.stats import binomtest

from reports.loading import Assignments, Bundle, Items, Judges, ReportData, Verdicts

_pks = itertools.count(1)  # import order: a record made earlier has the smaller pk
PHASE1_LOCKED = datetime(2026, 1, 1, 10, 0, tzinfo=UTC)
PHASE2_LOCKED = datetime(2026, 1, 1, 11, 0, tzinfo=UTC)

DEFECTIVE = {"seeded_defect", "tests_fail", "real"}
GOOD = {"known_good", "tests_pass", "false_alarm"}


def truth_code(truth: str) -> int:
    return 1 if truth in DEFECTIVE else 0 if truth in GOOD else -1


# --- Stand-ins for the bundle's records -------------------------------------------------------------

def a_run(**fields):
    return SimpleNamespace(**{
        "pk": next(_pks), "name": "the run", "format": "blindjudge.run/2", "bundle_run": {"name": "the run"},
        "default_condition": "clean", "abstain_scoring": "not_flagged", "request_keys": None,
        "verdict_patterns": None, "bundle_sha256": "b" * 64, "manifest": {}, "manifest_sha256": "",
        "imported_at": None, **fields})


def task(bundle_id, *, cluster="", statement=None, title="", format="text"):
    return SimpleNamespace(pk=next(_pks), bundle_id=bundle_id, cluster=cluster, title=title,
                           format=format, statement=statement or f"Write {bundle_id}.")


def builder(bundle_id, model, family):
    return SimpleNamespace(pk=next(_pks), bundle_id=bundle_id, model=model, family=family)


def copy(bundle_id, task_, builder_, truth, *, imported_truth=None, cluster="", content=None,
         format="text", defect=""):
    return SimpleNamespace(
        pk=next(_pks), bundle_id=bundle_id, task_id=task_.pk, builder_id=builder_.pk, truth=truth,
        imported_truth=imported_truth or truth, cluster=cluster, format=format, defect=defect,
        content=f"def f():\n    return {bundle_id!r}\n" if content is None else content,
        content_sha256="c" * 64)


def reviewer(bundle_id, model, family):
    return SimpleNamespace(pk=next(_pks), bundle_id=bundle_id, model=model, family=family)


def review(reviewer_, copy_, verdict, *, condition="clean", seal="sealed", guess="", reason=""):
    return SimpleNamespace(
        pk=next(_pks), reviewer_id=reviewer_.pk, copy_id=copy_.pk, verdict=verdict,
        condition=condition, seal=seal, authorship_guess=guess, reason=reason, seal_reason="",
        content_verdict="", content_verdict_pattern="", request_sha256="")


def finding(bundle_id, copy_, truth, *, text=None, proposed_verdict="real", imported_truth=None):
    return SimpleNamespace(pk=next(_pks), bundle_id=bundle_id, copy_id=copy_.pk, truth=truth,
                           imported_truth=imported_truth or truth, proposed_verdict=proposed_verdict,
                           text=f"{bundle_id}: an off-by-one" if text is None else text)


def correction(target, old_truth, new_truth, *, note="", corrected_at=None, is_finding=False):
    return SimpleNamespace(copy=None if is_finding else target, finding=target if is_finding else None,
                           old_truth=old_truth, new_truth=new_truth, note=note,
                           corrected_at=corrected_at)


def bundle(*, tasks, builders, copies, reviewers=(), reviews=(), findings=(), raises=(),
           corrections=(), run=None, resampling="auto") -> Bundle:
    """The run's records. `raises`: (finding, reviewer, condition). `resampling`: "auto" (a
    cluster on any copy: clusters, a copy without one its task's own unit; else tasks where there
    are several; else None), or None / "task" / "cluster" forced."""
    run = run or a_run()
    reviews = list(reviews)
    by = resampling
    if by == "auto":
        by = "cluster" if any(c.cluster for c in copies) else "task" if len(tasks) > 1 else None
    units = {} if by is None else {
        c.pk: ("cluster", c.cluster) if c.cluster else ("task", c.task_id) for c in copies}
    raised = {f.pk: [] for f in findings}
    for f, r, condition in raises:
        raised[f.pk].append((r.bundle_id, condition))
    return Bundle(
        run=run, tasks=list(tasks), task_by_pk={t.pk: t for t in tasks},
        builders=list(builders), builder_by_pk={b.pk: b for b in builders},
        copies=list(copies), copy_by_pk={c.pk: c for c in copies},
        reviewers=list(reviewers), reviewer_by_pk={r.pk: r for r in reviewers},
        reviews=reviews,
        default_reviews=[r for r in reviews if r.condition == run.default_condition],
        other_reviews=[r for r in reviews if r.condition != run.default_condition],
        findings=list(findings), finding_by_pk={f.pk: f for f in findings},
        raised_by={pk: sorted(r for r, c in pairs if c == run.default_condition)
                   for pk, pairs in raised.items()},
        raised_by_conditions={pk: sorted(pairs) for pk, pairs in raised.items()},
        corrections=list(corrections), resampling_by=by, unit_of_copy=units)


# --- Stand-ins for the session's rows ----------------------------------------------------------------

def a_session(**fields):
    return SimpleNamespace(**{
        "pk": next(_pks), "url_id": "s-1", "kind": "copies", "state": "revealed",
        "created_at": None, "opened_at": None, "closed_at": None, "revealed_at": None,
        "items_per_judge": None, "guests_allowed": False, "guest_cap": None,
        "reviewer_display": "names", "scorecards": False, "draw_seed": "", "allocation_seed": "",
        "protocol": {"version": 2}, "protocol_sha256": "p" * 64, "decision_rules": [],
        "redaction_patterns": [], **fields})


def judge(pseudonym, *, admitted_as="invited", status="active", identified_by="token",
          locked=(True, True), **fields):
    """A judge; `locked`: whether it locked phase 1 and phase 2."""
    return SimpleNamespace(**{
        "pk": next(_pks), "pseudonym": pseudonym, "github_login": "", "display_name": "",
        "admitted_as": admitted_as, "identified_by": identified_by, "status": status,
        "erased_at": None, "joined_at": None, "removed_at": None,
        "phase1_locked_at": PHASE1_LOCKED if locked[0] else None,
        "phase2_locked_at": PHASE2_LOCKED if locked[1] else None,
        "commitment_sha256": "h" * 64, "commitment_salt": "salt", "order_seed": "seed", **fields})


def group_of(j) -> str:
    if j.status == "removed":
        return "removed"
    return {"host": "self_blinded_host", "guest": "guest"}.get(j.admitted_as, "invited")


def item(target, *, key=None, finding_=None):
    """An item judging a copy, or (finding_ given) the finding `finding_` of that copy."""
    judged = finding_ or target
    return SimpleNamespace(pk=next(_pks), key=key or judged.bundle_id, copy_id=target.pk,
                           task_id=target.task_id, finding_id=finding_.pk if finding_ else None)


def report_data(bundle_, *, items=(), judges=(), grid=None, orders=None, session=None,
                amendments=(), invitations=0, verdict_rows=None) -> ReportData:
    """The ReportData of these records. `grid`: phase -> one string per judge (see the module
    docstring). `orders`: judge index -> the item indexes it was assigned, in its drawn order
    (default: every item, in item order). `verdict_rows`: overrides the verdicts' columns, a list
    of dicts (judge, item, phase, value, locked and optionally kept, reason, seconds_spent,
    server_seconds, created_at, updated_at), in the database's order."""
    session = session or a_session()
    items, judges = list(items), list(judges)
    n_j, n_i = len(judges), len(items)
    findings_kind = session.kind == "findings"

    # Items and their truth, under each version (imported only once a label was corrected).
    targets = [bundle_.finding_by_pk[i.finding_id] if i.finding_id else bundle_.copy_by_pk[i.copy_id]
               for i in items]
    truths = {"current": [t.truth for t in targets], "imported": [t.imported_truth for t in targets]}
    versions = ["current"] + (["imported"] if bundle_.corrections else [])
    classes = {v: np.array([truth_code(t) for t in truths[v]], dtype=np.int8) for v in versions}

    # Assignments: (pk, judge pk, item pk, code, position, order key), by judge then position.
    orders = orders or {}
    rows, at, thirds = [], {}, np.full((n_j, n_i), -1, dtype=np.int64)
    for j, jd in enumerate(judges):
        order = orders.get(j, list(range(n_i)))
        for position, i in enumerate(order, 1):
            code = f"{jd.pseudonym}:{items[i].key}"
            at[(j, i)] = (len(rows), j, i, code, position)
            rows.append((next(_pks), jd.pk, items[i].pk, code, position, f"k{position:04d}"))
            thirds[j, i] = (position - 1) * 3 // len(order)

    # Verdicts, column-wise, and the matrices of the locked ones.
    if verdict_rows is None:
        verdict_rows = []
        for phase, lines in sorted((grid or {}).items()):
            for j, line in enumerate(lines):
                for i, mark in enumerate(line):
                    if mark != ".":
                        verdict_rows.append({"judge": j, "item": i, "phase": phase,
                                             "value": value_of(mark.upper(), findings_kind),
                                             "locked": mark.isupper()})
    says = {p: np.full((n_j, n_i), -1, dtype=np.int8) for p in (1, 2)}
    for v in verdict_rows:
        if v["locked"]:
            says[v["phase"]][v["judge"], v["item"]] = v["value"] in ("fail", "real")
    right = {}
    for version in versions:
        defective = classes[version] == 1
        for p in (1, 2):
            right[(version, p)] = (says[p] >= 0) & ((says[p] == 1) == defective[None, :])
    context = [at[(v["judge"], v["item"])] for v in verdict_rows]
    sort = sorted(range(len(verdict_rows)), key=lambda k: (context[k][0], verdict_rows[k]["phase"]))

    def column(name, default):
        return tuple(v.get(name, default) for v in verdict_rows)

    verdicts = Verdicts(
        assignment=context, phase=column("phase", None), value=column("value", None),
        kept=column("kept", False), reason=column("reason", ""),
        seconds_spent=column("seconds_spent", 0), server_seconds=column("server_seconds", None),
        created_at=column("created_at", None),
        updated_at=column("updated_at", None),
        judge=np.array([v["judge"] for v in verdict_rows], dtype=np.int64),
        item=np.array([v["item"] for v in verdict_rows], dtype=np.int64),
        locked=np.array([v["locked"] for v in verdict_rows], dtype=bool),
        says_defective=np.array([v["value"] in ("fail", "real") for v in verdict_rows], dtype=bool),
        sort=sort, says=says, paired=(says[1] >= 0) & (says[2] >= 0), right=right)
    return ReportData(
        session=session, amendments=list(amendments), invitations=invitations, bundle=bundle_,
        judges=Judges(rows=judges, index={j.pk: n for n, j in enumerate(judges)},
                      pseudonyms=[j.pseudonym for j in judges], groups=[group_of(j) for j in judges]),
        items=Items(rows=items, keys=[i.key for i in items], truths=truths, versions=versions,
                    classes=classes),
        assignments=Assignments(rows=rows, thirds=thirds),
        verdicts=verdicts)


def value_of(mark: str, findings_kind: bool) -> str:
    if findings_kind:
        return {"F": "real", "P": "false_alarm"}[mark]
    return {"F": "fail", "P": "pass"}[mark]


# --- Expected figures, worked out independently of the code under test ----------------------------

def wilson(k: int, n: int) -> dict:
    """k/n with its Wilson 95% score interval, from scipy (content.scoring.rate's shape)."""
    if n == 0:
        return {"k": 0, "n": 0, "rate": None, "low": None, "high": None}
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    return {"k": k, "n": n, "rate": k / n, "low": ci.low, "high": ci.high}


def mcnemar_p(b: int, c: int) -> float:
    """McNemar's exact two-sided p: the binomial test of b against b + c at one half."""
    return 1.0 if b + c == 0 else float(binomtest(b, b + c, 0.5).pvalue)


def cluster_draws(n_units: int, resamples: int = 2000, seed: int = 0) -> np.ndarray:
    """resamples × n_units: each row the units drawn, with replacement, by default_rng(seed)."""
    return np.random.default_rng(seed).integers(0, n_units, size=(resamples, n_units))


def percentile_95(values) -> tuple[float, float]:
    values = np.asarray([v for v in values if v == v], dtype=float)  # NaN dropped
    low, high = np.quantile(values, [0.025, 0.975])
    return float(low), float(high)
