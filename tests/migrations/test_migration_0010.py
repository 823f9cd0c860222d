"""Migration 0010 (embed_text composed in the database): a database at 0009
with rows upgrades in place, keeps every embed_text, and then composes
exactly what the rows used to carry (`mdchunks.heading_index.embed_text`)."""

from __future__ import annotations

import psycopg
from mdchunks import migrate
from mdchunks.heading_index import embed_text
from mdchunks.heading_index.breadcrumb import table_header_of

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
        row = conn.execute("SELECT embed_text FROM content_chunks WHERE id = %s", [row_id])
        found[position] = str(row.fetchone()[0])  # type: ignore[index]
    return found


def test_a_database_at_0009_with_rows_upgrades_in_place(database_url: str) -> None:
    migrate_through(database_url, "0009")
    expected = {p: embed_text(b, t, h) for p, t, _, b, h in _CHUNKS}
    with psycopg.connect(database_url, autocommit=True) as conn:
        old_ids = _insert(conn, "old.md", old_writer=True)
        assert _embed_texts(conn, old_ids) == expected

    assert [m for m in migrate.apply(database_url).applied if m.startswith("0010")]

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


def test_the_table_header_a_row_sends_is_the_one_its_embed_text_holds() -> None:
    for _, text, _, breadcrumb, header in _CHUNKS:
        assert table_header_of(embed_text(breadcrumb, text, header), breadcrumb, text) == header
