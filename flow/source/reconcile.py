"""After each run, the source's rows equal exactly what the run declared.

cocoindex's memo says which documents a run processes; their rows are
ours to write. This step, in one transaction on the connection that holds
the source's lock, first writes the row of every document the run processed
(`mdchunks_documents`, from the run's ledger) and the chunk and section rows
the ledger still holds (the rest were written in batches as the engine ran,
flow/source/writes.py), then removes every row no document row declares:

- document rows of documents not in this run's listing, or of another recipe
  (left by lost engine state or a crash);
- chunk rows of documents whose processing raised this run (a failed
  component writes nothing, its old rows are still there; a failed document
  keeps none);
- every chunk row not declared by its document's row: another recipe, a
  document that is gone or failed, a position at or beyond the document's
  chunk count (a document that shrank): this is what deletes the rows of
  documents that are gone or shrank;
- the same for section rows, by their ordinal and the document row's
  section count.

How a document's rows are known even when cocoindex skipped it as unchanged:
its `mdchunks_documents` row, written when it was last processed, says how
many chunks it has (and its failure, if any), so the table itself says what
every present document's rows are; no file is re-read and no memo is
consulted. On a no-op run of the 7,425-file tldr corpus this is an insert of
nothing, three DELETEs that find nothing and one check query.

Why the rows are written by us and not declared to cocoindex as targets:
flow/source/writes.py. The price is a window: the engine commits a
document's memo before its rows and its document row are written. A run
killed in between would leave memos of rows never written; so every run
marks the source's engine state untrusted before the engine starts and
trusted again only after this step (flow/source/state.py): the run after a
crash re-processes every document.

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

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from mdchunks.db.connection import Connection
from mdchunks.db.queries import QUERIES
from mdchunks.retrieval import lexical_stats
from mdchunks.source import writes
from mdchunks.source.ledger import Processed

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
    refused: dict[str, str]  # rel_path -> cause: the database refused its rows


def begin(conn: Connection, source: str) -> RunWindow:
    """Take the counts the report needs before the run starts."""
    return RunWindow(start_xid=_next_xid(conn), rows_before=_rows_per_document(conn, source))


def rows_written(conn: Connection, source: str, window: RunWindow) -> int:
    span = _next_xid(conn) - window.start_xid
    row = conn.execute(
        QUERIES["rows_written_since"],
        {"source": source, "start_xid": window.start_xid % _XID_MODULUS, "span": span},
    ).fetchone()
    return int(row[0]) if row else 0


def rows_deleted(conn: Connection, source: str, window: RunWindow) -> int:
    after = _rows_per_document(conn, source)
    return sum(max(n - after.get(rel_path, 0), 0) for rel_path, n in window.rows_before.items())


def _rows_per_document(conn: Connection, source: str) -> dict[str, int]:
    return {
        str(rel_path): int(n)
        for rel_path, n in conn.execute(QUERIES["rows_per_document"], {"source": source})
    }


def reconcile(
    conn: Connection,
    *,
    source: str,
    recipe: str,
    mounted: list[str],
    raised: list[str],
    processed: Iterable[Processed],
    rows: Mapping[str, writes.Encoded] | None = None,
    stats_of: str | None = None,
) -> Reconciled:
    """`rows`: the chunk and section rows the run has not written yet
    (rel_path -> rows). A document whose rows the database refuses fails
    alone (`Reconciled.refused`): its document row keeps the cause.
    `stats_of`: the source whose BM25 statistics follow the rows written and
    deleted here, in the same transaction (the written documents' share
    before and after, the deleted rows' share as they go)."""
    params: dict[str, object] = {
        "source": source,
        "recipe": recipe,
        "mounted": mounted,
        "failed": raised,
        "rel_paths": None,  # reconcile_sections: every document's
    }
    with conn.transaction():
        refused = writes.write(conn, rows or {}, stats_of=stats_of)
        outcomes = [
            o.refused(refused[o.rel_path]) if o.rel_path in refused else o for o in processed
        ]
        record_documents(conn, source=source, recipe=recipe, processed=outcomes)
        documents = conn.execute(QUERIES["reconcile_documents"], params).rowcount
        chunks = sum(
            _delete_chunks(conn, QUERIES[name], params, stats_of)
            for name in ("reconcile_failed_chunks", "reconcile_chunks")
        )
        conn.execute(QUERIES["reconcile_failed_sections"], params)
        conn.execute(QUERIES["reconcile_sections"], params)
    missing = tuple(row[0] for row in conn.execute(QUERIES["documents_missing_rows"], params))
    return Reconciled(
        documents_deleted=documents, chunks_deleted=chunks, missing=missing, refused=refused
    )


def _delete_chunks(
    conn: Connection, delete: str, params: Mapping[str, object], stats_of: str | None
) -> int:
    """Run `delete` (of chunk rows); with `stats_of`, the deleted rows' share
    leaves that source's BM25 statistics. Returns the rows deleted."""
    if stats_of is None:
        return conn.execute(delete, params).rowcount
    gone = lexical_stats.share_of(conn.execute(*lexical_stats.deleting(delete, params)).fetchone())
    lexical_stats.change_stats(conn, stats_of, gone, lexical_stats.NO_ROWS)
    return gone.totals[0]


def record_documents(
    conn: Connection, *, source: str, recipe: str, processed: Iterable[Processed]
) -> None:
    """Write (or update) the document row of each processed document."""
    outcomes = list(processed)
    if not outcomes:
        return
    conn.execute(
        QUERIES["record_documents"],
        {
            "source": source,
            "recipe": recipe,
            "rel_paths": [o.rel_path for o in outcomes],
            "content_hashes": [o.content_hash for o in outcomes],
            "sizes": [o.size_bytes for o in outcomes],
            "chunks": [o.chunks for o in outcomes],
            "errors": [o.error for o in outcomes],
            "merges": [o.merges for o in outcomes],
            "truncations": [o.breadcrumb_truncations for o in outcomes],
            "sections": [o.sections for o in outcomes],
            "formats": [o.source_format for o in outcomes],
            "notes": [o.import_note for o in outcomes],
            "titles": [o.title for o in outcomes],
        },
    )


def gone_documents(conn: Connection, source: str, root: Path) -> list[str]:
    """Live mode: the documents whose files are no longer under `root`."""
    rel_paths = [
        str(row[0])
        for row in conn.execute(
            "SELECT rel_path FROM mdchunks_documents WHERE source = %s", [source]
        )
    ]
    return [rel for rel in rel_paths if not (root / rel).is_file()]


def forget_documents(conn: Connection, source: str, gone: list[str]) -> int:
    """Live mode: delete the document rows, chunk rows and section rows of
    `gone` (`gone_documents`)."""
    if not gone:
        return 0
    writes.forget(conn, source=source, rel_paths=gone)
    return conn.execute(
        "DELETE FROM mdchunks_documents WHERE source = %s AND rel_path = ANY(%s)", [source, gone]
    ).rowcount


def recorded_failures(conn: Connection, source: str) -> dict[str, str]:
    """rel_path -> error of the source's document rows that carry a failure."""
    return {
        str(rel_path): str(error)
        for rel_path, error in conn.execute(QUERIES["failed_documents"], {"source": source})
    }


def _next_xid(conn: Connection) -> int:
    row = conn.execute("SELECT pg_snapshot_xmax(pg_current_snapshot())::text::bigint").fetchone()
    assert row is not None
    return int(row[0])
