"""A document's chunk and section rows, written from the run's ledger in
batches (docs/sections.md, docs/reliability.md).

The per-document function encodes its document's rows (JSON fragments, off
the event loop) and leaves them in the run's ledger; whenever the rows
waiting there reach `BATCH_ROWS`, a batch run writes them, chunks then
sections, in one transaction over the engine's pool, so a big run never
holds all its rows; the reconciliation writes what is left, in its
transaction, before it prunes the rows no document row declares. A live
watch writes them at each change the engine reports, before pruning the
changed documents' stale rows.

Why not cocoindex targets: the engine keeps a tracked record of every row it
writes (a key and a fingerprint per row, per document the list of them):
a third of the data dir's growth per MB of markdown (docs/benchmarks.md),
and a second target cost as much time again per document as the first
(rust-book 1.18x, tldr 1.14x the first ingest without sections). The
reconciliation already makes a source's rows equal what its document rows
declare after every run, and a run that did not finish leaves its engine
state untrusted (flow/source/state.py), so the tracking bought nothing.
The plugin face (flow/plugin/target.py) keeps cocoindex's table targets: a
host's app has no reconciliation of ours.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import asyncpg
from mdchunks.db.connection import Connection, bind
from mdchunks.db.queries import QUERIES
from mdchunks.plugin.rows import ChunkRow, SectionRow
from mdchunks.retrieval import lexical_stats

# Rows per batch: about a megabyte of JSON (a chunk row holds up to its
# budget of text), and few enough round trips that their cost does not show
# (the rust-book sample's 1,300 rows: 3 batches).
BATCH_ROWS = 500


@dataclass(frozen=True, slots=True)
class Encoded:
    """One document's rows as pieces of JSON objects joined by commas (no
    brackets), so the pieces of many documents join into one array per
    table. Pieces, not one string: joining them per document held the
    document's JSON twice (issue 42: memory per document)."""

    chunks: tuple[str, ...]
    sections: tuple[str, ...]
    rows: int  # chunk rows and section rows
    chunk_rows: int = 0

    @classmethod
    def of(cls, chunks: Sequence[ChunkRow], sections: Sequence[SectionRow]) -> Encoded:
        return cls(
            _fragment(_chunk(row) for row in chunks),
            _fragment(_section(row) for row in sections),
            len(chunks) + len(sections),
            len(chunks),
        )

    @classmethod
    def taking(cls, chunks: list[ChunkRow], sections: list[SectionRow]) -> Encoded:
        """`of`, emptying the lists as their rows are encoded: a row is freed
        once its JSON is made, so the rows and their JSON are not all held
        at once (a heading-dense document's section rows and their JSON are
        each about 120 bytes a byte of it; issue 42: memory per document).
        For lists that nothing else holds."""
        counts = len(chunks) + len(sections), len(chunks)
        return cls(
            _fragment(_chunk(row) for row in _draining(chunks)),
            _fragment(_section(row) for row in _draining(sections)),
            *counts,
        )


NOTHING = Encoded((), (), 0)

_Row = TypeVar("_Row")


def _draining(rows: list[_Row]) -> Iterator[_Row]:
    # Popped from the end (a list shrinks there in O(1)): reversed first.
    rows.reverse()
    while rows:
        yield rows.pop()


# Rows per dumps call: one call per document held every row's dict at once,
# 350 bytes of memory a byte of a heading-dense document (issue 42); a call
# per row costs its own overhead each.
_ROWS_PER_DUMP = 256


def _fragment(objects: Iterable[dict[str, object]]) -> tuple[str, ...]:
    # Each batch's brackets dropped.
    rows = iter(objects)
    pieces = []
    while batch := list(itertools.islice(rows, _ROWS_PER_DUMP)):
        pieces.append(json.dumps(batch, ensure_ascii=False, separators=(",", ":"))[1:-1])
    return tuple(pieces)


def _chunk(row: ChunkRow) -> dict[str, object]:
    return {
        "id": str(row.id),
        "source": row.source,
        "rel_path": row.rel_path,
        "position": row.position,
        "char_start": row.char_start,
        "char_end": row.char_end,
        "text": row.text,
        "heading_text": row.heading_text,
        "heading_level": row.heading_level,
        "heading_path": row.heading_path,
        "parent_chunk_id": None if row.parent_chunk_id is None else str(row.parent_chunk_id),
        "breadcrumb": row.breadcrumb,
        "table_header": row.table_header,
        "recipe": row.recipe,
        "start_line": row.start_line,
        "end_line": row.end_line,
        "section_ids": [str(section_id) for section_id in row.section_ids],
        "title": row.title,
        "unsearched": row.unsearched,
        "language": row.language,
    }


