"""The SWE-bench importer on real harness output (tests/data/swebench, sources in
tests/data/README.md) and on every input it must refuse."""

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from content.bundle import validate_bundle
from content.importers import swebench
from content.importers.common import ConversionError, Families, Source

# No database, no socket, no process: run once (tests/support/pure.py).
pytestmark = pytest.mark.pure

DATA = Path(__file__).resolve().parent.parent / "data" / "swebench"
SCHEMA = Path(__file__).resolve().parents[2] / "content" / "schemas" / "run-bundle-2.schema.json"
IDS = ["astropy__astropy-12907", "astropy__astropy-13033", "astropy__astropy-13236"]
QWEN, GRAPHRAG = "qwen-mini", "qwen-mini-graphrag"


def real(name: str) -> Source:
    return Source(f"swebench/{name}", (DATA / name).read_bytes())


def preds():
    return [real("qwen-mini.preds.jsonl"), real("qwen-mini-graphrag.preds.jsonl")]


def reports():
    return [real("qwen-mini.vanilla.json"), real("qwen-mini-graphrag.graphrag_tdd.json")]


def run(**changes):
    args = dict(predictions=preds(), reports=reports(), dataset=real("dataset.jsonl"),
                families=Families())
    args.update(changes)
    return swebench.convert(**args)


def refusal(**changes) -> list[str]:
    with pytest.raises(ConversionError) as caught:
        run(**changes)
    return caught.value.errors


def line(source_name: str, rows: list) -> Source:
    return Source(source_name, "".join(json.dumps(r) + "\n" for r in rows).encode())


def rows_of(name: str) -> list[dict]:
    return [json.loads(x) for x in (DATA / name).read_text().splitlines() if x.strip()]


# --- the real files --------------------------------------------------------------------------

def test_real_files_convert_with_truth_from_the_real_reports():
    imported = run()
    bundle = imported.bundle
    assert [t["id"] for t in bundle["tasks"]] == IDS
    assert all(t["format"] == "text" and t["cluster"] == "astropy/astropy" and t["title"] == t["id"]
               for t in bundle["tasks"])
    statements = {r["instance_id"]: r["problem_statement"] for r in rows_of("dataset.jsonl")}
    assert {t["id"]: t["statement"] for t in bundle["tasks"]} == statements
    assert bundle["builders"] == [
        {"id": "b1", "model": QWEN, "family": "Alibaba"},
        {"id": "b2", "model": GRAPHRAG, "family": "Alibaba"}]
    by_builder = {(c["builder"], c["task"]): c for c in bundle["copies"]}
    # The reports, trimmed to these three instances: qwen-mini resolved 13236 and not the other
    # two; qwen-mini-graphrag resolved none and gave an empty patch for 12907, unresolved as
    # SWE-bench counts it (issue 27 item 7: it was `unknown`, out of every comparison).
    assert {k: c["truth"] for k, c in by_builder.items()} == {
        ("b1", IDS[0]): "tests_fail", ("b1", IDS[1]): "tests_fail", ("b1", IDS[2]): "tests_pass",
        ("b2", IDS[0]): "tests_fail", ("b2", IDS[1]): "tests_fail", ("b2", IDS[2]): "tests_fail"}
    for name, builder in (("qwen-mini.preds.jsonl", "b1"),
                          ("qwen-mini-graphrag.preds.jsonl", "b2")):
        for row in rows_of(name):
            copy = by_builder[(builder, row["instance_id"])]
            assert copy["content"] == row["model_patch"] and copy["format"] == "diff"
    assert imported.summary["tasks"] == 3
    assert imported.summary["builders"] == {QWEN: 3, GRAPHRAG: 3}
    assert imported.summary["copies_by_truth"] == {"tests_fail": 5, "tests_pass": 1}
    assert imported.summary["skipped"] == {}
    assert imported.summary["not_in_report"] == {}
    assert imported.summary["empty_patches"] == {GRAPHRAG: 1}
    assert imported.summary["harness_errors"] == {}


