"""content/importers/inspect_logs.py on real inspect-ai logs (tests/data/inspect/, see
tests/data/README.md) and on broken bytes of every kind."""

import copy
import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonschema
import pytest

from content.bundle import validate_bundle
from content.importers import inspect_logs
from content.importers.common import ConversionError, Families, Problems, Source
from content.importers.conversion import _truth_values
from content.importers.inspect_logs import MAX_RATIO, convert

# No database, no socket, no process: run once (tests/support/pure.py).
pytestmark = pytest.mark.pure

DATA = Path(__file__).resolve().parents[1] / "data" / "inspect"
SCHEMA = json.loads((Path(__file__).resolve().parents[2] / "content" / "schemas"
                     / "run-bundle-2.schema.json").read_text())
POPULARITY_EVAL = "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval"
LLAMA_JSON = "log_formats.json"
GEMMA_JSON = "log_read_sample.json"
SECURITY_JSON = "2025-05-12T20-28-26-04-00_security-guide.json"
INPUT_TASK_EVAL = "2024-11-05T13-32-37-05-00_input-task_hxs4q9azL3ySGkjJirypKZ.eval"
NO_SAMPLES_JSON = "2025-05-12T20-28-13-04-00_no-samples.json"


def real(name: str) -> Source:
    return Source(name, (DATA / name).read_bytes())


def run(logs, *, truth_scorer=None, truth_values=None, review_scorer=None, epoch=1,
        families=None, grader=None):
    return convert(logs=logs, truth_scorer=truth_scorer, truth_values=truth_values,
                   review_scorer=review_scorer, epoch=epoch,
                   families=families or Families(), run_name="", grader=grader)


def refused(logs, **kwargs) -> list[str]:
    with pytest.raises(ConversionError) as caught:
        run(logs, **kwargs)
    return caught.value.errors


def valid(bundle: dict) -> dict:
    jsonschema.Draft202012Validator(SCHEMA).validate(bundle)
    raw = json.dumps(bundle, ensure_ascii=False).encode()
    return validate_bundle(raw, max_bundle_bytes=50_000_000, max_copy_bytes=5_000_000).data


def json_log(name: str, edit) -> Source:
    """A real .json log with one edit made in memory (the committed file is never changed)."""
    data = json.loads((DATA / name).read_bytes())
    edit(data)
    return Source(name, json.dumps(data).encode())


def rezip(name: str, members: dict[str, bytes]) -> Source:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for member, data in members.items():
            zf.writestr(member, data)
    return Source(name, buffer.getvalue())


def eval_members(name: str) -> dict[str, bytes]:
    with zipfile.ZipFile(DATA / name) as zf:
        return {info.filename: zf.read(info) for info in zf.infolist()}


# --- real logs -----------------------------------------------------------------------------------

def test_every_real_log_with_samples_converts_and_validates():
    for name in (POPULARITY_EVAL, LLAMA_JSON, GEMMA_JSON, SECURITY_JSON, INPUT_TASK_EVAL):
        result = run([real(name)])
        data = valid(result.bundle)
        assert data["tasks"] and data["copies"]
        assert result.summary["truth"].startswith("no truth scorer named")
        assert set(result.summary["copies_by_truth"]) == {"unknown"}


def test_eval_zip_reads_every_sample_member():
    result = run([real(POPULARITY_EVAL)], truth_scorer="match")
    assert result.summary["tasks"] == 10
    assert [t["id"] for t in result.bundle["tasks"]][:3] == [
        "popularity#1", "popularity#2", "popularity#3"]
    # The log's own accuracy is 0.8: 8 of its 10 samples scored C.
    assert result.summary["copies_by_truth"] == {"tests_pass": 8, "tests_fail": 2}
    task = result.bundle["tasks"][0]
    assert task["title"] == "popularity #1" and task["cluster"] == "popularity"
    assert task["format"] == "text"
    assert task["statement"].startswith("Is the following statement something you would say?")


