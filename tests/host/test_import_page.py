"""The host's import page beyond bundles: a table of outputs (JSONL or CSV) with its reviews,
uploaded through the page with the options `import_run --from` takes; the summary shown after
the import; every refusal, the converter's or the validator's, listed on the form with nothing
written and the typed options kept."""

import json
import re
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from host.forms import IMPORT_FIELD_FORMATS, IMPORT_SOURCES, RunImportForm
from judging.models import Copy, Review, Run, Task
from tests.host.test_host_pages import page, url
from tests.support.seed_tables import SEED_TABLE_FIELDS
from tests.worlds import bundle_bytes, client_as

SEED = Path(__file__).resolve().parents[1] / "data" / "seed000"
SEED_FIELDS = {**SEED_TABLE_FIELDS, "name": "Does a prior verdict anchor your AI reviewer?"}


@pytest.fixture
def alice(host):
    """alice's browser, signed in."""
    return client_as(host)


def file(path: Path | str, raw: bytes | None = None):
    path = Path(path)
    return SimpleUploadedFile(path.name, path.read_bytes() if raw is None else raw)


def nothing_written():
    return not (Run.objects.exists() or Task.objects.exists() or Copy.objects.exists()
                or Review.objects.exists())


def errors_listed(response) -> list[str]:
    found = re.search(r'<ul class="errorlist">(.*?)</ul>', page(response), re.S)
    return re.findall(r"<li>(.*?)</li>", found.group(1), re.S) if found else []


@pytest.mark.django_db
def test_the_seed_tables_import_through_the_page_and_the_summary_is_shown(alice, host):
    response = alice.post(url("run_import"), {
        **SEED_FIELDS, "outputs": file(SEED / "items-v1.jsonl"),
        "reviews": file(SEED / "reviews-v1.jsonl")}, follow=True)
    run = Run.objects.get()
    assert response.redirect_chain[-1][0] == url("run", run_id=run.pk)
    assert run.name == SEED_FIELDS["name"] and run.host == host
    assert run.tasks.count() == 30 and run.copies.count() == 180 and run.reviews.count() == 1620
    shown = page(response)
    assert "tasks: 30" in shown
    assert "copies by truth: known_good 90, seeded_defect 90" in shown
    assert "Qwen/Qwen2.5-Coder-1.5B-Instruct / clean: 180 (83 abstentions)" in shown
    assert f"Run {run.pk} imported: 180 copies" in shown


@pytest.mark.django_db
def test_a_csv_upload_with_a_constant_builder(alice, host):
    raw = "prompt,answer,label\nAdd two numbers.,a + b,correct\nSubtract.,a + b,buggy\n"
    response = alice.post(url("run_import"), {
        "source": "csv", "outputs": file("outputs.csv", raw.encode("utf-8-sig")),
        "column_map": "task=prompt,content=answer,truth=label",
        "values": "truth:buggy=seeded_defect,correct=known_good",
        "builder": "gpt-4o", "copy_format": "markdown"})
    assert response.status_code == 303
    run = Run.objects.get()
    assert run.copies.count() == 2
    assert set(run.copies.values_list("truth", flat=True)) == {"known_good", "seeded_defect"}


@pytest.mark.django_db
def test_every_conversion_error_is_listed_the_options_kept_and_nothing_written(alice, host):
    raw = b'{"prompt": "a", "answer": "x"}\n{"prompt": "b"}\nnot json\n'
    response = alice.post(url("run_import"), {
        "source": "jsonl", "outputs": file("outputs.jsonl", raw),
        "column_map": "task=prompt,content=answer", "builder": "gpt-4o",
        "families": "gpt-4o=OpenAI"})
    assert response.status_code == 400
    listed = errors_listed(response)
    assert any(line.startswith("outputs.jsonl:2: ") for line in listed), listed
    assert any(line.startswith("outputs.jsonl:3: ") for line in listed), listed
    shown = page(response)
    assert 'value="task=prompt,content=answer"' in shown  # the typed options stay
    assert 'value="jsonl" selected' in shown
    assert nothing_written()


