"""The host's guardrails and the progress table (issue 17, items 4 and 5): a confirmation before
opening that lists what freezes, the next step after it, the New-session form at the top of the
run page, the planner's number of judges, the blinding check's "accept all" and redacted preview,
the progress table's narrow rows, and the reveal confirmation's count of judges who never locked.
"""

import html
import math
import re

import pytest
from django.urls import reverse

from judging.demo import demo_bundle
from judging.enums import SessionState
from judging.selectors.host import item_truth_counts
from judging.services import session_close
from tests.support.verdicts import verdict_record
from tests.worlds import a_run, a_session, answer_all, client_as, codes, invite_and_join, opened_from_page


def url(name, **kwargs):
    return reverse(f"host:{name}", kwargs=kwargs)


def page(response) -> str:
    return response.content.decode()


@pytest.fixture
def alice(host):
    return client_as(host)


@pytest.fixture
def demo_draft(host):
    """The demo's run (names of models in its copies), as a draft without redactions."""
    return a_session(a_run(host, demo_bundle()), "draft")


# --- Opening -------------------------------------------------------------------------------------

def test_opening_goes_through_a_confirmation_that_lists_what_freezes(opening_processes, alice, draft):
    overview = page(alice.get(url("session", session_id=draft.pk)))
    open_path = url("session_open", session_id=draft.pk)
    assert f'<a class="button primary" href="{open_path}">Open the session…</a>' in overview
    assert f'action="{open_path}"' not in overview  # no one-click opening from the overview
    confirm = page(alice.get(open_path))
    draft.refresh_from_db()
    assert draft.state == SessionState.DRAFT  # looking changes nothing
    frozen = re.search(r'<ul class="consequences" id="frozen-parts">(.*?)</ul>', confirm, re.S).group(1)
    for part in ("the tasks: titles and statements", "the rubric", "the items: which copies",
                 "the redactions (0 accepted patterns)", "how model reviewers are shown in phase 2",
                 "the preregistration", "the allocation and draws", "items per judge (all)"):
        assert part in frozen, part
    assert "blindjudge_protocol" not in frozen and "canonical" not in frozen
    assert "Still yours to change" in confirm and "invitations, GitHub logins and guests" in confirm
    assert "Open the session and freeze the protocol" in confirm

    response = alice.post(open_path)
    assert response.status_code == 303
    opened_from_page(draft)
    opened = page(alice.get(response["Location"]))
    assert "Next: invite the judges" in opened
    assert f'href="{url("invitations", session_id=draft.pk)}">Invite judges</a>' in opened
    # Once someone joined, the overview stops pressing.
    invite_and_join(draft)
    assert "Next: invite the judges" not in page(alice.get(url("session", session_id=draft.pk)))
    assert "was opened already" in page(alice.get(open_path))


# --- The run page --------------------------------------------------------------------------------

@pytest.mark.django_db
def test_the_new_session_form_comes_before_the_runs_rows_and_reviews_are_counted(alice, host):
    run = a_run(host, demo_bundle())
    body = page(alice.get(url("run", run_id=run.pk)))
    assert body.index('id="new-session"') < body.index('id="tasks"') < body.index('id="reviews"')
    reviews = body[body.index('id="reviews"'):body.index('id="findings"')]
    # Counted per reviewer and condition, listed on their own page (tests/host/test_run_reviews.py).
    assert "Reviews (24)" in reviews
    assert f'<a href="{url("run_reviews", run_id=run.pk)}">Every review with its reason' in reviews
    assert 'class="untrusted"' not in reviews  # no reason on the run's page


# --- The planner ---------------------------------------------------------------------------------

@pytest.mark.django_db
def test_the_planner_says_how_many_judges_its_n_means(alice, host):
    session = a_session(a_run(host, demo_bundle()), "draft", items_per_judge=4)
    truths = item_truth_counts(session)
    body = page(alice.get(url("planner", session_id=session.pk), {"psi": "0.25", "delta": "0.15"}))
    total = truths["defective"] + truths["good"] + truths["unknown"]
    per_class = {c: 4 * truths[c] / total for c in ("defective", "good")}
    judges = max(math.ceil(85 / share) for share in per_class.values())
    assert f"n = 85 paired verdicts per truth class ≈ {judges} judges at 4 items each" in body
    scarcer = min(per_class, key=per_class.get)
    assert f"so the {scarcer} class\n     needs the most: {judges} judges" in body


