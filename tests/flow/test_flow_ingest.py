"""Ingest into a real PostgreSQL: the rows are exactly what the files say."""

from __future__ import annotations

from pathlib import Path

from conftest import Ingest
from flow_checks import assert_rows_match_files, fetch, xmins


def test_rust_book_rows_match_their_documents(
    ingest: Ingest, rust_book: Path, database_url: str
) -> None:
    report = ingest(rust_book)

    assert report.ok, report.failures
    assert report.documents == report.processed == 112
    assert report.unchanged == 0
    total = assert_rows_match_files(database_url, rust_book)
    assert report.rows_written == report.rows_total == total
    assert report.rows_deleted == 0
    with_parent = fetch(
        database_url, "SELECT count(*) AS n FROM content_chunks WHERE parent_chunk_id IS NOT NULL"
    )
    assert with_parent[0]["n"] > 0  # the corpus has nested sections split over chunks
    documents = fetch(database_url, "SELECT rel_path, chunks, error FROM mdchunks_documents")
    assert len(documents) == 112 and all(d["error"] is None for d in documents)


def test_a_rerun_without_changes_processes_and_writes_nothing(
    ingest: Ingest, docs: Path, database_url: str
) -> None:
    first = ingest(docs)
    before = xmins(database_url)

    again = ingest(docs)

    assert again.processed == 0 and again.unchanged == first.processed == 8
    assert again.rows_written == 0 and again.rows_deleted == 0
    assert again.engine_stats.unchanged == 8
    assert xmins(database_url) == before  # not one row rewritten
