"""The Python API: what the CLI, the tests, the harness and the benchmarks call.

Every function resolves the database the same way (flow/db/database.py):
`database_url=` or `DATABASE_URL`, else the embedded server in `data_dir`
(default `./.mdchunks`). They are synchronous; each ingest runs its own event
loop, so do not call them from inside a running one.

Sources: one source is one root folder. Its name defaults to the folder's
name; `rel_path` is relative to the root, so moving the folder changes
nothing. `ingest` remembers the root and recipe of each source in
`mdchunks_sources`; `backfill` re-runs a source from there.

A source run, phase by phase, is flow/source/run.py; the reports are
flow/source/reports.py. This module is the one place the rest of the system (and a
user's script) imports the managed face from.
"""

from __future__ import annotations

import contextlib
import json
import logging
import shlex
import shutil
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
from mdchunks.db import database, migrate
from mdchunks.db.connection import Connection
from mdchunks.db.queries import QUERIES
from mdchunks.errors import DatabaseUnavailable, MdchunksError, UsageError
from mdchunks.heading_index import render_breadcrumb
from mdchunks.heading_index.searchable import searchable_text
from mdchunks.plugin.recipe import Recipe
from mdchunks.plugin.rows import section_id as section_id_of
from mdchunks.retrieval import (
    embedder,
    embedding,
    hits,
    lexical,
    rankings,
    rebuilt,
    sections,
    snippets,
)
from mdchunks.retrieval.tables import ChunkTable, chunk_table, require_table
from mdchunks.source import catalog, engine, lock, quarantine, state
from mdchunks.source.backfill import backfill
from mdchunks.source.catalog import check_source_name, default_source_name
from mdchunks.source.reports import (
    DropReport,
    Failure,
    IngestReport,
    RecipeRows,
    SourceStatus,
    StatusReport,
    counted,
)
from mdchunks.source.run import ingest
from mdchunks.source.watch import watch

__all__ = [
    "ChunkRead",
    "DropReport",
    "Failure",
    "IngestReport",
    "Progress",
    "ProgressFn",
    "RecipeRows",
    "SearchHit",
    "SectionRead",
    "SourceStatus",
    "SourceSummary",
    "StatusReport",
    "StoredChunk",
    "backfill",
    "check_source_name",
    "default_source_name",
    "drop",
    "ingest",
    "list_sources",
    "migrate_database",
    "no_match_reason",
    "outline",
    "read_chunk",
    "read_section",
    "require_source",
    "search",
    "source_exists",
    "status",
    "warm_up",
    "watch",
    "words_without_terms",
]

Progress = engine.Progress
ProgressFn = engine.ProgressFn
NoteFn = Callable[[str], None]  # one line about a search's rows (`search`'s on_note)

log = logging.getLogger("mdchunks")


# -- status ---------------------------------------------------------------------------


def version() -> str:
    """The installed mdchunks' version, as `mdchunks --version` and the MCP
    server's handshake give it."""
    # Imported here: importlib.metadata costs a run 20-40 ms of start-up.
    from importlib import metadata

    try:
        return metadata.version("mdchunks")
    except metadata.PackageNotFoundError:  # run from a checkout that is not installed
        return "(not installed)"


