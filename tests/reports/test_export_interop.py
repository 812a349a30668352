"""The verdicts back out (issue 27 item 11): `export_report --format inspect` writes new inspect-ai
logs whose samples carry the judges' verdicts and the truth used as added scores, read back here
by inspect-ai's own read_eval_log (in a venv of its own: tests/support/inspect_reader.py); and
`--format swebench-jsonl` writes one row per SWE-bench instance and model.

The worlds are real files imported through import_run (inspect-ai's popularity log, 10 samples;
the SWE-bench excerpts of tests/data/swebench), judged through the services and revealed. Every
expected value is worked out from the input files and the planted verdicts, never read back from
the code under test.
"""

import hashlib
import io
import json
import math
import shutil
import zipfile
from datetime import datetime
from pathlib import Path

from judging.enums import SessionState
from judging.models import Run
from tests.judging.test_commands import call, call_json, refused
from tests.support.inspect_reader import read_with_inspect
from tests.support.verdicts import verdict_record
from tests.worlds import a_session, advance, answer_all, codes, invite_and_join

DATA = Path(__file__).resolve().parents[1] / "data"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "importing.md"
INSPECT = DATA / "inspect"
POPULARITY = "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"
MODEL = "openai/gpt-4o-mini"
GRADER = "anthropic/claude-3-5-haiku-latest"
J01_1, J01_2, J02_1 = "blindjudge/J01/phase1", "blindjudge/J01/phase2", "blindjudge/J02/phase1"
CORRECTED = 3  # the sample whose truth is corrected before the reveal


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as log:
        return {info.filename: log.read(info) for info in log.infolist()}


def original_samples() -> dict[int, dict]:
    """The popularity log's samples by id, as the committed file holds them."""
    return {sample["id"]: sample for name, raw in members(INSPECT / POPULARITY).items()
            if name.startswith("samples/") for sample in [json.loads(raw)]}


def judged_session(run: Run):
    """J01 passes every copy in phase 1 and fails every one in phase 2, both locked, with a
    reason in phase 2; J02 fails every copy in phase 1 (locked, a reason) and leaves one phase-2
    draft, never locked. Closed, not revealed."""
    session = a_session(run, SessionState.OPEN)
    first = invite_and_join(session, "Ann").judge
    answer_all(first, 1, "pass", lock=True)
    answer_all(first, 2, "fail", reason="on reflection", lock=True)
    second = invite_and_join(session, "Bo").judge
    answer_all(second, 1, "fail", reason="too short", lock=True)
    verdict_record(judge=second, code=codes(second)[0], phase=2, value="pass")
    return advance(session, SessionState.CLOSED)


def popularity_run(log: Path = INSPECT / POPULARITY, *more) -> Run:
    result = call_json("import_run", "--from", "inspect", "--host", "alice", "--log", str(log),
                       "--truth-scorer", "match", *more)
    run = Run.objects.get(pk=result["run"])
    call("correct_truth", str(run.pk), f"popularity#{CORRECTED}/{MODEL}", "tests_pass", "--note",
         "the reference answer was wrong")
    return run


def export(session, *args) -> dict:
    return call_json("export_report", str(session.pk), "--format", "inspect", *args)