@pytest.mark.django_db
def test_a_review_naming_no_copy_is_refused_with_its_line(alice, host):
    reviews = (SEED / "reviews-v1.jsonl").read_bytes()
    reviews += reviews.splitlines(keepends=True)[0].replace(b'"item": "', b'"item": "ffff', 1)
    response = alice.post(url("run_import"), {
        **SEED_FIELDS, "outputs": file(SEED / "items-v1.jsonl"),
        "reviews": file("reviews-v1.jsonl", reviews)})
    assert response.status_code == 400
    assert any(line.startswith("reviews-v1.jsonl:1621: ") for line in errors_listed(response))
    assert nothing_written()


@pytest.mark.django_db
def test_a_missing_table_and_a_bad_map_are_refused(alice, host):
    missing = alice.post(url("run_import"), {"source": "csv", "column_map": "task=a,content=b"})
    assert missing.status_code == 400 and "This field is required for the format csv" in page(missing)
    bad_map = alice.post(url("run_import"), {
        "source": "csv", "outputs": file("o.csv", b"a,b\n1,2\n"), "column_map": "task=a,nonsense=b",
        "builder": "gpt-4o"})
    assert bad_map.status_code == 400 and "nonsense" in page(bad_map)
    assert nothing_written()


@pytest.mark.django_db
def test_a_validator_refusal_after_conversion_writes_nothing(alice, host, settings):
    # Converts (the table is well formed) but the run validator refuses a copy over its limit.
    settings.BLINDJUDGE_MAX_COPY_BYTES = 100
    raw = b"prompt,answer\nAdd.," + b"x" * 500 + b"\n"
    response = alice.post(url("run_import"), {
        "source": "csv", "outputs": file("o.csv", raw), "column_map": "task=prompt,content=answer",
        "builder": "m", "builder_family": "O"})
    assert response.status_code == 400
    # The host's own file, line and column, not the converted bundle's place.
    assert errors_listed(response) == ["o.csv:2: answer: 500 bytes exceeds the per-copy limit of 100 bytes"]
    assert nothing_written()


@pytest.mark.django_db
def test_an_uploaded_bundle_still_imports_with_the_format_chosen(alice, host):
    response = alice.post(url("run_import"), {
        "source": "bundle", "bundle": file("bundle.json", bundle_bytes())})
    assert response.status_code == 303 and Run.objects.count() == 1


INSPECT = Path(__file__).resolve().parents[1] / "data" / "inspect"
POPULARITY_EVAL = "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"


@pytest.mark.django_db
def test_an_inspect_log_uploads_with_its_truth_scorer(alice, host):
    response = alice.post(url("run_import"), {
        "source": "inspect", "logs": [file(INSPECT / POPULARITY_EVAL)], "truth_scorer": "match",
        "truth_values": "C=tests_pass,I=tests_fail"}, follow=True)
    run = Run.objects.get()
    assert run.tasks.count() == 10
    # The log's own accuracy is 0.8: 8 of its 10 samples scored C.
    assert "copies by truth: tests_fail 2, tests_pass 8" in page(response)


@pytest.mark.django_db
def test_an_inspect_log_without_samples_epoch_is_refused_on_the_form(alice, host):
    response = alice.post(url("run_import"), {
        "source": "inspect", "logs": [file(INSPECT / POPULARITY_EVAL)], "truth_scorer": "match",
        "epoch": "3"})
    assert response.status_code == 400 and errors_listed(response)
    assert 'name="epoch" value="3"' in page(response) or 'value="3"' in page(response)
    assert nothing_written()


