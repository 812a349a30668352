"""The revealed report: built from the database once a session is revealed, never before.

`build_report(session)` returns one complete, JSON-serialisable dict whose shape is published in
`reports/schemas/report-1.schema.json`; CSV and the anonymised export are views of that dict.
Scores are per judge and per model reviewer, never a vote: recall on defective items and the
true-negative rate on good ones, k/n with Wilson 95% intervals, phase 1 and phase 2 apart.
"""

from collections import defaultdict

from django.utils import timezone

from accounts.models import AdmittedAs, JudgeStatus
from blindjudge.errors import Conflict
from judging.models import Assignment, SessionKind, SessionState, Verdict
from judging.normalise import normalise
from reports import stats

REPORT_SCHEMA = "blindjudge.report/1"

DEFECTIVE = {"seeded_defect", "tests_fail", "real"}
GOOD = {"known_good", "tests_pass", "false_alarm"}

BLINDING_STATEMENT = (
    "Judges saw each item under a random code, in an order drawn for them, rendered through one "
    "template with metadata (commit trailers, author headers) stripped and the host's accepted "
    "patterns redacted. Content itself was not otherwise changed: a model's style can still "
    "identify it. Judges were not asked to guess authors, so how far they stayed blind is "
    "unmeasured. Model reviewers' authorship guesses, where given, measure the leak for models."
)


def _iso(value):
    return value.isoformat() if value else None


def truth_class(truth: str) -> str | None:
    """'defective', 'good', or None for unknown truth (never scored)."""
    if truth in DEFECTIVE:
        return "defective"
    if truth in GOOD:
        return "good"
    return None


def is_correct(verdict: str, truth: str) -> bool | None:
    """Whether a verdict matches truth; None when truth is unknown."""
    cls = truth_class(truth)
    if cls is None:
        return None
    says_defective = verdict in ("fail", "real")
    return says_defective == (cls == "defective")


def _rate(k: int, n: int) -> dict:
    low, high = stats.wilson_interval(k, n)
    return {"k": k, "n": n, "rate": (k / n) if n else None, "low": low, "high": high}


def score(pairs) -> dict:
    """Recall and true-negative rate over (verdict, truth) pairs; unknown truth counted apart."""
    caught = defective = true_negative = good = unknown = 0
    for verdict, truth in pairs:
        cls = truth_class(truth)
        if cls is None:
            unknown += 1
        elif cls == "defective":
            defective += 1
            caught += is_correct(verdict, truth)
        else:
            good += 1
            true_negative += is_correct(verdict, truth)
    return {"recall": _rate(caught, defective), "tnr": _rate(true_negative, good),
            "unknown_truth": unknown}


def judge_group(judge) -> str:
    """Reported apart: removed judges, the host (self-blinded), guests; invited judges are main."""
    if judge.status == JudgeStatus.REMOVED:
        return "removed"
    return {AdmittedAs.HOST: "self_blinded_host", AdmittedAs.GUEST: "guest"}.get(
        judge.admitted_as, "invited"
    )


