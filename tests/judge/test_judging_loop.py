"""The judging loop's server side over HTTP (issue 16): the item page's context, saves that keep a
reason before any verdict and notice another tab, the review before each lock, read-only pages
after both locks, credentials a person can keep, one vocabulary on every judge page."""

import html
import re

import pytest
from django.test import Client

from accounts.models import Judge
from blindjudge.errors import Invalid
from judging.enums import SessionState
from judging.models import AuditEvent, Session, Verdict
from judging.selectors.judge import judge_live_state
from judging.selectors.live import dashboard_judges, live_row
from judging.services import (
    CHANGED_ELSEWHERE,
    JOIN_REFUSAL,
    RESUME_REFUSAL,
    invitation_create,
    phase_lock,
    protocol_of,
    session_update_draft,
)
from tests.support.verdicts import verdict_record
from tests.worlds import (
    a_session,
    advance,
    answer_all,
    client_as,
    codes,
    invite_and_join,
    is_saved_reply,
)

JSON = {"HTTP_ACCEPT": "application/json"}
# Stored values a judge must never read as words on a judge page (the choices' words instead).
RAW_VALUES = ("false_alarm", "seeded_defect", "known_good", "tests_fail", "tests_pass",
              "confirmed", "refuted", "abstain")


@pytest.fixture
def judge(open_session):
    return invite_and_join(open_session, "Ada").judge


def fresh(judge) -> Judge:
    return Judge.objects.get(pk=judge.pk)


def item_url(judge, code) -> str:
    return f"/s/{judge.session.url_id}/i/{code}/"


def visible_text(response) -> str:
    """What a person reads on the page: its text without tags, attributes, scripts or styles."""
    page = response.content.decode()
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def enabled_fields(response) -> list[str]:
    """The verdict form's fields a person could still use: inputs, textareas and buttons outside a
    disabled fieldset and not disabled themselves. (The page's own controls outside the form, the
    keys help and the frame's wrap toggle, save nothing; no other form posts a verdict.)"""
    page = response.content.decode()
    forms = re.findall(r"<form\b[^>]*>.*?</form>", page, flags=re.S)
    verdict_forms = [f for f in forms if 'id="verdict-form"' in f]
    assert len(verdict_forms) == 1 and not any('name="verdict"' in f for f in forms
                                                if f not in verdict_forms)
    page = verdict_forms[0]
    page = re.sub(r"<fieldset[^>]*\bdisabled\b[^>]*>.*?</fieldset>", "", page, flags=re.S)
    fields = re.findall(r"<(?:input|textarea|button|select)\b[^>]*>", page)
    return [f for f in fields if "disabled" not in f and 'type="hidden"' not in f]


# --- The item page's context ------------------------------------------------------------------------

def test_the_item_page_gives_the_template_its_contract(judge):
    first, second, third, *rest = codes(judge)
    browser = client_as(judge)
    for code, seconds in ((first, 10), (third, 30)):
        verdict_record(judge=judge, code=code, phase=1, value="pass", seconds_spent=seconds)
    page = browser.get(item_url(judge, second))
    context = page.context
    url_id = judge.session.url_id
    assert context["one_key"] is True and context["read_only"] is False
    assert context["revision"] == 0
    assert context["progress"] == {"answered": 2, "total": len(rest) + 3, "median_seconds": 20,
                                   "remaining_seconds": 20 * (len(rest) + 1),
                                   "answered_codes": tuple(sorted((first, third)))}
    # The page counts answered items by code (a set), so an item is never counted twice.
    assert f'data-answered-codes="{" ".join(sorted((first, third)))}"' in page.content.decode()
    assert 'data-min-shown-ms="300"' in page.content.decode()
    assert context["phase1_reason"] == ""
    assert context["previous_url"] == f"/s/{url_id}/i/{first}/"
    assert context["next_url"] == f"/s/{url_id}/i/{third}/"
    assert context["next_frame_url"] == f"/s/{url_id}/i/{third}/frame"
    assert context["review_url"] == f"/s/{url_id}/lock/"
    assert context["mark_disagreement"] is False
    assert context["choices"] == [("pass", "Pass", "1"), ("fail", "Fail", "2")]
    last = browser.get(item_url(judge, codes(judge)[-1])).context
    assert last["next_url"] is None and last["next_frame_url"] is None