def test_the_verdicts_and_the_truth_read_back_in_inspect_ai_with_their_provenance(host, tmp_path):
    originals = {path: sha256(path) for path in INSPECT.rglob("*") if path.is_file()}
    session = advance(judged_session(popularity_run()), SessionState.REVEALED)
    result = export(session, "--log-dir", str(INSPECT), "--output", str(tmp_path))

    exported = tmp_path / POPULARITY.replace(".eval", f".blindjudge-s{session.pk}.eval")
    report_path = tmp_path / f"blindjudge-s{session.pk}.report.json"
    assert result["logs"] == [{"from": POPULARITY, "file": str(exported), "copies": 10}]
    assert (result["copies_matched"], result["copies_unchecked"], result["not_found"]) == (10, 0, [])
    # The folder's other logs hold no copy of the run: read, left as they were, not written.
    assert result["logs_without_copies"] == [
        "2024-11-05T13-32-37-05-00_input-task_hxs4q9azL3ySGkjJirypKZ.eval",
        "2025-05-12T20-28-13-04-00_no-samples.json", "2025-05-12T20-28-26-04-00_security-guide.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([exported.name, report_path.name])
    # The originals are untouched, byte for byte, and nothing was added beside them.
    assert {path: sha256(path) for path in INSPECT.rglob("*") if path.is_file()} == originals
    report_sha = sha256(report_path)
    assert result["report_sha256"] == report_sha
    report = json.loads(report_path.read_text())
    assert report["session"]["id"] == session.pk and report["session"]["state"] == "revealed"

    # The snippet docs/importing.md gives hosts runs as written there, on this export.
    snippet = DOCS.read_text().split("Read them with inspect-ai itself:\n\n```python\n")[1]
    snippet = snippet.split("```")[0].replace(
        "logs/" + POPULARITY.replace(".eval", ".blindjudge-s3.eval"), str(exported))
    assert str(exported) in snippet
    read = read_with_inspect(exported, then=snippet)[str(exported)]
    assert (read["task"], read["model"], read["status"]) == ("popularity", MODEL, "success")
    before = original_samples()
    assert sorted(s["id"] for s in read["samples"]) == sorted(before) == list(range(1, 11))
    when = datetime.fromisoformat(report["generated_at"])
    for sample in read["samples"]:
        sid, scores = sample["id"], sample["scores"]
        assert set(scores) == {"match", "blindjudge/truth", J01_1, J01_2, J02_1}, sid
        # inspect's own score is as it was
        assert {k: scores["match"][k] for k in ("value", "answer", "explanation")} == \
            before[sid]["scores"]["match"] and scores["match"]["history"] == []
        good = before[sid]["scores"]["match"]["value"] == "C" or sid == CORRECTED
        truth = scores["blindjudge/truth"]
        assert (truth["value"], truth["answer"]) == (("C", "tests_pass") if good
                                                     else ("I", "tests_fail"))
        assert truth["metadata"]["imported_truth"] == ("tests_fail" if sid == CORRECTED
                                                       else truth["answer"])
        assert [c["note"] for c in truth["metadata"]["corrections"]] == (
            ["the reference answer was wrong"] if sid == CORRECTED else [])
        # each judge's locked verdict: the verdict as C/I, whether it was right beside it
        for name, verdict, reason, right in ((J01_1, "pass", None, good),
                                             (J01_2, "fail", "on reflection", not good),
                                             (J02_1, "fail", "too short", not good)):
            score = scores[name]
            assert (score["value"], score["answer"], score["explanation"]) == (
                "C" if verdict == "pass" else "I", verdict, reason), (sid, name)
            assert score["metadata"]["correct"] is right
            assert score["metadata"]["truth"] == truth["answer"]
        assert scores[J01_2]["metadata"]["kept"] is False
        # inspect's own score-edit provenance: who, when, the report's hash
        for name in ("blindjudge/truth", J01_1, J01_2, J02_1):
            [edit] = scores[name]["history"]
            assert sample["provenance_types"][name] == ["ProvenanceData"]
            provenance = edit["provenance"]
            assert provenance["author"] == ("blindjudge" if name.endswith("truth")
                                            else "/".join(name.split("/")[:2]))
            assert datetime.fromisoformat(provenance["timestamp"]) == when
            assert provenance["metadata"]["report_sha256"] == report_sha
            assert provenance["metadata"]["report_file"] == report_path.name
            assert provenance["metadata"]["session"] == session.pk
            assert edit["value"] == scores[name]["value"]
        # and the score_edit events inspect's edit_score would have appended, one per score
        assert sorted(e["score_name"] for e in sample["score_edits"]) == sorted(
            ["blindjudge/truth", J01_1, J01_2, J02_1])
        assert sample["events"] == len(before[sid]["events"]) + 4
        assert read["summaries"][f"{sid}/1"] == sorted(scores)

    meta = read["metadata"]["blindjudge"]
    assert read["header_metadata"] == read["metadata"] and read["header_samples"] is None
    assert meta["report"] == {"file": report_path.name, "sha256": report_sha,
                              "schema": "blindjudge.report/2", "generated_at": report["generated_at"]}
    assert meta["epoch"] == 1 and meta["session"]["id"] == session.pk
    assert [j["judge"] for j in meta["judges"]] == ["J01", "J02"]
    assert meta["judges"] == report["scores"]["judges"] and meta["model_reviewers"] == []
    # J01's phase 1 by hand: 9 good copies (8 + the corrected one) all passed, the 1 defective not caught
    phase1 = meta["judges"][0]["phases"]["1"]["current"]
    assert (phase1["tnr"]["k"], phase1["tnr"]["n"], phase1["recall"]["k"], phase1["recall"]["n"]) == \
        (9, 9, 0, 1)

    # Every other member of the log is the original's, and a sample less its additions is too.
    old, new = members(INSPECT / POPULARITY), members(exported)
    assert list(new) == list(old)
    for name in old:
        if name.startswith("samples/"):
            sample = json.loads(new[name])
            added = [e for e in sample["events"] if e.get("event") == "score_edit"]
            sample["events"] = sample["events"][:-len(added)]
            sample["scores"] = {"match": sample["scores"]["match"]}
            assert sample == json.loads(old[name]), name
        elif name == "header.json":
            header = json.loads(new[name])
            assert set(header["eval"].pop("metadata")) == {"blindjudge"}
            assert header == json.loads(old[name]) | {"eval": header["eval"]}
            assert header["eval"] == {k: v for k, v in json.loads(old[name])["eval"].items()
                                      if k != "metadata"}
        elif name != "summaries.json":
            assert new[name] == old[name], name


def test_an_unrevealed_session_a_wrong_epoch_and_a_second_export_are_refused(host, tmp_path):
    session = judged_session(popularity_run())
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(INSPECT / POPULARITY, logs / POPULARITY)
    message = refused("export_report", str(session.pk), "--format", "inspect", "--log-dir",
                      str(logs), error="conflict")
    assert message == f"session {session.pk} is closed; the report exists after the reveal"
    assert [p.name for p in logs.iterdir()] == [POPULARITY]

    session = advance(session, SessionState.REVEALED)
    message = refused("export_report", str(session.pk), "--format", "inspect", "--log-dir",
                      str(logs), "--epoch", "2")
    assert message.splitlines() == [
        f"popularity#{n}/{MODEL}: no sample at epoch 2 in the logs (epochs 1); export with the "
        "--epoch the run was imported at" for n in range(1, 11)]
    assert [p.name for p in logs.iterdir()] == [POPULARITY]
    assert refused("export_report", str(session.pk), "--format", "inspect") == \
        "--format inspect: name the logs' folder with --log-dir DIR"

    # By default the new log goes beside the original, which is left as it was.
    before = sha256(logs / POPULARITY)
    result = export(session, "--log-dir", str(logs))
    assert result["logs"][0]["file"] == str(logs / POPULARITY.replace(
        ".eval", f".blindjudge-s{session.pk}.eval"))
    assert sha256(logs / POPULARITY) == before
    # A second export never overwrites the first, and never reads it as a log.
    message = refused("export_report", str(session.pk), "--format", "inspect", "--log-dir", str(logs))
    assert message.startswith("exported files are never overwritten; already there: ")
    assert len(list(logs.iterdir())) == 3


def without_sample_3_and_with_another_epoch(path: Path) -> None:
    """The popularity log with sample 3 at epoch 2 instead of 1 (the rest as committed)."""
    old = members(INSPECT / POPULARITY)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as log:
        for name, raw in old.items():
            if name == "samples/3_epoch_1.json":
                sample = json.loads(raw)
                sample["epoch"] = 2
                log.writestr("samples/3_epoch_2.json", json.dumps(sample))
            else:
                log.writestr(name, raw)
    path.write_bytes(buffer.getvalue())


def test_a_copy_missing_from_the_logs_is_reported_and_another_epoch_of_it_refused(host, tmp_path):
    session = advance(judged_session(popularity_run()), SessionState.REVEALED)
    logs = tmp_path / "logs"
    logs.mkdir()
    without_sample_3_and_with_another_epoch(logs / POPULARITY)
    assert refused("export_report", str(session.pk), "--format", "inspect", "--log-dir",
                   str(logs)).splitlines() == [
        f"popularity#3/{MODEL}: no sample at epoch 1 in the logs (epochs 2); export with the "
        "--epoch the run was imported at"]
    # The same log without sample 3 at all: the nine others exported, the missing one named.
    old = members(logs / POPULARITY)
    with zipfile.ZipFile(logs / POPULARITY, "w", zipfile.ZIP_DEFLATED) as log:
        for name, raw in old.items():
            if name != "samples/3_epoch_2.json":
                log.writestr(name, raw)
    printed = call("export_report", str(session.pk), "--format", "inspect", "--log-dir", str(logs))
    assert "9 copies matched at epoch 1, 9 of them checked against the imported copy's hash" in printed
    assert f"1 copies of the run are in none of the logs:\n  not found: popularity#3/{MODEL}" in printed


def test_a_sample_that_is_not_the_copy_imported_is_refused(host, tmp_path):
    """A log run again (or read at another epoch than the import's) has other outputs: the
    export checks each plain output against the imported copy's hash and refuses."""
    session = advance(judged_session(popularity_run()), SessionState.REVEALED)
    logs = tmp_path / "logs"
    logs.mkdir()
    old = members(INSPECT / POPULARITY)
    with zipfile.ZipFile(logs / POPULARITY, "w", zipfile.ZIP_DEFLATED) as log:
        for name, raw in old.items():
            if name == "samples/5_epoch_1.json":
                sample = json.loads(raw)
                sample["output"]["choices"][0]["message"]["content"] += " (run again)"
                raw = json.dumps(sample).encode()
            log.writestr(name, raw)
    assert refused("export_report", str(session.pk), "--format", "inspect", "--log-dir",
                   str(logs)) == (
        f"{POPULARITY}:samples/5_epoch_1.json: its output is not copy popularity#5/{MODEL} as "
        "imported (another epoch than the import's, or a log run again?)")
    assert [p.name for p in logs.iterdir()] == [POPULARITY]


def graded_popularity(path: Path) -> dict[int, str]:
    """The popularity log as a model-graded run: a grader role in the header and a
    `model_graded_fact` score on every sample, failing samples 1-4 and passing the rest. Returns
    the grades by sample id."""
    old = members(INSPECT / POPULARITY)
    grades = {n: "I" if n <= 4 else "C" for n in range(1, 11)}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as log:
        for name, raw in old.items():
            if name == "header.json":
                header = json.loads(raw)
                header["eval"]["model_roles"] = {"grader": {"model": GRADER}}  # a ModelConfig
                raw = json.dumps(header).encode()
            elif name.startswith("samples/"):
                sample = json.loads(raw)
                sample["scores"]["model_graded_fact"] = {"value": grades[sample["id"]],
                                                         "explanation": "graded"}
                raw = json.dumps(sample).encode()
            log.writestr(name, raw)
    return grades


def test_the_model_reviewers_calibration_is_in_each_logs_header(host, tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    grades = graded_popularity(logs / POPULARITY)
    run = popularity_run(logs / POPULARITY, "--review-scorer", "model_graded_fact")
    session = advance(judged_session(run), SessionState.REVEALED)
    result = export(session, "--log-dir", str(logs))
    exported = Path(result["logs"][0]["file"])
    read = read_with_inspect(exported)[str(exported)]
    [reviewer] = read["metadata"]["blindjudge"]["model_reviewers"]
    report = json.loads(Path(result["report"]).read_text())
    [in_report] = report["scores"]["reviewers"]
    assert reviewer == {"model": GRADER, "family": "Anthropic", **in_report}
    # by hand: the defective copies are those the match scorer failed, less the corrected one
    truth = {sid: s["scores"]["match"]["value"] == "C" or sid == CORRECTED
             for sid, s in original_samples().items()}
    defective = [sid for sid, good in truth.items() if not good]
    main = reviewer["groups"]["main"]["current"]
    assert (main["recall"]["k"], main["recall"]["n"]) == (
        sum(grades[sid] == "I" for sid in defective), len(defective))
    assert (main["tnr"]["k"], main["tnr"]["n"]) == (
        sum(grades[sid] == "C" for sid, good in truth.items() if good), sum(truth.values()))
    # the grader's own scores stay in the samples, beside the added ones
    for sample in read["samples"]:
        assert sample["scores"]["model_graded_fact"]["value"] == grades[sample["id"]]
        assert "blindjudge/truth" in sample["scores"]


# --- SWE-bench ------------------------------------------------------------------------------------

SWEBENCH = DATA / "swebench"


def test_swebench_verdicts_are_one_row_per_instance_and_model(host, tmp_path):
    imported = call_json(
        "import_run", "--from", "swebench", "--host", "alice",
        "--predictions", str(SWEBENCH / "qwen-mini.preds.jsonl"),
        str(SWEBENCH / "qwen-mini-graphrag.preds.jsonl"),
        "--report", str(SWEBENCH / "qwen-mini.vanilla.json"),
        str(SWEBENCH / "qwen-mini-graphrag.graphrag_tdd.json"),
        "--dataset", str(SWEBENCH / "dataset.jsonl"))
    run = Run.objects.get(pk=imported["run"])
    session = judged_session(run)
    refused_early = refused("export_report", str(session.pk), "--format", "swebench-jsonl", "-o",
                            str(tmp_path / "v.jsonl"), error="conflict")
    assert refused_early.endswith("the report exists after the reveal")
    session = advance(session, SessionState.REVEALED)
    out = tmp_path / "verdicts.jsonl"
    call_json("export_report", str(session.pk), "--format", "swebench-jsonl", "-o", str(out))
    rows = [json.loads(line) for line in out.read_text().splitlines()]

    # The truth by hand from the harness reports and the predictions: resolved -> tests_pass,
    # unresolved or an empty patch -> tests_fail (SWE-bench's rule, the importer's default),
    # anything else unknown.
    expected = {}
    for preds, report in (("qwen-mini.preds.jsonl", "qwen-mini.vanilla.json"),
                          ("qwen-mini-graphrag.preds.jsonl", "qwen-mini-graphrag.graphrag_tdd.json")):
        outcome = json.loads((SWEBENCH / report).read_text())
        for line in (SWEBENCH / preds).read_text().splitlines():
            p = json.loads(line)
            iid = p["instance_id"]
            truth = ("tests_pass" if iid in outcome["resolved_ids"] else "tests_fail"
                     if iid in outcome["unresolved_ids"] else "unknown")
            expected[(iid, p["model_name_or_path"])] = "tests_fail" if not p["model_patch"].strip() \
                else truth
    got = {(r["instance_id"], r["model_name_or_path"]): r for r in rows}
    assert len(rows) == len(got) == run.copies.count()
    assert {key: r["truth"] for key, r in got.items()} == {key: expected[key] for key in got}
    for row in rows:
        assert row["resolved"] == {"tests_pass": True, "tests_fail": False}.get(row["truth"])
        good = row["truth"] == "tests_pass"
        known = row["truth"] != "unknown"
        # locked verdicts only: J02's phase-2 draft is not there
        assert [(v["judge"], v["phase"], v["verdict"], v["correct"]) for v in row["verdicts"]] == [
            ("J01", 1, "pass", good if known else None),
            ("J01", 2, "fail", (not good) if known else None),
            ("J02", 1, "fail", (not good) if known else None)]
        assert row["session"] == session.pk


def test_swebench_jsonl_of_an_inspect_run_is_refused(host, tmp_path):
    session = advance(judged_session(popularity_run()), SessionState.REVEALED)
    message = refused("export_report", str(session.pk), "--format", "swebench-jsonl", "-o",
                      str(tmp_path / "v.jsonl"))
    assert message == (f"run {session.run_id} was not imported from SWE-bench: copy "
                       f"popularity#1/{MODEL} is not named <builder>-<instance_id>")
    assert not (tmp_path / "v.jsonl").exists()


SECURITY_JSON = "2025-05-12T20-28-26-04-00_security-guide.json"
INPUT_TASK_EVAL = "2024-11-05T13-32-37-05-00_input-task_hxs4q9azL3ySGkjJirypKZ.eval"


def test_a_json_log_and_an_eval_log_each_get_their_copies_and_unknown_truth_is_unscored(
        host, tmp_path):
    """inspect's two log forms in one run, graded by a model the log's events name: the .json log
    is written again as .json, the .eval as .eval, each with its own copies' scores; a copy of
    unknown truth gets a NaN truth score (inspect's "unscored": left out of its metrics)."""
    logs = tmp_path / "logs"
    logs.mkdir()
    for name in (SECURITY_JSON, INPUT_TASK_EVAL):
        shutil.copy(INSPECT / name, logs / name)
    imported = call_json("import_run", "--from", "inspect", "--host", "alice", "--log",
                         str(logs / SECURITY_JSON), str(logs / INPUT_TASK_EVAL),
                         "--review-scorer", "model_graded_fact")
    run = Run.objects.get(pk=imported["run"])
    call("correct_truth", str(run.pk), f"security_guide#1/{MODEL}", "tests_fail", "--note", "n")
    call("correct_truth", str(run.pk), f"security_guide#2/{MODEL}", "tests_pass", "--note", "n")
    session = advance(judged_session(run), SessionState.REVEALED)
    result = export(session, "--log-dir", str(logs))
    written = {Path(log["from"]).name: (Path(log["file"]), log["copies"]) for log in result["logs"]}
    assert {name: (path.name, copies) for name, (path, copies) in written.items()} == {
        SECURITY_JSON: (SECURITY_JSON.replace(".json", f".blindjudge-s{session.pk}.json"), 3),
        INPUT_TASK_EVAL: (INPUT_TASK_EVAL.replace(".eval", f".blindjudge-s{session.pk}.eval"), 1)}
    read = read_with_inspect(*(path for path, _ in written.values()))
    truths = {}
    for path, _ in written.values():
        for sample in read[str(path)]["samples"]:
            scores = sample["scores"]
            assert {"model_graded_fact", "blindjudge/truth", J01_1, J01_2, J02_1} <= set(scores)
            truths[(read[str(path)]["task"], sample["id"])] = scores["blindjudge/truth"]["value"]
            assert scores["blindjudge/truth"]["history"][0]["provenance"]["metadata"][
                "report_sha256"] == result["report_sha256"]
    assert truths.pop(("security_guide", 1)) == "I" and truths.pop(("security_guide", 2)) == "C"
    assert len(truths) == 2 and all(math.isnan(value) for value in truths.values())
    # the one model reviewer (named by the scorer's events), calibrated on the two known copies:
    # it passed every copy, so it caught 0 of the 1 defective and passed the 1 good one
    [reviewer] = read[str(written[SECURITY_JSON][0])]["metadata"]["blindjudge"]["model_reviewers"]
    main = reviewer["groups"]["same_family"]["current"]
    assert reviewer["model"] == MODEL
    assert (main["recall"]["k"], main["recall"]["n"], main["tnr"]["k"], main["tnr"]["n"]) == (0, 1, 1, 1)


CURRENT = INSPECT / "current"
ALPHA, BETA, BETA_CHUNKED = ("arithmetic_alpha.eval", "arithmetic_beta.eval",
                             "arithmetic_beta_chunked.eval")


def test_current_zstd_logs_export_and_a_chunked_one_is_named_not_read(host, tmp_path):
    """Logs as inspect-ai writes them today (every member Zstandard, zip method 93) are read and
    written again (deflated, which every inspect-ai reads); a log in the chunked sample layout is
    named as not read, its copies listed as not found."""
    logs = tmp_path / "logs"
    logs.mkdir()
    for name in (ALPHA, BETA):
        shutil.copy(CURRENT / name, logs / name)
    imported = call_json("import_run", "--from", "inspect", "--host", "alice", "--log",
                         str(logs / ALPHA), str(logs / BETA), "--truth-scorer", "match",
                         "--review-scorer", "model_graded_fact",
                         "--family", "mockllm/alpha=Mock Labs", "--family", "mockllm/beta=Mock Labs")
    session = advance(judged_session(Run.objects.get(pk=imported["run"])), SessionState.REVEALED)
    out = tmp_path / "out"
    out.mkdir()
    result = export(session, "--log-dir", str(logs), "--output", str(out))
    assert sorted((log["from"], log["copies"]) for log in result["logs"]) == [(ALPHA, 4), (BETA, 4)]
    assert (result["copies_matched"], result["copies_unchecked"]) == (8, 0)
    beta = out / BETA.replace(".eval", f".blindjudge-s{session.pk}.eval")
    read = read_with_inspect(beta)[str(beta)]
    truth = {s["id"]: s["scores"]["blindjudge/truth"]["value"] for s in read["samples"]}
    assert truth == {1: "C", 2: "I", 3: "C", 4: "I"}  # beta answers 41 and 19 (the log's match)
    assert all({"match", "model_graded_fact", J01_1, J01_2, J02_1} <= set(s["scores"])
               for s in read["samples"])
    [alpha_grader, beta_grader] = read["metadata"]["blindjudge"]["model_reviewers"]
    assert (alpha_grader["model"], beta_grader["model"]) == ("mockllm/alpha", "mockllm/beta")

    # The same run, beta's log given in the chunked layout instead.
    (logs / BETA).unlink()
    shutil.copy(CURRENT / BETA_CHUNKED, logs / BETA_CHUNKED)
    printed = call("export_report", str(session.pk), "--format", "inspect", "--log-dir", str(logs))
    assert (f"not read: {BETA_CHUNKED}: samples in inspect's chunked layout "
            "(samples/<id>_epoch_<n>/…), which this export does not write") in printed
    assert "4 copies of the run are in none of the logs:\n" + "\n".join(
        f"  not found: arithmetic#{n}/mockllm/beta" for n in range(1, 5)) in printed
    assert sorted(p.name for p in logs.iterdir()) == sorted([
        ALPHA, BETA_CHUNKED, ALPHA.replace(".eval", f".blindjudge-s{session.pk}.eval"),
        f"blindjudge-s{session.pk}.report.json"])
