"""Every file a command reads is a regular file, read no further than its limit (issue 25 low 11).

`import_run` judged a file by its size from the name (`st_size`), which is 0 for a device: a link
to /dev/zero was read until MemoryError, and a FIFO blocked it for ever. Each file is now opened
first (non-blocking), judged on the open descriptor, and read to at most its limit + 1 bytes. The
commands run in child processes here, bounded in time and address space, so that a command that
reads without end fails the test instead of hanging the suite or exhausting the machine.
"""

import io
import json
import os
import resource
import socket
import subprocess
import sys
import time

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings

from tests.judging.test_commands import ROOT, cli_env  # noqa: F401 - cli_env is a fixture
from tests.worlds import bundle_bytes

SECONDS = 30  # a refusal takes ~2 s (Django's start-up); reading /dev/zero or a FIFO, for ever
ADDRESS_SPACE = 3 * 1024 ** 3


def bounded(env, *args):
    """manage.py in a child that cannot wait for ever nor take more than ADDRESS_SPACE bytes."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))

    started = time.monotonic()
    try:
        done = subprocess.run([sys.executable, str(ROOT / "manage.py"), *args], cwd=ROOT, env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=SECONDS, check=False, preexec_fn=limit)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{args[0]} still reading after {SECONDS} s: {args}")
    return done, time.monotonic() - started


@pytest.fixture(scope="module")
def env(cli_env, tmp_path_factory):  # noqa: F811 - the imported fixture
    """The child processes' database with a host (alice) and a run (1)."""
    folder = tmp_path_factory.mktemp("files")
    bundle = folder / "bundle.json"
    bundle.write_bytes(bundle_bytes())
    for args in (("createhost", "alice"), ("import_run", str(bundle), "--host", "alice")):
        done, _ = bounded(cli_env, *args)
        assert done.returncode == 0, done.stderr
    return cli_env


@pytest.fixture
def zero_link(tmp_path):
    link = tmp_path / "run.json"
    link.symlink_to("/dev/zero")
    return str(link)


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "run.jsonl"
    os.mkfifo(path)  # nobody ever writes to it
    return str(path)


def refusal(env, *args):
    done, seconds = bounded(env, *args, "--json")
    assert done.returncode == 1, (done.returncode, done.stderr[-2000:])
    message = json.loads(done.stdout)["message"]
    assert done.stderr == f"CommandError: {message}\n"
    assert seconds < SECONDS / 2
    return message


def test_import_run_refuses_a_link_to_the_zero_device_at_once(env, zero_link):
    assert refusal(env, "import_run", zero_link, "--host", "alice") == (
        f"{zero_link} is a character device, not a bundle file")


def test_import_run_refuses_a_fifo_at_once(env, fifo):
    assert refusal(env, "import_run", fifo, "--host", "alice") == (
        f"{fifo} is a FIFO (named pipe), not a bundle file")


@pytest.mark.parametrize("args", [
    ("--from", "jsonl", "{fifo}", "--map", "task=task,content=content"),
    ("--from", "inspect", "--log", "{zero}"),
], ids=["a table of outputs", "an inspect log"])
def test_import_run_from_refuses_a_fifo_or_a_device_as_an_input(env, args, zero_link, fifo):
    args = [arg.format(fifo=fifo, zero=zero_link) for arg in args]
    named, kind = ((fifo, "a FIFO (named pipe)") if fifo in args
                   else (zero_link, "a character device"))
    assert refusal(env, "import_run", *args, "--host", "alice") == (
        f"{named} is {kind}, not a regular file")


def test_verify_report_refuses_a_fifo_at_once(env, fifo):
    assert refusal(env, "verify_report", fifo) == f"{fifo} is a FIFO (named pipe), not a JSON report"


def test_create_session_refuses_a_fifo_as_a_text(env, fifo):
    assert refusal(env, "create_session", "1", "--kind", "copies", "--prereg", fifo) == (
        f"--prereg: {fifo} is a FIFO (named pipe), not a text file")


# In this process, only what cannot hang or exhaust it even where the check were gone: the null
# device (empty) and a socket (opening one fails).

def refused_here(*args) -> str:
    with pytest.raises(CommandError) as raised:
        call_command(*args, stdout=io.StringIO(), stderr=io.StringIO())
    return str(raised.value)


@pytest.fixture
def null_link(tmp_path):
    link = tmp_path / "null.txt"
    link.symlink_to("/dev/null")
    return str(link)


@pytest.mark.django_db
def test_every_other_file_option_refuses_a_device(host, draft, null_link, tmp_path):
    table = tmp_path / "outputs.jsonl"
    table.write_text('{"task": "t", "content": "c"}\n')
    device = f"{null_link} is a character device, not a regular file"
    for args in (("--from", "jsonl", str(table), "--reviews", null_link),
                 ("--from", "swebench", "--predictions", null_link),
                 ("--from", "swebench", "--predictions", str(table), "--report", null_link),
                 ("--from", "swebench", "--predictions", str(table), "--dataset", null_link)):
        assert refused_here("import_run", *args, "--host", "alice") == device, args
    for option in ("--rubric", "--prereg", "--instructions"):
        assert refused_here("create_session", str(draft.run_id), "--kind", "copies", option,
                            null_link) == f"{option}: {null_link} is a character device, not a text file"
    assert refused_here("amend_prereg", str(draft.pk), null_link) == (
        f"amendment: {null_link} is a character device, not a text file")
    assert refused_here("createhost", "bea", "--password-file", null_link) == (
        f"--password-file: {null_link} is a character device, not a text file")
    assert refused_here("verify_report", null_link) == (
        f"{null_link} is a character device, not a JSON report")
    assert refused_here("invite", str(draft.pk), "--names-file", null_link, "--csv",
                        str(tmp_path / "links.csv")) == (
        f"--names-file: cannot read {null_link}: a character device, not a regular file")


@pytest.mark.django_db
def test_texts_and_lists_named_on_the_command_line_have_a_limit(draft, tmp_path):
    big = tmp_path / "rubric.md"
    big.write_bytes(b"x" * 101)
    with override_settings(BLINDJUDGE_MAX_HOST_FORM_BYTES=100):
        for option in ("--rubric", "--prereg", "--instructions"):
            assert refused_here("create_session", str(draft.run_id), "--kind", "copies", option,
                                str(big)) == f"{option}: {big}: 101 bytes exceeds the limit of 100 bytes"
        assert refused_here("invite", str(draft.pk), "--names-file", str(big), "--csv",
                            str(tmp_path / "links.csv")) == (
            f"--names-file: {big}: 101 bytes exceeds the limit of 100 bytes")
    # A socket is no file either (opening one fails at once, and says so).
    listening = socket.socket(socket.AF_UNIX)
    listening.bind(str(tmp_path / "s"))
    with listening:
        assert refused_here("invite", str(draft.pk), "--names-file", str(tmp_path / "s"), "--csv",
                            str(tmp_path / "links2.csv")).startswith(
            f"--names-file: cannot read {tmp_path / 's'}: ")
    assert not (tmp_path / "links.csv").exists() and not (tmp_path / "links2.csv").exists()
