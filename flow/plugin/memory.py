"""Freed memory handed back to the system (glibc's `malloc_trim`).

The splitter (Rust) and the parses allocate through the C library, which
keeps what they free for later: Python's own small objects come from arenas
of their own, so they do not reuse it, and what a document allocates after
its split stacked on top of the split's peak (a heading-dense document's
section rows: 227 MB at 0.5 MB of text, 148 MB trimmed after the split;
issue 42: memory per document). Elsewhere than glibc, `trim` does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Callable


def _malloc_trim() -> Callable[[], object] | None:
    """glibc's `malloc_trim(0)`, or None where the C library has none."""
    name = ctypes.util.find_library("c")
    try:
        trim = ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        return None
    if trim is None:
        return None
    trim.argtypes = [ctypes.c_size_t]
    return functools.partial(trim, 0)


TRIM = _malloc_trim()


def trim() -> None:
    """Hand the C library's free pages back to the system (a few ms after a
    large split, far less after a small one)."""
    if TRIM is not None:
        TRIM()
