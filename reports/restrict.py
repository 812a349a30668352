"""A revealed session's data without some of its tasks, items or judges: what a preregistered
exclusion asks the report to analyse again (issue 29 item 4, issue 30 item 5); and with other
truth (`with_truths`: adjudicated items alone, issue 29 item 2). Pure: a ReportData in, a
ReportData out, no query.

Everything of an excluded task goes: its copies (and their reviews, findings and corrections),
its items with every judge's verdicts and assignments on them, so that any section computed on
the result sees a run that never had those tasks. `without_items` leaves items out of the
session alone (their verdicts and assignments), never the run's copies: what the model reviewers
and the tests say of them stays. `without_judges` leaves judges out with everything of theirs
(assignments, verdicts, task flags). What stays is unchanged, the drawn order's thirds included (a
judge's order was drawn over every item; an exclusion does not redraw it).
"""

import copy
from dataclasses import replace

import numpy as np

from content.truth import truth_class
from reports.loading import CLASS_CODES, Assignments, Bundle, Items, Judges, ReportData, Verdicts


def without_tasks(data: ReportData, task_pks) -> ReportData:
    """`data` with every record of the tasks `task_pks` (Task primary keys) left out."""
    excluded = set(task_pks)
    if not excluded:
        return data
    bundle = _bundle_without(data.bundle, excluded)
    copy_kept = bundle.copy_by_pk
    # An item judges a copy, or a finding of one (then its copy is the finding's).
    kept_columns = [i for i, item in enumerate(data.items.rows)
                    if (item.copy_id or data.bundle.finding_by_pk[item.finding_id].copy_id)
                    in copy_kept]
    task_flags = tuple(f for f in data.task_flags if f[1] not in excluded)
    return replace(_with_columns(data, kept_columns), bundle=bundle, task_flags=task_flags)


def without_items(data: ReportData, item_keys) -> ReportData:
    """`data` with the session's items `item_keys` (Item keys) left out, with every judge's
    verdicts and assignments on them; the run's copies, reviews and findings all stay."""
    excluded = set(item_keys)
    if not excluded:
        return data
    return _with_columns(data, [i for i, key in enumerate(data.items.keys) if key not in excluded])


def _with_columns(data: ReportData, kept_columns: list[int]) -> ReportData:
    """`data` with only the items in columns `kept_columns` (ascending), and what is on them."""
    column_of = {old: new for new, old in enumerate(kept_columns)}
    items = _items_without(data.items, kept_columns)
    assignments, order_of = _assignments_without(data.assignments, data.items, kept_columns)
    verdicts = _verdicts_without(data.verdicts, items, column_of, order_of)
    return replace(data, items=items, assignments=assignments, verdicts=verdicts)


def without_judges(data: ReportData, rows) -> ReportData:
    """`data` with the judges in rows `rows` (of data.judges) left out: their assignments, their
    verdicts (every matrix loses their row) and their task flags."""
    excluded = set(rows)
    if not excluded:
        return data
    kept = [j for j in range(len(data.judges.rows)) if j not in excluded]
    row_of = {old: new for new, old in enumerate(kept)}
    gone_pks = {data.judges.rows[j].pk for j in excluded}
    judges = Judges(rows=[data.judges.rows[j] for j in kept],
                    index={data.judges.rows[j].pk: row_of[j] for j in kept},
                    pseudonyms=[data.judges.pseudonyms[j] for j in kept],
                    groups=[data.judges.groups[j] for j in kept])
    order_of, rows_kept = {}, []
    for old, row in enumerate(data.assignments.rows):
        if row[1] not in gone_pks:
            order_of[old] = len(rows_kept)
            rows_kept.append(row)
    assignments = Assignments(rows=rows_kept, thirds=data.assignments.thirds[kept, :])
    v = data.verdicts
    keep = [n for n, j in enumerate(v.judge.tolist()) if j in row_of]
    index = np.asarray(keep, dtype=np.int64)
    new_place = {old: new for new, old in enumerate(keep)}
    at = [(order_of[a[0]], row_of[a[1]], a[2], a[3], a[4]) for a in (v.assignment[n] for n in keep)]
    verdicts = Verdicts(
        assignment=at,
        phase=tuple(v.phase[n] for n in keep), value=tuple(v.value[n] for n in keep),
        kept=tuple(v.kept[n] for n in keep), reason=tuple(v.reason[n] for n in keep),
        seconds_spent=tuple(v.seconds_spent[n] for n in keep),
        server_seconds=tuple(v.server_seconds[n] for n in keep),
        created_at=tuple(v.created_at[n] for n in keep),
        updated_at=tuple(v.updated_at[n] for n in keep),
        judge=np.asarray([row_of[j] for j in v.judge[index].tolist()], dtype=np.int64),
        item=v.item[index], locked=v.locked[index], says_defective=v.says_defective[index],
        sort=[new_place[n] for n in v.sort if n in new_place],
        says={phase: matrix[kept, :] for phase, matrix in v.says.items()},
        paired=v.paired[kept, :],
        right={key: matrix[kept, :] for key, matrix in v.right.items()},
    )
    task_flags = tuple(f for f in data.task_flags if f[0] not in gone_pks)
    return replace(data, judges=judges, assignments=assignments, verdicts=verdicts,
                   task_flags=task_flags)


