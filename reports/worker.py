"""The report builder: a process of its own that builds revealed reports for a serving process.

    python -m reports.worker [--idle SECONDS]

Started by reports/offprocess.py (never by hand), with the server's environment, so it reads the
same settings and database. numpy and scipy are imported here, never in the process that serves
judges and hosts: that process only passes the bytes on.

The protocol, over the builder's standard input and output (pipes held by the serving process):

- a request is one line of JSON, {"session": <id>, "format": <one of reports.render.REPORT_FORMATS>};
- the answer is one line of JSON, then the body: {"ok": true, "bytes": N, "build_s": S,
  "build_cpu_s": C} (the build's wall and CPU time, rendering included) followed by exactly N
  bytes of the report in that format, or {"ok": false, "status": 404|409|500, "code":
  ..., "message": ...} and nothing more.

The report is built and rendered whole before the first byte is written, so a build that fails
writes no part of a report: only its refusal. Requests are answered one at a time, in order; the
builder exits when its standard input closes (the serving process is gone or let it go) or after
`--idle` seconds without a request. Anything else the process prints goes to standard error (the
server's log), never into the answers. Between requests it holds no database connection and gives
freed memory back to the system.
"""

import argparse
import contextlib
import ctypes
import gc
import json
import logging
import os
import select
import sys
import time

logger = logging.getLogger("reports.worker")

# A request line longer than this is not one of ours.
MAX_REQUEST_BYTES = 4096


def _release_memory():
    """Return freed heap pages to the system (glibc's malloc_trim), so an idle builder that built
    a large report does not keep its peak resident; a no-op elsewhere."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def answer(request: dict) -> tuple[dict, bytes]:
    """(header, body) for one request; every refusal is a header with an empty body."""
    from django.db import close_old_connections, connections  # noqa: PLC0415 - after setup

    from blindjudge.errors import ServiceError  # noqa: PLC0415 - after setup
    from judging.models import Session  # noqa: PLC0415 - after setup
    from reports.build import build_report  # noqa: PLC0415 - after setup
    from reports.render import REPORT_FORMATS, render_report  # noqa: PLC0415 - after setup

    session_id, fmt = request.get("session"), request.get("format")
    if not isinstance(session_id, int) or isinstance(session_id, bool) or fmt not in REPORT_FORMATS:
        return {"ok": False, "status": 400, "code": "invalid",
                "message": "the report builder got a malformed request"}, b""
    started, started_cpu = time.perf_counter(), time.process_time()
    close_old_connections()
    try:
        session = Session.objects.select_related("run").get(pk=session_id)
        body = render_report(build_report(session), fmt)
    except Session.DoesNotExist:
        return {"ok": False, "status": 404, "code": "not_found",
                "message": f"no session {session_id}"}, b""
    except ServiceError as error:  # Conflict: not revealed (any longer)
        return {"ok": False, "status": error.status, "code": error.code,
                "message": error.message}, b""
    except Exception:
        logger.exception("the report of session %s (%s) could not be built", session_id, fmt)
        return {"ok": False, "status": 500, "code": "build_failed",
                "message": f"the report of session {session_id} could not be built: the builder "
                           "failed (its error is in the server's log)"}, b""
    finally:
        connections.close_all()  # no connection held while idle (nor a transaction)
    return {"ok": True, "bytes": len(body), "build_s": round(time.perf_counter() - started, 4),
            "build_cpu_s": round(time.process_time() - started_cpu, 4)}, body


def serve(requests: int, answers, idle: float) -> int:
    """Answer the requests read from the descriptor `requests` on the binary stream `answers`
    until `requests` closes (0) or stays silent for `idle` seconds (0)."""
    poller = select.poll()
    poller.register(requests, select.POLLIN)
    pending = b""
    while True:
        while b"\n" not in pending:
            if len(pending) > MAX_REQUEST_BYTES:
                logger.error("the report builder got a request line of over %d bytes", MAX_REQUEST_BYTES)
                return 1
            if not poller.poll(idle * 1000 if idle > 0 else None):
                return 0  # idle: the serving process starts another when it needs one
            chunk = os.read(requests, MAX_REQUEST_BYTES)
            if not chunk:
                return 0  # the serving process closed our input: it is gone or let us go
            pending += chunk
        line, _, pending = pending.partition(b"\n")
        try:
            request = json.loads(line)
        except ValueError:
            request = None
        header, body = answer(request if isinstance(request, dict) else {})
        try:
            answers.write(json.dumps(header).encode("ascii") + b"\n")
            answers.write(body)
            answers.flush()
        except BrokenPipeError:
            return 0  # nobody is reading any more
        del body
        _release_memory()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reports.worker", description=__doc__.split("\n\n")[0])
    parser.add_argument("--idle", type=float, default=600.0,
                        help="exit after this many seconds without a request (0: never)")
    args = parser.parse_args(argv)
    # The answers go to the original standard output; from here on anything printed (a warning, a
    # stray print) lands on standard error, never inside a report.
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "blindjudge.settings")
    import django  # noqa: PLC0415 - order: after the descriptors are set

    django.setup()
    # Imported now, so the first report does not wait for them: the build and the modules it
    # imports lazily (scipy.stats in reports.stats and the model reviewers' section).
    import scipy.stats  # noqa: PLC0415, F401 - order: loaded now, so the first report does not wait

    import reports.build  # noqa: PLC0415, F401 - order: loaded now, so the first report does not wait
    import reports.render  # noqa: PLC0415, F401 - order: loaded now, so the first report does not wait

    _release_memory()
    return serve(sys.stdin.fileno(), answers, args.idle)


if __name__ == "__main__":
    sys.exit(main())
