"""Freed C heap given back to the system after the few requests that allocate a lot at once.

glibc's malloc keeps what a request freed in its arenas for later allocations; after a peak (a
host's import parses a bundle of megabytes in the serving process) that free memory stays
resident, scattered between live blocks where no later request fits, and each import left the
serving process a few MB larger (bench/README.md, issue 32 item 3). `malloc_trim(0)` hands every
whole free page of every arena back. A no-op where there is no glibc.
"""

import contextlib
import ctypes

_libc = None


def trim_heap() -> None:
    """Give the C heap's free pages back to the system (glibc's malloc_trim); a few ms."""
    global _libc  # noqa: PLW0603 - the C library, loaded once
    if _libc is None:
        _libc = False
        with contextlib.suppress(OSError, AttributeError):
            found = ctypes.CDLL("libc.so.6")
            _libc = found.malloc_trim and found
    if _libc:
        _libc.malloc_trim(0)
