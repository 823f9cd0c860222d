"""Checks of the rows in the database against the files they came from."""

from __future__ import annotations

import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

import psycopg
from cocoindex.ops.text import RecursiveSplitter
from psycopg.rows import dict_row

from flow import Recipe, chunk_id
from heading_index import assign, build_index, decode_document

_SPLITTER = RecursiveSplitter()


def fetch(url: str, sql: str, params: Any = None) -> list[dict[str, Any]]:
    with psycopg.connect(url, row_factory=dict_row) as conn:
        return list(conn.execute(sql, params))


def chunk_rows(url: str, source: str = "docs") -> list[dict[str, Any]]:
    return fetch(
        url,
        "SELECT *, xmin::text AS xmin FROM content_chunks WHERE source = %s "
        "ORDER BY rel_path, position",
        [source],
    )


def rows_by_document(url: str, source: str = "docs") -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in chunk_rows(url, source):
        grouped[row["rel_path"]].append(row)
    return dict(grouped)


def xmins(url: str, source: str = "docs") -> dict[uuid.UUID, str]:
    return {row["id"]: row["xmin"] for row in chunk_rows(url, source)}


def documents_on_disk(root: Path, suffixes: tuple[str, ...] = Recipe().suffixes) -> set[str]:
    return {
        path.relative_to(root).as_posix()
        for path in root.rglob("*")
        if path.is_file() and path.suffix.lower() in suffixes
    }


def assert_rows_match_files(
    url: str, root: Path, *, source: str = "docs", recipe: Recipe | None = None
) -> int:
    """Every document on disk has exactly the rows its file and the recipe
    give, and nothing else is in the source. Returns the number of rows."""
    recipe = recipe or Recipe()
    grouped = rows_by_document(url, source)
    on_disk = documents_on_disk(root, recipe.suffixes)
    expected_documents = {
        rel for rel in on_disk if _spans(decode_document((root / rel).read_bytes()), rel, recipe)
    }
    assert set(grouped) == expected_documents
    total = 0
    for rel_path, rows in grouped.items():
        text = decode_document((root / rel_path).read_bytes())
        spans = _spans(text, rel_path, recipe)
        assert [(r["char_start"], r["char_end"]) for r in rows] == spans, rel_path
        assert [r["position"] for r in rows] == list(range(len(rows))), rel_path
        if recipe.is_markdown(rel_path) and recipe.headings:
            columns = assign(build_index(text), spans)
        else:
            columns = None
        for row in rows:
            position = row["position"]
            assert row["text"] == text[row["char_start"] : row["char_end"]], (rel_path, position)
            assert row["id"] == chunk_id(source, rel_path, position)
            assert row["recipe"] == recipe.fingerprint()
            if columns is None:
                assert row["heading_text"] is None and row["heading_level"] is None
                assert row["heading_path"] == [] and row["parent_chunk_id"] is None
                continue
            column = columns[position]
            assert row["heading_text"] == column.heading_text, (rel_path, position)
            assert row["heading_level"] == column.heading_level, (rel_path, position)
            assert row["heading_path"] == list(column.heading_path), (rel_path, position)
            expected_parent = (
                None
                if column.parent_position is None
                else chunk_id(source, rel_path, column.parent_position)
            )
            assert row["parent_chunk_id"] == expected_parent, (rel_path, position)
        total += len(rows)
    assert_table_invariants(url, source)
    return total


def assert_table_invariants(url: str, source: str = "docs") -> None:
    """What the CHECK constraints and the id scheme promise, asked of the data."""
    broken = fetch(
        url,
        """
        SELECT c.rel_path, c.position FROM content_chunks c
        WHERE c.source = %(s)s AND NOT (
            c.position >= 0 AND c.char_end >= c.char_start
            AND (c.heading_level IS NULL OR c.heading_level BETWEEN 1 AND 6)
            AND (c.heading_text IS NULL) = (c.heading_level IS NULL)
            AND (c.heading_text IS NULL) = (cardinality(c.heading_path) = 0)
        )
        """,
        {"s": source},
    )
    assert broken == []
    # Every parent is a row of the same document at a lower position.
    orphans = fetch(
        url,
        """
        SELECT c.rel_path, c.position FROM content_chunks c
        LEFT JOIN content_chunks p ON p.id = c.parent_chunk_id
        WHERE c.source = %(s)s AND c.parent_chunk_id IS NOT NULL
          AND (p.id IS NULL OR p.source <> c.source OR p.rel_path <> c.rel_path
               OR p.position >= c.position)
        """,
        {"s": source},
    )
    assert orphans == []
    duplicates = fetch(
        url,
        "SELECT rel_path, position, count(*) FROM content_chunks WHERE source = %(s)s "
        "GROUP BY 1, 2 HAVING count(*) > 1",
        {"s": source},
    )
    assert duplicates == []


def _spans(text: str, rel_path: str, recipe: Recipe) -> list[tuple[int, int]]:
    chunks = _SPLITTER.split(
        text,
        recipe.chunk_size,
        min_chunk_size=recipe.min_chunk_size,
        chunk_overlap=recipe.chunk_overlap,
        language=recipe.language_for(rel_path),
    )
    return [(chunk.start.char_offset, chunk.end.char_offset) for chunk in chunks]
