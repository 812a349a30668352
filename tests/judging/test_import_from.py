"""`import_run --from jsonl|csv`: a table of outputs (and one of reviews) converted, validated whole
by run_import and written as one run, the summary printed; every refusal, the converter's or the
validator's, exits non-zero with its lines and leaves the database as it was."""

import io
import json
import zipfile
from pathlib import Path

import pytest

from judging.models import AuditEvent, Copy, Review, Run, Task
from tests.judging.test_commands import call, call_json, refused, refused_plain

SEED = Path(__file__).resolve().parents[1] / "data" / "seed000"
SEED_ARGS = [
    "--from", "jsonl", str(SEED / "items-v1.jsonl"), "--host", "alice",
    "--map", "task=task,statement=doc,content=source,truth=label,copy=id,defect=change",
    "--values", "truth:buggy=seeded_defect,correct=known_good verdict:PASS=pass,FAIL=fail,NONE=abstain",
    "--builder", "review_items_v1", "--builder-family", "profrod.ai",
    "--reviews", str(SEED / "reviews-v1.jsonl"), "--review-map", "reviewer=model,copy=item",
    "--name", "Does a prior verdict anchor your AI reviewer?",
]


def nothing_written():
    return not (Run.objects.exists() or Task.objects.exists() or Copy.objects.exists()
                or Review.objects.exists()
                or AuditEvent.objects.filter(action="run.imported").exists())


def test_the_seed_article_imports_as_one_run_of_30_tasks_and_1620_reviews(host):
    result = call_json("import_run", *SEED_ARGS)
    run = Run.objects.get(pk=result["run"])
    assert run.name == "Does a prior verdict anchor your AI reviewer?"
    assert run.tasks.count() == 30 and run.copies.count() == 180
    assert run.reviews.count() == 1620
    assert set(run.reviews.values_list("condition", flat=True)) == {
        "clean", "anchored-pass", "anchored-fail"}
    assert run.reviews.filter(verdict="abstain").count() == 83 + 125 + 121 + 6 + 5 + 6
    assert result["summary"]["copies_by_truth"] == {"known_good": 90, "seeded_defect": 90}
    assert result["summary"]["reviews"]["Qwen/Qwen3-1.7B / anchored-fail"] == 180


def test_the_plain_output_is_the_summary_then_the_run_id(host):
    lines = call("import_run", *SEED_ARGS).splitlines()
    assert lines[:3] == ["tasks: 30", "builders: review_items_v1 (180 copies)",
                         "copies by truth: known_good 90, seeded_defect 90"]
    assert "  Qwen/Qwen2.5-Coder-1.5B-Instruct / clean: 180 (83 abstentions)" in lines
    run = Run.objects.get()
    assert f"run {run.pk} imported: {run.name}" in lines


def test_a_csv_table_with_a_constant_builder(host, tmp_path):
    path = tmp_path / "outputs.csv"
    path.write_text("prompt,answer,label\nAdd two numbers.,a + b,correct\n"
                    "Subtract.,a + b,buggy\n", encoding="utf-8-sig")
    result = call_json("import_run", "--from", "csv", str(path), "--host", "alice",
                       "--map", "task=prompt,content=answer,truth=label",
                       "--values", "truth:buggy=seeded_defect,correct=known_good",
                       "--builder", "gpt-4o", "--format", "markdown")
    run = Run.objects.get(pk=result["run"])
    assert run.tasks.count() == 2
    assert set(run.copies.values_list("format", flat=True)) == {"markdown"}
    assert result["summary"]["builders"] == {"gpt-4o": 2}


def test_a_conversion_refusal_lists_every_line_and_writes_nothing(host, tmp_path):
    path = tmp_path / "outputs.jsonl"
    path.write_bytes(b'{"prompt": "p", "model": "house-model", "response": "r"}\n'
                     b'{"prompt": "p", "model": \n')
    args = ["import_run", "--from", "jsonl", str(path), "--host", "alice",
            "--map", "task=prompt,builder=model,content=response"]
    message = refused(*args)
    lines = message.splitlines()
    assert lines[0].startswith(f"{path}:2: not JSON")
    assert lines[1] == ("families: no known family for house-model; say which organisation "
                        "trained each with --family MODEL=ORG")
    assert refused_plain(*args) == message
    assert nothing_written()