@pytest.mark.django_db
def test_the_planner_says_when_a_class_has_no_items(alice, host):
    bundle = demo_bundle()
    bundle["copies"] = [c for c in bundle["copies"] if c["truth"] not in ("seeded_defect", "tests_fail")]
    bundle["findings"] = []
    bundle["reviews"] = [r for r in bundle["reviews"]
                         if r["copy"] in {c["id"] for c in bundle["copies"]}]
    session = a_session(a_run(host, bundle), "draft")
    body = page(alice.get(url("planner", session_id=session.pk), {"psi": "0.25", "delta": "0.15"}))
    assert "n = 85 paired verdicts per truth class</h3>" in body
    assert "no items of defective truth" in body


# --- The blinding check --------------------------------------------------------------------------

@pytest.mark.django_db
def test_accept_all_takes_every_listed_match_in_one_post(alice, demo_draft):
    path = url("blinding", session_id=demo_draft.pk)
    before = page(alice.get(path))
    # Each listed match has an Accept button (and a Keep on purpose one, issue 24 item 7).
    listed = re.findall(r'<input type="hidden" name="action" value="suggest">\s*'
                        r'<input type="hidden" name="pattern" value="([^"]+)">', before)
    assert len(listed) >= 2
    assert before.count('<input type="hidden" name="action" value="dismiss">') == len(listed)
    assert f"Accept all {len(listed)} listed matches" in before
    # The preview shows a copy with a match as judges would see it: nothing redacted yet.
    preview = before[before.index('id="redacted-preview"'):before.index('id="matches"')]
    assert 'class="mark redacted"' not in preview and "<script" not in preview

    response = alice.post(url("redactions", session_id=demo_draft.pk), {"action": "accept_all"})
    assert response.status_code == 303
    demo_draft.refresh_from_db()
    assert sorted(demo_draft.redaction_patterns, key=str.casefold) == sorted(
        (html.unescape(p) for p in listed), key=str.casefold)
    after = page(alice.get(path))
    assert "Matches not yet covered" not in after
    preview = after[after.index('id="redacted-preview"'):after.index('id="matches"')]
    assert 'class="mark redacted"' in preview and "<script" not in preview
    again = alice.post(url("redactions", session_id=demo_draft.pk), {"action": "accept_all"})
    assert again.status_code == 303  # nothing left: said, nothing changes
    demo_draft.refresh_from_db()
    assert len(demo_draft.redaction_patterns) == len(listed)


# --- The progress table --------------------------------------------------------------------------

@pytest.mark.django_db
def test_progress_rows_tell_same_names_apart_and_show_last_activity(alice, open_session):
    first = invite_and_join(open_session, "Ann").judge
    second = invite_and_join(open_session, "ann").judge
    invite_and_join(open_session, "Bo")
    verdict_record(judge=second, code=codes(second)[0], phase=1, value="pass", reason="")
    body = page(alice.get(url("judges", session_id=open_session.pk)))
    rows = {n: re.search(rf'<tr data-judge="{n}".*?</tr>', body, re.S).group(0) for n in (1, 2, 3)}
    joined = first.joined_at.strftime("%Y-%m-%d %H:%M")
    assert f'(1 of 2, joined {joined})' in rows[1]
    assert '(2 of 2, joined ' in rows[2]
    assert "of 2" not in rows[3]
    for row in rows.values():
        assert re.search(r'data-cell="last-active" class="nowrap">\d\d-\d\d \d\d:\d\d<', row)
        assert '<details class="menu"><summary>Actions' in row
        assert 'data-cell="locks"' in row
    assert "Reissue resume link<span class=\"visually-hidden\"> of J02" in rows[2]


# --- The reveal ----------------------------------------------------------------------------------

@pytest.mark.django_db
def test_the_reveal_confirmation_counts_judges_who_never_locked(alice, open_session):
    both = invite_and_join(open_session, "Both").judge
    answer_all(both, 1, lock=True)
    answer_all(both, 2, lock=True)
    one = invite_and_join(open_session, "One").judge
    answer_all(one, 1, lock=True)
    never = invite_and_join(open_session, "Never").judge
    verdict_record(judge=never, code=codes(never)[0], phase=1, value="fail", reason="")
    session_close(session=open_session, actor="test")
    body = page(alice.get(url("session_reveal", session_id=open_session.pk)))
    assert ("1 of 3 judges never locked phase 1: their drafts are not scored; the report counts "
            "them apart, as unlocked drafts.") in body
    assert "1 locked phase 1 but never phase 2: their phase-2 drafts are reported apart too." in body