@pytest.mark.django_db
def test_an_inspect_log_without_its_grader_imports_with_the_grader_field(alice, host):
    """The grader field, shown beside the review scorer, names the grader of a finished log that
    does not record it (here a real log with its grader evidence removed)."""
    name = "2025-05-12T20-28-26-04-00_security-guide.json"
    data = json.loads((INSPECT / name).read_bytes())
    for sample in data["samples"]:
        sample["events"] = []
        sample["scores"]["model_graded_fact"].pop("metadata", None)
    fields = {"source": "inspect", "logs": [file(name, json.dumps(data).encode())],
              "review_scorer": "model_graded_fact"}
    response = alice.post(url("run_import"), fields)
    assert response.status_code == 400 and nothing_written()
    listed = errors_listed(response)
    assert len(listed) == 1 and "does not name the grader model of 3 samples" in listed[0]
    assert 'name="grader"' in page(response)
    fields["logs"] = [file(name, json.dumps(data).encode())]
    response = alice.post(url("run_import"), {**fields, "grader": "anthropic/claude-3-5-haiku"},
                          follow=True)
    run = Run.objects.get()
    assert list(run.reviewers.values_list("bundle_id", "family")) == [
        ("anthropic/claude-3-5-haiku", "Anthropic")]
    assert "anthropic/claude-3-5-haiku / clean: 3" in page(response)


SWEBENCH = Path(__file__).resolve().parents[1] / "data" / "swebench"


@pytest.mark.django_db
def test_swebench_files_upload_several_at_once(alice, host):
    response = alice.post(url("run_import"), {
        "source": "swebench",
        "predictions": [file(SWEBENCH / "qwen-mini.preds.jsonl"),
                        file(SWEBENCH / "qwen-mini-graphrag.preds.jsonl")],
        "reports": [file(SWEBENCH / "qwen-mini.vanilla.json"),
                    file(SWEBENCH / "qwen-mini-graphrag.graphrag_tdd.json")],
        "dataset": file(SWEBENCH / "dataset.jsonl"), "name": "SWE-bench excerpt"}, follow=True)
    run = Run.objects.get()
    assert run.name == "SWE-bench excerpt"
    assert len(set(run.copies.values_list("builder", flat=True))) == 2
    assert "copies by truth:" in page(response)


@pytest.mark.django_db
def test_the_same_table_twice_is_refused_unless_the_host_imports_it_again(alice, host):
    raw = b"prompt,answer\nAdd.,a + b\nSubtract.,\n"
    fields = {"source": "csv", "column_map": "task=prompt,content=answer", "builder": "m",
              "builder_family": "O"}
    first = alice.post(url("run_import"), {**fields, "outputs": file("o.csv", raw)}, follow=True)
    run = Run.objects.get()
    # The empty answer is imported as a blank copy, and the host is told so.
    assert "empty outputs imported as blank copies: 1" in page(first)
    second = alice.post(url("run_import"), {**fields, "outputs": file("o.csv", raw)})
    assert second.status_code == 400
    [refusal] = errors_listed(second)
    assert refusal.startswith(f"this run was imported already: run {run.pk} (o.csv)")
    assert Run.objects.count() == 1
    again = alice.post(url("run_import"), {**fields, "outputs": file("o.csv", raw), "again": "on"})
    assert again.status_code == 303 and Run.objects.count() == 2


@pytest.mark.django_db
def test_tables_per_builder_upload_with_their_builders_named(alice, host):
    data = SEED.parent / "swebench"
    fields = {"source": "jsonl", "column_map": "task=instance_id,content=model_patch",
              "families": "qwen-mini=Alibaba\nqwen-mini-graphrag=Alibaba"}
    uploads = [file(data / "qwen-mini.preds.jsonl"), file(data / "qwen-mini-graphrag.preds.jsonl")]
    unnamed = alice.post(url("run_import"), {**fields, "outputs_per_builder": uploads,
                                             "per_builder_models": "qwen-mini=qwen-mini.preds.jsonl"})
    assert unnamed.status_code == 400
    assert errors_listed(unnamed) == [
        "Builder of each table: name the builder of qwen-mini-graphrag.preds.jsonl "
        "(MODEL=qwen-mini-graphrag.preds.jsonl)"]
    assert nothing_written()
    uploads = [file(data / "qwen-mini.preds.jsonl"), file(data / "qwen-mini-graphrag.preds.jsonl")]
    named = alice.post(url("run_import"), {
        **fields, "outputs_per_builder": uploads,
        "per_builder_models": "qwen-mini=qwen-mini.preds.jsonl\n"
                              "qwen-mini-graphrag=qwen-mini-graphrag.preds.jsonl"})
    assert named.status_code == 303
    run = Run.objects.get()
    assert sorted(run.builders.values_list("model", flat=True)) == ["qwen-mini", "qwen-mini-graphrag"]
    assert run.copies.count() == 6 and run.name == "qwen-mini.preds.jsonl"


