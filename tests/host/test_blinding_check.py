"""The host's blinding check as a service: per copy and per builder, what will be stripped, what
names could unblind, and what the accepted patterns redact (counted per builder)."""


from judging.selectors.host import blinding_check
from judging.services import redactions_accept
from reports.build import build_report
from tests.worlds import a_run, a_session, advance, client_as, make_bundle

PATCH = """From 0123456789abcdef0123456789abcdef01234567 Mon Sep 17 00:00:00 2001
From: Some Bot <bot@example.invalid>
Date: Mon, 16 Nov 2026 10:00:00 +0000
Subject: [PATCH] add

Assisted-by: OpenAI:gpt-4o-2024-08-06
---
diff --git a/m.py b/m.py
--- a/m.py
+++ b/m.py
@@ -0,0 +1,2 @@
+import openai
+x = 1
"""


def session_on(host, **copy_overrides):
    bundle = make_bundle()
    bundle["copies"][0].update(format="diff", content=PATCH)
    bundle["copies"][2]["content"] = "# Written by Claude, your helpful assistant\nx = 1\n"
    bundle["reviews"][0]["reason"] = "typical GPT-4o style"
    return a_session(a_run(host, bundle), "draft")


def test_the_check_lists_stripped_metadata_and_matches_per_copy(host):
    check = blinding_check(session_on(host))
    by_copy = {c["copy"]: c for c in check["copies"]}
    c1 = by_copy["c1"]
    assert "Assisted-by: OpenAI:gpt-4o-2024-08-06" in c1["stripped_metadata"]
    assert "From: Some Bot <bot@example.invalid>" in c1["stripped_metadata"]
    # The trailer is stripped anyway, so only what a judge would see is matched: `import openai`
    # (the builder's family, reported, not redacted) and the reviewer's reason.
    content_matches = [(m["matched"], m["why"], m["builder"]) for m in c1["matches"]
                       if m["where"] == "content"]
    assert content_matches == [("openai", "builder family", "b1")]
    reason_matches = [m for m in c1["matches"] if m["where"].startswith("review reason")]
    assert [m["matched"] for m in reason_matches] == ["GPT-4o"]
    c3 = by_copy["c3"]
    assert [(m["matched"], m["why"]) for m in c3["matches"]] == [("Claude", "known product")]
    assert c1["redactions"] == c3["redactions"] == 0


def test_nothing_is_redacted_until_the_host_accepts_a_pattern(host):
    session = session_on(host)
    before = {b["builder"]: b for b in blinding_check(session)["builders"]}
    assert {b: before[b]["redactions"] for b in before} == {"b1": 0, "b2": 0, "b3": 0}
    redactions_accept(session=session, patterns=["Claude", "openai"], actor="test")
    session.refresh_from_db()
    after = {b["builder"]: b for b in blinding_check(session)["builders"]}
    assert {b: after[b]["redactions"] for b in after} == {"b1": 1, "b2": 1, "b3": 0}
    assert after["b1"]["stripped_lines"] == before["b1"]["stripped_lines"] >= 4
    assert after["b1"]["copies"] == 2


# --- The task statement and the rubric (issue 12, item 1): judges see them too -------------------

TASK = "Fix add().\nSee how Zeta Lab\u200b\u200b\u200bdid it \u202eelsewhere.\n\u2066Claude\u2069 said so."


def test_the_check_scans_the_task_and_the_rubric_and_says_where_each_hit_is(host):
    bundle = make_bundle()
    bundle["run"]["task"] = TASK
    family = bundle["builders"][0]["family"]
    session = a_session(a_run(host, bundle), "draft", rubric=f"Ignore who wrote it.\nNot {family}.")
    redactions_accept(session=session, patterns=["Claude"], actor="test")
    session.refresh_from_db()
    texts = {t["where"]: t for t in blinding_check(session)["texts"]}
    task, rubric = texts["task"], texts["rubric"]
    assert [(m["matched"], m["why"], m["line"]) for m in task["matches"]] == [("Claude", "known product", 3)]
    assert [(h["label"], h["kind"], h["count"], h["line"], h["column"]) for h in task["hidden"]] == [
        ("U+200B", "invisible character", 3, 2, 17), ("U+202E", "bidi control", 1, 2, 27),
        ("U+2066", "bidi control", 1, 3, 1), ("U+2069", "bidi control", 1, 3, 8)]
    assert task["redactions"] == 1 and task["invisible"] == 3 and task["bidi"] == 3
    assert [(m["matched"], m["why"], m["line"]) for m in rubric["matches"]] == [
        (family, "builder family", 2)]
    assert rubric["hidden"] == [] and rubric["redactions"] == 0


def test_a_task_full_of_hidden_characters_lists_a_bounded_number_of_hits(host):
    bundle = make_bundle()
    bundle["run"]["task"] = "a\u200bb\u202e" * 5000
    texts = blinding_check(a_session(a_run(host, bundle), "draft"))["texts"]
    (task,) = texts
    assert len(task["hidden"]) == 100 and task["hidden_total"] == 10_000
    assert task["hidden_more"] == 9_900


