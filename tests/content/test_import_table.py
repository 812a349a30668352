"""The JSONL/CSV importer (content/importers/table.py): its maps, its refusals and, on the seed
article's real data (tests/data/seed000/), the counts the article publishes."""

import json
from pathlib import Path

import pytest

from content.importers.common import ConversionError, Families, Source
from content.importers.table import convert, parse_map, parse_value_maps

# No database, no socket, no process: run once (tests/support/pure.py).
pytestmark = pytest.mark.pure

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


# --- the seed article's real data (tests/data/seed000; tests/data/README.md says where from) ------

SEED = Path(__file__).resolve().parents[1] / "data" / "seed000"
SEED_MAP = "task=task,statement=doc,content=source,truth=label,copy=id,defect=change"
SEED_VALUES = ("truth:buggy=seeded_defect,correct=known_good "
               "verdict:PASS=pass,FAIL=fail,NONE=abstain")
SEED_REVIEW_MAP = "reviewer=model,copy=item"
SEED_BUILDER, SEED_BUILDER_FAMILY = "review_items_v1", "profrod.ai"
CONDITIONS = ("clean", "anchored-pass", "anchored-fail")


def seed_import(items: bytes | None = None, reviews: bytes | None = None, **overrides):
    arguments = dict(
        outputs=Source("items-v1.jsonl", items or (SEED / "items-v1.jsonl").read_bytes()),
        table_format="jsonl", column_map=parse_map(SEED_MAP),
        value_maps=parse_value_maps(SEED_VALUES), builder=SEED_BUILDER,
        builder_family=SEED_BUILDER_FAMILY,
        reviews=Source("reviews-v1.jsonl", reviews or (SEED / "reviews-v1.jsonl").read_bytes()),
        review_column_map=parse_map(SEED_REVIEW_MAP), families=Families(),
        run_name="Does a prior verdict anchor your AI reviewer?")
    arguments.update(overrides)
    return convert(**arguments)


@pytest.fixture(scope="module")
def seed():
    return seed_import()


@pytest.fixture(scope="module")
def summary_v1():
    return json.loads((SEED / "summary-v1.json").read_text())


def test_seed_items_become_30_tasks_and_180_copies_with_the_articles_truth(seed, summary_v1):
    summary = seed.summary
    assert summary["tasks"] == 30
    assert summary["builders"] == {SEED_BUILDER: 180}
    assert summary["copies_by_truth"] == {
        "known_good": summary_v1["items"]["correct"], "seeded_defect": summary_v1["items"]["buggy"]}
    tasks = {t["id"]: t for t in seed.bundle["tasks"]}
    assert tasks["median"]["statement"] == ("Return the median of a non-empty list; for an even "
                                            "count, the mean of the two middle values.")
    # 3 correct + 3 seeded bugs per function, the defect note only on the buggy ones
    per_task = {}
    for copy in seed.bundle["copies"]:
        per_task.setdefault(copy["task"], []).append(copy["truth"])
        assert ("defect" in copy) == (copy["truth"] == "seeded_defect")
    assert all(sorted(t) == ["known_good"] * 3 + ["seeded_defect"] * 3 for t in per_task.values())
    assert summary["skipped"] == {"defect note on a good copy (dropped)": 90}


def test_seed_reviews_keep_1620_reviews_three_conditions_and_the_abstentions(seed, summary_v1):
    reviewers = {r["model"] for r in seed.bundle["reviewers"]}
    assert reviewers == set(summary_v1["models"])
    assert {r["family"] for r in seed.bundle["reviewers"]} == {"Alibaba"}
    assert len(seed.bundle["reviews"]) == 1620
    assert seed.summary["reviews"] == {f"{m} / {c}": 180 for m in reviewers for c in CONDITIONS}
    truth = {c["id"]: c["truth"] for c in seed.bundle["copies"]}
    label = {"known_good": "correct", "seeded_defect": "buggy"}
    flagged, no_verdict = {}, {}
    for review in seed.bundle["reviews"]:
        key = (review["reviewer"], f'{label[truth[review["copy"]]]}/{review["condition"]}')
        flagged[key] = flagged.get(key, 0) + (review["verdict"] == "fail")
        no_verdict[key] = no_verdict.get(key, 0) + (review["verdict"] == "abstain")
    for model, published in summary_v1["models"].items():
        for cell, counts in published["conditions"].items():
            assert flagged[(model, cell)] == counts["flagged"], (model, cell)
            assert no_verdict[(model, cell)] == counts["noVerdict"], (model, cell)
        for condition in CONDITIONS:
            assert seed.summary["abstentions"].get(f"{model} / {condition}", 0) == (
                published["conditions"][f"buggy/{condition}"]["noVerdict"]
                + published["conditions"][f"correct/{condition}"]["noVerdict"])
    # the article: the smallest reviewer "gave no verdict on 37 to 64 of every 90 replies"
    smallest = [v for (m, _), v in no_verdict.items() if m == "Qwen/Qwen2.5-Coder-1.5B-Instruct"]
    assert (min(smallest), max(smallest)) == (37, 64)
    # ... and Qwen3 1.7B caught 46 of 90 bugs clean, 24 told "PASS"; flagged 4 correct clean, 41
    # told "FAIL"
    qwen3 = "Qwen/Qwen3-1.7B"
    assert [flagged[(qwen3, c)] for c in ("buggy/clean", "buggy/anchored-pass", "correct/clean",
                                          "correct/anchored-fail")] == [46, 24, 4, 41]