def test_counts_match_the_real_reports():
    bundle = run().bundle
    for name, builder in (("qwen-mini.vanilla.json", "b1"),
                          ("qwen-mini-graphrag.graphrag_tdd.json", "b2")):
        report = json.loads((DATA / name).read_text())
        truths = [c["truth"] for c in bundle["copies"] if c["builder"] == builder]
        assert truths.count("tests_pass") == report["resolved_instances"]
        # The harness's own resolved rate counts an empty patch as not resolved.
        assert truths.count("tests_fail") == (report["unresolved_instances"]
                                              + report["empty_patch_instances"])
        assert truths.count("unknown") == report["error_instances"]


def test_output_validates_against_the_schema_and_the_product_validator():
    bundle = run().bundle
    schema = json.loads(SCHEMA.read_text())
    assert list(Draft202012Validator(schema).iter_errors(bundle)) == []
    raw = json.dumps(bundle, ensure_ascii=False).encode()
    validated = validate_bundle(raw, max_bundle_bytes=50 * 1024 * 1024,
                                max_copy_bytes=1024 * 1024)
    assert [t["id"] for t in validated.data["tasks"]] == IDS
    assert len(validated.data["copies"]) == 6


def test_older_layouts_a_json_list_and_a_dict_keyed_by_instance_are_read_alike():
    rows = rows_of("qwen-mini.preds.jsonl")
    as_list = Source("swebench/all_preds.json", json.dumps(rows, indent=2).encode())
    keyed = {r["instance_id"]: {k: v for k, v in r.items() if k != "instance_id"} for r in rows}
    as_dict = Source("swebench/preds.json", json.dumps(keyed, indent=2).encode())
    one_line = Source("swebench/preds1.json", json.dumps(keyed).encode())
    expected = run().bundle
    for source in (as_list, as_dict, one_line):
        got = run(predictions=[source, real("qwen-mini-graphrag.preds.jsonl")]).bundle
        assert got == expected


def test_one_mixed_predictions_file_is_the_same_as_one_per_model():
    mixed = Source("swebench/mixed.jsonl", b"".join(s.data for s in preds()))
    assert run(predictions=[mixed]).bundle == run().bundle


# --- sampling --------------------------------------------------------------------------------

def test_sample_is_reproducible_and_every_sampled_instance_was_attempted_by_every_model():
    first = run(instances=2, seed="s1")
    again = run(instances=2, seed="s1", predictions=list(reversed(preds())),
                reports=list(reversed(reports())))
    assert first.bundle == again.bundle
    chosen = [t["id"] for t in first.bundle["tasks"]]
    assert len(chosen) == 2
    for builder in ("b1", "b2"):
        assert sorted(c["task"] for c in first.bundle["copies"] if c["builder"] == builder) \
            == sorted(chosen)
    assert first.summary["skipped"] == {"not sampled": 1}
    seeds = {tuple(t["id"] for t in run(instances=1, seed=str(s)).bundle["tasks"])
             for s in range(12)}
    assert len(seeds) > 1  # the seed matters
    # Growing N only adds instances: the sample is the N smallest HMAC keys.
    assert set(chosen) <= {t["id"] for t in run(instances=3, seed="s1").bundle["tasks"]}


def test_instances_not_attempted_by_every_model_are_skipped_and_counted():
    graphrag = [r for r in rows_of("qwen-mini-graphrag.preds.jsonl") if r["instance_id"] != IDS[2]]
    report = json.loads((DATA / "qwen-mini-graphrag.graphrag_tdd.json").read_text())
    report["unresolved_ids"] = [i for i in report["unresolved_ids"] if i != IDS[2]]
    imported = run(predictions=[real("qwen-mini.preds.jsonl"),
                                line("swebench/g.jsonl", graphrag)],
                   reports=[real("qwen-mini.vanilla.json"),
                            Source("swebench/qwen-mini-graphrag.x.json",
                                   json.dumps(report).encode())])
    assert [t["id"] for t in imported.bundle["tasks"]] == IDS[:2]
    assert imported.summary["skipped"] == {"not attempted by every model": 1}


