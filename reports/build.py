"""The revealed report: built from the database once a session is revealed, never before.

`build_report(session)` returns one complete, JSON-serialisable dict whose shape is published in
`reports/schemas/report-2.schema.json`; CSV, HTML and the anonymised export are views of that dict
(reports/render.py). Scores are per judge and per model reviewer, never a vote: recall on
defective items and the true-negative rate on good ones, k/n with Wilson 95% intervals, phase 1
and phase 2 apart. Then the phase shift (McNemar per judge and truth class; pooled effects with a
bootstrap over judges and items, never a pooled McNemar), agreement (reported, never used to
decide), the preregistered decision rules evaluated as written, model reviewers' pairs, authorship
guesses and seals, order effects, and the achieved sample beside the planned one. Model
reviewers are scored on the run's default condition only, abstentions by the run's rule; reviews
under other conditions are listed apart (other_conditions), never pooled with them, and compared
with the default condition's on the same copies (reviewer_conditions: McNemar per reviewer,
condition and truth class); self_preference sets a reviewer's pass rate on its own family's
copies against other families'.

How it is made: reports/loading.py makes every query once, into lists and judges × items numpy
matrices; each section of the dict is built from that by a pure function in reports/sections/;
this module puts the sections together in the report's order. A report of 200 judges × 500 items
in both phases builds within two seconds (bench/report.py).
"""

import gc

from django.utils import timezone

from blindjudge.errors import Conflict
from judging.enums import SessionKind
from reports.loading import load_report_data
from reports.render import require_revealed
from reports.sections import (
    adjudicated,
    blinding,
    builders,
    decision_rules,
    exclusions,
    mapping,
    model_reviewers,
    pairs,
    phase_shift,
    pooled,
    protocol,
    reasons,
    records,
    reviewer_conditions,
    sample,
    scores,
    self_preference,
    task_flags,
)
from reports.sections.common import iso

REPORT_SCHEMA = "blindjudge.report/2"


def build_report(session) -> dict:
    """The complete report of a revealed session (see the module docstring); Conflict before.

    Builds hundreds of thousands of small dicts and no reference cycles: the cyclic garbage
    collector, which would rescan them all over and over as they are made, is paused meanwhile."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _build_report(session)
    finally:
        if collecting:
            gc.enable()


ADJUDICATION_HAS_NO_REPORT = (
    "an adjudication has no report of its own: once revealed, its answers are reported, apart, in "
    "the report of every session on run {run} that holds its items (their adjudicated section)")


def _build_report(session) -> dict:
    if session.kind == SessionKind.ADJUDICATION:
        raise Conflict(ADJUDICATION_HAS_NO_REPORT.format(run=session.run_id))
    require_revealed(session)
    data = load_report_data(session)
    pooled_by_group = pooled.pooled_by_group(data)  # read by the phase shift and the decision rules
    sections = {
        "protocol": protocol.protocol(data),
        "sample": sample.sample(data),
        "redactions_per_builder": blinding.redactions_per_builder(data),
        "blinding_statement": blinding.BLINDING_STATEMENT,
        "shapes_of_one_builder": blinding.shapes_of_one_builder_section(data),
        "run": records.run(data),
        "session": records.session(data),
        "tasks": records.tasks(data),
        "builders": records.builders(data),
        "copies": records.copies(data),
        "reviewers": records.reviewers(data),
        "reviews": records.reviews(data),
        "findings": records.findings(data),
        "truth_corrections": records.truth_corrections(data),
        "judges": mapping.judges(data),
        "assignments": mapping.assignments(data),
        "verdicts": mapping.verdicts(data),
        "scores": scores.scores(data),
        "phase_shift": phase_shift.phase_shift(data, pooled_by_group),
        "decision_rules": None,  # evaluated below, on the sections built around it
        "model_reviewers": model_reviewers.model_reviewers(data),
        "other_conditions": scores.other_conditions(data),
        "reviewer_conditions": reviewer_conditions.reviewer_conditions(data),
        "self_preference": self_preference.self_preference(data),
        "builders_compared": builders.builders_compared(data),
        "preregistered_exclusions": exclusions.preregistered_exclusions(data),
        "session_kind_note": records.session_kind_note(data),
        "task_flags": task_flags.task_flags(data),
        "adjudicated": adjudicated.adjudicated(data),
        "reasons": reasons.reasons(data),
        "pairs": pairs.pairs(data),
    }
    # Last, in its place: a rule may name any section's figures (a reviewer's, a condition's, a
    # builder's), so every other section is built first.
    sections["decision_rules"] = decision_rules.decision_rules(data, pooled_by_group, sections)
    # Stamped once every section is built, as the moment the report was made.
    return {"schema": REPORT_SCHEMA, "generated_at": iso(timezone.now()), "anonymised": False,
            **sections}
