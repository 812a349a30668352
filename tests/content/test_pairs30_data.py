"""pairs30 (tests/data/pairs30/, tests/data/README.md "pairs30"): two public SWE-bench Verified
runs over the same 40 instances, imported through the product's own SWE-bench import as one
run of two builders (tests/support/pairs30.py), with the counts the README states."""

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from judging.models import Run
from tests.support import pairs30

README = Path(__file__).resolve().parents[1] / "data" / "README.md"


def truths_by_builder(bundle: dict) -> dict[str, Counter]:
    names = {b["id"]: b["model"] for b in bundle["builders"]}
    counts: dict[str, Counter] = {}
    for copy in bundle["copies"]:
        counts.setdefault(names[copy["builder"]], Counter())[copy["truth"]] += 1
    return counts


def truth_table(bundle: dict) -> dict[str, dict[str, str]]:
    names = {b["id"]: b["model"] for b in bundle["builders"]}
    table: dict[str, dict[str, str]] = {}
    for copy in bundle["copies"]:
        table.setdefault(copy["task"], {})[names[copy["builder"]]] = copy["truth"]
    return table


@pytest.mark.pure
def test_the_readme_states_the_figures_the_loader_checks():
    """The README's "Checked counts" line for pairs30 says what TASKS and BUILDERS say."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## pairs30"):]
    section = section[:section.index("\n## ", 1)] if "\n## " in section[1:] else section
    stated = " ".join(section.split())
    expected = (f"Checked counts: {pairs30.TASKS} tasks, {len(pairs30.BUILDERS)} builders, "
                f"{pairs30.TASKS * len(pairs30.BUILDERS)} copies, one per builder and task; "
                + "; ".join(f"`{name}` tests_pass {t['tests_pass']}, tests_fail {t['tests_fail']}"
                            for name, t in pairs30.BUILDERS.items())
                + f"; {len(pairs30.SPLIT)} tasks where exactly one builder resolved")
    assert expected in stated


@pytest.mark.pure
def test_the_two_runs_import_as_one_run_of_40_tasks_and_two_builders():
    imported = pairs30.imported()
    bundle, summary = imported.bundle, imported.summary
    assert len(bundle["tasks"]) == summary["tasks"] == pairs30.TASKS
    assert {b["model"] for b in bundle["builders"]} == set(pairs30.BUILDERS)
    assert len(bundle["copies"]) == pairs30.TASKS * len(pairs30.BUILDERS)
    assert summary["builders"] == {name: pairs30.TASKS for name in pairs30.BUILDERS}
    assert truths_by_builder(bundle) == {name: Counter(t) for name, t in pairs30.BUILDERS.items()}
    # Nothing decided for the host: every instance predicted by both, in both reports, a patch.
    assert summary["skipped"] == {} and summary["not_in_report"] == {}
    assert summary["empty_patches"] == {} and summary["harness_errors"] == {}
    assert summary["report_ids_not_predicted"] == {}
    assert summary["reports"] == {pairs30.VORFLUX: str(pairs30.VORFLUX_RUN / "results" / "results.json"),
                                  pairs30.GEMINI: str(pairs30.GEMINI_REPORT)}


@pytest.mark.pure
def test_every_task_has_both_builders_and_the_split_pairs_are_the_readmes():
    table = truth_table(pairs30.bundle())
    assert len(table) == pairs30.TASKS
    assert all(set(row) == set(pairs30.BUILDERS) for row in table.values())
    split = {task for task, row in table.items() if len(set(row.values())) > 1}
    assert split == set(pairs30.SPLIT)
    assert all(table[task][pairs30.VORFLUX] == "tests_pass" for task in split)
    both_fail = [t for t, row in table.items() if set(row.values()) == {"tests_fail"}]
    assert len(both_fail) == 4


@pytest.mark.pure
def test_each_task_shows_its_dataset_rows_statement_and_each_copy_its_prediction():
    bundle = pairs30.bundle()
    rows = [json.loads(line) for line in pairs30.DATASET.read_text(encoding="utf-8").splitlines()]
    statements = {row["instance_id"]: row["problem_statement"] for row in rows}
    assert {t["id"]: t["statement"] for t in bundle["tasks"]} == statements
    vorflux = {json.loads(line)["instance_id"]: json.loads(line)["model_patch"] for line in
               (pairs30.VORFLUX_RUN / "all_preds.jsonl").read_text(encoding="utf-8").splitlines()}
    gemini = {i: p["model_patch"] for i, p in json.loads(
        (pairs30.MINI_RUN / "trajs" / "preds.json").read_text(encoding="utf-8")).items()}
    names = {b["id"]: b["model"] for b in bundle["builders"]}
    for copy in bundle["copies"]:
        patches = vorflux if names[copy["builder"]] == pairs30.VORFLUX else gemini
        assert copy["content"] == patches[copy["task"]]
        assert copy["content"].startswith("diff --git ")


@pytest.mark.pure
def test_the_files_are_trimmed_as_the_readme_says():
    """Each kept file is its original's own layout (see excerpt.py); counts agree with lists."""
    results = (pairs30.VORFLUX_RUN / "results" / "results.json").read_text(encoding="utf-8")
    assert results == json.dumps(json.loads(results), indent=2)
    preds = (pairs30.MINI_RUN / "trajs" / "preds.json").read_text(encoding="utf-8")
    assert preds == json.dumps(json.loads(preds), indent=2)
    raw = pairs30.GEMINI_REPORT.read_text(encoding="utf-8")
    report = json.loads(raw)
    assert raw == json.dumps(report, indent=4) and report["schema_version"] == 2
    for key, value in report.items():
        if key.endswith("_instances") and key != "total_instances":
            assert value == len(report[key.replace("_instances", "_ids")]), key
    assert report["total_instances"] == 500
    assert sorted(report["submitted_ids"]) == sorted(json.loads(preds))
    lines = pairs30.DATASET.read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    assert lines == [json.dumps(row) for row in rows]
    assert [list(row) for row in rows] == [["instance_id", "repo", "problem_statement"]] * len(rows)
    ids = [row["instance_id"] for row in rows]
    assert ids == sorted(ids)
    assert all(re.fullmatch(r"[\w.-]+/[\w.-]+", row["repo"]) for row in rows)
    total = sum(p.stat().st_size for p in pairs30.DATA.rglob("*") if p.is_file())
    assert total < 300_000


@pytest.mark.pure
def test_the_rows_shared_with_the_swebench_excerpt_are_the_same():
    """The three astropy rows tests/data/swebench/dataset.jsonl already holds (found elsewhere,
    checked against the same public file) are identical here."""
    older = Path(__file__).resolve().parents[1] / "data" / "swebench" / "dataset.jsonl"
    here = {json.loads(x)["instance_id"]: x for x in pairs30.DATASET.read_text().splitlines()}
    for line in older.read_text(encoding="utf-8").splitlines():
        assert here[json.loads(line)["instance_id"]] == line


def test_the_import_command_writes_the_run(host):
    run, result = pairs30.import_run_for(host)
    assert result["summary"]["copies_by_truth"] == {"tests_pass": 66, "tests_fail": 14}
    assert run.name == pairs30.NAME and run.tasks.count() == pairs30.TASKS
    assert run.copies.count() == pairs30.TASKS * len(pairs30.BUILDERS)
    assert Run.objects.filter(pk=run.pk).exists()
