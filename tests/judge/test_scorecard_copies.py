"""After the reveal, where the host gave scorecards, each code on a judge's scorecard opens the copy
they judged under it (issue 16, item 6): a card page with the known answer, the defect note and
their verdicts in words, and the copy as the very bytes the judging frame served, with its headers.
Anywhere else (before the reveal, without scorecards, another person, another judge's code) the
same 404."""

import gzip
import re

import pytest
from django.test import Client

from judging.models import CopyRender
from judging.selectors.host import blinding_check
from judging.services import redactions_accept
from tests.judge.test_stored_renders import csp
from tests.worlds import a_run, a_session, advance, answer_all, client_as, codes, invite_and_join, make_bundle


def card_url(session, code, frame=False):
    return f"/s/{session.url_id}/card/{code}/" + ("frame" if frame else "")


def judged_and_revealed(host, *, scorecards=True):
    """Two judges who locked phase 1 (the first failing every copy); the session revealed."""
    session = a_session(a_run(host), "open", scorecards=scorecards)
    judge = invite_and_join(session, "Reader").judge
    other = invite_and_join(session, "Other").judge
    answer_all(judge, value="fail", lock=True)
    answer_all(other, value="pass", lock=True)
    return session, judge, other


def stored_frame(session, judge, code) -> bytes:
    copy_id = judge.assignments.get(code=code).item.copy_id
    return bytes(CopyRender.objects.get(session=session, copy_id=copy_id).frame_gzip)


@pytest.mark.django_db
def test_each_code_on_the_scorecard_links_to_its_own_card_page(host):
    session, judge, _ = judged_and_revealed(host)
    advance(session, "revealed")
    page = client_as(judge).get(f"/s/{session.url_id}/scorecard/").content.decode()
    linked = re.findall(rf'<a href="/s/{session.url_id}/card/([A-Z0-9]+)/">', page)
    assert linked == codes(judge)


@pytest.mark.django_db
def test_the_card_page_shows_the_code_the_answer_the_note_and_the_verdicts_in_words(host):
    session, judge, _ = judged_and_revealed(host)
    advance(session, "revealed")
    client = client_as(judge)
    seen_defect = False
    for code in codes(judge):
        copy = judge.assignments.get(code=code).item.copy
        page = client.get(card_url(session, code))
        assert page.status_code == 200
        body = page.content.decode()
        assert f'Code <span class="code">{code}</span>' in body
        assert "Your phase-1 verdict</dt><dd>Fail" in body
        expected = {"known_good": "Good (no defect known)", "seeded_defect": "Has a seeded defect",
                    "tests_fail": "Fails its tests", "tests_pass": "Passes its tests",
                    "unknown": "Not known"}
        assert f"Known answer</dt><dd>{expected[copy.truth]}" in body
        assert f">{copy.truth}<" not in body  # the words, never the stored value
        if copy.defect:
            seen_defect = True
            assert f'<dd class="defect-note">{copy.defect}</dd>' in body
        # The copy in a sandboxed frame from the sibling URL; nothing of it inline.
        frame = re.search(r'<iframe class="copy-frame boxed" sandbox src="([^"]+)"', body)
        assert frame and frame.group(1) == card_url(session, code, frame=True)
        assert "frame_gzip" not in body
        # No builder id (short ones like "b2" can sit inside a random token: whole words only;
        # the leak crawl, tests/judge/test_leaks.py, scans every form of every builder value).
        for name in judge.session.run.builders.values_list("bundle_id", flat=True):
            assert not re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", body), name
    assert seen_defect, "the world has a seeded defect with a note"


@pytest.mark.django_db
def test_the_card_frame_is_the_stored_bytes_with_the_judging_frames_headers(host):
    session, judge, _ = judged_and_revealed(host)
    code = codes(judge)[0]
    client = client_as(judge)
    judging = client.get(f"/s/{session.url_id}/i/{code}/frame", HTTP_ACCEPT_ENCODING="gzip")
    advance(session, "revealed")
    stored = stored_frame(session, judge, code)
    browser = client.get(card_url(session, code, frame=True), HTTP_ACCEPT_ENCODING="gzip, br")
    assert browser.status_code == 200
    assert browser.content == stored == judging.content
    assert browser["Content-Encoding"] == "gzip" and "Accept-Encoding" in browser["Vary"]
    for header in ("Content-Security-Policy", "Referrer-Policy", "Cross-Origin-Resource-Policy",
                   "X-Frame-Options", "Content-Type", "Cache-Control"):
        assert browser[header] == judging[header], header
    assert csp(browser)["sandbox"] == [] and csp(browser)["default-src"] == ["'none'"]
    assert browser["X-Frame-Options"] == "SAMEORIGIN"
    plain = client.get(card_url(session, code, frame=True), HTTP_ACCEPT_ENCODING="identity")
    assert "Content-Encoding" not in plain and plain.content == gzip.decompress(stored)


