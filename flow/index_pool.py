"""The heading index of big documents, built in a worker process.

py-tree-sitter parses with the GIL held (its allocator is Python's), so in a
chunking thread (flow/offload.py) the index's parse of one document stops the
event loop and the other chunking thread for as long as it runs: on long
documents the parse is a fifth of the ingest's CPU time, all of it on the
GIL. The budget splitter (Rust) releases the GIL; the parse cannot. So a
document of `PROCESS_FROM_CHARS` code points or more has its index built in a worker
process while the thread waits with the GIL released, and the loop and the
other thread go on. Smaller ones are parsed in the thread: their parse costs
about what shipping the text to a process and the index back does.

- One worker per core less one (at least one): the main process keeps a core
  for the engine, the splits and the rows.
- Only for a big corpus: a run arms the pool when the documents of its
  listing that are big add up to `PROCESS_FROM_CORPUS_BYTES` (a process start
  costs what indexing a few hundred KB does). The pool starts with the first
  big document the run chunks (a no-op re-run starts nothing), in the
  background: until its workers answer, big documents are parsed in the
  thread as before, so no document waits for a process to start.
- Workers are spawned, never forked (the engine's Rust threads and the event
  loop do not survive a fork), and import the heading index only
  (tree-sitter), never cocoindex.
- A worker that dies (a native abort in the parse) breaks the pool, and every
  document it held or had queued gets the same error. The pool is replaced,
  and each of those documents is indexed once more in a process of its own:
  only a document that kills that process too fails (`WorkerDied`, a
  document failure with that cause), and the run goes on.

The index is the same whichever process builds it: `build_index` is a pure
function of the text (tests/flow/test_index_pool.py compares them).
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from mdchunks.heading_index import build_index
from mdchunks.heading_index.model import HeadingIndex

PROCESS_FROM_CHARS = 32 * 1024
PROCESS_FROM_CORPUS_BYTES = 2 * 1024 * 1024
WORKERS = max(1, (os.cpu_count() or 2) - 1)
_SPAWN = multiprocessing.get_context("spawn")


class WorkerDied(Exception):
    """The worker process died while indexing this document, twice."""


class IndexPool:
    """Worker processes building heading indexes, started on first use."""

    def __init__(
        self,
        workers: int = WORKERS,
        min_chars: int = PROCESS_FROM_CHARS,
        min_corpus_bytes: int = PROCESS_FROM_CORPUS_BYTES,
        build: Callable[[str], HeadingIndex] = build_index,
    ) -> None:
        self._build = build  # a module-level function: workers unpickle it by name
        self._workers = workers
        self._min_chars = min_chars
        self._min_corpus_bytes = min_corpus_bytes
        self._lock = threading.Lock()
        self._executor: ProcessPoolExecutor | None = None
        self._ready = threading.Event()
        self._armed = False
        self.sent = 0  # documents handed to the workers (diagnostics, tests)

    def start(self) -> ProcessPoolExecutor:
        """The workers, started (in the background) if they are not."""
        with self._lock:
            if self._executor is None:
                self._ready.clear()
                self._executor = ProcessPoolExecutor(max_workers=self._workers, mp_context=_SPAWN)
                # A builtin, so the worker imports nothing of ours to run it.
                warm: Future[int] = self._executor.submit(int)
                warm.add_done_callback(self._started)
            return self._executor

    def _started(self, warm: Future[int]) -> None:
        if warm.exception() is None:  # else big documents stay in the threads
            self._ready.set()

    def _replace(self, broken: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._executor is broken:
                self._executor = None
        broken.shutdown(wait=False, cancel_futures=True)

    def arm(self, sizes: Iterable[int]) -> None:
        """Use workers in this run if its big documents (file sizes in bytes)
        add up to `min_corpus_bytes`: a process costs a start, which
        only a big corpus pays back; small ones are indexed in the threads."""
        big = sum(size for size in sizes if size >= self._min_chars)
        self._armed = self._workers > 0 and big >= self._min_corpus_bytes

    def index(self, text: str) -> HeadingIndex:
        """`build_index(text)`, in a worker when `text` is big and the run armed
        the pool (it starts with the first such document)."""
        if len(text) < self._min_chars or not self._armed:
            return self._build(text)
        executor = self.start()
        if not self._ready.is_set():
            return self._build(text)  # the workers are still starting
        self.sent += 1  # under the GIL: a plain counter is exact enough
        try:
            return executor.submit(self._build, text).result()
        except BrokenProcessPool:
            self._replace(executor)
        # A worker died: this document or another one it held. Indexed again in
        # a process of its own, so that only the document that kills it fails.
        alone = ProcessPoolExecutor(max_workers=1, mp_context=_SPAWN)
        try:
            return alone.submit(self._build, text).result()
        except BrokenProcessPool:
            raise WorkerDied(
                "the heading index's worker process died while indexing this document"
            ) from None
        finally:
            alone.shutdown(wait=False, cancel_futures=True)

    def ready(self) -> bool:
        """Whether big documents go to the workers now."""
        return self._executor is not None and self._ready.is_set()

    def close(self) -> None:
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)


POOL = IndexPool()
