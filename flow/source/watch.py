"""The live watch: a source's rows kept current while its files change.

`watch` runs after an `ingest` has caught the source up (the CLI's `--live`):
cocoindex's live walk then processes each change as it happens, and each
change it reports is written here (document, chunk and section rows, BM25's
statistics moved by the documents it touches, vectors), until Ctrl-C or
SIGTERM. The source's state is trusted again only when the watch ends
cleanly; the phases of a batch run are flow/source/run.py's.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path

from mdchunks.db import database, migrate
from mdchunks.errors import UsageError
from mdchunks.plugin.recipe import Recipe
from mdchunks.retrieval import embedding, lexical_stats
from mdchunks.source import (
    catalog,
    engine,
    files,
    listing,
    lock,
    reconcile,
    settings,
    space,
    state,
    watchdog,
    writes,
)
from mdchunks.source.bounded import DEFAULT_LIMITS, DocumentLimits
from mdchunks.source.ledger import Processed, RunLedger


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
        if not lexical_stats.has_stats(conn, source):  # the changes below move them
            lexical_stats.refresh_stats(conn, source)
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
                before = lexical_stats.documents_share(conn, source, touched)
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
                lexical_stats.change_stats(
                    conn, source, before, lexical_stats.documents_share(conn, source, touched)
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
                    alive=watchdog.alive_check(db, conn, disks, run="watch", shared=True),
                )
            )
        write_documents(forget_gone=True)
        state.stamp(conn, source, state_dir)
