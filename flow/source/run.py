"""One source run, phase by phase: `ingest`.

What builds on it lives beside it: `backfill` runs it again over the sources
of the catalog (flow/source/backfill.py), the live `watch` follows it
(flow/source/watch.py). Its statistics step (7) is flow/source/bm25_stats.py;
the watchdog it runs the engine under, flow/source/watchdog.py.

An ingest takes these phases, in this order (each a line of `ingest`):
1. check the request (root, source name, limits);
2. the database: resolve it, apply migrations, the vectors' schema if asked;
3. lock the source (flow/source/lock.py) and remember its root and recipe;
4. the engine state: trusted or started afresh, then marked in progress
   (flow/source/state.py);
5. walk the root (flow/source/listing.py);
6. run the engine over the listing, then reconcile the source's rows with
   what the run declared, and re-process everything once if rows are missing
   (flow/source/reconcile.py);
7. count what changed, and refresh BM25's statistics if anything did
   (flow/source/bm25_stats.py; before 8: a run stopped between them leaves
   the next one rows to count);
8. stamp the engine state as trusted;
9. bring the vectors in line (flow/retrieval/embedding.py), and report.

Failures (docs/reliability.md), and why each is handled where it is:
- found by the walk (over the size limit, unreadable, broken symlink,
  symlink loop): the document is not handed to cocoindex at all, so it has
  no document row and the reconciliation deletes its old rows; checked again
  on every run;
- a problem of the bytes (invalid UTF-8 with its byte offset, a NUL byte):
  the per-document function records no rows and a document row with the
  error, and returns normally. The reconciliation then deletes the old rows
  and cocoindex memoizes the outcome, so the error is re-reported from the
  document row on every run until the file (or the recipe) changes; no
  re-read. (Raising instead would retry the same bytes forever.) Rows the
  database refuses end the same way (flow/source/writes.py);
- a file that cannot be read when the engine reads it (vanished, replaced by
  a folder or a FIFO, grown past the limit since the walk): declared the same
  way (flow/source/files.py's DocumentFile), but never trusted as unchanged: the
  next run reads the file again.
- anything that raises (a bug): nothing is memoized, so the next run retries
  it; the app's exception handler records it and the reconciliation deletes
  its rows.
Every failure is in `IngestReport.failures` (path and cause); the CLI lists
them and exits 1.
"""

from __future__ import annotations

import dataclasses
import logging
import shlex
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from mdchunks.db import database, embedded, migrate
from mdchunks.db.connection import Connection
from mdchunks.db.queries import QUERIES
from mdchunks.errors import MdchunksError, UsageError
from mdchunks.plugin.recipe import Recipe
from mdchunks.retrieval import embedder, embedding, lexical_stats
from mdchunks.source import (
    bm25_stats,
    catalog,
    engine,
    listing,
    lock,
    quarantine,
    reconcile,
    settings,
    space,
    state,
    watchdog,
)
from mdchunks.source.bounded import DEFAULT_LIMITS, DocumentLimits
from mdchunks.source.ledger import RunLedger
from mdchunks.source.reports import IngestReport, converted_of, counted, failures_of

log = logging.getLogger("mdchunks")
# Chunks under this hold a few words each, words are cut between them, and
# search finds little: allowed (tests and experiments use small budgets),
# warned of.
SMALL_CHUNK_BYTES = 100

ProgressFn = engine.ProgressFn