def test_seed_refusals_a_missing_column():
    with pytest.raises(ConversionError) as caught:
        seed_import(column_map=parse_map(SEED_MAP.replace("content=source", "content=code")))
    assert caught.value.errors[0].startswith('items-v1.jsonl: no column "code" (mapped to '
                                             "content); the columns are: change, doc, failing")


def test_seed_refusals_an_unknown_model_family():
    with pytest.raises(ConversionError) as caught:
        seed_import(builder_family=None)
    assert caught.value.errors == [f"families: no known family for {SEED_BUILDER}; say which "
                                   "organisation trained each with --family MODEL=ORG"]
    assert seed_import(builder_family=None, families=Families({SEED_BUILDER: "profrod.ai"}))


def test_seed_refusals_a_malformed_line_named_by_file_and_line():
    items = (SEED / "items-v1.jsonl").read_bytes() + b'{"task": "clamp", "source": \n'
    with pytest.raises(ConversionError) as caught:
        seed_import(items=items)
    assert len(caught.value.errors) == 1
    assert caught.value.errors[0].startswith("items-v1.jsonl:181: not JSON")


def test_seed_refusals_a_review_naming_a_copy_that_does_not_exist():
    reviews = (SEED / "reviews-v1.jsonl").read_bytes() + json.dumps(
        {"model": "Qwen/Qwen3-1.7B", "item": "ffffffffffff", "condition": "clean",
         "verdict": "PASS"}).encode() + b"\n"
    with pytest.raises(ConversionError) as caught:
        seed_import(reviews=reviews)
    assert caught.value.errors == ['reviews-v1.jsonl:1621: item: no copy "ffffffffffff" in the '
                                   "outputs"]


# --- a JSON list given as --from jsonl (issue 27 item 9) ---------------------------------------------

def as_pretty_list(raw: bytes) -> bytes:
    rows = [json.loads(line) for line in raw.decode().splitlines() if line.strip()]
    return json.dumps(rows, indent=2, ensure_ascii=False).encode()


def test_a_pretty_printed_json_list_reads_as_its_jsonl(seed):
    """Many eval scripts write results as one indented JSON list; it was refused with one "not
    JSON" per line. The seed article's tables, written that way, import to the same bundle."""
    items = as_pretty_list((SEED / "items-v1.jsonl").read_bytes())
    reviews = as_pretty_list((SEED / "reviews-v1.jsonl").read_bytes())
    listed = seed_import(items, reviews)
    assert listed.bundle == seed.bundle
    assert listed.summary == seed.summary


def test_a_json_list_names_each_problem_by_the_line_its_record_starts_on():
    outputs = (b'[\n  {"prompt": "Add.", "model": "gpt-4o", "response": "a + b"},\n'
               b'  ["not", "a", "record"],\n'
               b'  {"prompt": "Sub.", "model": "gpt-4o", "response": "a - b"}\n]\n')
    assert refusal(outputs, column_map="task=prompt,builder=model,content=response") == [
        "out.jsonl:3: not a JSON object"]
    broken = b'[\n  {"prompt": "Add.", "model": "gpt-4o", "response": "a + b"}\n  {"prompt": 1}\n]'
    assert refusal(broken, column_map="task=prompt,builder=model,content=response") == [
        "out.jsonl:3: not JSON (expected , or ] in the list)"]
    trailing = b'[{"prompt": "Add.", "model": "gpt-4o", "response": "a + b"}]\n[]'
    assert refusal(trailing, column_map="task=prompt,builder=model,content=response") == [
        "out.jsonl:2: not JSON (more after the list's end)"]


