"""Migration 0010 (embed_text composed in the database): a database at 0009
with rows upgrades in place, keeps every embed_text, and then composes
exactly what the rows used to carry (`mdchunks.heading_index.embed_text`)."""

from __future__ import annotations

import asyncio

import asyncpg
import mdchunks
import psycopg
import pytest
from cocoindex.connectors import postgres
from mdchunks.db import migrate
from mdchunks.heading_index import embed_text
from mdchunks.plugin import target as plugin
from mdchunks.plugin.rows import CHUNKS_TABLE, ChunkRow

from benchmarks.row_cost import migrate_through

# (position, text, heading path, breadcrumb, table header)
_CHUNKS = [
    (0, "A preamble.", [], None, None),
    (1, "Strings are stored on the heap.", ["Strings"], "Strings", None),
    (2, "| b | 2 |", ["Strings", "Table"], "Strings > Table", "| k | v |\n|---|---|"),
    (3, "| c | 3 |", [], None, "| k | v |\n|---|---|"),
    (4, "Blank parts only.", [" "], "", None),
]
_INSERT = (
    "INSERT INTO content_chunks (id, source, rel_path, position, char_start, char_end, text, "
    "heading_text, heading_level, heading_path, breadcrumb, recipe{extra}) VALUES "
    "(gen_random_uuid(), 'docs', %s, %s, 0, %s, %s, %s, %s, %s, %s, 'r'{values}) RETURNING id"
)


def _insert(conn: psycopg.Connection, rel_path: str, *, old_writer: bool) -> dict[int, object]:
    """One row per chunk, as the writer before 0010 (embed_text) or after it
    (table_header) sends it."""
    ids = {}
    extra, values = (", embed_text", ", %s") if old_writer else (", table_header", ", %s")
    for position, text, path, breadcrumb, header in _CHUNKS:
        sent = embed_text(breadcrumb, text, header) if old_writer else header
        (row_id,) = conn.execute(
            _INSERT.format(extra=extra, values=values),
            [
                rel_path,
                position,
                len(text),
                text,
                path[-1] if path else None,
                len(path) or None,
                path,
                breadcrumb,
                sent,
            ],
        ).fetchone() or (None,)
        ids[position] = row_id
    return ids


def _embed_texts(conn: psycopg.Connection, ids: dict[int, object]) -> dict[int, str]:
    found = {}
    for position, row_id in ids.items():
        row = conn.execute("SELECT c.embed_text FROM content_chunks c WHERE id = %s", [row_id])
        found[position] = str(row.fetchone()[0])  # type: ignore[index]
    return found


def test_a_database_at_0009_with_rows_upgrades_in_place(database_url: str) -> None:
    migrate_through(database_url, "0009")
    expected = {p: embed_text(b, t, h) for p, t, _, b, h in _CHUNKS}
    with psycopg.connect(database_url, autocommit=True) as conn:
        old_ids = _insert(conn, "old.md", old_writer=True)
        assert _embed_texts(conn, old_ids) == expected

    applied = migrate.apply(database_url, through="0013").applied
    assert [m for m in applied if m.startswith("0010")]

    with psycopg.connect(database_url, autocommit=True) as conn:
        # The old rows keep their embed texts; table_header is unknown (NULL).
        assert _embed_texts(conn, old_ids) == expected
        assert conn.execute(
            "SELECT count(*) FROM content_chunks WHERE table_header IS NOT NULL"
        ).fetchone() == (0,)
        # New rows send table_header; the trigger composes what the rows carried.
        new_ids = _insert(conn, "new.md", old_writer=False)
        assert _embed_texts(conn, new_ids) == expected
        # A writer's own embed_text is overwritten; cocoindex's upsert of an old
        # row (the whole row again, table_header now) composes the same text.
        conn.execute(
            "UPDATE content_chunks SET embed_text = 'bogus', table_header = %s WHERE id = %s",
            [_CHUNKS[2][4], old_ids[2]],
        )
        assert _embed_texts(conn, old_ids) == expected
        trigger = conn.execute(
            "SELECT p.proname FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid "
            "WHERE t.tgrelid = 'content_chunks'::regclass AND NOT t.tgisinternal"
        ).fetchall()
    assert trigger == [("mdchunks_chunk_columns",)]

    # Migration 0014 drops the stored column: the header rows an old row (the
    # last, never written again) stored in its embed_text become its
    # table_header, so it reads the same.
    assert migrate.apply(database_url, through="0014").applied == ("0014_embed_text_computed",)
    with psycopg.connect(database_url, autocommit=True) as conn:
        headers = conn.execute(
            "SELECT table_header FROM content_chunks WHERE id = %s", [old_ids[3]]
        ).fetchone()
        assert headers == (_CHUNKS[3][4],)
        assert _embed_texts(conn, old_ids) == expected
        assert _embed_texts(conn, new_ids) == expected


def test_0010_applies_after_a_hosts_upgrade_sql_ran_first(database_url: str) -> None:
    # A host ran chunk_table_upgrade_sql before the next `mdchunks ingest`
    # migrated: here on content_chunks itself, so the column, the function and
    # the trigger 0010 makes are all there already.
    migrate_through(database_url, "0009")
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute(mdchunks.chunk_table_upgrade_sql(CHUNKS_TABLE))
    assert [m for m in migrate.apply(database_url).applied if m.startswith("0010")]
    with psycopg.connect(database_url, autocommit=True) as conn:
        ids = _insert(conn, "new.md", old_writer=False)
        assert _embed_texts(conn, ids) == {p: embed_text(b, t, h) for p, t, _, b, h in _CHUNKS}


def test_mounting_content_chunks_before_0010_asks_for_the_migrations(database_url: str) -> None:
    migrate_through(database_url, "0009")

    async def check() -> None:
        schema = await postgres.TableSchema.from_class(ChunkRow, primary_key=["id"])
        pool = await asyncpg.create_pool(database_url, min_size=1, max_size=1)
        try:
            await plugin._check_columns(pool, CHUNKS_TABLE, None, schema.columns)
        finally:
            await pool.close()

    with pytest.raises(plugin.ChunkTableMismatch) as refused:
        asyncio.run(check())
    assert str(refused.value) == (
        'table "content_chunks" lacks the column(s) table_header, section_ids, title, '
        "unsearched that its rows write: "
        "the database is not migrated yet (run `mdchunks migrate`)"
    )
