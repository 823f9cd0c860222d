"""The cocoindex app: a source folder -> `content_chunks` rows.

Read top to bottom: settings, context keys, lifespan, row types, the leaf
function (one document's text -> its rows), the memoized per-document
function, the app.

Engine state and environment: each run gets an `Environment` of its own
(rather than the process-wide default one of `@coco.lifespan`), because one
process may ingest several sources into several databases (tests, the
harness), and each source's engine state must be bound to the database it
describes. The state is LMDB under
`<data dir>/state/<source>-<hash of database identity and source>/`, where
the database identity is the cluster's system identifier, the database's oid
and the `content_chunks` table's oid (flow/database.py: never a password).
Pointing the same data dir at another database, or at a re-created one,
therefore starts from an empty state: every document is processed once and
upserts rows with the same uuid5 ids. If a state does not match its database
anyway (a restored backup, rows deleted by hand), the reconciliation notices
documents with missing rows and the run re-processes everything once
(flow/reconcile.py).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import re
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg
import cocoindex as coco
from cocoindex.connectorkits.target import ManagedBy
from cocoindex.connectors import localfs, postgres
from cocoindex.ops.text import RecursiveSplitter
from cocoindex.resources.file import FileLike
from mdchunks.database import redact, scrub
from mdchunks.documents import (
    DocumentFile,
    DocumentProblem,
    DocumentTooLarge,
    LiveDocuments,
    document_text,
    one_line,
    too_large,
)
from mdchunks.errors import DatabaseUnavailable
from mdchunks.heading_index import (
    ChunkHeadings,
    StructureChunk,
    assign,
    budget_split_from,
    build_index,
    embed_text,
    render_breadcrumb,
    structure_chunks,
)
from mdchunks.ledger import Processed, RunLedger
from mdchunks.listing import matcher
from mdchunks.offload import run_off_loop
from mdchunks.rows import CHUNKS_TABLE, ChunkRow, chunk_id
from mdchunks.settings import Recipe
from mdchunks.splitting import GuardedSplitter

# -- settings -----------------------------------------------------------------

APP_NAME = "mdchunks"
POOL_MAX_SIZE = 8
# Guarded: a markdown text nested deep enough to abort the splitter is split
# as plain text (flow/splitting.py).
_SPLITTER = GuardedSplitter(RecursiveSplitter())
# The structure chunker's splitter of oversized sections: the same splitter.
_BUDGET_SPLIT = budget_split_from(_SPLITTER)
_NO_HEADINGS = ChunkHeadings(
    heading_text=None, heading_level=None, heading_path=(), parent_position=None
)

# -- context keys ---------------------------------------------------------------
# Their names are global per process and part of the targets' identity in the
# engine state (the table target is keyed by the pool's key name): never rename.

DB = coco.ContextKey[asyncpg.Pool]("mdchunks_db")
ROOT = coco.ContextKey[Path]("mdchunks_root")  # file paths (and memo keys) are relative to it
RUN = coco.ContextKey[RunLedger]("mdchunks_run")  # this run's ledger; not a memo input

# -- lifespan -----------------------------------------------------------------------


@contextlib.asynccontextmanager
async def open_environment(
    *, database_url: str, root: Path, state_dir: Path, run: RunLedger
) -> AsyncIterator[coco.Environment]:
    """The environment of one run: a pool, the root, the ledger, the state dir."""
    state_dir.mkdir(parents=True, exist_ok=True)
    try:
        pool = await asyncpg.create_pool(database_url, min_size=1, max_size=POOL_MAX_SIZE)
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
        shown = " ".join(str(exc).split()) or type(exc).__name__
        raise DatabaseUnavailable(
            f"cannot connect to the database at {redact(database_url)}: "
            f"{scrub(shown, database_url)}"
        ) from None
    try:
        provider = coco.ContextProvider()
        provider.provide(DB, pool)
        provider.provide(ROOT, root)
        provider.provide(RUN, run)
        env = coco.Environment(coco.Settings(db_path=state_dir), context_provider=provider)
        try:
            yield env
        finally:
            env.close()
    except BaseException:
        # The run stopped early (the database went away, Ctrl-C): connections
        # may still be busy or dead; do not wait for them.
        pool.terminate()
        raise
    else:
        await pool.close()


# -- row types: flow/rows.py (ChunkRow; DocumentRow is written by flow/reconcile.py) -----
# -- documents: flow/documents.py (the hardened file reading, the document's text) ------


# -- leaf function ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ChunkedDocument:
    """One document's chunk rows and the counts its document row keeps."""

    rows: list[ChunkRow] = field(default_factory=list)
    merges: int = 0  # structure chunker: sections folded into an earlier section's chunk
    breadcrumb_truncations: int = 0  # chunks whose breadcrumb was cut to the budget


