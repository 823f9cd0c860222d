"""Reading a listed document: the file object cocoindex memoizes.

`DocumentFile` is how every run reads a listed document (the batch run hands
them over from the walk, the live watch through `LiveDocuments`): defensively,
so a file that vanished, grew or was replaced fails that document alone. Its
bytes become text with the plugin face's `document_text`.
"""

from __future__ import annotations

import os
import stat as stat_module
from collections.abc import AsyncIterator, Callable
from datetime import datetime
from pathlib import PurePath
from typing import Any, cast

import asyncpg
import cocoindex as coco
from cocoindex.connectors import localfs
from mdchunks.source.bounded import DocumentOverLimit
from mdchunks.source.listing import FileStat
from mdchunks.source.writes import refusal


class DocumentTooLarge(Exception):
    """Raised, not declared: a file that grew past the limit after the walk.
    Not memoized, so a later run with a higher limit processes it."""


class DocumentReplaced(Exception):
    """Raised, not declared: the listed file is no longer a regular file when it
    is read (a folder, a FIFO, a device put in its place after the walk)."""


# The content fingerprint of a document that could not be read: no file's.
_UNREADABLE = b"mdchunks: the document could not be read"


# A watch's read of a link that leaves the root: the entry is skipped, as the
# batch walk skips it (flow/source/listing.py), not a failed document.
OUTSIDE_ROOT = (
    "a link that leads outside the source root; not read (the watch never follows such links)"
)


class DocumentFile(localfs.File):
    """A listed document, read defensively.

    Between the walk and the read, a file can vanish, be replaced or grow. A
    plain read would block the run forever on a FIFO put in its place, or load
    a file that grew to any size. So the file is opened non-blocking, checked
    with `fstat` on the open descriptor (what is read is what was checked), and
    read up to the size limit.

    A read that fails does not raise: `failure` says why and the content is
    empty, so `process_document` records the failure for the document row and
    no rows, and the reconciliation deletes the document's old rows. The
    outcome is never trusted again: the next run reads the file anew whatever
    its mtime.
    """

    def __init__(
        self,
        file_path: localfs.FilePath,
        *,
        stat: FileStat | None,
        max_bytes: int,
        verify: bool = False,
        confined: bool = False,
        importer: str | None = None,
    ) -> None:
        # No stat (live mode, where cocoindex's walk made the file object and
        # its memo state): the metadata is fetched if anything asks for it.
        super().__init__(file_path, _stat=stat)  # type: ignore[arg-type]
        self._max_bytes = max_bytes
        # A verifying run (`ingest --verify`): the content decides, not the stat.
        self._verify = verify
        # Live mode: cocoindex's own walk lists the files, links included, so
        # the read refuses a link that leaves the root (the batch walk skips
        # them before: flow/source/listing.py).
        self._confined = confined
        # A converted document (HTML, DOCX, PDF): its importer and version
        # ("pdf 1"), part of its memo key (below).
        self._importer = importer
        self.failure: str | None = None

    def __coco_memo_key__(self) -> object:
        """The file's key, and for a converted document its importer's version:
        the recipe's fingerprint leaves the importers out, so a new version of
        one re-processes the documents of that format and nothing else
        (docs/importers.md). A markdown file's key is cocoindex's own."""
        key = super().__coco_memo_key__()
        return key if self._importer is None else (key, self._importer)

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
        if not coco.is_non_existence(prev_state) and (prev_state[1] == _UNREADABLE or self._verify):
            # Read and hashed whatever the mtime says: an unreadable file's
            # outcome is never trusted, and a verifying run trusts no stat (a
            # rewrite of the same size with the mtime restored fools a stat).
            current = await self.content_fingerprint()
            mtime = (await self._ensure_metadata()).modified_time
            valid = self._verify and prev_state[1] != _UNREADABLE and current == prev_state[1]
            return coco.MemoStateOutcome(state=(mtime, current), memo_valid=valid)
        return await super().__coco_memo_state__(prev_state)

    def _read_sync(self, size: int = -1) -> bytes:
        flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)
        if self._confined:
            self._check_inside_root()
        descriptor = os.open(self._path(), flags)
        try:
            found = os.fstat(descriptor)
            if not stat_module.S_ISREG(found.st_mode):
                raise DocumentReplaced(
                    f"replaced after the walk by {_file_kind(found.st_mode)}; not read"
                )
            if found.st_size > self._max_bytes:
                raise DocumentTooLarge(too_large(found.st_size, self._max_bytes))
            limit = self._max_bytes + 1 if size < 0 else min(size, self._max_bytes + 1)
            # Asking for the size found plus one byte (which tells a file that
            # grew since) rather than for the limit: reading the limit allocates
            # it (16 MiB and more) for every file and leaves each result in a
            # page-sized mapping of its own.
            data = _read_up_to(descriptor, min(found.st_size + 1, limit))
            if len(data) > found.st_size and len(data) < limit:
                data += _read_up_to(descriptor, limit - len(data))
        finally:
            os.close(descriptor)
        if len(data) > self._max_bytes:
            raise DocumentTooLarge(
                f"too large: it grew past the limit of {self._max_bytes:,} bytes "
                "(--max-doc-bytes) while it was read"
            )
        return data

    def _check_inside_root(self) -> None:
        base = self._file_path.base_dir
        if base is None:
            return
        root = os.path.realpath(coco.use_context(base))
        target = os.path.realpath(self._path())
        if os.path.commonpath([root, target]) != root:
            raise DocumentReplaced(OUTSIDE_ROOT)

    def _path(self) -> PurePath:
        """The file's path: the root (the context's) joined with the relative path.

        Not `FilePath.resolve()`, which canonicalises it with one `lstat` per
        component (`os.path.realpath`), about 70 us a file, 0.5 s of an ingest
        of 7,425 pages: opening the joined path reaches the same file (the
        kernel follows the same links), and the walk has already refused
        links that leave the root (flow/source/listing.py)."""
        base = self._file_path.base_dir
        relative = self._file_path.path
        return relative if base is None else coco.use_context(base) / relative


