"""The "redactions_per_builder", "shapes_of_one_builder" and "blinding_statement" sections: how
far judges were blind."""

from collections import defaultdict

from content.blinding import shape_features, shapes_of_one_builder
from content.normalise import normalise
from reports.loading import ReportData

BLINDING_STATEMENT = (
    "Judges saw each item under a random code, in an order drawn for them, rendered through one "
    "template with metadata (commit trailers, author headers) stripped and the host's accepted "
    "patterns redacted. Content itself was not otherwise changed: a model's style can still "
    "identify it. Judges were not asked to guess authors, so how far they stayed blind is "
    "unmeasured. Model reviewers' authorship guesses, where given, measure the leak for models."
)


def redactions_per_builder(data: ReportData) -> dict:
    """Redactions made in the items judges saw, per builder (by bundle id; 0 where none)."""
    bundle = data.bundle
    redactions = defaultdict(int)
    for item in data.items.rows:
        copy = bundle.copy_by_pk[item.copy_id]
        text = bundle.finding_by_pk[item.finding_id].text if item.finding_id else copy.content
        redactions[bundle.builder_by_pk[copy.builder_id].bundle_id] += normalise(
            text, copy.format if not item.finding_id else "text", data.session.redaction_patterns
        ).redactions
    for builder in bundle.builders:
        redactions.setdefault(builder.bundle_id, 0)
    return dict(sorted(redactions.items()))


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
