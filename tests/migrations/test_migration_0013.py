"""Migration 0013 (words written as tags): rows indexed before it lost
`<KeepAlive>` and every word after it on the line; the migration indexes
them anew, as a fresh row is, and drops their source's stale BM25 statistics."""

from __future__ import annotations

import psycopg
from mdchunks.db import migrate

from benchmarks.row_cost import migrate_through

TAGGED = "Use <KeepAlive> and <keep-alive> or </Listing> to cache it."
PLAIN = "Strings are stored on the heap."
_INSERT = (
    "INSERT INTO content_chunks (id, source, rel_path, position, char_start, char_end, text, "
    "heading_text, heading_level, heading_path, breadcrumb, recipe) VALUES "
    "(gen_random_uuid(), %s, %s, 0, 0, %s, %s, 'Cache', 1, '{Cache}', 'Cache', 'r')"
)


def _vectors(conn: psycopg.Connection) -> dict[str, tuple[str, int]]:
    rows = conn.execute(
        "SELECT rel_path, search_vector::text, search_text_length FROM content_chunks"
    ).fetchall()
    return {str(rel): (str(vector), int(length)) for rel, vector, length in rows}


def test_rows_indexed_before_find_their_tags_after(database_url: str) -> None:
    migrate_through(database_url, "0012")
    with psycopg.connect(database_url, autocommit=True) as conn:
        for source, rel_path, text in (("vue", "a.md", TAGGED), ("rust", "b.md", PLAIN)):
            conn.execute(_INSERT, [source, rel_path, len(text), text])
            conn.execute(
                "INSERT INTO mdchunks_search_stats (source, chunks, heading_length, text_length) "
                "VALUES (%s, 1, 1, 1)",
                [source],
            )
        before = _vectors(conn)
    assert "keepal" not in before["a.md"][0]  # the parser took the tag and the rest

    assert [m for m in migrate.apply(database_url).applied if m.startswith("0013")]

    with psycopg.connect(database_url, autocommit=True) as conn:
        after = _vectors(conn)
        for word in ("'keepal'", "'keep-al'", "'aliv'", "'list'", "'cach'"):
            assert word in after["a.md"][0], after
        assert after["b.md"] == before["b.md"]  # no `<`: untouched
        # A row written now is indexed the same way (the trigger agrees).
        conn.execute(_INSERT, ["vue", "c.md", len(TAGGED), TAGGED])
        assert _vectors(conn)["c.md"] == after["a.md"]
        stats = conn.execute("SELECT source FROM mdchunks_search_stats").fetchall()
    assert stats == [("rust",)]  # vue's counts changed: searched live until the next ingest
