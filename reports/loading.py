"""Loading a revealed session for its report: every query the report makes, made once, here.

`load_report_data(session)` reads the run's records, the session's judges, items, assignments and
verdicts and hands them on as a `ReportData`: model instances (with every relation a section reads
already fetched), lookups by primary key, and the judges × items numpy matrices the scores, the
phase shift and the pooled effects are sums over. The section builders (reports/sections/) read
only this, never the database, so each of them is a pure function of the loaded data.

Verdicts are read column-wise through `_raw_rows` and turned into arrays with numpy: a report of
200 judges × 500 items in both phases (200,000 verdicts) builds within two seconds
(bench/report.py), and a Python loop per verdict here would be most of that time.
"""

from dataclasses import dataclass, field, replace

import numpy as np
from django.db import connections
from django.db.models import Func, TextField

from accounts.models import Judge
from content.truth import truth_class
from judging.enums import SessionKind, SessionState
from judging.models import Assignment, AuditEvent, FindingRaise, Run, Session, TaskFlag, Verdict
from judging.services import matrix_sessions
from judging.services.sessions import SCREENING_DRAWN
from reports.scoring import judge_group

# A truth's class in the matrices: 1 defective, 0 good, -1 unknown (never scored).
CLASS_CODES = {"defective": 1, "good": 0}


def _raw_rows(queryset) -> list[tuple]:
    """The queryset's rows as the database driver returns them, unordered.

    Skips Django's per-value converters and its chunked fetching, which cost a large report
    hundreds of milliseconds; the columns read this way are text, numbers and SQLite's 0/1 for
    booleans (the caller makes those bool), never values that need converting."""
    compiler = queryset.order_by().query.get_compiler(using=queryset.db)
    sql, params = compiler.as_sql()
    with connections[queryset.db].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


class IsoTimestamp(Func):
    """A timestamp column as the text datetime.isoformat() gives for it in UTC, made by the database.

    Formatting 400,000 verdict timestamps in Python (parse, then isoformat) took seconds of a
    200,000-verdict report's budget; the database writes the same text as it reads the rows.
    SQLite stores Django's datetimes as "YYYY-MM-DD HH:MM:SS[.ffffff]" in UTC, so a "T" and the
    offset make the ISO form; PostgreSQL's text form in UTC needs its fraction padded.
    """

    output_field = TextField()

    def as_sqlite(self, compiler, connection, **extra):
        return self.as_sql(compiler, connection,
                           template="replace(%(expressions)s, ' ', 'T') || '+00:00'", **extra)

    def as_postgresql(self, compiler, connection, **extra):
        # Django's connections use the UTC time zone, so the text form is
        # "YYYY-MM-DD HH:MM:SS[.f…]+00" with trailing zeros of the fraction left out; pad it to
        # six digits as Python does. (to_char would do it too, at twice the cost on the server.)
        text = "(%(expressions)s)::text"
        template = (
            f"replace(left({text}, 19), ' ', 'T') || "
            f"CASE WHEN substr({text}, 20, 1) = '.' "
            f"THEN rpad(split_part(substr({text}, 20), '+', 1), 7, '0') ELSE '' END || '+00:00'"
        )
        return self.as_sql(compiler, connection, template=template, **extra)


@dataclass(frozen=True)
class Bundle:
    """The run's records as imported (truth as corrected since), with lookups by primary key."""

    run: Run
    tasks: list  # Task, in import order
    task_by_pk: dict
    builders: list
    builder_by_pk: dict
    copies: list
    copy_by_pk: dict
    reviewers: list
    reviewer_by_pk: dict
    reviews: list  # every review, each condition
    # The reviews under the run's default condition: the ones judges saw in phase 2, and the only
    # ones reviewers are scored on (the others are listed apart, never pooled with these).
    default_reviews: list
    other_reviews: list
    findings: list
    finding_by_pk: dict
    # finding pk -> bundle ids of the reviewers that raised it under the default condition, sorted
    # (the phase-2 table of who raised what)
    raised_by: dict
    # finding pk -> [(reviewer bundle id, condition)] of every raise, any condition, sorted
    raised_by_conditions: dict
    corrections: list  # TruthCorrection, with its copy or finding fetched
    # What resampled intervals resample, for every section that gives one: "cluster" when any copy
    # names a cluster (a copy without one is then its task's own unit), "task" when the run has
    # several tasks, None for one task and no clusters (nothing to resample but single copies).
    resampling_by: str | None
    # copy pk -> its resampling unit: ("cluster", name) or ("task", task pk); empty when None
    unit_of_copy: dict