def status(*, database_url: str | None = None, data_dir: Path | None = None) -> StatusReport:
    db = database.resolve(database_url, data_dir, create=False)
    todo = migrate.pending(db.url)
    sources: list[SourceStatus] = []
    if not todo:
        with database.connect(db.url) as conn:
            recipes: dict[str, list[RecipeRows]] = {}
            current: dict[str, str] = dict(
                conn.execute("SELECT source, recipe FROM mdchunks_sources").fetchall()
            )
            for source, fingerprint, rows, spec in conn.execute(QUERIES["status_recipes"]):
                description = Recipe.describe_json(json.loads(spec)) if spec else "unknown recipe"
                recipes.setdefault(source, []).append(
                    RecipeRows(
                        fingerprint, int(rows), description, current.get(source) == fingerprint
                    )
                )
            formats: dict[str, dict[str, int]] = {}
            for name, source_format, n in conn.execute(QUERIES["status_formats"]):
                formats.setdefault(name, {})[str(source_format)] = int(n)
            languages: dict[str, dict[str, int]] = {}
            for name, language, n in conn.execute(QUERIES["status_languages"]):
                languages.setdefault(name, {})[str(language)] = int(n)
            skipped = {
                str(name): {str(suffix): int(n) for suffix, n in json.loads(found).items()}
                for name, found in conn.execute(QUERIES["status_skipped"])
            }
            unfinished = state.unfinished(conn)
            vectors = embedding.counts(conn)
            in_progress = {"in_progress": state.RUN_IN_PROGRESS}
            for row in conn.execute(QUERIES["status_sources"], in_progress):
                name, root, _recipe, _updated, documents, failed, chunks, with_headings = row
                sources.append(
                    SourceStatus(
                        source=name,
                        root=root,
                        documents=int(documents),
                        failed=int(failed),
                        chunks=int(chunks),
                        with_headings=int(with_headings),
                        recipes=tuple(recipes.get(name, [])),
                        formats=counted(formats.get(name, {})),
                        languages=tuple(languages.get(name, {}).items()),
                        skipped_suffixes=counted(skipped.get(name, {})),
                        unfinished=unfinished.get(name) == state.STOPPED,
                        running=unfinished.get(name, state.STOPPED) != state.STOPPED,
                        watching=unfinished.get(name) == state.WATCHING,
                        vectors=vectors.get(name, ()),
                        resume=(
                            _resume_command(name, root, db)
                            if unfinished.get(name) == state.STOPPED
                            else None
                        ),
                    )
                )
    return StatusReport(
        database=db.display,
        psql=db.psql_command(),
        embedded=db.embedded,
        migrations_pending=todo,
        sources=tuple(sources),
    )


# -- search ---------------------------------------------------------------------------

HIGHLIGHT_START = snippets.HIGHLIGHT_START
HIGHLIGHT_STOP = snippets.HIGHLIGHT_STOP
SECTION_SHOWN_CHARS = hits.SECTION_SHOWN_CHARS
_HEADLINE_OPTIONS = (
    f"StartSel={HIGHLIGHT_START}, StopSel={HIGHLIGHT_STOP}, MaxWords=28, MinWords=10, "
    f'MaxFragments=2, FragmentDelimiter="{snippets.FRAGMENT_DELIMITER}"'
)


