"""The record sections: the run, the session and the bundle's records (tasks, builders, copies,
reviewers, reviews, findings, truth corrections) as imported, for the reader to check the report
against; and the note on what an item is in this kind of session."""

from collections import Counter

from content.canonical import form_of, sha256_hex
from content.scoring import scored_verdict
from content.truth import is_correct
from judging.enums import SessionKind
from reports.loading import ReportData
from reports.sections.common import iso
from reports.sections.model_reviewers import is_same_family


def run(data: ReportData) -> dict:
    run = data.bundle.run
    return {
        "id": run.pk, "name": run.name, "format": run.format,
        # The bundle's run object exactly as imported: the manifest's run entry hashes it.
        "record": run.bundle_run, "default_condition": run.default_condition,
        "abstain_scoring": run.abstain_scoring,
        "request_keys": run.request_keys,
        # Every pattern the content seal check applied at import; None: imported before it.
        "verdict_patterns": run.verdict_patterns, "bundle_sha256": run.bundle_sha256,
        "manifest": run.manifest, "manifest_sha256": run.manifest_sha256,
        # The canonical form the manifest names (RFC 8785; absent before issue 15: legacy).
        "manifest_canonical": form_of(run.manifest),
        "imported_at": iso(run.imported_at),
    }


def session(data: ReportData) -> dict:
    session = data.session
    return {
        "id": session.pk, "url_id": session.url_id, "kind": session.kind,
        "state": session.state, "created_at": iso(session.created_at),
        "opened_at": iso(session.opened_at), "closed_at": iso(session.closed_at),
        "revealed_at": iso(session.revealed_at), "items_per_judge": session.items_per_judge,
        "items": len(data.items.rows), "guests_allowed": session.guests_allowed,
        "guest_cap": session.guest_cap, "reviewer_display": session.reviewer_display,
        "scorecards": session.scorecards, "draw_seed": session.draw_seed or None,
        "allocation_seed": session.allocation_seed,
    }


def tasks(data: ReportData) -> list[dict]:
    """The run's tasks in import order; a run imported as run/1 has one, id "task"."""
    copies_per_task = Counter(c.task_id for c in data.bundle.copies)
    return [
        {"id": t.bundle_id, "title": t.title, "format": t.format, "cluster": t.cluster or None,
         "statement": t.statement,
         # the hash the frozen protocol (version 2) gives the statement
         "statement_sha256": sha256_hex(t.statement.encode("utf-8")),
         "copies": copies_per_task[t.pk]}
        for t in data.bundle.tasks
    ]


def builders(data: ReportData) -> list[dict]:
    return [{"id": b.bundle_id, "model": b.model, "family": b.family} for b in data.bundle.builders]


def copies(data: ReportData) -> list[dict]:
    builder_by_pk, task_by_pk = data.bundle.builder_by_pk, data.bundle.task_by_pk
    return [
        {"id": c.bundle_id, "task": task_by_pk[c.task_id].bundle_id,
         "builder": builder_by_pk[c.builder_id].bundle_id,
         "format": c.format, "content_sha256": c.content_sha256, "truth": c.truth,
         "imported_truth": c.imported_truth, "defect": c.defect, "cluster": c.cluster or None}
        for c in data.bundle.copies
    ]


def reviewers(data: ReportData) -> list[dict]:
    return [{"id": r.bundle_id, "model": r.model, "family": r.family} for r in data.bundle.reviewers]


def reviews(data: ReportData) -> list[dict]:
    bundle = data.bundle
    copy_by_pk, reviewer_by_pk = bundle.copy_by_pk, bundle.reviewer_by_pk
    default, rule = bundle.run.default_condition, bundle.run.abstain_scoring
    return [
        {"reviewer": reviewer_by_pk[r.reviewer_id].bundle_id,
         "copy": copy_by_pk[r.copy_id].bundle_id, "condition": r.condition,
         "default_condition": r.condition == default, "verdict": r.verdict,
         "scored_as": scored_verdict(r.verdict, rule), "reason": r.reason,
         "authorship_guess": r.authorship_guess or None, "seal": r.seal,
         "seal_reason": r.seal_reason or None,
         "content_verdict": r.content_verdict or None,
         "content_verdict_pattern": r.content_verdict_pattern or None,
         "request_sha256": r.request_sha256 or None,
         "truth": copy_by_pk[r.copy_id].truth,
         "correct": None if scored_verdict(r.verdict, rule) is None
         else is_correct(scored_verdict(r.verdict, rule), copy_by_pk[r.copy_id].truth),
         "same_family": is_same_family(r, bundle)}
        for r in bundle.reviews
    ]


def findings(data: ReportData) -> list[dict]:
    bundle = data.bundle
    copy_by_pk, raised_by = bundle.copy_by_pk, bundle.raised_by
    return [
        {"id": f.bundle_id, "copy": copy_by_pk[f.copy_id].bundle_id, "text": f.text,
         "raised_by": raised_by[f.pk],
         "raised_by_conditions": [{"reviewer": reviewer, "condition": condition}
                                  for reviewer, condition in bundle.raised_by_conditions[f.pk]],
         "proposed_verdict": f.proposed_verdict, "truth": f.truth,
         "imported_truth": f.imported_truth}
        for f in data.bundle.findings
    ]


def truth_corrections(data: ReportData) -> list[dict]:
    return [
        {"item": (c.copy or c.finding).bundle_id, "old_truth": c.old_truth,
         "new_truth": c.new_truth, "note": c.note, "corrected_at": iso(c.corrected_at)}
        for c in data.bundle.corrections
    ]


def session_kind_note(data: ReportData) -> str:
    if data.session.kind == SessionKind.FINDINGS:
        return "items are findings; a verdict of real on a real finding is a catch"
    if data.session.kind == SessionKind.REASONS:
        return ("items are model reviews; an answer says whether the review's reason is grounded "
                "in its copy, and is never scored against truth (the reasons section)")
    if data.session.kind == SessionKind.PAIRS:
        return ("items are pairs of copies of one task by two builders; an answer prefers one "
                "(or neither), scored against the copies' truths in the pairs section, never in "
                "the per-copy scores")
    return "items are copies; a verdict of fail on a defective copy is a catch"
