"""BM25's stored side: the statistics every write keeps, and the index searched.

Per source (migrations 0008, 0009, 0019): N, the heading and text lengths
and the shortest chunk, each lexeme's df and (for sources of
`BOUNDS_MIN_CHUNKS` or more) the most positions it has in one chunk, and the
top chunks of its common lexemes. `refresh_stats` recounts them from the
rows; a write moves them by its documents' share instead (`documents_share`
before and after, `change_statements` between, in the write's transaction);
`top_lists` reads the top chunks back for the ranking (flow/retrieval/lexical.py).
Beside them, the search vectors' GIN index: rebuilt in one pass after a run
that wrote most of the table (`rebuild_index`), and the server BM25 index
engines this server offers (`index_engines`, detection only).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import asyncpg
from mdchunks.db.connection import Connection
from mdchunks.db.queries import QUERIES
from mdchunks.retrieval.lexical_terms import DEFAULT_PARAMS, FIRST_ROUND_CHUNKS, Term

# MaxScore's bounds (per-lexeme maxima) are kept for sources of this many
# chunks or more: reading every position costs the refresh about twice as
# much as the document frequencies alone (docs/search.md), and below this a
# query scores a few thousand chunks at most anyway. Exact either way.
BOUNDS_MIN_CHUNKS = 10_000


# Top chunks per common lexeme (migration 0019, docs/search.md): kept for
# the lexemes of at least TOP_MIN_DF chunks (a rarer one is scored whole in
# one round), TOP_CHUNKS of them each, with the sources that keep bounds.
TOP_MIN_DF = FIRST_ROUND_CHUNKS
TOP_CHUNKS = 1000
TOP_SEGMENT = 250  # read this many at a time


def refresh_stats(conn: Connection, source: str) -> None:
    """Recompute the source's BM25 statistics from its rows, in one transaction."""
    values = {"source": source}
    with conn.transaction():
        row = conn.execute(QUERIES["search_stats_refresh"], values).fetchone()
        assert row is not None  # an aggregate always returns a row
        conn.execute(QUERIES["search_terms_clear"], values)
        conn.execute(QUERIES["search_top_clear"], values)
        chunks, heading_length, text_length, min_heading, min_text = row
        if chunks < BOUNDS_MIN_CHUNKS:
            conn.execute(QUERIES["search_terms_refresh_df"], values)
            return
        conn.execute(QUERIES["search_terms_refresh"], values)
        params = DEFAULT_PARAMS
        w, k1, b = params.heading_weight, params.k1, params.b
        avgdl = (w * heading_length + text_length) / chunks
        shortest = k1 * (1 - b + b * (w * min_heading + min_text) / avgdl)
        conn.execute(
            QUERIES["search_top_refresh"],
            {
                **values,
                "avgdl": avgdl,
                "size": TOP_CHUNKS,
                "segment": TOP_SEGMENT,
                "min_df": TOP_MIN_DF,
                "single": 1 / (1 + shortest),
                "k1": k1,
                "b": b,
                "w": w,
            },
        )


@dataclass(frozen=True, slots=True)
class DocumentsShare:
    """What some chunk rows add to their source's BM25 statistics: (chunks,
    heading length, text length, shortest heading, shortest text), and each
    lexeme's (df, most positions in one chunk, most in one heading)."""

    totals: tuple[int, int, int, int | None, int | None]
    terms: dict[str, tuple[int, int, int]]
    languages: tuple[str | None, ...] = ()
    # The documents whose rows these are (none: rows deleted, counted as they went).
    rel_paths: tuple[str, ...] = ()


NO_ROWS = DocumentsShare((0, 0, 0, None, None), {})

# A statement and its parameters, for our connection or the engine's pool.
Statement = tuple[str, Mapping[str, object]]


def share_statement(rows: str, params: Mapping[str, object]) -> Statement:
    """The statement counting the share of the rows `rows` yields (a SELECT
    of some chunk rows, or a DELETE that returns them): `share_of` reads its row."""
    return f"WITH shared AS ({rows})\n{QUERIES['search_share']}", params


def documents_statement(source: str, rel_paths: Sequence[str]) -> Statement:
    """The statement counting the share of `rel_paths`' rows."""
    return share_statement(
        QUERIES["search_rows_of_documents"], {"source": source, "rel_paths": list(rel_paths)}
    )