def test_an_instance_the_report_does_not_mention_is_unknown_and_counted():
    report = json.loads((DATA / "qwen-mini.vanilla.json").read_text())
    report["resolved_ids"] = []
    imported = run(reports=[Source("swebench/qwen-mini.r.json", json.dumps(report).encode()),
                            real("qwen-mini-graphrag.graphrag_tdd.json")])
    truth = {(c["builder"], c["task"]): c["truth"] for c in imported.bundle["copies"]}
    assert truth[("b1", IDS[2])] == "unknown"
    assert imported.summary["not_in_report"] == {QWEN: 1}


# --- refusals --------------------------------------------------------------------------------

def test_without_a_dataset_it_refuses():
    assert refusal(dataset=None) == [
        "dataset: no dataset file given: every task needs its problem_statement, which "
        "predictions do not carry; pass the SWE-bench dataset (JSONL, JSON or Parquet)"]


def test_malformed_lines_missing_fields_and_wrong_types_name_file_and_line():
    bad = Source("p.jsonl", b'{"instance_id": "x", "model_name_or_path": "gpt-4o",'
                            b' "model_patch": ""}\n'
                            b'{not json\n'
                            b'[1]\n'
                            b'{"model_name_or_path": "gpt-4o", "model_patch": ""}\n'
                            b'{"instance_id": 7, "model_name_or_path": "gpt-4o", '
                            b'"model_patch": 3}\n')
    errors = refusal(predictions=[bad])
    assert "p.jsonl:2: malformed JSON: Expecting property name enclosed in double quotes" \
        in errors
    assert "p.jsonl:3: a line is a JSON object, not a list" in errors
    assert "p.jsonl:4: instance_id: missing" in errors
    assert "p.jsonl:5: model_patch: must be text, not a number" in errors


def test_a_report_naming_an_instance_with_no_prediction_is_counted_not_refused():
    """Only what is imported is checked (issue 27 item 7): a whole-run report beside predictions
    of a subset used to be refused until trimmed by hand."""
    report = json.loads((DATA / "qwen-mini.vanilla.json").read_text())
    report["resolved_ids"].append("astropy__astropy-99999")
    imported = run(reports=[Source("qwen-mini.r.json", json.dumps(report).encode()),
                            real("qwen-mini-graphrag.graphrag_tdd.json")])
    assert imported.bundle == run().bundle
    assert imported.summary["report_ids_not_predicted"] == {QWEN: 1}


def test_a_prediction_with_no_statement_in_the_dataset():
    dataset = line("d.jsonl", rows_of("dataset.jsonl")[:2])
    errors = refusal(dataset=dataset)
    assert errors == [
        f'swebench/qwen-mini.preds.jsonl:3: instance_id: "{IDS[2]}" has no problem_statement '
        "in d.jsonl",
        f'swebench/qwen-mini-graphrag.preds.jsonl:3: instance_id: "{IDS[2]}" has no '
        "problem_statement in d.jsonl"]


def test_a_model_with_no_report():
    errors = refusal(reports=[real("qwen-mini.vanilla.json"),
                              Source("other.json", real("qwen-mini.vanilla.json").data)])
    assert errors == [
        "other.json: matches no model's predictions: a report is named <model>.<run_id>.json, "
        "here one of qwen-mini.<run_id>.json, qwen-mini-graphrag.<run_id>.json",
        'reports: no run report for model "qwen-mini-graphrag" (expected a file named '
        "qwen-mini-graphrag.<run_id>.json)"]