@pytest.mark.django_db
def test_everyone_but_the_judge_and_other_judges_codes_get_the_same_404(host):
    session, judge, other = judged_and_revealed(host)
    advance(session, "revealed")
    nonexistent = Client().get("/s/zzzz/card/ZZZZ/")
    assert nonexistent.status_code == 404
    own = codes(judge)[0]
    not_own = next(c for c in codes(other) if c not in codes(judge))
    for who, code in ((Client(), own), (client_as(other), own), (client_as(host), own),
                      (client_as(judge), not_own), (client_as(judge), "ZZZZ")):
        for frame in (False, True):
            response = who.get(card_url(session, code, frame=frame))
            assert response.status_code == 404, (code, frame)
            assert response.content == nonexistent.content


@pytest.mark.django_db
def test_before_the_reveal_and_without_scorecards_the_card_pages_are_404(host):
    session, judge, _ = judged_and_revealed(host)
    client = client_as(judge)
    code = codes(judge)[0]
    for state in ("open", "closed"):
        advance(session, state)
        assert client.get(card_url(session, code)).status_code == 404, state
        assert client.get(card_url(session, code, frame=True)).status_code == 404, state
    plain, plain_judge, _ = judged_and_revealed(host, scorecards=False)
    advance(plain, "revealed")
    plain_client = client_as(plain_judge)
    assert plain_client.get(f"/s/{plain.url_id}/scorecard/").status_code == 404
    for frame in (False, True):
        assert plain_client.get(card_url(plain, codes(plain_judge)[0], frame=frame)).status_code == 404


@pytest.mark.django_db
def test_a_defect_note_naming_its_builder_is_flagged_and_shown_redacted_on_the_scorecard(host):
    """A defect note naming its builder reached the judge's scorecard and card page unredacted,
    and the blinding check never read defect notes (issue 24 item 9)."""
    bundle = make_bundle()
    [seeded] = [c for c in bundle["copies"] if c.get("defect")]
    builder = next(b for b in bundle["builders"] if b["id"] == seeded["builder"])
    seeded["defect"] = f"Off by one; {builder['model']} does this in every copy"
    draft = a_session(a_run(host, bundle), "draft", scorecards=True)
    check = blinding_check(draft)
    [row] = [c for c in check["copies"] if c["copy"] == seeded["id"]]
    assert [m["where"] for m in row["matches"] if m["matched"] == builder["model"]] == [
        "defect note (on scorecards)"]
    # Without scorecards no judge ever reads the note: the check does not list it.
    no_cards = a_session(a_run(host, bundle), "draft", scorecards=False)
    [row] = [c for c in blinding_check(no_cards)["copies"] if c["copy"] == seeded["id"]]
    assert "defect note (on scorecards)" not in [m["where"] for m in row["matches"]]

    redactions_accept(session=draft, patterns=[builder["model"]], actor="test")
    session = advance(draft, "open")
    judge = invite_and_join(session, "Reader").judge
    answer_all(judge, value="fail", lock=True)
    advance(session, "revealed")
    client = client_as(judge)
    code = judge.assignments.get(item__copy__bundle_id=seeded["id"]).code
    for path in (f"/s/{session.url_id}/scorecard/", card_url(session, code)):
        body = client.get(path).content.decode()
        assert "Off by one;" in body and "does this in every copy" in body, path
        assert builder["model"] not in body, path
        assert "[redacted]" in body, path


@pytest.mark.django_db
def test_the_scores_read_as_the_report_s_percentages_never_decimals(host):
    """The scorecard gave "2 of 2 (95% interval 0.34–1.00)" where the report gives the same rate
    as "100% (2/2) [34–100%]" (issue 28)."""
    session, judge, _ = judged_and_revealed(host)
    advance(session, "revealed")
    page = client_as(judge).get(f"/s/{session.url_id}/scorecard/").content.decode()
    scores = page[page.index("<h2>Scores</h2>"):page.index("<h2>Your verdicts</h2>")]
    # Failing every copy: both defective copies caught (Wilson 2/2: 0.3424–1), none of the three
    # good ones passed (Wilson 0/3: 0–0.5615); phase 2 never locked, nothing to score.
    assert re.findall(r"<td>([^<]*)</td>", scores) == [
        "100% (2/2) [34–100%]", "0% (0/3) [0–56%]", "— (0/0)", "— (0/0)"]
    assert not re.search(r"\d\.\d", scores)