@dataclass(frozen=True, slots=True)
class SearchHit:
    rank: float
    source: str
    rel_path: str
    position: int
    heading_path: tuple[str, ...]
    snippet: str  # matches between HIGHLIGHT_START and HIGHLIGHT_STOP
    # The stored `breadcrumb` column: rendered at ingest within the recipe's
    # budget (a truncated one starts with `…`); None for an empty heading path.
    stored_breadcrumb: str | None = None
    # The chunk itself, and what `expand` asked for (flow/retrieval/hits.py).
    id: uuid.UUID | None = None
    char_start: int = 0
    char_end: int = 0
    # 1-based lines of its first and last character; None for a row written
    # before migration 0009 whose document was not processed since.
    start_line: int | None = None
    end_line: int | None = None
    text: str = ""
    expand: str = hits.DEFAULT_EXPANSION
    section: hits.Section | None = None
    parent: hits.ParentChunk | None = None
    # The section among those the chunk holds where the match lies
    # (docs/sections.md); None for rows written before sections existed.
    matched_section: sections.MatchedSection | None = None
    # The document's title from its front matter (the root of the breadcrumb).
    title: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The hit as `search --json` prints it (one JSON object per line)."""
        return hits.to_json(self)

    @property
    def breadcrumb(self) -> str:
        """What `mdchunks search` shows: the matched section's breadcrumb, else
        the stored one (the section the chunk starts in; both rooted at the
        document's title), `(preamble)` before the first heading of a document
        without a title. Rows written before migration 0006 have no stored
        breadcrumb: theirs is rendered from the path."""
        if self.matched_section is not None:
            return self.matched_section.section.shown
        if self.stored_breadcrumb is not None:
            return self.stored_breadcrumb
        return render_breadcrumb(self.heading_path)[0] if self.heading_path else "(preamble)"

    @property
    def plain_snippet(self) -> str:
        return self.snippet.replace(HIGHLIGHT_START, "").replace(HIGHLIGHT_STOP, "")


# A query longer than this is refused up front: parsed in every searched
# language, its terms cost seconds to minutes before PostgreSQL's text search
# gives up ("statement too complex"), and no embedding model reads so much.
MAX_QUERY_WORDS = 1_000
MAX_QUERY_CHARACTERS = 10_000  # a CJK query has no spaces to count words by


def _check_query_size(query: str) -> None:
    words = len(query.split())
    if words > MAX_QUERY_WORDS or len(query) > MAX_QUERY_CHARACTERS:
        raise UsageError(
            f"the query is too long ({words:,} words, {len(query):,} characters; at most "
            f"{MAX_QUERY_WORDS:,} words and {MAX_QUERY_CHARACTERS:,} characters): "
            "search with fewer words"
        )


def search(
    query: str,
    *,
    k: int = 10,
    source: str | None = None,
    method: str | None = rankings.DEFAULT_METHOD,
    match: str = rankings.DEFAULT_MATCH,
    database_url: str | None = None,
    data_dir: Path | None = None,
    expand: str = hits.DEFAULT_EXPANSION,
    embed_model: str | None = None,
    table: str | None = None,
    pg_schema: str | None = None,
    path_prefix: str | None = None,
    on_note: NoteFn | None = None,
) -> list[SearchHit]:
    """Search the chunks (flow/retrieval/rankings.py): `bm25`, BM25 over heading path
    and text (English stemming), chunks with any word (`match="any"`) or every
    word (`"all"`); `semantic`, cosine similarity of all-MiniLM-L6-v2 vectors
    (needs the embed extra and `ingest --embed`; `embed_model` names the model
    whose vectors to compare, a folder or a package as `ingest` takes it, by
    default the one the searched chunks have vectors of); `hybrid`, reciprocal-rank
    fusion of the two; None (the default): hybrid when every searched source
    has vectors (of `embed_model` when named), else bm25. Hybrid finds nothing
    for a query of stop words only, as bm25. `rank` is the method's score. `expand`:
    `section` adds each hit's section rebuilt from its stored chunks,
    `parent` its parent chunk's row (flow/retrieval/hits.py). `table` (and
    `pg_schema`): a host's own table made by `chunk_table_sql` instead of
    ours, searched by BM25 with statistics counted live (flow/retrieval/tables.py).
    `path_prefix`: only documents whose rel_path starts with it. `on_note`
    is given each line about the searched rows (a source whose last run did
    not finish: they may be stale); None logs them as warnings."""
    if not query.strip():
        raise UsageError("the search query is empty")
    _check_query_size(query)
    if k < 1:
        raise UsageError(f"-k must be at least 1 (got {k})")
    rankings.check_method(method, match)
    if expand not in hits.EXPANSIONS:
        raise UsageError(f"unknown expansion {expand!r} (known: {', '.join(hits.EXPANSIONS)})")
    model = None if embed_model is None else embedder.model_key(embed_model)
    searched = chunk_table(table, pg_schema)
    if method not in (None, "bm25") and searched.managed:
        embedder.require_extra(model or embedder.DEFAULT_MODEL)
    with _reading(searched, database_url, data_dir, source) as (conn, db):
        if searched.managed:
            _warn_unfinished(conn, db, source, on_note)
        # One snapshot for every statement of the search: a concurrent run
        # (a watch) that deletes a ranked chunk before its row is fetched
        # would otherwise make the hit vanish under it (issue 42: KeyError).
        with conn.transaction(snapshot=True):
            if method is None:
                method = rankings.choose_method(conn, source, searched, model)
            if method == "hybrid" and not lexical.keeps_terms(
                conn, query, source=source, table=searched
            ):
                return []  # stop words only: no model loaded for a vector of them
            key: str | None = None
            query_vector = None
            if method != "bm25" and searched.managed:  # for the ranking and the matched sections
                key = embedding.search_model(conn, source, model)
                embedder.require_extra(key)
                query_vector = embedder.encode_query(query, key)
            terms = None
            try:
                # The query's BM25 terms, counted once for the ranking and the
                # matched sections (a host's table counts them over all its rows).
                # (Not over a host's table that `rank` will refuse: semantic or hybrid.)
                if method == "bm25" or (method != "semantic" and searched.managed):
                    terms = lexical.query_terms(conn, query, source=source, table=searched)
                ranked = rankings.rank(
                    conn,
                    query,
                    k=k,
                    source=source,
                    method=method,
                    match=match,
                    model=key or model,
                    query_vector=query_vector,
                    table=searched,
                    path_prefix=path_prefix or None,
                    terms=terms,
                )
                shown = {
                    row[0]: row[1:]
                    for row in conn.execute(
                        rankings.hits_sql(match, searched),
                        {
                            "query": query,
                            "ids": [hit.id for hit in ranked],
                            "headline_options": _HEADLINE_OPTIONS,
                        },
                    )
                }
            except asyncpg.exceptions.StatementTooComplexError:
                raise UsageError(
                    f"the query is too long for PostgreSQL's text search "
                    f"({len(query.split()):,} words); search with fewer words"
                ) from None
            # The sections a hit names live in our sections table; a host's chunk
            # table has none, so its hits' documents are rebuilt from their chunks.
            documents: dict[tuple[str, str], rebuilt.Document] = {}
            matched = sections.matched_sections(
                conn,
                [hit.id for hit in ranked],
                query=query,
                source=source,
                lexical_first=method != "semantic",
                query_vector=query_vector,
                model=key,
                held=None if searched.managed else _rebuilt_held(conn, searched, shown, documents),
                table=searched,
                terms=terms,
            )
            expanded, parents = hits.expansions(
                conn,
                {
                    i: (int(row[2]), tuple(row[3] or ()))
                    for i, row in shown.items()
                    if not (expand == "section" and i in matched)
                },
                expand,
                searched,
            )
            if expand == "section":  # the matched section, exactly, from the stored rows
                for chunk_id, match_of in matched.items():
                    ref = match_of.section
                    document = documents.get(tuple(shown[chunk_id][:2]))
                    if document is not None:  # a host's: from the document its chunks make
                        span = document.sections[ref.ordinal]
                        expanded[chunk_id] = hits.Section(
                            ref.char_start,
                            ref.char_end,
                            ref.heading_path,
                            document.section_text(span),
                            document.chunks_overlapping(span),
                        )
                        continue
                    found_text = sections.section_text(conn, ref.id)
                    if found_text is not None:
                        ref, text, chunks = found_text
                        expanded[chunk_id] = hits.Section(
                            ref.char_start, ref.char_end, ref.heading_path, text, chunks
                        )
    found = []
    for hit in ranked:
        (
            src,
            rel_path,
            position,
            heading_path,
            breadcrumb,
            snippet,
            start,
            end,
            text,
            first,
            last,
            unsearched,
            title,
            _language,
        ) = shown[hit.id]
        found.append(
            SearchHit(
                rank=hit.score,
                source=src,
                rel_path=rel_path,
                position=int(position),
                heading_path=tuple(heading_path or ()),
                snippet=snippets.shown(str(snippet), searchable_text(text, unsearched or ())),
                stored_breadcrumb=breadcrumb,
                id=hit.id,
                char_start=int(start),
                char_end=int(end),
                start_line=first,
                end_line=last,
                text=text,
                expand=expand,
                section=expanded.get(hit.id),
                parent=parents.get(hit.id),
                matched_section=matched.get(hit.id),
                title=title,
            )
        )
    return found


# -- reading: sources, chunks, outlines, sections ---------------------------------------
# What an agent reads (the MCP server's tools, flow/mcp/server.py), over our table or a
# host's (`table`, `pg_schema`). Read-only: SELECT is all they need.

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


@dataclass(frozen=True, slots=True)
class SectionRead:
    source: str
    rel_path: str
    section_id: uuid.UUID
    heading_path: tuple[str, ...]  # () for the preamble
    start_line: int
    end_line: int
    char_start: int
    char_end: int
    text: str  # the whole section, or its first max_chars characters
    omitted_chars: int  # what max_chars left out (0: the text is whole)
    # Its breadcrumb, rooted at the page title (None: a preamble without one).
    breadcrumb: str | None = None


def list_sources(
    *,
    table: str | None = None,
    pg_schema: str | None = None,
    database_url: str | None = None,
    data_dir: Path | None = None,
) -> tuple[SourceSummary, ...]:
    """The sources of the chunk table, with their documents and chunks."""
    with _reading(chunk_table(table, pg_schema), database_url, data_dir) as (conn, _db):
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
    with _reading(searched, database_url, data_dir) as (conn, _db):
        rows = conn.execute(
            searched.query("chunk_with_neighbours"), {"id": wanted, "neighbours": neighbours}
        ).fetchall()
    chunks = [_stored_chunk(row) for row in rows]
    index = next((i for i, chunk in enumerate(chunks) if chunk.id == wanted), None)
    if index is None:
        raise UsageError(f"no chunk with id {wanted} in {searched.shown}")
    return ChunkRead(chunks[index], tuple(chunks[:index]), tuple(chunks[index + 1 :]))


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
    with _reading(searched, database_url, data_dir, source) as (conn, _db):
        if not searched.managed:
            assert source is not None and rel_path is not None
            return [_rebuilt_outline(conn, searched, source, rel_path)]
        found = sections.outline(conn, source=source, rel_path=rel_path)
    if rel_path is not None and not found:
        where = f"source {source!r}" if source is not None else "any source"
        raise UsageError(
            f"no document {rel_path!r} in {where} (`mdchunks outline --source NAME` lists a "
            "source's documents)"
        )
    return found


def _rebuilt_outline(
    conn: Connection, table: ChunkTable, source: str, rel_path: str
) -> sections.DocumentOutline:
    """A host table's document outline, from its chunks (no sections table)."""
    document = _document(conn, table, source, rel_path)
    entries = []
    for span in document.sections:
        parent = document.parent(span)
        entries.append(
            sections.OutlineEntry(
                _rebuilt_ref(source, rel_path, span, document.title),
                None if parent is None else section_id_of(source, rel_path, parent.ordinal),
                chunks=document.chunks_holding(span),
            )
        )
    return sections.DocumentOutline(source, rel_path, tuple(entries), title=document.title)


