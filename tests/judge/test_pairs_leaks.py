"""Pairs sessions leak nothing (issue 31 item 6; docs/threats.md case 14e).

A pair is two copies of one task by two builders. Which of them is the pair's *first* is the
earlier builder's in import order (Item.copy; the second is Item.pair_copy), and its key names
them in that order ("pair:<first>|<second>"). A judge must never learn it: in a run of two
builders every pair's first copy is the same builder's, so knowing which copy is first on any
pair would sort every copy the judge sees by builder, across tasks. The side each copy is on is
drawn per judge and pair (Assignment.swapped, content.draws.pair_swapped: one bit of HMAC(order
seed, "side:" + key)), each copy has its own code per judge, and the pair's own code frames
nothing.

What this module holds, beside the canary crawl of tests/judge/test_leaks.py run on a pairs
session (same crawl, same scanner, same states):

- The page of a pair does not depend on which copy is first (the Plain text control among
  others): a direct check on every pair with one prose copy, and the twin below.
- Twins whose builders are imported in reverse order (so every pair's first and second copies
  swap, and every key is the mirror of the other twin's), with different builder names,
  families, ids and truths, give the judge byte-identical responses *for the same drawn view*.
  What a twin can hold fixed: with one seed, the two twins cannot draw the same order and sides,
  because both HMACs take the key, and the key names the copies in builder order; so a plain twin
  differs by construction (shown below), harmlessly, since the seed is secret until the reveal
  and each side is a fair coin whichever copy is first (case 13, `test_rules_and_draws.py`).
  What is invariant is everything given the draw: the reversed twin's draw is conjugated (each
  mirrored key gets the position its mirror got in the other twin, and the opposite side bit), so
  the judge is shown the same copy on the same side at the same place under the same codes;
  then nothing else may differ. The protocol hash is set aside by name: its document holds the
  items' keys (with the allocation seed, which no judge knows), and it is shown to differ exactly
  by the mirrored keys and swapped copy hashes.
- The blinding check reads the second copy of every pair.
"""

import re
import statistics

import pytest
from django.db import connection
from django.http import HttpResponse
from django.test import Client, override_settings
from django.urls import reverse

import judging.services.admission as admission
from accounts.models import Judge
from blindjudge.errors import Invalid
from content.draws import order_key
from judging.blinding import blinding_check
from judging.enums import SessionKind
from judging.models import Assignment, CopyRender, Review, Verdict
from judging.selectors.judge import judge_frame
from judging.services import phase_lock, redactions_accept, session_open
from tests.judge.test_leaks import (
    ADJ_CONDITIONS,
    ALL_JUDGE_ROUTES,
    JUDGE_NAMES,
    build_world,
    canary_bundle,
    codes_of,
    content_canaries,
    copy_codes_of,
    crawl_world,
    drive,
    first_difference,
    id_canaries,
    link_problems,
    move_ids_to_distinctive_ranges,
    people_canaries,
    phase2_canaries,
    restore_ids,
    twin_transcript,
    unfillable_routes,
    unsafe_page_fires_on_every_canary,
    unsafe_pages,
)
from tests.support.urls_unsafe import planted_values
from tests.support.verdicts import verdict_record
from tests.worlds import a_host, a_run, a_session, client_as, invite_and_join

pytestmark = pytest.mark.django_db

# A pairs session has no scorecards and collects no task flags (judging.services.sessions).
PAIRS_ROUTES = ALL_JUDGE_ROUTES - {"judge_scorecard", "judge_card", "judge_card_frame",
                                   "judge_task_flag"}


@pytest.fixture
def canary_host(db):
    saved = move_ids_to_distinctive_ranges()
    yield a_host("canaryhost")
    restore_ids(saved)


def pairs_bundle(**options) -> dict:
    """The run/2 canary bundle of tests/judge/test_leaks.py (`canary_bundle(adjudication=True)`):
    one task, three builders of two copies each (so twelve pairs, each builder paired with each
    other on copies of every format), two reviewer conditions named by canaries, a review and a
    finding (fCANARYF3) given only under the told condition; every host-only value a canary."""
    return canary_bundle(adjudication=True, **options)

PLAIN_TEXT_TOGGLE = b'data-frame-toggle="text"'


def item_page(client, session, code) -> bytes:
    response = client.get(reverse("judge_item", kwargs={"url_id": session.url_id, "code": code}))
    assert response.status_code == 200, response.status_code
    return response.content