def build_report(session) -> dict:
    if session.state != SessionState.REVEALED:
        raise Conflict(f"session {session.pk} is {session.state}; the report exists after the reveal")
    run = session.run
    builders = list(run.builders.all())
    builder_by_pk = {b.pk: b for b in builders}
    copies = list(run.copies.all())
    copy_by_pk = {c.pk: c for c in copies}
    reviewers = list(run.reviewers.all())
    reviewer_by_pk = {r.pk: r for r in reviewers}
    findings = list(run.findings.prefetch_related("raised_by"))
    finding_by_pk = {f.pk: f for f in findings}
    corrections = list(run.truth_corrections.select_related("copy", "finding"))
    judges = list(session.judges.all())
    judge_by_pk = {j.pk: j for j in judges}
    items = {i.pk: i for i in session.items.all()}

    def item_truth(item, imported=False):
        target = finding_by_pk[item.finding_id] if item.finding_id else copy_by_pk[item.copy_id]
        return target.imported_truth if imported else target.truth

    assignments = list(
        Assignment.objects.filter(judge__session=session).order_by("judge__number", "position")
    )
    assignment_by_pk = {a.pk: a for a in assignments}
    verdicts = list(
        Verdict.objects.filter(assignment__judge__session=session)
        .order_by("assignment__judge__number", "assignment__position", "phase")
    )

    def builder_of(item):
        return builder_by_pk[copy_by_pk[item.copy_id].builder_id]

    verdict_rows = []
    verdicts_by_judge = defaultdict(list)
    for v in verdicts:
        a = assignment_by_pk[v.assignment_id]
        item = items[a.item_id]
        verdicts_by_judge[a.judge_id].append((v, item))
        truth = item_truth(item)
        verdict_rows.append({
            "judge": judge_by_pk[a.judge_id].pseudonym, "item": item.key, "code": a.code,
            "position": a.position, "phase": v.phase, "value": v.value, "kept": v.kept,
            "reason": v.reason, "seconds_spent": v.seconds_spent, "locked": v.locked,
            "created_at": _iso(v.created_at), "updated_at": _iso(v.updated_at),
            "truth": truth, "correct": is_correct(v.value, truth),
        })

    # (name, use the imported label?) — scores under the imported truth too once one was corrected
    truth_versions = [("current", False)] + ([("imported", True)] if corrections else [])
    judge_scores = []
    for judge in judges:
        mine = verdicts_by_judge[judge.pk]
        entry = {"judge": judge.pseudonym, "group": judge_group(judge), "phases": {},
                 "unlocked_drafts": sum(1 for v, _ in mine if not v.locked)}
        for phase in (1, 2):
            locked = [(v, item) for v, item in mine if v.phase == phase and v.locked]
            entry["phases"][str(phase)] = {
                version: score((v.value, item_truth(item, imported)) for v, item in locked)
                for version, imported in truth_versions
            }
        judge_scores.append(entry)

    reviews = list(run.reviews.all())
    reviews_by_reviewer = defaultdict(list)
    for review in reviews:
        reviews_by_reviewer[review.reviewer_id].append(review)
    reviewer_scores = []
    for reviewer in reviewers:
        buckets = defaultdict(list)
        for review in reviews_by_reviewer[reviewer.pk]:
            copy = copy_by_pk[review.copy_id]
            builder = builder_by_pk[copy.builder_id]
            if review.seal == "failed":
                bucket = "seal_failed"
            elif builder.family.casefold() == reviewer.family.casefold():
                bucket = "same_family"
            else:
                bucket = "main"
            buckets[bucket].append((review.verdict, copy))
        reviewer_scores.append({
            "reviewer": reviewer.bundle_id,
            "groups": {
                bucket: {
                    version: score((verdict, c.imported_truth if imported else c.truth)
                                   for verdict, c in pairs)
                    for version, imported in truth_versions
                }
                for bucket, pairs in sorted(buckets.items())
            },
        })

    redactions = defaultdict(int)
    for item in items.values():
        copy = copy_by_pk[item.copy_id]
        text = finding_by_pk[item.finding_id].text if item.finding_id else copy.content
        redactions[builder_by_pk[copy.builder_id].bundle_id] += normalise(
            text, copy.format if not item.finding_id else "text", session.redaction_patterns
        ).redactions

    return {
        "schema": REPORT_SCHEMA,
        "generated_at": _iso(timezone.now()),
        "anonymised": False,
        "run": {
            "id": run.pk, "name": run.name, "task": run.task, "format": run.format,
            "request_keys": run.request_keys, "bundle_sha256": run.bundle_sha256,
            "manifest": run.manifest, "manifest_sha256": run.manifest_sha256,
            "imported_at": _iso(run.imported_at),
        },
        "session": {
            "id": session.pk, "url_id": session.url_id, "kind": session.kind,
            "state": session.state, "created_at": _iso(session.created_at),
            "opened_at": _iso(session.opened_at), "closed_at": _iso(session.closed_at),
            "revealed_at": _iso(session.revealed_at), "items_per_judge": session.items_per_judge,
            "items": len(items), "guests_allowed": session.guests_allowed,
            "guest_cap": session.guest_cap, "reviewer_display": session.reviewer_display,
            "scorecards": session.scorecards, "draw_seed": session.draw_seed or None,
            "allocation_seed": session.allocation_seed,
        },
        "protocol": {
            "frozen": session.protocol, "sha256": session.protocol_sha256,
            "frozen_at": _iso(session.opened_at),
            "decision_rules_in_force": session.decision_rules,
            "amendments": [
                {"text": a.text, "text_sha256": a.text_sha256, "amended_at": _iso(a.amended_at),
                 "before_first_verdict": a.before_first_verdict,
                 "decision_rules": a.decision_rules}
                for a in session.amendments.all()
            ],
        },
        "builders": [{"id": b.bundle_id, "model": b.model, "family": b.family} for b in builders],
        "copies": [
            {"id": c.bundle_id, "builder": builder_by_pk[c.builder_id].bundle_id,
             "format": c.format, "content_sha256": c.content_sha256, "truth": c.truth,
             "imported_truth": c.imported_truth, "defect": c.defect, "cluster": c.cluster or None}
            for c in copies
        ],
        "reviewers": [{"id": r.bundle_id, "model": r.model, "family": r.family}
                      for r in reviewers],
        "reviews": [
            {"reviewer": reviewer_by_pk[r.reviewer_id].bundle_id,
             "copy": copy_by_pk[r.copy_id].bundle_id, "verdict": r.verdict, "reason": r.reason,
             "authorship_guess": r.authorship_guess or None, "seal": r.seal,
             "seal_reason": r.seal_reason or None, "request_sha256": r.request_sha256 or None,
             "truth": copy_by_pk[r.copy_id].truth,
             "correct": is_correct(r.verdict, copy_by_pk[r.copy_id].truth),
             "same_family": builder_by_pk[copy_by_pk[r.copy_id].builder_id].family.casefold()
             == reviewer_by_pk[r.reviewer_id].family.casefold()}
            for r in reviews
        ],
        "findings": [
            {"id": f.bundle_id, "copy": copy_by_pk[f.copy_id].bundle_id, "text": f.text,
             "raised_by": sorted(r.bundle_id for r in f.raised_by.all()),
             "proposed_verdict": f.proposed_verdict, "truth": f.truth,
             "imported_truth": f.imported_truth}
            for f in findings
        ],
        "truth_corrections": [
            {"item": (c.copy or c.finding).bundle_id, "old_truth": c.old_truth,
             "new_truth": c.new_truth, "note": c.note, "corrected_at": _iso(c.corrected_at)}
            for c in corrections
        ],
        "judges": [
            {"pseudonym": j.pseudonym, "name": j.github_login or j.display_name or None,
             "display_name": j.display_name or None, "github_login": j.github_login or None,
             "admitted_as": j.admitted_as, "identified_by": j.identified_by,
             "group": judge_group(j), "status": j.status, "erased": j.erased_at is not None,
             "joined_at": _iso(j.joined_at), "removed_at": _iso(j.removed_at),
             "phase1_locked_at": _iso(j.phase1_locked_at),
             "phase2_locked_at": _iso(j.phase2_locked_at),
             "commitment": {"sha256": j.commitment_sha256, "salt": j.commitment_salt,
                            "order_seed": j.order_seed}}
            for j in judges
        ],
        "assignments": [
            {"judge": judge_by_pk[a.judge_id].pseudonym, "position": a.position, "code": a.code,
             "item": items[a.item_id].key, "copy": copy_by_pk[items[a.item_id].copy_id].bundle_id,
             "builder": builder_of(items[a.item_id]).bundle_id, "order_key": a.order_key}
            for a in assignments
        ],
        "verdicts": verdict_rows,
        "scores": {
            "definitions": {
                "recall": "share of defective items (seeded_defect, tests_fail; findings: real) "
                          "judged fail (findings: real)",
                "tnr": "share of good items (known_good, tests_pass; findings: false_alarm) "
                       "judged pass (findings: false_alarm)",
                "interval": "Wilson score interval, 95%",
                "scored": "locked verdicts only; unknown truth never scored",
                "truth_versions": "current = after corrections; imported = as the bundle gave "
                                  "it (present only when a label was corrected)",
            },
            "judges": judge_scores,
            "reviewers": reviewer_scores,
        },
        "redactions_per_builder": dict(sorted(redactions.items())),
        "blinding_statement": BLINDING_STATEMENT,
        "session_kind_note": (
            "items are findings; a verdict of real on a real finding is a catch"
            if session.kind == SessionKind.FINDINGS else
            "items are copies; a verdict of fail on a defective copy is a catch"
        ),
    }