def _rebuilt_ref(
    source: str, rel_path: str, span: rebuilt.SectionSpan, title: str | None
) -> sections.SectionRef:
    """A rebuilt section as the sections table would name it: the same id (by
    its ordinal: two sections of one heading path are two) and breadcrumb
    (under the document's `title`, as its rows keep it)."""
    return sections.SectionRef(
        id=section_id_of(source, rel_path, span.ordinal),
        ordinal=span.ordinal,
        heading_text=span.heading_path[-1] if span.heading_path else None,
        heading_level=span.level or None,
        heading_path=span.heading_path,
        breadcrumb=render_breadcrumb(span.heading_path, title=title)[0] or None,
        char_start=span.char_start,
        char_end=span.char_end,
        start_line=span.start_line,
        end_line=span.end_line,
    )


def _rebuilt_held(
    conn: Connection,
    table: ChunkTable,
    shown: dict[uuid.UUID, tuple[Any, ...]],
    documents: dict[tuple[str, str], rebuilt.Document],
) -> dict[uuid.UUID, list[sections.Slice]]:
    """The slices of a host table's hits (`shown`: their hits_sql rows), from
    their documents rebuilt from their chunks (kept in `documents`)."""
    held: dict[uuid.UUID, list[tuple[sections.SectionRef, bool, str, str, str | None]]] = {}
    for chunk_id, row in shown.items():
        source, rel_path, _, heading_path, _, _, start, end = row[:8]
        document = documents.get((source, rel_path))
        if document is None:
            document = documents[(source, rel_path)] = _document(conn, table, source, rel_path)
        governing = tuple(heading_path or ())
        held[chunk_id] = [
            (
                _rebuilt_ref(source, rel_path, span, document.title),
                span.heading_path == governing,
                part,
                searched,
                row[13],
            )
            for span, part, searched in document.held(int(start), int(end))
        ]
    flat = sections.slices_of(conn, [piece for pieces in held.values() for piece in pieces])
    slices: dict[uuid.UUID, list[sections.Slice]] = {}
    at = 0
    for chunk_id, pieces in held.items():
        slices[chunk_id] = flat[at : at + len(pieces)]
        at += len(pieces)
    return slices


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
    if section_id is not None and not isinstance(section_id, uuid.UUID):
        try:  # as read_chunk says of a chunk id
            section_id = uuid.UUID(str(section_id).strip())
        except ValueError:
            raise UsageError(f"section id {str(section_id)[:80]!r} is not a uuid") from None
    searched = chunk_table(table, pg_schema)
    with _reading(searched, database_url, data_dir, source) as (conn, _db):
        if searched.managed:  # exactly, from the sections table (docs/sections.md)
            return _stored_section(conn, source, rel_path, heading_path, section_id, max_chars)
        document = _document(conn, searched, source, rel_path)
    if heading_path is not None:
        span = rebuilt.find(document.sections, heading_path)
        if span is None:
            known = [" > ".join(s.heading_path) for s in document.sections if s.heading_path]
            raise UsageError(
                f"{rel_path}: no section with heading path {list(heading_path)!r} "
                f"({len(known)} headings; `outline` lists them)"
            )
    else:
        ids = {str(section_id_of(source, rel_path, s.ordinal)): s for s in document.sections}
        found = ids.get(str(section_id).strip().lower())
        if found is None:
            raise UsageError(f"{rel_path}: no section with id {str(section_id)[:80]!r}")
        span = found
    text = document.section_text(span)
    shown_text = text if max_chars is None else text[:max_chars]
    return SectionRead(
        source,
        rel_path,
        section_id_of(source, rel_path, span.ordinal),
        span.heading_path,
        span.start_line,
        span.end_line,
        span.char_start,
        span.char_end,
        shown_text,
        len(text) - len(shown_text),
        render_breadcrumb(span.heading_path, title=document.title)[0] or None,
    )