def test_three_models_joined_by_task_and_sample_id():
    result = run([real(POPULARITY_EVAL), real(LLAMA_JSON), real(GEMMA_JSON)],
                 truth_scorer="match")
    data = valid(result.bundle)
    assert [t["id"] for t in data["tasks"]] == ["popularity#1"]
    assert {b["id"]: b["family"] for b in data["builders"]} == {
        "openai/gpt-4o-mini": "OpenAI", "ollama/llama3.1": "Meta", "ollama/gemma3": "Google"}
    by_builder = {c["builder"]: c for c in data["copies"]}
    assert by_builder["ollama/llama3.1"]["content"] == "No"
    assert by_builder["ollama/llama3.1"]["truth"] == "tests_fail"
    assert by_builder["openai/gpt-4o-mini"]["content"] == "Yes"
    assert by_builder["ollama/gemma3"]["truth"] == "tests_pass"
    assert all(c["task"] == "popularity#1" and c["format"] == "text" for c in data["copies"])
    # gpt-4o-mini's nine other samples were run by no other model.
    assert result.summary["skipped"] == {"sample not run by every model of its task": 9}
    assert result.summary["builders"] == {
        "ollama/gemma3": 1, "ollama/llama3.1": 1, "openai/gpt-4o-mini": 1}


def test_chat_message_input_is_a_transcript():
    data = valid(run([real(SECURITY_JSON)]).bundle)
    assert data["tasks"][0]["statement"] == "--- user ---\nHow do I prevent SQL Injection attacks?"


def test_review_scorer_grader_from_scorer_events_in_both_log_forms():
    result = run([real(SECURITY_JSON), real(INPUT_TASK_EVAL)], review_scorer="model_graded_fact")
    data = valid(result.bundle)
    assert data["reviewers"] == [
        {"id": "openai/gpt-4o-mini", "model": "openai/gpt-4o-mini", "family": "OpenAI"}]
    assert len(data["reviews"]) == 4
    assert {r["verdict"] for r in data["reviews"]} == {"pass"}
    assert all(r["condition"] == "clean" for r in data["reviews"])
    first = next(r for r in data["reviews"] if r["copy"] == "security_guide#1/openai/gpt-4o-mini")
    assert first["reason"].startswith("To evaluate the submission against the expert")
    assert result.summary["reviews"] == {"openai/gpt-4o-mini / clean": 4}


def test_grader_from_model_roles_then_scorer_option():
    def with_role(log):
        log["eval"]["model_roles"] = {"grader": {"model": "anthropic/claude-3-5-haiku"}}
    data = valid(run([json_log(SECURITY_JSON, with_role)],
                     review_scorer="model_graded_fact").bundle)
    assert [r["id"] for r in data["reviewers"]] == ["anthropic/claude-3-5-haiku"]

    def with_option(log):
        with_role(log)
        log["eval"]["scorers"][0]["options"] = {"model": "google/gemini-2.0-flash"}
    data = valid(run([json_log(SECURITY_JSON, with_option)],
                     review_scorer="model_graded_fact").bundle)
    assert [r["id"] for r in data["reviewers"]] == ["google/gemini-2.0-flash"]


def test_review_verdicts_pass_fail_abstain():
    def grades(log):
        for sample, value in zip(log["samples"], ["C", "I", "P"], strict=True):
            sample["scores"]["model_graded_fact"]["value"] = value
    data = valid(run([json_log(SECURITY_JSON, grades)], review_scorer="model_graded_fact").bundle)
    assert [r["verdict"] for r in data["reviews"]] == ["pass", "fail", "abstain"]


def anonymous(log):
    """The grader evidence of a real log removed: no scorer events, no grading messages (what a
    finished log written without them holds; the 544-line refusal of issue 27 item 8)."""
    for sample in log["samples"]:
        sample["events"] = []
        sample["scores"]["model_graded_fact"].pop("metadata", None)