def test_the_blinding_page_shows_the_task_and_rubric_hits(host):
    bundle = make_bundle()
    bundle["run"]["task"] = TASK
    session = a_session(a_run(host, bundle), "draft", rubric="Plain rubric.")
    body = client_as(host).get(f"/host/sessions/{session.pk}/blinding").content.decode()
    section = body.split('id="task-rubric"', 1)[1]
    assert "The task: 1 match, 4 runs of hidden characters" in section
    assert "<td>task</td><td>2:17</td><td><code>U+200B</code></td>" in section
    assert "<td>task</td><td>3:2</td><td><code class=\"untrusted\">Claude</code></td>" in section
    assert "The rubric: 0 matches" in section
    assert 'value="Claude"' in body  # offered as a suggestion, like a match in a copy


def test_no_host_page_shows_the_judge_preview_banner(host):
    """The blinding page named its redacted copy `preview`, which base.html reads as a host's
    preview of the judge's pages: it showed "Preview as a judge, phase ." with three dead links
    (issue 24 item 10). Every host page of a draft with accepted redactions is read here."""
    session = session_on(host)
    redactions_accept(session=session, patterns=["Claude"], actor="test")
    browser = client_as(host)
    blinding = browser.get(f"/host/sessions/{session.pk}/blinding").content.decode()
    assert 'id="redacted-preview"' in blinding  # the redacted copy is still shown
    pages = ["/host/", f"/host/runs/{session.run_id}/", f"/host/sessions/{session.pk}/",
             f"/host/sessions/{session.pk}/blinding", f"/host/sessions/{session.pk}/instructions",
             f"/host/sessions/{session.pk}/invitations", f"/host/sessions/{session.pk}/guests",
             f"/host/sessions/{session.pk}/judges"]
    for path in pages:
        response = browser.get(path)
        assert response.status_code == 200, path
        body = response.content.decode()
        assert "preview-banner" not in body and "Preview as a judge, phase" not in body, path


def test_a_shape_only_one_builders_copies_have_is_flagged(host):
    """Only one builder's diffs were git format-patch output (issue 24 item 8): the check names
    every layout feature found in one builder's copies alone, and says whether judges see it."""
    bundle = make_bundle()
    by_builder = {}
    for copy in bundle["copies"]:
        by_builder.setdefault(copy["builder"], []).append(copy)
    b1, b2, b3 = sorted(by_builder)
    by_builder[b1][0].update(format="diff", content=PATCH)
    for copy in by_builder[b2]:
        copy["content"] = copy["content"].replace("\n", "  \r\n")
    by_builder[b3][0]["content"] = "# Generated by SomeTool 1.2\n" + by_builder[b3][0]["content"]
    session = a_session(a_run(host, bundle), "draft")
    shapes = {(s["feature"], s["builder"], s["copies"], s["of"], s["stripped"])
              for s in blinding_check(session)["shapes"]}
    assert shapes == {("format_patch", b1, 1, 2, True), ("crlf", b2, 2, 2, True),
                      ("trailing_whitespace", b2, 2, 2, False), ("banner", b3, 1, 2, False)}
    page = client_as(host).get(f"/host/sessions/{session.pk}/blinding").content.decode()
    assert "lines ending in spaces or tabs: only <code>" in page and "judges see it" in page
    # A feature two builders share says nothing of either.
    by_builder[b1][1]["content"] = by_builder[b1][1]["content"].replace("\n", "\r\n")
    shared = a_session(a_run(host, bundle), "draft")
    assert "crlf" not in {s["feature"] for s in blinding_check(shared)["shapes"]}


def named_run(host):
    """Claude named in a b2 copy, a reviewer's reason and the defect note of a b1 copy, and a
    finding of that copy: a text of each kind judges may read."""
    bundle = make_bundle()
    bundle["copies"][2]["content"] = "# Claude wrote this\n" + bundle["copies"][2]["content"]
    bundle["copies"][1]["defect"] = "Claude's subtraction"
    bundle["reviews"][1]["reason"] = "subtracts, as Claude would"
    bundle["findings"][0]["text"] = "Claude uses minus"
    return a_run(host, bundle)


def page_and_report_redactions(session) -> tuple[dict, dict, dict]:
    redactions_accept(session=session, patterns=["Claude"], actor="test")
    session.refresh_from_db()
    check = blinding_check(session)
    page = {b["builder"]: b["redactions"] for b in check["builders"]}
    per_copy = {c["copy"]: c["redactions"] for c in check["copies"]}
    report = build_report(advance(session, "revealed"))["redactions_per_builder"]
    return page, per_copy, report


def test_the_page_and_the_report_count_redactions_per_builder_alike_in_what_judges_read(host):
    """One definition (content.blinding.redactions_shown): a copies session's judges read the
    copies, the reviewers' reasons (phase 2) and, with scorecards, the defect notes; not the
    findings, which are another session's items."""
    page, per_copy, report = page_and_report_redactions(
        a_session(named_run(host), "draft", scorecards=True))
    assert page == report == {"b1": 2, "b2": 1, "b3": 0}
    assert per_copy == {"c1": 0, "c2": 2, "c3": 1, "c4": 0, "c5": 0, "c6": 0}


def test_a_findings_session_counts_its_findings_and_never_copies_it_does_not_judge(host):
    """A findings session's judges read the findings' copies and texts, no reasons and no defect
    notes; copies with no finding are not judged there, so they count for nobody."""
    page, per_copy, report = page_and_report_redactions(
        a_session(named_run(host), "draft", kind="findings", scorecards=True))
    assert page == report == {"b1": 1, "b2": 0, "b3": 0}
    assert per_copy == {"c1": 0, "c2": 1, "c3": None, "c4": None, "c5": None, "c6": None}