def test_swebench_instance_ids_and_the_empty_patch_rule_through_the_page(alice, host):
    response = alice.post(url("run_import"), {
        "source": "swebench",
        "predictions": [file(SWEBENCH / "qwen-mini.preds.jsonl"),
                        file(SWEBENCH / "qwen-mini-graphrag.preds.jsonl")],
        "reports": [file(SWEBENCH / "qwen-mini.vanilla.json"),
                    file(SWEBENCH / "qwen-mini-graphrag.graphrag_tdd.json")],
        "dataset": file(SWEBENCH / "dataset.parquet"),
        "instance_ids": "astropy__astropy-12907, astropy__astropy-13236",
        "empty_patch": "unknown"}, follow=True)
    run = Run.objects.get()
    assert sorted(run.tasks.values_list("bundle_id", flat=True)) == [
        "astropy__astropy-12907", "astropy__astropy-13236"]
    assert "copies by truth: tests_fail 2, tests_pass 1, unknown 1" in page(response)
    response = alice.post(url("run_import"), {
        "source": "swebench",
        "predictions": [file(SWEBENCH / "qwen-mini.preds.jsonl")],
        "reports": [file(SWEBENCH / "qwen-mini.vanilla.json")],
        "dataset": file(SWEBENCH / "dataset.jsonl"),
        "instances_file": file("ids.txt", b"astropy__astropy-99999\n")})
    assert response.status_code == 400
    assert errors_listed(response) == [
        "--instance-ids: 1 of the 1 ids named are not predicted by every model: "
        "astropy__astropy-99999 (no prediction from qwen-mini)"]


@pytest.mark.django_db
def test_the_heap_is_given_back_after_an_import_and_after_a_refusal(alice, host, monkeypatch):
    """What an import allocated in the serving process is returned to the system after it
    (blindjudge/memory.py; issue 32 item 3), whether the import was written or refused."""
    trims = []
    monkeypatch.setattr("host.views.runs.trim_heap", lambda: trims.append(Run.objects.count()))
    alice.post(url("run_import"), {**SEED_FIELDS, "outputs": file(SEED / "items-v1.jsonl"),
                                   "reviews": file(SEED / "reviews-v1.jsonl")})
    response = alice.post(url("run_import"), {
        "source": "jsonl", "outputs": file("outputs.jsonl", b"not json\n"),
        "column_map": "task=prompt,content=answer", "builder": "gpt-4o"})
    assert response.status_code == 400
    assert trims == [1, 1]


def test_every_import_field_but_the_format_and_again_belongs_to_formats_that_exist():
    """The page shows a format's fields only (IMPORT_FIELD_FORMATS, by a style rule): a field left
    out of the map would show for every format, one naming a format that does not exist for none."""
    fields = set(RunImportForm().fields)
    assert set(IMPORT_FIELD_FORMATS) == fields - {"source", "again"}
    sources = {source for source, _ in IMPORT_SOURCES}
    assert all(formats and set(formats) <= sources for formats in IMPORT_FIELD_FORMATS.values())
    # The file each format cannot do without is among the fields shown for it.
    for source, needed in {"bundle": "bundle", "jsonl": "outputs", "csv": "outputs",
                           "swebench": "predictions", "inspect": "logs"}.items():
        assert source in IMPORT_FIELD_FORMATS[needed]


@pytest.mark.django_db
def test_each_import_field_box_carries_the_formats_it_is_shown_for(alice):
    shown = page(alice.get(url("runs")))
    assert re.search(r'<form [^>]*class="card by-format"', shown)
    boxes = {name: classes for classes, name in re.findall(
        r'<div class="field([^"]*)">\s*(?:<label for="id_|<input type="checkbox" name=")(\w+)"',
        shown)}
    for name, formats in IMPORT_FIELD_FORMATS.items():
        assert boxes[name].split() == ["format-field", *(f"for-{f}" for f in formats)], name
    assert boxes["source"] == "" and boxes["again"].split() == ["check"]