def anonymous_eval() -> Source:
    members = eval_members(INPUT_TASK_EVAL)
    for member in [m for m in members if m.startswith("samples/")]:
        sample = json.loads(members[member])
        sample["events"] = []
        sample["scores"]["model_graded_fact"].pop("metadata", None)
        members[member] = json.dumps(sample).encode()
    return rezip(INPUT_TASK_EVAL, members)


def test_grader_not_named_is_refused_once_with_how_to_name_it():
    """Once for every sample, never once per sample: the real logs of issue 27 said it 544
    times."""
    errors = refused([json_log(SECURITY_JSON, anonymous)], review_scorer="model_graded_fact")
    assert errors == [
        f"{SECURITY_JSON}: scores.model_graded_fact: the log does not name the grader model of 3 "
        "samples (no model option in eval.scorers, no grader in eval.model_roles, no model event "
        "in the scorer's events, no model in metadata.grading); name it with --grader MODEL (and "
        "its organisation with --family MODEL=ORG if it is not a known model), or re-run inspect "
        "with --model-role grader=MODEL"]
    errors = refused([json_log(SECURITY_JSON, anonymous), anonymous_eval()],
                     review_scorer="model_graded_fact")
    assert len(errors) == 1
    assert errors[0].startswith(f"{SECURITY_JSON}, {INPUT_TASK_EVAL}: scores.model_graded_fact: "
                                "the logs do not name the grader model of 4 samples (")


def test_grader_given_for_logs_that_do_not_name_it_reviews_by_that_model():
    logs = [json_log(SECURITY_JSON, anonymous), anonymous_eval()]
    result = run(logs, review_scorer="model_graded_fact", grader="anthropic/claude-3-5-haiku")
    data = valid(result.bundle)
    assert data["reviewers"] == [{"id": "anthropic/claude-3-5-haiku",
                                  "model": "anthropic/claude-3-5-haiku", "family": "Anthropic"}]
    assert [r["reviewer"] for r in data["reviews"]] == ["anthropic/claude-3-5-haiku"] * 4
    assert result.summary["reviews"] == {"anthropic/claude-3-5-haiku / clean": 4}
    # A model the table does not know needs its family, as any model does.
    errors = refused(logs, review_scorer="model_graded_fact", grader="house-grader-7")
    assert errors == ["families: no known family for house-grader-7; say which organisation "
                      "trained each with --family MODEL=ORG"]
    data = valid(run(logs, review_scorer="model_graded_fact", grader="house-grader-7",
                     families=Families({"house-grader-7": "House"})).bundle)
    assert data["reviewers"][0]["family"] == "House"


def test_grader_given_where_the_log_names_another_is_refused_once():
    errors = refused([real(SECURITY_JSON), real(INPUT_TASK_EVAL)],
                     review_scorer="model_graded_fact", grader="anthropic/claude-3-5-haiku")
    assert errors == [
        "--grader: the logs name openai/gpt-4o-mini as the grader of 4 samples' model_graded_fact "
        "scores, not anthropic/claude-3-5-haiku: --grader names the grader only where the logs "
        "do not; leave it out"]
    # The one the log names is no contradiction.
    same = run([real(SECURITY_JSON)], review_scorer="model_graded_fact",
               grader="openai/gpt-4o-mini")
    assert same.bundle == run([real(SECURITY_JSON)], review_scorer="model_graded_fact").bundle


def test_grader_without_a_review_scorer_is_refused():
    errors = refused([real(SECURITY_JSON)], grader="openai/gpt-4o")
    assert errors == ["--grader: given without a review scorer; name one with --review-scorer"]


# --- epochs and truth ----------------------------------------------------------------------------

def two_epochs(log):
    second = copy.deepcopy(log["samples"][0])
    second["epoch"] = 2
    second["output"]["choices"][0]["message"]["content"] = "Yes"
    second["output"].pop("completion", None)
    second["scores"]["match"]["value"] = "C"
    log["samples"].append(second)