def test_a_malformed_map_and_a_missing_outputs_file_are_refused(host, tmp_path):
    assert refused("import_run", "--from", "jsonl", "--host", "alice") == (
        "--from jsonl: name the table of outputs (or --outputs-per-builder MODEL=FILE …)")
    missing = str(tmp_path / "none.jsonl")
    assert refused("import_run", "--from", "jsonl", missing, "--host", "alice") == (
        f"no such file: {missing}")
    path = tmp_path / "o.jsonl"
    path.write_text('{"task": "t", "content": "c"}\n')
    assert refused("import_run", "--from", "jsonl", str(path), "--host", "alice",
                   "--map", "task", "--builder", "m", "--builder-family", "O") == (
        '--map: "task" is not TARGET=COLUMN')
    assert nothing_written()


def test_a_validator_refusal_after_conversion_writes_nothing(host, tmp_path, settings):
    path = tmp_path / "o.jsonl"
    path.write_text(json.dumps({"task": "t", "content": "x" * 500}) + "\n")
    settings.BLINDJUDGE_MAX_COPY_BYTES = 100
    message = refused("import_run", "--from", "jsonl", str(path), "--host", "alice",
                      "--builder", "m", "--builder-family", "O")
    # Named by the host's own file, line and column, not by the bundle they never saw.
    assert message == f"{path}:1: content: 500 bytes exceeds the per-copy limit of 100 bytes"
    assert nothing_written()


@pytest.mark.parametrize("fmt", ["swebench", "inspect"])
def test_the_other_formats_are_reached_by_their_own_options(host, fmt):
    # With no files they refuse through their importer (or say it is not installed): never a
    # traceback, nothing written.
    message = refused("import_run", "--from", fmt, "--host", "alice")
    assert message
    assert nothing_written()


def test_swebench_real_files_import_through_the_command(host):
    data = SEED.parent / "swebench"
    result = call_json(
        "import_run", "--from", "swebench", "--host", "alice",
        "--predictions", str(data / "qwen-mini.preds.jsonl"), str(data / "qwen-mini-graphrag.preds.jsonl"),
        "--report", str(data / "qwen-mini.vanilla.json"), str(data / "qwen-mini-graphrag.graphrag_tdd.json"),
        "--dataset", str(data / "dataset.jsonl"), "--name", "SWE-bench excerpt")
    run = Run.objects.get(pk=result["run"])
    assert run.name == "SWE-bench excerpt"
    assert run.copies.count() == sum(result["summary"]["copies_by_truth"].values())


def test_inspect_real_log_imports_through_the_command_with_its_truth_values(host):
    log = (SEED.parent / "inspect" / "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval")
    result = call_json("import_run", "--from", "inspect", "--host", "alice", "--log", str(log),
                       "--truth-scorer", "match", "--truth-values", "C=tests_pass,I=tests_fail")
    assert result["summary"]["tasks"] == 10
    assert result["summary"]["copies_by_truth"] == {"tests_pass": 8, "tests_fail": 2}
    assert Run.objects.get(pk=result["run"]).copies.count() == 10


# --- problems found after the conversion name the host's own places (issue 27 items 3, 4) ---------

def swebench_args(data, predictions) -> list[str]:
    return ["import_run", "--from", "swebench", "--host", "alice",
            "--predictions", predictions, str(data / "qwen-mini-graphrag.preds.jsonl"),
            "--report", str(data / "qwen-mini.vanilla.json"),
            str(data / "qwen-mini-graphrag.graphrag_tdd.json"), "--dataset", str(data / "dataset.jsonl")]