def test_phase_2_keys_are_1_2_3_and_show_the_judges_own_phase_1_reason(judge):
    answer_all(judge, 1, "fail", reason="it subtracts", lock=True)
    page = client_as(judge).get(item_url(judge, codes(judge)[0]))
    assert page.context["choices"] == [("pass", "Pass", "1"), ("fail", "Fail", "2"),
                                       ("keep", "Keep my phase-1 verdict", "3")]
    assert page.context["phase1_reason"] == "it subtracts"
    assert page.context["chosen"] is None  # nothing preselected: "keep" is a choice to make
    assert 'data-key="k"' not in page.content.decode()


def test_the_one_key_setting_reaches_the_page(run):
    session = a_session(run, "open", advance_on_key=False)
    judge = invite_and_join(session).judge
    assert client_as(judge).get(item_url(judge, codes(judge)[0])).context["one_key"] is False


# --- Saves ----------------------------------------------------------------------------------------

def test_a_save_answers_its_revision_and_time(judge):
    url = item_url(judge, codes(judge)[0])
    browser = client_as(judge)
    first = browser.post(url, {"verdict": "pass", "phase": "1", "revision": "0"}, **JSON).json()
    assert is_saved_reply(first) and first["revision"] == 1
    second = browser.post(url, {"verdict": "fail", "phase": "1", "revision": "1"}, **JSON).json()
    assert is_saved_reply(second) and second["revision"] == 2
    assert browser.get(url).context["revision"] == 2


def test_two_tabs_the_second_save_is_refused_as_changed_elsewhere_then_kept_on_overwrite(judge):
    code = codes(judge)[0]
    url = item_url(judge, code)
    tab_a, tab_b = client_as(judge), client_as(judge)
    shown_a = tab_a.get(url).context["revision"]
    shown_b = tab_b.get(url).context["revision"]
    assert shown_a == shown_b == 0
    saved = tab_a.post(url, {"verdict": "pass", "reason": "from A", "phase": "1",
                             "revision": shown_a}, **JSON)
    assert saved.status_code == 200
    refused = tab_b.post(url, {"verdict": "fail", "reason": "from B", "phase": "1",
                               "revision": shown_b}, **JSON)
    assert refused.status_code == 409
    assert refused.json() == {"saved": False, "error": "changed_elsewhere",
                              "message": CHANGED_ELSEWHERE, "verdict": "pass",
                              "reason": "from A", "revision": 1}
    assert tab_a.get(url).context["reason"] == "from A"
    # "Keep mine": tab B overwrites on purpose.
    kept = tab_b.post(url, {"verdict": "fail", "reason": "from B", "phase": "1",
                            "revision": shown_b, "overwrite": "1"}, **JSON)
    assert is_saved_reply(kept.json()) and kept.json()["revision"] == 2
    page = tab_a.get(url)
    assert (page.context["chosen"], page.context["reason"]) == ("fail", "from B")


def test_the_form_path_shows_a_changed_elsewhere_refusal_with_what_was_typed(judge):
    code = codes(judge)[0]
    url = item_url(judge, code)
    browser = client_as(judge)
    verdict_record(judge=judge, code=code, phase=1, value="pass", reason="other tab", revision=0)
    refused = browser.post(url, {"verdict": "fail", "reason": "mine", "phase": "1",
                                 "revision": "0", "go": "next"})
    assert refused.status_code == 409
    assert CHANGED_ELSEWHERE in visible_text(refused)
    assert refused.context["reason"] == "mine" and refused.context["chosen"] == "fail"
    assert refused.context["revision"] == 1  # the form sent again keeps what was typed


