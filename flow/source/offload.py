"""Chunking off the event loop, so that documents overlap on the cores.

cocoindex runs every per-document component on one event loop thread, and
chunking (split, heading index, rows) is CPU-bound: called inline, it holds
that thread, and documents are chunked strictly one after another. The
splitter (Rust) releases the GIL while it splits; the tree-sitter parse does
not (py-tree-sitter 0.25-0.26 parses with the GIL held). In a worker thread,
one document's split overlaps the event loop's engine work and another
document's parse: measured on 2 cores, the rust-book ingests about 1.3x
faster (benchmarks stage 2). Pages under 8 KiB (tldr's) are chunked inline:
handing them to a thread costs about what chunking them does.

How much is chunked at once is bounded twice: by a pool of one thread per core,
and by the bytes in flight, because each parse (the splitter's and the heading
index's) peaks at about 50 bytes of memory per byte of markdown. Small
documents overlap; a document over the byte budget is chunked alone, so a
run's peak memory stays that of its largest document.

Memory between documents: each chunking thread gets a malloc arena of its own
(glibc), and the parses' freed memory stays in it, so two threads hold two
peaks' worth for the rest of the run. After each document it chunks, the
thread hands the free pages back (`malloc_trim`): measured on 12 MB
of 40-160 KB documents (benchmarks stage 7), the ingest's peak fell from 200
to 157 MB (the bare cocoindex app, which splits on one thread: 138 MB).
Elsewhere than glibc it does nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

from mdchunks.plugin.memory import TRIM

T = TypeVar("T")

MAX_BYTES_IN_FLIGHT = 4 * 1024 * 1024
INLINE_BELOW_BYTES = 8 * 1024
THREADS = max(2, os.cpu_count() or 2)


class ByteBudget:
    """Admits work while the bytes in flight fit the budget; a piece larger
    than the whole budget is admitted when nothing else runs."""

    def __init__(self, max_bytes: int) -> None:
        self._max_bytes = max_bytes
        self._bytes = 0
        self._running = 0
        self._changed = threading.Condition()

    def _fits(self, size: int) -> bool:
        return self._running == 0 or self._bytes + size <= self._max_bytes

    @contextlib.contextmanager
    def hold(self, size: int) -> Iterator[None]:
        with self._changed:
            self._changed.wait_for(lambda: self._fits(size))
            self._bytes += size
            self._running += 1
        try:
            yield
        finally:
            with self._changed:
                self._bytes -= size
                self._running -= 1
                self._changed.notify_all()


_BUDGET = ByteBudget(MAX_BYTES_IN_FLIGHT)
_POOL = ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="mdchunks-chunk")


# glibc's malloc_trim, shared with the splitter (flow/plugin/memory.py).
_TRIM = TRIM


def _held(size: int, work: Callable[[], T]) -> T:
    with _BUDGET.hold(size):
        try:
            return work()
        finally:
            if _TRIM is not None:
                _TRIM()


def drop_queued() -> None:
    """Cancel the chunking not yet started (a watch is stopping): the pool's
    threads finish what they run, and the process would otherwise wait at its
    exit for every queued document to be chunked. Later work gets a new pool."""
    global _POOL
    old, _POOL = _POOL, ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="mdchunks-chunk")
    old.shutdown(wait=False, cancel_futures=True)


async def run_off_loop(size: int, work: Callable[[], T]) -> T:
    """`work()` on the chunking pool, in the caller's context (cocoindex's
    component context included), once `size` bytes fit the budget. Below
    `INLINE_BELOW_BYTES`, inline: chunking a page that small takes about as
    long as handing it to a thread and back."""
    if size < INLINE_BELOW_BYTES:
        return work()
    context = contextvars.copy_context()
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(_POOL, functools.partial(context.run, _held, size, work))
