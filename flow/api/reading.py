"""What an agent reads (the MCP server's tools, flow/mcp/server.py): the
sources, a chunk and its neighbours, a document's outline and one section,
over our table or a host's (`table`, `pg_schema`). Read-only: SELECT is all
they need. Where our tables and a host's differ (stored sections, or rebuilt
from chunks) the `SectionSource` answers (flow/retrieval/section_source.py)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mdchunks.errors import UsageError
from mdchunks.plugin.rows import section_id as section_id_of
from mdchunks.retrieval import sections
from mdchunks.retrieval.section_source import SectionRead, section_read, section_source
from mdchunks.retrieval.session import reading
from mdchunks.retrieval.tables import chunk_table

MAX_NEIGHBOURS = 10


@dataclass(frozen=True, slots=True)
class SourceSummary:
    source: str
    documents: int
    chunks: int
    with_headings: int  # chunks under a heading (the rest are preambles or plain text)


@dataclass(frozen=True, slots=True)
class StoredChunk:
    id: uuid.UUID
    source: str
    rel_path: str
    position: int
    char_start: int
    char_end: int
    start_line: int | None
    end_line: int | None
    heading_path: tuple[str, ...]
    breadcrumb: str | None  # the stored one; None for a preamble
    parent_chunk_id: uuid.UUID | None
    text: str


@dataclass(frozen=True, slots=True)
class ChunkRead:
    chunk: StoredChunk
    before: tuple[StoredChunk, ...]  # its document's chunks just before it, in order
    after: tuple[StoredChunk, ...]


def list_sources(
    *,
    table: str | None = None,
    pg_schema: str | None = None,
    database_url: str | None = None,
    data_dir: Path | None = None,
) -> tuple[SourceSummary, ...]:
    """The sources of the chunk table, with their documents and chunks."""
    with reading(chunk_table(table, pg_schema), database_url, data_dir) as (conn, _db):
        return tuple(
            SourceSummary(str(name), int(documents), int(chunks), int(headed))
            for name, documents, chunks, headed in conn.execute(
                chunk_table(table, pg_schema).query("chunk_sources")
            )
        )


def read_chunk(
    chunk_id: uuid.UUID | str,
    *,
    neighbours: int = 0,
    table: str | None = None,
    pg_schema: str | None = None,
    database_url: str | None = None,
    data_dir: Path | None = None,
) -> ChunkRead:
    """One chunk by id, with up to `neighbours` chunks of its document on each side."""
    try:
        wanted = chunk_id if isinstance(chunk_id, uuid.UUID) else uuid.UUID(str(chunk_id))
    except ValueError:
        raise UsageError(f"chunk id {str(chunk_id)[:80]!r} is not a uuid") from None
    if not 0 <= neighbours <= MAX_NEIGHBOURS:
        raise UsageError(f"neighbours must be 0 to {MAX_NEIGHBOURS} (got {neighbours})")
    searched = chunk_table(table, pg_schema)
    with reading(searched, database_url, data_dir) as (conn, _db):
        rows = conn.execute(
            searched.query("chunk_with_neighbours"), {"id": wanted, "neighbours": neighbours}
        ).fetchall()
    chunks = [_stored_chunk(row) for row in rows]
    index = next((i for i, chunk in enumerate(chunks) if chunk.id == wanted), None)
    if index is None:
        raise UsageError(f"no chunk with id {wanted} in {searched.shown}")
    return ChunkRead(chunks[index], tuple(chunks[:index]), tuple(chunks[index + 1 :]))


def _stored_chunk(row: tuple[Any, ...]) -> StoredChunk:
    id_, src, rel_path, position, start, end, first, last, path, crumb, parent, text = row
    return StoredChunk(
        id_,
        src,
        rel_path,
        int(position),
        int(start),
        int(end),
        first,
        last,
        tuple(path or ()),
        crumb,
        parent,
        text,
    )


def outline(
    rel_path: str | None = None,
    *,
    source: str | None = None,
    table: str | None = None,
    pg_schema: str | None = None,
    database_url: str | None = None,
    data_dir: Path | None = None,
) -> list[sections.DocumentOutline]:
    """Documents' heading trees (docs/sections.md): of `rel_path` (in `source`,
    or in every source that has it), else of every document of `source` (None:
    of every source), by source and path; each section with its level, lines,
    parent and how many chunks hold it. From the sections table; a host's table
    (`table`, which has none) names `source` and `rel_path`, and its outline is
    rebuilt from its chunks (flow/retrieval/rebuilt.py)."""
    searched = chunk_table(table, pg_schema)
    if not searched.managed and (source is None or rel_path is None):
        raise UsageError(
            "an outline of a host's table (--table) needs --source and a document's REL_PATH: "
            "it is rebuilt from that document's chunks"
        )
    with reading(searched, database_url, data_dir, source) as (conn, _db):
        found = section_source(conn, searched, section_id_of).outline(source, rel_path)
    if rel_path is not None and not found:
        where = f"source {source!r}" if source is not None else "any source"
        raise UsageError(
            f"no document {rel_path!r} in {where} (`mdchunks outline --source NAME` lists a "
            "source's documents)"
        )
    return found


def read_section(
    source: str,
    rel_path: str,
    *,
    heading_path: tuple[str, ...] | list[str] | None = None,
    section_id: uuid.UUID | str | None = None,
    max_chars: int | None = None,
    table: str | None = None,
    pg_schema: str | None = None,
    database_url: str | None = None,
    data_dir: Path | None = None,
) -> SectionRead:
    """A whole section: `document[heading start : section_end]` (its subsections
    included), by its heading path (`[]`: the preamble) or its section id
    (`outline` lists both); cut at `max_chars` with `omitted_chars` saying how
    much was left out."""
    if (heading_path is None) == (section_id is None):
        raise UsageError("name the section by heading_path or by section_id (one of them)")
    if max_chars is not None and max_chars < 1:
        raise UsageError(f"max_chars must be at least 1 (got {max_chars})")
    wanted: uuid.UUID | None = None
    if section_id is not None:
        try:  # as read_chunk says of a chunk id
            wanted = uuid.UUID(str(section_id).strip())
        except ValueError:
            raise UsageError(f"section id {str(section_id)[:80]!r} is not a uuid") from None
    searched = chunk_table(table, pg_schema)
    with reading(searched, database_url, data_dir, source) as (conn, _db):
        ref, text = section_source(conn, searched, section_id_of).find(
            source, rel_path, heading_path, wanted
        )
    return section_read(source, rel_path, ref, text, max_chars)