def _section(row: SectionRow) -> dict[str, object]:
    return {
        "id": str(row.id),
        "source": row.source,
        "rel_path": row.rel_path,
        "ordinal": row.ordinal,
        "heading_text": row.heading_text,
        "heading_level": row.heading_level,
        "heading_path": row.heading_path,
        "breadcrumb": row.breadcrumb,
        "char_start": row.char_start,
        "heading_end": row.heading_end,
        "body_end": row.body_end,
        "char_end": row.char_end,
        "start_line": row.start_line,
        "heading_end_line": row.heading_end_line,
        "body_end_line": row.body_end_line,
        "end_line": row.end_line,
        "parent_section_id": (
            None if row.parent_section_id is None else str(row.parent_section_id)
        ),
        "gap_starts": row.gap_starts,
        "gap_texts": row.gap_texts,
        "recipe": row.recipe,
        "title": row.title,
    }


def _statements(documents: Sequence[Encoded]) -> list[tuple[str, dict[str, str]]]:
    statements = []
    for name, fragments in (
        ("write_chunks", [d.chunks for d in documents]),
        ("write_sections", [d.sections for d in documents]),
    ):
        if any(fragments):
            rows = "[" + ",".join(piece for pieces in fragments for piece in pieces) + "]"
            statements.append((QUERIES[name], {"rows": rows}))
    return statements


# What the database says of a document's rows themselves (a value too long
# for a search vector, a constraint): that document fails, alone. Anything
# else (the connection lost, a full disk) is the run's.
# A text with a lone surrogate (no UTF-8 can hold it) is refused on the way.
REFUSALS = (
    asyncpg.exceptions.DataError,
    asyncpg.exceptions.IntegrityConstraintViolationError,
    asyncpg.exceptions.ProgramLimitExceededError,
    UnicodeEncodeError,
)


def refusal(exc: Exception) -> str:
    """A document's failure when the database refused its rows, in one line."""
    return f"the database refused its rows: {' '.join(str(exc).split())}"


async def write_batch(
    pool: asyncpg.Pool, documents: Mapping[str, Encoded], *, stats_of: str | None = None
) -> dict[str, str]:
    """Write the rows of `documents` (rel_path -> rows) over the engine's pool,
    in one transaction; if the database refuses it, each document in its own,
    so that one whose rows are refused fails alone. Returns the refused
    documents' rel_paths and causes. `stats_of`: the source whose BM25
    statistics each transaction moves by its documents' share, taken before
    and after the writes (`lexical_stats.change_statements`)."""
    async with pool.acquire() as conn:
        try:
            async with conn.transaction():
                await _write_async(conn, documents, stats_of)
            return {}
        except REFUSALS:
            pass
        refused: dict[str, str] = {}
        for rel_path, rows in documents.items():
            try:
                async with conn.transaction():
                    await _write_async(conn, {rel_path: rows}, stats_of)
            except REFUSALS as exc:
                refused[rel_path] = refusal(exc)
        return refused


async def _write_async(
    conn: asyncpg.Connection, documents: Mapping[str, Encoded], stats_of: str | None
) -> None:
    if stats_of is not None:
        share = lexical_stats.documents_statement(stats_of, list(documents))
        before = lexical_stats.share_of(await conn.fetchrow(*bind(*share)))
    for statement, params in _statements(list(documents.values())):
        query, args = bind(statement, params)
        await conn.execute(query, *args)
    if stats_of is not None:
        after = lexical_stats.share_of(await conn.fetchrow(*bind(*share)), list(documents))
        for change in lexical_stats.change_statements(stats_of, before, after):
            await conn.execute(*bind(*change))


def write(
    conn: Connection, documents: Mapping[str, Encoded], *, stats_of: str | None = None
) -> dict[str, str]:
    """Write the rows of `documents` (rel_path -> rows) on `conn`, inside the
    caller's transaction, as `write_batch` does (a savepoint each)."""
    try:
        with conn.transaction():
            _write(conn, documents, stats_of)
        return {}
    except REFUSALS:
        pass
    refused: dict[str, str] = {}
    for rel_path, rows in documents.items():
        try:
            with conn.transaction():
                _write(conn, {rel_path: rows}, stats_of)
        except REFUSALS as exc:
            refused[rel_path] = refusal(exc)
    return refused


def _write(conn: Connection, documents: Mapping[str, Encoded], stats_of: str | None) -> None:
    before = lexical_stats.documents_share(conn, stats_of, list(documents)) if stats_of else None
    for statement, params in _statements(list(documents.values())):
        conn.execute(statement, params)
    if stats_of is not None and before is not None:
        after = lexical_stats.documents_share(conn, stats_of, list(documents))
        lexical_stats.change_stats(conn, stats_of, before, after)


def prune(conn: Connection, *, source: str, recipe: str, rel_paths: list[str]) -> None:
    """Delete the chunk and section rows of `rel_paths` their document rows do
    not declare."""
    if rel_paths:
        params = {"source": source, "recipe": recipe, "rel_paths": rel_paths}
        conn.execute(QUERIES["reconcile_chunks"], params)
        conn.execute(QUERIES["reconcile_sections"], params)


def forget(conn: Connection, *, source: str, rel_paths: list[str]) -> None:
    """Delete every chunk and section row of `rel_paths` (documents that are gone)."""
    if rel_paths:
        params = {"source": source, "rel_paths": rel_paths}
        conn.execute(QUERIES["forget_chunks"], params)
        conn.execute(QUERIES["forget_sections"], params)
