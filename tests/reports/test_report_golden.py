"""The report's bytes, pinned: the same data and seeds give the same export in every format.

A restructuring must not change a byte of what the host downloads. The realistic revealed session
of test_report is built with a pinned draw seed, so allocation, orders, codes, salts and the guest
code replay; what stays random by design (times, the session's URL id, database ids) is replaced
by a placeholder before comparing; the server's intervals between a judge's answers
(server_seconds) are wall-clock time too, and are pinned by a stepping clock
(tests/support/clock.py). The expected files live in tests/reports/golden/<database vendor>/:
PostgreSQL's jsonb gives the frozen protocol's keys back in its own order, so the JSON exports
differ between the two databases (the CSV, JSON Lines and HTML do not). A change that means to alter the
report regenerates them on purpose, on both databases, saying so in its commit:

    BLINDJUDGE_REGENERATE_GOLDEN=1 ./bj test tests/reports/test_report_golden.py
    DATABASE_URL=postgres://... BLINDJUDGE_REGENERATE_GOLDEN=1 ./bj test tests/reports/test_report_golden.py
"""

import os
import re
from pathlib import Path

import pytest
from django.db import connection, transaction

from reports.build import build_report
from reports.export import anonymise, to_csv, to_json, to_jsonl
from reports.html import to_html
from tests.reports.matrix_world import DRAW_SEED as MATRIX_DRAW_SEED
from tests.reports.matrix_world import build_matrix
from tests.reports.test_report import build_revealed
from tests.support.clock import pinned_answer_clock

GOLDEN = Path(__file__).resolve().parent / "golden" / connection.vendor
PINNED_DRAW_SEED = "5eed" * 16
PINNED_URL_ID = "pinnedsessionurlid0000000000000"

ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?")
# The HTML report writes times for people, to the minute in UTC (report_format's `when`).
READABLE_TIME = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC")
# The run's and the session's database ids (sequences differ between databases and test orders).
DATABASE_ID = re.compile(r'("(?:run|session)": \{\s*"id": )\d+')


def pinned(text: str, session) -> str:
    """The export with what differs between two builds of the same session replaced: the URL id,
    the database ids (in the JSON, and the session's in the HTML's title and heading), times (ISO
    8601, and the HTML's "2026-12-02 05:07 UTC")."""
    text = text.replace(session.url_id, "<session-url-id>")
    text = DATABASE_ID.sub(r"\1<database-id>", text)
    text = re.sub(rf"\bsession {session.pk}\b", "session <database-id>", text)
    return READABLE_TIME.sub("<time>", ISO_TIME.sub("<time>", text))


def exports(session) -> dict[str, str]:
    report = build_report(session)
    return {
        "report.json": to_json(report).decode("utf-8"),
        "report.csv": to_csv(report),
        "report.jsonl": to_jsonl(report).decode("utf-8"),
        "report.html": to_html(report),
        "report-anon.json": to_json(anonymise(report)).decode("utf-8"),
        "report-anon.jsonl": to_jsonl(anonymise(report)).decode("utf-8"),
    }


@pytest.mark.django_db
def test_every_export_is_byte_identical_to_the_pinned_one(host):
    with pinned_answer_clock():
        session, _ = build_revealed(host, draw_seed=PINNED_DRAW_SEED, url_id=PINNED_URL_ID)
    produced = {name: pinned(text, session) for name, text in exports(session).items()}
    if os.environ.get("BLINDJUDGE_REGENERATE_GOLDEN") == "1":
        GOLDEN.mkdir(parents=True, exist_ok=True)
        for name, text in produced.items():
            (GOLDEN / name).write_bytes(text.encode("utf-8"))
    for name, text in produced.items():
        expected = (GOLDEN / name).read_bytes().decode("utf-8")
        assert text == expected, f"{name} differs from {GOLDEN / name}"


@pytest.mark.django_db
def test_the_comparison_sees_a_change_of_seed(host):
    """The placeholders hide only what is random by design: another draw seed changes the bytes."""
    with pinned_answer_clock():
        session, _ = build_revealed(host, draw_seed="0" * 64, url_id=PINNED_URL_ID)
    golden = (GOLDEN / "report.json").read_bytes().decode("utf-8")
    assert pinned(exports(session)["report.json"], session) != golden


@pytest.mark.django_db
def test_the_matrix_world_s_html_report_is_byte_stable_for_pinned_seeds(host):
    """The HTML report of a larger world (four builders, ten tasks, three reviewers under two
    conditions, six judges): two sessions built with the same pinned draw seed give the same
    page, byte for byte, once what is random by design is blanked."""
    pages = []
    for _ in range(2):  # each build rolled back, so the second may take the same URL id
        with transaction.atomic(), pinned_answer_clock():
            session = build_matrix(host, draw_seed=MATRIX_DRAW_SEED, url_id=PINNED_URL_ID)
            pages.append(pinned(to_html(build_report(session)), session))
            transaction.set_rollback(True)
    assert pages[0] == pages[1]
    assert len(pages[0]) > 100_000