def _bundle_without(bundle: Bundle, excluded: set) -> Bundle:
    tasks = [t for t in bundle.tasks if t.pk not in excluded]
    copies = [c for c in bundle.copies if c.task_id not in excluded]
    copy_by_pk = {c.pk: c for c in copies}
    reviews = [r for r in bundle.reviews if r.copy_id in copy_by_pk]
    findings = [f for f in bundle.findings if f.copy_id in copy_by_pk]
    finding_by_pk = {f.pk: f for f in findings}
    corrections = [c for c in bundle.corrections
                   if (c.copy_id in copy_by_pk if c.copy_id else c.finding_id in finding_by_pk)]
    return replace(
        bundle, tasks=tasks, task_by_pk={t.pk: t for t in tasks},
        copies=copies, copy_by_pk=copy_by_pk,
        reviews=reviews,
        default_reviews=[r for r in bundle.default_reviews if r.copy_id in copy_by_pk],
        other_reviews=[r for r in bundle.other_reviews if r.copy_id in copy_by_pk],
        findings=findings, finding_by_pk=finding_by_pk,
        raised_by={pk: v for pk, v in bundle.raised_by.items() if pk in finding_by_pk},
        raised_by_conditions={pk: v for pk, v in bundle.raised_by_conditions.items()
                              if pk in finding_by_pk},
        corrections=corrections,
        unit_of_copy={pk: u for pk, u in bundle.unit_of_copy.items() if pk in copy_by_pk},
    )


def _items_without(items: Items, kept: list[int]) -> Items:
    return Items(rows=[items.rows[i] for i in kept], keys=[items.keys[i] for i in kept],
                 truths={v: [labels[i] for i in kept] for v, labels in items.truths.items()},
                 versions=items.versions,
                 classes={v: codes[kept] for v, codes in items.classes.items()})


def _assignments_without(assignments: Assignments, items: Items, kept: list[int]):
    """The assignments of the kept items, and each kept assignment's old place -> new place."""
    kept_pks = {items.rows[i].pk for i in kept}
    rows, order_of = [], {}
    for old, row in enumerate(assignments.rows):
        if row[2] in kept_pks:
            order_of[old] = len(rows)
            rows.append(row)
    return Assignments(rows=rows, thirds=assignments.thirds[:, kept]), order_of


def _verdicts_without(verdicts: Verdicts, items: Items, column_of: dict, order_of: dict) -> Verdicts:
    keep = [n for n, i in enumerate(verdicts.item.tolist()) if i in column_of]
    index = np.asarray(keep, dtype=np.int64)
    new_place = {old: new for new, old in enumerate(keep)}
    assignment = [(order_of[a[0]], a[1], column_of[a[2]], a[3], a[4])
                  for a in (verdicts.assignment[n] for n in keep)]
    columns = np.asarray(sorted(column_of, key=column_of.get), dtype=np.int64)
    says = {phase: matrix[:, columns] for phase, matrix in verdicts.says.items()}
    right = {key: matrix[:, columns] for key, matrix in verdicts.right.items()}
    return Verdicts(
        assignment=assignment,
        phase=tuple(verdicts.phase[n] for n in keep),
        value=tuple(verdicts.value[n] for n in keep),
        kept=tuple(verdicts.kept[n] for n in keep),
        reason=tuple(verdicts.reason[n] for n in keep),
        seconds_spent=tuple(verdicts.seconds_spent[n] for n in keep),
        server_seconds=tuple(verdicts.server_seconds[n] for n in keep),
        created_at=tuple(verdicts.created_at[n] for n in keep),
        updated_at=tuple(verdicts.updated_at[n] for n in keep),
        judge=verdicts.judge[index], item=np.asarray([column_of[i] for i in
                                                     verdicts.item[index].tolist()], dtype=np.int64),
        locked=verdicts.locked[index], says_defective=verdicts.says_defective[index],
        sort=[new_place[n] for n in verdicts.sort if n in new_place],
        says=says, paired=verdicts.paired[:, columns], right=right,
    )


def with_truths(data: ReportData, *, copy_truths: dict, finding_truths: dict) -> ReportData:
    """`data` with every copy's and finding's truth replaced: `copy_truths` and `finding_truths`
    (primary key -> label) where they name one, unknown everywhere else, and no correction (one
    version of truth). What the report scores on adjudicated items alone (issue 29 item 2): run
    through the same scoring as the main scores, it counts nothing the tests settled."""
    def relabelled(record, truth):
        fresh = copy.copy(record)  # the loaded instance stays as it is for every other section
        fresh.truth = fresh.imported_truth = truth
        return fresh

    bundle = data.bundle
    copies = [relabelled(c, copy_truths.get(c.pk, "unknown")) for c in bundle.copies]
    findings = [relabelled(f, finding_truths.get(f.pk, "unknown")) for f in bundle.findings]
    copy_by_pk, finding_by_pk = {c.pk: c for c in copies}, {f.pk: f for f in findings}
    bundle = replace(bundle, copies=copies, copy_by_pk=copy_by_pk, findings=findings,
                     finding_by_pk=finding_by_pk, corrections=[])
    labels = [finding_by_pk[item.finding_id].truth if item.finding_id
              else copy_by_pk[item.copy_id].truth for item in data.items.rows]
    classes = np.array([CLASS_CODES.get(truth_class(t), -1) for t in labels], dtype=np.int8)
    items = Items(rows=data.items.rows, keys=data.items.keys, truths={"current": labels},
                  versions=["current"], classes={"current": classes})
    says = data.verdicts.says
    defective = classes == CLASS_CODES["defective"]
    right = {("current", phase): ((says[phase] == 1) == defective[None, :]) & (says[phase] >= 0)
             for phase in (1, 2)}
    return replace(data, bundle=bundle, items=items,
                   verdicts=replace(data.verdicts, right=right))
