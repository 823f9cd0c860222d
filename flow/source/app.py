"""The cocoindex app: a source folder -> `content_chunks` and `content_sections`
rows, written from the run's ledger (flow/source/writes.py).

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
and the `content_chunks` table's oid (flow/db/database.py: never a password).
Pointing the same data dir at another database, or at a re-created one,
therefore starts from an empty state: every document is processed once and
upserts rows with the same uuid5 ids. If a state does not match its database
anyway (a restored backup, rows deleted by hand), the reconciliation notices
documents with missing rows and the run re-processes everything once
(flow/source/reconcile.py).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import logging
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg
import cocoindex as coco
from cocoindex.connectors import localfs
from cocoindex.resources.file import FileLike
from mdchunks.db import connection, database, urls
from mdchunks.db.urls import redact, scrub
from mdchunks.errors import DatabaseUnavailable
from mdchunks.heading_index import dialect_for
from mdchunks.importers.registry import importer_for
from mdchunks.plugin import memory
from mdchunks.plugin.chunking import chunk_markdown
from mdchunks.plugin.documents import DocumentProblem, read_document
from mdchunks.plugin.languages import document_language
from mdchunks.plugin.recipe import Recipe
from mdchunks.plugin.rows import (
    ChunkRow,
    SectionIds,
    SectionRow,
    chunk_rows,
    section_rows,
)
from mdchunks.source import writes
from mdchunks.source.bounded import DocumentLimits, run_in_child
from mdchunks.source.files import (
    DocumentFile,
    DocumentTooLarge,
    LiveDocuments,
    converted_too_large,
    one_line,
    too_large,
)
from mdchunks.source.ledger import Processed, RunLedger
from mdchunks.source.listing import matcher
from mdchunks.source.offload import run_off_loop

# -- settings -----------------------------------------------------------------

log = logging.getLogger(__name__)

APP_NAME = "mdchunks"
POOL_MAX_SIZE = 8

# -- context keys ---------------------------------------------------------------
# Their names are global per process and part of the engine state's identity
# (memos, and before layout 2 the table target, flow/source/state.py): never rename.

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
        # asyncpg takes URLs, with only the parameters it knows (flow/db/urls.py).
        pool = await asyncpg.create_pool(
            urls.url_of(database_url),
            min_size=1,
            max_size=POOL_MAX_SIZE,
            timeout=urls.connect_timeout(database_url),
        )
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
        # The run connected before it got here (its lock, the migrations): a
        # server gone since then is a loss, as a watch whose server stops just
        # as its engine starts meets it (issue 42), not a refused connection.
        if connection.is_lost_on_connect(exc):
            raise database.lost(database_url, exc) from None
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


# -- row types: flow/plugin/rows.py (ChunkRow; DocumentRow: flow/source/reconcile.py) -----
# -- documents: flow/source/files.py (the defensive read), flow/plugin/documents.py (the text)


# -- leaf function ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ChunkedDocument:
    """One document's chunk and section rows and the counts its document row keeps."""

    rows: list[ChunkRow] = field(default_factory=list)
    sections: list[SectionRow] = field(default_factory=list)
    merges: int = 0  # structure chunker: sections folded into an earlier section's chunk
    breadcrumb_truncations: int = 0  # chunks whose breadcrumb was cut to the budget
    title: str | None = None  # the document's, from its front matter


@coco.fn
def chunk_document(text: str, *, source: str, rel_path: str, recipe: Recipe) -> ChunkedDocument:
    """One document's rows: the plugin face's chunker (`chunk_markdown`, of which
    `split_markdown` is the list of chunks) under the recipe's options, then the
    rows with their ids. Markdown is split on its syntax (unless the recipe's
    markdown split is "plain") and indexed; `.txt` is split as plain text with
    NULL heading columns."""
    language = recipe.language_for(rel_path)
    options = recipe.chunk_options()
    if language != "markdown" and options.headings:
        options = dataclasses.replace(options, headings=False)
    # "plain" is the recursive chunker's baseline; the structure chunker always
    # splits its oversized sections on markdown syntax.
    plain = recipe.markdown_split == "plain" and not recipe.uses_structure(rel_path)
    split_language = None if plain else language
    chunking = chunk_markdown(text, options, language=split_language, dialect=dialect_for(rel_path))
    fingerprint = recipe.fingerprint()
    ids = SectionIds(source, rel_path)
    sections = section_rows(
        chunking.sections, source=source, rel_path=rel_path, recipe=fingerprint, ids=ids
    )
    rows = chunk_rows(
        chunking.chunks,
        source=source,
        rel_path=rel_path,
        recipe=fingerprint,
        ids=ids,
        language=document_language(text, rel_path),
    )
    return ChunkedDocument(
        rows, sections, chunking.merges, chunking.breadcrumb_truncations, chunking.title
    )