def test_a_lone_surrogate_or_a_nul_in_a_patch_is_refused_by_the_hosts_file_and_line(host, tmp_path):
    """A model_patch ending in \\udc80 is valid JSON but not text: it crashed the conversion with a
    UnicodeEncodeError. A NUL was refused as `copies[1].content`, a place in a bundle the host
    never saw. Both are now refused at the predictions file's own line and field."""
    data = SEED.parent / "swebench"
    lines = (data / "qwen-mini.preds.jsonl").read_text().splitlines()
    second, third = json.loads(lines[1]), json.loads(lines[2])
    second["model_patch"] += "\udc80"
    third["model_patch"] = third["model_patch"][:69] + "\x00" + third["model_patch"][69:]
    predictions = tmp_path / "qwen-mini.preds.jsonl"
    predictions.write_text("\n".join([lines[0], json.dumps(second), json.dumps(third)]) + "\n")
    message = refused(*swebench_args(data, str(predictions)))
    assert sorted(message.splitlines()) == [
        f"{predictions}:2: model_patch: contains a lone surrogate (U+DC80) at character 1198",
        f"{predictions}:3: model_patch: contains a NUL byte at character 69",
    ]
    assert nothing_written()


POPULARITY = "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"


def edited_eval(tmp_path, edit_sample) -> Path:
    """The real popularity log with each sample edited in memory (edit_sample(name, sample)),
    written beside the test under its own name."""
    with zipfile.ZipFile(SEED.parent / "inspect" / POPULARITY) as real:
        members = {info.filename: real.read(info) for info in real.infolist()}
    for member in [m for m in members if m.startswith("samples/")]:
        sample = json.loads(members[member])
        edit_sample(member, sample)
        members[member] = json.dumps(sample).encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as edited:
        for member, data in members.items():
            edited.writestr(member, data)
    log = tmp_path / POPULARITY
    log.write_bytes(buffer.getvalue())
    return log


def test_a_lone_surrogate_in_an_inspect_output_is_refused_by_the_log_and_sample(host, tmp_path):
    """inspect-ai writes JSON; an output holding \\ud800 is valid JSON and not text."""
    def surrogate(member, sample):
        if member == "samples/3_epoch_1.json":
            sample["output"]["choices"][0]["message"]["content"] = "No\ud800"
    log = edited_eval(tmp_path, surrogate)
    assert refused("import_run", "--from", "inspect", "--host", "alice", "--log", str(log),
                   "--truth-scorer", "match", "--truth-values", "C=tests_pass,I=tests_fail") == (
        f"{log}:samples/3_epoch_1.json: output: contains a lone surrogate (U+D800) at character 2")
    assert nothing_written()


# --- what the importer decided, printed (issue 27 item 5) ---------------------------------------------

def test_the_printed_summary_says_what_the_swebench_importer_decided(host, tmp_path):
    """A stale report (it does not mention a prediction) and a prediction given twice, alike:
    both were decided silently, visible only under --json."""
    data = SEED.parent / "swebench"
    lines = (data / "qwen-mini.preds.jsonl").read_text().splitlines()
    predictions = tmp_path / "qwen-mini.preds.jsonl"
    empty = json.loads(lines[2])
    empty["model_patch"] = ""
    predictions.write_text("\n".join([lines[0], lines[1], json.dumps(empty), lines[0]]) + "\n")
    report = json.loads((data / "qwen-mini.vanilla.json").read_text())
    report["unresolved_ids"].remove("astropy__astropy-12907")
    stale = tmp_path / "qwen-mini.vanilla.json"
    stale.write_text(json.dumps(report))
    printed = call("import_run", "--from", "swebench", "--host", "alice",
                   "--predictions", str(predictions), str(data / "qwen-mini-graphrag.preds.jsonl"),
                   "--report", str(stale), str(data / "qwen-mini-graphrag.graphrag_tdd.json"),
                   "--dataset", str(data / "dataset.jsonl")).splitlines()
    assert "truth unknown: 1 of qwen-mini's predictions are not in its run report (a stale report?)" \
        in printed
    assert "exact duplicates dropped: 1" in printed
    assert "empty patches of qwen-mini: 1, counted as not resolved (tests_fail)" in printed


def test_the_printed_summary_says_which_scores_no_truth_rule_maps(host, tmp_path):
    """A model-graded score of 0.5 that no rule maps leaves the copy's truth unknown: said."""
    def partial(member, sample):
        if sample["scores"]["match"]["value"] == "I":
            sample["scores"]["match"]["value"] = 0.5
    log = edited_eval(tmp_path, partial)
    printed = call("import_run", "--from", "inspect", "--host", "alice", "--log", str(log),
                   "--truth-scorer", "match").splitlines()
    assert "copies by truth: tests_pass 8, unknown 2" in printed
    assert "truth unknown: 2 copies scored with values no --truth-values rule maps: 0.5 (2)" in printed


