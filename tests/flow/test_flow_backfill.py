"""The backfill the spike feared: heading columns filled in without touching files."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import psycopg
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


def test_a_source_walks_as_its_last_run_did_until_told_otherwise(
    run_cli: RunCli, docs: Path, tmp_path: Path, database_url: str
) -> None:
    """Which files a source takes is remembered with its recipe: a plain run
    after `--follow-outside-links` or `--max-doc-bytes N` keeps the linked and
    the large documents' rows; turning either back is explicit and said."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "linked.md").write_text("# Linked\n\nWritten elsewhere, linked in.\n")
    (docs / "linked.md").symlink_to(elsewhere / "linked.md")
    (docs / "large.md").write_text("# Large\n\n" + "A sentence of a large page. " * 400)
    documents = "SELECT DISTINCT rel_path FROM content_chunks WHERE rel_path = ANY(%s) ORDER BY 1"
    both = (["large.md", "linked.md"],)

    told = run_cli(
        "ingest", str(docs), "--source", "docs", "--follow-outside-links",
        "--max-doc-bytes", "100000",
    )  # fmt: skip
    assert told.code == 0, told.err
    head = told.out.splitlines()[0]
    assert "documents up to 100,000 bytes, links outside the folder followed" in head, head
    assert fetch(database_url, documents, both) == [
        {"rel_path": "large.md"},
        {"rel_path": "linked.md"},
    ]

    plain = run_cli("ingest", str(docs), "--source", "docs")
    assert plain.code == 0, plain.err
    head = plain.out.splitlines()[0]
    assert "links outside the folder followed; the source's last settings" in head, head
    assert "0 processed, 10 unchanged, 0 failed" in plain.out and "0 deleted" in plain.out
    assert len(fetch(database_url, documents, both)) == 2

    back = run_cli(
        "ingest", str(docs), "--source", "docs", "--no-follow-outside-links",
        "--max-doc-bytes", "5000",
    )  # fmt: skip
    assert back.code == 1  # the large document and the link are refused, named
    head = back.out.splitlines()[0]
    assert "changed: max_doc_bytes 100,000 -> 5,000, follow_outside_links true -> false" in head
    assert fetch(database_url, documents, both) == []
    again = run_cli("ingest", str(docs), "--source", "docs")  # remembered: still refused
    assert again.code == 1 and "changed" not in again.out.splitlines()[0]
    assert "documents up to 5,000 bytes" in again.out.splitlines()[0]


def test_a_source_from_before_the_walk_was_remembered_keeps_its_linked_documents(
    run_cli: RunCli, docs: Path, tmp_path: Path, database_url: str
) -> None:
    """Migration 0015 found sources that never recorded whether they follow
    links out of their folder (NULL): their rows tell. One that holds a
    linked document keeps following; one that holds none does not start."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "linked.md").write_text("# Linked\n\nWritten elsewhere, linked in.\n")
    (docs / "linked.md").symlink_to(elsewhere / "linked.md")
    other = Path(shutil.copytree(docs, tmp_path / "other", symlinks=True))
    assert run_cli("ingest", str(docs), "--source", "docs", "--follow-outside-links").code == 0
    assert run_cli("ingest", str(other), "--source", "other").code == 1  # the link refused
    with psycopg.connect(database_url) as conn:  # as migration 0015 left them
        conn.execute("UPDATE mdchunks_sources SET follow_outside_links = NULL")
    linked = "SELECT source FROM content_chunks WHERE rel_path = 'linked.md' ORDER BY 1"

    plain = run_cli("ingest", str(docs), "--source", "docs")
    assert plain.code == 0, plain.err
    assert "links outside the folder followed" in plain.out.splitlines()[0], plain.out
    assert "0 processed, 9 unchanged" in plain.out and "0 deleted" in plain.out
    refused = run_cli("ingest", str(other), "--source", "other")
    assert refused.code == 1 and "links outside" not in refused.out.splitlines()[0]
    assert fetch(database_url, linked) == [{"source": "docs"}]
    assert fetch(
        database_url, "SELECT source, follow_outside_links FROM mdchunks_sources ORDER BY 1"
    ) == [
        {"source": "docs", "follow_outside_links": True},
        {"source": "other", "follow_outside_links": False},
    ]


def test_a_folder_made_a_second_source_is_said_so(run_cli: RunCli, docs: Path) -> None:
    # Allowed (two recipes side by side), but every hit of the folder then
    # comes twice: the run says so, and how to update the first instead.
    assert run_cli("ingest", str(docs), "--source", "mine").code == 0
    refused = run_cli("ingest", str(docs), "--chunk-size", "-5")
    # Options it refuses: the run makes no copy, so it warns of none.
    assert refused.code == 2 and refused.err.strip().splitlines() == [
        "error: chunk size must be at least 1 byte (got -5)"
    ], refused.err
    second = run_cli("ingest", str(docs))
    assert second.code == 0, second.err
    assert second.err.strip() == (
        f"warning: the folder {docs.resolve()} is already source 'mine'; this run makes a "
        "second copy of its rows as source 'docs' (--source mine updates that one instead)"
    )
    assert run_cli("ingest", str(docs)).err == ""  # once: 'docs' is known now


def test_a_chunk_size_too_small_for_words_is_warned_of(run_cli: RunCli, docs: Path) -> None:
    # Allowed (experiments use small budgets), but chunks of a few bytes cut
    # words apart and search finds little: the run says so, once, on stderr.
    small = run_cli("ingest", str(docs), "--source", "docs", "--chunk-size", "40")
    assert small.code == 0, small.err
    assert _without_progress(small.err) == [
        "warning: chunks of at most 40 bytes hold a few words each, cut mid-word, and "
        "search finds little in them (the default is 2000)"
    ]
    again = run_cli("backfill", "--source", "docs", "--chunk-size", "100")
    assert _without_progress(again.err) == []


# Off a terminal a run says how far it is every 5 s (flow/cli/progress.py):
# `ingesting docs: 6 of 8 documents, 0.0 MB/s, 5 s`, which a loaded machine
# reaches in a run of 8 documents.
_PROGRESS = re.compile(r"\S+ \S+: [\d,]+ of [\d,]+ \w+, ")


def _without_progress(err: str) -> list[str]:
    return [line for line in err.strip().splitlines() if not _PROGRESS.match(line)]