@dataclass(frozen=True, slots=True)
class DocumentWork:
    """What a run keeps of one document's reading and chunking: the counts
    its document row keeps and the encoded rows the ledger writes. Not the
    rows nor the text: a document chunked in a child sends this back, and
    the run held both again (issue 42: memory per document)."""

    content_hash: str
    encoded: writes.Encoded = writes.NOTHING
    chunks: int = 0
    sections: int = 0
    merges: int = 0
    breadcrumb_truncations: int = 0
    note: str | None = None
    title: str | None = None  # the document's, from its front matter


def _read_chunk_and_hash(
    data: bytes, *, source: str, rel_path: str, recipe: Recipe, max_text_bytes: int | None = None
) -> DocumentWork:
    # Reading runs in the worker thread too: a converted document (HTML, DOCX,
    # PDF) is parsed there, under the quarantine's guard, as the splitter runs
    # (lxml is native code; pypdf is slow on some files). The hash too runs off
    # the event loop: hashlib releases the GIL while it hashes, and the loop
    # thread would then wait for a chunking thread to give the GIL back (seen
    # as 20% of the loop's time on the rust-book x16). So does the encoding of
    # the section rows the ledger keeps until they are written.
    content = read_document(data, rel_path, recipe.invalid_utf8)
    if content.source_format != "markdown":
        # The converter's freed tree (lxml's, python-docx's, Beautiful
        # Soup's) handed back before the text is parsed and split beside it
        # (flow/plugin/memory.py; issue 42: memory per document).
        memory.trim()
    if max_text_bytes is not None and content.source_format != "markdown":
        # `--max-doc-bytes` bounds what a file becomes, not only its bytes on
        # disk: a 278 KB DOCX inflated to 60 MB of text (issue 42).
        became = _utf8_size_past(content.text, max_text_bytes)
        if became is not None:
            raise DocumentTooLarge(converted_too_large(len(data), became, max_text_bytes))
    chunked = chunk_document(content.text, source=source, rel_path=rel_path, recipe=recipe)
    counted = DocumentWork(
        content_hash=hashlib.sha256(data).hexdigest(),
        chunks=len(chunked.rows),
        sections=len(chunked.sections),
        merges=chunked.merges,
        breadcrumb_truncations=chunked.breadcrumb_truncations,
        note=content.note,
        title=chunked.title,
    )
    del content  # the text, no longer needed beside the rows' encoding
    # The rows are this call's alone: each is freed as it is encoded.
    encoded = writes.Encoded.taking(chunked.rows, chunked.sections)
    return dataclasses.replace(counted, encoded=encoded)


def _utf8_size_past(text: str, limit: int) -> int | None:
    """The UTF-8 size of `text` when it is over `limit` bytes, else None
    (encoded only when its characters alone do not decide)."""
    if len(text) <= limit // 4:
        return None
    size = len(text.encode("utf-8", errors="surrogatepass"))
    return size if size > limit else None


def _read_chunk_and_hash_in_child(
    data: bytes,
    *,
    source: str,
    rel_path: str,
    recipe: Recipe,
    limits: DocumentLimits,
    max_text_bytes: int | None = None,
) -> DocumentWork:
    # A memo keeps the logic of the `@coco.fn`s its function called; the
    # child's calls are unseen here, so the same function is called on an
    # empty text (microseconds): a new chunk_document still re-runs this one.
    chunk_document("", source=source, rel_path=rel_path, recipe=recipe)
    return run_in_child(
        _read_chunk_and_hash,
        (data,),
        {
            "source": source,
            "rel_path": rel_path,
            "recipe": recipe,
            "max_text_bytes": max_text_bytes,
        },
        limits,
    )


# -- per-document function ----------------------------------------------------------------


