"""After each run, the source's rows equal exactly what the run declared.

cocoindex keeps rows current as long as its engine state matches the
database. What it cannot know about, this step removes, in one transaction on
the connection that holds the source's lock:

- document rows of documents not in this run's listing, or of another recipe
  (left by lost engine state or a crash);
- chunk rows of documents whose processing raised this run (cocoindex keeps
  a failed component's old rows; a failed document keeps none);
- every chunk row not declared by its document's row: another recipe, a
  document that is gone or failed, a position at or beyond the document's
  chunk count (a document that shrank while the state was lost).

How a document's rows are known even when cocoindex skipped it as unchanged:
the per-document function declares, next to the chunk rows, one
`mdchunks_documents` row saying how many chunks the document has (and its
failure, if any). cocoindex keeps that row exactly as long as the chunk rows,
so the table itself says what every present document's rows are; no file is
re-read and no memo is consulted. On a no-op run of the 7,425-file tldr
corpus this is three DELETEs that find nothing and one check query.

Then a check: every listed document that did not fail must have its document
row and all its chunk rows. It can only fail when the database was changed
behind the engine's back (restored, rows deleted by hand, a state directory
that describes another database); the caller then re-processes everything
once (`full_reprocess`, which rewrites every row) and checks again.

Counting: rows written are rows whose xmin falls in the run's window of
transaction ids; rows deleted come from per-document counts taken before the
run (ids are a function of the position, so a document that had b rows and
has a lost max(b - a, 0)). The counts are kept in this process, not in a
temporary table, so a run needs no right beyond DML on the tables.
"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg

from flow.queries import QUERIES

_XID_MODULUS = 2**32


@dataclass(frozen=True, slots=True)
class RunWindow:
    start_xid: int  # 64-bit id of the first transaction the run may have used
    rows_before: dict[str, int]  # rel_path -> chunk rows before the run


@dataclass(frozen=True, slots=True)
class Reconciled:
    documents_deleted: int
    chunks_deleted: int
    missing: tuple[str, ...]  # listed documents still missing rows


def begin(conn: psycopg.Connection, source: str) -> RunWindow:
    """Take the counts the report needs before the run starts."""
    return RunWindow(start_xid=_next_xid(conn), rows_before=_rows_per_document(conn, source))


def rows_written(conn: psycopg.Connection, source: str, window: RunWindow) -> int:
    span = _next_xid(conn) - window.start_xid
    row = conn.execute(
        QUERIES["rows_written_since"],
        {"source": source, "start_xid": window.start_xid % _XID_MODULUS, "span": span},
    ).fetchone()
    return int(row[0]) if row else 0


def rows_deleted(conn: psycopg.Connection, source: str, window: RunWindow) -> int:
    after = _rows_per_document(conn, source)
    return sum(max(n - after.get(rel_path, 0), 0) for rel_path, n in window.rows_before.items())


def _rows_per_document(conn: psycopg.Connection, source: str) -> dict[str, int]:
    return {
        str(rel_path): int(n)
        for rel_path, n in conn.execute(QUERIES["rows_per_document"], {"source": source})
    }


def reconcile(
    conn: psycopg.Connection,
    *,
    source: str,
    recipe: str,
    mounted: list[str],
    raised: list[str],
) -> Reconciled:
    params = {"source": source, "recipe": recipe, "mounted": mounted, "failed": raised}
    with conn.transaction():
        documents = conn.execute(QUERIES["reconcile_documents"], params).rowcount
        chunks = conn.execute(QUERIES["reconcile_failed_chunks"], params).rowcount
        chunks += conn.execute(QUERIES["reconcile_chunks"], params).rowcount
    missing = tuple(row[0] for row in conn.execute(QUERIES["documents_missing_rows"], params))
    return Reconciled(documents_deleted=documents, chunks_deleted=chunks, missing=missing)


def recorded_failures(conn: psycopg.Connection, source: str) -> dict[str, str]:
    """rel_path -> error of the source's document rows that carry a failure."""
    return {
        str(rel_path): str(error)
        for rel_path, error in conn.execute(QUERIES["failed_documents"], {"source": source})
    }


def _next_xid(conn: psycopg.Connection) -> int:
    row = conn.execute("SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint").fetchone()
    assert row is not None
    return int(row[0])
