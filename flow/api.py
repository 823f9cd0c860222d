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
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
from mdchunks.db import database, migrate
from mdchunks.db.connection import Connection
from mdchunks.db.queries import QUERIES
from mdchunks.errors import DatabaseUnavailable, MdchunksError, UsageError
from mdchunks.heading_index import render_breadcrumb
from mdchunks.plugin.recipe import Recipe
from mdchunks.retrieval import embedder, embedding, hits, lexical, rankings, sections, snippets
from mdchunks.source import engine, lock, quarantine, state
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
from mdchunks.source.run import backfill, ingest, watch

__all__ = [
    "DropReport",
    "Failure",
    "IngestReport",
    "Progress",
    "ProgressFn",
    "RecipeRows",
    "SearchHit",
    "SourceStatus",
    "StatusReport",
    "backfill",
    "check_source_name",
    "default_source_name",
    "drop",
    "ingest",
    "migrate_database",
    "outline",
    "search",
    "source_exists",
    "status",
    "watch",
    "words_without_terms",
]

Progress = engine.Progress
ProgressFn = engine.ProgressFn


# -- status ---------------------------------------------------------------------------


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
            skipped = {
                str(name): {str(suffix): int(n) for suffix, n in json.loads(found).items()}
                for name, found in conn.execute(QUERIES["status_skipped"])
            }
            for row in conn.execute(QUERIES["status_sources"]):
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
                        skipped_suffixes=counted(skipped.get(name, {})),
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

    def to_json(self) -> dict[str, Any]:
        """The hit as `search --json` prints it (one JSON object per line)."""
        return hits.to_json(self)

    @property
    def breadcrumb(self) -> str:
        """What `mdchunks search` shows: the matched section's breadcrumb, else
        the stored one (the section the chunk starts in), `(preamble)` before
        the first heading. Rows written before migration 0006 have no stored
        breadcrumb: theirs is rendered from the path."""
        if self.matched_section is not None:
            return self.matched_section.section.shown
        if self.stored_breadcrumb is not None:
            return self.stored_breadcrumb
        return render_breadcrumb(self.heading_path)[0] if self.heading_path else "(preamble)"

    @property
    def plain_snippet(self) -> str:
        return self.snippet.replace(HIGHLIGHT_START, "").replace(HIGHLIGHT_STOP, "")


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
) -> list[SearchHit]:
    """Search the chunks (flow/retrieval/rankings.py): `bm25`, BM25 over heading path
    and text (English stemming), chunks with any word (`match="any"`) or every
    word (`"all"`); `semantic`, cosine similarity of all-MiniLM-L6-v2 vectors
    (needs the embed extra and `ingest --embed`; `embed_model` names the model
    whose vectors to compare, a folder or a package as `ingest` takes it, by
    default the one the searched chunks have vectors of); `hybrid`, reciprocal-rank
    fusion of the two; None (the default): hybrid when the searched chunks
    have vectors, else bm25. `rank` is the method's score. `expand`:
    `section` adds each hit's section rebuilt from its stored chunks,
    `parent` its parent chunk's row (flow/retrieval/hits.py)."""
    if not query.strip():
        raise UsageError("the search query is empty")
    if k < 1:
        raise UsageError(f"-k must be at least 1 (got {k})")
    rankings.check_method(method, match)
    if expand not in hits.EXPANSIONS:
        raise UsageError(f"unknown expansion {expand!r} (known: {', '.join(hits.EXPANSIONS)})")
    model = None if embed_model is None else embedder.model_key(embed_model)
    if method not in (None, "bm25"):
        embedder.require_extra(model or embedder.DEFAULT_MODEL)
    db = database.resolve(database_url, data_dir, create=False)
    with _reading(db, source) as conn:
        if method is None:
            method = rankings.choose_method(conn, source)
        key: str | None = None
        query_vector = None
        if method != "bm25":  # the query's vector, for the ranking and the matched sections
            key = embedding.search_model(conn, source, model)
            embedder.require_extra(key)
            query_vector = embedder.encode_query(query, key)
        try:
            ranked = rankings.rank(
                conn,
                query,
                k=k,
                source=source,
                method=method,
                match=match,
                model=key,
                query_vector=query_vector,
            )
            shown = {
                row[0]: row[1:]
                for row in conn.execute(
                    rankings.hits_sql(match),
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
        matched = sections.matched_sections(
            conn,
            [hit.id for hit in ranked],
            query=query,
            source=source,
            lexical_first=method != "semantic",
            query_vector=query_vector,
            model=key,
        )
        expanded, parents = hits.expansions(
            conn,
            {
                i: (int(row[2]), tuple(row[3] or ()))
                for i, row in shown.items()
                if not (expand == "section" and i in matched)
            },
            expand,
        )
        if expand == "section":  # the matched section, exactly, from the stored rows
            for chunk_id, match_of in matched.items():
                rebuilt = sections.section_text(conn, match_of.section.id)
                if rebuilt is not None:
                    ref, text, chunks = rebuilt
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
        ) = shown[hit.id]
        found.append(
            SearchHit(
                rank=hit.score,
                source=src,
                rel_path=rel_path,
                position=int(position),
                heading_path=tuple(heading_path or ()),
                snippet=snippets.shown(str(snippet), text),
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
            )
        )
    return found


# -- outline ----------------------------------------------------------------------------


def outline(
    rel_path: str | None = None,
    *,
    source: str | None = None,
    database_url: str | None = None,
    data_dir: Path | None = None,
) -> list[sections.DocumentOutline]:
    """Documents' heading trees from the sections table (docs/sections.md): of
    `rel_path` (in `source`, or in every source that has it), else of every
    document of `source` (None: of every source), by source and path. Each
    section with its level, lines, parent and how many chunks hold it."""
    db = database.resolve(database_url, data_dir, create=False)
    with _reading(db, source) as conn:
        found = sections.outline(conn, source=source, rel_path=rel_path)
    if rel_path is not None and not found:
        where = f"source {source!r}" if source is not None else "any source"
        raise UsageError(f"no document {rel_path!r} in {where} (`mdchunks status` lists them)")
    return found


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
                "content_sections, mdchunks_documents, mdchunks_sources, mdchunks_search_stats "
                "and mdchunks_search_terms)"
            ) from None
        removed = state_dir.exists()
        if removed:
            shutil.rmtree(state_dir)
        quarantine.forget(state_dir)  # its journal and quarantine list go with it
    chunks, documents, sources = row if row else (0, 0, 0)
    if not (chunks or documents or sources or removed):
        raise UsageError(f"unknown source {source!r}: nothing to drop")
    return DropReport(source, int(chunks), int(documents), removed)