def test_a_reason_typed_before_a_verdict_survives_a_reload_and_answers_nothing(judge):
    code = codes(judge)[0]
    url = item_url(judge, code)
    browser = client_as(judge)
    saved = browser.post(url, {"verdict": "", "reason": "looks off by one", "phase": "1",
                               "seconds_spent": "12", "revision": "0"}, **JSON)
    assert is_saved_reply(saved.json())
    reloaded = browser.get(url)
    assert reloaded.context["reason"] == "looks off by one"
    assert reloaded.context["seconds_spent"] == 12
    assert reloaded.context["chosen"] is None
    assert "looks off by one" in reloaded.content.decode()
    home = browser.get(f"/s/{judge.session.url_id}/")
    assert home.context["answered"] == 0
    assert fresh(judge).phase1_answered == 0
    # The form without a verdict keeps the reason too, and says the item is not answered yet.
    form = browser.post(url, {"verdict": "", "reason": "looks off by two", "phase": "1",
                              "go": "next"})
    assert form.status_code == 400 and "saved as a draft" in visible_text(form)
    assert browser.get(url).context["reason"] == "looks off by two"


# --- Review before each lock ------------------------------------------------------------------------

def test_the_review_lists_unanswered_items_first_and_offers_the_lock_only_when_all_are_answered(judge):
    first, second, *rest = codes(judge)
    browser = client_as(judge)
    review_url = f"/s/{judge.session.url_id}/lock/"
    verdict_record(judge=judge, code=first, phase=1, value="fail", reason="x" * 300,
                   seconds_spent=42.4)
    review = browser.get(review_url)
    assert review.status_code == 200
    text = visible_text(review)
    unanswered = text.index("Not answered yet")
    for code in [second, *rest]:
        assert f'href="/s/{judge.session.url_id}/i/{code}/"' in review.content.decode()
        assert unanswered < text.index(code)
    assert "Lock my" not in text and 'name="confirm"' not in review.content.decode()
    row = next(r for r in review.context["rows"] if r["code"] == first)
    assert (row["verdict_label"], row["seconds_spent"]) == ("Fail", 42.4)
    assert row["reason_start"].startswith("xxx") and len(row["reason_start"]) == 120
    # Once every item is answered, the one primary button locks them.
    answer_all(judge, 1, "pass")
    review = browser.get(review_url)
    total = len(rest) + 2
    assert f"Lock my {total} phase-1 verdicts" in visible_text(review)
    assert re.search(r'<button type="submit" name="confirm" value="yes" class="primary"',
                     review.content.decode())
    assert browser.post(review_url, {"confirm": "yes", "phase": "1"}).status_code == 302
    assert fresh(judge).phase1_locked_at is not None
    phase2 = browser.get(review_url)
    assert "Review, then lock phase 2" in visible_text(phase2)
    assert "Lock my" not in visible_text(phase2)


def test_the_review_shows_kept_verdicts_in_words(judge):
    answer_all(judge, 1, "fail", lock=True)
    judge = fresh(judge)
    for code in codes(judge):
        verdict_record(judge=judge, code=code, phase=2, value="keep")
    rows = client_as(judge).get(f"/s/{judge.session.url_id}/lock/").context["rows"]
    assert {r["verdict_label"] for r in rows} == {"Keep my phase-1 verdict (Fail)"}


# --- Read-only after both locks ---------------------------------------------------------------------

