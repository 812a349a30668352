"""What a host reads: only their own runs and sessions; another host's id is the same NotFound as
an id that does not exist.
"""

from blindjudge.errors import NotFound
from content.blinding import find_name_matches
from content.normalise import normalise, strip_metadata
from judging.models import Run, Session

# The frozen protocol and the run's manifest are JSON documents with an entry per item (hundreds
# of KB at 1,000 items) that almost no page reads; decoding them on every request cost more than
# the page itself. Deferred, they load on first access (one query) where they are needed.
HEAVY_SESSION_FIELDS = ("protocol", "run__manifest", "run__request_keys")


def session_for_host(*, host, session_id) -> Session:
    try:
        return (Session.objects.select_related("run").defer(*HEAVY_SESSION_FIELDS)
                .get(pk=int(session_id), run__host=host))
    except (Session.DoesNotExist, ValueError, TypeError):
        raise NotFound(f"no session {session_id}") from None


def run_for_host(*, host, run_id) -> Run:
    try:
        return Run.objects.get(pk=int(run_id), host=host)
    except (Run.DoesNotExist, ValueError, TypeError):
        raise NotFound(f"no run {run_id}") from None


def blinding_check(session: Session) -> dict:
    """The host's blinding check: per copy and per builder, the metadata that will be stripped,
    every name or model-id-like match in content, finding texts and review reasons, and how many
    matches the accepted patterns redact. It reports; only accepted patterns change content."""
    run = session.run
    builders = list(run.builders.all())
    builder_rows = [{"id": b.bundle_id, "model": b.model, "family": b.family} for b in builders]
    patterns = session.redaction_patterns
    per_builder = {
        b.bundle_id: {"builder": b.bundle_id, "model": b.model, "family": b.family, "copies": 0,
                      "stripped_lines": 0, "matches": 0, "redactions": 0}
        for b in builders
    }

    def matches_in(text, where):
        return [{"where": where, "term": m.term, "why": m.why, "builder": m.builder,
                 "matched": m.matched, "line": m.line, "column": m.column,
                 "context": m.context} for m in find_name_matches(text, builder_rows)]

    copies = []
    for copy in run.copies.select_related("builder").prefetch_related("findings", "reviews"):
        # Metadata is stripped whatever the host accepts, so only what remains can unblind.
        visible, stripped = strip_metadata(copy.content, copy.format)
        matches = matches_in(visible, "content")
        for finding in copy.findings.all():
            matches += matches_in(finding.text, f"finding {finding.bundle_id}")
        for review in copy.reviews.all():
            matches += matches_in(review.reason, f"review reason ({review.position})")
        redactions = normalise(copy.content, copy.format, patterns).redactions
        redactions += sum(normalise(f.text, "text", patterns).redactions
                          for f in copy.findings.all())
        copies.append({"copy": copy.bundle_id, "builder": copy.builder.bundle_id,
                       "stripped_metadata": list(stripped), "matches": matches,
                       "redactions": redactions})
        totals = per_builder[copy.builder.bundle_id]
        totals["copies"] += 1
        totals["stripped_lines"] += len(stripped)
        totals["matches"] += len(matches)
        totals["redactions"] += redactions
    return {"session": session.pk, "state": session.state, "accepted_patterns": patterns,
            "copies": copies, "builders": list(per_builder.values())}


def items_per_judge(session: Session) -> int:
    """How many items each judge of the session has: the session's items per judge, or all of
    them (the allocation at joining, judging.services._admit, gives every judge exactly that)."""
    items = session.items.count()
    return min(session.items_per_judge or items, items)