def test_two_reports_for_one_model_and_an_ambiguous_name():
    errors = refusal(reports=[*reports(), Source("qwen-mini.again.json",
                                                 real("qwen-mini.vanilla.json").data)])
    assert errors == ["qwen-mini.again.json: a second run report for qwen-mini (the first is "
                      "swebench/qwen-mini.vanilla.json); pass one report per model"]
    # "a" and "a.b" both prefix "a.b.run.json"; submitted_ids fitting both cannot decide.
    rows = [{"instance_id": "i", "model_name_or_path": m, "model_patch": "p"}
            for m in ("gpt-4o", "gpt-4o.mini")]
    report = json.dumps({"resolved_ids": ["i"], "submitted_ids": ["i"]}).encode()
    dataset = line("d.jsonl", [{"instance_id": "i", "problem_statement": "s", "repo": "r/r"}])
    with pytest.raises(ConversionError) as caught:
        swebench.convert(predictions=[line("p.jsonl", rows)],
                         reports=[Source("gpt-4o.mini.run.json", report),
                                  Source("gpt-4o.run.json", report)],
                         dataset=dataset, families=Families())
    assert caught.value.errors == [
        "gpt-4o.mini.run.json: ambiguous: its name fits models gpt-4o, gpt-4o.mini and its "
        "submitted_ids do not decide; rename it <model>.<run_id>.json for one model",
        'reports: no run report for model "gpt-4o.mini" (expected a file named '
        "gpt-4o.mini.<run_id>.json)"]


def test_duplicate_predictions_with_different_patches():
    rows = rows_of("qwen-mini.preds.jsonl")
    again = dict(rows[0], model_patch=rows[0]["model_patch"] + "\n+changed")
    errors = refusal(predictions=[real("qwen-mini.preds.jsonl"), line("dup.jsonl", [again]),
                                  real("qwen-mini-graphrag.preds.jsonl")])
    assert errors == [f"dup.jsonl:1: model_patch: a second, different prediction for qwen-mini "
                      f"/ {IDS[0]} (the first is at swebench/qwen-mini.preds.jsonl:1)"]
    # The very same prediction twice (a re-run merged in) is harmless.
    assert run(predictions=[*preds(), real("qwen-mini.preds.jsonl")]).bundle == run().bundle


def test_unknown_families_are_one_problem_listing_every_model():
    rows = [dict(r, model_name_or_path="acme-coder") for r in rows_of("qwen-mini.preds.jsonl")]
    rows += [dict(r, model_name_or_path="zeta-7") for r in rows_of("qwen-mini.preds.jsonl")]
    report = real("qwen-mini.vanilla.json").data
    errors = refusal(predictions=[line("p.jsonl", rows)],
                     reports=[Source("acme-coder.r.json", report), Source("zeta-7.r.json", report)])
    assert errors == ["families: no known family for acme-coder, zeta-7; say which organisation "
                      "trained each with --family MODEL=ORG"]
    fixed = run(predictions=[line("p.jsonl", rows)],
                reports=[Source("acme-coder.r.json", report), Source("zeta-7.r.json", report)],
                families=Families({"acme-coder": "Acme", "zeta-7": "Zeta"}))
    assert [b["family"] for b in fixed.bundle["builders"]] == ["Acme", "Zeta"]


@pytest.mark.parametrize("data", [
    b"\xff\xfe\x00garbage", b"\x00" * 100, b"{" * 100_000, b"[" * 100_000, b"null", b"7",
    b'{"resolved_ids": "nope"}', b'{"resolved_ids": [1, 2]}', bytes(range(256)),
    b"\n" * 10 + b"x" * 2_000_000, b'{"instance_id": {"a": 1}}\n' * 3])
def test_garbage_is_only_ever_a_conversion_error(data):
    for changes in ({"predictions": [Source("g", data)]}, {"reports": [Source("g", data)]},
                    {"dataset": Source("g", data)}):
        with pytest.raises(ConversionError) as caught:
            run(**changes)
        assert caught.value.errors and all(isinstance(e, str) for e in caught.value.errors)


def test_an_oversize_file_is_refused_before_parsing():
    big = Source("big.jsonl", b" " * (swebench.MAX_INPUT_BYTES + 1))
    errors = refusal(predictions=[big, *preds()])
    assert errors[0] == (f"big.jsonl: {swebench.MAX_INPUT_BYTES + 1:,} bytes; at most "
                         f"{swebench.MAX_INPUT_BYTES:,} are read from one file (the bundle "
                         "they make must fit its own limit)")