@coco.fn(memo=True)
async def process_document(
    file: FileLike[Path],
    source: str,
    recipe: Recipe,
) -> None:
    """One document -> its outcome, chunk rows and section rows in the run's ledger.

    Memoized on the file (mtime, then content fingerprint) and on every
    argument: `recipe` is one, so a changed recipe re-processes every document.
    """
    run = coco.use_context(RUN)
    rel_path = file.file_path.path.as_posix()
    data = await file.read()
    if len(data) > run.max_doc_bytes:
        raise DocumentTooLarge(too_large(len(data), run.max_doc_bytes))
    error: str | None = None
    try:
        if isinstance(file, DocumentFile) and file.failure:
            raise DocumentProblem(file.failure)
        # In a worker thread, so that documents overlap (flow/source/offload.py);
        # a large one, and every converted one, in a child process within the
        # run's limits (flow/source/bounded.py), where a crash costs the run
        # nothing: what a converted file becomes is not known from its size
        # on disk (issue 42: a 278 KB DOCX became 60 MB of text). A small
        # markdown one is marked in the run's journal while it runs
        # (flow/source/quarantine.py).
        large = len(data) >= run.limits.child_above_bytes
        bounded = large or importer_for(rel_path) is not None
        work = (
            functools.partial(
                _read_chunk_and_hash_in_child,
                limits=run.limits,
                max_text_bytes=run.max_doc_bytes,
            )
            if bounded
            else run.quarantine.guard(
                rel_path, _read_chunk_and_hash, data=data, recipe=recipe.fingerprint()
            )
        )
        if large:  # the progress line names it while it takes its time
            run.in_flight[rel_path] = len(data)
        try:
            done: DocumentWork = await run_off_loop(
                len(data),
                functools.partial(work, data, source=source, rel_path=rel_path, recipe=recipe),
            )
        finally:
            run.in_flight.pop(rel_path, None)
    except DocumentProblem as problem:
        error = str(problem)
        done = DocumentWork(content_hash=hashlib.sha256(data).hexdigest())
    # The document's own row (mdchunks_documents) is written from the ledger
    # after the engine is done, in one statement for the whole run; its chunk
    # and section rows in batches as the run goes (flow/source/writes.py):
    # as cocoindex targets, each row was a record in the engine's state, and
    # each target as much time again per document.
    run.record(
        Processed(
            rel_path=rel_path,
            size_bytes=len(data),
            chunks=done.chunks,
            sections=done.sections,
            error=error,
            content_hash=done.content_hash,
            merges=done.merges,
            breadcrumb_truncations=done.breadcrumb_truncations,
            source_format=recipe.source_format(rel_path),
            import_note=done.note,
            title=done.title,
        ),
        done.encoded,
    )
    if not run.live and not run.writing and run.pending_rows >= writes.BATCH_ROWS:
        # A watch writes them at each change it reports, in order (two
        # batches in flight could land an older version of a document last).
        await _write_batch(run)
    if isinstance(file, DocumentFile):
        file.forget_content()


async def _write_batch(run: RunLedger) -> None:
    """Write the rows waiting in the ledger. A failed write (the
    database lost mid-run: the run's watchdog reports that and stops it) raises
    nothing in this document's component, where the engine would log it with a
    backtrace: the rows stay pending, for the reconciliation to write."""
    batch = run.batch()
    run.writing = True
    try:
        stats_of = run.stats_for(batch)
        refused = await writes.write_batch(coco.use_context(DB), batch, stats_of=stats_of)
    except Exception as exc:
        log.debug("rows left for the reconciliation: %s", exc)
    else:
        run.written(batch)
        run.refused(refused)
    finally:
        run.writing = False


# -- app ------------------------------------------------------------------------------------


@coco.fn
async def app_main(source: str, recipe: Recipe) -> None:
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
            importer_of=recipe.importer_key,
        )
    else:
        # The walk already happened (flow/source/listing.py): same filter, plus the
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
                    verify=run.verify,
                    importer=recipe.importer_key(entry.rel_path),
                ),
            )
            for entry in run.listing.entries
        )
    async with coco.exception_handler(record_failure):
        await coco.mount_each(process_document, items, source, recipe)


def build_app(
    env: coco.Environment, *, source: str, recipe: Recipe
) -> coco.App[[str, Recipe], None]:
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