def ingest(
    root: Path | str,
    *,
    source: str | None = None,
    recipe: Recipe | None = None,
    database_url: str | None = None,
    data_dir: Path | None = None,
    full_reprocess: bool = False,
    max_doc_bytes: int | None = None,
    lock_wait: float = lock.DEFAULT_WAIT_SECONDS,
    progress: ProgressFn | None = None,
    limits: DocumentLimits = DEFAULT_LIMITS,
    follow_outside_links: bool | None = None,
    move: bool = False,
    verify: bool = False,
    lock_purpose: str = "ingest",
    embed: bool | None = None,
    embed_model: str | None = None,
    embed_long_input: str | None = None,
    **recipe_changes: Any,
) -> IngestReport:
    """Bring the rows of `source` in line with the documents under `root`.

    The recipe: `recipe`, exactly; else the source's last settings (a new
    source: the defaults) changed by `recipe_changes` (any recipe option the
    CLI offers, None keeps it) and the embeddings' (flow/source/settings.py):
    `embed` on (True) or off (False: the source's vectors are deleted), None
    as last run; `embed_model` (implies `embed`); `embed_long_input`, the
    long-input rule (flow/retrieval/embedder.py).

    The walk, remembered with the recipe (None: as the source's last run; a
    new source: the defaults, flow/source/catalog.py's Walk): `max_doc_bytes`,
    the largest document read (larger ones are skipped, listed with their
    size);
    `follow_outside_links`, follow symlinks that resolve outside `root` (by
    default they are reported as skipped, flow/source/listing.py). `move`: let a
    source remembered at another root move to this one (flow/source/catalog.py).
    `verify`: hash every document's content instead of trusting its stat (size
    and mtime), and re-process those whose content changed. `lock_purpose`
    names the run to another run it keeps waiting ("backfill" for a backfill).
    `limits`: the time and memory one large document's chunking may take
    (flow/source/bounded.py); a document past them fails alone."""
    started = time.perf_counter()
    told = settings.Told(
        {name: value for name, value in recipe_changes.items() if value is not None},
        embed,
        embed_model,
        embed_long_input,
    )
    if recipe is not None and told != settings.Told():
        raise TypeError("ingest() takes a recipe or recipe options, not both")
    told.check("ingest")
    # 1. the request
    root_path = listing.check_root(Path(root))
    named = source is not None
    source = source if source is not None else catalog.default_source_name(root_path)
    catalog.check_source_name(source)
    catalog.check_max_doc_bytes(max_doc_bytes)
    if problem := limits.problem():
        raise UsageError(problem)
    # 2. the database
    db = database.resolve(database_url, data_dir)
    migrated = migrate.ensure(db.url)
    # 3. the source's lock
    with (
        database.losing_it_is_unavailable(db.url),
        lock.source_lock(db.url, source, wait_seconds=lock_wait, purpose=lock_purpose) as conn,
        # The documents an earlier run died chunking (flow/source/quarantine.py).
        quarantine.opened(state.state_dir_for(db, conn, source)) as chunking,
    ):
        known = catalog.check_binding(conn, source=source, root=root_path, named=named, move=move)
        chosen = (
            settings.Settings(recipe, remembered=False, changed=())
            if recipe is not None
            else settings.resolve(known.recipe if known else None, told)
        )
        recipe = chosen.recipe
        last_walk = known.walk if known else catalog.Walk()
        if last_walk.follow_outside_links is None:  # not recorded: the rows tell
            followed = catalog.followed_outside_links(conn, source, root_path)
            last_walk = dataclasses.replace(last_walk, follow_outside_links=followed)
        walk = last_walk.resolve(
            max_doc_bytes=max_doc_bytes, follow_outside_links=follow_outside_links
        )
        if chosen.remembered:
            chosen = dataclasses.replace(chosen, changed=chosen.changed + last_walk.changes(walk))
        if recipe.embed:  # before any work: the extra, pgvector and the table
            embedder.require_extra(recipe.embed)
            with database.connect(db.url) as setup:
                embedding.ensure_schema(setup)
        # After the options are checked: a run they refuse warns of nothing.
        if known is None and (others := catalog.sources_of_folder(conn, root_path)):
            # Allowed (two recipes side by side), but seldom meant: every
            # search hit of the folder would then come twice.
            log.warning(
                "the folder %s is already source %s; this run makes a second copy of its rows "
                "as source %r (--source %s updates %s instead)",
                root_path,
                ", ".join(repr(name) for name in others),
                source,
                shlex.quote(others[0]),
                "that one" if len(others) == 1 else "the first",
            )
        if recipe.chunk_size < SMALL_CHUNK_BYTES:
            log.warning(
                "chunks of at most %d bytes hold a few words each, cut mid-word, and search "
                "finds little in them (the default is %d)",
                recipe.chunk_size,
                Recipe().chunk_size,
            )
        previous_recipe = (
            known.recipe.describe()
            if known is not None and known.recipe.fingerprint() != recipe.fingerprint()
            else None
        )
        catalog.remember(conn, source=source, root=root_path, recipe=recipe, walk=walk)
        # 4. the engine state
        state_dir = state.state_dir_for(db, conn, source)
        after_unfinished = source in state.unfinished(conn, source)
        trusted = state.trust(conn, source, state_dir)
        state_reset = trusted.started_afresh
        # A disk nearly full refuses the run before it marks anything; one
        # that fills under it stops it (flow/source/space.py).
        disks = space.watched(state_dir, db.pgdata)
        space.check(disks, started=False)
        state.distrust(conn, source)
        # 5. the walk
        found = listing.walk(
            root_path,
            recipe.suffixes,
            walk.max_doc_bytes,
            follow_outside_links=bool(walk.follow_outside_links),
        )
        catalog.remember_skipped(conn, source=source, skipped=found.unlisted)
        window = reconcile.begin(conn, source)
        # 6. the engine, then the reconciliation (healing lost state once)
        run_engine = _engine_runner(
            db,
            root_path,
            state_dir,
            source,
            recipe,
            progress,
            watchdog.alive_check(db, conn, disks),
        )
        ledger = RunLedger(
            listing=found,
            max_doc_bytes=walk.max_doc_bytes,
            quarantine=chunking,
            verify=verify,
            limits=limits,
        )
        # BM25's statistics follow each write by the documents it touches
        # when they count the rows before the run; else they are recounted.
        stats_plan = bm25_stats.plan(
            conn,
            source,
            ledger,
            after_unfinished=after_unfinished,
            state_reset=state_reset,
            recipe_changed=previous_recipe is not None,
            full_reprocess=full_reprocess,
        )
        stats, healed = _process_and_reconcile(
            conn, source, recipe, found, ledger, run_engine, full_reprocess
        )
        # 7. what changed, and BM25's df and lengths follow the rows: before
        # the state is trusted again, so that a run stopped in between leaves
        # the next one its rows to count (a trusted state writes none).
        written = reconcile.rows_written(conn, source, window)
        deleted = reconcile.rows_deleted(conn, source, window)
        stats_update = bm25_stats.settle(
            conn,
            source,
            stats_plan,
            healed=healed,
            stats_behind=ledger.stats_behind,
            written=written,
            deleted=deleted,
            state_reset=state_reset,
        )
        # The rebuilt index is a second copy of it until the first is dropped.
        space.check(disks, started=True)
        lexical_stats.rebuild_index(conn, written)
        # 8. trusted again
        state.stamp(conn, source, state_dir)
        # 9. vectors follow the reconciled chunks (embed off: the source's go);
        # every run syncs them, so one stopped here leaves nothing behind.
        vectors = embedding.sync(
            conn,
            source,
            recipe.embed,
            long_input=recipe.embed_long_input or embedder.DEFAULT_LONG_INPUT,
            progress=_vectors_progress(progress),
        )
        # 10. what the run wrote is in the tables (the migrations' too): the
        # WAL it filled goes (the embedded server's; a server of your own is
        # left to its own upkeep)
        if db.embedded and migrated.applied:
            embedded.compact_catalogs(conn)
        if db.embedded and (
            written
            or deleted
            or state_reset
            or vectors.written
            or vectors.deleted
            or migrated.applied
        ):
            embedded.settle_wal(conn)
        recorded = reconcile.recorded_failures(conn, source)
        totals = conn.execute(QUERIES["source_totals"], {"source": source}).fetchone()
    chunks_total, merges_total, truncations_total = totals or (0, 0, 0)

    failures = failures_of(found, ledger, recorded)
    converted, import_notes = converted_of(ledger)
    failed_paths = {failure.rel_path for failure in failures}
    processed = sum(
        1
        for rel in ledger.processed
        if rel not in failed_paths and ledger.processed[rel].error is None
    )
    mounted = found.rel_paths
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
        rows_total=int(chunks_total),
        bytes_processed=ledger.processed_bytes,
        seconds=time.perf_counter() - started,
        healed=healed,
        state_reset=trusted is state.Trust.NOT_ITS_ROWS,
        state_upgraded=trusted is state.Trust.OLDER_LAYOUT,
        after_unfinished=after_unfinished,
        stats_update=stats_update,
        previous_recipe=previous_recipe,
        remembered=chosen.remembered,
        settings_changed=chosen.changed,
        walk_description=walk.describe(),
        state_dir=state_dir,
        engine_stats=stats,
        chunker=recipe.chunker,
        merges=ledger.merges,
        breadcrumb_truncations=ledger.breadcrumb_truncations,
        merges_total=int(merges_total),
        breadcrumb_truncations_total=int(truncations_total),
        embed_model=recipe.embed,
        vectors_written=vectors.written,
        vectors_deleted=vectors.deleted,
        vectors_total=vectors.total,
        embed_seconds=vectors.seconds,
        vectors_long=vectors.long,
        vectors_long_input=vectors.long_input,
        vectors_max_tokens=vectors.max_tokens,
        vectors_indexed=vectors.indexed,
        skipped_suffixes=counted(found.unlisted),
        converted=converted,
        import_notes=import_notes,
    )


