"""A host's evaluation files converted to a `blindjudge.run/2` bundle in a child process: the
command line (`import_run --from …`) and the host's import page call `convert` with an
`ImportRequest` (content/importers/conversion.py, where the conversion itself is, pure).

`convert` converts in a child process (`python -m judging.import_worker`, see there for the
protocol), never in the process that serves hosts and judges: a few hundred kilobytes of log can
ask for gigabytes (issue 25 item 2), and the child's address space is limited to
BLINDJUDGE_IMPORT_MEMORY_MB, its time to BLINDJUDGE_IMPORT_TIMEOUT seconds. A child that runs out
of either is refused with a ConversionError that says which; the serving process holds only the
files it was given and the bundle's bytes. Starting the child costs a Python start and the
importers' imports: about 0.15 s on the 2-core machine (bench/README.md).
`content.importers.conversion.convert_in_process` is the conversion itself, which the child runs.
"""

from __future__ import annotations

import json
import logging
import os
import select
import subprocess
import sys
import threading
import time

from django.conf import settings

from content.importers.common import ConversionError
from content.importers.conversion import OUT_OF_MEMORY, Converted, ImportRequest, request_message

logger = logging.getLogger(__name__)

# The child: our own interpreter and module (tests put a stand-in here).
WORKER = ("-m", "judging.import_worker")
# The child's answer line (the summary) is far smaller; its body is the bundle.
MAX_ANSWER_HEADER_BYTES = 16 * 1024 * 1024
CHUNK_BYTES = 256 * 1024


def convert(request: ImportRequest) -> Converted:
    """The run/2 bundle for the request, converted in a child process of limited memory and time
    (see the module docstring), or ConversionError listing every problem. Blocks the calling
    thread until the child answers: call it from a synchronous view or a command."""
    memory_mb = settings.BLINDJUDGE_IMPORT_MEMORY_MB
    timeout = settings.BLINDJUDGE_IMPORT_TIMEOUT
    what = "logs" if request.format == "inspect" else "files"
    header, files = request_message(request, settings.BLINDJUDGE_MAX_BUNDLE_BYTES)
    env = dict(os.environ)
    env.setdefault("DJANGO_SETTINGS_MODULE", settings.SETTINGS_MODULE or "blindjudge.settings")
    deadline = time.monotonic() + timeout
    try:
        process = subprocess.Popen(  # noqa: S603 - our own interpreter and module, fixed arguments
            [sys.executable, *WORKER, "--memory-mb", str(memory_mb)], cwd=settings.BASE_DIR,
            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None, close_fds=True)
    except OSError as error:
        logger.error("the import converter could not be started: %s", error)
        raise ConversionError(["the converter could not be started; the server's log says more"]) \
            from None
    writer = threading.Thread(target=_send, args=(process.stdin, [header, *files]), daemon=True,
                              name=f"import-converter-{process.pid}-input")
    writer.start()
    try:
        answer = _receive(process, deadline, settings.BLINDJUDGE_MAX_BUNDLE_BYTES)
    except TimeoutError:
        raise ConversionError([f"the conversion of the {what} took longer than {timeout} s "
                               "(BLINDJUDGE_IMPORT_TIMEOUT) and was stopped; nothing was "
                               f"imported: split the {what} into several imports, or ask the "
                               "server's administrator to raise the limit"]) from None
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        process.stdout.close()
        writer.join(timeout=5)
    status = process.returncode
    newline = answer.find(b"\n")
    line = bytes(answer[:newline]) if newline >= 0 else b""
    body = bytes(memoryview(answer)[newline + 1:]) if newline >= 0 else b""
    del answer  # the bundle is held once, as bytes, from here on
    try:
        head = json.loads(line) if line else {}
    except ValueError:
        head = {}
    if not isinstance(head, dict):
        head = {}
    if head.get("memory") or status == OUT_OF_MEMORY:
        raise ConversionError([f"the {what} need more than {memory_mb:,} MB of memory to convert "
                               "(BLINDJUDGE_IMPORT_MEMORY_MB) and were refused; nothing was "
                               f"imported: split the {what} into several imports, or ask the "
                               "server's administrator to raise the limit"])
    if head.get("ok") is True and isinstance(head.get("bytes"), int) \
            and len(body) == head["bytes"] and isinstance(head.get("summary"), dict):
        places = head.get("places")
        if not isinstance(places, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in places.items()):
            places = {}
        return Converted(raw=body, summary=head["summary"], seconds=head.get("seconds", 0.0),
                         peak_rss_mb=head.get("peak_rss_mb", 0), places=places)
    if head.get("ok") is False and isinstance(head.get("errors"), list) and head["errors"]:
        raise ConversionError([str(line) for line in head["errors"]], int(head.get("more") or 0))
    logger.error("the import converter (pid %s) answered out of protocol or stopped before "
                 "answering (exit status %s; %s)", process.pid, status,
                 head.get("failed", "no answer"))
    raise ConversionError([f"the conversion of the {what} failed (exit status {status}); nothing "
                           "was imported, and the server's log says more"])


def _send(stream, pieces: list[bytes]) -> None:
    """Write the request to the child's input and close it (a child that died or answered
    early stops reading: the rest is not needed)."""
    try:
        for piece in pieces:
            stream.write(piece)
        stream.close()
    except (OSError, ValueError):
        pass


def _receive(process: subprocess.Popen, deadline: float, max_bundle_bytes: int) -> bytearray:
    """Everything the child writes until it closes its output; TimeoutError past the deadline,
    and no more than its answer may hold (the rest is not read)."""
    fd = process.stdout.fileno()
    poller = select.poll()  # not select(): a busy server's descriptors pass 1024
    poller.register(fd, select.POLLIN | select.POLLHUP)
    limit = MAX_ANSWER_HEADER_BYTES + max_bundle_bytes
    received = bytearray()
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        if not poller.poll(remaining * 1000):
            continue
        chunk = os.read(fd, CHUNK_BYTES)
        if not chunk:
            return received
        received += chunk
        if len(received) > limit:
            return bytearray()  # out of protocol: refused below as a failure
