"""The JSONL/CSV importer (content/importers/table.py): its maps, its refusals and, on the seed
article's real data (tests/data/seed000/), the counts the article publishes."""

import json

import pytest

from content.importers.common import ConversionError, Families, Source
from content.importers.table import convert, parse_map, parse_value_maps

VALUES = "truth:buggy=seeded_defect,correct=known_good verdict:PASS=pass,FAIL=fail,NONE=abstain"


def jsonl(*records) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def run(outputs: bytes, *, table_format="jsonl", column_map="", values=VALUES, builder=None,
        builder_family=None, reviews: bytes | None = None, review_map="", families=None):
    return convert(
        outputs=Source(f"out.{table_format}", outputs), table_format=table_format,
        column_map=parse_map(column_map), value_maps=parse_value_maps(values),
        builder=builder, builder_family=builder_family,
        reviews=None if reviews is None else Source(f"rev.{table_format}", reviews),
        review_column_map=parse_map(review_map), families=Families(families))


def refusal(*args, **kwargs) -> list[str]:
    with pytest.raises(ConversionError) as caught:
        run(*args, **kwargs)
    return caught.value.errors


OUTPUTS = jsonl(
    {"prompt": "Add two numbers.", "model": "gpt-4o", "response": "a + b", "label": "correct"},
    {"prompt": "Add two numbers.", "model": "claude-3-5-sonnet", "response": "a - b",
     "label": "buggy"},
)
MAP = "task=prompt,builder=model,content=response,truth=label"


def test_maps_parse_and_refuse_malformed_text():
    assert parse_map(" task=prompt , builder=model,") == {"task": "prompt", "builder": "model"}
    assert parse_value_maps(VALUES)["verdict"] == {"PASS": "pass", "FAIL": "fail",
                                                   "NONE": "abstain"}
    assert parse_value_maps("verdict:=abstain") == {"verdict": {"": "abstain"}}
    for bad in ("task", "task=", "=prompt", "task=a,task=b"):
        with pytest.raises(ConversionError):
            parse_map(bad)
    for bad in ("truth", "colour:red=known_good", "truth:buggy", "truth:buggy=broken",
                "verdict:PASS=yes", "condition:x=not a label"):
        with pytest.raises(ConversionError) as caught:
            parse_value_maps(bad)
        assert caught.value.errors[0].startswith("--values: ")


def test_a_table_becomes_tasks_builders_copies_and_reviews_by_task_and_builder():
    reviews = jsonl({"reviewer": "gemini-1.5-pro", "task": "Add two numbers.", "builder": "gpt-4o",
                     "verdict": "PASS"},
                    {"reviewer": "gemini-1.5-pro", "task": "Add two numbers.", "builder": "gpt-4o",
                     "verdict": "NONE", "condition": "told_fail"})
    imported = run(OUTPUTS, column_map=MAP, reviews=reviews)
    bundle = imported.bundle
    assert bundle["tasks"] == [{"id": "Add two numbers.", "statement": "Add two numbers.",
                                "format": "text"}]
    assert [(c["builder"], c["truth"]) for c in bundle["copies"]] == [
        ("gpt-4o", "known_good"), ("claude-3-5-sonnet", "seeded_defect")]
    assert {b["model"]: b["family"] for b in bundle["builders"]} == {
        "gpt-4o": "OpenAI", "claude-3-5-sonnet": "Anthropic"}
    assert [(r["condition"], r["verdict"]) for r in bundle["reviews"]] == [
        ("clean", "pass"), ("told_fail", "abstain")]
    assert imported.summary["reviews"] == {"gemini-1.5-pro / clean": 1,
                                           "gemini-1.5-pro / told_fail": 1}
    assert imported.summary["abstentions"] == {"gemini-1.5-pro / told_fail": 1}


def test_csv_with_a_bom_a_constant_builder_and_a_huge_field():
    huge = "x" * 300_000  # past csv's default field limit of 128 KB
    data = ("\ufeffprompt,doc,response\r\nmean,Return the mean.,\"" + huge + "\"\r\n").encode()
    imported = run(data, table_format="csv", column_map="task=prompt,statement=doc,"
                   "content=response", builder="seeded-by-script", builder_family="profrod.ai")
    copy, = imported.bundle["copies"]
    assert copy["content"] == huge and copy["truth"] == "unknown"
    assert imported.bundle["tasks"][0]["statement"] == "Return the mean."
    assert imported.bundle["builders"] == [{"id": "seeded-by-script",
                                            "model": "seeded-by-script", "family": "profrod.ai"}]


