"""The mapping sections: the judges, the assignments (who was given which item, under which code,
at which position of their drawn order) and every verdict, human and per phase, beside the truth.

`verdicts` makes the longest list of the report (one row per verdict, 200,000 in the benchmark):
one comprehension over columns bound to local names, with no lookup or call per row that could
be made once for all."""

from content.canonical import form_of
from judging.enums import SessionKind
from reports.loading import CLASS_CODES, ReportData
from reports.sections.common import iso


def judges(data: ReportData) -> list[dict]:
    form = form_of(data.session.protocol)  # every judge commits in the protocol's form
    return [
        {"pseudonym": j.pseudonym, "name": j.github_login or j.display_name or None,
         "display_name": j.display_name or None, "github_login": j.github_login or None,
         "admitted_as": j.admitted_as, "identified_by": j.identified_by,
         "group": group, "status": j.status, "erased": j.erased_at is not None,
         "joined_at": iso(j.joined_at), "removed_at": iso(j.removed_at),
         "phase1_locked_at": iso(j.phase1_locked_at),
         "phase2_locked_at": iso(j.phase2_locked_at),
         "commitment": {"sha256": j.commitment_sha256, "salt": j.commitment_salt,
                        "order_seed": j.order_seed, "canonical": form}}
        for j, group in zip(data.judges.rows, data.judges.groups, strict=True)
    ]


def assignments(data: ReportData) -> list[dict]:
    copy_by_pk, builder_by_pk = data.bundle.copy_by_pk, data.bundle.builder_by_pk
    pseudonyms, judge_index = data.judges.pseudonyms, data.judges.index
    # item pk -> (key, copy id, builder id) as the mapping shows them
    mapped = {item.pk: (item.key, copy_by_pk[item.copy_id].bundle_id,
                        builder_by_pk[copy_by_pk[item.copy_id].builder_id].bundle_id)
              for item in data.items.rows}
    rows = [
        {"judge": pseudonyms[judge_index[judge_pk]], "position": position, "code": code,
         "item": mapped[item_pk][0], "copy": mapped[item_pk][1], "builder": mapped[item_pk][2],
         "order_key": order_key}
        for _, judge_pk, item_pk, code, position, order_key in data.assignments.rows
    ]
    if data.session.kind == SessionKind.REASONS:
        # The reviewer whose review the item audits: the item's key names it too, but a bundle id
        # may hold the key's separator, so the review row says it.
        bundle = data.bundle
        review_by_pk = {review.pk: review for review in bundle.reviews}
        audited = {item.pk: bundle.reviewer_by_pk[review_by_pk[item.review_id].reviewer_id].bundle_id
                   for item in data.items.rows}
        for row, (_, _, item_pk, *_rest) in zip(rows, data.assignments.rows, strict=True):
            row["reviewer"] = audited[item_pk]
    if data.pair_sides:
        # A pair's second copy and builder, the side drawn and each copy's code: what the judge
        # committed to besides (content.commitments.PAIR_KEYS).
        second = {item.pk: (copy_by_pk[item.pair_copy_id].bundle_id,
                            builder_by_pk[copy_by_pk[item.pair_copy_id].builder_id].bundle_id)
                  for item in data.items.rows}
        for row, (pk, _, item_pk, *_rest) in zip(rows, data.assignments.rows, strict=True):
            swapped, first_code, second_code = data.pair_sides[pk]
            row.update(second_copy=second[item_pk][0], second_builder=second[item_pk][1],
                       swapped=swapped, first_code=first_code, second_code=second_code)
    return rows


def verdicts(data: ReportData) -> list[dict]:
    v = data.verdicts
    current_truth = data.items.truths["current"]
    item_class = data.items.classes["current"][v.item]
    # correct: None where the truth is unknown (never scored), else whether the verdict matches it
    correct = [None if unknown else right
               for unknown, right in zip((item_class < 0).tolist(),
                                         (v.says_defective == (item_class == CLASS_CODES["defective"]))
                                         .tolist(), strict=True)]
    pseudonyms, item_keys, at = data.judges.pseudonyms, data.items.keys, v.assignment
    phase_col, value_col, kept_col, reason_col = v.phase, v.value, v.kept, v.reason
    seconds_col, created_col, updated_col = v.seconds_spent, v.created_at, v.updated_at
    server_col = v.server_seconds
    judge_list, item_list, locked_list = v.judge.tolist(), v.item.tolist(), v.locked.tolist()
    return [
        {"judge": pseudonyms[judge_list[k]], "item": item_keys[item_list[k]],
         "code": at[k][3], "position": at[k][4], "phase": phase_col[k], "value": value_col[k],
         "kept": bool(kept_col[k]), "reason": reason_col[k], "seconds_spent": seconds_col[k],
         "server_seconds": server_col[k], "locked": locked_list[k], "created_at": created_col[k],
         "updated_at": updated_col[k],
         "truth": current_truth[item_list[k]], "correct": correct[k]}
        for k in v.sort
    ]
