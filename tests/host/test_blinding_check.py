"""The host's blinding check as a service: per copy and per builder, what will be stripped, what
names could unblind, and what the accepted patterns redact (counted per builder)."""


from judging.selectors.host import blinding_check
from judging.services import redactions_accept
from tests.worlds import a_run, a_session, make_bundle

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