@coco.fn
def chunk_document(text: str, *, source: str, rel_path: str, recipe: Recipe) -> ChunkedDocument:
    """Split one document and give every chunk its heading columns, breadcrumb,
    embed text and ids.

    The structure chunker (DESIGN section 10) splits markdown when the recipe
    chooses it and headings are on; everything else (the recursive chunker,
    `.txt` documents, headings off) goes through the budget splitter, with the
    heading columns assigned by position (DESIGN section 3). Both fill the
    breadcrumb and the embed text with the one shared renderer (rule 7).
    """
    if recipe.uses_structure(rel_path):
        return _structure_rows(text, source=source, rel_path=rel_path, recipe=recipe)
    return _budget_rows(text, source=source, rel_path=rel_path, recipe=recipe)


@coco.fn
def chunk_rows(text: str, *, source: str, rel_path: str, recipe: Recipe) -> list[ChunkRow]:
    """The chunk rows of one document (`chunk_document` without the counts)."""
    return chunk_document(text, source=source, rel_path=rel_path, recipe=recipe).rows


@coco.fn
def _structure_rows(text: str, *, source: str, rel_path: str, recipe: Recipe) -> ChunkedDocument:
    result = structure_chunks(text, build_index(text), recipe.structure_options(), _BUDGET_SPLIT)
    fingerprint = recipe.fingerprint()
    rows = [
        _chunk_row(
            source,
            rel_path,
            position,
            (chunk.start, chunk.end),
            chunk.text,
            chunk,
            chunk.breadcrumb,
            chunk.embed_text,
            fingerprint,
        )
        for position, chunk in enumerate(result.chunks)
    ]
    return ChunkedDocument(rows, result.merges, result.breadcrumb_truncations)


@coco.fn
def _budget_rows(text: str, *, source: str, rel_path: str, recipe: Recipe) -> ChunkedDocument:
    language = recipe.language_for(rel_path)
    # markdown_split "plain": markdown split blind to its syntax (language=None),
    # its heading columns still assigned below.
    split_language = None if recipe.markdown_split == "plain" else language
    # The index before the split: each parse peaks at about 50 bytes of memory
    # per byte of markdown and frees it all when done, but the splitter's freed
    # memory is not reused by the parse after it (the peaks would add up:
    # 5.0 GB instead of 2.8 GB for a 50 MB document; benchmarks stage 6).
    index = build_index(text) if language == "markdown" and recipe.headings else None
    chunks = _SPLITTER.split(
        text,
        recipe.chunk_size,
        min_chunk_size=recipe.min_chunk_size,
        chunk_overlap=recipe.chunk_overlap,
        language=split_language,
    )
    spans = [(chunk.start.char_offset, chunk.end.char_offset) for chunk in chunks]
    del chunks
    if index is not None:
        columns: Iterable[ChunkHeadings] = assign(index, spans)
    else:
        columns = [_NO_HEADINGS] * len(spans)
    fingerprint = recipe.fingerprint()
    rendered: dict[tuple[str, ...], tuple[str, bool]] = {}  # chunks of a section share it
    truncations = 0
    rows: list[ChunkRow] = []
    for position, ((start, end), column) in enumerate(zip(spans, columns, strict=True)):
        breadcrumb: str | None = None
        if column.heading_path:
            if column.heading_path not in rendered:
                rendered[column.heading_path] = render_breadcrumb(
                    column.heading_path, recipe.breadcrumb_budget
                )
            breadcrumb, truncated = rendered[column.heading_path]
            truncations += truncated
        chunk_text = text[start:end]
        rows.append(
            _chunk_row(
                source,
                rel_path,
                position,
                (start, end),
                chunk_text,
                column,
                breadcrumb,
                embed_text(breadcrumb, chunk_text),
                fingerprint,
            )
        )
    return ChunkedDocument(rows, breadcrumb_truncations=truncations)


def _chunk_row(
    source: str,
    rel_path: str,
    position: int,
    span: tuple[int, int],
    text: str,
    headings: ChunkHeadings | StructureChunk,
    breadcrumb: str | None,
    embed: str,
    recipe: str,
) -> ChunkRow:
    """One chunk's row; both chunkers' (ids and the parent's id from positions)."""
    parent = headings.parent_position
    return ChunkRow(
        id=chunk_id(source, rel_path, position),
        source=source,
        rel_path=rel_path,
        position=position,
        char_start=span[0],
        char_end=span[1],
        text=text,
        heading_text=headings.heading_text,
        heading_level=headings.heading_level,
        heading_path=list(headings.heading_path),
        parent_chunk_id=None if parent is None else chunk_id(source, rel_path, parent),
        breadcrumb=breadcrumb,
        embed_text=embed,
        recipe=recipe,
    )


def _chunk_and_hash(
    data: bytes, text: str, *, source: str, rel_path: str, recipe: Recipe
) -> tuple[ChunkedDocument, str]:
    # The hash too runs off the event loop: hashlib releases the GIL while it
    # hashes, and the loop thread would then wait for a chunking thread to give
    # the GIL back (seen as 20% of the loop's time on the rust-book x16).
    return (
        chunk_document(text, source=source, rel_path=rel_path, recipe=recipe),
        hashlib.sha256(data).hexdigest(),
    )


# -- per-document function ----------------------------------------------------------------


