"""reports.sections.protocol on hand-made data: the frozen protocol, its hash and canonical
form, when it was frozen, the rules in force and every amendment in order."""

from datetime import UTC, datetime
from types import SimpleNamespace

import pytest

from reports.sections.protocol import protocol
from tests.reports.sections.arrays import a_session, bundle, report_data

pytestmark = pytest.mark.pure

OPENED = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)
RULES = [{"name": "shift", "metric": "delta_recall", "op": ">=", "threshold": 0.1}]


def data_of(session, amendments=()):
    return report_data(bundle(tasks=[], builders=[], copies=[]), session=session,
                       amendments=amendments)


def test_the_frozen_protocol_and_its_amendments_in_order():
    frozen = {"version": 2, "canonical": "jcs-rfc8785", "decision_rules": RULES}
    first = SimpleNamespace(text="Fix a typo.", text_sha256="a" * 64, before_first_verdict=True,
                            amended_at=datetime(2026, 3, 1, 10, 0, tzinfo=UTC), decision_rules=None)
    second = SimpleNamespace(text="Raise the threshold.", text_sha256="b" * 64,
                             before_first_verdict=False,
                             amended_at=datetime(2026, 3, 2, 8, 0, 0, 5, tzinfo=UTC),
                             decision_rules=[{**RULES[0], "threshold": 0.2}])
    session = a_session(protocol=frozen, protocol_sha256="f" * 64, opened_at=OPENED,
                        decision_rules=second.decision_rules)
    assert protocol(data_of(session, [first, second])) == {
        "frozen": frozen, "sha256": "f" * 64, "canonical": "jcs-rfc8785",
        "frozen_at": "2026-03-01T09:30:00+00:00",
        "decision_rules_in_force": [{**RULES[0], "threshold": 0.2}],
        "amendments": [
            {"text": "Fix a typo.", "text_sha256": "a" * 64,
             "amended_at": "2026-03-01T10:00:00+00:00", "before_first_verdict": True,
             "decision_rules": None},
            {"text": "Raise the threshold.", "text_sha256": "b" * 64,
             "amended_at": "2026-03-02T08:00:00.000005+00:00", "before_first_verdict": False,
             "decision_rules": [{**RULES[0], "threshold": 0.2}]},
        ],
    }


def test_a_protocol_naming_no_form_is_in_the_legacy_form_and_has_no_amendments():
    session = a_session(protocol={"version": 1}, opened_at=None, decision_rules=[])
    section = protocol(data_of(session))
    assert section["canonical"] == "blindjudge-json-1"
    assert section["frozen_at"] is None
    assert section["amendments"] == [] and section["decision_rules_in_force"] == []
