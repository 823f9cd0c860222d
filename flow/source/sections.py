"""Section rows written from the run's ledger, in batches (docs/sections.md).

The per-document function encodes its document's section rows (one JSON
fragment, off the event loop) and leaves them in the run's ledger; whenever
the rows waiting there reach `BATCH_ROWS`, a batch run writes them in one
statement over the engine's pool, so a big run never holds all its sections;
the reconciliation writes what is left, in its transaction, before it prunes
the rows no document row declares. A live watch writes them at each change
the engine reports, before pruning the changed documents' stale rows.

Why not a second cocoindex target next to the chunk rows: it cost the engine
a second tracked target state per document (rust-book 1.18x, tldr 1.14x the
first ingest without sections, docs/benchmarks.md).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

import asyncpg
from mdchunks.db.connection import Connection, bind
from mdchunks.db.queries import QUERIES
from mdchunks.plugin.rows import SectionRow

# Rows per statement in a batch run: a few documents' worth of memory, and
# few enough round trips that their cost does not show (~2 statements for
# the rust-book, ~4 for 600 tldr pages).
BATCH_ROWS = 2000


def encode(rows: Iterable[SectionRow]) -> str:
    """One document's rows as JSON objects joined by commas (no brackets), so
    the fragments of many documents join into one array."""
    # One dumps call per document, its brackets dropped.
    return json.dumps(
        [
            {
                "id": str(row.id),
                "source": row.source,
                "rel_path": row.rel_path,
                "ordinal": row.ordinal,
                "heading_text": row.heading_text,
                "heading_level": row.heading_level,
                "heading_path": row.heading_path,
                "breadcrumb": row.breadcrumb,
                "char_start": row.char_start,
                "heading_end": row.heading_end,
                "body_end": row.body_end,
                "char_end": row.char_end,
                "start_line": row.start_line,
                "heading_end_line": row.heading_end_line,
                "body_end_line": row.body_end_line,
                "end_line": row.end_line,
                "parent_section_id": (
                    None if row.parent_section_id is None else str(row.parent_section_id)
                ),
                "gap_starts": row.gap_starts,
                "gap_texts": row.gap_texts,
                "recipe": row.recipe,
            }
            for row in rows
        ],
        ensure_ascii=False,
        separators=(",", ":"),
    )[1:-1]


def _params(fragments: Sequence[str]) -> dict[str, str]:
    return {"rows": "[" + ",".join(f for f in fragments if f) + "]"}


async def write_batch(pool: asyncpg.Pool, fragments: Sequence[str]) -> None:
    """Write the rows of `fragments` (from `encode`) over the engine's pool."""
    if any(fragments):
        query, args = bind(QUERIES["write_sections"], _params(fragments))
        await pool.execute(query, *args)


def write(conn: Connection, fragments: Sequence[str]) -> None:
    """Write the rows of `fragments` (from `encode`) on `conn`."""
    if any(fragments):
        conn.execute(QUERIES["write_sections"], _params(fragments))


def prune(conn: Connection, *, source: str, recipe: str, rel_paths: list[str]) -> None:
    """Delete the section rows of `rel_paths` their document rows do not declare."""
    if rel_paths:
        conn.execute(
            QUERIES["reconcile_sections"],
            {"source": source, "recipe": recipe, "rel_paths": rel_paths},
        )


def forget(conn: Connection, *, source: str, rel_paths: list[str]) -> None:
    """Delete every section row of `rel_paths` (documents that are gone)."""
    if rel_paths:
        conn.execute(QUERIES["forget_sections"], {"source": source, "rel_paths": rel_paths})
