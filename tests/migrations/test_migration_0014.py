"""Migration 0014 (embed_text computed): content_chunks no longer stores
embed_text; `c.embed_text` reads the same string from the row, for rows
written before the migration and after it."""

from __future__ import annotations

import psycopg
from mdchunks.db import migrate
from mdchunks.heading_index import embed_text

from benchmarks.row_cost import migrate_through

_INSERT = (
    "INSERT INTO content_chunks (id, source, rel_path, position, char_start, char_end, text, "
    "heading_text, heading_level, heading_path, breadcrumb, table_header, recipe) VALUES "
    "(gen_random_uuid(), 's', %s, 0, 0, %s, %s, %s, %s, %s, %s, %s, 'r')"
)
_VECTORS = "SELECT rel_path, search_vector::text FROM content_chunks"
ROWS = (  # rel_path, text, heading path, breadcrumb, table_header
    ("headed.md", "Strings live on the heap.", ["Book", "Strings"], "Book > Strings", None),
    ("plain.md", "No heading above.", [], None, None),
    ("table.md", "| 3 | c |", ["Data"], "Data", "| n | x |\n|---|---|"),
)


def _insert(conn: psycopg.Connection) -> None:
    for rel_path, text, path, breadcrumb, header in ROWS:
        heading = path[-1] if path else None
        level = len(path) if path else None
        conn.execute(_INSERT, [rel_path, len(text), text, heading, level, path, breadcrumb, header])


def _embed_texts(conn: psycopg.Connection) -> dict[str, str]:
    rows = conn.execute("SELECT rel_path, c.embed_text FROM content_chunks c").fetchall()
    return {str(rel): str(value) for rel, value in rows}


def test_embed_text_reads_the_same_before_and_after(database_url: str) -> None:
    migrate_through(database_url, "0013")
    with psycopg.connect(database_url, autocommit=True) as conn:
        _insert(conn)
        before = _embed_texts(conn)
        vectors = conn.execute(_VECTORS).fetchall()
    assert before == {rel: embed_text(b, text, header) for rel, text, _, b, header in ROWS}

    assert [m for m in migrate.apply(database_url).applied if m.startswith("0014")]

    with psycopg.connect(database_url, autocommit=True) as conn:
        columns = conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'content_chunks'"
        ).fetchall()
        assert ("embed_text",) not in columns
        assert _embed_texts(conn) == before
        # The trigger still sets the search columns, of rows written now too.
        conn.execute("DELETE FROM content_chunks")
        _insert(conn)
        assert _embed_texts(conn) == before
        again = conn.execute(_VECTORS).fetchall()
    assert sorted(again) == sorted(vectors)
