"""The "protocol" section: the protocol as frozen when the session opened, and its amendments."""

from reports.loading import ReportData
from reports.sections.common import iso


def protocol(data: ReportData) -> dict:
    session = data.session
    return {
        "frozen": session.protocol, "sha256": session.protocol_sha256,
        "frozen_at": iso(session.opened_at),
        "decision_rules_in_force": session.decision_rules,
        "amendments": [
            {"text": a.text, "text_sha256": a.text_sha256, "amended_at": iso(a.amended_at),
             "before_first_verdict": a.before_first_verdict,
             "decision_rules": a.decision_rules}
            for a in data.amendments
        ],
    }