def test_a_pairs_page_does_not_tell_which_copy_is_first_by_its_plain_text_control():
    """The "Plain text" control is offered for a prose (markdown) frame. On a pair whose copies
    are one prose and one not, whether it is offered must not follow which copy is the pair's
    first: it is offered on every such pair (one of its frames has a plain-text view), whichever
    side the prose copy is on and whichever copy is first. Were it read from the pair's first
    copy alone, its presence would tell the judge whether the prose copy is the earlier builder's.

    The canary bundle's copies: b1 text, text; b2 markdown, diff; b3 text, markdown."""
    run = a_run(a_host("pairshost"), canary_bundle())
    session = a_session(run, "open", kind=SessionKind.PAIRS)
    judge = invite_and_join(session, name="Pat").judge
    client = client_as(judge)
    prose = dict(CopyRender.objects.filter(session=session).values_list("copy_id", "prose"))
    seen = {}
    for a in Assignment.objects.filter(judge=judge).select_related("item"):
        first, second = prose[a.item.copy_id], prose[a.item.pair_copy_id]
        if first == second:
            continue
        html = item_page(client, session, a.code)
        # The control, and where the prose copy is: the page's frame marked with text lines.
        seen[(first, a.swapped)] = PLAIN_TEXT_TOGGLE in html
        assert len(re.findall(rb'data-text-lines="\d+"', html)) == 1
    # The prose copy is the pair's first on some of these pairs and its second on others, or the
    # check proves less than it says.
    assert {first for first, _ in seen} == {True, False}, seen
    assert set(seen.values()) == {True}, (
        "the Plain text control follows which copy is the pair's first: " + repr(seen))


def test_a_pair_code_frames_nothing_and_a_copy_code_is_no_item_for_anyone():
    """A pair's code is no frame (it would frame the first copy: which is the earlier builder's),
    with the same 404 as a code nobody holds; a copy's code is no item page; neither works for
    another judge of the session, nor for a stranger."""
    run = a_run(a_host("pairshost"), canary_bundle())
    session = a_session(run, "open", kind=SessionKind.PAIRS, guests_allowed=True)
    judge = invite_and_join(session, name="Pat").judge
    other = invite_and_join(session, name="Quinn").judge
    mine, theirs, stranger = client_as(judge), client_as(other), Client()

    def get(client, name, code):
        return client.get(reverse(name, kwargs={"url_id": session.url_id, "code": code}))

    nothing = get(mine, "judge_frame", "QQQQ")
    no_item = get(mine, "judge_item", "QQQQ")
    assert nothing.status_code == no_item.status_code == 404
    for a in Assignment.objects.filter(judge=judge):
        for client in (mine, theirs, stranger):
            response = get(client, "judge_frame", a.code)
            assert response.status_code == 404
            if client is not stranger:
                assert response.content == nothing.content
        for code in (a.first_code, a.second_code):
            assert get(mine, "judge_frame", code).status_code == 200
            assert get(mine, "judge_item", code).content == no_item.content
            assert get(theirs, "judge_frame", code).content == nothing.content
            assert get(theirs, "judge_item", code).content == no_item.content


# Issue 31 item 6: a pairs judge learns nothing of builders, reviewers, truth or other judges, and
# nothing of which copy is a pair's first. Every byte each visitor's browser gets (the judge by
# join link, a guest, a judge signed in with GitHub, a removed judge, a host of other runs, a
# stranger), on every judge-facing URL in every state (draft; open with drafts; phase 2 after the
# lock, part answered; both locked; closed; revealed), holds no canary: builders' models, families
# and ids; copy and finding ids; defect notes; the reviewers' families and ids, the conditions'
# names, every reason given under the told condition (a pair's phase 2 shows each copy's reviews
# of the default condition only, on the judge's own pair pages after their lock, where the crawl
# finds every one of them); authorship guesses; other judges' names, GitHub logins and ids and
# reasons, in this session and the copies session beside it; every database id. The crawl asks
# for every frame by each copy's code (200) and by the pair's own code (404), and for the item
# page by a copy's code (404); a page linking a frame by a pair's code, or an item by a copy's,
# is a problem. The scanner's every canary is shown to fire on the unsafe page by
# test_positive_control_the_scanner_finds_every_pairs_canary_on_an_unsafe_page.
@override_settings(BLINDJUDGE_GUEST_ATTEMPTS=1000)
def test_no_canary_in_any_byte_a_pairs_judge_receives_in_any_state(canary_host, standin):
    world = build_world(canary_host, pairs_bundle(), kind=SessionKind.PAIRS, display="names",
                        standin=standin)
    assert unfillable_routes(world) == []
    assert world.session.items.count() == 12
    assert Review.objects.filter(run=world.run, condition=ADJ_CONDITIONS[1]).exists()
    content = content_canaries(world)
    assert {f"condition {c}" for c in ADJ_CONDITIONS} <= set(content)
    assert any(label.endswith("defect note") for label in content)
    hits, problems = crawl_world(world, expect_2xx=PAIRS_ROUTES)
    assert not hits, "canaries found:\n" + "\n".join(str(h) for h in hits[:40])
    assert not problems, "\n".join(problems[:40])
    judge = world.personas["A"].judge()
    assert judge.phase2_locked_at is not None
    assert Verdict.objects.filter(assignment__judge=judge, locked=True).count() == 24
    # The told reasons were canaries on the judge's own phase-2 pages, and were not found there.
    told = {f"review {pk} reason" for pk in Review.objects.filter(
        run=world.run, condition=ADJ_CONDITIONS[1]).values_list("pk", flat=True)}
    assert told and told <= set(phase2_canaries(world))
    assert len(copy_codes_of(judge.pk)) == 6


