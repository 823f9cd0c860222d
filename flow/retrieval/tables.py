"""Which chunk table a read goes to: ours (`content_chunks`, which the
migrations make) or a host's own, made by `chunk_table_sql` (docs/plugin.md)
and filled by the host's cocoindex app (`--table NAME`, `--pg-schema NAME`).

The statements that read chunks name the table `{chunks}` (flow/db/queries.sql);
`ChunkTable.query` fills it in with the quoted identifier, never with text
from anywhere else. A host table has only the chunk rows: no source rows, no
BM25 statistics (counted live from its rows, flow/retrieval/lexical_terms.py) and
no stored vectors, so it is searched by BM25 alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from mdchunks.db.connection import Connection, quote_ident
from mdchunks.db.queries import QUERIES
from mdchunks.errors import UsageError

CHUNKS_TABLE = "content_chunks"


@dataclass(frozen=True, slots=True)
class ChunkTable:
    name: str = CHUNKS_TABLE
    pg_schema: str | None = None

    @property
    def managed(self) -> bool:
        """Is it the table mdchunks' migrations made (found by the search path),
        with the source rows, statistics and vectors beside it?"""
        return self.name == CHUNKS_TABLE and self.pg_schema is None

    @property
    def identifier(self) -> str:
        if self.managed:
            return CHUNKS_TABLE  # as every other statement names it: the search path's
        if self.pg_schema is None:
            return quote_ident(self.name)
        return quote_ident(self.pg_schema, self.name)

    @property
    def shown(self) -> str:
        return self.name if self.pg_schema is None else f"{self.pg_schema}.{self.name}"

    def query(self, name: str) -> str:
        """The named query `name` over this table."""
        return QUERIES[name].format(chunks=self.identifier)


MANAGED = ChunkTable()


def chunk_table(table: str | None = None, pg_schema: str | None = None) -> ChunkTable:
    """The table `--table`/`--pg-schema` name (ours when neither is given)."""
    for option, value in (("--table", table), ("--pg-schema", pg_schema)):
        if value is not None and (not value.strip() or "\0" in value):
            raise UsageError(f"{option}: the name is empty or holds a NUL character")
    return ChunkTable(CHUNKS_TABLE if table is None else table, pg_schema)


# What the reads of a host's table use of its columns (the `{chunks}` queries
# of flow/db/queries.sql and rankings.hits_sql): every table chunk_table_sql
# has made since migration 0018 has them (an older one is upgraded by
# chunk_table_upgrade_sql).
# fmt: off
READ_COLUMNS = (
    "id", "source", "rel_path", "position", "char_start", "char_end", "text",
    "heading_text", "heading_path", "breadcrumb", "parent_chunk_id", "search_vector",
    "search_heading_length", "search_text_length", "start_line", "end_line",
    "title", "unsearched", "language",
)
# fmt: on
# Columns only a section table has: a host that names its section table.
_SECTION_COLUMNS = {"heading_end", "body_end", "parent_section_id"}


def require_table(conn: Connection, table: ChunkTable, where: str) -> None:
    """One line when a host table is not there (or this role cannot see it),
    or is not a chunk table (a section table, say) or lacks a column the
    reads use."""
    row = conn.execute("SELECT to_regclass(%s)::oid", [table.identifier]).fetchone()
    if row is None or row[0] is None:
        raise UsageError(
            f"no table {table.shown!r} in {where} (a host's table is made by "
            "mdchunks.chunk_table_sql; check --table and --pg-schema)"
        )
    present = {
        str(name)
        for (name,) in conn.execute(
            "SELECT attname FROM pg_attribute WHERE attrelid = %s AND attnum > 0 "
            "AND NOT attisdropped",
            [row[0]],
        )
    }
    missing = [column for column in READ_COLUMNS if column not in present]
    if not missing:
        return
    if present >= _SECTION_COLUMNS:
        raise UsageError(
            f"table {table.shown!r} is a section table (made by mdchunks.section_table_sql): "
            "--table names the chunk table (made by mdchunks.chunk_table_sql), whose "
            "chunks the sections are rebuilt from"
        )
    if {"text", "heading_path", "search_vector"} <= present:
        # The first chunk_table_sql's shape: no line columns (and maybe its
        # search lengths as generated columns).
        named = repr(table.name) + (
            "" if table.pg_schema is None else f", pg_schema_name={table.pg_schema!r}"
        )
        raise UsageError(
            f"table {table.shown!r} lacks the column(s) {', '.join(missing)}: it was made by "
            "an older mdchunks.chunk_table_sql (to bring it up to date: run the SQL of "
            f"mdchunks.chunk_table_upgrade_sql({named}); docs/plugin.md)"
        )
    raise UsageError(
        f"table {table.shown!r} is no chunk table of mdchunks: it lacks the column(s) "
        f"{', '.join(missing)} (a host's table is made by mdchunks.chunk_table_sql)"
    )
