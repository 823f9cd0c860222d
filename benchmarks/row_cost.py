"""`python -m benchmarks.row_cost`: what PostgreSQL pays to insert our rows.

    .venv/bin/python -m benchmarks.row_cost [--rust-book DIR] [--trials 5]
        [--admin-url URL] [--json OUT]

The rust-book's rows as the product makes them (`chunk_document` under the
default recipe), inserted as cocoindex's connector inserts them (one
`INSERT ... SELECT FROM unnest(arrays) ON CONFLICT (id) DO UPDATE` per 1,000
rows), into three tables on one embedded server, interleaved trial by trial:

- `bare`: the bare app's columns under a primary key (no search column);
- `0008`: `content_chunks` as migrations 0001-0008 made it (the search vector
  and the two generated BM25 lengths: three `to_tsvector` runs over each row);
- `head`: `content_chunks` as every migration makes it now.

Each trial empties the tables (TRUNCATE) and inserts every row once; it prints
the median seconds and each table's ratio to `bare`. Wall-clock on a shared
machine: read the ratios, measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import astuple, fields
from pathlib import Path
from typing import Any

import psycopg
from mdchunks.db import migrate
from mdchunks.heading_index import embed_text
from mdchunks.plugin.documents import document_text
from mdchunks.plugin.recipe import Recipe
from mdchunks.plugin.rows import ChunkRow
from mdchunks.source.app import chunk_document
from psycopg import sql

from benchmarks import corpora, postgres

BATCH = 1000  # cocoindex's rows per unnest upsert
SCHEMAS = ("bare", "0008", "head")


def rust_book_rows(root: Path) -> list[ChunkRow]:
    # Without page titles: a title-only breadcrumb (a titled page's preamble)
    # breaks the breadcrumb check of the `0008` table (migration 0017 relaxed
    # it), and every table must take the same rows. The rust-book has no
    # front matter, so its rows are the default recipe's but for `recipe`.
    recipe = Recipe(titles=False)
    rows: list[ChunkRow] = []
    for path in corpora.markdown_files(root):
        text = document_text(path.read_bytes(), recipe.invalid_utf8)
        rel_path = path.relative_to(root).as_posix()
        rows += chunk_document(text, source="bench", rel_path=rel_path, recipe=recipe).rows
    return rows


def migrate_through(url: str, last: str) -> None:
    """Migrations up to `last` only (an id or its number: "0008")."""
    migrate.apply(url, through=last)


def writable_columns(conn: psycopg.Connection, table: str) -> list[str]:
    rows = conn.execute(
        "SELECT column_name FROM information_schema.columns "
        "WHERE table_schema = current_schema() AND table_name = %s AND is_generated = 'NEVER'",
        [table],
    ).fetchall()
    return [str(name) for (name,) in rows]


def upsert_sql(table: str, columns: Sequence[str], types: dict[str, str]) -> sql.Composed:
    """cocoindex's upsert: one array per column (an array column as text
    literals, cast back per element)."""
    names = sql.SQL(", ").join(map(sql.Identifier, columns))
    arrays = sql.SQL(", ").join(
        sql.SQL("%s::text[]" if types[c].endswith("[]") else "%s::{}[]").format(sql.SQL(types[c]))
        for c in columns
    )
    selected = sql.SQL(", ").join(
        sql.SQL("r.{}::{}" if types[c].endswith("[]") else "r.{}").format(
            sql.Identifier(c), sql.SQL(types[c])
        )
        for c in columns
    )
    updates = sql.SQL(", ").join(
        sql.SQL("{} = excluded.{}").format(sql.Identifier(c), sql.Identifier(c))
        for c in columns
        if c != "id"
    )
    return sql.SQL(
        "INSERT INTO {table} ({names}) SELECT {selected} FROM unnest({arrays}) AS r({names}) "
        "ON CONFLICT (id) DO UPDATE SET {updates}"
    ).format(
        table=sql.Identifier(table), names=names, selected=selected, arrays=arrays, updates=updates
    )


def array_literal(values: Sequence[object]) -> str:
    quoted = (
        '"' + str(v).replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values
    )  # text, or the uuids of section_ids
    return "{" + ",".join(quoted) + "}"


def column_types(conn: psycopg.Connection, table: str) -> dict[str, str]:
    rows = conn.execute(
        "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a "
        "WHERE a.attrelid = %s::regclass AND a.attnum > 0 AND NOT a.attisdropped",
        [table],
    ).fetchall()
    return {str(name): str(kind) for name, kind in rows}


def insert_all(url: str, table: str, rows: Sequence[ChunkRow]) -> float:
    names = [f.name for f in fields(ChunkRow)]
    with psycopg.connect(url, autocommit=True) as conn:
        writable = writable_columns(conn, table)
        # A table from before migration 0010 gets embed_text from its writer,
        # as the writers of that time sent it.
        sends_embed_text = "embed_text" in writable and "table_header" not in writable
        if sends_embed_text:
            names.append("embed_text")
        columns = [c for c in writable if c in names]
        statement = upsert_sql(table, columns, column_types(conn, table))
        index = [names.index(c) for c in columns]
        conn.execute(sql.SQL("TRUNCATE {}").format(sql.Identifier(table)))
        conn.execute("CHECKPOINT")
        started = time.perf_counter()
        for start in range(0, len(rows), BATCH):
            batch = [
                (*astuple(row), embed_text(row.breadcrumb, row.text, row.table_header))
                if sends_embed_text
                else astuple(row)
                for row in rows[start : start + BATCH]
            ]
            arrays: list[Any] = [
                [array_literal(row[i]) if isinstance(row[i], list) else row[i] for row in batch]
                for i in index
            ]
            conn.execute(statement, arrays)
        return time.perf_counter() - started


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.row_cost")
    parser.add_argument("--rust-book", type=Path, default=corpora.RUST_BOOK)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--admin-url", help="a PostgreSQL role that may CREATE DATABASE")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    rows = rust_book_rows(args.rust_book)
    seconds: dict[str, list[float]] = {name: [] for name in SCHEMAS}
    with (
        tempfile.TemporaryDirectory(prefix="mdchunks-row-cost-") as folder,
        postgres.server(Path(folder), args.admin_url) as server,
    ):
        urls = {name: server.create(f"mdchunks_row_cost_{name}") for name in SCHEMAS}
        with psycopg.connect(urls["bare"], autocommit=True) as conn:
            conn.execute(
                "CREATE TABLE content_chunks (id uuid PRIMARY KEY, source text NOT NULL, "
                "rel_path text NOT NULL, position integer NOT NULL, char_start integer NOT NULL, "
                "char_end integer NOT NULL, text text NOT NULL, recipe text NOT NULL)"
            )
        migrate_through(urls["0008"], "0008")
        migrate.apply(urls["head"])
        for trial in range(args.trials + 1):  # the first one warms up, uncounted
            for name in SCHEMAS:
                took = insert_all(urls[name], "content_chunks", rows)
                if trial:
                    seconds[name].append(took)
        for name in SCHEMAS:
            server.drop(f"mdchunks_row_cost_{name}")
    medians = {name: statistics.median(values) for name, values in seconds.items()}
    print(f"{len(rows)} rust-book rows, median of {args.trials} trials (interleaved)")
    print("| table | seconds | rows/s | / bare |")
    print("|---|---:|---:|---:|")
    for name in SCHEMAS:
        took = medians[name]
        print(f"| {name} | {took:.3f} | {len(rows) / took:,.0f} | {took / medians['bare']:.1f}x |")
    print(f"head / 0008: {medians['head'] / medians['0008']:.2f}")
    if args.json:
        args.json.write_text(json.dumps({"rows": len(rows), "seconds": seconds}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