def test_positive_control_the_scanner_finds_every_pairs_canary_on_an_unsafe_page(canary_host,
                                                                                  standin):
    """The pairs crawl's canaries (the run/2 bundle's builders, copies, reviewer conditions and
    told reasons; the other judges of the pairs session and of the copies session beside it, one
    by GitHub), every one of them, in every form, as the crawl's scanner sees them; and the link
    check fires on a page that frames a copy by its pair's code or opens a pair by a copy's code."""
    world = build_world(canary_host, pairs_bundle(), kind=SessionKind.PAIRS, display="names",
                        standin=standin)
    for _ in drive(world, lambda *args: None):
        pass
    own = world.personas["A"].judge_pk
    canaries = {**content_canaries(world), **phase2_canaries(world),
                **people_canaries(world, own), **id_canaries(world)}
    assert {f"condition {c}" for c in ADJ_CONDITIONS} <= set(canaries)
    assert any(label.endswith("GitHub login") for label in canaries)
    mine = {JUDGE_NAMES["A"], *Verdict.objects.filter(assignment__judge_id=own).values_list(
        "reason", flat=True)}
    planted = set(planted_values(world.session))
    assert set(canaries.values()) == planted - mine, set(canaries.values()) ^ (planted - mine)
    with override_settings(ROOT_URLCONF="tests.support.urls_unsafe"):
        unsafe_page_fires_on_every_canary(world, canaries)
    a = world.personas["A"]
    pair, copy = codes_of(own)[0], copy_codes_of(own)[0]
    base = f"/s/{world.session.url_id}/i/"
    for wrong in (f'<iframe src="{base}{pair}/frame"></iframe>', f'<a href="{base}{copy}/">x</a>'):
        problems = link_problems(a, "/unsafe/", HttpResponse(wrong), world)
        assert any("mixed up" in p for p in problems), (wrong, problems)
    right = f'<iframe src="{base}{copy}/frame"></iframe><a href="{base}{pair}/">x</a>'
    assert link_problems(a, "/unsafe/", HttpResponse(right), world) == []
    assert Judge.objects.filter(session=world.session, github_id__isnull=False).exists()


# --- Case 14e: twins whose builders are imported in reverse order --------------------------------

def mirror(key: str) -> str:
    """A pair's key with its copies the other way round: its key in the twin whose builders are
    imported in reverse order."""
    first, second = key.removeprefix("pair:").split("|")
    return f"pair:{second}|{first}"


def conjugate_the_draw(monkeypatch):
    """The reversed twin's draw, conjugated so that each judge is shown what the other twin's
    judge of the same number is shown: each pair at the place its mirror key is drawn to, with
    the opposite side bit (the second copy of one twin is the first of the other, so the same
    copy lands on the same side). The draw functions are the product's, given the mirror key;
    only which copy a key names first changes."""
    real_order, real_swapped = admission.draw_order, admission.pair_swapped

    def draw_order(order_seed, keys):
        if not all(key.startswith("pair:") for key in keys):
            return real_order(order_seed, keys)
        return sorted(keys, key=lambda key: (order_key(order_seed, mirror(key)), mirror(key)))

    def pair_swapped(order_seed, key):
        return not real_swapped(order_seed, mirror(key))

    monkeypatch.setattr(admission, "draw_order", draw_order)
    monkeypatch.setattr(admission, "pair_swapped", pair_swapped)


