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
import os
import re
import stat as stat_module
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

# No telemetry, whatever the environment says (cocoindex phones home otherwise).
os.environ["COCOINDEX_DISABLE_USAGE_TRACKING"] = "1"

import asyncpg
import cocoindex as coco
from cocoindex.connectorkits.target import ManagedBy
from cocoindex.connectors import localfs, postgres
from cocoindex.ops.text import RecursiveSplitter
from cocoindex.resources.file import FileLike

from flow.database import redact, scrub
from flow.errors import DatabaseUnavailable
from flow.ledger import Processed, RunLedger
from flow.listing import FileStat, matcher
from flow.offload import run_off_loop
from flow.rows import CHUNKS_TABLE, ChunkRow, chunk_id
from flow.settings import Recipe
from heading_index import (
    ChunkHeadings,
    DocumentDecodeError,
    assign,
    budget_split_from,
    build_index,
    decode_document,
    embed_text,
    render_breadcrumb,
    structure_chunks,
)

# -- settings -----------------------------------------------------------------

APP_NAME = "mdchunks"
POOL_MAX_SIZE = 8
_SPLITTER = RecursiveSplitter()
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


class DocumentProblem(Exception):
    """A document that cannot be ingested as it is (the message says why).

    Deterministic in the file's bytes: the document declares no chunk rows, its
    document row carries the message, and the memo keeps that until the file
    (or the recipe) changes, so it is reported again on every run meanwhile.
    """


class DocumentTooLarge(Exception):
    """Raised, not declared: a file that grew past the limit after the walk.
    Not memoized, so a later run with a higher limit processes it."""


class DocumentReplaced(Exception):
    """Raised, not declared: the listed file is no longer a regular file when it
    is read (a folder, a FIFO, a device put in its place after the walk)."""


_BOM = "\ufeff"


def document_text(data: bytes, invalid_utf8: str = "skip") -> str:
    """The document's text (UTF-8, one leading BOM removed) or a `DocumentProblem`.

    Binary content: a NUL byte anywhere (PNG, JPEG, PDF, zip, UTF-16 text all
    have them) is a `DocumentProblem`; Postgres text cannot hold NUL, and
    cocoindex would strip it silently and shift every offset after it. Other
    binary data is, in practice, not valid UTF-8 either.

    Invalid UTF-8: a `DocumentProblem` naming the byte offset; with
    `invalid_utf8="replace"` each maximal invalid sequence becomes one U+FFFD
    instead (Python's decoder), and that text is the document: it is what the
    rows store and what `char_start`/`char_end` count in.
    """
    nul = data.find(b"\x00")
    if nul >= 0:
        raise DocumentProblem(
            f"binary content: NUL byte at byte offset {nul} (Postgres text cannot hold it)"
        )
    if invalid_utf8 == "replace":
        return data.decode("utf-8", errors="replace").removeprefix(_BOM)
    try:
        return decode_document(data)
    except DocumentDecodeError as exc:
        raise DocumentProblem(str(exc)) from None


# The content fingerprint of a document that could not be read: no file's.
_UNREADABLE = b"mdchunks: the document could not be read"


class DocumentFile(localfs.File):
    """A listed document, read defensively.

    Between the walk and the read, a file can vanish, be replaced or grow. A
    plain read would block the run forever on a FIFO put in its place, or load
    a file that grew to any size. So the file is opened non-blocking, checked
    with `fstat` on the open descriptor (what is read is what was checked), and
    read up to the size limit.

    A read that fails does not raise: `failure` says why and the content is
    empty, so `process_document` records the failure for the document row and
    declares no chunk rows, and cocoindex deletes the document's old rows itself (a
    raised error would keep them, and deleting them behind its back would make
    it skip rewriting them when the file comes back unchanged). The outcome is
    never trusted again: the next run reads the file anew whatever its mtime.
    """

    def __init__(
        self, file_path: localfs.FilePath, *, stat: FileStat | None, max_bytes: int
    ) -> None:
        # No stat (live mode, where cocoindex's walk made the file object and
        # its memo state): the metadata is fetched if anything asks for it.
        super().__init__(file_path, _stat=stat)  # type: ignore[arg-type]
        self._max_bytes = max_bytes
        self.failure: str | None = None

    async def _read_impl(self, size: int = -1) -> bytes:
        try:
            return await super()._read_impl(size)
        except (OSError, DocumentTooLarge, DocumentReplaced) as exc:
            self.failure = one_line(exc)
            return b""

    async def _compute_content_fingerprint(self) -> bytes:
        found = await super()._compute_content_fingerprint()
        return _UNREADABLE if self.failure else found

    def forget_content(self) -> None:
        """Drop the content cocoindex's `FileLike` caches after a full read.

        The run keeps every listed file object until it ends, so without this
        it would hold every document's bytes at once: memory growing with the
        corpus (300 MB more than the bare app at 50,000 files). A later read,
        if any, reads the file again.
        """
        self._cached_content = None

    # The annotation is what cocoindex deserializes the stored state with.
    async def __coco_memo_state__(
        self, prev_state: tuple[datetime, bytes] | coco.NonExistenceType
    ) -> coco.MemoStateOutcome:
        if not coco.is_non_existence(prev_state) and prev_state[1] == _UNREADABLE:
            current = await self.content_fingerprint()
            mtime = (await self._ensure_metadata()).modified_time
            return coco.MemoStateOutcome(state=(mtime, current), memo_valid=False)
        return await super().__coco_memo_state__(prev_state)

    def _read_sync(self, size: int = -1) -> bytes:
        flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)
        descriptor = os.open(self._file_path.resolve(), flags)
        try:
            found = os.fstat(descriptor)
        except BaseException:
            os.close(descriptor)
            raise
        if not stat_module.S_ISREG(found.st_mode):
            os.close(descriptor)
            raise DocumentReplaced(
                f"replaced after the walk by {_file_kind(found.st_mode)}; not read"
            )
        with open(descriptor, "rb") as handle:  # closes the descriptor
            if found.st_size > self._max_bytes:
                raise DocumentTooLarge(_too_large(found.st_size, self._max_bytes))
            limit = self._max_bytes + 1 if size < 0 else min(size, self._max_bytes + 1)
            # Asking for the size found plus one byte (which tells a file that
            # grew since) rather than for the limit: read(limit) allocates the
            # limit (16 MiB and more) for every file and leaves each result in
            # a page-sized mapping of its own.
            data = handle.read(min(found.st_size + 1, limit))
            if len(data) > found.st_size and len(data) < limit:
                data += handle.read(limit - len(data))
        if len(data) > self._max_bytes:
            raise DocumentTooLarge(
                f"too large: it grew past the limit of {self._max_bytes:,} bytes "
                "(--max-doc-bytes) while it was read"
            )
        return data