def test_one_table_per_builder_imports_as_the_same_run_as_one_table_of_both(host, tmp_path):
    """The SWE-bench predictions are one JSONL table per model, as most eval scripts write
    results: read per builder, they make the run their concatenation makes with a builder column."""
    data = SEED.parent / "swebench"
    table = ["--map", "task=instance_id,content=model_patch", "--family", "qwen-mini=Alibaba",
             "--family", "qwen-mini-graphrag=Alibaba", "--name", "per builder"]
    per_builder = call_json(
        "import_run", "--from", "jsonl", "--host", "alice", *table, "--outputs-per-builder",
        f"qwen-mini={data / 'qwen-mini.preds.jsonl'}",
        f"qwen-mini-graphrag={data / 'qwen-mini-graphrag.preds.jsonl'}")
    both = tmp_path / "both.jsonl"
    both.write_bytes((data / "qwen-mini.preds.jsonl").read_bytes()
                     + (data / "qwen-mini-graphrag.preds.jsonl").read_bytes())
    one_table = call_json("import_run", "--from", "jsonl", str(both), "--host", "alice", *table,
                          "--map", "task=instance_id,content=model_patch,builder=model_name_or_path",
                          "--again")
    assert per_builder["manifest_sha256"] == one_table["manifest_sha256"]
    assert per_builder["summary"]["builders"] == {"qwen-mini": 3, "qwen-mini-graphrag": 3}
    assert refused("import_run", "--from", "jsonl", "--host", "alice",
                   "--outputs-per-builder", str(both)) == (
        f'--outputs-per-builder: "{both}" is not MODEL=FILE')


# --- the resampling units the host chooses (issue 27 item 10) ------------------------------------------

def swebench_files(data) -> list[str]:
    return ["--predictions", str(data / "qwen-mini.preds.jsonl"),
            str(data / "qwen-mini-graphrag.preds.jsonl"), "--report",
            str(data / "qwen-mini.vanilla.json"), str(data / "qwen-mini-graphrag.graphrag_tdd.json"),
            "--dataset", str(data / "dataset.jsonl")]


def test_swebench_tasks_are_their_own_units_unless_the_host_groups_them_by_repository(host):
    """Every instance of the excerpt is astropy's: grouped by repository, the builders' comparison
    would have one unit to resample, and no answer."""
    data = SEED.parent / "swebench"
    default = call_json("import_run", "--from", "swebench", "--host", "alice", *swebench_files(data))
    assert default["summary"]["units"] == {"by": "task", "count": 3}
    assert set(Task.objects.filter(run_id=default["run"]).values_list("cluster", flat=True)) == {""}
    by_repo = call_json("import_run", "--from", "swebench", "--host", "alice", *swebench_files(data),
                        "--cluster", "repo", "--again")
    assert by_repo["summary"]["units"] == {"by": "cluster", "count": 1}
    assert set(Task.objects.filter(run_id=by_repo["run"]).values_list("cluster", flat=True)) == {
        "astropy/astropy"}
    assert refused("import_run", "--from", "swebench", "--host", "alice", *swebench_files(data),
                   "--cluster", "eval") == (
        f'{data / "dataset.jsonl"}: 3 of the imported instances\' rows have no column "eval" '
        "(named by --cluster)")


def test_swebench_tasks_group_by_a_dataset_column_the_host_names(host, tmp_path):
    """SWE-bench Verified's rows carry `version`; the excerpt's three rows are given one here."""
    data = SEED.parent / "swebench"
    rows = [json.loads(line) for line in (data / "dataset.jsonl").read_text().splitlines()]
    for row, version in zip(rows, ("4.3", "4.3", "5.0"), strict=True):
        row["version"] = version
    dataset = tmp_path / "dataset.jsonl"
    dataset.write_text("".join(json.dumps(row) + "\n" for row in rows))
    files = [*swebench_files(data)[:-1], str(dataset)]
    result = call_json("import_run", "--from", "swebench", "--host", "alice", *files,
                       "--cluster", "version")
    assert result["summary"]["units"] == {"by": "cluster", "count": 2}
    assert sorted(Task.objects.filter(run_id=result["run"]).values_list("cluster", flat=True)) == [
        "4.3", "4.3", "5.0"]