def deleting(delete: str, params: Mapping[str, object]) -> Statement:
    """`delete` (a DELETE of chunk rows) counting the share of the rows it
    deletes: that share leaves the statistics (`change_statements(..., gone,
    NO_ROWS)`), and its first total is the rows deleted."""
    return share_statement(
        f"{delete}\nRETURNING search_vector, search_heading_length, search_text_length, language",
        params,
    )


def share_of(row: Sequence[object] | None, rel_paths: Sequence[str] = ()) -> DocumentsShare:
    """The share a `share_statement` counted (its one row: three JSON texts),
    of the rows of `rel_paths` if it counted documents' rows."""
    assert row is not None  # an aggregate always returns a row
    totals, languages, terms = (json.loads(str(value)) for value in row)
    chunks, heading, text, shortest_heading, shortest_text = totals
    return DocumentsShare(
        (int(chunks), int(heading), int(text), shortest_heading, shortest_text),
        {
            str(lexeme): (int(df), int(most), int(most_in_heading))
            for lexeme, df, most, most_in_heading in terms
        },
        tuple(None if tag is None else str(tag) for tag in languages),
        tuple(rel_paths),
    )


def documents_share(conn: Connection, source: str, rel_paths: Sequence[str]) -> DocumentsShare:
    """The share of `rel_paths`' rows, counted as `refresh_stats` counts all."""
    return share_of(conn.execute(*documents_statement(source, rel_paths)).fetchone(), rel_paths)


def change_statements(
    source: str, before: DocumentsShare, after: DocumentsShare
) -> list[Statement]:
    """The statements that move the source's statistics from `before` to
    `after` (some rows' shares, taken around their writes in the caller's
    transaction): df, N and the lengths stay exact; the per-lexeme maxima and
    the shortest lengths are bounds that loosen, never tighten (MaxScore stays
    exact), until the next `refresh_stats`. A change costs its rows, not the
    source's."""
    if (before.totals, before.terms) == (after.totals, after.terms) and set(after.languages) <= set(
        before.languages
    ):
        return []  # rows that say the same (a no-op run's deletes find none)
    (n0, h0, t0, _, _), (n1, h1, t1, shortest_heading, shortest_text) = before.totals, after.totals
    statements: list[Statement] = [
        (
            QUERIES["search_stats_add"],
            {
                "source": source,
                "chunks": n1 - n0,
                "heading_length": h1 - h0,
                "text_length": t1 - t0,
                "min_heading_length": shortest_heading,
                "min_text_length": shortest_text,
                "languages": list(after.languages),
            },
        )
    ]
    deltas = []
    for lexeme in before.terms.keys() | after.terms.keys():
        df0 = before.terms.get(lexeme, (0, 0, 0))[0]
        df1, most, most_in_heading = after.terms.get(lexeme, (0, 0, 0))
        if df1 != df0 or lexeme in after.terms:
            deltas.append(
                {
                    "lexeme": lexeme,
                    "df": df1 - df0,
                    "most": most,
                    "most_in_heading": most_in_heading,
                }
            )
    if deltas:
        values: dict[str, object] = {"source": source, "deltas": json.dumps(deltas)}
        statements.append((QUERIES["search_terms_drop"], values))
        statements.append((QUERIES["search_terms_add"], values))
    if after.rel_paths and after.totals[0]:
        params = DEFAULT_PARAMS
        top = {"k1": params.k1, "b": params.b, "w": params.heading_weight}
        statements.append(
            (QUERIES["search_top_add"], {**top, "source": source, "rel_paths": [*after.rel_paths]})
        )
    return statements


def change_stats(
    conn: Connection, source: str, before: DocumentsShare, after: DocumentsShare
) -> None:
    """Run `change_statements` on `conn` (in the caller's transaction)."""
    for statement, params in change_statements(source, before, after):
        conn.execute(statement, params)


# A run that wrote at least this many chunk rows, and at least half of the
# table's, rebuilds the search vectors' GIN index (`rebuild_index`).
REBUILD_MIN_ROWS = 5000


