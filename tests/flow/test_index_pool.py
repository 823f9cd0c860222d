"""flow/index_pool.py: big documents' heading indexes built in a worker process."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import RUST_BOOK, Ingest
from flow_checks import assert_rows_match_files
from mdchunks import index_pool
from mdchunks.heading_index import build_index
from mdchunks.heading_index.model import HeadingIndex
from mdchunks.index_pool import IndexPool, WorkerDied

ABORT = "<!-- abort the worker -->"


def pid_index(text: str) -> HeadingIndex:
    """An index whose length says which process built it (run in the workers)."""
    return HeadingIndex(headings=(), length=os.getpid())


def aborting_index(text: str) -> HeadingIndex:
    """Kills the process it runs in for a document holding ABORT, as a native
    abort in the parse would; indexes any other document."""
    if ABORT in text:
        os.abort()
    return build_index(text)


def _started(pool: IndexPool, *, arm: bool = True) -> IndexPool:
    if arm:
        pool.arm([])  # armed whatever the sizes when min_corpus_bytes is 0
    pool.start()
    for _ in range(600):
        if pool.ready():
            return pool
        threading.Event().wait(0.1)
    raise AssertionError("the index workers did not start within a minute")


def test_big_documents_are_indexed_in_a_worker_small_ones_here() -> None:
    pool = IndexPool(workers=1, min_chars=50, min_corpus_bytes=1_000, build=pid_index)
    try:
        # Not armed (a corpus of small or few big documents): all indexed here.
        pool.arm([60] * 10 + [10] * 1_000)
        assert pool.index("x" * 100).length == os.getpid()
        assert not pool.ready()
        pool.arm([60] * 17)
        assert pool.index("small") == HeadingIndex(headings=(), length=os.getpid())
        # Before the worker answers, a big document is indexed here, not waited for.
        assert not pool.ready()
        assert pool.index("x" * 100).length == os.getpid()
        _started(pool, arm=False)
        worker = pool.index("x" * 100).length
        assert worker != os.getpid()
        assert pool.index("small").length == os.getpid()
    finally:
        pool.close()


def test_a_worker_builds_the_same_index_as_this_process() -> None:
    pool = _started(IndexPool(workers=1, min_chars=1_000, min_corpus_bytes=0))
    try:
        for path in sorted(RUST_BOOK.glob("ch0*.md"))[:12]:
            text = path.read_text(encoding="utf-8")
            assert pool.index(text) == build_index(text), path.name
    finally:
        pool.close()


def test_a_document_that_kills_its_worker_fails_alone() -> None:
    pool = _started(IndexPool(workers=1, min_chars=50, min_corpus_bytes=0, build=aborting_index))
    fine = (RUST_BOOK / "ch04-01-what-is-ownership.md").read_text(encoding="utf-8")
    try:
        # The aborting document and others queued behind it on the same worker:
        # only the aborting one fails; the others are indexed by a fresh worker.
        with ThreadPoolExecutor(max_workers=4) as threads:
            futures = [threads.submit(pool.index, fine) for _ in range(3)]
            doomed = threads.submit(pool.index, ABORT + "\n" + "x" * 100)
            futures += [threads.submit(pool.index, fine) for _ in range(3)]
            with pytest.raises(WorkerDied, match="worker process died"):
                doomed.result()
            assert all(future.result() == build_index(fine) for future in futures)
        # And the pool goes on serving.
        _started(pool)
        assert pool.index(fine) == build_index(fine)
    finally:
        pool.close()


def test_an_ingest_of_big_documents_has_the_rows_their_files_give(
    ingest: Ingest, tmp_path: Path, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    pool = _started(IndexPool(workers=1, min_chars=8_000, min_corpus_bytes=0))
    monkeypatch.setattr(index_pool, "POOL", pool)
    root = tmp_path / "big"
    root.mkdir()
    chapters = sorted(RUST_BOOK.glob("ch*.md"), key=lambda path: -path.stat().st_size)
    for path in chapters[:8]:
        text = path.read_text(encoding="utf-8")
        assert len(text) >= 8_000  # over the size that goes to the workers
        (root / path.name).write_text(text, encoding="utf-8")
    try:
        report = ingest(root)
        assert report.ok, report.failures
        assert pool.sent == 8
        assert assert_rows_match_files(database_url, root) > 40
    finally:
        pool.close()


def test_an_ingest_reports_a_document_whose_worker_died(
    ingest: Ingest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pool = _started(IndexPool(workers=1, min_chars=50, min_corpus_bytes=0, build=aborting_index))
    monkeypatch.setattr(index_pool, "POOL", pool)
    root = tmp_path / "docs"
    root.mkdir()
    fine = (RUST_BOOK / "ch04-01-what-is-ownership.md").read_text(encoding="utf-8")
    (root / "fine.md").write_text(fine, encoding="utf-8")
    (root / "doomed.md").write_text(ABORT + "\n\n" + fine, encoding="utf-8")
    try:
        report = ingest(root)
    finally:
        pool.close()
    assert [failure.rel_path for failure in report.failures] == ["doomed.md"]
    assert "worker process died" in report.failures[0].cause
    assert report.rows_total > 5  # fine.md's