def _process_and_reconcile(
    conn: Connection,
    source: str,
    recipe: Recipe,
    found: listing.Listing,
    ledger: RunLedger,
    run_engine: Callable[[RunLedger, bool], engine.EngineStats],
    full_reprocess: bool,
) -> tuple[engine.EngineStats, bool]:
    """Phase 6: the engine over the listing, then the source's rows made to
    equal what the run declared. Documents with missing rows mean the engine
    state does not describe this database: everything is re-processed once
    (`healed`). `ledger` ends up holding every outcome of the run."""
    stats = run_engine(ledger, full_reprocess)
    result = reconcile.reconcile(
        conn,
        source=source,
        recipe=recipe.fingerprint(),
        mounted=found.rel_paths,
        raised=list(ledger.raised),
        processed=ledger.processed.values(),
        rows=(rows := ledger.take_rows()),
        stats_of=ledger.stats_for(rows),
    )
    ledger.refused(result.refused)
    healed = False
    if result.missing and not full_reprocess:
        healed = True
        heal_ledger = RunLedger(
            listing=found,
            max_doc_bytes=ledger.max_doc_bytes,
            quarantine=ledger.quarantine,
            limits=ledger.limits,
        )
        stats = stats + run_engine(heal_ledger, True)
        for outcome in heal_ledger.processed.values():
            ledger.record(outcome)
        ledger.raised = heal_ledger.raised
        result = reconcile.reconcile(
            conn,
            source=source,
            recipe=recipe.fingerprint(),
            mounted=found.rel_paths,
            raised=list(ledger.raised),
            processed=heal_ledger.processed.values(),
            rows=heal_ledger.take_rows(),
        )
        ledger.refused(result.refused)
    if result.missing:
        shown = ", ".join(result.missing[:5]) + (" …" if len(result.missing) > 5 else "")
        raise MdchunksError(
            f"{len(result.missing)} documents of source {source!r} still miss rows "
            "after a full "
            f"re-process ({shown}); is another tool writing to content_chunks?"
        )
    return stats, healed


def _vectors_progress(progress: ProgressFn | None) -> embedding.ProgressFn | None:
    """The run's progress function, told of the vectors as they are written."""
    if progress is None:
        return None
    return lambda written, total: progress(engine.Progress(written, total, 0, unit="vectors"))


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
        stats = run_engine_once(
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
        # Once more as the engine ends: the watchdog looks twice a second, and
        # the reconciliation writes the rows left in the ledger next.
        if alive is not None:
            alive()
        return stats

    return run


def run_engine_once(
    run: Coroutine[Any, Any, engine.EngineStats],
) -> engine.EngineStats:
    """The engine's run over one listing, on an event loop of its own. The CLI
    knows by this frame that a Ctrl-C came while the engine ran (flow/cli/stops.py)."""
    return engine.run_on_own_loop(run)