def views(world) -> list:
    """What each judge of the pairs session is shown, by judge number and position: the pair's
    code, and the copy (by bundle id) and code on each side."""
    shown = []
    for a in (Assignment.objects.filter(judge__session=world.session)
              .select_related("judge", "item__copy", "item__pair_copy")
              .order_by("judge__number", "position")):
        first = (a.item.copy.bundle_id, a.first_code)
        second = (a.item.pair_copy.bundle_id, a.second_code)
        left, right = (second, first) if a.swapped else (first, second)
        shown.append((a.judge.number, a.position, a.code, left, right))
    return shown


def firsts(world) -> list:
    return [(a.judge.number, a.position, a.item.copy.bundle_id, a.swapped)
            for a in Assignment.objects.filter(judge__session=world.session)
            .select_related("judge", "item__copy").order_by("judge__number", "position")]


def reversed_twin() -> dict:
    """The canary bundle with its builders imported in reverse order (every pair's first copy is
    the other twin's second), and different builder names, families and ids, and every truth the
    tests settled turned over."""
    bundle = pairs_bundle(builder_twin=True, truth_twin=True)
    bundle["builders"].reverse()
    return bundle


@override_settings(BLINDJUDGE_GUEST_ATTEMPTS=1000)
def test_case_14e_reversed_import_twins_give_byte_identical_pairs_judge_responses(
        canary_host, standin, monkeypatch):
    """A judge never learns which copy is a pair's first. Twins of the pairs canary bundle whose
    builders are imported in reverse order (so every key is the mirror of the other twin's and
    every pair's first and second copies swap), with different builder names, families and ids
    and every truth turned over, judged with the same pinned seeds and the same drawn view (the
    reversed twin's draw conjugated: the same copy on the same side at the same place under the
    same codes, for every judge), give every visitor byte-identical responses in every state,
    save the protocol hash (set aside by name: its document holds the items' keys, so it differs,
    by exactly the mirrored keys and swapped copy hashes, beside an allocation seed no judge
    knows). With the same seeds and no conjugation the twins draw different orders and sides
    (the HMACs take the key): a plain twin cannot hold the view fixed, which is why the draw is
    conjugated, and why what is compared is everything given the draw."""
    def protocol_set_aside(body: bytes, world) -> bytes:
        if world.session.protocol_sha256:
            body = body.replace(world.session.protocol_sha256.encode(), b"<PROTOCOL>")
        return body

    options = {"kind": SessionKind.PAIRS, "normalise_more": protocol_set_aside}
    left, left_world = twin_transcript(canary_host, pairs_bundle(), standin, **options)
    # Without conjugation, the reversed twin's judges (same seeds, mirrored keys) would be shown
    # the pairs in another order, and some of them the other way round.
    drawn = {}
    for a in (Assignment.objects.filter(judge__session=left_world.session)
              .select_related("judge", "item").order_by("judge__number", "position")):
        drawn.setdefault(a.judge.order_seed, []).append(a.item.key)
    assert any([mirror(k) for k in admission.draw_order(seed, [mirror(k) for k in keys])] != keys
               for seed, keys in drawn.items())
    assert any(admission.pair_swapped(seed, mirror(k)) == admission.pair_swapped(seed, k)
               for seed, keys in drawn.items() for k in keys)
    conjugate_the_draw(monkeypatch)
    right, right_world = twin_transcript(canary_host, reversed_twin(), standin, **options)
    monkeypatch.undo()
    assert len(left) > 500
    # The twins differ where they say: every key mirrored, every pair's first copy the other one,
    # builders and truths; and every judge is shown the same copies on the same sides.
    left_keys = sorted(left_world.session.items.values_list("key", flat=True))
    right_keys = sorted(right_world.session.items.values_list("key", flat=True))
    assert sorted(mirror(k) for k in left_keys) == right_keys and set(left_keys).isdisjoint(right_keys)
    assert views(left_world) == views(right_world)
    left_firsts, right_firsts = firsts(left_world), firsts(right_world)
    assert len(left_firsts) == len(right_firsts) > 12
    assert all(one[2] != two[2] and one[3] != two[3]
               for one, two in zip(left_firsts, right_firsts, strict=True))
    assert set(left_world.run.builders.values_list("model", flat=True)).isdisjoint(
        right_world.run.builders.values_list("model", flat=True))
    assert [c.truth for c in left_world.run.copies.order_by("bundle_id")] != [
        c.truth for c in right_world.run.copies.order_by("bundle_id")]
    # The protocol documents differ by the mirrored keys and the swapped copy hashes alone.
    left_protocol, right_protocol = (w.session.protocol for w in (left_world, right_world))

    def unordered(protocol):
        return sorted((tuple(sorted(item["key"].removeprefix("pair:").split("|"))), item["task"],
                       tuple(sorted((item["copy_sha256"], item["second_copy_sha256"]))))
                      for item in protocol["items"])

    assert unordered(left_protocol) == unordered(right_protocol)
    assert {**left_protocol, "items": None} == {**right_protocol, "items": None}
    assert left_world.session.protocol_sha256 != right_world.session.protocol_sha256
    assert first_difference(left, right) == ""
    # Positive control: the comparison fires on a page that says which side the first copy is on.
    left_pages, right_pages = unsafe_pages((left_world, right_world), "first")
    assert left_pages != right_pages


