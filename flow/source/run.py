"""One source run, phase by phase: `ingest`, and what builds on it (`backfill`,
the live `watch`).

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
   (before 8: a run stopped between them leaves the next one rows to count);
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

import asyncio
import contextlib
import dataclasses
import logging
import shlex
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from mdchunks.db import connection, database, embedded, migrate
from mdchunks.db.connection import Connection
from mdchunks.db.queries import QUERIES
from mdchunks.errors import MdchunksError, UsageError
from mdchunks.plugin.recipe import Recipe
from mdchunks.retrieval import embedder, embedding, lexical
from mdchunks.source import (
    catalog,
    engine,
    files,
    listing,
    lock,
    quarantine,
    reconcile,
    settings,
    space,
    state,
    writes,
)
from mdchunks.source.bounded import DEFAULT_LIMITS, DocumentLimits
from mdchunks.source.ledger import Processed, RunLedger
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
            db, root_path, state_dir, source, recipe, progress, _alive_check(db, conn, disks)
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
        stored = lexical.stored_chunks(conn, source)
        recount = _stats_distrusted(
            stored,
            after_unfinished=after_unfinished,
            state_reset=state_reset,
            recipe_changed=previous_recipe is not None,
            full_reprocess=full_reprocess,
        )
        if recount is None and stored is not None:
            ledger.stats_of, ledger.stats_rows_left = source, stored // MOVE_SHARE
        stats, healed = _process_and_reconcile(
            conn, source, recipe, found, ledger, run_engine, full_reprocess
        )
        # 7. what changed, and BM25's df and lengths follow the rows: before
        # the state is trusted again, so that a run stopped in between leaves
        # the next one its rows to count (a trusted state writes none).
        written = reconcile.rows_written(conn, source, window)
        deleted = reconcile.rows_deleted(conn, source, window)
        if recount is None and healed:
            recount = "rows were missing, every document was re-processed"
        elif recount is None and ledger.stats_behind:
            recount = f"more than 1/{MOVE_SHARE} of the rows changed"
        elif recount is None and (stored or 0) < lexical.BOUNDS_MIN_CHUNKS <= (
            lexical.stored_chunks(conn, source) or 0
        ):
            # Moves keep the bounds and top chunks a source has: one that
            # grew past the size that keeps them gets them from a recount.
            recount = f"the source reached {lexical.BOUNDS_MIN_CHUNKS} chunks"
        stats_update = ""
        if recount is not None and (written or deleted or state_reset or stored is None):
            # A run after one that did not finish may find its rows written
            # already (rows that say the same are left alone), not its statistics.
            lexical.refresh_stats(conn, source)
            stats_update = f"recounted ({recount})"
        elif recount is None and (written or deleted):
            stats_update = "moved by the documents the run touched"
        # The rebuilt index is a second copy of it until the first is dropped.
        space.check(disks, started=True)
        lexical.rebuild_index(conn, written)
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


# A run moves BM25's statistics by the rows it writes while they are at most
# this fraction of the source's: taking each write's share before and after
# reads its rows twice, a recount reads every row once (docs/search.md).
MOVE_SHARE = 4


def _stats_distrusted(
    stored: int | None,
    *,
    after_unfinished: bool,
    state_reset: bool,
    recipe_changed: bool,
    full_reprocess: bool,
) -> str | None:
    """Why a run recounts BM25's statistics rather than moving them by the
    documents it touches (None: it moves them). Moving keeps them exact only
    if they counted the source's rows before the run: a run that did not
    finish may have written rows it never counted, and an engine state that
    did not make the rows, a new recipe or a full re-process rewrite them
    all (a recount costs less)."""
    if stored is None:
        return "no statistics yet"
    if after_unfinished:
        return "the last run did not finish"
    if recipe_changed:
        return "the recipe changed"
    if state_reset or full_reprocess:
        return "every document re-processed"
    return None


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


def watch(
    root: Path | str,
    *,
    source: str | None = None,
    recipe: Recipe | None = None,
    database_url: str | None = None,
    data_dir: Path | None = None,
    max_doc_bytes: int | None = None,
    lock_wait: float = lock.DEFAULT_WAIT_SECONDS,
    on_change: Callable[[str], None] | None = None,
    limits: DocumentLimits = DEFAULT_LIMITS,
    on_stop: Callable[[], None] | None = None,
) -> None:
    """Keep the source's rows current while files change, until Ctrl-C or
    SIGTERM (in the main thread; `on_stop` is called in the signal handler).

    Run `ingest` first (the CLI's `--live` does): it catches up and reconciles;
    from then on cocoindex's live walk processes each change as it happens.
    The rows of what it processed (document, chunk and section rows) are
    written at each change it reports, and those of deleted files removed; the source's state is
    trusted again only when the watch ends cleanly (`state.distrust`). A disk
    it writes that is nearly full stops it with `DiskFull`, the source left
    unfinished (flow/source/space.py). `max_doc_bytes`: None, as the source's
    last run (symlinks that leave the root are never followed here).
    """
    if problem := limits.problem():
        raise UsageError(problem)
    catalog.check_max_doc_bytes(max_doc_bytes)
    root_path = listing.check_root(Path(root))
    source = source if source is not None else catalog.default_source_name(root_path)
    db = database.resolve(database_url, data_dir)
    migrate.ensure(db.url)
    with (
        # A database lost while the watch starts, or under it: one line, exit 3.
        database.losing_it_is_unavailable(db.url),
        lock.source_lock(db.url, source, wait_seconds=lock_wait, purpose="watch") as conn,
    ):
        known = catalog.lookup(conn, source)
        if recipe is None:  # the source's last settings, as `ingest` takes them
            recipe = settings.resolve(known.recipe if known else None, settings.Told()).recipe
        walk = (known.walk if known else catalog.Walk()).resolve(
            max_doc_bytes=max_doc_bytes, follow_outside_links=None
        )
        state_dir = state.state_dir_for(db, conn, source)
        # As in `ingest`: a state that did not make the source's rows (a run
        # killed before it wrote them, another data dir) starts afresh.
        state.trust(conn, source, state_dir)
        # As in `ingest`: a disk nearly full refuses the watch before it marks
        # anything, one that fills under it stops it (flow/source/space.py).
        disks = space.watched(state_dir, db.pgdata)
        space.check(disks, started=False)
        state.distrust(conn, source)
        if not lexical.has_stats(conn, source):  # the changes below move them
            lexical.refresh_stats(conn, source)
        ledger = RunLedger(
            listing=listing.Listing(root=root_path),
            max_doc_bytes=walk.max_doc_bytes,
            live=True,
            limits=limits,
        )
        seen_failures: set[str] = set()
        shown: list[tuple[int, int, int, int, int]] = [(0, 0, 0, 0, 0)]
        written: dict[str, Processed] = {}  # rel_path -> the outcome its document row has
        deletions = [0]  # files the engine has deleted so far

        def write_documents(*, forget_gone: bool) -> None:
            with conn.transaction():
                rows = ledger.take_rows()
                outcomes = [rel for rel, o in ledger.processed.items() if written.get(rel) is not o]
                gone = reconcile.gone_documents(conn, source, root_path) if forget_gone else []
                # BM25's statistics follow the rows: the share of the
                # documents this change touches, before and after (a change
                # costs its documents, not the whole source).
                touched = sorted({*rows, *outcomes, *gone})
                before = lexical.documents_share(conn, source, touched)
                # Their chunk and section rows first (a document whose rows
                # the database refuses fails alone, on its document row), then
                # their document rows, then the rows those no longer declare
                # (a document that shrank).
                ledger.refused(writes.write(conn, rows))
                fresh = [o for rel, o in ledger.processed.items() if written.get(rel) is not o]
                reconcile.record_documents(
                    conn, source=source, recipe=recipe.fingerprint(), processed=fresh
                )
                writes.prune(
                    conn,
                    source=source,
                    recipe=recipe.fingerprint(),
                    rel_paths=[o.rel_path for o in fresh],
                )
                reconcile.forget_documents(conn, source, gone)
                lexical.change_stats(
                    conn, source, before, lexical.documents_share(conn, source, touched)
                )
            written.update((o.rel_path, o) for o in fresh)

        def changed(stats: engine.EngineStats) -> None:
            write_documents(forget_gone=stats.deleted != deletions[0])
            deletions[0] = stats.deleted
            if recipe.embed:
                # Vectors follow each change the engine reports (rows still being
                # written are embedded at the next change, or the next ingest).
                embedding.sync(conn, source, recipe.embed)
            if on_change is None:
                return
            # Of what it processed, the documents failing now: an added page
            # can be a failed one; a page fixed since is not (its outcome is
            # newer than its raise, which record_raised would have dropped),
            # nor one deleted since (gone as gone_documents tells it).
            processed = ledger.processed
            causes = {
                **{r: c for r, c in ledger.raised.items() if r not in processed},
                **{r: o.error for r, o in processed.items() if o.error},
            }
            causes = {rel: c for rel, c in causes.items() if (root_path / rel).is_file()}
            # A link out of the root is skipped, as the batch walk skips it,
            # not a failed document (issue 42).
            skipped = {rel for rel, cause in causes.items() if cause == files.OUTSIDE_ROOT}
            failing = len(causes) - len(skipped)
            counts = (stats.added, stats.reprocessed, stats.deleted, failing, len(skipped))
            if counts != shown[-1]:
                shown.append(counts)
                notes = [f"{failing} failed"] if failing else []
                notes += [f"{len(skipped)} skipped"] if skipped else []
                on_change(
                    f"live: {stats.added} added, {stats.reprocessed} changed, "
                    f"{stats.deleted} removed since the watch began"
                    + (f" ({', '.join(notes)})" if notes else "")
                )
            for rel_path, cause in sorted(
                {**ledger.raised, **{r: o.error for r, o in processed.items() if o.error}}.items()
            ):
                if rel_path not in seen_failures:
                    seen_failures.add(rel_path)
                    kind = "skipped" if cause == files.OUTSIDE_ROOT else "failed"
                    on_change(f"{kind}: {rel_path}: {cause}")

        # Ctrl-C or SIGTERM ends the watch (flow/source/engine.py); outside the
        # main thread, a KeyboardInterrupt or a cancellation does. A full disk
        # raises through here: nothing more is written, the state stays
        # distrusted (the source shown unfinished) and the lock is given back.
        with contextlib.suppress(KeyboardInterrupt, asyncio.CancelledError):
            engine.run_on_own_loop(
                engine.run_live(
                    database_url=db.url,
                    root=root_path,
                    state_dir=state_dir,
                    source=source,
                    recipe=recipe,
                    run=ledger,
                    on_change=changed,
                    on_stop=on_stop,
                    # Space, and the lock's connection (its rows are written on
                    # it at each change): a database that stops or restarts
                    # under the watch ends it in one line, exit 3, within
                    # seconds, instead of a watch that stays silent (issue 42).
                    alive=_alive_check(db, conn, disks, run="watch", shared=True),
                )
            )
        write_documents(forget_gone=True)
        state.stamp(conn, source, state_dir)


def backfill(
    *,
    source: str | None = None,
    embed: bool | None = None,
    embed_model: str | None = None,
    embed_long_input: str | None = None,
    database_url: str | None = None,
    data_dir: Path | None = None,
    full_reprocess: bool = False,
    lock_wait: float = lock.DEFAULT_WAIT_SECONDS,
    progress: ProgressFn | None = None,
    **recipe_changes: Any,
) -> list[IngestReport]:
    """Re-process the documents of a source (default: every source) under the
    recipe it was last ingested with, changed by `recipe_changes` and the
    embedding options, as `ingest` takes them (flow/source/settings.py), and
    with the heading index of the code that runs now. Files are only read.
    Every document whose rows were made by another recipe is re-processed;
    when the recipe is the same, nothing is (pass `full_reprocess` to force
    it). A model change re-embeds every chunk."""
    told = settings.Told(recipe_changes, embed, embed_model, embed_long_input)
    told.check("backfill")
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
        settings.resolve(record.recipe, told)  # a bad option refuses before any run
        if not record.root.is_dir():
            raise UsageError(
                f"the folder of source {record.source!r}, {record.root}, is gone; "
                f"ingest its new location with --source {record.source}"
            )
        reports.append(
            ingest(
                record.root,
                source=record.source,
                database_url=db.url,
                data_dir=db.data_dir,
                full_reprocess=full_reprocess,
                lock_wait=lock_wait,
                progress=progress,
                lock_purpose="backfill",
                embed=embed,
                embed_model=embed_model,
                embed_long_input=embed_long_input,
                **recipe_changes,
            )
        )
    return reports


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


# A server that stops answering (a black-holed host) is lost too: not waited
# for forever.
ALIVE_TIMEOUT_SECONDS = 30.0


def _alive_check(
    db: database.Database,
    conn: Connection,
    disks: tuple[space.Watched, ...],
    *,
    run: str = "run",
    shared: bool = False,
) -> engine.AliveFn:
    """Raises when a disk the run writes is nearly full, or the connection
    holding the source's lock is gone (and the lock with it): the engine then
    stops the run instead of retrying its writes. Space first: an embedded
    server whose WAL could not grow is gone because its disk is full.
    `shared`: the connection also writes the run's rows (a watch's, at each
    change), so the check's statement can land inside one of their
    transactions: only a lost connection counts then."""

    def alive() -> None:
        space.check(disks, started=True, run=run)
        try:
            conn.execute("SELECT 1", timeout=ALIVE_TIMEOUT_SECONDS)
        except connection.Error as exc:
            if database.is_connection_loss(exc) or conn.closed:
                raise database.lost(db.url, exc) from None
            if not shared:
                raise

    return alive