def test_a_bad_instances_count_is_refused():
    assert refusal(instances=0) == ["--instances: must be a positive whole number, not 0"]


# --- report schema versions (issue 27 item 2) --------------------------------------------------------

@pytest.mark.parametrize("version", [3, 1, "2", None])
def test_a_run_report_of_a_schema_version_not_read_is_refused_by_name(version):
    report = json.loads((DATA / "qwen-mini.vanilla.json").read_text())
    assert report["schema_version"] == 2
    report["schema_version"] = version
    edited = Source("swebench/qwen-mini.vanilla.json", json.dumps(report).encode())
    shown = version if type(version) is int else repr(version)
    assert refusal(reports=[edited, real("qwen-mini-graphrag.graphrag_tdd.json")]) == [
        f"swebench/qwen-mini.vanilla.json: schema_version: run report schema_version {shown}: "
        "this importer reads version 2"]


def test_a_run_report_without_a_schema_version_is_read_by_its_keys():
    report = json.loads((DATA / "qwen-mini.vanilla.json").read_text())
    del report["schema_version"]
    edited = Source("swebench/qwen-mini.vanilla.json", json.dumps(report).encode())
    assert run(reports=[edited, real("qwen-mini-graphrag.graphrag_tdd.json")]).bundle == run().bundle


# --- the layouts the SWE-bench world keeps (issue 27 item 6) ----------------------------------
# swe-bench/experiments' run folder (all_preds.jsonl, results/results.json), mini-swe-agent's run
# folder as the experiments keep it (trajs/preds.json, trajs/<id>/<id>.traj.json,
# logs/<id>/report.json), the harness's per-instance report.json; sources in tests/data/README.md.

EXPERIMENTS = "experiments/evaluation/verified/20250519_vorflux_opus46-code_gpt55h-review"
VORFLUX = "vorflux_opus46-code_gpt55h-review"
MINI = "mini/20251118_gemini-3-pro-74pct"
GEMINI = "google/gemini-3-pro-preview"
FAMILIES = {VORFLUX: "Anthropic"}  # Opus 4.6 writes the code (its metadata.yaml)


def experiments_preds():
    return real(f"{EXPERIMENTS}/all_preds.jsonl")


def results_json():
    return real(f"{EXPERIMENTS}/results/results.json")


def mini_preds():
    return real(f"{MINI}/trajs/preds.json")


def mini_reports():
    return [real(f"{MINI}/logs/{iid}/report.json") for iid in IDS[:2]]


def trajectory():
    return real(f"{MINI}/trajs/{IDS[0]}/{IDS[0]}.traj.json")


def truths(imported, model):
    builder = next(b["id"] for b in imported.bundle["builders"] if b["model"] == model)
    return {c["task"]: c["truth"] for c in imported.bundle["copies"] if c["builder"] == builder}


def test_the_experiments_results_json_and_all_preds_import():
    """Refused before as "not a SWE-bench run report". results.json lists the resolved; every
    other predicted instance failed."""
    imported = run(predictions=[experiments_preds()], reports=[results_json()],
                   families=Families(FAMILIES))
    assert truths(imported, VORFLUX) == {IDS[0]: "tests_pass", IDS[1]: "tests_fail",
                                        IDS[2]: "tests_pass"}
    by_id = {r["instance_id"]: r["model_patch"] for r in rows_of(f"{EXPERIMENTS}/all_preds.jsonl")}
    assert {c["task"]: c["content"] for c in imported.bundle["copies"]} == by_id
    assert imported.summary["reports"] == {VORFLUX: f"swebench/{EXPERIMENTS}/results/results.json"}
    assert imported.summary["not_in_report"] == {}


