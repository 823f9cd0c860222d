"""mdchunks' cocoindex app, its database and its CLI.

The only package that knows cocoindex and Postgres. The Python API:

    import flow
    report = flow.ingest("docs/", source="docs")          # -> IngestReport
    flow.backfill(source="docs", headings=True)            # -> [IngestReport]
    flow.status(); flow.search("ownership rules", k=5); flow.drop("docs")
"""

import os

# Before anything imports cocoindex: no telemetry. cocoindex otherwise sends
# usage events to a network host (also when the variable is set to 0), and
# mdchunks promises no network access beyond the database.
os.environ["COCOINDEX_DISABLE_USAGE_TRACKING"] = "1"
# cocoindex's engine logs (Rust, read once at import) at warning level and up
# by default, with colours: retries of writes while the database is away, for
# one. mdchunks reports what matters itself, in one line; RUST_LOG=warn (or
# info, debug) shows the engine's own log again.
os.environ.setdefault("RUST_LOG", "error")

from flow.api import (
    DropReport,
    Failure,
    IngestReport,
    SearchHit,
    SourceStatus,
    StatusReport,
    backfill,
    drop,
    ingest,
    migrate_database,
    search,
    status,
)
from flow.errors import MdchunksError
from flow.rows import NAMESPACE, ChunkRow, DocumentRow, chunk_id
from flow.settings import Recipe

__all__ = [
    "NAMESPACE",
    "ChunkRow",
    "DocumentRow",
    "DropReport",
    "Failure",
    "IngestReport",
    "MdchunksError",
    "Recipe",
    "SearchHit",
    "SourceStatus",
    "StatusReport",
    "backfill",
    "chunk_id",
    "drop",
    "ingest",
    "migrate_database",
    "search",
    "status",
]
