"""The "protocol" section: the protocol as frozen when the session opened, and its amendments."""

from content.canonical import form_of
from reports.loading import ReportData
from reports.sections.common import iso


def protocol(data: ReportData) -> dict:
    session = data.session
    return {
        "frozen": session.protocol, "sha256": session.protocol_sha256,
        # The canonical form of the protocol's hash and every commitment (content.canonical).
        "canonical": form_of(session.protocol),
        "frozen_at": iso(session.opened_at),
        "decision_rules_in_force": session.decision_rules,
        "amendments": [
            {"text": a.text, "text_sha256": a.text_sha256, "amended_at": iso(a.amended_at),
             "before_first_verdict": a.before_first_verdict,
             "decision_rules": a.decision_rules}
            for a in data.amendments
        ],
    }