def test_results_json_no_generation_is_an_empty_patch_and_no_logs_is_unknown():
    """The real results.json with 13033 moved to no_logs and 13236 to no_generation (its
    all_preds row dropped, as the experiments' runs keep no row for an instance with no
    generation): fail = predicted - resolved - no_generation - no_logs."""
    results = json.loads(results_json().data)
    results["resolved"] = [IDS[0]]
    results["no_logs"] = [IDS[1]]
    results["no_generation"] = [IDS[2]]
    edited = Source(results_json().name, json.dumps(results, indent=2).encode())
    rows = [r for r in rows_of(f"{EXPERIMENTS}/all_preds.jsonl") if r["instance_id"] != IDS[2]]
    preds_ = line(experiments_preds().name, rows)
    imported = run(predictions=[preds_], reports=[edited], families=Families(FAMILIES))
    assert truths(imported, VORFLUX) == {IDS[0]: "tests_pass", IDS[1]: "unknown",
                                        IDS[2]: "tests_fail"}
    assert imported.summary["empty_patches"] == {VORFLUX: 1}
    assert imported.summary["harness_errors"] == {VORFLUX: 1}
    empty = next(c for c in imported.bundle["copies"] if c["task"] == IDS[2])
    assert empty["content"] == ""
    assert imported.places["copies[2].content"] == \
        f"swebench/{EXPERIMENTS}/results/results.json: no_generation: model_patch"
    kept = run(predictions=[preds_], reports=[edited], families=Families(FAMILIES),
               empty_patch="unknown")
    assert truths(kept, VORFLUX)[IDS[2]] == "unknown"
    assert kept.summary["empty_patch"] == "unknown"


def test_a_mini_swe_agent_run_folder_with_per_instance_reports():
    """preds.json (a dict keyed by instance) with the experiments' logs/<id>/report.json: 12907
    resolved, 13033 not; 13236's report is not in the excerpt, so it is unknown and counted."""
    imported = run(predictions=[mini_preds()], reports=mini_reports(),
                   trajectories=[trajectory()])
    assert [b["model"] for b in imported.bundle["builders"]] == [GEMINI]
    assert imported.bundle["builders"][0]["family"] == "Google"
    assert truths(imported, GEMINI) == {IDS[0]: "tests_pass", IDS[1]: "tests_fail",
                                       IDS[2]: "unknown"}
    assert imported.summary["not_in_report"] == {GEMINI: 1}
    assert imported.summary["reports"] == {GEMINI: "2 per-instance report.json"}
    assert imported.summary["trajectories"] == {GEMINI: {"Submitted": 1}}
    patches = json.loads(mini_preds().data)
    assert {c["task"]: c["content"] for c in imported.bundle["copies"]} == \
        {iid: patches[iid]["model_patch"] for iid in IDS}


def test_a_trajectory_whose_submission_is_not_the_predicted_patch_is_refused():
    traj = json.loads(trajectory().data)
    traj["info"]["submission"] += "\n"
    edited = Source(trajectory().name, json.dumps(traj).encode())
    assert refusal(predictions=[mini_preds()], reports=mini_reports(), trajectories=[edited]) == [
        f"{trajectory().name}: info.submission: is not the patch swebench/{MINI}/trajs/preds.json: "
        f"{IDS[0]} holds for {IDS[0]}: the trajectory and the predictions are of different runs"]


def test_the_harness_per_instance_layout_names_the_model_by_its_folder():
    """The harness writes logs/run_evaluation/<run>/<model>/<id>/report.json as {id: {…}}: the
    experiments' unwrapped reports, wrapped so, in that folder (an alteration in memory)."""
    wrapped = [Source(f"logs/run_evaluation/r1/google__gemini-3-pro-preview/{iid}/report.json",
                      json.dumps({iid: json.loads(s.data)}).encode())
               for iid, s in zip(IDS[:2], mini_reports(), strict=True)]
    imported = run(predictions=[*preds(), mini_preds()], reports=[*reports(), *wrapped])
    assert truths(imported, GEMINI) == {IDS[0]: "tests_pass", IDS[1]: "tests_fail",
                                       IDS[2]: "unknown"}
    assert truths(imported, QWEN) == {IDS[0]: "tests_fail", IDS[1]: "tests_fail",
                                     IDS[2]: "tests_pass"}
    # Uploaded without their folders, several models' per-instance reports cannot be told apart.
    bare = [Source("report.json", s.data) for s in mini_reports()[:1]]
    assert refusal(predictions=[*preds(), mini_preds()], reports=[*reports(), *bare]) == [
        "report.json: a per-instance report without its instance id: the harness keeps it as "
        "{instance_id: {…}}, the experiments' logs in a folder named by the instance "
        "(logs/<instance_id>/report.json); give it with its folder"]