@dataclass(frozen=True)
class Judges:
    """The session's judges in number order: row j of every judges × items matrix is rows[j]."""

    rows: list
    index: dict  # judge pk -> row
    pseudonyms: list[str]
    groups: list[str]  # reports.scoring.judge_group of each


@dataclass(frozen=True)
class Items:
    """The session's items in key order: column i of every judges × items matrix is rows[i]."""

    rows: list
    keys: list[str]
    truths: dict  # truth version -> each item's truth label
    # "current" (after corrections), then "imported" (as the bundle gave it) once a label was
    # corrected: scores are given under each
    versions: list[str]
    classes: dict  # truth version -> np.int8 per item, CLASS_CODES or -1 for unknown truth


@dataclass(frozen=True)
class Assignments:
    """Who was given which item under which code, ordered by judge, then position."""

    rows: list[tuple]  # (pk, judge pk, item pk, code, position, order key)
    thirds: np.ndarray  # judges × items: 0, 1, 2 for the first, middle, last third of the order; -1


@dataclass(frozen=True)
class Verdicts:
    """Every verdict, one entry per verdict in each column, and the matrices made of the locked ones.

    The columns are in the database's order; `sort` lists the verdicts by judge, position, then
    phase, the order the report lists them in."""

    # per verdict: (its assignment's place in Assignments.rows, judge row, item column, code,
    # position)
    assignment: list[tuple]
    phase: tuple
    value: tuple
    kept: tuple
    reason: tuple
    seconds_spent: tuple
    server_seconds: tuple  # the server's interval since the judge's previous answer save, or None
    created_at: tuple  # ISO text, made by the database (IsoTimestamp)
    updated_at: tuple
    judge: np.ndarray  # judge row
    item: np.ndarray  # item column
    locked: np.ndarray
    says_defective: np.ndarray  # judged fail (a copy) or real (a finding)
    sort: list[int]
    # phase -> judges × items, np.int8: -1 no locked verdict, 0 judged good, 1 judged defective
    says: dict
    paired: np.ndarray  # judges × items: a locked verdict in both phases
    # (truth version, phase) -> judges × items: a locked verdict that matches that truth
    right: dict


@dataclass(frozen=True)
class ReportData:
    """Everything a report is made of, as loaded by `load_report_data`."""

    session: Session
    amendments: list  # PreregAmendment, in order
    invitations: int
    bundle: Bundle
    judges: Judges
    items: Items
    assignments: Assignments
    verdicts: Verdicts
    # Every task flag of the session's judges (judging.models.TaskFlag), locked or not, as
    # (judge pk, task pk, phase, kind, severity, reason, locked); empty where none were collected.
    task_flags: tuple = ()
    # The run's adjudications that hold an item of this session (Adjudication, by session id):
    # loaded on the same bundle, reported apart (reports.sections.adjudicated).
    adjudications: tuple = ()
    # The seed that drew the controls judges are screened on (hex; judging.services.sessions,
    # recorded in the audit log at opening), where an exclude_judge rule reads the controls; "".
    screening_seed: str = ""
    # A pairs session's sides: assignment pk -> (swapped, first code, second code), as drawn at
    # joining (judging.models.Assignment); empty for every other kind.
    pair_sides: dict = field(default_factory=dict)
    # The run's model reviewers' comparisons (judging.models.Comparison, run/2 `comparisons`), in
    # bundle order; loaded for a pairs session's report only.
    comparisons: tuple = ()