def _require_source(conn: Connection, source: str) -> None:
    """A `UsageError` (exit 2) for a source the database does not know, as every
    command that takes `--source` answers."""
    row = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM mdchunks_sources WHERE source = %(s)s) "
        "OR EXISTS (SELECT 1 FROM content_chunks WHERE source = %(s)s)",
        {"s": source},
    ).fetchone()
    if not (row and row[0]):
        known = [r[0] for r in conn.execute("SELECT source FROM mdchunks_sources ORDER BY 1")]
        raise UsageError(f"unknown source {source!r} (known sources: {', '.join(known) or 'none'})")


def source_exists(
    source: str, *, database_url: str | None = None, data_dir: Path | None = None
) -> bool:
    db = database.resolve(database_url, data_dir, create=False)
    _require_schema(db)
    with database.connect(db.url) as conn:
        row = conn.execute(
            "SELECT EXISTS (SELECT 1 FROM mdchunks_sources WHERE source = %(s)s) "
            "OR EXISTS (SELECT 1 FROM content_chunks WHERE source = %(s)s)",
            {"s": source},
        ).fetchone()
    return bool(row and row[0])


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


@contextlib.contextmanager
def _reading(db: database.Database, source: str | None) -> Iterator[Connection]:
    """A connection to read `source` (None: every source) with, once the schema,
    the source and some chunks are known to be there (one line otherwise)."""
    _require_schema(db)
    with database.connect(db.url) as conn:
        if source is not None:
            _require_source(conn, source)
        _require_chunks(conn, db, source)
        yield conn


def _require_schema(db: database.Database) -> None:
    todo = migrate.pending(db.url)
    if len(todo) == len(migrate.migration_ids()):  # mdchunks never wrote here
        raise UsageError(f"nothing ingested yet in {db.display}: `mdchunks ingest PATH` first")
    if todo:
        raise MdchunksError(
            f"the database {db.display} has no mdchunks schema yet (pending migrations: "
            f"{', '.join(todo)}); run `mdchunks migrate` or `mdchunks ingest` first"
        )


def _require_chunks(conn: Connection, db: database.Database, source: str | None) -> None:
    """A search over no rows at all is a mistake of where, not a miss."""
    row = conn.execute(QUERIES["has_chunks"], {"source": source}).fetchone()
    if row and row[0]:
        return
    if source is None:
        raise UsageError(f"nothing ingested yet in {db.display}: `mdchunks ingest PATH` first")
    raise UsageError(
        f"nothing ingested yet for source {source!r} in {db.display} "
        "(`mdchunks status` lists the sources)"
    )