def test_four_models_from_three_layouts_on_the_same_instances():
    imported = run(predictions=[*preds(), experiments_preds(), mini_preds()],
                   reports=[*reports(), results_json(), *mini_reports()],
                   trajectories=[trajectory()], families=Families(FAMILIES))
    assert [t["id"] for t in imported.bundle["tasks"]] == IDS
    assert imported.summary["builders"] == {QWEN: 3, GRAPHRAG: 3, VORFLUX: 3, GEMINI: 3}
    assert imported.summary["copies_by_truth"] == {"tests_fail": 7, "tests_pass": 4, "unknown": 1}
    assert imported.summary["reports"] == {
        GEMINI: "2 per-instance report.json", QWEN: "swebench/qwen-mini.vanilla.json",
        GRAPHRAG: "swebench/qwen-mini-graphrag.graphrag_tdd.json",
        VORFLUX: f"swebench/{EXPERIMENTS}/results/results.json"}


def test_a_results_json_beside_several_models_without_its_folder_is_refused():
    bare = Source("results.json", results_json().data)
    errors = refusal(predictions=[*preds(), experiments_preds()], reports=[*reports(), bare],
                     families=Families(FAMILIES))
    assert errors == [
        "results.json: cannot tell which model's results.json this is: its folder is not beside "
        "one model's predictions (give each run's folder with --run-dir, or import one model's "
        "files at a time)",
        'reports: no run report for model "vorflux_opus46-code_gpt55h-review" (expected a file '
        "named vorflux_opus46-code_gpt55h-review.<run_id>.json)"]


# --- subsets by id; the dataset as the host has it (issue 27 item 7) --------------------------

def test_instance_ids_pick_exactly_those_and_only_their_statements_are_needed():
    dataset = line("d.jsonl", [r for r in rows_of("dataset.jsonl") if r["instance_id"] != IDS[1]])
    imported = run(instance_ids=[IDS[2], IDS[0]], dataset=dataset)
    assert [t["id"] for t in imported.bundle["tasks"]] == [IDS[0], IDS[2]]
    assert imported.summary["skipped"] == {"not named": 1}
    assert imported.summary["instance_ids"] == 2


def test_instances_file_one_id_a_line_or_a_json_list():
    as_lines = Source("ids.txt", f"# the two astropy ones\n{IDS[0]}\n\n{IDS[2]}  # resolved\n"
                      .encode())
    as_json = Source("ids.json", json.dumps([IDS[0], IDS[2]]).encode())
    expected = run(instance_ids=[f"{IDS[0]},{IDS[2]}"]).bundle
    assert run(instances_file=as_lines).bundle == expected
    assert run(instances_file=as_json).bundle == expected
    assert refusal(instances_file=Source("ids.txt", b"a b\n")) == [
        "ids.txt:1: one instance id a line (e.g. astropy__astropy-12907)"]


def test_ids_not_predicted_by_every_model_are_one_refusal_listing_them():
    graphrag = line("g.jsonl", [r for r in rows_of("qwen-mini-graphrag.preds.jsonl")
                                if r["instance_id"] != IDS[2]])
    errors = refusal(predictions=[real("qwen-mini.preds.jsonl"), graphrag],
                     instance_ids=[IDS[0], IDS[2], "django__django-1"])
    assert errors == [
        "--instance-ids: 2 of the 3 ids named are not predicted by every model: "
        f"{IDS[2]} (no prediction from qwen-mini-graphrag); django__django-1 (no prediction "
        "from qwen-mini, qwen-mini-graphrag)"]
    assert refusal(instance_ids=[IDS[0]], instances=1) == [
        "--instances: draws a sample; --instance-ids and --instances-file name the instances: "
        "give one or the other"]


