"""The "adjudicated" section (issue 29 items 1 and 2): the run's adjudications that hold items of
this session, what each decided, and every judge and model reviewer scored again on adjudicated
items alone, apart from the scores on test-confirmed truth and never pooled with them.

An adjudication (judging.services.adjudication) is used once it is revealed and its adjudicator
has locked: its protocol, its adjudicator's commitment and mapping are published here (for
verify_report, as the session's own are) and its answers are kept beside each item's truth, never
over it: a finding's truth reads "unknown, adjudicated real (date, pseudonym)". "Cannot tell"
leaves an item unknown. One opened after any session on the run was revealed is marked so: its
host chose its items knowing the mapping of that session.

Scores here count adjudicated items only (the same scoring as the "scores" section, on the data
with every other item's truth unknown: reports.restrict.with_truths): k/n with Wilson intervals,
an adjudicated copy's pass as good and fail as defective, a finding's real as defective and false
alarm as good.
"""

from content.canonical import form_of
from content.truth import ADJUDICATED_COPY_TRUTHS
from judging.enums import SessionState
from reports.loading import Adjudication, ReportData
from reports.restrict import with_truths
from reports.sections import mapping
from reports.sections.common import iso
from reports.sections.scores import judge_scores, reviewer_scores

CANNOT_TELL = "cannot_tell"
CHECKED = "checked"
DECLARED = "declared, not checked"
NOT_REVEALED = ("not revealed yet: its answers are used once the host reveals it (its mapping is "
                "published then)")
NOT_LOCKED = "its adjudicator has not locked: nothing was decided"
NO_ADJUDICATION = ("No adjudication on this run holds an item of this session: items of unknown "
                   "truth are not scored.")

DEFINITIONS = {
    "adjudications": "every adjudication on the run that holds an item of this session, used "
                     "(revealed, its adjudicator locked) or not and why",
    "outside_the_matrix": f"{CHECKED!r}: the adjudicator signed in with GitHub, and their GitHub "
                          "id was checked at joining against every judge of a session holding "
                          "the same items who is identified by GitHub, and against the host; "
                          f"{DECLARED!r}: joined by link, so who they are could not be checked",
    "opened_after_reveal": "the adjudication opened after a session on the run was revealed: "
                           "its items were chosen by a host who knew that session's mapping",
    "items": "each adjudicated item, its truth as imported and as corrected, and the answer "
             "beside it (never over it); cannot_tell leaves it unknown",
    "scores": "every judge and model reviewer scored as in the scores section, on adjudicated "
              "items only (k/n, Wilson 95%): never pooled with the scores on test-confirmed truth",
}


def adjudicated(data: ReportData) -> dict:
    if not data.adjudications:
        return {"why": NO_ADJUDICATION, "definitions": dict(DEFINITIONS), "adjudications": [],
                "items": [], "scores": None}
    entries, items = [], []
    copy_truths, finding_truths = {}, {}
    for adjudication in data.adjudications:
        entry, decided = _adjudication(adjudication)
        entries.append(entry)
        for item in decided:
            items.append(item)
            value, target = item["adjudicated"], item.pop("_target")
            if value == CANNOT_TELL:
                continue
            if item["finding"] is not None:
                finding_truths[target] = value
            else:
                copy_truths[target] = ADJUDICATED_COPY_TRUTHS[value]
    scores = None
    if copy_truths or finding_truths:
        restricted = with_truths(data, copy_truths=copy_truths, finding_truths=finding_truths)
        scores = {"judges": judge_scores(restricted), "reviewers": reviewer_scores(restricted),
                  "findings_decided": len(finding_truths), "copies_decided": len(copy_truths)}
    used = [e for e in entries if e["used"]]
    why = None
    if not used:
        why = "No adjudication on this run is used yet: " + "; ".join(
            f"session {e['session']['id']} is {e['why']}" for e in entries) + "."
    elif scores is None:
        why = "Every adjudicated item was answered cannot tell: nothing is scored."
    return {"why": why, "definitions": dict(DEFINITIONS), "adjudications": entries,
            "items": items, "scores": scores}


def _adjudication(adjudication: Adjudication) -> tuple[dict, list[dict]]:
    """Its entry, and its decided items (each with "_target": the finding or copy pk)."""
    data = adjudication.data
    session = data.session
    entry = {
        "session": {"id": session.pk, "url_id": session.url_id, "state": session.state,
                    "opened_at": iso(session.opened_at), "closed_at": iso(session.closed_at),
                    "revealed_at": iso(session.revealed_at), "items": len(data.items.rows)},
        "opened_after_reveal": bool(adjudication.revealed_before),
        "revealed_before": [{"session": pk, "revealed_at": iso(at)}
                            for pk, at in adjudication.revealed_before],
    }
    adjudicator = next((j for j in data.judges.rows if j.phase1_locked_at and j.is_active), None)
    if session.state != SessionState.REVEALED:
        return {**entry, "used": False, "why": NOT_REVEALED}, []
    if adjudicator is None:
        return {**entry, "used": False, "why": NOT_LOCKED}, []
    by_github = adjudicator.github_id is not None
    judges = [{**judge, "name": None, "display_name": None, "github_login": None}
              for judge in mapping.judges(data)]  # the adjudicator by pseudonym only
    entry.update({
        "used": True, "why": None,
        "adjudicator": adjudicator.pseudonym,
        "outside_the_matrix": {
            "status": CHECKED if by_github else DECLARED,
            "identified_by": adjudicator.identified_by,
            "matrix_judges": adjudication.matrix_judges,
            "matrix_judges_checked": adjudication.matrix_judges_by_github if by_github else 0,
        },
        "protocol": {"frozen": session.protocol, "sha256": session.protocol_sha256,
                     "canonical": form_of(session.protocol), "frozen_at": iso(session.opened_at)},
        "judges": judges,
        "assignments": mapping.assignments(data),
        "verdicts": mapping.verdicts(data),
    })
    return entry, _decided(data, adjudicator, adjudication)


def _decided(data: ReportData, adjudicator, adjudication: Adjudication) -> list[dict]:
    bundle, v = data.bundle, data.verdicts
    row = data.judges.index[adjudicator.pk]
    answers = {int(v.item[k]): k for k in range(len(v.value))
               if v.judge[k] == row and v.phase[k] == 1 and v.locked[k]}
    on = adjudicator.phase1_locked_at.date().isoformat()
    decided = []
    for column, item in enumerate(data.items.rows):
        if column not in answers:
            continue
        k = answers[column]
        record = bundle.finding_by_pk[item.finding_id] if item.finding_id \
            else bundle.copy_by_pk[item.copy_id]
        value = v.value[k]
        said = "cannot tell" if value == CANNOT_TELL else f"adjudicated {value.replace('_', ' ')}"
        decided.append({
            "item": item.key, "session": data.session.pk,
            "finding": record.bundle_id if item.finding_id else None,
            "copy": bundle.copy_by_pk[item.copy_id].bundle_id,
            "imported_truth": record.imported_truth, "truth": record.truth,
            "adjudicated": value, "reason": v.reason[k],
            "adjudicated_at": iso(adjudicator.phase1_locked_at),
            "adjudicator": adjudicator.pseudonym,
            "opened_after_reveal": bool(adjudication.revealed_before),
            "reads": f"{record.truth.replace('_', ' ')}, {said} ({on}, {adjudicator.pseudonym})",
            "_target": record.pk,
        })
    return decided