def test_inspect_samples_group_by_a_metadata_key_the_host_names(host, tmp_path):
    def topic(member, sample):
        sample["metadata"]["topic"] = "even" if sample["id"] % 2 == 0 else "odd"
    log = edited_eval(tmp_path, topic)
    args = ["import_run", "--from", "inspect", "--host", "alice", "--log", str(log),
            "--truth-scorer", "match", "--cluster"]
    assert call_json(*args, "topic")["summary"]["units"] == {"by": "cluster", "count": 2}
    # label_confidence, the key the real samples carry, is a number: read as its text.
    assert call_json(*args, "label_confidence", "--again")["summary"]["units"]["count"] == 10
    assert refused(*args, "colour", "--again") == (
        '--cluster: 10 samples have no metadata "colour" (a sample metadata key, or task, none or '
        "eval)")


def test_inspect_samples_are_their_own_units_unless_grouped_by_their_eval(host):
    log = SEED.parent / "inspect" / POPULARITY
    args = ["import_run", "--from", "inspect", "--host", "alice", "--log", str(log),
            "--truth-scorer", "match"]
    printed = call(*args).splitlines()
    assert "resampling units: 10 tasks (each its own unit)" in printed
    assert call_json(*args, "--cluster", "eval", "--again")["summary"]["units"] == {
        "by": "cluster", "count": 1}


def test_a_tables_cluster_column_is_kept_chosen_or_dropped_as_the_host_says(host, tmp_path):
    path = tmp_path / "o.csv"
    path.write_text("prompt,answer,topic,year\nAdd.,a + b,arith,2024\nSub.,a - b,arith,2025\n"
                    "Sort.,sorted(x),lists,2025\n")
    args = ["import_run", "--from", "csv", str(path), "--host", "alice", "--builder", "m",
            "--builder-family", "O", "--map", "task=prompt,content=answer,cluster=topic"]

    def clusters(result):
        return sorted(Task.objects.filter(run_id=result["run"]).values_list("cluster", flat=True))

    assert clusters(call_json(*args)) == ["arith", "arith", "lists"]
    assert clusters(call_json(*args, "--cluster", "task", "--again")) == ["", "", ""]
    by_year = [*args[:-1], "task=prompt,content=answer", "--cluster", "year", "--again"]
    assert clusters(call_json(*by_year)) == ["2024", "2025", "2025"]
    assert refused(*args, "--cluster", "year", "--again") == (
        '--cluster: "year", but --map reads the cluster from column "topic": give one')
    # A map that does not parse is said as such, whatever --cluster names.
    assert refused(*args[:-1], "task", "--cluster", "year", "--again") == (
        '--map: "task" is not TARGET=COLUMN')


# --- the SWE-bench layouts, whole run folders and subsets by id (issue 27 items 6, 7) ---------

def test_swebench_run_folders_of_three_layouts_import_through_the_command(host):
    """The command docs/importing.md shows: the harness's run reports beside their predictions,
    an experiments run folder and a mini-swe-agent run folder given whole with --run-dir."""
    data = SEED.parent / "swebench"
    result = call_json(
        "import_run", "--from", "swebench", "--host", "alice",
        "--predictions", str(data / "qwen-mini.preds.jsonl"), str(data / "qwen-mini-graphrag.preds.jsonl"),
        "--report", str(data / "qwen-mini.vanilla.json"), str(data / "qwen-mini-graphrag.graphrag_tdd.json"),
        "--run-dir", str(data / "experiments/evaluation/verified/20250519_vorflux_opus46-code_gpt55h-review"),
        str(data / "mini/20251118_gemini-3-pro-74pct"),
        "--dataset", str(data / "dataset.parquet"),
        "--family", "vorflux_opus46-code_gpt55h-review=Anthropic")
    summary = result["summary"]
    assert summary["tasks"] == 3
    assert set(summary["builders"]) == {"qwen-mini", "qwen-mini-graphrag",
                                        "vorflux_opus46-code_gpt55h-review",
                                        "google/gemini-3-pro-preview"}
    assert summary["copies_by_truth"] == {"tests_fail": 7, "tests_pass": 4, "unknown": 1}
    assert summary["empty_patches"] == {"qwen-mini-graphrag": 1}
    assert summary["trajectories"] == {"google/gemini-3-pro-preview": {"Submitted": 1}}
    assert Run.objects.get(pk=result["run"]).copies.count() == 12