@coco.fn(memo=True)
async def process_document(
    file: FileLike,
    source: str,
    recipe: Recipe,
    chunks: postgres.TableTarget[ChunkRow],
) -> None:
    """One document -> its chunk rows, and its outcome in the run's ledger.

    Memoized on the file (mtime, then content fingerprint) and on every
    argument: `recipe` is one, so a changed recipe re-processes every document.
    """
    run = coco.use_context(RUN)
    rel_path = file.file_path.path.as_posix()
    data = await file.read()
    if len(data) > run.max_doc_bytes:
        raise DocumentTooLarge(too_large(len(data), run.max_doc_bytes))
    error: str | None = None
    chunked = ChunkedDocument()
    try:
        if isinstance(file, DocumentFile) and file.failure:
            raise DocumentProblem(file.failure)
        text = document_text(data, recipe.invalid_utf8)
        # In a worker thread, so that documents overlap (flow/offload.py).
        chunked, content_hash = await run_off_loop(
            len(data),
            functools.partial(
                # Marked in the run's journal while it runs (flow/quarantine.py).
                run.quarantine.guard(
                    rel_path, _chunk_and_hash, data=data, recipe=recipe.fingerprint()
                ),
                data,
                text,
                source=source,
                rel_path=rel_path,
                recipe=recipe,
            ),
        )
    except DocumentProblem as problem:
        error = str(problem)
        content_hash = hashlib.sha256(data).hexdigest()
    rows = chunked.rows
    for row in rows:
        chunks.declare_row(row=row)
    # The document's own row (mdchunks_documents) is written from the ledger
    # after the engine is done, in one statement for the whole run: declared
    # here as a second target, it cost cocoindex as much as the chunk rows on
    # corpora of small pages (15% of an ingest of tldr) and kept a second
    # tracked row per document in the engine's memory.
    run.record(
        Processed(
            rel_path=rel_path,
            size_bytes=len(data),
            chunks=len(rows),
            error=error,
            content_hash=content_hash,
            merges=chunked.merges,
            breadcrumb_truncations=chunked.breadcrumb_truncations,
        )
    )
    if isinstance(file, DocumentFile):
        file.forget_content()


# -- app ------------------------------------------------------------------------------------


@coco.fn
async def app_main(source: str, recipe: Recipe) -> None:
    chunks = await postgres.mount_table_target(
        DB,
        CHUNKS_TABLE,
        await postgres.TableSchema.from_class(ChunkRow, primary_key=["id"]),
        managed_by=ManagedBy.USER,
    )
    run = coco.use_context(RUN)
    keys: dict[str, str] = {}  # the last part of a component's path -> its rel_path

    def record_failure(exc: BaseException, context: coco.ExceptionContext) -> None:
        if not keys:
            keys.update({str(coco.ROOT_PATH / rel): rel for rel in run.listing.rel_paths})
        run.record_raised(rel_path_of(context.stable_path, keys), one_line(exc))

    items: object
    # How the documents are found is no argument of the app: the live watch
    # and the batch run must share memos (an argument would re-process every
    # document each time one follows the other).
    if run.live:
        items = LiveDocuments(
            localfs.walk_dir(
                ROOT, recursive=True, path_matcher=matcher(recipe.suffixes), live=True
            ).items(),
            max_bytes=run.max_doc_bytes,
        )
    else:
        # The walk already happened (flow/listing.py): same filter, plus the
        # failures it reports; the stat it took saves one per file here. A
        # generator, not a list: each file object lives only as long as the
        # engine needs it, not until the run ends (memory per document).
        items = (
            (
                entry.rel_path,
                DocumentFile(
                    localfs.FilePath(entry.rel_path, base_dir=ROOT),
                    stat=entry.stat,
                    max_bytes=run.max_doc_bytes,
                ),
            )
            for entry in run.listing.entries
        )
    async with coco.exception_handler(record_failure):
        await coco.mount_each(process_document, items, source, recipe, chunks)  # type: ignore[arg-type]


def build_app(env: coco.Environment, *, source: str, recipe: Recipe) -> coco.App:
    return coco.App(coco.AppConfig(name=APP_NAME, environment=env), app_main, source, recipe)


# -- helpers of the exception handler -----------------------------------------------------

_RUST_ESCAPE = re.compile(r"\\(u\{[0-9a-fA-F]+\}|.)")


def rel_path_of(stable_path: str, keys: dict[str, str]) -> str:
    """The document key at the end of a component path (`/@process_document/"a/b.md"`).

    Inside the key every `"` is escaped, so the key starts at the last `/"`.
    Keys of the listing are looked up as the engine prints them; others (live
    mode) are unescaped from the engine's (Rust `escape_default`) spelling.
    """
    start = stable_path.rfind('/"')
    if start < 0:
        return stable_path
    segment = stable_path[start:]
    if segment in keys:
        return keys[segment]

    def unescape(found: re.Match[str]) -> str:
        code = found.group(1)
        if code.startswith("u{"):
            return chr(int(code[2:-1], 16))
        return {"t": "\t", "r": "\r", "n": "\n", "0": "\0"}.get(code, code)

    return _RUST_ESCAPE.sub(unescape, segment[2:-1])
