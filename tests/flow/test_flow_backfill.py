"""The backfill the spike feared: heading columns filled in without touching files."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import RunCli
from flow_checks import assert_rows_match_files, fetch
from mdchunks import Recipe


def _file_state(root: Path) -> dict[Path, tuple[int, bytes]]:
    return {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in root.rglob("*") if p.is_file()}


def test_backfill_fills_heading_columns_after_an_ingest_without_them(
    run_cli: RunCli, docs: Path, database_url: str
) -> None:
    (docs / "notes.txt").write_text("Plain text stays without headings.\n" * 20)
    first = run_cli("ingest", str(docs), "--source", "docs", "--no-headings")
    assert first.code == 0, first.err
    assert fetch(
        database_url, "SELECT count(*) AS n FROM content_chunks WHERE heading_text IS NOT NULL"
    ) == [{"n": 0}]
    assert_rows_match_files(database_url, docs, recipe=Recipe(headings=False))
    files = _file_state(docs)

    result = run_cli("backfill", "--source", "docs", "--headings")

    assert result.code == 0, result.err
    assert "9 processed, 0 unchanged, 0 failed" in result.out
    assert _file_state(docs) == files  # not one file touched
    assert_rows_match_files(database_url, docs, recipe=Recipe(headings=True))
    markdown_rows = fetch(
        database_url,
        "SELECT count(*) FILTER (WHERE heading_text IS NOT NULL) AS with_heading, count(*) AS n "
        "FROM content_chunks WHERE rel_path LIKE '%%.md'",
    )[0]
    # Only a chunk before a document's first heading (a preamble) may have none.
    assert markdown_rows["n"] - 8 <= markdown_rows["with_heading"] <= markdown_rows["n"]
    assert fetch(database_url, "SELECT DISTINCT recipe FROM content_chunks") == [
        {"recipe": Recipe(headings=True).fingerprint()}
    ]

    again = run_cli("backfill", "--source", "docs")  # the recipe is current now
    assert again.code == 0 and "0 processed, 9 unchanged" in again.out


def test_a_plain_ingest_keeps_the_sources_last_settings_and_says_so(
    run_cli: RunCli, docs: Path
) -> None:
    """A plain `ingest` after a backfill to other budgets keeps them (it went
    back to the defaults and rewrote every row); a changed option says what
    it changed, and the note names the source's last recipe."""
    first = run_cli("ingest", str(docs), "--source", "docs")
    assert first.code == 0 and "last settings" not in first.out.splitlines()[0]  # new source
    backfilled = run_cli("backfill", "--source", "docs", "--chunk-size", "700")
    assert backfilled.code == 0, backfilled.err
    assert "note: the recipe changed" in backfilled.out
    assert "the source's last was chunk 2000/1000/200 bytes" in backfilled.out
    assert "changed: chunk_size 2000 -> 700, min_chunk_size 1000 -> 350" in backfilled.out

    again = run_cli("ingest", str(docs), "--source", "docs")
    assert again.code == 0, again.err
    head = again.out.splitlines()[0]
    assert "(chunk 700/350/200 bytes" in head and head.endswith("; the source's last settings")
    assert "0 processed, 8 unchanged" in again.out and "0 deleted" in again.out
    assert "recipe changed" not in again.out

    back = run_cli("ingest", str(docs), "--source", "docs", "--chunk-size", "2000")
    assert "changed: chunk_size 700 -> 2000, min_chunk_size 350 -> 1000" in back.out
    assert "the source's last was chunk 700/350/200 bytes" in back.out


def test_one_budget_option_is_one_recipe_in_ingest_and_backfill(
    run_cli: RunCli, docs: Path, tmp_path: Path
) -> None:
    """`--chunk-size N` alone takes the minimum and overlap a new source takes
    with it, whatever the source had: ingest and backfill agree."""
    assert run_cli("ingest", str(docs), "--source", "a", "--chunk-size", "500").code == 0
    other = Path(shutil.copytree(docs, tmp_path / "other"))
    assert run_cli("ingest", str(other), "--source", "b", "--chunk-size", "3000").code == 0
    backfilled = run_cli("backfill", "--source", "b", "--chunk-size", "1000")
    ingested = run_cli("ingest", str(docs), "--source", "a", "--chunk-size", "1000")
    fresh = Recipe().with_options(chunk_size=1000)
    assert f"recipe {fresh.fingerprint()} " in backfilled.out.splitlines()[0]
    assert f"recipe {fresh.fingerprint()} " in ingested.out.splitlines()[0]