def test_after_both_locks_item_pages_are_read_only_and_a_save_is_a_409_with_the_item(judge):
    answer_all(judge, 1, "fail", lock=True)
    judge = fresh(judge)
    answer_all(judge, 2, "pass", lock=True)
    code = codes(judge)[0]
    browser = client_as(judge)
    page = browser.get(item_url(judge, code))
    assert page.status_code == 200 and page.context["read_only"] is True
    assert "locked both phases" in visible_text(page)
    assert page.context["chosen"] == "pass"
    assert enabled_fields(page) == []
    refused = browser.post(item_url(judge, code), {"verdict": "fail", "phase": "2", "go": "next"})
    assert refused.status_code == 409
    text = visible_text(refused)
    assert "phase 2 is locked" in text and "Not possible now" not in text
    assert refused.context["read_only"] is True and enabled_fields(refused) == []
    autosave = browser.post(item_url(judge, code), {"verdict": "fail", "phase": "2"}, **JSON)
    assert autosave.status_code == 409 and autosave.json()["error"] == "conflict"
    # The items page is the end page: it says how the scorecard will be reached.
    done = browser.get(f"/s/{judge.session.url_id}/")
    assert "You have locked both phases." in visible_text(done)


def test_the_end_page_says_when_and_how_the_scorecard_is_reached(run):
    session = a_session(run, "open", scorecards=True)
    judge = invite_and_join(session).judge
    answer_all(judge, 1, lock=True)
    answer_all(fresh(judge), 2, lock=True)
    text = " ".join(visible_text(client_as(judge).get(f"/s/{session.url_id}/")).split())
    assert "When the host reveals the results, your scorecard appears on this page" in text
    assert "resume link" in text


def test_a_closed_session_shows_items_read_only_and_says_why(judge):
    advance(judge.session, SessionState.CLOSED)
    page = client_as(judge).get(item_url(judge, codes(judge)[0]))
    assert page.context["read_only"] is True and "closed the session" in visible_text(page)


# --- Credentials ------------------------------------------------------------------------------------

def test_the_welcome_page_offers_a_copy_button_for_the_resume_link(client, open_session):
    token = invitation_create(session=open_session, actor="t", name="Ada").join_token
    client.post(f"/join/{token}")
    welcome = client.get(f"/s/{open_session.url_id}/welcome/").content.decode()
    assert re.search(r'<input type="text" id="resume-link" value="http://[^"]+/resume/[^"]+" readonly>',
                     welcome)
    assert '<button type="button" data-copy="resume-link" hidden>Copy the link</button>' in welcome
    assert "judge/copy.js" in welcome


def test_start_judging_opens_the_first_item_still_to_judge(client, open_session):
    """The welcome page's "Start judging" led to the items list, where "Start" had to be found
    again (issue 24 item 6): it opens the first item not yet answered in the judge's phase."""
    token = invitation_create(session=open_session, actor="t", name="Ada").join_token
    client.post(f"/join/{token}")
    judge = open_session.judges.get()
    first, second = codes(judge)[:2]
    start = re.compile(r'<a class="button primary" href="([^"]+)">Start judging</a>')
    welcome = client.get(f"/s/{open_session.url_id}/welcome/").content.decode()
    assert start.search(welcome).group(1) == item_url(judge, first)
    verdict_record(judge=judge, code=first, phase=1, value="pass")
    welcome = client.get(f"/s/{open_session.url_id}/welcome/").content.decode()
    assert start.search(welcome).group(1) == item_url(judge, second)


def test_a_used_join_link_says_you_already_joined_where_it_was_used(client, open_session):
    token = invitation_create(session=open_session, actor="t", name="Ada").join_token
    client.post(f"/join/{token}")
    again = client.post(f"/join/{token}")
    assert again.status_code == 200
    assert "You already joined" in visible_text(again)
    assert f'href="/s/{open_session.url_id}/"' in again.content.decode()
    # Anywhere else, the one refusal (a used link answers like an unknown one), which now says
    # first what someone who already joined needs, with the resume help.
    elsewhere = Client().post(f"/join/{token}")
    assert elsewhere.status_code == 403
    assert "ask the host for a new one" in JOIN_REFUSAL and JOIN_REFUSAL.startswith(
        "This join link works only once. If you already joined with it")
    assert JOIN_REFUSAL in visible_text(elsewhere)
    assert 'href="/resume/"' in elsewhere.content.decode()
    assert elsewhere.content == Client().post("/join/no-such-token").content
    help_page = Client().get("/resume/")
    assert help_page.status_code == 200 and "Reissue my resume link" in visible_text(help_page)