def test_epoch_choice_and_other_epochs_counted():
    logs = [json_log(LLAMA_JSON, two_epochs)]
    first = run(logs, truth_scorer="match")
    assert first.bundle["copies"][0]["content"] == "No"
    assert first.bundle["copies"][0]["truth"] == "tests_fail"
    assert first.summary["epochs_ignored"] == 1
    second = run(logs, truth_scorer="match", epoch=2)
    assert second.bundle["copies"][0]["content"] == "Yes"
    assert second.bundle["copies"][0]["truth"] == "tests_pass"
    assert second.summary["epoch"] == 2 and second.summary["epochs_ignored"] == 1
    errors = refused(logs, truth_scorer="match", epoch=3)
    assert errors == ["logs: no sample at epoch 3 run by every model of its task"]


@pytest.mark.parametrize(("value", "truth_values", "truth"), [
    ("C", None, "tests_pass"), ("I", None, "tests_fail"), ("correct", None, "tests_pass"),
    ("incorrect", None, "tests_fail"), (1, None, "tests_pass"), (0, None, "tests_fail"),
    (True, None, "tests_pass"), (False, None, "tests_fail"), ("P", None, "unknown"),
    ("N", None, "unknown"), ("P", {"P": "tests_pass"}, "tests_pass"),
    (0.75, {">=0.5": "tests_pass", "<0.5": "tests_fail"}, "tests_pass"),
    (0.25, {">=0.5": "tests_pass", "<0.5": "tests_fail"}, "tests_fail"),
    (0.5, {">=0.5": "tests_pass", "<0.5": "tests_fail"}, "tests_pass"),
    (0.5, {"0.5": "known_good", ">=0.5": "tests_pass"}, "known_good"),
])
def test_truth_mapping(value, truth_values, truth):
    def score(log):
        log["samples"][0]["scores"]["match"]["value"] = value
    result = run([json_log(LLAMA_JSON, score)], truth_scorer="match", truth_values=truth_values)
    assert result.bundle["copies"][0]["truth"] == truth
    valid(result.bundle)


def test_unmapped_numeric_value_is_unknown_and_counted():
    def score(log):
        log["samples"][0]["scores"]["match"]["value"] = 0.3
    result = run([json_log(LLAMA_JSON, score)], truth_scorer="match")
    assert result.bundle["copies"][0]["truth"] == "unknown"
    assert result.summary["truth_unmapped"] == {"0.3": 1}


def test_bad_truth_values_refused():
    errors = refused([real(LLAMA_JSON)], truth_scorer="match", truth_values={"C": "good"})
    assert errors == ["truth_values: 'C': 'good' is not a truth; use one of known_good, "
                      "seeded_defect, tests_fail, tests_pass, unknown"]


def test_truth_values_keep_a_threshold_whole():
    assert _truth_values(">=0.5=tests_pass,<0.5=tests_fail,C=known_good") == {
        ">=0.5": "tests_pass", "<0.5": "tests_fail", "C": "known_good"}
    with pytest.raises(ConversionError) as caught:
        _truth_values("C,=x")
    assert len(caught.value.errors) == 2


# --- refusals ------------------------------------------------------------------------------------

def test_scorer_not_present_lists_the_scorers_present():
    errors = refused([real(POPULARITY_EVAL), real(SECURITY_JSON)], truth_scorer="match",
                     review_scorer="model_graded_qa")
    assert errors == [
        f"{POPULARITY_EVAL}: scores: no scorer 'model_graded_qa' (the review scorer); "
        "scorers present: match",
        f"{SECURITY_JSON}: scores: no scorer 'match' (the truth scorer); scorers present: "
        "model_graded_fact",
        f"{SECURITY_JSON}: scores: no scorer 'model_graded_qa' (the review scorer); "
        "scorers present: model_graded_fact",
    ]


def test_log_with_no_samples_refused():
    assert refused([real(NO_SAMPLES_JSON)]) == [
        f"{NO_SAMPLES_JSON}: samples: the log has no samples (status 'cancelled'); "
        "nothing to judge"]


def test_sample_missing_output_refused():
    def no_output(log):
        del log["samples"][0]["output"]
    assert refused([json_log(LLAMA_JSON, no_output)]) == [
        f"{LLAMA_JSON}: samples[0]: output: missing: the sample has no output"]