# --- The blinding check reads both copies of every pair ------------------------------------------

def test_a_builders_name_only_in_pairs_second_copies_is_found_and_counted_in_the_redactions():
    """A builder's name placed only in a copy that is never a pair's first (the last builder's:
    every pair holding it holds it second) is found by the pairs session's blinding check, holds
    its opening until the host decides, and once redacted is counted in that session's redactions
    of the copy and its builder, and gone from the frame the judge is served. The control: that
    copy is no item's first copy, so only the pair's second copy makes it read here."""
    bundle = canary_bundle()
    b1 = bundle["builders"][0]["model"]
    named = "cCANARY06"  # b3's, the last builder's: always a pair's second copy
    for copy in bundle["copies"]:
        if copy["id"] == named:
            copy["content"] += f"\nWritten by {b1}, as you can tell.\n"
    run = a_run(a_host("pairshost"), bundle)
    session = a_session(run, "draft", kind=SessionKind.PAIRS)
    items = list(session.items.select_related("copy", "pair_copy"))
    assert named not in {i.copy.bundle_id for i in items}
    assert named in {i.pair_copy.bundle_id for i in items}
    check = blinding_check(session)
    entry = next(c for c in check["copies"] if c["copy"] == named)
    assert any(m["where"] == "content" and m["status"] == "undecided" for m in entry["matches"])
    assert any(u["first"].startswith(f"copy {named}") for u in check["undecided"])
    with pytest.raises(Invalid, match="cannot open: the blinding check found"):
        session_open(session=session, actor="test")
    session = redactions_accept(session=session, patterns=[b1], actor="test")
    check = blinding_check(session)
    entry = next(c for c in check["copies"] if c["copy"] == named)
    assert entry["redactions"] and entry["redactions"] >= 1
    assert next(b for b in check["builders"] if b["builder"] == "bCANARYQX3")["redactions"] >= 1
    assert not check["undecided"]
    session = session_open(session=session, actor="test")
    judge = invite_and_join(session, name="Pat").judge
    a = Assignment.objects.filter(judge=judge, item__pair_copy__bundle_id=named).first()
    response = client_as(judge).get(reverse("judge_frame", kwargs={
        "url_id": session.url_id, "code": a.second_code}), HTTP_ACCEPT_ENCODING="identity")
    assert response.status_code == 200
    frame = response.content.decode()
    assert "as you can tell" in frame and b1.split()[0] not in frame


# --- Phase 2: each copy's rows and findings, of the default condition only -----------------------