def _stored_section(
    conn: Connection,
    source: str,
    rel_path: str,
    heading_path: Sequence[str] | None,
    section_id: uuid.UUID | str | None,
    max_chars: int | None,
) -> SectionRead:
    if heading_path is not None:
        candidates = sections.find_section(conn, source, rel_path, heading_path)
        if not candidates:
            if not sections.outline(conn, source=source, rel_path=rel_path):
                raise UsageError(
                    f"no document {rel_path[:200]!r} in source {source!r} "
                    "(search hits name their rel_path)"
                )
            raise UsageError(
                f"{rel_path}: no section with heading path {list(heading_path)!r} "
                "(`outline` lists them)"
            )
        wanted = candidates[0].id
    else:
        wanted = uuid.UUID(str(section_id))  # a uuid: read_section checked it
    found = sections.section_text(conn, wanted)
    if found is None or section_id_of(source, rel_path, found[0].ordinal) != found[0].id:
        raise UsageError(f"{rel_path}: no section with id {str(section_id)[:80]!r}")
    ref, text, _chunks = found
    shown_text = text if max_chars is None else text[:max_chars]
    return SectionRead(
        source,
        rel_path,
        ref.id,
        ref.heading_path,
        ref.start_line,
        ref.end_line,
        ref.char_start,
        ref.char_end,
        shown_text,
        len(text) - len(shown_text),
        ref.breadcrumb,
    )