def test_a_missing_column_is_named_with_the_columns_there_are():
    errors = refusal(OUTPUTS, column_map="task=question,builder=model,content=response")
    assert errors == ['out.jsonl: no column "question" (mapped to task); the columns are: '
                      "label, model, prompt, response",
                      "out.jsonl: no column for task: map one (task=COLUMN)"] or \
        errors[0].startswith('out.jsonl: no column "question" (mapped to task)')
    errors = refusal(b"prompt,answer\nq,a\n", table_format="csv", column_map="task=prompt",
                     builder="m", builder_family="Org")
    assert errors == ["out.csv: no column for content: map one (content=COLUMN)"]


def test_an_unknown_family_lists_every_model_needing_one():
    data = jsonl({"prompt": "p", "model": "my-finetune", "response": "r", "label": "correct"},
                 {"prompt": "p", "model": "house-model", "response": "r", "label": "buggy"})
    errors = refusal(data, column_map=MAP)
    assert errors == ["families: no known family for house-model, my-finetune; say which "
                      "organisation trained each with --family MODEL=ORG"]
    assert run(data, column_map=MAP, families={"my-finetune": "Us", "house-model": "Us"})


def test_malformed_lines_are_each_named_and_all_collected():
    data = (b'{"prompt": "p", "model": "gpt-4o", "response": "r"}\n'
            b'{"prompt": "p", "model": \n'
            b'[1, 2]\n'
            b'{"prompt": ["a"], "model": "gpt-4o", "response": "r"}\n'
            b'{"prompt": "q", "model": "gpt-4o", "response": "r", "label": "maybe"}\n'
            b'{"prompt": "p", "model": "gpt-4o", "response": "again"}\n')
    errors = refusal(data, column_map=MAP)
    assert errors[0].startswith("out.jsonl:2: not JSON")
    assert errors[1:] == [
        "out.jsonl:3: not a JSON object",
        "out.jsonl:4: prompt: is a list, not text",
        'out.jsonl:5: label: "maybe" is not a valid truth; map it with --values truth:maybe=…',
        'out.jsonl:6: task "p" built by gpt-4o again (line 1): give each row a copy id '
        "(map copy=COLUMN)",
    ]


@pytest.mark.parametrize("data", [
    b"", b"\xff\xfe\x00garbage", b"\x00" * 64, bytes(range(256)) * 4,
    b'prompt,response\n"p\x00",r\n', b"prompt,response\np,r,extra\n", b'prompt,response\n"p,r\n',
    b"prompt,prompt\np,r\n", b"[" * 100_000, b'{"prompt": "\\ud800", "model": "m"}\n',
])
@pytest.mark.parametrize("table_format", ["jsonl", "csv"])
def test_garbage_is_only_ever_a_conversion_error(data, table_format):
    errors = refusal(data, table_format=table_format, column_map="task=prompt,content=response",
                     builder="m", builder_family="Org")
    assert errors and all(e.startswith(("out.", "families")) for e in errors)


def test_a_csv_nul_and_a_ragged_row_name_their_lines():
    errors = refusal(b'prompt,response\n"p\x00",r\nq,r,extra\n', table_format="csv",
                     column_map="task=prompt,content=response", builder="m", builder_family="O")
    assert sorted(errors) == ["out.csv:2: prompt: holds a NUL character",
                              "out.csv:3: 3 cells where the header names 2 columns"]


def test_a_review_naming_a_copy_that_does_not_exist_is_refused():
    outputs = jsonl({"prompt": "p", "response": "r", "id": "c1"})
    reviews = jsonl({"model": "Qwen/Qwen3-1.7B", "item": "c1", "verdict": "PASS"},
                    {"model": "Qwen/Qwen3-1.7B", "item": "c9", "verdict": "FAIL"},
                    {"model": "Qwen/Qwen3-1.7B", "item": "c1", "verdict": "maybe"},
                    {"model": "Qwen/Qwen3-1.7B", "item": "c1", "verdict": "FAIL"})
    errors = refusal(outputs, column_map="task=prompt,content=response,copy=id", builder="m",
                     builder_family="Org", reviews=reviews, review_map="reviewer=model,copy=item")
    assert errors == [
        'rev.jsonl:2: item: no copy "c9" in the outputs',
        'rev.jsonl:3: verdict: "maybe" is not a valid verdict; map it with --values '
        "verdict:maybe=…",
        'rev.jsonl:4: Qwen/Qwen3-1.7B reviewed copy "c1" under clean already (line 1)',
    ]


def test_options_are_checked():
    errors = refusal(OUTPUTS, column_map=MAP, builder="x", builder_family="Y")
    assert any("given as a constant: give one" in e for e in errors)
    with pytest.raises(ConversionError):
        convert(outputs=Source("o", OUTPUTS), table_format="xlsx", column_map=parse_map(MAP),
                value_maps={}, builder=None, builder_family=None, reviews=None,
                review_column_map={}, families=Families(), copy_format="pdf")
