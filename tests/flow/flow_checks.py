"""Checks of the rows in the database against the files they came from."""

from __future__ import annotations

import uuid
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import psycopg
import pytest
from cocoindex.ops.text import RecursiveSplitter
from mdchunks import Recipe, chunk_id
from mdchunks.db import database
from mdchunks.heading_index import (
    StructureOptions,
    assign,
    budget_split_from,
    build_index,
    decode_document,
    dialect_for,
    embed_text,
    render_breadcrumb,
    structure_chunks,
)
from mdchunks.heading_index.coverage import repair_spans
from mdchunks.plugin.titles import document_title
from mdchunks.retrieval import lexical_stats
from psycopg.rows import dict_row

_SPLITTER = RecursiveSplitter()
_BUDGET_SPLIT = budget_split_from(_SPLITTER)


def fetch(url: str, sql: str, params: Any = None) -> list[dict[str, Any]]:
    with psycopg.connect(url, row_factory=dict_row) as conn:
        return list(conn.execute(sql, params))


def chunk_rows(url: str, source: str = "docs") -> list[dict[str, Any]]:
    return fetch(
        url,
        # embed_text is a function of the row (migration 0014), which * leaves out.
        "SELECT *, c.embed_text, xmin::text AS xmin FROM content_chunks c WHERE source = %s "
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
    expected = {
        rel: expected_chunks(decode_document((root / rel).read_bytes()), rel, recipe)
        for rel in on_disk
    }
    assert set(grouped) == {rel for rel, chunks in expected.items() if chunks}
    total = 0
    for rel_path, rows in grouped.items():
        text = decode_document((root / rel_path).read_bytes())
        chunks = expected[rel_path]
        assert [(r["char_start"], r["char_end"]) for r in rows] == [
            (c.start, c.end) for c in chunks
        ], rel_path
        assert [r["position"] for r in rows] == list(range(len(rows))), rel_path
        for row, chunk in zip(rows, chunks, strict=True):
            where = (rel_path, row["position"])
            assert row["text"] == text[row["char_start"] : row["char_end"]], where
            assert row["id"] == chunk_id(source, rel_path, row["position"])
            assert row["recipe"] == recipe.fingerprint()
            assert row["heading_text"] == chunk.heading_text, where
            assert row["heading_level"] == chunk.heading_level, where
            assert row["heading_path"] == list(chunk.heading_path), where
            expected_parent = (
                None
                if chunk.parent_position is None
                else chunk_id(source, rel_path, chunk.parent_position)
            )
            assert row["parent_chunk_id"] == expected_parent, where
            assert row["breadcrumb"] == chunk.breadcrumb, where
            assert row["embed_text"] == chunk.embed_text, where
        total += len(rows)
    assert_table_invariants(url, source)
    return total


@dataclass(frozen=True)
class ExpectedChunk:
    start: int
    end: int
    heading_text: str | None
    heading_level: int | None
    heading_path: tuple[str, ...]
    parent_position: int | None
    breadcrumb: str | None
    embed_text: str


def expected_chunks(text: str, rel_path: str, recipe: Recipe) -> list[ExpectedChunk]:
    """What a document's rows must hold, computed here from the libraries alone."""
    title = document_title(text) if recipe.titles and recipe.is_markdown(rel_path) else None
    if recipe.uses_structure(rel_path):
        result = structure_chunks(
            text,
            replace(build_index(text, dialect_for(rel_path)), title=title),
            StructureOptions.of(recipe),
            _BUDGET_SPLIT,
        )
        return [
            ExpectedChunk(
                c.start,
                c.end,
                c.heading_text,
                c.heading_level,
                c.heading_path,
                c.parent_position,
                c.breadcrumb,
                c.embed_text,
            )
            for c in result.chunks
        ]
    spans = _spans(text, rel_path, recipe)
    if not (recipe.is_markdown(rel_path) and recipe.headings):
        return [
            ExpectedChunk(start, end, None, None, (), None, None, text[start:end])
            for start, end in spans
        ]
    found = []
    index = build_index(text, dialect_for(rel_path))
    for (start, end), column in zip(spans, assign(index, spans), strict=True):
        breadcrumb = None
        if column.heading_path or title:
            breadcrumb, _ = render_breadcrumb(
                column.heading_path, recipe.breadcrumb_budget, title=title
            )
        found.append(
            ExpectedChunk(
                start,
                end,
                column.heading_text,
                column.heading_level,
                column.heading_path,
                column.parent_position,
                breadcrumb,
                embed_text(breadcrumb, text[start:end]),
            )
        )
    return found


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
            AND (c.breadcrumb IS NULL) = (cardinality(c.heading_path) = 0 AND c.title IS NULL)
            -- the embed text is the breadcrumb, a blank line, (table header rows,) the text
            AND (c.breadcrumb IS NULL OR c.breadcrumb = ''
                 OR starts_with(c.embed_text, c.breadcrumb || E'\n\n'))
            AND right(c.embed_text, char_length(c.text)) = c.text
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
    spans = [(chunk.start.char_offset, chunk.end.char_offset) for chunk in chunks]
    # The product's split repairs what the splitter loses or oversizes
    # (heading_index/coverage.py): so do the expected rows.
    return repair_spans(text, spans, recipe.chunk_size)


_STATS = "SELECT chunks, heading_length, text_length FROM mdchunks_search_stats WHERE source = %s"
_TERMS = (
    "SELECT lexeme, df, max_occurrences, max_heading_occurrences FROM mdchunks_search_terms "
    "WHERE source = %s ORDER BY lexeme"
)


def stored_stats(url: str, source: str = "docs") -> tuple[Any, dict[str, Any]]:
    """The source's stored BM25 statistics: totals, and each lexeme's df with its bounds."""
    with psycopg.connect(url) as conn:
        totals = conn.execute(_STATS, [source]).fetchone()
        terms = {row[0]: row[1:] for row in conn.execute(_TERMS, [source])}
    return totals, terms


def recounted_stats(url: str, source: str = "docs") -> tuple[Any, dict[str, Any]]:
    """The same counted afresh from the rows (`refresh_stats`, which they
    then are), with each stored bound kept where it is no tighter than the
    recount's: moved statistics equal this when df, N and the lengths are
    exact and no bound is tighter than the rows'."""
    stored = stored_stats(url, source)[1]
    with pytest.MonkeyPatch.context() as patch, database.connect(url) as conn:
        patch.setattr(lexical_stats, "BOUNDS_MIN_CHUNKS", 0)  # exact bounds, to check the kept ones
        lexical_stats.refresh_stats(conn, source)
    totals, terms = stored_stats(url, source)
    for lexeme, (df, most, most_in_heading) in terms.items():
        kept = stored.get(lexeme)
        if kept is not None and kept[0] == df:
            # A bound may stay looser than the rows': never tighter.
            assert most is None or kept[1] is None or kept[1] >= most, lexeme
            assert most_in_heading is None or kept[2] is None or kept[2] >= most_in_heading
            terms[lexeme] = kept
    return totals, terms