@dataclass(frozen=True)
class Adjudication:
    """One adjudication on the session's run, as its section reports it: its own session's data
    (judges, items, assignments, verdicts) on the report's bundle, and what says whether its
    adjudicator was outside the matrix and whether it was opened after a reveal."""

    data: ReportData
    # The judges of the sessions on the other side of its matrix (judging.services
    # .matrix_sessions): how many, and how many of them are identified by GitHub (the only
    # identity its adjudicator could be checked against).
    matrix_judges: int
    matrix_judges_by_github: int
    # The sessions on the run revealed before the adjudication opened: (id, revealed_at).
    revealed_before: tuple


def load_report_data(session) -> ReportData:
    """Every row the report of `session` is made of; the caller checks that it is revealed."""
    _load_deferred_fields(session)
    bundle = _load_bundle(_load_deferred_fields(session.run),
                          (session.protocol or {}).get("resampling_unit"))
    data = _load_session(session, bundle)
    if session.kind in (SessionKind.ADJUDICATION, SessionKind.REASONS):
        return data
    if session.kind == SessionKind.PAIRS:
        data = replace(data, pair_sides={
            pk: (bool(swapped), first, second) for pk, swapped, first, second in
            Assignment.objects.filter(judge__session=session).order_by()
            .values_list("pk", "swapped", "first_code", "second_code")},
            comparisons=tuple(session.run.comparisons.order_by("position")))
    return replace(data, adjudications=tuple(_load_adjudications(session, bundle)),
                   screening_seed=_screening_seed(session))


def _screening_seed(session) -> str:
    """The screening seed the opening recorded (SCREENING_DRAWN), "" where it drew none."""
    if "screening" not in (session.protocol or {}):
        return ""
    details = (AuditEvent.objects.filter(session=session, action=SCREENING_DRAWN)
               .order_by("pk").values_list("details", flat=True).first())
    return (details or {}).get("seed", "")


def _load_adjudications(session, bundle: Bundle) -> list[Adjudication]:
    """The run's adjudications sharing a copy with `session` (not drafts), in creation order."""
    found = []
    for adjudication in (matrix_sessions(session).filter(kind=SessionKind.ADJUDICATION)
                         .exclude(state=SessionState.DRAFT).order_by("pk")):
        matrix = Judge.objects.filter(session__in=matrix_sessions(adjudication))
        found.append(Adjudication(
            data=_load_session(adjudication, bundle),
            matrix_judges=matrix.count(),
            matrix_judges_by_github=matrix.filter(github_id__isnull=False).count(),
            revealed_before=tuple(
                Session.objects.filter(run_id=session.run_id, revealed_at__isnull=False,
                                       revealed_at__lt=adjudication.opened_at)
                .order_by("revealed_at", "pk").values_list("pk", "revealed_at")),
        ))
    return found


def _load_session(session, bundle: Bundle) -> ReportData:
    """The session's own rows (judges, items, assignments, verdicts, flags) on `bundle`."""
    judges = list(session.judges.order_by("number"))
    judge_rows = Judges(rows=judges, index={j.pk: n for n, j in enumerate(judges)},
                        pseudonyms=[j.pseudonym for j in judges],
                        groups=[judge_group(j) for j in judges])
    items = _load_items(session, bundle)
    assignments, context = _load_assignments(session, judge_rows, items)
    return ReportData(
        session=session,
        amendments=list(session.amendments.all()),
        invitations=session.invitations.count(),
        bundle=bundle,
        judges=judge_rows,
        items=items,
        assignments=assignments,
        verdicts=_load_verdicts(session, context, len(judges), items),
        task_flags=tuple(
            (judge, task, phase, kind, severity, reason, bool(locked))
            for judge, task, phase, kind, severity, reason, locked in
            TaskFlag.objects.filter(judge__session=session).order_by("judge_id", "task_id", "phase")
            .values_list("judge_id", "task_id", "phase", "kind", "severity", "reason", "locked")),
    )


