"""The Python API: what the CLI, the tests, the harness and the benchmarks call.

Every function resolves the database the same way (flow/database.py):
`database_url=` or `DATABASE_URL`, else the embedded server in `data_dir`
(default `./.mdchunks`). They are synchronous; each ingest runs its own event
loop, so do not call them from inside a running one.

Sources: one source is one root folder. Its name defaults to the folder's
name; `rel_path` is relative to the root, so moving the folder changes
nothing. `ingest` remembers the root and recipe of each source in
`mdchunks_sources`; `backfill` re-runs a source from there.

Failures (DESIGN section 9), and why each is handled where it is:
- found by the walk (over the size limit, unreadable, broken symlink,
  symlink loop): the document is not handed to cocoindex at all, so cocoindex
  deletes its old rows and forgets it; checked again on every run;
- a problem of the bytes (invalid UTF-8 with its byte offset, a NUL byte):
  the per-document function declares no chunk rows and a document row with
  the error, and returns normally. cocoindex then deletes the old rows itself
  and memoizes the outcome, so the error is re-reported from the document
  row on every run until the file (or the recipe) changes; no re-read.
  (Raising instead would keep the old rows: cocoindex keeps a failing
  component's rows, and would retry the same bytes forever.)
- a file that cannot be read when the engine reads it (vanished, replaced by
  a folder or a FIFO, grown past the limit since the walk): declared the same
  way (flow/app.py's DocumentFile), but never trusted as unchanged: the next
  run reads the file again.
- anything that raises (a bug): cocoindex keeps the old rows and retries next
  run; the app's exception handler records it and the reconciliation deletes
  its chunk rows.
Every failure is in `IngestReport.failures` (path and cause); the CLI lists
them and exits 1.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import re
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from mdchunks import (
    catalog,
    database,
    embedding,
    engine,
    hits,
    lexical,
    listing,
    lock,
    migrate,
    reconcile,
    retrieval,
)
from mdchunks.errors import MdchunksError, UsageError
from mdchunks.heading_index import render_breadcrumb
from mdchunks.ledger import Processed, RunLedger
from mdchunks.queries import QUERIES
from mdchunks.settings import DEFAULT_MAX_DOC_BYTES, Recipe

ProgressFn = engine.ProgressFn


@dataclass(frozen=True, slots=True)
class Failure:
    rel_path: str
    cause: str


@dataclass(frozen=True, slots=True)
class IngestReport:
    source: str
    root: Path
    database: str  # redacted
    recipe: str  # fingerprint
    recipe_description: str
    documents: int  # documents the walk found (including skipped ones)
    processed: int  # documents (re)chunked by this run
    unchanged: int  # documents skipped as unchanged
    removed: int  # documents gone since the last run
    failures: tuple[Failure, ...]
    rows_written: int  # rows inserted or updated
    rows_deleted: int
    rows_total: int  # rows of the source after the run
    bytes_processed: int
    seconds: float
    healed: bool = False  # the state disagreed with the database: all re-processed
    state_reset: bool = False  # the engine state had not made these rows: started afresh
    state_dir: Path | None = None
    engine_stats: engine.EngineStats = field(default_factory=engine.EngineStats)
    # Chunker counts (kept per document on mdchunks_documents): of the documents
    # this run processed, and of every document of the source after the run
    # (unchanged ones keep the counts of the run that processed them).
    chunker: str = "recursive"
    merges: int = 0  # structure chunker: sections merged into an earlier section's chunk
    breadcrumb_truncations: int = 0  # chunks whose breadcrumb was cut to the budget
    merges_total: int = 0
    breadcrumb_truncations_total: int = 0
    # Embeddings (flow/embedding.py): the model (None: embeddings off), vectors
    # written and deleted by this run, vectors of the source after it.
    embed_model: str | None = None
    vectors_written: int = 0
    vectors_deleted: int = 0
    vectors_total: int = 0
    embed_seconds: float = 0.0

    @property
    def failed(self) -> int:
        return len(self.failures)

    @property
    def mb_per_s(self) -> float:
        return self.bytes_processed / 1e6 / self.seconds if self.seconds > 0 else 0.0

    @property
    def ok(self) -> bool:
        return not self.failures


def ingest(
    root: Path | str,
    *,
    source: str | None = None,
    recipe: Recipe | None = None,
    database_url: str | None = None,
    data_dir: Path | None = None,
    full_reprocess: bool = False,
    max_doc_bytes: int = DEFAULT_MAX_DOC_BYTES,
    lock_wait: float = lock.DEFAULT_WAIT_SECONDS,
    progress: ProgressFn | None = None,
) -> IngestReport:
    """Bring the rows of `source` in line with the documents under `root`."""
    started = time.perf_counter()
    recipe = recipe or Recipe()
    root_path = listing.check_root(Path(root))
    source = source if source is not None else default_source_name(root_path)
    check_source_name(source)
    if max_doc_bytes < 1:
        raise UsageError(f"--max-doc-bytes must be at least 1 (got {max_doc_bytes})")
    db = database.resolve(database_url, data_dir)
    migrate.ensure(db.url)
    if recipe.embed:  # before any work: the extra, pgvector and the table (flow/embedding.py)
        embedding.require_extra()
        with database.connect(db.url) as setup:
            embedding.ensure_schema(setup)
    with (
        database.losing_it_is_unavailable(db.url),
        lock.source_lock(db.url, source, wait_seconds=lock_wait) as conn,
    ):
        catalog.remember(
            conn, source=source, root=root_path, recipe=recipe, max_doc_bytes=max_doc_bytes
        )
        state_dir = state_dir_for(db, conn, source)
        state_reset = not _trust_state(conn, source, state_dir)
        _distrust_state(conn, source)
        found = listing.walk(root_path, recipe.suffixes, max_doc_bytes)
        window = reconcile.begin(conn, source)
        ledger = RunLedger(listing=found, max_doc_bytes=max_doc_bytes)
        run_engine = _engine_runner(
            db, root_path, state_dir, source, recipe, progress, _alive_check(db, conn)
        )
        stats = run_engine(ledger, full_reprocess)
        mounted = found.rel_paths
        result = reconcile.reconcile(
            conn,
            source=source,
            recipe=recipe.fingerprint(),
            mounted=mounted,
            raised=list(ledger.raised),
            processed=ledger.processed.values(),
        )
        healed = False
        if result.missing and not full_reprocess:
            # The engine state does not describe this database: rewrite all.
            healed = True
            heal_ledger = RunLedger(listing=found, max_doc_bytes=max_doc_bytes)
            stats = stats + run_engine(heal_ledger, True)
            ledger.processed.update(heal_ledger.processed)
            ledger.raised = heal_ledger.raised
            result = reconcile.reconcile(
                conn,
                source=source,
                recipe=recipe.fingerprint(),
                mounted=mounted,
                raised=list(ledger.raised),
                processed=heal_ledger.processed.values(),
            )
        if result.missing:
            shown = ", ".join(result.missing[:5]) + (" …" if len(result.missing) > 5 else "")
            raise MdchunksError(
                f"{len(result.missing)} documents of source {source!r} still miss rows "
                "after a full "
                f"re-process ({shown}); is another tool writing to content_chunks?"
            )
        _stamp_state(conn, source, state_dir)
        # Vectors follow the reconciled chunks (embed off: the source's go).
        vectors = embedding.sync(conn, source, recipe.embed)
        written = reconcile.rows_written(conn, source, window)
        deleted = reconcile.rows_deleted(conn, source, window)
        if written or deleted or not lexical.has_stats(conn, source):
            lexical.refresh_stats(conn, source)  # BM25's df and lengths follow the rows
        recorded = reconcile.recorded_failures(conn, source)
        total_row = conn.execute(
            "SELECT count(*) FROM content_chunks WHERE source = %s", [source]
        ).fetchone()
        counts_row = conn.execute(
            "SELECT coalesce(sum(merges), 0), coalesce(sum(breadcrumb_truncations), 0) "
            "FROM mdchunks_documents WHERE source = %s",
            [source],
        ).fetchone()

    failures = _failures(found, ledger, recorded)
    failed_paths = {failure.rel_path for failure in failures}
    processed = sum(
        1
        for rel in ledger.processed
        if rel not in failed_paths and ledger.processed[rel].error is None
    )
    unchanged = sum(1 for rel in mounted if rel not in ledger.processed and rel not in failed_paths)
    return IngestReport(
        source=source,
        root=root_path,
        database=db.display,
        recipe=recipe.fingerprint(),
        recipe_description=recipe.describe(),
        documents=len(found.entries) + len(found.skipped),
        processed=processed,
        unchanged=unchanged,
        removed=stats.deleted,
        failures=failures,
        rows_written=written,
        rows_deleted=deleted,
        rows_total=int(total_row[0]) if total_row else 0,
        bytes_processed=ledger.processed_bytes,
        seconds=time.perf_counter() - started,
        healed=healed,
        state_reset=state_reset,
        state_dir=state_dir,
        engine_stats=stats,
        chunker=recipe.chunker,
        merges=ledger.merges,
        breadcrumb_truncations=ledger.breadcrumb_truncations,
        merges_total=int(counts_row[0]) if counts_row else 0,
        breadcrumb_truncations_total=int(counts_row[1]) if counts_row else 0,
        embed_model=recipe.embed,
        vectors_written=vectors.written,
        vectors_deleted=vectors.deleted,
        vectors_total=vectors.total,
        embed_seconds=vectors.seconds,
    )


def watch(
    root: Path | str,
    *,
    source: str | None = None,
    recipe: Recipe | None = None,
    database_url: str | None = None,
    data_dir: Path | None = None,
    max_doc_bytes: int = DEFAULT_MAX_DOC_BYTES,
    lock_wait: float = lock.DEFAULT_WAIT_SECONDS,
    on_change: Callable[[str], None] | None = None,
) -> None:
    """Keep the source's rows current while files change, until Ctrl-C.

    Run `ingest` first (the CLI's `--live` does): it catches up and reconciles;
    from then on cocoindex's live walk processes each change as it happens
    (its engine state is current, so it keeps the chunk rows exact by
    itself). The document rows of what it processed are written at each change
    it reports, and those of deleted files removed; the source's state is
    trusted again only when the watch ends cleanly (`_distrust_state`).
    """
    recipe = recipe or Recipe()
    root_path = listing.check_root(Path(root))
    source = source if source is not None else default_source_name(root_path)
    db = database.resolve(database_url, data_dir)
    migrate.ensure(db.url)
    with lock.source_lock(db.url, source, wait_seconds=lock_wait, purpose="watch") as conn:
        state_dir = state_dir_for(db, conn, source)
        _distrust_state(conn, source)
        ledger = RunLedger(
            listing=listing.Listing(root=root_path), max_doc_bytes=max_doc_bytes, live=True
        )
        seen_failures: set[str] = set()
        shown: list[tuple[int, int, int]] = [(0, 0, 0)]
        written: dict[str, Processed] = {}  # rel_path -> the outcome its document row has
        deletions = [0]  # files the engine has deleted so far

        def write_documents(*, forget_gone: bool) -> None:
            fresh = [o for rel, o in ledger.processed.items() if written.get(rel) is not o]
            with conn.transaction():
                reconcile.record_documents(
                    conn, source=source, recipe=recipe.fingerprint(), processed=fresh
                )
                if forget_gone:
                    reconcile.forget_gone_documents(conn, source, root_path)
            written.update((o.rel_path, o) for o in fresh)

        def changed(stats: engine.EngineStats) -> None:
            write_documents(forget_gone=stats.deleted != deletions[0])
            deletions[0] = stats.deleted
            lexical.refresh_stats(conn, source)  # BM25's df and lengths follow the rows
            if recipe.embed:
                # Vectors follow each change the engine reports (rows still being
                # written are embedded at the next change, or the next ingest).
                embedding.sync(conn, source, recipe.embed)
            if on_change is None:
                return
            counts = (stats.added, stats.reprocessed, stats.deleted)
            if counts != shown[-1]:
                shown.append(counts)
                on_change(
                    f"live: {stats.added} added, {stats.reprocessed} changed, "
                    f"{stats.deleted} removed since the watch began"
                )
            for rel_path, cause in sorted(ledger.raised.items()):
                if rel_path not in seen_failures:
                    seen_failures.add(rel_path)
                    on_change(f"failed: {rel_path}: {cause}")
            for rel_path, outcome in sorted(ledger.processed.items()):
                if outcome.error and rel_path not in seen_failures:
                    seen_failures.add(rel_path)
                    on_change(f"failed: {rel_path}: {outcome.error}")

        # Ctrl-C (KeyboardInterrupt) or SIGTERM (a cancellation) ends the watch.
        with contextlib.suppress(KeyboardInterrupt, asyncio.CancelledError):
            asyncio.run(
                engine.run_live(
                    database_url=db.url,
                    root=root_path,
                    state_dir=state_dir,
                    source=source,
                    recipe=recipe,
                    run=ledger,
                    on_change=changed,
                )
            )
        write_documents(forget_gone=True)
        _stamp_state(conn, source, state_dir)


def backfill(
    *,
    source: str | None = None,
    chunk_size: int | None = None,
    min_chunk_size: int | None = None,
    chunk_overlap: int | None = None,
    headings: bool | None = None,
    invalid_utf8: str | None = None,
    chunker: str | None = None,
    split_levels: int | None = None,
    merged_path: str | None = None,
    breadcrumb_budget: int | None = None,
    embed: bool | None = None,
    database_url: str | None = None,
    data_dir: Path | None = None,
    full_reprocess: bool = False,
    lock_wait: float = lock.DEFAULT_WAIT_SECONDS,
    progress: ProgressFn | None = None,
) -> list[IngestReport]:
    """Re-process the documents of a source (default: every source) under the
    recipe it was last ingested with, changed by the given options, and with
    the heading index of the code that runs now. Files are only read. Every
    document whose rows were made by another recipe is re-processed; when the
    recipe is the same, nothing is (pass `full_reprocess` to force it)."""
    db = database.resolve(database_url, data_dir)
    migrate.ensure(db.url)
    with database.connect(db.url) as conn:
        if source is None:
            records = catalog.all_sources(conn)
            if not records:
                raise UsageError(
                    "nothing to backfill: no source has been ingested into this database"
                )
        else:
            record = catalog.lookup(conn, source)
            if record is None:
                known = ", ".join(r.source for r in catalog.all_sources(conn)) or "none"
                raise UsageError(f"unknown source {source!r} (known sources: {known})")
            records = [record]
    reports = []
    for record in records:
        try:
            recipe = record.recipe.with_options(
                chunk_size=chunk_size,
                min_chunk_size=min_chunk_size,
                chunk_overlap=chunk_overlap,
                headings=headings,
                invalid_utf8=invalid_utf8,
                chunker=chunker,
                split_levels=split_levels,
                merged_path=merged_path,
                breadcrumb_budget=breadcrumb_budget,
            )
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if embed is not None:  # None: as last ingested
            recipe = dataclasses.replace(recipe, embed=embedding.MODEL_NAME if embed else None)
        if not record.root.is_dir():
            raise UsageError(
                f"the folder of source {record.source!r}, {record.root}, is gone; "
                f"ingest its new location with --source {record.source}"
            )
        reports.append(
            ingest(
                record.root,
                source=record.source,
                recipe=recipe,
                database_url=db.url,
                data_dir=db.data_dir,
                full_reprocess=full_reprocess,
                max_doc_bytes=record.max_doc_bytes,
                lock_wait=lock_wait,
                progress=progress,
            )
        )
    return reports


# -- status ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RecipeRows:
    recipe: str
    rows: int
    description: str
    current: bool


@dataclass(frozen=True, slots=True)
class SourceStatus:
    source: str
    root: str | None
    documents: int
    failed: int
    chunks: int
    with_headings: int
    recipes: tuple[RecipeRows, ...]

    @property
    def heading_share(self) -> float:
        return self.with_headings / self.chunks if self.chunks else 0.0

    @property
    def stale_rows(self) -> int:
        return sum(r.rows for r in self.recipes if not r.current)


@dataclass(frozen=True, slots=True)
class StatusReport:
    database: str
    psql: str
    embedded: bool
    migrations_pending: tuple[str, ...]
    sources: tuple[SourceStatus, ...]


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
    # The chunk itself, and what `expand` asked for (flow/hits.py).
    id: uuid.UUID | None = None
    char_start: int = 0
    char_end: int = 0
    text: str = ""
    expand: str = hits.DEFAULT_EXPANSION
    section: hits.Section | None = None
    parent: hits.ParentChunk | None = None

    def to_json(self) -> dict[str, Any]:
        """The hit as `search --json` prints it (one JSON object per line)."""
        return hits.to_json(self)

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
    method: str | None = retrieval.DEFAULT_METHOD,
    match: str = retrieval.DEFAULT_MATCH,
    database_url: str | None = None,
    data_dir: Path | None = None,
    expand: str = hits.DEFAULT_EXPANSION,
) -> list[SearchHit]:
    """Search the chunks (flow/retrieval.py): `bm25`, BM25 over heading path
    and text (English stemming), chunks with any word (`match="any"`) or every
    word (`"all"`); `semantic`, cosine similarity of all-MiniLM-L6-v2 vectors
    (needs the embed extra and `ingest --embed`); `hybrid`, reciprocal-rank
    fusion of the two; None (the default): hybrid when the searched chunks
    have vectors, else bm25. `rank` is the method's score. `expand`:
    `section` adds each hit's section rebuilt from its stored chunks,
    `parent` its parent chunk's row (flow/hits.py)."""
    if not query.strip():
        raise UsageError("the search query is empty")
    if k < 1:
        raise UsageError(f"-k must be at least 1 (got {k})")
    retrieval.check_method(method, match)
    if expand not in hits.EXPANSIONS:
        raise UsageError(f"unknown expansion {expand!r} (known: {', '.join(hits.EXPANSIONS)})")
    if method not in (None, "bm25"):
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
        sections, parents = hits.expansions(
            conn, {i: (int(row[2]), tuple(row[3] or ())) for i, row in shown.items()}, expand
        )
    found = []
    for hit in ranked:
        src, rel_path, position, heading_path, breadcrumb, snippet, start, end, text = shown[hit.id]
        found.append(
            SearchHit(
                rank=hit.score,
                source=src,
                rel_path=rel_path,
                position=int(position),
                heading_path=tuple(heading_path or ()),
                snippet=" ".join(str(snippet).split()),
                stored_breadcrumb=breadcrumb,
                id=hit.id,
                char_start=int(start),
                char_end=int(end),
                text=text,
                expand=expand,
                section=sections.get(hit.id),
                parent=parents.get(hit.id),
            )
        )
    return found


# -- migrate, drop ---------------------------------------------------------------------


def migrate_database(
    *, database_url: str | None = None, data_dir: Path | None = None
) -> tuple[migrate.MigrationResult, str]:
    db = database.resolve(database_url, data_dir)
    return migrate.apply(db.url), db.display


@dataclass(frozen=True, slots=True)
class DropReport:
    source: str
    chunks_deleted: int
    documents_deleted: int
    state_removed: bool


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
        state_dir = state_dir_for(db, conn, source)
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


def default_source_name(root: Path) -> str:
    return root.resolve().name or "root"


def check_source_name(source: str) -> None:
    if not source or not source.strip():
        raise UsageError("the source name is empty")
    if len(source) > 200 or any(ord(ch) < 32 for ch in source):
        raise UsageError(f"invalid source name {source!r}: at most 200 printable characters")


def state_dir_for(db: database.Database, conn: psycopg.Connection, source: str) -> Path:
    """`<data dir>/state/<source>-<hash>`: bound to this database and source."""
    key = database.identity_hash(database.identity(conn) + "\0" + source)
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", source)[:40].strip("._") or "source"
    return db.data_dir / "state" / f"{slug}-{key}"


def _engine_runner(
    db: database.Database,
    root: Path,
    state_dir: Path,
    source: str,
    recipe: Recipe,
    progress: ProgressFn | None,
    alive: engine.AliveFn | None = None,
) -> Callable[[RunLedger, bool], engine.EngineStats]:
    def run(ledger: RunLedger, full_reprocess: bool) -> engine.EngineStats:
        return asyncio.run(
            engine.run_once(
                database_url=db.url,
                root=root,
                state_dir=state_dir,
                source=source,
                recipe=recipe,
                run=ledger,
                full_reprocess=full_reprocess,
                progress=progress,
                alive=alive,
            )
        )

    return run


STATE_TOKEN_FILE = "mdchunks-state-token"
RUN_IN_PROGRESS = "running:"  # a token no state dir carries: the run did not finish


def _trust_state(conn: psycopg.Connection, source: str, state_dir: Path) -> bool:
    """Keep the engine state only if it is the one that made the source's rows.

    cocoindex trusts its memos: a document whose file matches the memo is not
    processed, whatever its rows say. A memo describes the rows of the run
    that wrote it; if another run wrote the source since (from another data
    dir: another machine, another role's state dir) or the database or the
    state was restored, a file edited back to an earlier version would keep
    the other run's rows forever. So each successful run writes a new random
    token to the source's row and next to its state; when the two differ, the
    state is deleted and this run processes every document (a first run after
    an upgrade has neither, and keeps its state). A run replaces the token with
    an in-progress mark before its engine starts (`_distrust_state`), so the
    run after a crash finds the mark and processes every document."""
    path = state_dir / STATE_TOKEN_FILE
    try:
        in_state: str | None = path.read_text().strip() or None
    except FileNotFoundError:
        in_state = None
    if catalog.state_token(conn, source) == in_state:
        return True
    shutil.rmtree(state_dir, ignore_errors=True)
    return False


def _distrust_state(conn: psycopg.Connection, source: str) -> None:
    """Before the engine starts: until `_stamp_state`, the source's engine state
    is not trusted. The engine commits a document's chunk rows before the run
    writes its document row (flow/reconcile.py); a run killed in between leaves
    this mark, and the next run starts from an empty state, re-processing every
    document, instead of trusting memos whose document rows were never written."""
    catalog.set_state_token(conn, source, f"{RUN_IN_PROGRESS}{uuid.uuid4().hex}")


def _stamp_state(conn: psycopg.Connection, source: str, state_dir: Path) -> None:
    """After a successful run: a new token in the database and next to the state."""
    token = uuid.uuid4().hex
    state_dir.mkdir(parents=True, exist_ok=True)
    staged = state_dir / f"{STATE_TOKEN_FILE}.new"
    staged.write_text(token + "\n")
    staged.replace(state_dir / STATE_TOKEN_FILE)
    catalog.set_state_token(conn, source, token)


def _alive_check(db: database.Database, conn: psycopg.Connection) -> engine.AliveFn:
    """Raises when the connection holding the source's lock is gone (and the lock
    with it): the engine then stops the run instead of retrying its writes."""

    def alive() -> None:
        try:
            conn.execute("SELECT 1")
        except psycopg.Error as exc:
            if database.is_connection_loss(exc) or conn.broken:
                raise database.lost(db.url, exc) from None
            raise

    return alive


def _failures(
    found: listing.Listing, ledger: RunLedger, recorded: dict[str, str]
) -> tuple[Failure, ...]:
    failures: dict[str, str] = {skipped.rel_path: skipped.cause for skipped in found.skipped}
    mounted = set(found.rel_paths)
    for rel_path, error in recorded.items():
        if rel_path not in mounted or rel_path in ledger.raised:
            continue
        if rel_path in ledger.processed:
            failures[rel_path] = error
        else:
            failures[rel_path] = f"{error} (unchanged since an earlier run)"
    failures.update(ledger.raised)
    return tuple(Failure(rel_path, cause) for rel_path, cause in sorted(failures.items()))


def _require_schema(db: database.Database) -> None:
    todo = migrate.pending(db.url)
    if todo:
        raise MdchunksError(
            f"the database {db.display} has no mdchunks schema yet (pending migrations: "
            f"{', '.join(todo)}); run `mdchunks migrate` or `mdchunks ingest` first"
        )
