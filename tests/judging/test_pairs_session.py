"""Pairs sessions (issue 31 items 1, 2 and 6): two builders' copies of one task side by side;
every pair or a balanced sample; the sides drawn per judge and pair from the order seed and
committed with the order; each copy its own code per judge; a pair's code frames nothing; the
judge's answers left / right / tie / both bad; phase 2 beside the reviewers' rows and the
findings raised on each copy; the blinding check on both copies."""

import gzip
import hashlib
import json
import math
import re
from collections import Counter
from statistics import NormalDist

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from blindjudge.errors import Invalid
from content.commitments import commitment_sha256
from content.draws import order_key, pair_swapped
from judging.enums import SessionKind, SessionState
from judging.models import Assignment, CopyRender, Item
from judging.selectors.judge import judge_item
from judging.services import item_save, phase_lock, session_create
from tests.worlds import a_run, a_session, client_as, codes, invite_and_join, make_run2_bundle

# make_run2_bundle: tasks t-add (c1 b1, c2 b2, c3 b3) and t-sub (c4 b1, c5 b2, c6 b3).
ALL_PAIRS = ["pair:c1|c2", "pair:c1|c3", "pair:c2|c3", "pair:c4|c5", "pair:c4|c6", "pair:c5|c6"]


@pytest.fixture
def run2(host):
    return a_run(host, make_run2_bundle())


def pairs(run, state=SessionState.OPEN, **options):
    return a_session(run, state, kind=SessionKind.PAIRS, **options)


def keys(session):
    return sorted(Item.objects.filter(session=session).values_list("key", flat=True))


def test_the_design_all_holds_every_pair_of_builders_on_every_task(run2):
    session = pairs(run2, SessionState.DRAFT)
    assert keys(session) == ALL_PAIRS
    for item in Item.objects.filter(session=session).select_related(
            "copy__builder", "pair_copy__builder", "task"):
        assert item.copy.task_id == item.pair_copy.task_id == item.task_id
        # The first copy is the earlier builder's (import order): the key says so too.
        assert item.copy.builder.position < item.pair_copy.builder.position
        assert item.key == f"pair:{item.copy.bundle_id}|{item.pair_copy.bundle_id}"
    assert session.pairs_design == {"by": "all", "pairs": 6} and session.pairs_seed == ""


@pytest.mark.parametrize("setting, words", [
    ({"by_task": True}, "by task"), ({"scorecards": True}, "scorecards"),
    ({"mark_disagreement": True}, "marking disagreements"),
    ({"pairs_count": 3}, 'design "all" takes every pair'),
    ({"pairs_design": "some"}, 'design "some"'),
])
def test_a_pairs_session_refuses_what_does_not_apply_to_it(run2, setting, words):
    with pytest.raises(Invalid, match=re.escape(words)):
        session_create(run=run2, kind=SessionKind.PAIRS, actor="test", **setting)


def test_only_a_pairs_session_takes_a_design(run2):
    with pytest.raises(Invalid, match="only a pairs session"):
        session_create(run=run2, kind=SessionKind.COPIES, actor="test", pairs_design="all")


def test_a_run_without_two_builders_on_a_task_has_no_pairs(host):
    bundle = make_run2_bundle()
    bundle["copies"] = [c for c in bundle["copies"] if c["builder"] == "b1"]
    bundle["reviews"], bundle["findings"] = [], []
    run = a_run(host, bundle)
    with pytest.raises(Invalid, match="no task with copies by two builders"):
        session_create(run=run, kind=SessionKind.PAIRS, actor="test")


def test_the_protocol_freezes_the_design_and_both_copies_hashes(run2):
    session = pairs(run2)
    assert session.protocol["kind"] == "pairs"
    assert session.protocol["pairs_design"] == {"by": "all", "pairs": 6}
    items = {i["key"]: i for i in session.protocol["items"]}
    c1, c2 = (run2.copies.get(bundle_id=b) for b in ("c1", "c2"))
    assert items["pair:c1|c2"]["copy_sha256"] == c1.content_sha256
    assert items["pair:c1|c2"]["second_copy_sha256"] == c2.content_sha256
    # Both copies of every pair are rendered at opening (one frame per copy, none twice).
    assert CopyRender.objects.filter(session=session).count() == 6