def warm_up(
    *,
    table: str | None = None,
    pg_schema: str | None = None,
    database_url: str | None = None,
    data_dir: Path | None = None,
) -> tuple[str, ...]:
    """Load the embedding models of the stored vectors (once per process:
    flow/retrieval/embedder.py caches them), so that the first semantic or
    hybrid search costs what the search costs. The keys loaded; none when the
    chunks have no vectors or the embed extra is missing."""
    searched = chunk_table(table, pg_schema)
    if not searched.managed:
        return ()
    with _reading(searched, database_url, data_dir) as (conn, _db):
        models = sorted({model for _, model in embedding.models_of(conn, None)})
    usable = [model for model in models if embedder.extra_problem(model) is None]
    for model in usable:
        embedder.load(model)
    return tuple(usable)


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


def _document(conn: Connection, table: ChunkTable, source: str, rel_path: str) -> rebuilt.Document:
    document = rebuilt.document(conn, table, source, rel_path)
    if document is None:
        raise UsageError(
            f"no document {rel_path[:200]!r} in source {source!r} (search hits name their rel_path)"
        )
    return document


@contextlib.contextmanager
def _reading(
    table: ChunkTable,
    database_url: str | None,
    data_dir: Path | None,
    source: str | None = None,
) -> Iterator[tuple[Connection, database.Database]]:
    """A session for reading `table` (of `source`, when named), each mistake of
    where one line: nothing ingested, no such table, no such source, no rows.
    Ours needs the schema; a host's table needs only to be there."""
    db = database.resolve(database_url, data_dir, create=False)
    if table.managed:
        _require_schema(db)
    with database.connect(db.url) as conn:
        if not table.managed:
            require_table(conn, table, db.display)
        if source is not None:
            _require_source(conn, source, table)
        _require_chunks(conn, db, source, table)
        yield conn, db