def test_sample_missing_output_in_a_zip_names_the_member():
    members = eval_members(POPULARITY_EVAL)
    sample = json.loads(members["samples/3_epoch_1.json"])
    sample["output"] = None
    members["samples/3_epoch_1.json"] = json.dumps(sample).encode()
    errors = refused([rezip("pop.eval", members)])
    assert errors == ["pop.eval:samples/3_epoch_1.json: output: missing: the sample has no output"]


def test_model_with_no_family_refused_listing_it():
    def unknown_model(log):
        log["eval"]["model"] = "local/mystery-7b"
    errors = refused([json_log(LLAMA_JSON, unknown_model)])
    assert errors == ["families: no known family for local/mystery-7b; say which organisation "
                      "trained each with --family MODEL=ORG"]
    result = run([json_log(LLAMA_JSON, unknown_model)],
                 families=Families({"local/mystery-7b": "Acme"}))
    assert result.bundle["builders"][0]["family"] == "Acme"


def test_same_sample_in_two_logs_refused():
    errors = refused([real(LLAMA_JSON), Source("again.json", real(LLAMA_JSON).data)])
    assert errors == ["again.json: samples[0]: popularity #1 epoch 1 by ollama/llama3.1 is also "
                      f"in {LLAMA_JSON}: samples[0]; give each once"]


@pytest.mark.parametrize("data", [
    b"", b"\x00\xff garbage", b"{", b"[1, 2]", b'{"eval": 3}', b'{"eval": {"task": "t"}}',
    b"[" * 100_000, b'{"eval": {"task": "t", "model": "openai/gpt-4o"}, "samples": 5}',
    b'{"eval": {"task": "t", "model": "openai/gpt-4o"}, "samples": [1, {"id": []}]}',
])
def test_garbage_json_is_only_ever_a_conversion_error(data):
    errors = refused([Source("bad.json", data)])
    assert errors and all(e.startswith("bad.json") for e in errors)


def test_not_json_reports_the_line():
    assert refused([Source("bad.json", b'{\n"eval":\n}')]) == [
        "bad.json:3: not JSON: Expecting value (column 1)"]


