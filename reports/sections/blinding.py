"""The "redactions_per_builder", "shapes_of_one_builder" and "blinding_statement" sections: how
far judges were blind."""

from collections import defaultdict

from content import blinding as content_blinding
from content.blinding import (
    JudgedCopy,
    shape_features,
    shapes_of_one_builder,
)
from reports.loading import ReportData

BLINDING_STATEMENT = (
    "Judges saw each item under a random code, in an order drawn for them, rendered through one "
    "template with metadata (commit trailers, author headers) stripped and the host's accepted "
    "patterns redacted. Content itself was not otherwise changed: a model's style can still "
    "identify it. Judges were not asked to guess authors, so how far they stayed blind is "
    "unmeasured. Model reviewers' authorship guesses, where given, measure the leak for models."
)


def redactions_per_builder(data: ReportData) -> dict:
    """Redactions made in what judges read, per builder (by bundle id; 0 where none), counted
    over the session's judged copies as the host's blinding check counted them before opening
    (content.blinding.redactions_shown)."""
    bundle = data.bundle
    session = data.session
    judged_findings: dict[int, list[str]] = defaultdict(list)
    judged_copies: set[int] = set()
    for item in data.items.rows:
        judged_copies.add(item.copy_id)
        if item.finding_id:
            judged_findings[item.copy_id].append(bundle.finding_by_pk[item.finding_id].text)
    reasons: dict[int, list[str]] = defaultdict(list)
    for review in bundle.default_reviews:
        reasons[review.copy_id].append(review.reason)
    copies = []
    for pk in sorted(judged_copies):
        copy = bundle.copy_by_pk[pk]
        copies.append(JudgedCopy(
            builder=bundle.builder_by_pk[copy.builder_id].bundle_id, content=copy.content,
            format=copy.format, findings=tuple(judged_findings[pk]), reasons=tuple(reasons[pk]),
            defect=copy.defect or ""))
    return content_blinding.redactions_per_builder(
        copies, [b.bundle_id for b in bundle.builders], kind=session.kind,
        scorecards=session.scorecards, patterns=session.redaction_patterns)


def shapes_of_one_builder_section(data: ReportData) -> list[dict]:
    """Layout features (format-patch headers, CRLF line ends, trailing spaces, a tool's banner)
    found in the judged copies of one builder only, as the blinding check flagged them before
    opening: a judge who noticed one could tell the builder (issue 24 item 8). Each says whether
    the normaliser removed it before judges saw the copies."""
    bundle = data.bundle
    copies = {item.copy_id for item in data.items.rows}
    return shapes_of_one_builder([
        (bundle.builder_by_pk[bundle.copy_by_pk[pk].builder_id].bundle_id,
         shape_features(bundle.copy_by_pk[pk].content))
        for pk in sorted(copies)])