def _load_deferred_fields(instance):
    """The instance, with the fields its caller deferred loaded now, in one query.

    The host's pages get the session with its heavy JSON fields deferred
    (judging.selectors.HEAVY_SESSION_FIELDS); the report publishes them, and the sections read
    them, so they are loaded here rather than one query each on first access in a section."""
    deferred = instance.get_deferred_fields()
    if deferred:
        instance.refresh_from_db(fields=sorted(deferred))
    return instance


def _load_bundle(run, frozen_unit: dict | None = None) -> Bundle:
    tasks = list(run.tasks.order_by("position"))
    builders = list(run.builders.all())
    copies = list(run.copies.all())
    reviewers = list(run.reviewers.all())
    reviewer_by_pk = {r.pk: r for r in reviewers}
    findings = list(run.findings.all())
    reviews = list(run.reviews.all())
    default = run.default_condition
    raises = {f.pk: [] for f in findings}
    for finding_pk, reviewer_pk, condition in FindingRaise.objects.filter(
            finding__run=run).values_list("finding_id", "reviewer_id", "condition"):
        raises[finding_pk].append((reviewer_by_pk[reviewer_pk].bundle_id, condition))
    return Bundle(
        run=run,
        tasks=tasks, task_by_pk={t.pk: t for t in tasks},
        builders=builders, builder_by_pk={b.pk: b for b in builders},
        copies=copies, copy_by_pk={c.pk: c for c in copies},
        reviewers=reviewers, reviewer_by_pk=reviewer_by_pk,
        reviews=reviews,
        default_reviews=[r for r in reviews if r.condition == default],
        other_reviews=[r for r in reviews if r.condition != default],
        findings=findings, finding_by_pk={f.pk: f for f in findings},
        raised_by={pk: sorted(r for r, c in raised if c == default) for pk, raised in raises.items()},
        raised_by_conditions={pk: sorted(raised) for pk, raised in raises.items()},
        corrections=list(run.truth_corrections.select_related("copy", "finding")),
        **_resampling_units(tasks, copies, frozen_unit),
    )


def _resampling_units(tasks, copies, frozen: dict | None = None) -> dict:
    """The unit every interval resamples: the protocol's, frozen at opening (issue 28 item 1:
    judging.services.resampling_unit), else, for a protocol frozen before it was recorded, read
    from the run the same way."""
    if frozen is not None:
        by = frozen["by"]
    elif any(c.cluster for c in copies):
        by = "cluster"
    elif len(tasks) > 1:
        by = "task"
    else:
        by = None
    if by is None:
        return {"resampling_by": None, "unit_of_copy": {}}
    return {
        "resampling_by": by,
        "unit_of_copy": {c.pk: ("cluster", c.cluster) if c.cluster and by == "cluster"
                         else ("task", c.task_id) for c in copies},
    }


def _load_items(session, bundle: Bundle) -> Items:
    items = list(session.items.order_by("key"))
    targets = [bundle.finding_by_pk[i.finding_id] if i.finding_id else bundle.copy_by_pk[i.copy_id]
               for i in items]
    truths = {"current": [t.truth for t in targets], "imported": [t.imported_truth for t in targets]}
    if session.kind == SessionKind.PAIRS:
        # A pair has no one truth: its copies' are in the pairs section, never the first's alone.
        truths = {version: ["unknown"] * len(items) for version in truths}
    versions = ["current"] + (["imported"] if bundle.corrections else [])
    # A reasons session's answers say whether a review's reason is grounded, not whether its copy
    # is good, and a pairs session's which of two copies is better: nothing there is scored
    # against one copy's truth (reports.sections.reasons, reports.sections.pairs).
    scored = session.kind not in (SessionKind.REASONS, SessionKind.PAIRS)
    classes = {
        version: np.array([CLASS_CODES.get(truth_class(t), -1) if scored else -1
                           for t in truths[version]], dtype=np.int8)
        for version in versions
    }
    return Items(rows=items, keys=[item.key for item in items], truths=truths, versions=versions,
                 classes=classes)