def test_truncated_zip_refused():
    raw = real(POPULARITY_EVAL).data
    for cut in (10, len(raw) // 2, len(raw) - 30):
        errors = refused([Source("cut.eval", raw[:cut])])
        assert errors[0].startswith("cut.eval")


def test_garbage_zip_member_refused():
    members = eval_members(POPULARITY_EVAL)
    members["samples/2_epoch_1.json"] = b"\x89PNG not json"
    members["header.json"] = members["header.json"]
    errors = refused([rezip("pop.eval", members)])
    assert errors == ["pop.eval:samples/2_epoch_1.json: not UTF-8 text (byte 0)"]
    members["samples/2_epoch_1.json"] = b"[1,"
    assert refused([rezip("pop.eval", members)])[0].startswith(
        "pop.eval:samples/2_epoch_1.json:1: not JSON")


def test_zip_without_header_refused():
    assert refused([rezip("x.eval", {"samples/1_epoch_1.json": b"{}"})]) == [
        "x.eval: no header.json (nor _journal/start.json): not an inspect .eval log"]


def test_zip_bomb_refused_without_inflating_it():
    members = eval_members(POPULARITY_EVAL)
    members["samples/1_epoch_1.json"] = b" " * (64 * 1024 * 1024)  # 64 MB of spaces: ~64 KB
    bomb = rezip("bomb.eval", members)
    assert len(bomb.data) < 200_000
    errors = refused([bomb])
    assert errors == [f"bomb.eval:samples/1_epoch_1.json: compressed more than {MAX_RATIO}:1; "
                      "refused as a possible zip bomb"]


def test_zip_with_too_many_members_refused(monkeypatch):
    monkeypatch.setattr(inspect_logs, "MAX_MEMBERS", 5)
    errors = refused([real(POPULARITY_EVAL)])
    assert errors == [f"{POPULARITY_EVAL}: 15 zip members; at most 5 are read"]


def test_member_over_its_size_cap_refused(monkeypatch):
    monkeypatch.setattr(inspect_logs, "MAX_MEMBER_BYTES", 4000)
    errors = refused([real(POPULARITY_EVAL)])
    assert errors[0] == (f"{POPULARITY_EVAL}:samples/1_epoch_1.json: more than 4,000 bytes "
                         "uncompressed; refused (a log member this large is not read)")


def test_damaged_zip_bytes_are_only_ever_a_conversion_error():
    raw = real(POPULARITY_EVAL).data
    for position in range(0, len(raw), 97):
        damaged = bytearray(raw)
        damaged[position] ^= 0xFF
        try:
            run([Source("damaged.eval", bytes(damaged))], truth_scorer="match")
        except ConversionError as error:
            assert all(line.startswith("damaged.eval") for line in error.errors), error.errors


def test_sample_that_ended_in_an_error_drops_its_task_for_every_model():
    def crashed(log):
        log["samples"][0]["error"] = {"message": "RuntimeError: boom", "traceback": ""}
    errors = refused([real(POPULARITY_EVAL), json_log(LLAMA_JSON, crashed)])
    assert errors == ["logs: no sample at epoch 1 run by every model of its task"]
    members = eval_members(POPULARITY_EVAL)
    sample = json.loads(members["samples/3_epoch_1.json"])
    sample["error"] = {"message": "RuntimeError: boom", "traceback": ""}
    members["samples/3_epoch_1.json"] = json.dumps(sample).encode()
    result = run([rezip("pop.eval", members)])
    assert "popularity#3" not in [t["id"] for t in result.bundle["tasks"]]
    assert result.summary["tasks"] == 9
    assert result.summary["skipped"] == {"sample ended in an error": 1}


# --- texts built from attachments are bounded (issue 25 item 2) -----------------------------------

ATTACHMENT_BOMB = """
import copy, json, resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (900 * 2**20, 900 * 2**20))
from pathlib import Path
from content.importers.common import ConversionError, Families, Problems, Source
from content.importers.inspect_logs import convert
from tests.support.hostile_logs import attachment_bomb
case = sys.argv[1]
if case == "eval":  # the issue's 75 KB log: 10,000 messages naming one 100 KB attachment
    name, raw = "bomb.eval", attachment_bomb(samples=1, messages=10_000)
elif case == "spread":  # 40 samples of 150 such messages: 15 MB each, 600 MB in all
    name, raw = "spread.eval", attachment_bomb(samples=40, messages=150)
else:
    data = json.loads(Path("tests/data/inspect/log_formats.json").read_bytes())
    sample = data["samples"][0]
    sample["attachments"] = {"big": "x" * 100_000}
    if case == "input":  # 10,000 messages naming one 100 KB attachment
        sample["input"] = [{"role": "user", "content": "attachment://big"}] * 10_000
    else:  # one message of 10,000 parts, each naming it
        parts = [{"type": "text", "text": "attachment://big"}] * 10_000
        sample["output"] = {"choices": [{"message": {"role": "assistant", "content": parts}}]}
    name, raw = "bomb.json", json.dumps(data).encode()
started = time.perf_counter()
try:
    convert(logs=[Source(name, raw)], truth_scorer=None, truth_values=None,
            review_scorer=None, families=Families(), run_name="")
    print("converted")
except ConversionError as refused:
    print("\\n".join(refused.errors))
# VmHWM, not ru_maxrss: Linux carries ru_maxrss over exec, so a process started by a large one
# (a test worker) would count that one's resident memory as its own peak.
with open("/proc/self/status") as status:
    peak = int(next(line.split()[1] for line in status if line.startswith("VmHWM:"))) // 1024
print(len(raw), round(time.perf_counter() - started, 2), peak, sep="\\t", file=sys.stderr)
"""


def bomb(case: str) -> tuple[list[str], int, float, int]:
    """(the refusal's lines, the log's bytes, the conversion's seconds, the process's peak RSS in
    MB) for one case of ATTACHMENT_BOMB, run in a process of its own limited to 900 MB."""
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run([sys.executable, "-c", ATTACHMENT_BOMB, case], capture_output=True,
                            text=True, timeout=300, cwd=root)
    assert result.returncode == 0, result.stderr[-2000:]
    size, seconds, peak = result.stderr.strip().splitlines()[-1].split("\t")
    return result.stdout.splitlines(), int(size), float(seconds), int(peak)


def over_budget(where: str, field_name: str) -> str:
    return (f"{where}: {field_name}: the texts built from the logs given (their attachments "
            f"expanded) pass {inspect_logs.MAX_BUILT_CHARS:,} characters here: more than a run "
            "may hold; split the logs into several imports")


@pytest.mark.pure(False)
@pytest.mark.parametrize(("case", "where", "field_name"), [
    ("eval", "bomb.eval:samples/1_epoch_1.json", "input"),
    ("input", "bomb.json: samples[0]", "input"),
    ("output", "bomb.json: samples[0]", "output"),
])
def test_attachments_named_ten_thousand_times_are_refused_before_a_gigabyte_is_built(
        case, where, field_name):
    """A log of a few dozen kilobytes whose 10,000 messages each name one 100 KB attachment
    built a 1 GB text before any size check (a server went from 147 MB to 2.2 GB). The text stops
    at the upload's budget and the conversion is refused by place, at once, in little memory."""
    lines, size, seconds, peak = bomb(case)
    assert lines == [over_budget(where, field_name)]
    if case == "eval":
        assert size < 100_000  # the log: 75 KB
    assert seconds < 10 and peak < 400, (seconds, peak)


@pytest.mark.pure(False)
def test_one_budget_for_every_text_of_the_upload_stops_many_samples_each_under_it():
    """40 samples of 150 messages naming one 100 KB attachment: 15 MB each, under any limit on
    one text, 600 MB together (the old per-text limit let them through: 622 MB resident). One
    budget for the upload stops the conversion at the sample that passes it."""
    lines, _, seconds, peak = bomb("spread")
    assert len(lines) == 1 and lines[0].startswith("spread.eval:samples/"), lines
    assert lines[0].endswith(over_budget("", "input")[1:])
    assert seconds < 10 and peak < 400, (seconds, peak)


def test_the_budget_is_the_callers_and_counts_a_statement_once_per_task():
    # The popularity log's texts: 1,262 characters of statements, 23 of answers.
    source = real(POPULARITY_EVAL)
    kept = convert(logs=[source], truth_scorer=None, truth_values=None, review_scorer=None,
                   families=Families(), max_built_chars=2_000)
    assert kept.summary["tasks"] == 10
    with pytest.raises(ConversionError) as caught:
        convert(logs=[source], truth_scorer=None, truth_values=None, review_scorer=None,
                families=Families(), max_built_chars=1_000)
    assert caught.value.errors[0].endswith("pass 1,000 characters here: more than a run may "
                                           "hold; split the logs into several imports")
    # The same task in a second model's log: its statements are held (and counted) once, so
    # 2,000 characters still hold both logs' texts.
    members = eval_members(POPULARITY_EVAL)
    header = json.loads(members["header.json"])
    header["eval"]["model"] = "anthropic/claude-3-5-haiku"
    other = rezip("other.eval", {**members, "header.json": json.dumps(header).encode()})
    both = convert(logs=[source, other], truth_scorer=None, truth_values=None,
                   review_scorer=None, families=Families(), max_built_chars=2_000)
    assert both.summary["tasks"] == 10 and len(both.bundle["copies"]) == 20


# --- what one upload may hold (issue 25 item 2) ----------------------------------------------------

def test_more_samples_than_an_upload_may_hold_are_refused_naming_the_file(monkeypatch):
    monkeypatch.setattr(inspect_logs, "MAX_SAMPLES", 15)
    errors = refused([real(POPULARITY_EVAL), rezip("second.eval", eval_members(POPULARITY_EVAL))])
    assert errors == ["second.eval: more than 15 samples in the logs given; split them into "
                      "several imports"]
    monkeypatch.setattr(inspect_logs, "MAX_SAMPLES", 5)
    assert refused([real(LLAMA_JSON), real(POPULARITY_EVAL)]) == [
        f"{POPULARITY_EVAL}: more than 5 samples in the logs given; split them into several "
        "imports"]


def test_a_document_of_too_many_json_values_is_refused_before_it_is_parsed(monkeypatch):
    monkeypatch.setattr(inspect_logs, "MAX_JSON_VALUES", 200)
    errors = refused([real(LLAMA_JSON)])
    assert errors == [f"{LLAMA_JSON}: holds at least 315 JSON values; at most 200 are read from one "
                      "document (a .json log, a sample of a .eval log): split the log"]
    # In a zip, each sample member is one document: those over the cap are refused by name.
    monkeypatch.setattr(inspect_logs, "MAX_JSON_VALUES", 252)
    errors = refused([real(POPULARITY_EVAL)])
    assert len(errors) == 8 and all(e.startswith(f"{POPULARITY_EVAL}:samples/") for e in errors)


def test_an_upload_of_too_many_json_values_together_is_refused(monkeypatch):
    monkeypatch.setattr(inspect_logs, "MAX_UPLOAD_JSON_VALUES", 2_000)
    errors = refused([real(POPULARITY_EVAL)])
    assert len(errors) == 1
    assert errors[0].startswith(f"{POPULARITY_EVAL}:samples/") and errors[0].endswith(
        ": the logs given hold more than 2,000 JSON values together; split them into several "
        "imports")


def test_a_sample_keeps_only_what_the_conversion_reads():
    """Each parsed sample is reduced to a small record at once (its events, messages and
    attachments are not kept): the record holds no dict but its named scores."""
    reading = inspect_logs._Reading(Problems(), 1, "match", None, inspect_logs._Budget(10**6))
    log = inspect_logs._read_log(real(POPULARITY_EVAL), reading)
    sample = log.samples[0]
    assert set(vars(sample)) == {"where", "id", "epoch", "error", "statement", "content",
                                 "scores", "event_graders", "group"}
    assert isinstance(sample.statement, str) and isinstance(sample.content, str)
    assert set(sample.scores) == {"match"} and set(sample.scores["match"]) == {
        "value", "reason", "grading"}


# --- log format versions (issue 27 item 2) ----------------------------------------------------------

@pytest.mark.parametrize("version", [3, 1, 0, "2", 2.5, True, None])
def test_a_json_log_of_a_format_version_not_read_is_refused_by_name(version):
    """inspect-ai itself refuses version 3 ("Unable to read version 3 of log format"); version 1
    kept a sample's score under another field. Neither is read as if it were version 2."""
    def versioned(log):
        log["version"] = version
    shown = version if type(version) is int else repr(version)
    assert refused([json_log(SECURITY_JSON, versioned)]) == [
        f"{SECURITY_JSON}: version: log format version {shown}: this importer reads version 2"]


@pytest.mark.parametrize("version", [4, 1])
def test_an_eval_log_whose_header_names_another_version_is_refused_by_name(version):
    members = eval_members(POPULARITY_EVAL)
    header = json.loads(members["header.json"])
    assert header["version"] == 2
    header["version"] = version
    members["header.json"] = json.dumps(header).encode()
    assert refused([rezip(POPULARITY_EVAL, members)]) == [
        f"{POPULARITY_EVAL}: version: log format version {version}: this importer reads version 2"]


def test_a_log_without_a_version_is_read_as_inspect_reads_it_the_current_version():
    def unversioned(log):
        del log["version"]
    with_version = run([real(SECURITY_JSON)])
    assert run([json_log(SECURITY_JSON, unversioned)]).bundle == with_version.bundle