def test_sides_are_drawn_per_judge_and_pair_and_committed_with_the_order(run2):
    session = pairs(run2, draw_seed="ab" * 32)
    swaps = []
    for name in ("One", "Two", "Three"):
        judge = invite_and_join(session, name).judge
        rows = list(Assignment.objects.filter(judge=judge).select_related(
            "item__copy__builder", "item__pair_copy__builder").order_by("position"))
        assert len(rows) == 6
        for a in rows:
            assert a.swapped == pair_swapped(judge.order_seed, a.item.key)
            assert a.order_key == order_key(judge.order_seed, a.item.key)
        swaps.append(tuple(a.swapped for a in sorted(rows, key=lambda a: a.item.key)))
        # Each copy one code for this judge, whichever pair holds it; no code used twice.
        by_copy = {}
        for a in rows:
            for copy_id, code in ((a.item.copy_id, a.first_code), (a.item.pair_copy_id,
                                                                    a.second_code)):
                assert by_copy.setdefault(copy_id, code) == code
        every = [a.code for a in rows] + sorted(set(by_copy.values()))
        assert len(every) == len(set(every)) == 6 + 6
        # The commitment covers the sides and the copies' codes.
        mapping = [{"position": a.position, "code": a.code, "item": a.item.key,
                    "copy": a.item.copy.bundle_id, "builder": a.item.copy.builder.bundle_id,
                    "second_copy": a.item.pair_copy.bundle_id,
                    "second_builder": a.item.pair_copy.builder.bundle_id,
                    "swapped": a.swapped, "first_code": a.first_code,
                    "second_code": a.second_code} for a in rows]
        assert commitment_sha256(session_url_id=session.url_id, pseudonym=judge.pseudonym,
                                 order_seed=judge.order_seed, salt=judge.commitment_salt,
                                 assignments=mapping) == judge.commitment_sha256
        flipped = [{**m, "swapped": not m["swapped"]} if m["position"] == 1 else m
                   for m in mapping]
        assert commitment_sha256(session_url_id=session.url_id, pseudonym=judge.pseudonym,
                                 order_seed=judge.order_seed, salt=judge.commitment_salt,
                                 assignments=flipped) != judge.commitment_sha256
    # Drawn, not fixed: three judges do not all see every pair the same way round.
    assert len(set(swaps)) > 1


def frame_of(client, session, code):
    response = client.get(reverse("judge_frame", kwargs={"url_id": session.url_id, "code": code}))
    if response.status_code != 200:
        return response.status_code
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return gzip.decompress(body) if response.get("Content-Encoding") == "gzip" else body


def test_each_side_frames_its_own_copy_and_a_pair_code_frames_nothing(run2):
    session = pairs(run2)
    judge = invite_and_join(session).judge
    client = client_as(judge)
    for a in Assignment.objects.filter(judge=judge).select_related("item"):
        view = judge_item(judge, a.code)
        left_copy, right_copy = ((a.item.pair_copy_id, a.item.copy_id) if a.swapped
                                 else (a.item.copy_id, a.item.pair_copy_id))
        stored = {r.copy_id: r.frame.encode("utf-8") for r in CopyRender.objects.filter(
            session=session, copy_id__in=(left_copy, right_copy))}
        assert frame_of(client, session, view.pair["left"]["code"]) == stored[left_copy]
        assert frame_of(client, session, view.pair["right"]["code"]) == stored[right_copy]
        assert view.pair["left"]["code"] == (a.second_code if a.swapped else a.first_code)
        assert frame_of(client, session, a.code) == 404


def test_answers_are_preferences_and_a_verdict_of_another_kind_is_refused(run2):
    session = pairs(run2)
    judge = invite_and_join(session).judge
    first, *rest = codes(judge)
    with pytest.raises(Invalid):
        item_save(judge=judge, code=first, phase=1, value="pass")
    for code, value in zip(codes(judge), ["left", "right", "tie", "both_bad", "left", "right"],
                           strict=True):
        item_save(judge=judge, code=code, phase=1, value=value)
    phase_lock(judge=judge, phase=1)


def test_phase_one_shows_no_reviewer_and_phase_two_each_copys_rows_and_findings(run2):
    session = pairs(run2)
    judge = invite_and_join(session).judge
    c1, c2 = (run2.copies.get(bundle_id=b).pk for b in ("c1", "c2"))
    a = Assignment.objects.get(judge=judge, item__key="pair:c1|c2")
    view = judge_item(judge, a.code)
    assert view.pair["left"]["reviewer_rows"] == view.pair["right"]["reviewer_rows"] == []
    page = client_as(judge).get(reverse("judge_item", kwargs={"url_id": session.url_id,
                                                              "code": a.code}))
    html = page.content.decode()
    assert page.status_code == 200
    assert html.count('<iframe class="copy-frame" sandbox') == 2
    assert "What the model reviewers said" not in html and "subtracts" not in html
    for code in codes(judge):
        item_save(judge=judge, code=code, phase=1, value="tie")
    phase_lock(judge=judge, phase=1)
    judge.refresh_from_db()
    view = judge_item(judge, a.code)
    by_copy = {c1: view.pair["right" if a.swapped else "left"],
               c2: view.pair["left" if a.swapped else "right"]}
    # Clean reviews only: r1 passed c1 ("fine"), r2 gave no verdict; r1 and r2 failed c2.
    assert [(r.label, r.verdict) for r in by_copy[c1]["reviewer_rows"]] == [
        ("Reviewer A", "pass"), ("Reviewer B", "abstain")]
    assert [(r.label, r.verdict) for r in by_copy[c2]["reviewer_rows"]] == [
        ("Reviewer A", "fail"), ("Reviewer B", "fail")]
    # f1 on c2 was raised by r2 cleanly (r1 only when told "PASS": not shown); f2 on c1 by r1.
    assert [f["raised_by"] for f in by_copy[c2]["findings"]] == [["Reviewer B"]]
    assert "uses minus" in by_copy[c2]["findings"][0]["html"]
    assert [f["raised_by"] for f in by_copy[c1]["findings"]] == [["Reviewer A"]]
    html = client_as(judge).get(reverse("judge_item", kwargs={
        "url_id": session.url_id, "code": a.code})).content.decode()
    assert "What the model reviewers said of the left copy" in html
    assert "uses minus" in html and "told-pass-reason-marker" not in html
    for name in ("gpt-4o-2024-08-06", "claude-3-5-sonnet", "gemini", "b1", "b2", "c1", "c2"):
        assert not re.search(rf"\b{re.escape(name)}\b", html), name


