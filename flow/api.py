"""The Python API: what the CLI, the tests, the harness and the benchmarks call.

Every function resolves the database the same way (flow/database.py):
`database_url=` or `DATABASE_URL`, else the embedded server in `data_dir`
(default `./.mdchunks`). They are synchronous; each ingest runs its own event
loop, so do not call them from inside a running one.

Sources: one source is one root folder. Its name defaults to the folder's
name; `rel_path` is relative to the root, so moving the folder changes
nothing. `ingest` remembers the root and recipe of each source in
`mdchunks_sources`; `backfill` re-runs a source from there.

A source run, phase by phase, is flow/run.py; the reports are
flow/reports.py. This module is the one place the rest of the system (and a
user's script) imports the managed face from.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from mdchunks import database, embedding, engine, lock, migrate, retrieval, state
from mdchunks.catalog import check_source_name, default_source_name
from mdchunks.errors import MdchunksError, UsageError
from mdchunks.heading_index import render_breadcrumb
from mdchunks.queries import QUERIES
from mdchunks.reports import (
    DropReport,
    Failure,
    IngestReport,
    RecipeRows,
    SourceStatus,
    StatusReport,
)
from mdchunks.run import backfill, ingest, watch
from mdchunks.settings import Recipe

__all__ = [
    "DropReport",
    "Failure",
    "IngestReport",
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
    "search",
    "source_exists",
    "status",
    "watch",
]

ProgressFn = engine.ProgressFn


# -- status ---------------------------------------------------------------------------


def status(*, database_url: str | None = None, data_dir: Path | None = None) -> StatusReport:
    db = database.resolve(database_url, data_dir)
    todo = migrate.pending(db.url)
    sources: list[SourceStatus] = []
    if not todo:
        with database.connect(db.url) as conn:
            recipes: dict[str, list[RecipeRows]] = {}
            current = dict(conn.execute("SELECT source, recipe FROM mdchunks_sources").fetchall())
            for source, fingerprint, rows, spec in conn.execute(QUERIES["status_recipes"]):
                description = Recipe.describe_json(spec) if spec else "unknown recipe"
                recipes.setdefault(source, []).append(
                    RecipeRows(
                        fingerprint, int(rows), description, current.get(source) == fingerprint
                    )
                )
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

HIGHLIGHT_START = "\x02"
HIGHLIGHT_STOP = "\x03"
_HEADLINE_OPTIONS = (
    f"StartSel={HIGHLIGHT_START}, StopSel={HIGHLIGHT_STOP}, MaxWords=28, MinWords=10, "
    'MaxFragments=2, FragmentDelimiter=" … "'
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

    @property
    def breadcrumb(self) -> str:
        """What `mdchunks search` shows: the stored breadcrumb, `(preamble)` for
        a chunk before the first heading. Rows written before migration 0006
        have no stored breadcrumb: theirs is rendered from the path."""
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
    method: str = retrieval.DEFAULT_METHOD,
    match: str = retrieval.DEFAULT_MATCH,
    database_url: str | None = None,
    data_dir: Path | None = None,
) -> list[SearchHit]:
    """Search the chunks (flow/retrieval.py): `bm25`, full-text (English
    stemming, ranked by ts_rank_cd) over heading path and text, every word
    (`match="all"`) or any word (`"any"`); `semantic`, cosine similarity of
    all-MiniLM-L6-v2 vectors (needs the embed extra and `ingest --embed`);
    `hybrid`, reciprocal-rank fusion of the two. `rank` is the method's score."""
    if not query.strip():
        raise UsageError("the search query is empty")
    if k < 1:
        raise UsageError(f"-k must be at least 1 (got {k})")
    retrieval.check_method(method, match)
    if method != "bm25":
        embedding.require_extra()
    db = database.resolve(database_url, data_dir)
    _require_schema(db)
    with database.connect(db.url) as conn:
        ranked = retrieval.rank(conn, query, k=k, source=source, method=method, match=match)
        shown = {
            row[0]: row[1:]
            for row in conn.execute(
                retrieval.hits_sql(match),
                {
                    "query": query,
                    "ids": [hit.id for hit in ranked],
                    "headline_options": _HEADLINE_OPTIONS,
                },
            )
        }
    hits = []
    for hit in ranked:
        src, rel_path, position, heading_path, breadcrumb, snippet = shown[hit.id]
        hits.append(
            SearchHit(
                rank=hit.score,
                source=src,
                rel_path=rel_path,
                position=int(position),
                heading_path=tuple(heading_path or ()),
                snippet=" ".join(str(snippet).split()),
                stored_breadcrumb=breadcrumb,
            )
        )
    return hits


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
    db = database.resolve(database_url, data_dir)
    _require_schema(db)
    with lock.source_lock(db.url, source, wait_seconds=lock_wait, purpose="drop") as conn:
        state_dir = state.state_dir_for(db, conn, source)
        with conn.transaction():
            row = conn.execute(QUERIES["drop_source"], {"source": source}).fetchone()
        removed = state_dir.exists()
        if removed:
            shutil.rmtree(state_dir)
    chunks, documents, sources = row if row else (0, 0, 0)
    if not (chunks or documents or sources or removed):
        raise UsageError(f"unknown source {source!r}: nothing to drop")
    return DropReport(source, int(chunks), int(documents), removed)


def source_exists(
    source: str, *, database_url: str | None = None, data_dir: Path | None = None
) -> bool:
    db = database.resolve(database_url, data_dir)
    _require_schema(db)
    with database.connect(db.url) as conn:
        row = conn.execute(
            "SELECT EXISTS (SELECT 1 FROM mdchunks_sources WHERE source = %(s)s) "
            "OR EXISTS (SELECT 1 FROM content_chunks WHERE source = %(s)s)",
            {"s": source},
        ).fetchone()
    return bool(row and row[0])


# -- helpers --------------------------------------------------------------------------


def _require_schema(db: database.Database) -> None:
    todo = migrate.pending(db.url)
    if todo:
        raise MdchunksError(
            f"the database {db.display} has no mdchunks schema yet (pending migrations: "
            f"{', '.join(todo)}); run `mdchunks migrate` or `mdchunks ingest` first"
        )
