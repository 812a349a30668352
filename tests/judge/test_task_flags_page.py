"""The judge's "Flag this task" control (issue 29 item 3) over HTTP, and what never leaks (item
5): a judge's task flag reaches neither another judge nor the host before the reveal.

The canary is a flag's reason. Positive controls first: the same scan finds it on the flagging
judge's own item page (the detector fires) and, after the reveal, in the host's report."""

import io
import json
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from host.judge_rows import judge_rows_each
from judging.models import AuditEvent, TaskFlag
from judging.selectors.live import session_totals
from judging.services import task_flag_record
from reports.build import build_report
from reports.export import to_json
from tests.test_permissions import all_patterns
from tests.worlds import a_run, a_session, advance, answer_all, client_as, codes, invite_and_join
from tests.worlds import make_run2_bundle as run2

CANARY = "CANARYFLAGREASON77 the tests want a minus"


def item_url(judge, code):
    return reverse("judge_item", kwargs={"url_id": judge.session.url_id, "code": code})


def flag_url(judge, code):
    return reverse("judge_task_flag", kwargs={"url_id": judge.session.url_id, "code": code})


@pytest.fixture
def flags_session(host):
    return a_session(a_run(host, run2()), "open", task_flags=True)


@pytest.fixture
def judges(flags_session):
    return [invite_and_join(flags_session, name=f"Judge {n}").judge for n in range(2)]


def test_the_control_shows_only_where_flags_are_collected_with_nothing_chosen(
        flags_session, judges, open_session, invited_judge):
    page = client_as(judges[0]).get(item_url(judges[0], codes(judges[0])[0])).content.decode()
    assert 'id="task-flag-button"' in page and "<kbd>f</kbd>" in page
    assert "judge/flag.js" in page
    form = page[page.index('id="task-flag-form"'):page.index("</form>", page.index('id="task-flag-form"'))]
    # Nothing chosen for the judge: the empty option is the selected one in both lists.
    assert form.count('<option value="" selected>') == 2
    assert " selected>" not in form.replace('<option value="" selected>', "")
    assert "You have not flagged this task in phase 1." in page
    plain = client_as(invited_judge).get(item_url(invited_judge, codes(invited_judge)[0]))
    assert b'id="task-flag' not in plain.content and b"judge/flag.js" not in plain.content


def test_the_instructions_name_the_flag_key_only_where_flags_are_collected(judges, invited_judge):
    url_id = judges[0].session.url_id
    page = client_as(judges[0]).get(f"/s/{url_id}/instructions").content.decode()
    assert "<kbd>f</kbd></td><td>Flag the item's task as unsound" in page
    plain = client_as(invited_judge).get(f"/s/{invited_judge.session.url_id}/instructions")
    assert b"<kbd>f</kbd>" not in plain.content


def test_a_flag_posted_from_the_page_is_saved_and_shown_at_every_item_of_its_task(judges):
    judge = judges[0]
    client = client_as(judge)
    code = codes(judge)[0]
    answer = client.post(flag_url(judge, code), {"phase": "1", "kind": "tests_unfair",
                                                 "severity": "2", "reason": "wants a minus"},
                         HTTP_ACCEPT="application/json")
    assert answer.status_code == 200
    assert answer.json() == {"saved": True, "flag": {"kind": "tests_unfair", "severity": 2,
                                                     "reason": "wants a minus", "locked": False}}
    task = judge.assignments.get(code=code).item.task_id
    same_task = [a.code for a in judge.assignments.all() if a.item.task_id == task]
    other_task = [a.code for a in judge.assignments.all() if a.item.task_id != task]
    for c in same_task:
        page = client.get(item_url(judge, c)).content.decode()
        assert "Your phase-1 flag on this task" in page and "wants a minus" in page
    assert "wants a minus" not in client.get(item_url(judge, other_task[0])).content.decode()
    # The form without script: a redirect back to the item; a bad value is said on the page
    # with what was typed kept.
    plain = client.post(flag_url(judge, code), {"phase": "1", "kind": "other", "severity": "1",
                                                "reason": "changed my mind"})
    assert plain.status_code == 302 and plain["Location"] == item_url(judge, code)
    assert TaskFlag.objects.get(judge=judge).kind == "other"
    bad = client.post(flag_url(judge, code), {"phase": "1", "kind": "other", "severity": "9",
                                              "reason": "typed and kept"})
    assert bad.status_code == 400
    assert "severity: expected a whole number from 0 to 3" in bad.content.decode()
    assert "typed and kept</textarea>" in bad.content.decode()
    assert TaskFlag.objects.get(judge=judge).reason == "changed my mind"