@pytest.mark.parametrize("state", [SessionState.DRAFT, SessionState.OPEN])
def test_a_host_previews_pairs_as_a_judge_sees_them(run2, state):
    session = pairs(run2, state)
    client = client_as(run2.host)
    welcome = client.get(f"/host/sessions/{session.pk}/preview/")["Location"]
    root = re.match(r"^(/host/sessions/\d+/preview/[0-9a-f]{16})/1/", welcome).group(1)
    items = client.get(f"{root}/1/").content.decode()
    paths = list(dict.fromkeys(re.findall(rf'href="({re.escape(root)}/1/i/[A-Z0-9]+/)"', items)))
    assert len(paths) == 6
    stored = {r.frame.encode("utf-8") for r in CopyRender.objects.filter(session=session)}
    for phase in (1, 2):
        for path in paths:
            path = path.replace("/1/i/", f"/{phase}/i/")
            page = client.get(path)
            html = page.content.decode()
            assert page.status_code == 200 and html.count('<iframe class="copy-frame"') == 2
            sources = re.findall(r'<iframe class="copy-frame" sandbox src="([^"]+)"', html)
            bodies = [frame_body(client.get(src)) for src in sources]
            assert bodies[0] != bodies[1]
            if state == SessionState.OPEN:
                assert set(bodies) <= stored
            assert client.get(path + "frame").status_code == 404  # a pair's code frames nothing
            assert ("What the model reviewers said of the left copy" in html) == (phase == 2)


def frame_body(response) -> bytes:
    assert response.status_code == 200
    return gzip.decompress(response.content) if response.get("Content-Encoding") == "gzip" \
        else response.content


def test_a_balanced_sample_takes_each_builder_pair_equally_often_with_a_committed_seed(run2):
    session = pairs(run2, SessionState.OPEN, pairs_design="balanced", pairs_count=3,
                    draw_seed="cd" * 32)
    again = pairs(run2, SessionState.DRAFT, pairs_design="balanced", pairs_count=3,
                  draw_seed="cd" * 32)
    assert keys(session) == keys(again)  # a pinned draw replays
    items = list(Item.objects.filter(session=session).select_related(
        "copy__builder", "pair_copy__builder", "task"))
    builder_pairs = sorted((i.copy.builder.bundle_id, i.pair_copy.builder.bundle_id)
                           for i in items)
    assert builder_pairs == [("b1", "b2"), ("b1", "b3"), ("b2", "b3")]
    per_task = sorted(Counter(i.task.bundle_id for i in items).values())
    assert per_task == [1, 2]
    assert session.protocol["pairs_design"] == {
        "by": "balanced", "pairs": 3,
        "seed_sha256": hashlib.sha256(bytes.fromhex(session.pairs_seed)).hexdigest()}
    with pytest.raises(Invalid, match="at most that many"):
        session_create(run=run2, kind=SessionKind.PAIRS, actor="test", pairs_design="balanced",
                       pairs_count=7)
    with pytest.raises(Invalid, match="whole number of pairs"):
        session_create(run=run2, kind=SessionKind.PAIRS, actor="test", pairs_design="balanced")


def test_the_planner_says_what_a_target_needs_on_the_run(run2, capsys):
    call_command("plan_pairs", str(run2.pk), "--json")
    plan = json.loads(capsys.readouterr().out)
    # run2: 3 builders, 2 tasks, 6 pairs, 3 of one good and one defective copy (c1|c2, c2|c3,
    # c4|c5). ±0.10 on a difference in win rate: D z² / h² per builder pair, D = 1.5.
    z = NormalDist().inv_cdf(0.975)
    per_pair = math.ceil(1.5 * z * z / 0.01)
    assert (plan["offered_pairs"], plan["truth_differing_pairs"]) == (6, 3)
    assert plan["comparisons"] == per_pair * 3
    assert plan["judges"] == math.ceil(per_pair * 3 / 6)  # six pairs each, the most there are
    call_command("plan_pairs", str(run2.pk), "--target", "accuracy", "--half-width", "0.2",
                 "--json")
    plan = json.loads(capsys.readouterr().out)
    needed = math.ceil(1.5 * z * z * 0.25 / 0.04)
    assert plan["comparisons"] == math.ceil(needed / 0.5)
    with pytest.raises(CommandError, match="half_width"):
        call_command("plan_pairs", str(run2.pk), "--half-width", "1.5")
