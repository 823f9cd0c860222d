"""A session for reading a chunk table, and the one-line answers to a read
of the wrong place: nothing ingested, no schema, no such table, no such
source, no rows (every read of the Python API opens one; docs/layout.md).

Ours needs the schema; a host's table (flow/retrieval/tables.py) needs only
to be there, and its rows are its sources.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from mdchunks.db import database, migrate
from mdchunks.db.connection import Connection
from mdchunks.errors import MdchunksError, UsageError
from mdchunks.retrieval.tables import ChunkTable, require_table


@contextlib.contextmanager
def reading(
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
        require_schema(db)
    with database.connect(db.url) as conn:
        if not table.managed:
            require_table(conn, table, db.display)
        if source is not None:
            require_source(conn, source, table)
        require_chunks(conn, db, source, table)
        yield conn, db


def require_schema(db: database.Database) -> None:
    todo = migrate.pending(db.url)
    if len(todo) == len(migrate.migration_ids()):  # mdchunks never wrote here
        raise UsageError(f"nothing ingested yet in {db.display}: `mdchunks ingest PATH` first")
    if todo:
        raise MdchunksError(
            f"the database {db.display} has no mdchunks schema yet (pending migrations: "
            f"{', '.join(todo)}); run `mdchunks migrate` or `mdchunks ingest` first"
        )


def require_source(
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


def require_chunks(
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
