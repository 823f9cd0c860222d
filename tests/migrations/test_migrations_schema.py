"""The migrations are the schema: they create exactly what the flow writes,
and applying them again, or twice at once, changes nothing."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest
from cocoindex.connectors.postgres import TableSchema
from mdchunks import ChunkRow, DocumentRow, SectionRow
from mdchunks.db import migrate
from mdchunks.plugin.rows import CHUNKS_TABLE, DOCUMENTS_TABLE, SECTIONS_TABLE, TRIGGER_COLUMNS

ROOT = Path(__file__).resolve().parents[2]

# information_schema spells types the long way.
_TYPE_NAMES = {
    "text[]": "ARRAY text",
    "uuid[]": "ARRAY uuid",
    "integer[]": "ARRAY int4",
    "bigint": "bigint",
    "integer": "integer",
    "smallint": "smallint",
    "text": "text",
    "uuid": "uuid",
}


def _columns(url: str, table: str) -> dict[str, tuple[str, bool]]:
    """name -> (type, nullable) of the columns a writer sets (generated ones and
    those the search trigger sets left out)."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            """
            SELECT column_name, data_type, udt_name, is_nullable, is_generated
            FROM information_schema.columns
            WHERE table_schema = current_schema() AND table_name = %s
            """,
            [table],
        ).fetchall()
    columns = {}
    for name, data_type, udt_name, nullable, generated in rows:
        if generated == "ALWAYS" or name in TRIGGER_COLUMNS:
            continue
        shown = f"ARRAY {udt_name.lstrip('_')}" if data_type == "ARRAY" else data_type
        columns[name] = (shown, nullable == "YES")
    return columns


def _row_type_columns(row_type: type[Any], primary_key: list[str]) -> dict[str, tuple[str, bool]]:
    schema = asyncio.run(TableSchema.from_class(row_type, primary_key=primary_key))
    return {
        name: (_TYPE_NAMES[column.type], column.nullable and name not in primary_key)
        for name, column in schema.columns.items()
    }


@pytest.mark.parametrize(
    ("table", "row_type", "primary_key"),
    [
        (CHUNKS_TABLE, ChunkRow, ["id"]),
        (SECTIONS_TABLE, SectionRow, ["id"]),
        (DOCUMENTS_TABLE, DocumentRow, ["source", "rel_path"]),
    ],
)
def test_migrations_create_exactly_the_columns_the_row_types_write(
    database_url: str, table: str, row_type: type[Any], primary_key: list[str]
) -> None:
    migrate.apply(database_url)

    assert _columns(database_url, table) == _row_type_columns(row_type, primary_key)


def test_the_design_column_names_and_constraints_are_in_place(database_url: str) -> None:
    migrate.apply(database_url)
    with psycopg.connect(database_url) as conn:
        checks = {
            name
            for (name,) in conn.execute(
                "SELECT conname FROM pg_constraint WHERE conrelid = 'content_chunks'::regclass"
            )
        }
        indexes = {
            name
            for (name,) in conn.execute(
                "SELECT indexname FROM pg_indexes WHERE tablename = 'content_chunks'"
            )
        }
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute(
                "INSERT INTO content_chunks (id, source, rel_path, position, char_start, char_end, "
                "text, heading_text, heading_level, heading_path, recipe) VALUES "
                "(gen_random_uuid(), 's', 'a.md', 0, 0, 1, 'x', 'H', 2, '{}', 'r')"
            )
    assert {
        "content_chunks_pkey",
        "content_chunks_headings_together_check",
        "content_chunks_heading_level_check",
        "content_chunks_span_check",
        "content_chunks_position_check",
    } <= checks
    assert {
        "content_chunks_parent_chunk_id_idx",
        "content_chunks_search_vector_idx",
        "content_chunks_document_idx",  # migration 0016: a document's rows, deduplicated
    } <= indexes


def test_migrating_twice_is_a_no_op(database_url: str) -> None:
    first = migrate.apply(database_url)
    second = migrate.apply(database_url)

    assert first.applied == migrate.migration_ids() and first.already == ()
    assert second.applied == () and second.already == migrate.migration_ids()
    assert migrate.pending(database_url) == ()


def test_migrating_twice_at_once_applies_each_migration_once(database_url: str) -> None:
    command = [sys.executable, "-m", "mdchunks", "migrate", "--database-url", database_url]
    runs = [
        subprocess.Popen(
            command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=120) for run in runs]

    assert [run.returncode for run in runs] == [0, 0], outputs
    said = sorted(out.split(" ", 1)[0] for out, _ in outputs)
    assert said == ["applied", "schema"], outputs  # one applied them, the other found them
    with psycopg.connect(database_url) as conn:
        (count,) = conn.execute(
            f"SELECT count(*) FROM {migrate.BOOKKEEPING_SCHEMA}.{migrate.MIGRATION_TABLE}"
        ).fetchone() or (0,)
    assert count == len(migrate.migration_ids())
    assert migrate.pending(database_url) == ()