def _load_assignments(session, judges: Judges, items: Items) -> tuple[Assignments, dict]:
    """The assignments, and assignment pk -> (order in the report, judge row, item column, code,
    position) for placing each verdict."""
    rows = _raw_rows(
        Assignment.objects.filter(judge__session=session)
        .values_list("pk", "judge_id", "item_id", "code", "position", "order_key")
    )
    judge_index = judges.index
    item_index = {item.pk: n for n, item in enumerate(items.rows)}
    rows.sort(key=lambda a: (judge_index[a[1]], a[4]))
    n_judges, n_items = len(judges.rows), len(items.rows)
    positions = np.zeros((n_judges, n_items), dtype=np.int64)
    assigned = np.zeros(n_judges, dtype=np.int64)
    context = {}
    for order, (assignment_pk, judge_pk, item_pk, code, position, _) in enumerate(rows):
        j = judge_index[judge_pk]
        i = item_index[item_pk]
        positions[j, i] = position
        assigned[j] += 1
        context[assignment_pk] = (order, j, i, code, position)
    # Third of the drawn order each assignment falls in: 0 first, 1 middle, 2 last.
    with np.errstate(invalid="ignore", divide="ignore"):
        thirds = np.where(positions > 0, ((positions - 1) * 3) // np.maximum(assigned, 1)[:, None], -1)
    return Assignments(rows=rows, thirds=thirds), context


def _load_verdicts(session, context: dict, n_judges: int, items: Items) -> Verdicts:
    rows = _raw_rows(
        Verdict.objects.filter(assignment__judge__session=session)
        .annotate(created_text=IsoTimestamp("created_at"), updated_text=IsoTimestamp("updated_at"))
        .values_list("assignment_id", "phase", "value", "kept", "reason", "seconds_spent", "locked",
                     "created_text", "updated_text", "server_seconds")
    )
    n_items = len(items.rows)
    # Column-wise from here: numpy for what is counted (a Python loop with lookups and appends
    # per verdict was a third of a 200,000-verdict report's time).
    (assignment_col, phase_col, value_col, kept_col, reason_col, seconds_col, locked_col,
     created_col, updated_col, server_col) = zip(*rows, strict=True) if rows else ((),) * 10
    count = len(rows)
    at = [context[pk] for pk in assignment_col]
    order = np.fromiter((c[0] for c in at), dtype=np.int64, count=count)
    phases = np.fromiter(phase_col, dtype=np.int64, count=count)
    sort = np.lexsort((phases, order)).tolist()  # by judge, position, then phase
    v_judge = np.fromiter((c[1] for c in at), dtype=np.int64, count=count)
    v_item = np.fromiter((c[2] for c in at), dtype=np.int64, count=count)
    says_defective = np.fromiter((v in ("fail", "real") for v in value_col), dtype=bool, count=count)
    locked = np.fromiter((bool(v) for v in locked_col), dtype=bool, count=count)  # SQLite: 0/1
    says = {}
    for phase in (1, 2):
        matrix = np.full((n_judges, n_items), -1, dtype=np.int8)
        chosen = locked & (phases == phase)
        matrix[v_judge[chosen], v_item[chosen]] = says_defective[chosen]
        says[phase] = matrix
    right = {}
    for version in items.versions:
        defective = items.classes[version] == CLASS_CODES["defective"]
        for phase in (1, 2):
            right[(version, phase)] = ((says[phase] == 1) == defective[None, :]) & (says[phase] >= 0)
    return Verdicts(
        assignment=at, phase=phase_col, value=value_col, kept=kept_col, reason=reason_col,
        seconds_spent=seconds_col, server_seconds=server_col, created_at=created_col,
        updated_at=updated_col, judge=v_judge, item=v_item, locked=locked,
        says_defective=says_defective, sort=sort,
        says=says, paired=(says[1] >= 0) & (says[2] >= 0), right=right,
    )