def test_swebench_instance_ids_and_the_empty_patch_rule_through_the_command(host, tmp_path):
    data = SEED.parent / "swebench"
    ids = tmp_path / "ids.txt"
    ids.write_text("astropy__astropy-12907\n")
    result = call_json(*swebench_args(data, str(data / "qwen-mini.preds.jsonl")),
                       "--instances-file", str(ids), "--empty-patch", "unknown")
    assert result["summary"]["tasks"] == 1
    assert result["summary"]["copies_by_truth"] == {"tests_fail": 1, "unknown": 1}
    message = refused(*swebench_args(data, str(data / "qwen-mini.preds.jsonl")),
                      "--instance-ids", "astropy__astropy-99999")
    assert message == ("--instance-ids: 1 of the 1 ids named are not predicted by every model: "
                       "astropy__astropy-99999 (no prediction from qwen-mini, qwen-mini-graphrag)")
    assert refused("import_run", "--from", "swebench", "--host", "alice", "--run-dir",
                   str(tmp_path)) == f"--run-dir: {tmp_path} holds no preds.json or all_preds.jsonl"


# --- current inspect logs and graders the log does not record (issue 27 items 1, 8) -------------

CURRENT = SEED.parent / "inspect" / "current"


def test_current_inspect_logs_zstd_and_chunked_import_through_the_command(host):
    """inspect-ai's logs as it writes them today (Zstandard members, one of them in the chunked
    sample layout) were refused: `header.json: cannot be read from the zip`."""
    result = call_json("import_run", "--from", "inspect", "--host", "alice",
                       "--log", str(CURRENT / "arithmetic_alpha.eval"),
                       str(CURRENT / "arithmetic_beta_chunked.eval"),
                       "--truth-scorer", "match", "--review-scorer", "model_graded_fact",
                       "--family", "mockllm/alpha=Mock Labs", "--family", "mockllm/beta=Mock Labs")
    run = Run.objects.get(pk=result["run"])
    assert run.tasks.count() == 4 and run.copies.count() == 8
    assert result["summary"]["copies_by_truth"] == {"tests_pass": 6, "tests_fail": 2}
    assert run.reviews.count() == 8


def test_a_log_that_does_not_name_its_grader_is_refused_once_then_imports_with_grader(host, tmp_path):
    """A real log with its grader evidence removed (no scorer events, no grading messages): one
    refusal line for all its samples, not one per sample; `--grader` names the grader of a
    finished log, its family as any model's."""
    name = "2025-05-12T20-28-26-04-00_security-guide.json"
    data = json.loads((SEED.parent / "inspect" / name).read_bytes())
    for sample in data["samples"]:
        sample["events"] = []
        sample["scores"]["model_graded_fact"].pop("metadata", None)
    log = tmp_path / name
    log.write_text(json.dumps(data))
    args = ["import_run", "--from", "inspect", "--host", "alice", "--log", str(log),
            "--review-scorer", "model_graded_fact"]
    lines = refused(*args).splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"{log}: scores.model_graded_fact: the log does not name the grader "
                               "model of 3 samples (")
    assert "name it with --grader MODEL" in lines[0]
    assert nothing_written()
    result = call_json(*args, "--grader", "house-grader-7", "--family", "house-grader-7=House Labs")
    run = Run.objects.get(pk=result["run"])
    assert list(run.reviewers.values_list("bundle_id", "family")) == [("house-grader-7", "House Labs")]
    assert set(run.reviews.values_list("reviewer__bundle_id", flat=True)) == {"house-grader-7"}
    assert run.reviews.count() == 3