def _warn_unfinished(
    conn: Connection, db: database.Database, source: str | None, on_note: NoteFn | None
) -> None:
    """One line per searched source whose rows a run left half-written
    (docs/reliability.md), to `on_note` (None: the `mdchunks` logger, which
    the CLI prints on stderr): the hits are shown all the same."""
    for name, run in state.unfinished(conn, source).items():
        if run == state.WATCHING:
            continue  # caught up, and following each change as it is saved
        if run == state.RUNNING:
            note = f"source {name!r} is being ingested now: its rows may be incomplete"
        else:
            record = catalog.lookup(conn, name)
            resume = _resume_command(name, None if record is None else str(record.root), db)
            note = (
                f"source {name!r}: its last run did not finish, so its rows may be "
                f"incomplete or stale; run `{resume}` again"
            )
        if on_note is None:
            log.warning("%s", note)
        else:
            on_note(note)


def _resume_command(source: str, root: str | None, db: database.Database) -> str:
    """The command that completes a source's unfinished run: its ingest again
    (the source keeps its settings) against the same database, the folder and
    names quoted for a shell. A server given by URL is named as such: the
    URL may hold a password."""
    folder = shlex.quote(root) if root else "PATH"
    where = ""
    if not db.embedded:
        where = " --database-url URL"
    elif db.data_dir != database.default_data_dir().resolve():
        where = f" --data-dir {shlex.quote(str(db.data_dir))}"
    return f"mdchunks ingest {folder} --source {shlex.quote(source)}{where}"


# -- migrate, drop ---------------------------------------------------------------------


def migrate_database(
    *, database_url: str | None = None, data_dir: Path | None = None
) -> tuple[migrate.MigrationResult, str]:
    db = database.resolve(database_url, data_dir)
    return migrate.apply(db.url), db.display


def drop(
    source: str,
    *,
    database_url: str | None = None,
    data_dir: Path | None = None,
    lock_wait: float = lock.DEFAULT_WAIT_SECONDS,
) -> DropReport:
    """Delete every row of a source and its engine state (the table stays)."""
    db = database.resolve(database_url, data_dir, create=False)
    _require_schema(db)
    with lock.source_lock(db.url, source, wait_seconds=lock_wait, purpose="drop") as conn:
        state_dir = state.state_dir_for(db, conn, source)
        try:
            with conn.transaction():
                row = conn.execute(QUERIES["drop_source"], {"source": source}).fetchone()
        except asyncpg.exceptions.InsufficientPrivilegeError as exc:
            raise DatabaseUnavailable(
                f"cannot drop source {source!r}, nothing was deleted: "
                f"{database.first_line(exc, db.url)} (drop needs DELETE on content_chunks, "
                "content_sections, mdchunks_documents, mdchunks_sources, mdchunks_search_stats, "
                "mdchunks_search_terms and mdchunks_search_top)"
            ) from None
        removed = state_dir.exists()
        if removed:
            shutil.rmtree(state_dir)
        quarantine.forget(state_dir)  # its journal and quarantine list go with it
    chunks, documents, sources, sections = row if row else (0, 0, 0, 0)
    if not (chunks or documents or sources or removed):
        with database.connect(db.url) as conn:
            _require_source(conn, source, doing="nothing to drop")
    return DropReport(source, int(chunks), int(documents), removed, int(sections))


def _require_source(
    conn: Connection, source: str, table: ChunkTable | None = None, *, doing: str = ""
) -> None:
    """A `UsageError` (exit 2) for a source the database does not know, as every
    command that takes `--source` answers (`doing`: what that means here)."""
    if table is not None and not table.managed:  # a host's table: its rows are its sources
        found = conn.execute(table.query("has_chunks"), {"source": source}).fetchone()
        if not (found and found[0]):
            known = [str(r[0]) for r in conn.execute(table.query("chunk_sources"))]
            raise UsageError(
                f"unknown source {source!r} in table {table.shown} "
                f"(known sources: {', '.join(known) or 'none'})"
            )
        return
    row = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM mdchunks_sources WHERE source = %(s)s) "
        "OR EXISTS (SELECT 1 FROM content_chunks WHERE source = %(s)s)",
        {"s": source},
    ).fetchone()
    if not (row and row[0]):
        known = [r[0] for r in conn.execute("SELECT source FROM mdchunks_sources ORDER BY 1")]
        what = f": {doing}" if doing else ""
        raise UsageError(
            f"unknown source {source!r}{what} (known sources: {', '.join(known) or 'none'})"
        )