def test_a_bad_empty_patch_policy_is_refused():
    assert refusal(empty_patch="pass") == ["--empty-patch: must be fail or unknown, not 'pass'"]


def test_the_parquet_dataset_reads_as_its_jsonl():
    """dataset.parquet: the committed dataset.jsonl's rows written by pyarrow (the shape of the
    Hugging Face dataset's file); pyarrow is in the test extra, so this runs in CI."""
    assert real("dataset.parquet").data[:4] == b"PAR1"
    imported = run(dataset=real("dataset.parquet"))
    assert imported.bundle == run().bundle
    assert imported.places["tasks[1].statement"] == \
        "swebench/dataset.parquet: [1]: problem_statement"


def test_a_parquet_dataset_is_capped_by_its_own_metadata_before_its_columns_are_read(monkeypatch):
    import pyarrow as pa  # noqa: PLC0415 - order: a test of the Parquet reader builds its own file
    import pyarrow.parquet as pq  # noqa: PLC0415 - order: as above

    rows = [{"instance_id": f"i{n}", "repo": "r/r", "problem_statement": "x" * 400 + str(n)}
            for n in range(200)]
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), buffer, compression="zstd")
    data = buffer.getvalue()
    monkeypatch.setattr(swebench, "MAX_INPUT_BYTES", 20_000)
    assert len(data) < 20_000
    errors = refusal(dataset=Source("big.parquet", data))
    assert len(errors) == 1 and errors[0].startswith(
        "big.parquet: its columns instance_id, problem_statement, repo hold ")
    assert errors[0].endswith("bytes uncompressed; at most 20,000 are read")
    no_statement = io.BytesIO()
    pq.write_table(pa.Table.from_pylist([{"instance_id": "i"}]), no_statement)
    assert refusal(dataset=Source("d.parquet", no_statement.getvalue())) == [
        "d.parquet: no column problem_statement (a SWE-bench dataset has instance_id, "
        "problem_statement, repo)"]
    assert refusal(dataset=Source("bad.parquet", b"PAR1" + b"\x00" * 64 + b"PAR1")) == [
        "bad.parquet: not a readable Parquet file (OSError)"]


@pytest.mark.parametrize("data", [b"\xff\xfe\x00garbage", b"null", b'{"info": 3}', b"[" * 100_000,
                                  b'{"a": {"resolved": 1}}'])
def test_garbage_trajectories_and_reports_are_only_ever_conversion_errors(data):
    for changes in ({"trajectories": [Source("t/x.traj.json", data)]},
                    {"reports": [*reports(), Source("logs/x/report.json", data)]},
                    {"instances_file": Source("ids.txt", data)}):
        try:
            run(**changes)
        except ConversionError as error:
            assert error.errors and all(isinstance(e, str) for e in error.errors)


WITHOUT_PYARROW = """
import sys
sys.modules["pyarrow"] = None  # as if the parquet extra were not installed
sys.modules["pyarrow.parquet"] = None
from pathlib import Path
from content.importers import swebench
from content.importers.common import ConversionError, Families, Source
data = Path("tests/data/swebench")
def real(name):
    return Source("swebench/" + name, (data / name).read_bytes())
try:
    swebench.convert(predictions=[real("qwen-mini.preds.jsonl")],
                     reports=[real("qwen-mini.vanilla.json")], dataset=real("dataset.parquet"),
                     families=Families())
except ConversionError as refused:
    print("\\n".join(refused.errors))
"""


@pytest.mark.pure(False)
def test_without_the_parquet_extra_a_parquet_dataset_is_refused_naming_the_extra():
    """Run in a process of its own where pyarrow cannot be imported: nothing of ours is mocked."""
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run([sys.executable, "-c", WITHOUT_PYARROW], capture_output=True,
                            text=True, timeout=120, cwd=root)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == (
        "swebench/dataset.parquet: a Parquet dataset needs pyarrow, which is not installed: "
        "pip install 'blindjudge[parquet]' (or give the dataset as JSONL)")