def test_a_judge_reissues_their_resume_link_from_the_items_page(client, open_session):
    admission = invite_and_join(open_session, "Ada")
    judge, old_token = admission.judge, admission.resume_token
    other_device = Client()
    other_device.post(f"/resume/{old_token}")
    assert other_device.get(f"/s/{open_session.url_id}/").status_code == 200
    browser = client_as(judge)
    home = browser.get(f"/s/{open_session.url_id}/")
    assert "Reissue my resume link" in visible_text(home)
    # A stray POST without the button's field reissues nothing.
    assert browser.post(f"/s/{open_session.url_id}/resume-link/").status_code == 400
    reissued = browser.post(f"/s/{open_session.url_id}/resume-link/", {"reissue": "yes"})
    assert reissued["Location"] == f"/s/{open_session.url_id}/"
    shown = browser.get(reissued["Location"])
    new_link = re.search(r'id="resume-link" value="http://[^"]+(/resume/[^"]+)"',
                         shown.content.decode()).group(1)
    assert '<button type="button" data-copy="resume-link" hidden>' in shown.content.decode()
    assert "shown only now" in visible_text(shown)
    assert "/resume/" not in browser.get(f"/s/{open_session.url_id}/").content.decode()
    # This browser stays in; the old link and the browser that used it are out; the new one works.
    assert browser.get(item_url(judge, codes(judge)[0])).status_code == 200
    assert other_device.get(f"/s/{open_session.url_id}/").status_code == 404
    refused = Client().post(f"/resume/{old_token}")
    assert refused.status_code == 403 and RESUME_REFUSAL in visible_text(refused)
    assert Client().post(new_link)["Location"] == f"/s/{open_session.url_id}/"
    event = AuditEvent.objects.filter(action="resume.reissued").latest("pk")
    assert event.actor == f"judge:{judge.pseudonym}"


# --- One vocabulary ---------------------------------------------------------------------------------

def _raw_values_in(response) -> list[str]:
    text = visible_text(response)
    return [raw for raw in RAW_VALUES if raw in text]


def test_no_raw_value_on_any_judge_page_of_a_findings_session(run):
    session = a_session(run, "open", kind="findings", scorecards=True, mark_disagreement=True)
    judge = invite_and_join(session, "Finn").judge
    browser = client_as(judge)
    url_id = session.url_id
    pages = [browser.get(f"/s/{url_id}/"), browser.get(item_url(judge, codes(judge)[0])),
             browser.get(f"/s/{url_id}/lock/")]
    answer_all(judge, 1, "false_alarm", reason="not a bug", lock=True)
    judge = fresh(judge)
    phase2 = browser.get(item_url(judge, codes(judge)[0]))
    assert "Proposed verdict: Real" in " ".join(visible_text(phase2).split())
    assert phase2.context["item"].proposed_disagrees is True
    pages += [phase2, browser.get(f"/s/{url_id}/lock/"), browser.get(f"/s/{url_id}/")]
    answer_all(judge, 2, "keep", lock=True)
    pages.append(browser.get(item_url(judge, codes(judge)[0])))
    pages.append(browser.get(f"/s/{url_id}/"))
    advance(Session.objects.get(pk=session.pk), SessionState.REVEALED)
    pages.append(browser.get(f"/s/{url_id}/scorecard/"))
    for page in pages:
        assert page.status_code == 200
        assert _raw_values_in(page) == [], page.request["PATH_INFO"]