def _read_up_to(descriptor: int, size: int) -> bytes:
    """Up to `size` bytes from `descriptor`, fewer only at the end of the file."""
    data = os.read(descriptor, size)
    while 0 < len(data) < size:
        more = os.read(descriptor, size - len(data))
        if not more:
            break
        data += more
    return data


def too_large(size: int, limit: int) -> str:
    return f"too large: {size:,} bytes, over the limit of {limit:,} (--max-doc-bytes)"


def converted_too_large(size: int, became: int, limit: int) -> str:
    return (
        f"too large once converted: {size:,} bytes on disk became {became:,} bytes of "
        f"markdown, over the limit of {limit:,} (--max-doc-bytes)"
    )


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

    def __init__(
        self, items: Any, *, max_bytes: int, importer_of: Callable[[str], str | None]
    ) -> None:
        self._items = items
        self._max_bytes = max_bytes
        self._importer_of = importer_of

    def _document(self, file: localfs.File) -> DocumentFile:
        # cocoindex types a walked file's path as the generic FilePath; a
        # localfs walk makes localfs.FilePath objects.
        path = cast(localfs.FilePath, file.file_path)
        return DocumentFile(
            path,
            stat=None,
            max_bytes=self._max_bytes,
            confined=True,
            importer=self._importer_of(path.path.as_posix()),
        )

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


def one_line(exc: BaseException) -> str:
    """A failure's cause in one line (the document is named by the caller).

    An exception group (cocoindex writes rows from task groups) is reported by
    its first leaf: the database's own message, not "unhandled errors in a
    TaskGroup"."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, asyncpg.PostgresError):
        return refusal(exc)
    if isinstance(exc, (DocumentTooLarge, DocumentReplaced, DocumentOverLimit)):
        return str(exc)
    if isinstance(exc, FileNotFoundError):
        return "vanished while the run read it"
    if isinstance(exc, OSError) and exc.strerror:
        return f"cannot read: {exc.strerror}"
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