def test_after_the_lock_the_flag_is_read_only_and_phase_two_has_its_own(judges):
    judge = judges[0]
    client = client_as(judge)
    code = codes(judge)[0]
    task_flag_record(judge=judge, code=code, phase=1, kind="underspecified", severity=1,
                     reason="which sign")
    answer_all(judge, 1, "pass", lock=True)
    page = client.get(item_url(judge, code)).content.decode()  # phase 2 now
    assert "You have not flagged this task in phase 2." in page
    assert 'id="task-flag-form"' in page
    refused = client.post(flag_url(judge, code), {"phase": "1", "kind": "other", "severity": "0",
                                                  "reason": "too late"},
                          HTTP_ACCEPT="application/json")
    assert refused.status_code == 409
    assert TaskFlag.objects.get(judge=judge, phase=1).reason == "which sign"
    client.post(flag_url(judge, code), {"phase": "2", "kind": "other", "severity": "3",
                                        "reason": "phase two"})
    answer_all(judge, 2, "keep", lock=True)
    page = client.get(item_url(judge, code)).content.decode()
    assert "Your phase-2 flag on this task (locked)" in page and "phase two" in page
    assert 'id="task-flag-form"' not in page and 'id="task-flag-button"' not in page


def test_another_judges_code_is_a_404_and_stores_nothing(judges):
    mine, other = judges
    foreign = next(c for c in codes(other) if c not in codes(mine))
    response = client_as(mine).post(flag_url(mine, foreign), {
        "phase": "1", "kind": "other", "severity": "1", "reason": "r"},
        HTTP_ACCEPT="application/json")
    assert response.status_code == 404
    assert not TaskFlag.objects.exists()


# --- Nothing leaks (docs/threats.md, task flags) -----------------------------------------------

def host_get_urls(session):
    """Every host page the resolver knows, filled for this session and run (as the host's
    permission matrix fills them), GET only."""
    values = {"run_id": str(session.run_id), "session_id": str(session.pk), "position": "0",
              "number": "1", "fmt": "json", "invitation_id": "1"}
    for route, _ in all_patterns():
        if not route.startswith("host/"):
            continue
        names = re.findall(r"<(?:\w+:)?(\w+)>", route)
        if not all(name in values for name in names):
            continue
        path = route
        for name in names:
            path = re.sub(rf"<(?:\w+:)?{name}>", values[name], path)
        yield "/" + path


def judge_pages(judge):
    url_id = judge.session.url_id
    pages = [f"/s/{url_id}/", f"/s/{url_id}/welcome/", f"/s/{url_id}/instructions",
             f"/s/{url_id}/lock/"]
    return pages + [item_url(judge, c) for c in codes(judge)]


def test_a_flag_reaches_no_other_judge_and_not_the_host_before_the_reveal(host, judges):
    flagger, other = judges
    session = flagger.session
    task_flag_record(judge=flagger, code=codes(flagger)[0], phase=1, kind="tests_unfair",
                     severity=3, reason=CANARY)
    # The detector fires: the flagging judge's own page shows it.
    own = client_as(flagger).get(item_url(flagger, codes(flagger)[0]))
    assert CANARY in own.content.decode()
    alice = client_as(host)
    others = client_as(other)
    for state in ("open", "phase1-locked", "closed"):
        if state == "phase1-locked":
            answer_all(flagger, 1, "pass", lock=True)
            answer_all(other, 1, "fail", lock=True)
        if state == "closed":
            session = advance(session, "closed")
        for path in judge_pages(other):
            body = others.get(path, follow=True).content.decode()
            assert CANARY not in body, (state, path)
            assert "Your phase-1 flag" not in body, (state, path)
        seen = 0
        for path in host_get_urls(session):
            response = alice.get(path)
            body = response.content.decode(errors="replace")
            assert CANARY not in body, (state, path)
            assert "tests_unfair" not in body and "flagged" not in body.lower(), (state, path)
            seen += response.status_code == 200
        assert seen > 10, "the walk reached too few host pages to mean anything"
        # The dashboard's socket snapshot (host/consumers.py) and the audit log.
        snapshot = json.dumps({"rows": judge_rows_each(session.pk)[1],
                               "totals": session_totals(session.pk)})
        assert CANARY not in snapshot and "flag" not in snapshot.lower(), state
        # (session.created names the setting, task_flags: true; no event is a flag's.)
        audit = json.dumps(list(AuditEvent.objects.values("action", "details")))
        assert CANARY not in audit and "tests_unfair" not in audit, state
        assert not AuditEvent.objects.filter(action__icontains="flag").exists(), state
        # The command line: what reads a session, with --json; the report is refused.
        out = io.StringIO()
        call_command("redactions", str(session.pk), "--list", "--json", stdout=out)
        assert CANARY not in out.getvalue() and "flag" not in out.getvalue().lower(), state
        with pytest.raises(CommandError, match="revealed|reveal"):
            call_command("export_report", str(session.pk), "--format", "json", "-o",
                         "/nonexistent/report.json", stdout=io.StringIO())
    # After the reveal, the host's report has it: the same scan finds it there.
    session = advance(session, "revealed")
    assert CANARY.encode() in to_json(build_report(session))
