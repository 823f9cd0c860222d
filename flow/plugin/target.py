"""The plugin face's cocoindex pieces: the chunk and section tables as a host's
targets, their SQL, and a per-file function for `coco.mount_each`
(docs/plugin.md, docs/sections.md).

The table is the host's (or our migrations'): cocoindex writes and deletes
rows only (`ManagedBy.USER`), never CREATE, ALTER or DROP. The host creates it
with `chunk_table_sql(name)` in its own migrations, with columns of its own
added after; its row type is a dataclass with `ChunkRow`'s fields and its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources
from typing import Any

import asyncpg
import cocoindex as coco
from cocoindex.connectorkits.target import ManagedBy
from cocoindex.connectors import postgres
from cocoindex.resources.file import FileLike
from mdchunks.errors import MdchunksError
from mdchunks.heading_index import dialect_for
from mdchunks.heading_index.options import ChunkOptions, options_of
from mdchunks.plugin.chunking import chunk_markdown
from mdchunks.plugin.documents import document_text
from mdchunks.plugin.recipe import Recipe
from mdchunks.plugin.rows import (
    CHUNKS_TABLE,
    SECTIONS_TABLE,
    ChunkRow,
    SectionRow,
    chunk_rows,
    section_rows,
)

_DEFAULT = ChunkOptions()


def recipe_of(options: ChunkOptions) -> str:
    """The `recipe` value of rows made with `options`: the fingerprint the
    `mdchunks` command stores for the same options (docs/recipe.md)."""
    return Recipe(
        **{name: getattr(options, name) for name, _, _ in options_of(ChunkOptions)}
    ).fingerprint()


@coco.fn(memo=True)
async def process_markdown_file(
    file: FileLike[Any],
    table: postgres.TableTarget[ChunkRow],
    source: str,
    options: ChunkOptions = _DEFAULT,
    sections: postgres.TableTarget[SectionRow] | None = None,
) -> None:
    """One markdown file -> its chunk rows in `table` (`mount_chunk_table`), for
    `coco.mount_each(process_markdown_file, files.items(), table, source)`;
    with `sections` (`mount_section_table`), its section rows too.

    Memoized on the file and the arguments; `split_markdown` carries our
    logic's versions, so an upgrade that changes chunks re-processes the file.
    The text is the file's bytes as UTF-8 with one leading BOM removed (the
    offsets count in it); a file that is not valid UTF-8 or holds a NUL byte
    (which cocoindex would strip, shifting every offset) raises
    `DocumentProblem` naming the file, which cocoindex reports as its failure.
    """
    rel_path = file.file_path.path.as_posix()
    text = document_text(await file.read(), rel_path=rel_path)  # its problem names the file
    chunking = chunk_markdown(text, options, dialect=dialect_for(rel_path))
    recipe = recipe_of(options)
    for row in chunk_rows(chunking.chunks, source=source, rel_path=rel_path, recipe=recipe):
        table.declare_row(row=row)
    if sections is not None:
        for section in section_rows(
            chunking.sections, source=source, rel_path=rel_path, recipe=recipe
        ):
            sections.declare_row(row=section)


async def mount_chunk_table(
    db: coco.ContextKey[asyncpg.Pool],
    table_name: str = CHUNKS_TABLE,
    row_type: type[Any] = ChunkRow,
    *,
    pg_schema_name: str | None = None,
) -> postgres.TableTarget[Any]:
    """Mount the chunk table `table_name` (created beforehand, see
    `chunk_table_sql`) on the host's own pool key; rows of `row_type` keyed by
    `id`. Call it from the host's app main, as `postgres.mount_table_target`."""
    return await _mount(db, table_name, row_type, pg_schema_name)


async def mount_section_table(
    db: coco.ContextKey[asyncpg.Pool],
    table_name: str = SECTIONS_TABLE,
    row_type: type[Any] = SectionRow,
    *,
    pg_schema_name: str | None = None,
) -> postgres.TableTarget[Any]:
    """Mount the section table `table_name` (created beforehand, see
    `section_table_sql`) on the host's own pool key, as `mount_chunk_table`."""
    return await _mount(db, table_name, row_type, pg_schema_name)


async def _mount(
    db: coco.ContextKey[asyncpg.Pool],
    table_name: str,
    row_type: type[Any],
    pg_schema_name: str | None,
) -> postgres.TableTarget[Any]:
    """A table our migrations (or the host's) made, as a target whose rows are
    `row_type`s keyed by `id`; cocoindex writes and deletes rows only."""
    schema = await postgres.TableSchema.from_class(row_type, primary_key=["id"])
    await _check_columns(coco.use_context(db), table_name, pg_schema_name, schema.columns)
    return await postgres.mount_table_target(
        db, table_name, schema, pg_schema_name=pg_schema_name, managed_by=ManagedBy.USER
    )


class ChunkTableMismatch(MdchunksError):
    """The host's chunk table lacks columns its row type writes."""


