"""Evaluation files are converted in a child process of bounded memory and time
(judging/importing.py `convert`, judging/import_worker.py), never in the serving process: a log
that asks for more is refused with a message that says which limit, the command and the page go
on, and nothing is written (issue 25 item 2)."""

import html
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from judging import importing
from judging.models import Run
from tests.host.test_host_pages import page, url
from tests.host.test_import_page import errors_listed, nothing_written
from tests.judging.test_commands import call_json, refused
from tests.support.hostile_logs import large_legal_log
from tests.worlds import client_as

ROOT = Path(__file__).resolve().parents[2]
POPULARITY_EVAL = (ROOT / "tests" / "data" / "inspect"
                   / "2025-02-11T15-18-04-05-00_popularity_mj7khqpMM4GBCfVQozKgzB.eval")


def out_of_memory(mb: int) -> str:
    return (f"the logs need more than {mb:,} MB of memory to convert (BLINDJUDGE_IMPORT_MEMORY_MB) "
            "and were refused; nothing was imported: split the logs into several imports, or ask "
            "the server's administrator to raise the limit")


# A serving process in miniature: it converts through judging.importing.convert, as the command
# and the page do, and says what it and its children held at their peak.
SERVING = """
import json, os, resource, sys, time
os.environ["DJANGO_SETTINGS_MODULE"] = "blindjudge.settings_test"
from django.conf import settings
from content.importers.common import ConversionError, Source
from content.importers.conversion import ImportRequest
from judging.importing import convert
from tests.support.hostile_logs import attachment_bomb
logs = [Source("bomb.eval", attachment_bomb(samples=1, messages=10_000)),
        Source("spread.eval", attachment_bomb(samples=40, messages=150))]
out = {"limit": settings.BLINDJUDGE_MAX_BUNDLE_BYTES, "refusals": []}
# A process started by another counts that one's resident memory at its start in its own peak
# (Linux keeps the high-water mark across exec): what counts is what it grew by.
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
for log in logs:
    started = time.perf_counter()
    try:
        convert(ImportRequest(format="inspect", logs=[log]))
        out["refusals"].append(None)
    except ConversionError as error:
        out["refusals"].append(error.errors)
    out.setdefault("seconds", []).append(time.perf_counter() - started)
out["self_grew_mb"] = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) // 1024
out["children_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
print(json.dumps(out))
"""


def test_attachment_bombs_are_refused_in_the_child_and_the_serving_process_stays_small():
    """The issue's 75 KB log (10,000 messages naming one 100 KB attachment) and 40 samples of 150
    such messages (15 MB of text each, which converted in the serving process before: 622 MB
    resident) are refused by the child, quickly; the process that asked holds only the logs."""
    result = subprocess.run([sys.executable, "-c", SERVING], capture_output=True, text=True,
                            timeout=300, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr[-2000:]
    out = json.loads(result.stdout)
    budget = f"pass {out['limit']:,} characters here: more than a run may hold; split the logs"
    bomb, spread = out["refusals"]
    assert bomb and bomb[0].startswith("bomb.eval:samples/1_epoch_1.json: input: ") \
        and budget in bomb[0], bomb
    assert spread and spread[0].startswith("spread.eval:samples/") and budget in spread[0], spread
    assert max(out["seconds"]) < 10, out
    assert out["self_grew_mb"] < 50, out  # the serving process: the logs and the answer
    assert 0 < out["children_mb"] < 400, out  # the converter, at its peak


@pytest.fixture
def big_log(tmp_path) -> Path:
    """A legal log of 1,000 samples of 16 KB each (12 MB): more than 64 MB to convert."""
    path = tmp_path / "large.eval"
    path.write_bytes(large_legal_log(samples=1_000, statement_kb=16))
    return path


def test_the_command_refuses_a_log_past_the_memory_limit_and_goes_on(host, settings, big_log):
    settings.BLINDJUDGE_IMPORT_MEMORY_MB = 64
    args = ["import_run", "--from", "inspect", "--host", "alice", "--truth-scorer", "match"]
    assert refused(*args, "--log", str(big_log)) == out_of_memory(64)
    assert nothing_written()
    # The process that asked is none the worse: the next import goes through.
    result = call_json(*args, "--log", str(POPULARITY_EVAL))
    assert result["summary"]["tasks"] == 10


@pytest.mark.django_db
def test_the_import_page_refuses_a_log_past_the_memory_limit_and_goes_on(host, settings,
                                                                         big_log):
    settings.BLINDJUDGE_IMPORT_MEMORY_MB = 64
    alice = client_as(host)
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    response = alice.post(url("run_import"), {
        "source": "inspect", "truth_scorer": "match",
        "logs": [SimpleUploadedFile("large.eval", big_log.read_bytes())]})
    assert response.status_code == 400
    assert [html.unescape(error) for error in errors_listed(response)] == [out_of_memory(64)]
    assert nothing_written()
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before) // 1024
    assert grown_mb < 64, grown_mb  # the upload and the page, never the conversion
    assert alice.get(url("runs")).status_code == 200
    response = alice.post(url("run_import"), {
        "source": "inspect", "truth_scorer": "match",
        "logs": [SimpleUploadedFile(POPULARITY_EVAL.name, POPULARITY_EVAL.read_bytes())]},
        follow=True)
    assert Run.objects.get().tasks.count() == 10
    assert "copies by truth: tests_fail 2, tests_pass 8" in page(response)


def test_a_conversion_past_its_deadline_is_stopped_and_refused(host, settings, monkeypatch):
    # A stand-in converter that never answers.
    monkeypatch.setattr(importing, "WORKER", ("-c", "import time; time.sleep(120)"))
    settings.BLINDJUDGE_IMPORT_TIMEOUT = 1
    started = time.monotonic()
    message = refused("import_run", "--from", "inspect", "--host", "alice",
                      "--log", str(POPULARITY_EVAL))
    assert time.monotonic() - started < 10
    assert message == ("the conversion of the logs took longer than 1 s "
                       "(BLINDJUDGE_IMPORT_TIMEOUT) and was stopped; nothing was imported: split "
                       "the logs into several imports, or ask the server's administrator to "
                       "raise the limit")
    assert nothing_written()


@pytest.mark.parametrize(("worker", "status"), [
    ("import sys; sys.exit(9)", 9),
    ("import sys; sys.stdout.write('not an answer')", 0),
    ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", -9),
])
def test_a_converter_that_dies_or_answers_out_of_protocol_is_a_refusal(host, monkeypatch, worker,
                                                                         status, caplog):
    monkeypatch.setattr(importing, "WORKER", ("-c", worker))
    message = refused("import_run", "--from", "jsonl", str(POPULARITY_EVAL), "--host", "alice")
    assert message == (f"the conversion of the files failed (exit status {status}); nothing was "
                       "imported, and the server's log says more")
    assert "the import converter" in caplog.text
    assert nothing_written()