def _too_large(size: int, limit: int) -> str:
    return f"too large: {size:,} bytes, over the limit of {limit:,} (--max-doc-bytes)"


def _file_kind(mode: int) -> str:
    if stat_module.S_ISDIR(mode):
        return "a folder"
    if stat_module.S_ISFIFO(mode):
        return "a FIFO"
    if stat_module.S_ISSOCK(mode):
        return "a socket"
    if stat_module.S_ISCHR(mode) or stat_module.S_ISBLK(mode):
        return "a device"
    return "something that is not a regular file"


class LiveDocuments:
    """cocoindex's live walk, handing over `DocumentFile`s instead of its files.

    Two reasons: the hardened read (no hang on a FIFO, the size limit while
    reading) in live mode too; and memos shared with batch runs: the class of
    a memoized argument is part of its memo key, so with cocoindex's own file
    objects a watch would re-process every document a batch run had processed,
    and the next batch run everything the watch had seen.
    """

    def __init__(self, items: Any, *, max_bytes: int) -> None:
        self._items = items
        self._max_bytes = max_bytes

    def _document(self, file: localfs.File) -> DocumentFile:
        return DocumentFile(file.file_path, stat=None, max_bytes=self._max_bytes)

    async def _documents(self) -> AsyncIterator[tuple[str, DocumentFile]]:
        async for key, file in self._items:
            yield key, self._document(file)

    def __aiter__(self) -> AsyncIterator[tuple[str, DocumentFile]]:
        return self._documents()

    async def watch(self, subscriber: Any) -> None:
        await self._items.watch(_DocumentSubscriber(subscriber, self._document))


class _DocumentSubscriber:
    """Passes the live walk's changes on, each updated file as a `DocumentFile`."""

    def __init__(self, inner: Any, document: Callable[[localfs.File], DocumentFile]) -> None:
        self._inner = inner
        self._document = document

    async def update(self, key: str, value: localfs.File) -> Any:
        return await self._inner.update(key, self._document(value))

    def __getattr__(self, name: str) -> Any:  # update_all, delete, mark_ready, ...
        return getattr(self._inner, name)


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
        ChunkRow(
            id=chunk_id(source, rel_path, position),
            source=source,
            rel_path=rel_path,
            position=position,
            char_start=chunk.start,
            char_end=chunk.end,
            text=chunk.text,
            heading_text=chunk.heading_text,
            heading_level=chunk.heading_level,
            heading_path=list(chunk.heading_path),
            parent_chunk_id=(
                None
                if chunk.parent_position is None
                else chunk_id(source, rel_path, chunk.parent_position)
            ),
            breadcrumb=chunk.breadcrumb,
            embed_text=chunk.embed_text,
            recipe=fingerprint,
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
            ChunkRow(
                id=chunk_id(source, rel_path, position),
                source=source,
                rel_path=rel_path,
                position=position,
                char_start=start,
                char_end=end,
                text=chunk_text,
                heading_text=column.heading_text,
                heading_level=column.heading_level,
                heading_path=list(column.heading_path),
                parent_chunk_id=(
                    None
                    if column.parent_position is None
                    else chunk_id(source, rel_path, column.parent_position)
                ),
                breadcrumb=breadcrumb,
                embed_text=embed_text(breadcrumb, chunk_text),
                recipe=fingerprint,
            )
        )
    return ChunkedDocument(rows, breadcrumb_truncations=truncations)


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
        raise DocumentTooLarge(_too_large(len(data), run.max_doc_bytes))
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
                _chunk_and_hash, data, text, source=source, rel_path=rel_path, recipe=recipe
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


def one_line(exc: BaseException) -> str:
    """A failure's cause in one line (the document is named by the caller)."""
    if isinstance(exc, (DocumentTooLarge, DocumentReplaced)):
        return str(exc)
    if isinstance(exc, FileNotFoundError):
        return "vanished while the run read it"
    if isinstance(exc, OSError) and exc.strerror:
        return f"cannot read: {exc.strerror}"
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
