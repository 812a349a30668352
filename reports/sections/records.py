"""The record sections: the run, the session and the bundle's records (builders, copies,
reviewers, reviews, findings, truth corrections) as imported, for the reader to check the report
against; and the note on what an item is in this kind of session."""

from content.truth import is_correct
from judging.models import SessionKind
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
        "request_keys": run.request_keys, "bundle_sha256": run.bundle_sha256,
        "manifest": run.manifest, "manifest_sha256": run.manifest_sha256,
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


def builders(data: ReportData) -> list[dict]:
    return [{"id": b.bundle_id, "model": b.model, "family": b.family} for b in data.bundle.builders]


def copies(data: ReportData) -> list[dict]:
    builder_by_pk = data.bundle.builder_by_pk
    return [
        {"id": c.bundle_id, "builder": builder_by_pk[c.builder_id].bundle_id,
         "format": c.format, "content_sha256": c.content_sha256, "truth": c.truth,
         "imported_truth": c.imported_truth, "defect": c.defect, "cluster": c.cluster or None}
        for c in data.bundle.copies
    ]


def reviewers(data: ReportData) -> list[dict]:
    return [{"id": r.bundle_id, "model": r.model, "family": r.family} for r in data.bundle.reviewers]


def reviews(data: ReportData) -> list[dict]:
    bundle = data.bundle
    copy_by_pk, reviewer_by_pk = bundle.copy_by_pk, bundle.reviewer_by_pk
    return [
        {"reviewer": reviewer_by_pk[r.reviewer_id].bundle_id,
         "copy": copy_by_pk[r.copy_id].bundle_id, "verdict": r.verdict, "reason": r.reason,
         "authorship_guess": r.authorship_guess or None, "seal": r.seal,
         "seal_reason": r.seal_reason or None, "request_sha256": r.request_sha256 or None,
         "truth": copy_by_pk[r.copy_id].truth,
         "correct": is_correct(r.verdict, copy_by_pk[r.copy_id].truth),
         "same_family": is_same_family(r, bundle)}
        for r in bundle.reviews
    ]


def findings(data: ReportData) -> list[dict]:
    copy_by_pk, raised_by = data.bundle.copy_by_pk, data.bundle.raised_by
    return [
        {"id": f.bundle_id, "copy": copy_by_pk[f.copy_id].bundle_id, "text": f.text,
         "raised_by": raised_by[f.pk], "proposed_verdict": f.proposed_verdict, "truth": f.truth,
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
    return "items are copies; a verdict of fail on a defective copy is a catch"
