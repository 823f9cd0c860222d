"""mdchunks as a plugin: heading-aware chunks in a table of your own, with a column of your own.

COCOINDEX_DB=./word_count_state DATABASE_URL=postgresql://user:pass@host/db \
    python examples/chunks_with_word_count.py DOCS

(COCOINDEX_DB: the folder where cocoindex keeps this app's engine state;
DATABASE_URL: yours, or the one `mdchunks migrate --data-dir DIR` prints.)
"""

from __future__ import annotations

import os
import pathlib
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass

import asyncpg
import cocoindex as coco
import mdchunks
from cocoindex.connectors import localfs, postgres
from cocoindex.resources.file import FileLike, PatternFilePathMatcher
from mdchunks import split_markdown  # at the top: cocoindex then knows its logic

DATABASE_URL = os.environ.get("DATABASE_URL") or sys.exit("set DATABASE_URL (module docstring)")
TABLE_NAME = "doc_chunks"
PG_DB = coco.ContextKey[asyncpg.Pool]("word_count_db")
DOCS = coco.ContextKey[pathlib.Path]("word_count_docs")  # file paths are relative to it


@dataclass(frozen=True, slots=True)
class DocChunk(mdchunks.ChunkRow):
    word_count: int = 0


@coco.lifespan
async def coco_lifespan(builder: coco.EnvironmentBuilder) -> AsyncIterator[None]:
    async with asyncpg.create_pool(DATABASE_URL) as pool:
        if await pool.fetchval("SELECT to_regclass($1)", TABLE_NAME) is None:  # our "migration"
            await pool.execute(mdchunks.chunk_table_sql(TABLE_NAME))
            await pool.execute(f"ALTER TABLE {TABLE_NAME} ADD COLUMN word_count bigint")
        builder.provide(PG_DB, pool)
        builder.provide(DOCS, pathlib.Path(sys.argv[1]).resolve())
        yield


@coco.fn(memo=True)
async def process_file(
    file: FileLike, table: postgres.TableTarget[DocChunk], options: mdchunks.ChunkOptions
) -> None:
    rel_path = file.file_path.path.as_posix()  # a file it refuses is named in the report
    text = mdchunks.document_text(await file.read(), rel_path=rel_path)
    for row in mdchunks.chunk_rows(
        split_markdown(text, options),
        source="docs",
        rel_path=rel_path,
        recipe=mdchunks.recipe_of(options),
        row_type=DocChunk,
        extra=lambda chunk: {"word_count": len(chunk.text.split())},
    ):
        table.declare_row(row=row)


@coco.fn
async def app_main(options: mdchunks.ChunkOptions) -> None:
    table = await mdchunks.mount_chunk_table(PG_DB, TABLE_NAME, DocChunk)
    matcher = PatternFilePathMatcher(included_patterns=["**/*.md"])
    files = localfs.walk_dir(DOCS, recursive=True, path_matcher=matcher)
    await coco.mount_each(process_file, files.items(), table, options)


# The options are an argument, so changing them re-processes every file.
app = coco.App(coco.AppConfig(name="ChunksWithWordCount"), app_main, mdchunks.ChunkOptions())

if __name__ == "__main__":
    app.update_blocking()