def test_phase_2_shows_each_copys_findings_of_the_default_condition_and_no_told_one():
    """After the lock a pair's page lists, under each side, the findings raised on that copy in
    the reviews judges may see (the run's default condition); a finding raised only under the
    told condition (fCANARYF3, on cCANARY05) is on no page, and neither is its raiser's told
    reason. The control: the default-condition finding on cCANARY06 is on every page of a pair
    holding it, under the side that copy is on."""
    run = a_run(a_host("pairshost"), pairs_bundle())
    session = a_session(run, "open", kind=SessionKind.PAIRS)
    judge = invite_and_join(session, name="Pat").judge
    for code in codes_of(judge.pk):
        verdict_record(judge=judge, code=code, phase=1, value="tie")
    phase_lock(judge=judge, phase=1)
    client = client_as(judge)
    told_only = run.findings.get(bundle_id="fCANARYF3").text.encode()
    told_reasons = [r.reason for r in Review.objects.filter(run=run, condition=ADJ_CONDITIONS[1])]
    shown = run.findings.get(bundle_id="fCANARYF4").text.encode()
    on_06 = 0
    for a in Assignment.objects.filter(judge=judge).select_related("item__copy", "item__pair_copy"):
        html = item_page(client, session, a.code)
        assert told_only not in html
        assert not any(reason.encode() in html for reason in told_reasons)
        copies = (a.item.copy.bundle_id, a.item.pair_copy.bundle_id)
        if "cCANARY06" in copies:
            on_06 += 1
            side = "left" if (copies.index("cCANARY06") == 1) == a.swapped else "right"
            section = html.split(f'id="reviewers-{side}"'.encode())[1].split(b"</section>")[0]
            assert shown in section, side
        else:
            assert shown not in html
    assert on_06 == 4


# --- The frame lookup's work does not tell a first copy's code from a second's -------------------

def two_builder_bundle(tasks: int) -> dict:
    """A run/2 bundle of `tasks` tasks, each built once by two builders: every pair's first copy
    is b1's, its second b2's."""
    return {"format": "blindjudge.run/2", "run": {"name": "two builders"},
            "tasks": [{"id": f"t{i}", "statement": f"Task {i}."} for i in range(tasks)],
            "builders": [{"id": "b1", "model": "model-one", "family": "One"},
                         {"id": "b2", "model": "model-two", "family": "Two"}],
            "copies": [{"id": f"c{i}{b}", "task": f"t{i}", "builder": b, "format": "text",
                        "content": f"copy {i} {b}\n", "truth": "tests_pass"}
                       for i in range(tasks) for b in ("b1", "b2")],
            "reviewers": [], "reviews": [], "findings": []}


def vm_steps(lookup) -> int:
    """SQLite's virtual-machine steps to run `lookup()`: the database's work, counted exactly
    (a time measured on a shared machine would be noise; this is what the time follows)."""
    raw = connection.connection
    steps = [0]

    def tick():
        steps[0] += 1
        return 0

    raw.set_progress_handler(tick, 1)
    try:
        lookup()
    finally:
        raw.set_progress_handler(None, 1)
    return steps[0]


def separable(first: list[int], second: list[int]) -> bool:
    """Whether the work tells the two kinds of code apart: every second copy's lookup costs more
    than every first copy's (or the reverse), or their medians are more than a quarter apart."""
    apart = max(first) < min(second) or max(second) < min(first)
    low, high = sorted((statistics.median(first), statistics.median(second)))
    return apart or high > 1.25 * low


@pytest.mark.skipif(connection.vendor != "sqlite", reason="counts SQLite's virtual-machine steps")
def test_serving_a_frame_costs_the_same_for_a_pairs_first_and_second_copy():
    """A judge who times the frames of their copies must not learn which copies are first in
    their pairs (in a two-builder run, which copies are the same builder's). The frame lookup's
    database work, counted in SQLite's virtual-machine steps, must not separate the first copies'
    codes from the second copies'. Positive control: the detector separates a lookup that tries
    the first codes before the second (a test-only query)."""
    run = a_run(a_host("pairshost"), two_builder_bundle(60))
    session = a_session(run, "open", kind=SessionKind.PAIRS)
    judge = invite_and_join(session, name="Pat").judge
    rows = list(Assignment.objects.filter(judge=judge).values_list("first_code", "second_code"))
    assert len(rows) == 60
    judge.refresh_from_db()

    def unsafe(code):
        mine = Assignment.objects.filter(judge=judge).order_by()
        return (list(mine.filter(first_code=code).values("item__copy_id")[:1])
                or list(mine.filter(second_code=code).values("item__pair_copy_id")[:1]))

    control = ([vm_steps(lambda c=f: unsafe(c)) for f, _ in rows],
               [vm_steps(lambda c=s: unsafe(c)) for _, s in rows])
    assert separable(*control), control
    first = [vm_steps(lambda c=f: judge_frame(judge, c)) for f, _ in rows]
    second = [vm_steps(lambda c=s: judge_frame(judge, c)) for _, s in rows]
    assert not separable(first, second), (
        f"first copies' frames: median {statistics.median(first)} steps, "
        f"{min(first)}-{max(first)}; second copies': median {statistics.median(second)}, "
        f"{min(second)}-{max(second)}")
