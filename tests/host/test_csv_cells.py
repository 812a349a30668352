"""Both CSVs a host downloads neutralise a formula behind an invisible character (issue 25):
a cell starting with U+FEFF or U+200B and then `=` was written as it was, in the join links' CSV
and in the report's. One guard now serves both (content/spreadsheet.py)."""

import csv
import io

import pytest
from django.urls import reverse

from judging.services import phase_lock
from tests.support.verdicts import verdict_record
from tests.worlds import a_run, a_session, advance, client_as, invite_and_join, make_bundle

BOM_FORMULA = '\ufeff=HYPERLINK("http://evil.example/","open")'
ZWSP_FORMULA = "\u200b=1+2"


def rows_of(response) -> list[dict]:
    return list(csv.DictReader(io.StringIO(response.getvalue().decode("utf-8"), newline="")))


@pytest.mark.django_db
def test_the_join_links_csv_neutralises_a_formula_behind_an_invisible_character(
        host, open_session):
    alice = client_as(host)
    names = f"{BOM_FORMULA}\tplain note\nBo Chen\t{ZWSP_FORMULA}\n"
    listed = alice.post(reverse("host:invite_list", kwargs={"session_id": open_session.pk}),
                        {"list-names": names})
    assert listed.status_code == 303
    download = alice.post(reverse("host:join_links_download",
                                  kwargs={"session_id": open_session.pk}))
    assert download.status_code == 200
    cells = [(row["name"], row["note"]) for row in rows_of(download)]
    assert cells == [("'" + BOM_FORMULA, "plain note"), ("Bo Chen", "'" + ZWSP_FORMULA)]


@pytest.mark.django_db(transaction=True)
def test_the_report_csv_neutralises_a_formula_behind_an_invisible_character(
        host, report_builders):
    bundle = make_bundle(reviews=[
        {"reviewer": "r1", "copy": "c1", "verdict": "pass", "reason": BOM_FORMULA},
        {"reviewer": "r2", "copy": "c2", "verdict": "fail", "reason": ZWSP_FORMULA}])
    session = a_session(a_run(host, bundle), "open")
    judge = invite_and_join(session).judge
    first, *rest = judge.assignments.order_by("position")
    verdict_record(judge=judge, code=first.code, phase=1, value="fail", reason=ZWSP_FORMULA)
    for assignment in rest:
        verdict_record(judge=judge, code=assignment.code, phase=1, value="pass",
                       reason=BOM_FORMULA)
    phase_lock(judge=judge, phase=1)
    advance(session, "revealed")
    response = client_as(host).get(reverse("host:report", kwargs={"session_id": session.pk,
                                                                  "fmt": "csv"}))
    assert response.status_code == 200
    rows = rows_of(response)
    model = {(row["rater"], row["copy"]): row["reason"] for row in rows
             if row["rater_kind"] == "model"}
    assert model == {("r1", "c1"): "'" + BOM_FORMULA, ("r2", "c2"): "'" + ZWSP_FORMULA}
    human = sorted(row["reason"] for row in rows if row["rater_kind"] == "human")
    assert human == sorted(["'" + ZWSP_FORMULA] + ["'" + BOM_FORMULA] * len(rest))
