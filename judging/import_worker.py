"""The import converter: a process of its own that turns a host's evaluation files into a bundle
for a serving process, with its memory bounded.

    python -m judging.import_worker --memory-mb N

Started by judging/importing.py `convert` (never by hand) for one conversion; it exits after
answering. Its address space is limited to N MB (RLIMIT_AS) before it reads anything, so a log
that asks for more fails here with MemoryError, never in the process that serves hosts and
judges. It needs no database and sets up no Django: the conversion and the importers are pure
(content/importers/).

The protocol, over its standard input and output (pipes held by the serving process):

- the request: one line of JSON, {"request": {the ImportRequest's fields, each file as {"name":
  ..., "bytes": N}}, "max_bundle_bytes": M}, then each file's N bytes in the order the line names
  them (`content.importers.conversion.request_message`);
- the answer: one line of JSON (ASCII), then the body: {"ok": true, "bytes": N, "summary":
  {...}, "places": {...} (Imported.places), "seconds": S, "peak_rss_mb": R} followed by exactly
  N bytes, the bundle's JSON (`content.importers.conversion.bundle_bytes`), or {"ok": false,
  "errors": [...], "more": K} (the conversion's refusal, ConversionError; a bundle over M bytes
  is refused here with the bundle validator's own words) and nothing more, or {"ok": false,
  "memory": true} and exit status 3 for a conversion that ran out of memory, or {"ok": false,
  "failed": "..."} (the traceback is on standard error: the server's log).

Anything else the process prints goes to standard error, never into the answer.
"""

import argparse
import dataclasses
import json
import os
import resource
import sys
import time

from content.importers.common import ConversionError, Source
from content.importers.conversion import (
    OUT_OF_MEMORY,
    SOURCE_FIELDS,
    SOURCE_LISTS,
    ImportRequest,
    bundle_bytes,
    convert_in_process,
)

# The request line names the files and holds the options: far smaller than this.
MAX_REQUEST_LINE_BYTES = 16 * 1024 * 1024
MEMORY_ANSWER = json.dumps({"ok": False, "memory": True}).encode() + b"\n"


def read_request(stream) -> tuple[ImportRequest, int]:
    """The request and the bundle limit, read from the binary stream (see the protocol)."""
    line = stream.readline(MAX_REQUEST_LINE_BYTES)
    message = json.loads(line)
    fields = dict(message["request"])

    def source(described: dict) -> Source:
        size = int(described["bytes"])
        data = stream.read(size) if size else b""
        if len(data) != size:
            raise ValueError(f"the request ended {size - len(data)} bytes short")
        return Source(str(described["name"]), data)

    for item in dataclasses.fields(ImportRequest):  # in the order they were written
        value = fields.get(item.name)
        if item.name in SOURCE_FIELDS:
            fields[item.name] = source(value) if value is not None else None
        elif item.name in SOURCE_LISTS:
            fields[item.name] = [source(described) for described in value or []]
    return ImportRequest(**fields), int(message["max_bundle_bytes"])


def answer(stream) -> tuple[dict, bytes]:
    """(header, body) for the request read from `stream`."""
    started = time.perf_counter()
    request, max_bundle_bytes = read_request(stream)
    try:
        imported = convert_in_process(request, max_bundle_bytes)
    except ConversionError as error:
        if isinstance(error.__cause__, MemoryError):
            # An importer's "could not be converted (MemoryError)": the limit, said as such.
            raise MemoryError from None
        return {"ok": False, "errors": list(error.errors), "more": error.more}, b""
    del request
    summary, places = imported.summary, imported.places
    raw = bundle_bytes(imported)
    del imported
    if len(raw) > max_bundle_bytes:
        # The validator's own refusal (content.bundle.validate_bundle), so the host reads the
        # same words whichever process found it; the bytes never cross the pipe.
        return {"ok": False, "errors": [f"bundle: {len(raw)} bytes exceeds the limit of "
                                        f"{max_bundle_bytes} bytes"], "more": 0}, b""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    return {"ok": True, "bytes": len(raw), "summary": summary, "places": places,
            "seconds": round(time.perf_counter() - started, 3), "peak_rss_mb": peak}, raw


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m judging.import_worker",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--memory-mb", type=int, required=True,
                        help="the address space this process may use, in MB")
    args = parser.parse_args(argv)
    # The answer goes to the original standard output; from here on anything printed lands on
    # standard error, never inside the answer.
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    limit = args.memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        header, body = answer(sys.stdin.buffer)
    except MemoryError:
        os.write(answers.fileno(), MEMORY_ANSWER)  # built before the limit: nothing to allocate
        return OUT_OF_MEMORY
    except Exception as error:  # noqa: BLE001 - said to the serving process, traceback logged
        import traceback  # noqa: PLC0415 - lazy: only this path needs it

        traceback.print_exc()
        header, body = {"ok": False, "failed": f"{type(error).__name__}: {error}"[:500]}, b""
    try:
        # ASCII: a host's file name or text holding a lone surrogate has no UTF-8 bytes.
        answers.write(json.dumps(header).encode() + b"\n")
        answers.write(body)
        answers.flush()
    except MemoryError:
        return OUT_OF_MEMORY
    except BrokenPipeError:
        return 0  # nobody is reading any more
    return 0


if __name__ == "__main__":
    sys.exit(main())
