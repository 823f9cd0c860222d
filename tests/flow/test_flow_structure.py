"""The structure-first chunker as a recipe choice (docs/structure-chunker.md, issue #7).

Rows are checked against `heading_index.structure_chunks` run here on the same
document (`flow_checks.expected_chunks`), and against the table's invariants.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import psycopg
import pytest
from cocoindex.ops.text import RecursiveSplitter
from conftest import Ingest, RunCli
from flow_checks import assert_rows_match_files, expected_chunks, fetch, rows_by_document
from mdchunks import Recipe, chunk_id
from mdchunks.db import migrate
from mdchunks.heading_index import (
    StructureOptions,
    budget_split_from,
    build_index,
    decode_document,
    structure_chunks,
)

_SPLITTER = RecursiveSplitter()

ROOT = Path(__file__).resolve().parents[2]
STRUCTURE = Recipe(chunker="structure")
# A heading too long for the default 256-byte breadcrumb budget: one chunk,
# whose breadcrumb is truncated.
DEEP = f"# {'A chapter title that goes on and on ' * 8}\n\nThe only text of it.\n"


TABLE = "# Settings\n\nEvery key.\n\n| Key | Value |\n|-----|-------|\n" + "".join(
    f"| key number {n} of the settings | value {n}, described at some length |\n"
    for n in range(120)
)


@pytest.fixture
def corpus(docs: Path) -> Path:
    """8 rust-book chapters, the sample corpus (markdown and .txt), one deep
    document, one with a table longer than a chunk."""
    shutil.copytree(ROOT / "sample", docs / "sample")
    (docs / "deep.md").write_text(DEEP, encoding="utf-8")
    (docs / "table.md").write_text(TABLE, encoding="utf-8")
    for path in (docs / "sample").rglob("*"):
        if path.is_file():
            path.chmod(0o644)
    return docs


def _counts(root: Path, recipe: Recipe) -> tuple[int, int]:
    """(merges, breadcrumb truncations) summed over the source, computed here."""
    merges = truncations = 0
    for path in sorted(root.rglob("*.md")):
        text = decode_document(path.read_bytes())
        result = structure_chunks(
            text, build_index(text), StructureOptions.of(recipe), budget_split_from(_SPLITTER)
        )
        merges += result.merges
        truncations += result.breadcrumb_truncations
    return merges, truncations


def _said(output: str) -> str:
    return " ".join(output.split())


def test_structure_rows_are_what_the_chunker_gives(
    run_cli: RunCli, corpus: Path, database_url: str
) -> None:
    result = run_cli("ingest", str(corpus), "--source", "docs", "--chunker", "structure")

    assert result.code == 0, result.err
    # text == document[char_start:char_end], the heading columns, parents,
    # breadcrumb and embed_text are structure_chunks' for every markdown row;
    # the .txt document went through the budget splitter (NULL columns).
    assert_rows_match_files(database_url, corpus, recipe=STRUCTURE)
    rows = [row for doc in rows_by_document(database_url).values() for row in doc]
    txt = [row for row in rows if row["rel_path"].endswith(".txt")]
    assert txt and all(r["breadcrumb"] is None and r["embed_text"] == r["text"] for r in txt)
    markdown = [row for row in rows if not row["rel_path"].endswith(".txt")]
    for row in markdown:
        # The page title (front matter) roots the path (docs/heading-index.md).
        title = row["title"]
        path = row["heading_path"]
        if title and not (path and path[0].casefold() == title.casefold()):
            path = [title, *path]
        if path:
            assert row["breadcrumb"] == " > ".join(path) or "…" in row["breadcrumb"]
            assert row["embed_text"].startswith(row["breadcrumb"] + "\n\n")
        else:
            assert row["breadcrumb"] is None
    assert any(row["parent_chunk_id"] is not None for row in markdown)
    # The table's later pieces: its header rows in the embed text (composed by
    # the table's trigger from table_header; checked against the chunker above).
    with psycopg.connect(database_url) as conn:
        headed = conn.execute(
            "SELECT count(*) FROM content_chunks c WHERE rel_path = 'table.md' "
            "AND table_header = '| Key | Value |\n|-----|-------|' "
            "AND c.embed_text = breadcrumb || E'\n\n' || table_header || E'\n' || text"
        ).fetchone()
    assert headed is not None and headed[0] >= 2

    merges, truncations = _counts(corpus, STRUCTURE)
    assert merges > 0 and truncations > 0
    assert (
        f"chunker: structure; {merges} sections merged, {truncations} breadcrumbs truncated "
        f"in the documents processed (source: {merges} merged, {truncations} truncated)"
    ) in _said(result.out)
    documents = fetch(
        database_url,
        "SELECT sum(merges) AS merges, sum(breadcrumb_truncations) AS truncations "
        "FROM mdchunks_documents WHERE source = 'docs'",
    )
    assert documents == [{"merges": merges, "truncations": truncations}]
    deep = fetch(
        database_url,
        "SELECT merges, breadcrumb_truncations FROM mdchunks_documents WHERE rel_path = 'deep.md'",
    )
    assert deep == [{"merges": 0, "breadcrumb_truncations": 1}]

    # Edit one document: this run's counts are that document's, the source's stay.
    (corpus / "deep.md").write_text(DEEP + "\nOne more line.\n", encoding="utf-8")
    again = run_cli("ingest", str(corpus), "--source", "docs", "--chunker", "structure")
    assert again.code == 0, again.err
    assert "1 processed" in again.out
    assert (
        f"chunker: structure; 0 sections merged, 1 breadcrumbs truncated in the documents "
        f"processed (source: {merges} merged, {truncations} truncated)"
    ) in _said(again.out)

    status = run_cli("status")
    assert "structure v1 (split H1-H3, merged path first)" in status.out


def test_switching_the_chunker_reprocesses_everything_and_leaves_no_old_rows(
    run_cli: RunCli, corpus: Path, database_url: str
) -> None:
    first = run_cli("ingest", str(corpus), "--source", "docs")
    assert first.code == 0, first.err
    documents = len(rows_by_document(database_url))
    assert_rows_match_files(database_url, corpus)

    switched = run_cli("ingest", str(corpus), "--source", "docs", "--chunker", "structure")

    assert switched.code == 0, switched.err
    assert f"{documents} processed, 0 unchanged, 0 failed" in switched.out
    assert fetch(database_url, "SELECT DISTINCT recipe FROM content_chunks") == [
        {"recipe": STRUCTURE.fingerprint()}
    ]
    assert fetch(database_url, "SELECT DISTINCT recipe FROM mdchunks_documents") == [
        {"recipe": STRUCTURE.fingerprint()}
    ]
    assert_rows_match_files(database_url, corpus, recipe=STRUCTURE)

    # A plain ingest keeps the source's chunker (the structure one)...
    kept = run_cli("ingest", str(corpus), "--source", "docs")
    assert kept.code == 0 and "0 processed" in kept.out
    # ...structure-only options change nothing under the recursive chunker...
    back = run_cli(
        "ingest", str(corpus), "--source", "docs", "--chunker", "recursive", "--split-levels", "2"
    )
    assert back.code == 0 and f"{documents} processed" in back.out
    assert_rows_match_files(database_url, corpus)
    same = run_cli("ingest", str(corpus), "--source", "docs", "--merged-path", "common")
    assert same.code == 0 and "0 processed" in same.out
    # ...and re-process everything under the structure chunker. The backfill
    # keeps the options the source was last ingested with (merged path common).
    deeper = run_cli(
        "backfill", "--source", "docs", "--chunker", "structure", "--split-levels", "2"
    )
    assert deeper.code == 0 and f"{documents} processed" in deeper.out
    expected = Recipe(chunker="structure", split_levels=2, merged_path="common")
    assert_rows_match_files(database_url, corpus, recipe=expected)


def _by_position(rows: list[dict[str, Any]]) -> dict[tuple[str, int], dict[str, Any]]:
    return {(row["rel_path"], row["position"]): row for row in rows}


def test_merged_path_common_changes_the_columns_of_merged_chunks_only(
    run_cli: RunCli, corpus: Path, database_url: str
) -> None:
    assert run_cli("ingest", str(corpus), "--source", "docs", "--chunker", "structure").code == 0
    first = _by_position([r for doc in rows_by_document(database_url).values() for r in doc])

    result = run_cli("backfill", "--source", "docs", "--merged-path", "common")

    assert result.code == 0, result.err
    common_recipe = Recipe(chunker="structure", merged_path="common")
    assert_rows_match_files(database_url, corpus, recipe=common_recipe)
    common = _by_position([r for doc in rows_by_document(database_url).values() for r in doc])
    assert first.keys() == common.keys()
    columns = ("heading_text", "heading_level", "heading_path", "parent_chunk_id", "breadcrumb")
    changed = 0
    for key, row in first.items():
        other = common[key]
        assert (row["char_start"], row["char_end"], row["text"]) == (
            other["char_start"],
            other["char_end"],
            other["text"],
        )
        if [row[c] for c in columns] == [other[c] for c in columns]:
            continue
        changed += 1
        # Only a merged chunk may change: its text holds a splitting heading.
        assert re.search(r"^ {0,3}#{1,3} ", row["text"], re.MULTILINE), key
        # The common ancestor is never deeper than the first section's heading.
        assert len(other["heading_path"]) < len(row["heading_path"]), key
    assert changed > 0


def test_the_recursive_chunker_fills_breadcrumb_and_embed_text(
    ingest: Ingest, corpus: Path, database_url: str
) -> None:
    report = ingest(corpus, recipe=Recipe(breadcrumb_budget=64))

    assert report.ok and report.chunker == "recursive"
    recipe = Recipe(breadcrumb_budget=64)
    assert_rows_match_files(database_url, corpus, recipe=recipe)
    rows = fetch(
        database_url,
        "SELECT rel_path, heading_path, breadcrumb, c.embed_text, text, title "
        "FROM content_chunks c",
    )
    headed = [row for row in rows if row["heading_path"]]
    assert headed and all(row["breadcrumb"] for row in headed)
    assert all(row["embed_text"] == f"{row['breadcrumb']}\n\n{row['text']}" for row in headed)
    assert all(len(row["breadcrumb"].encode()) <= 64 for row in headed)
    truncated = [row for row in headed if row["breadcrumb"].startswith("…")]
    assert truncated and report.breadcrumb_truncations == len(truncated)
    assert report.merges == 0
    plain = [row for row in rows if not row["heading_path"]]
    # Before the first heading: the page title is the breadcrumb, if there is one.
    assert plain and all(r["breadcrumb"] == r["title"] for r in plain)
    assert all(
        r["embed_text"] == (f"{r['title']}\n\n{r['text']}" if r["title"] else r["text"])
        for r in plain
    )


def test_rows_from_before_breadcrumbs_are_migrated_then_backfilled(
    ingest: Ingest, corpus: Path, database_url: str
) -> None:
    # A database as the previous version left it: migrations up to 0005 and
    # rows without breadcrumb or embed_text under that version's recipe.
    _apply_migrations_before(database_url, "0006")
    old_recipe = "c4894de01bbe"  # the default recipe's fingerprint before breadcrumbs
    text = decode_document((corpus / "deep.md").read_bytes())
    chunks = expected_chunks(text, "deep.md", Recipe())
    with psycopg.connect(database_url) as conn:
        for position, chunk in enumerate([*chunks, chunks[-1]]):  # one row too many
            conn.execute(
                "INSERT INTO content_chunks (id, source, rel_path, position, char_start, "
                "char_end, text, heading_text, heading_level, heading_path, recipe) "
                "VALUES (%s, 'docs', 'deep.md', %s, %s, %s, %s, %s, %s, %s, %s)",
                [
                    chunk_id("docs", "deep.md", position),
                    position,
                    chunk.start,
                    chunk.end,
                    text[chunk.start : chunk.end],
                    chunk.heading_text,
                    chunk.heading_level,
                    list(chunk.heading_path),
                    old_recipe,
                ],
            )
        conn.execute(
            "INSERT INTO mdchunks_documents (source, rel_path, recipe, content_hash, "
            "size_bytes, chunks) VALUES ('docs', 'deep.md', %s, 'x', 1, %s)",
            [old_recipe, len(chunks) + 1],
        )

    # The migrations keep them (the breadcrumb CHECK stays NOT VALID for old rows).
    assert "0006_breadcrumb_embed_text" in migrate.apply(database_url).applied
    # Headed rows without a breadcrumb: their embed_text (computed from the row
    # since migration 0014) is their bare text.
    bare = (
        "SELECT count(*) AS n FROM content_chunks c WHERE c.embed_text = c.text "
        "AND cardinality(c.heading_path) > 0"
    )
    headed = sum(1 for chunk in [*chunks, chunks[-1]] if chunk.heading_path)
    assert headed and fetch(database_url, bare) == [{"n": headed}]

    report = ingest(corpus)  # the next run backfills

    assert report.ok and report.unchanged == 0
    assert_rows_match_files(database_url, corpus)
    assert fetch(database_url, bare) == [{"n": 0}]
    with psycopg.connect(database_url) as conn:  # and now Postgres can prove it
        conn.execute(
            "ALTER TABLE content_chunks VALIDATE CONSTRAINT content_chunks_breadcrumb_check"
        )


def _apply_migrations_before(url: str, first_left_out: str) -> None:
    wanted = [mid for mid in migrate.migration_ids() if mid < first_left_out]
    migrate.apply(url, through=wanted[-1])