def test_no_raw_value_on_any_judge_page_of_a_copies_session(run):
    session = a_session(run, "open", scorecards=True)
    judge = invite_and_join(session, "Ada").judge
    browser = client_as(judge)
    url_id = session.url_id
    answer_all(judge, 1, "fail", lock=True)
    judge = fresh(judge)
    pages = [browser.get(item_url(judge, code)) for code in codes(judge)]
    answer_all(judge, 2, "keep")
    phase_lock(judge=fresh(judge), phase=2)
    advance(Session.objects.get(pk=session.pk), SessionState.REVEALED)
    card = browser.get(f"/s/{url_id}/scorecard/")
    pages.append(card)
    for page in pages:
        assert page.status_code == 200
        assert _raw_values_in(page) == [], page.request["PATH_INFO"]
    text = " ".join(visible_text(card).split())
    assert "Has a seeded defect Note: subtracts" in text  # the copy's defect note, in words
    assert "Fail (kept)" in text


@pytest.mark.parametrize("mark", [False, True])
def test_the_phase_2_page_marks_disagreeing_rows_only_when_the_session_does(run, mark):
    session = a_session(run, "open", mark_disagreement=mark)
    judge = invite_and_join(session, "Ada").judge
    answer_all(judge, 1, "pass", lock=True)
    judge = fresh(judge)
    code = judge.assignments.get(item__copy__bundle_id="c1").code  # r1 pass, r2 fail
    page = client_as(judge).get(item_url(judge, code))
    assert page.context["mark_disagreement"] is mark
    assert [row.disagrees for row in page.context["item"].reviewer_rows] == [False, mark]
    assert ('class="disagrees"' in page.content.decode()) is mark


# --- The host's settings ----------------------------------------------------------------------------

def test_the_host_sets_both_settings_in_the_draft_form(host, draft):
    browser = client_as(host)
    form = browser.get(f"/host/sessions/{draft.pk}/").content.decode()
    assert 'name="draft-advance_on_key"' in form and 'name="draft-mark_disagreement"' in form
    assert "freezes with the protocol" in form
    saved = browser.post(f"/host/sessions/{draft.pk}/edit", {
        "draft-rubric": draft.rubric, "draft-preregistration": draft.preregistration,
        "draft-items_per_judge": "",
        "draft-reviewer_display": "letters", "draft-mark_disagreement": "on"})
    assert saved.status_code == 303, saved.content[:500]
    draft = Session.objects.get(pk=draft.pk)
    assert (draft.advance_on_key, draft.mark_disagreement) == (False, True)
    event = AuditEvent.objects.filter(action="session.updated").latest("pk")
    assert sorted(event.details["fields"]) == ["advance_on_key", "mark_disagreement"]


def test_the_shortest_time_shown_before_a_verdict_counts_is_a_draft_setting_frozen_when_not_300(
        host, draft):
    """Issue 24 item 1: a verdict key or click counts only once the copy has been shown for the
    session's minimum. The host sets it in the draft form (empty keeps 300); the service bounds
    it; it freezes with the protocol, named only when not the default (so every protocol frozen
    before, and its hash, stays as it was); the judge's page carries it."""
    browser = client_as(host)
    form = browser.get(f"/host/sessions/{draft.pk}/").content.decode()
    assert 'name="draft-verdict_min_shown_ms"' in form and 'value="300"' in form
    fields = {"draft-rubric": draft.rubric, "draft-preregistration": draft.preregistration,
              "draft-items_per_judge": "", "draft-reviewer_display": "letters",
              "draft-advance_on_key": "on"}
    edit = f"/host/sessions/{draft.pk}/edit"
    refused = browser.post(edit, {**fields, "draft-verdict_min_shown_ms": "6000"})
    assert refused.status_code == 400
    assert "Ensure this value is less than or equal to 5000." in html.unescape(refused.content.decode())
    assert Session.objects.get(pk=draft.pk).verdict_min_shown_ms == 300
    assert "verdict_min_shown_ms" not in protocol_of(draft)

    saved = browser.post(edit, {**fields, "draft-verdict_min_shown_ms": "450"})
    assert saved.status_code == 303, saved.content[:500]
    draft = Session.objects.get(pk=draft.pk)
    assert draft.verdict_min_shown_ms == 450
    assert AuditEvent.objects.filter(action="session.updated").latest("pk").details["fields"] == [
        "verdict_min_shown_ms"]
    for wrong, why in ((-1, "-1 ms is outside 0..5000"), (5001, "5001 ms is outside 0..5000"),
                       (True, "expected a whole number of milliseconds"),
                       ("300", "expected a whole number of milliseconds")):
        with pytest.raises(Invalid) as refusal:
            session_update_draft(session=draft, actor="test", verdict_min_shown_ms=wrong)
        assert why in str(refusal.value)

    opened = advance(draft, "open")
    assert opened.protocol["verdict_min_shown_ms"] == 450
    assert "450 ms" in browser.get(f"/host/sessions/{draft.pk}/").content.decode()
    judge = invite_and_join(opened, name="Careful Judge").judge
    page = client_as(judge).get(item_url(judge, codes(judge)[0]))
    assert 'data-min-shown-ms="450"' in page.content.decode()