async def _check_columns(
    pool: asyncpg.Pool,
    table_name: str,
    pg_schema_name: str | None,
    columns: Mapping[str, postgres.ColumnDef],
) -> None:
    """One clear line, before any document is processed, when the table lacks
    a column the rows write: a table made by an older `chunk_table_sql` has no
    `table_header` (and maybe no `start_line`/`end_line`); otherwise every
    document fails to write, each with the driver's message. A table not
    there yet is left to cocoindex."""
    qualified = _identifier(table_name)
    if pg_schema_name is not None:
        qualified = f"{_identifier(pg_schema_name)}.{qualified}"
    relation = await pool.fetchval("SELECT to_regclass($1)::oid", qualified)
    if relation is None:
        return
    rows = await pool.fetch(
        "SELECT attname FROM pg_attribute WHERE attrelid = $1 AND attnum > 0 AND NOT attisdropped",
        relation,
    )
    present = {str(row[0]) for row in rows}
    missing = [column for column in columns if column not in present]
    if not missing:
        return
    lacks = f"table {qualified} lacks the column(s) {', '.join(missing)} that its rows write"
    ours = table_name in (CHUNKS_TABLE, SECTIONS_TABLE) and pg_schema_name is None
    upgraded = {"table_header", "section_ids", "title", "unsearched"} & set(missing)
    if ours and upgraded:
        raise ChunkTableMismatch(
            f"{lacks}: the database is not migrated yet (run `mdchunks migrate`)"
        )
    if upgraded:
        # An older chunk_table_sql's (or section_table_sql's) table: its
        # trigger or its checks need changing too, which adding the columns
        # alone would not do.
        kind = "chunk" if "position" in columns else "section"
        named = repr(table_name) + (
            "" if pg_schema_name is None else f", pg_schema_name={pg_schema_name!r}"
        )
        raise ChunkTableMismatch(
            f"{lacks}: it was made by an older {kind}_table_sql (to bring it up to date: "
            f"run the SQL of mdchunks.{kind}_table_upgrade_sql({named}))"
        )
    # The row type's own column types make the statement that adds them.
    added = ", ".join(f"ADD COLUMN {name} {columns[name].type}" for name in missing)
    raise ChunkTableMismatch(f"{lacks} (to add them: ALTER TABLE {qualified} {added})")


def _identifier(name: str) -> str:
    if not name or "\0" in name:
        raise ValueError(f"invalid SQL name {name!r}")
    return '"' + name.replace('"', '""') + '"'


# The longest suffix our constraint and index names add to the table's name,
# within PostgreSQL's 63-byte identifiers (a longer name would be truncated,
# and two of them could collide).
_LONGEST_SUFFIX = len("_headings_together_check")


def chunk_table_sql(table_name: str = CHUNKS_TABLE, *, pg_schema_name: str | None = None) -> str:
    """The DDL of a chunk table named `table_name`: columns, constraints, the
    search column and its indexes, as our migrations make `content_chunks`.
    The trigger function that sets the search columns and embed_text is
    created in the same schema unless it is there already (its owner may be
    another role)."""
    return _table_sql("chunk_table.sql", table_name, pg_schema_name)


def chunk_table_upgrade_sql(table_name: str, *, pg_schema_name: str | None = None) -> str:
    """The DDL that brings a chunk table made by the `chunk_table_sql` of the
    release before migration 0010 (search columns set by a trigger, migration
    0009) up to date: `table_header` (and the line columns and their check,
    if it lacks them), and the trigger that also composes `embed_text`. Rows keep their
    values; running it twice changes nothing more. A table from before 0009
    (generated search columns) needs those columns made plain first, as
    migration 0009 does."""
    return _table_sql("chunk_table_upgrade.sql", table_name, pg_schema_name)


def section_table_sql(
    table_name: str = SECTIONS_TABLE, *, pg_schema_name: str | None = None
) -> str:
    """The DDL of a section table named `table_name`: columns, constraints and
    index, as our migrations make `content_sections` (docs/sections.md)."""
    return _section_sql("section_table.sql", table_name, pg_schema_name)


def section_table_upgrade_sql(table_name: str, *, pg_schema_name: str | None = None) -> str:
    """The DDL that brings a section table made by an older `section_table_sql`
    (before migration 0017) up to date: the `title` column and the check that
    lets a preamble's breadcrumb be the title. Rows keep their values; running
    it twice changes nothing more."""
    return _section_sql("section_table_upgrade.sql", table_name, pg_schema_name)


def _section_sql(template_name: str, table_name: str, pg_schema_name: str | None) -> str:
    table, schema = _names(table_name, pg_schema_name)
    template = resources.files("mdchunks.plugin").joinpath(template_name).read_text("utf-8")
    return template.format(table=schema + table, prefix=table_name.replace('"', '""'))


def _names(table_name: str, pg_schema_name: str | None) -> tuple[str, str]:
    """The quoted table name and the schema prefix (`"s".` or nothing)."""
    if len(table_name.encode()) + _LONGEST_SUFFIX > 63:
        raise ValueError(
            f"table name {table_name!r} is too long: at most {63 - _LONGEST_SUFFIX} bytes, "
            "so that its constraint and index names stay whole"
        )
    schema = "" if pg_schema_name is None else f"{_identifier(pg_schema_name)}."
    return _identifier(table_name), schema


def _table_sql(template_name: str, table_name: str, pg_schema_name: str | None) -> str:
    table, schema = _names(table_name, pg_schema_name)
    folder = resources.files("mdchunks.plugin")
    template = folder.joinpath("chunk_columns.sql").read_text("utf-8") + "\n"
    template += folder.joinpath(template_name).read_text("utf-8")
    prefix = table_name.replace('"', '""')
    chunk_columns = f"{schema}mdchunks_chunk_columns"

    def literal(signature: str) -> str:
        return "'" + signature.replace("'", "''") + "'"

    return template.format(
        table=schema + table,
        table_literal=literal(schema + table),
        prefix=prefix,
        lines_check_literal=literal(f"{table_name}_lines_check"),
        chunk_columns=chunk_columns,
        chunk_columns_literal=literal(f"{chunk_columns}()"),
    )
