"""Re-runs: only what changed is touched, and nothing stale survives."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import mdchunks
import psycopg
import pytest
from conftest import Ingest, RunCli
from flow_checks import assert_rows_match_files, fetch, rows_by_document, xmins
from mdchunks import Recipe
from mdchunks.db import migrate
from mdchunks.retrieval import lexical_stats
from mdchunks.source import state

OWNERSHIP = "ch04-01-what-is-ownership.md"
STRINGS = "ch08-02-strings.md"


def _rows_of(database_url: str, rel_path: str) -> dict[int, str]:
    return {row["position"]: row["xmin"] for row in rows_by_document(database_url)[rel_path]}


def test_editing_one_file_rewrites_only_its_rows(
    ingest: Ingest, docs: Path, database_url: str
) -> None:
    ingest(docs)
    before = rows_by_document(database_url)
    path = docs / OWNERSHIP
    text = path.read_text()
    # Change the last section only: the chunks before it stay the same rows.
    path.write_text(text + "\n## A new closing section\n\nWith a paragraph of its own.\n")

    report = ingest(docs)

    assert report.processed == 1 and report.unchanged == 7
    after = rows_by_document(database_url)
    for rel_path, rows in before.items():
        if rel_path != OWNERSHIP:
            assert [r["xmin"] for r in after[rel_path]] == [r["xmin"] for r in rows], rel_path
    assert "A new closing section" in after[OWNERSHIP][-1]["text"]
    old_xmins = {b["xmin"] for b in before[OWNERSHIP]}
    changed = [r for r in after[OWNERSHIP] if r["xmin"] not in old_xmins]
    assert 0 < len(changed) < len(after[OWNERSHIP])  # unchanged chunks kept their rows
    assert len(changed) == report.rows_written
    assert assert_rows_match_files(database_url, docs) == report.rows_total


def test_a_shrunk_file_loses_its_extra_rows(ingest: Ingest, docs: Path, database_url: str) -> None:
    ingest(docs)
    had = len(rows_by_document(database_url)[STRINGS])
    path = docs / STRINGS
    path.write_text(path.read_text()[:3000])

    report = ingest(docs)

    now = len(rows_by_document(database_url)[STRINGS])
    assert now < had
    assert report.rows_deleted == had - now
    assert_rows_match_files(database_url, docs)


def test_deleting_a_file_deletes_its_rows_only(
    ingest: Ingest, docs: Path, database_url: str
) -> None:
    ingest(docs)
    before = xmins(database_url)
    gone = rows_by_document(database_url)[OWNERSHIP]
    (docs / OWNERSHIP).unlink()

    report = ingest(docs)

    assert report.removed == 1 and report.processed == 0
    assert report.rows_deleted == len(gone) and report.rows_written == 0
    after = xmins(database_url)
    assert set(after) == set(before) - {row["id"] for row in gone}
    assert all(after[row_id] == before[row_id] for row_id in after)
    assert (
        fetch(database_url, "SELECT 1 FROM mdchunks_documents WHERE rel_path = %s", [OWNERSHIP])
        == []
    )
    assert_rows_match_files(database_url, docs)


def test_renaming_a_file_moves_its_rows(ingest: Ingest, docs: Path, database_url: str) -> None:
    ingest(docs)
    old = rows_by_document(database_url)[OWNERSHIP]
    (docs / OWNERSHIP).rename(docs / "generics" / "ownership.md")

    report = ingest(docs)

    assert report.removed == 1 and report.processed == 1
    grouped = rows_by_document(database_url)
    assert OWNERSHIP not in grouped
    moved = grouped["generics/ownership.md"]
    assert [r["text"] for r in moved] == [r["text"] for r in old]
    assert not {r["id"] for r in moved} & {r["id"] for r in old}  # ids follow the path
    assert_rows_match_files(database_url, docs)


def test_changing_the_chunk_size_reprocesses_everything_and_leaves_no_old_recipe(
    ingest: Ingest, docs: Path, database_url: str
) -> None:
    first = ingest(docs)
    smaller = Recipe(chunk_size=800, min_chunk_size=300, chunk_overlap=80)
    mtimes = {p: p.stat().st_mtime_ns for p in docs.rglob("*.md")}

    report = ingest(docs, recipe=smaller)

    assert report.processed == 8 and report.unchanged == 0
    assert report.engine_stats.reprocessed == 8
    recipes = fetch(database_url, "SELECT DISTINCT recipe FROM content_chunks")
    assert recipes == [{"recipe": smaller.fingerprint()}]
    documents = fetch(database_url, "SELECT DISTINCT recipe FROM mdchunks_documents")
    assert documents == [{"recipe": smaller.fingerprint()}]
    assert report.rows_total > first.rows_total
    assert assert_rows_match_files(database_url, docs, recipe=smaller) == report.rows_total
    assert {p: p.stat().st_mtime_ns for p in docs.rglob("*.md")} == mtimes


def test_text_files_are_split_as_plain_text_with_null_heading_columns(
    ingest: Ingest, docs: Path, database_url: str
) -> None:
    notes = docs / "notes.txt"
    # Markdown-looking lines in a .txt file are not headings.
    notes.write_text("# Not a heading\n\n" + "Plain words in a text file. " * 300)

    report = ingest(docs, recipe=Recipe(chunk_size=1000, min_chunk_size=400, chunk_overlap=0))

    assert report.ok
    rows = rows_by_document(database_url)["notes.txt"]
    assert len(rows) > 1
    assert all(
        r["heading_text"] is None
        and r["heading_level"] is None
        and r["heading_path"] == []
        and r["parent_chunk_id"] is None
        for r in rows
    )
    assert_rows_match_files(
        database_url, docs, recipe=Recipe(chunk_size=1000, min_chunk_size=400, chunk_overlap=0)
    )


def test_lost_engine_state_and_a_deleted_file_leave_no_duplicates_or_orphans(
    ingest: Ingest, docs: Path, database_url: str, data_dir: Path
) -> None:
    first = ingest(docs)
    shutil.rmtree(data_dir / "state")
    (docs / OWNERSHIP).unlink()
    strings = docs / STRINGS
    strings.write_text(strings.read_text()[:2500])  # shrinks while the state is lost

    report = ingest(docs)

    assert report.processed == 7  # no state: everything is new to the engine
    assert OWNERSHIP not in rows_by_document(database_url)
    total = assert_rows_match_files(database_url, docs)
    assert report.rows_total == total < first.rows_total
    assert (
        fetch(
            database_url, "SELECT rel_path FROM mdchunks_documents WHERE rel_path = %s", [OWNERSHIP]
        )
        == []
    )


def test_engine_state_is_bound_to_its_database(
    ingest: Ingest, docs: Path, data_dir: Path, new_database: Callable[[], str]
) -> None:
    """Same data dir, another (empty) database: nothing may count as unchanged."""
    ingest(docs)
    other = new_database()

    report = mdchunks.ingest(docs, source="docs", database_url=other, data_dir=data_dir)

    assert report.processed == 8 and report.unchanged == 0
    assert_rows_match_files(other, docs)


def test_rows_deleted_behind_the_engines_back_are_restored(
    ingest: Ingest, docs: Path, database_url: str
) -> None:
    ingest(docs)
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("DELETE FROM content_chunks WHERE rel_path = %s AND position > 0", [STRINGS])

    report = ingest(docs)

    assert report.healed
    assert_rows_match_files(database_url, docs)
    again = ingest(docs)
    assert not again.healed and again.processed == 0


def test_an_engine_state_of_the_older_layout_is_started_afresh_and_rewrites_no_row(
    run_cli: RunCli, docs: Path, database_url: str, data_dir: Path
) -> None:
    # Before layout 2 the engine kept a record of every chunk row it wrote
    # (flow/source/state.py): such a state is not opened, the run starts as a
    # first run does, says why, and rows that say the same are left as they are.
    first = run_cli("ingest", str(docs), "--source", "docs")
    assert first.code == 0 and "note:" not in first.out, first.out  # a new state is no upgrade
    before = xmins(database_url)
    (token_file,) = (data_dir / "state").glob(f"*/{state.STATE_TOKEN_FILE}")
    token, layout = token_file.read_text().splitlines()
    assert layout == state.STATE_LAYOUT
    token_file.write_text(token + "\n")  # as an older mdchunks stamps its state

    upgraded = run_cli("ingest", str(docs), "--source", "docs")

    assert upgraded.code == 0, upgraded.err
    assert "8 processed, 0 unchanged" in upgraded.out
    assert "note: this release keeps its engine state in a new layout" in upgraded.out
    assert "did not finish" not in upgraded.out and "had not made" not in upgraded.out
    assert xmins(database_url) == before  # no row rewritten
    assert token_file.read_text().splitlines()[1] == state.STATE_LAYOUT
    assert_rows_match_files(database_url, docs)
    again = run_cli("ingest", str(docs), "--source", "docs")
    assert "0 processed, 8 unchanged" in again.out and "note:" not in again.out, again.out


def _search_index_file(database_url: str) -> int:
    (row,) = fetch(
        database_url,
        "SELECT relfilenode FROM pg_class WHERE relname = 'content_chunks_search_vector_idx'",
    )
    return int(row["relfilenode"])


def test_a_run_that_writes_most_of_the_table_rebuilds_its_search_index(
    ingest: Ingest, docs: Path, database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The rust-book sample is small: its rows count as "many" here.
    monkeypatch.setattr(lexical_stats, "REBUILD_MIN_ROWS", 10)
    migrate.apply(database_url)
    made = _search_index_file(database_url)
    ingest(docs)  # a first ingest: every row written
    rebuilt = _search_index_file(database_url)
    assert rebuilt != made
    strings = docs / STRINGS
    strings.write_text(strings.read_text() + "\nOne more line.\n")
    ingest(docs)  # one document's rows: the index stays as it is
    assert _search_index_file(database_url) == rebuilt
    smaller = Recipe(chunk_size=1000, min_chunk_size=400, chunk_overlap=0)
    ingest(docs, recipe=smaller)  # a backfill writes them all again
    assert _search_index_file(database_url) != rebuilt
    assert_rows_match_files(database_url, docs, recipe=smaller)