def rebuild_index(conn: Connection, written: int) -> bool:
    """After a run that wrote most of the table (a first ingest, a backfill):
    the GIN index built again in one pass. Filled through its pending list,
    it keeps the pages each flush left: 9.8 MB for the rust-book x36's
    29,520 chunks, 8.4 MB rebuilt, in 0.65 s (docs/benchmarks.md, Disk).
    A plain REINDEX: rolled back whole if the run is killed (a concurrent
    one would leave an invalid index behind); searches wait for it. It
    needs the table's owner: a role with DML rights only keeps the index
    as it is, and so does a server that refuses it (a lock or statement
    timeout of yours): it is only smaller rebuilt. Returns whether it was."""
    if written < REBUILD_MIN_ROWS:
        return False
    row = conn.execute(QUERIES["chunk_rows_total"]).fetchone()
    if row is None or written * 2 < int(row[0]):
        return False
    try:
        conn.execute(QUERIES["search_index_rebuild"])
    except (
        asyncpg.exceptions.InsufficientPrivilegeError,
        asyncpg.exceptions.LockNotAvailableError,
        asyncpg.exceptions.QueryCanceledError,
        asyncpg.exceptions.DeadlockDetectedError,
    ):
        return False
    return True


# Server BM25 index engines (docs/search.md, "Which engine at which size"):
# ParadeDB's pg_search, Tiger Data's pg_textsearch, VectorChord-BM25.
INDEX_ENGINES = ("pg_search", "pg_textsearch", "vchord_bm25")


def index_engines(conn: Connection) -> dict[str, bool]:
    """The BM25 index engines this server offers: extension -> installed in
    this database. Detection only: search uses our BM25 whatever it finds
    (none was on a server we could measure; docs/search.md)."""
    rows = conn.execute(QUERIES["search_index_engines"], {"names": list(INDEX_ENGINES)})
    return {str(name): bool(installed) for name, installed in rows}


def stored_chunks(conn: Connection, source: str) -> int | None:
    """N of the source's stored statistics, None if it has none."""
    row = conn.execute(
        "SELECT chunks FROM mdchunks_search_stats WHERE source = %s", [source]
    ).fetchone()
    return None if row is None else int(row[0])


def has_stats(conn: Connection, source: str) -> bool:
    row = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM mdchunks_search_stats WHERE source = %s)", [source]
    ).fetchone()
    return bool(row and row[0])


@dataclass(frozen=True, slots=True)
class TopChunks:
    """A term's top chunks over the searched sources (ids as text), best
    first, in segments; `floors[j]`: the most tf / (tf + K) any chunk not in
    segments 0..j can have, at the searched mean length."""

    segments: tuple[tuple[str, ...], ...]
    floors: tuple[float, ...]


def top_lists(
    conn: Connection, terms: Sequence[Term], *, source: str | None, avgdl: float
) -> dict[str, TopChunks]:
    """The top chunks of the terms every searched source that holds them
    keeps a list of (migration 0019): the sources' segments side by side, the
    largest of their floors, each raised by its drift (search_top_lists)."""
    rows: dict[str, list[tuple[Any, ...]]] = {}
    for row in conn.execute(
        QUERIES["search_top_lists"],
        {"lexemes": [term.lexeme for term in terms], "source": source, "avgdl": avgdl},
    ):
        rows.setdefault(str(row[0]), []).append(tuple(row[1:]))
    found = {}
    for lexeme, lists in rows.items():
        if any(chunks is None for chunks, *_ in lists):
            continue  # a source keeps no list of it: no top chunks
        count = max([1] + [-(-len(chunks) // TOP_SEGMENT) for chunks, *_ in lists])
        segments, floors = [], []
        for j in range(count):
            segment: list[str] = []
            for chunks, _, _, added, _ in lists:
                segment += map(str, chunks[j * TOP_SEGMENT : (j + 1) * TOP_SEGMENT])
                if j == 0:
                    segment += map(str, added)
            segments.append(tuple(segment))
            floors.append(
                max(
                    (float(steps[j]) if j < len(steps) else float(floor)) * float(drift)
                    for _, steps, floor, _, drift in lists
                )
            )
        found[lexeme] = TopChunks(tuple(segments), tuple(floors))
    return found
