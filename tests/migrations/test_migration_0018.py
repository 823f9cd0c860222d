"""Migration 0018 (languages): rows indexed before it held a run of CJK text
as one word, which no query's word inside it matched; the migration indexes
them anew in character bigrams, as a fresh row is, drops their source's
stale BM25 statistics; a host table whose trigger is ours and that has no
language column keeps working."""

from __future__ import annotations

import psycopg
from mdchunks.db import migrate

from benchmarks.row_cost import migrate_through

CJK = "如何添加站点地图"
PLAIN = "Strings are stored on the heap."
_INSERT = (
    "INSERT INTO content_chunks (id, source, rel_path, position, char_start, char_end, text, "
    "heading_text, heading_level, heading_path, breadcrumb, recipe) VALUES "
    "(gen_random_uuid(), %s, %s, 0, 0, %s, %s, %s, 1, ARRAY[%s], %s, 'r')"
)


def _vectors(conn: psycopg.Connection) -> dict[str, str]:
    rows = conn.execute("SELECT rel_path, search_vector::text FROM content_chunks").fetchall()
    return {str(rel): str(vector) for rel, vector in rows}


def test_cjk_rows_indexed_before_are_cut_into_bigrams_after(database_url: str) -> None:
    migrate_through(database_url, "0017")
    with psycopg.connect(database_url, autocommit=True) as conn:
        for source, rel_path, text, heading in (
            ("zh", "a.md", CJK, "网站地图"),
            ("rust", "b.md", PLAIN, "Strings"),
        ):
            conn.execute(_INSERT, [source, rel_path, len(text), text, *[heading] * 3])
            conn.execute(
                "INSERT INTO mdchunks_search_stats (source, chunks, heading_length, text_length) "
                "VALUES (%s, 1, 1, 1)",
                [source],
            )
        conn.execute(
            "CREATE TABLE host_chunks (LIKE content_chunks INCLUDING DEFAULTS, embed_text text)"
        )
        conn.execute(
            "CREATE TRIGGER host_chunks_chunk_columns BEFORE INSERT OR UPDATE ON host_chunks "
            "FOR EACH ROW EXECUTE FUNCTION mdchunks_chunk_columns()"
        )
        before = _vectors(conn)
    assert f"'{CJK}'" in before["a.md"]  # the whole run was one word

    assert [m for m in migrate.apply(database_url).applied if m.startswith("0018")]

    with psycopg.connect(database_url, autocommit=True) as conn:
        after = _vectors(conn)
        for bigram in ("'站点'", "'点地'", "'地图'", "'网站'"):
            assert bigram in after["a.md"], after
        assert after["b.md"] == before["b.md"]  # no CJK: untouched
        # A row written now is indexed the same way (the trigger agrees).
        conn.execute(_INSERT, ["zh", "c.md", len(CJK), CJK, *["网站地图"] * 3])
        assert _vectors(conn)["c.md"] == after["a.md"]
        stats = conn.execute("SELECT source FROM mdchunks_search_stats").fetchall()
        # The host table's rows go through the new trigger, language and all.
        conn.execute(
            _INSERT.replace("content_chunks", "host_chunks"),
            ["h", "d.md", len(CJK), CJK, *["网站地图"] * 3],
        )
        host = conn.execute("SELECT search_vector::text FROM host_chunks").fetchone()
    assert stats == [("rust",)]  # zh's counts changed: searched live until the next ingest
    # (It has no language column: the trigger reads it as JSON, NULL here.)
    assert host is not None and "'站点'" in host[0]