def source_exists(
    source: str, *, database_url: str | None = None, data_dir: Path | None = None
) -> bool:
    """Whether the database knows `source` (its record, or rows of it)."""
    db = database.resolve(database_url, data_dir, create=False)
    _require_schema(db)
    with database.connect(db.url) as conn:
        try:
            _require_source(conn, source)
        except UsageError:
            return False
    return True


def require_source(
    source: str, *, database_url: str | None = None, data_dir: Path | None = None, doing: str = ""
) -> None:
    """One line (a `UsageError`) naming the known sources when `source` is not one."""
    db = database.resolve(database_url, data_dir, create=False)
    _require_schema(db)
    with database.connect(db.url) as conn:
        _require_source(conn, source, doing=doing)


# -- helpers --------------------------------------------------------------------------


def words_without_terms(
    query: str, *, database_url: str | None = None, data_dir: Path | None = None
) -> tuple[str, ...]:
    """The query's words when not one of them is a search term (stop words
    only: `the of a`), so that "no match" can say why; else ()."""
    db = database.resolve(database_url, data_dir, create=False)
    with database.connect(db.url) as conn:
        if lexical.keeps_terms(conn, query):
            return ()
    return tuple(query.split())


def no_match_reason(
    query: str,
    *,
    method: str | None = None,
    source: str | None = None,
    database_url: str | None = None,
    data_dir: Path | None = None,
    table: str | None = None,
    pg_schema: str | None = None,
) -> str | None:
    """Why a search found nothing when the query itself is the reason, in one
    line: it keeps no search term (stop words, punctuation and symbols are
    left out), naming the words dropped; or none of its terms stands in any
    searched document (of `source`, or all), naming its words. None otherwise
    (semantic search reads every word). The CLI prints it after "no match: ",
    the MCP server returns it beside the empty hits. `table` and `pg_schema`
    are taken as `search` takes them."""
    if method == "semantic":
        return None
    dropped = words_without_terms(query, database_url=database_url, data_dir=data_dir)
    if dropped:
        kind = (
            "only stop words"
            if all(any(ch.isalnum() for ch in word) for word in dropped)
            else "no word search can use (stop words, punctuation and symbols)"
        )
        return f"the query has {kind}, which search leaves out (dropped: {', '.join(dropped)})"
    searched = chunk_table(table, pg_schema)
    db = database.resolve(database_url, data_dir, create=False)
    with database.connect(db.url) as conn:
        terms = lexical.query_terms(conn, query, source=source, table=searched)
    if any(term.df > 0 for term in terms.terms):
        return None
    return f"no searched document holds any of the query's words ({', '.join(query.split())})"


def _require_schema(db: database.Database) -> None:
    todo = migrate.pending(db.url)
    if len(todo) == len(migrate.migration_ids()):  # mdchunks never wrote here
        raise UsageError(f"nothing ingested yet in {db.display}: `mdchunks ingest PATH` first")
    if todo:
        raise MdchunksError(
            f"the database {db.display} has no mdchunks schema yet (pending migrations: "
            f"{', '.join(todo)}); run `mdchunks migrate` or `mdchunks ingest` first"
        )


def _require_chunks(
    conn: Connection, db: database.Database, source: str | None, table: ChunkTable | None = None
) -> None:
    """A search over no rows at all is a mistake of where, not a miss."""
    searched = table or ChunkTable()
    row = conn.execute(searched.query("has_chunks"), {"source": source}).fetchone()
    if row and row[0]:
        return
    if not searched.managed:
        raise UsageError(f"the table {searched.shown} in {db.display} holds no chunks yet")
    if source is None:
        raise UsageError(f"nothing ingested yet in {db.display}: `mdchunks ingest PATH` first")
    raise UsageError(
        f"nothing ingested yet for source {source!r} in {db.display} "
        "(`mdchunks status` lists the sources)"
    )