# --- one table per builder, truth from two columns (issue 27 item 9) ----------------------------------

def clean_reviews_per_model() -> dict[str, bytes]:
    """The seed article's clean-condition reviews, one JSONL table per reviewer model, each row
    given the verdict it should have had (FAIL on buggy code, PASS on correct): the shape of a
    math or QA result file, a model's answer beside the reference."""
    tables: dict[str, list[str]] = {}
    for line in (SEED / "reviews-v1.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["condition"] == "clean":
            row["expected"] = "FAIL" if row["label"] == "buggy" else "PASS"
            tables.setdefault(row["model"], []).append(json.dumps(row))
    return {model: ("\n".join(rows) + "\n").encode() for model, rows in tables.items()}


def test_one_table_per_builder_with_truth_from_two_columns_gives_the_articles_counts(summary_v1):
    tables = clean_reviews_per_model()
    imported = convert(
        outputs=None, table_format="jsonl", column_map=parse_map("task=item,content=verdict"),
        value_maps={}, builder=None, builder_family=None, reviews=None, review_column_map={},
        families=Families({model: "Alibaba" for model in tables}),
        truth_equals=("verdict", "expected"),
        per_builder=[(model, Source(f"/home/host/results/{model.split('/')[1]}.jsonl", raw))
                     for model, raw in tables.items()])
    assert imported.summary["builders"] == {model: 180 for model in tables}
    by_model: dict[str, dict[str, int]] = {}
    for copy_ in imported.bundle["copies"]:
        counts = by_model.setdefault(copy_["builder"], {})
        counts[copy_["truth"]] = counts.get(copy_["truth"], 0) + 1
    for model, counts in by_model.items():
        published = summary_v1["models"][model]["conditions"]
        caught = published["buggy/clean"]["flagged"]
        good = published["correct/clean"]
        passed = good["n"] - good["flagged"] - good["noVerdict"]
        assert counts == {"tests_pass": caught + passed, "tests_fail": 180 - caught - passed}
    # The default run name is the first file's own name, never the path typed on the host's machine.
    assert imported.bundle["run"]["name"] == "Qwen2.5-Coder-1.5B-Instruct.jsonl"


def test_truth_from_two_columns_fails_an_empty_answer_and_knows_nothing_without_a_reference():
    outputs = jsonl({"q": "1+1", "pred": "2", "answer": "2"}, {"q": "2+2", "pred": " 5", "answer": "4"},
                    {"q": "3+3", "pred": "", "answer": "6"}, {"q": "4+4", "pred": "8", "answer": ""})
    imported = convert(outputs=Source("aime.jsonl", outputs), table_format="jsonl",
                       column_map=parse_map("task=q,content=pred"), value_maps={}, builder="m",
                       builder_family="O", reviews=None, review_column_map={}, families=Families(),
                       truth_equals=("pred", "answer"))
    assert [c["truth"] for c in imported.bundle["copies"]] == [
        "tests_pass", "tests_fail", "tests_fail", "unknown"]


def test_truth_from_two_columns_refuses_a_missing_column_and_a_truth_map_beside_it():
    with pytest.raises(ConversionError) as caught:
        convert(outputs=Source("aime.jsonl", jsonl({"q": "1+1", "pred": "2"})), table_format="jsonl",
                column_map=parse_map("task=q,content=pred,truth=pred"), value_maps={}, builder="m",
                builder_family="O", reviews=None, review_column_map={}, families=Families(),
                truth_equals=("pred", "answer"))
    assert caught.value.errors == [
        '--truth-equals: the truth is mapped to column "pred" and derived from two columns: give one',
        'aime.jsonl: no column "answer" (named by --truth-equals); the columns are: pred, q']


def test_tables_per_builder_refuse_a_model_named_twice_or_a_builder_column_beside_them():
    one = Source("a.jsonl", jsonl({"q": "1+1", "pred": "2"}))
    with pytest.raises(ConversionError) as caught:
        convert(outputs=None, table_format="jsonl", column_map=parse_map("task=q,content=pred,builder=q"),
                value_maps={}, builder=None, builder_family=None, reviews=None, review_column_map={},
                families=Families({"m": "O"}), per_builder=[("m", one), ("m", one)])
    assert caught.value.errors[:2] == [
        "--outputs-per-builder: names each file's builder: give no other table of outputs, "
        "constant builder or builder column with it",
        '--outputs-per-builder: "m": each file needs its own model']
