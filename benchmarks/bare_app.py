"""The baseline: a bare cocoindex app in the upstream example's shape.

`examples/text_embedding/main.py` of cocoindex without the embedding: walk
the folder, `@coco.fn(memo=True)` per file, split with
`RecursiveSplitter(language="markdown")` at the recipe's budgets, and declare
one row per chunk into a system-managed table of its own. The rows are ours
without the heading columns (`heading_text`, `heading_level`, `heading_path`,
`parent_chunk_id`): the same uuid5 ids, source, rel_path, position, span,
text and recipe. No listing of our own, no document rows, no reconciliation,
no lock: what cocoindex alone costs for the same walk, split and write.
"""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

os.environ.setdefault("COCOINDEX_DISABLE_USAGE_TRACKING", "1")

import asyncpg
import cocoindex as coco
from cocoindex.connectors import localfs, postgres
from cocoindex.ops.text import RecursiveSplitter
from cocoindex.resources.file import FileLike, PatternFilePathMatcher
from mdchunks.plugin.recipe import Recipe

APP_NAME = "mdchunks_bench_bare"
TABLE = "bare_chunks"
NAMESPACE = uuid.UUID("fb8159f0-c42d-4e50-8a16-a15733f9b164")  # the flow's (flow/plugin/rows.py)
RECIPE = Recipe()  # the budgets only; the heading parts are not used

# Context key names are global per process: distinct from the flow's.
BARE_DB = coco.ContextKey[asyncpg.Pool]("mdchunks_bench_bare_db")
BARE_ROOT = coco.ContextKey[Path]("mdchunks_bench_bare_root")

_splitter = RecursiveSplitter()


@dataclass(frozen=True, slots=True)
class BareRow:
    id: uuid.UUID
    source: str
    rel_path: str
    position: Annotated[int, postgres.PgType("integer")]
    char_start: Annotated[int, postgres.PgType("integer")]
    char_end: Annotated[int, postgres.PgType("integer")]
    text: str
    recipe: str


@coco.fn(memo=True)
async def process_file(file: FileLike, source: str, table: postgres.TableTarget[BareRow]) -> None:
    text = await file.read_text()
    rel_path = file.file_path.path.as_posix()
    chunks = _splitter.split(
        text,
        RECIPE.chunk_size,
        min_chunk_size=RECIPE.min_chunk_size,
        chunk_overlap=RECIPE.chunk_overlap,
        language="markdown",
    )
    for position, chunk in enumerate(chunks):
        table.declare_row(
            row=BareRow(
                id=uuid.uuid5(NAMESPACE, f"chunk:{source}:{rel_path}:{position}"),
                source=source,
                rel_path=rel_path,
                position=position,
                char_start=chunk.start.char_offset,
                char_end=chunk.end.char_offset,
                text=chunk.text,
                recipe="bare",
            )
        )


@coco.fn
async def app_main(source: str) -> None:
    table = await postgres.mount_table_target(
        BARE_DB,
        TABLE,
        await postgres.TableSchema.from_class(BareRow, primary_key=["id"]),
    )
    files = localfs.walk_dir(
        BARE_ROOT,
        recursive=True,
        path_matcher=PatternFilePathMatcher(included_patterns=["**/*.md"]),
    )
    await coco.mount_each(process_file, files.items(), source, table)


@dataclass(frozen=True, slots=True)
class BareRun:
    seconds: float
    added: int
    reprocessed: int
    unchanged: int
    deleted: int
    errors: int


async def run(*, root: Path, database_url: str, state_dir: Path, source: str = "bench") -> BareRun:
    """One catch-up update, timed from the pool's creation to the last write."""
    started = time.perf_counter()
    state_dir.mkdir(parents=True, exist_ok=True)
    async with asyncpg.create_pool(database_url) as pool:
        provider = coco.ContextProvider()
        provider.provide(BARE_DB, pool)
        provider.provide(BARE_ROOT, root)
        env = coco.Environment(coco.Settings(db_path=state_dir), context_provider=provider)
        try:
            app = coco.App(coco.AppConfig(name=APP_NAME, environment=env), app_main, source)
            handle = app.update()
            await handle.result()
            stats = handle.stats()
        finally:
            env.close()
    seconds = time.perf_counter() - started
    group = stats.by_component.get(process_file.__name__) if stats else None
    if group is None:
        return BareRun(seconds, 0, 0, 0, 0, 0)
    return BareRun(
        seconds=seconds,
        added=group.num_adds,
        reprocessed=group.num_reprocesses,
        unchanged=group.num_unchanged,
        deleted=group.num_deletes,
        errors=group.num_errors,
    )


def main(argv: list[str]) -> int:
    """`python -m benchmarks.bare_app ROOT DATABASE_URL STATE_DIR`: one update,
    as a whole process (the peer stage times it like `mdchunks ingest`)."""
    import asyncio
    import json

    root, database_url, state_dir = argv
    found = asyncio.run(run(root=Path(root), database_url=database_url, state_dir=Path(state_dir)))
    print(json.dumps({"processed": found.added + found.reprocessed, "errors": found.errors}))
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
