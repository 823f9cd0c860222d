"""`backfill`: the sources of a database run again, under the code that runs now.

Each source of the catalog (or the one named) is ingested again from the
folder it was last ingested from, with the recipe it was last ingested
with, changed as asked (flow/source/settings.py): one `ingest` per source
(flow/source/run.py), each with its own report. A bad option, an unknown
source or a folder gone refuse before the run they concern.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mdchunks.db import database, migrate
from mdchunks.errors import UsageError
from mdchunks.source import catalog, engine, lock, run, settings
from mdchunks.source.reports import IngestReport


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
    progress: engine.ProgressFn | None = None,
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
            run.ingest(
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