def test_the_last_items_button_goes_where_its_key_goes_to_the_review(judge):
    """On the last item the key led to the review and the button to the items list (issue 24
    item 6): both lead to the review, where the lock is."""
    last = codes(judge)[-1]
    browser = client_as(judge)
    page = browser.get(item_url(judge, last)).content.decode()
    assert '<button type="submit" name="go" value="review" class="primary">Save and review</button>' in page
    assert f'data-next-url="/s/{judge.session.url_id}/lock/"' in page
    posted = browser.post(item_url(judge, last), {"verdict": "pass", "phase": "1", "reason": "",
                                                  "seconds_spent": "4", "go": "review"})
    assert posted.status_code == 302 and posted["Location"] == f"/s/{judge.session.url_id}/lock/"


# --- One answered count ---------------------------------------------------------------------------

def test_the_items_page_the_judges_socket_and_the_hosts_row_give_one_answered_count(judge):
    """A judge's answered count has one definition (Judge.answered, kept by item_save in the
    transaction that adds the verdict); the items page, the judge's socket (whose count the page
    compares with its own to know it is stale) and the host's dashboard row read it, and it is the
    number of verdicts of the phase, however the items were saved."""
    browser = client_as(judge)
    first, second, third, *rest = codes(judge)

    def counts(phase):
        page = browser.get(f"/s/{judge.session.url_id}/").context["answered"]
        socket = judge_live_state(fresh(judge))["answered"]
        _, (row,) = dashboard_judges(judge.session_id, [judge.pk])
        host = live_row(row, len(codes(judge)))[f"answered{phase}"]
        stored = Verdict.objects.filter(assignment__judge=judge, phase=phase).count()
        return page, socket, host, stored

    assert counts(1) == (0, 0, 0, 0)
    item_url_first = item_url(judge, first)
    browser.post(item_url_first, {"verdict": "", "reason": "a draft", "phase": "1",
                                  "revision": "0"}, **JSON)
    assert counts(1) == (0, 0, 0, 0)
    verdict_record(judge=judge, code=first, phase=1, value="fail", revision=1)
    verdict_record(judge=judge, code=first, phase=1, value="pass", revision=2)  # a change, not an answer
    verdict_record(judge=judge, code=second, phase=1, value="pass")
    assert counts(1) == (2, 2, 2, 2)
    for code in [third, *rest]:
        verdict_record(judge=judge, code=code, phase=1, value="fail")
    phase_lock(judge=fresh(judge), phase=1)
    assert counts(2) == (0, 0, 0, 0)
    verdict_record(judge=fresh(judge), code=second, phase=2, value="keep")
    assert counts(2) == (1, 1, 1, 1)
