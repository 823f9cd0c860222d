"""A document's text: the bytes of a file turned into the text every offset
refers to, or a `DocumentProblem` that says why it cannot be (docs/plugin.md).

Markdown and plain text are decoded (`document_text`); HTML, DOCX and PDF
are converted by their importer (mdchunks.importers, docs/importers.md), and
the markdown they become is the document (`read_document`,
`document_markdown`). The managed source reads its files defensively first
(flow/source/files.py); a host app hands in the bytes it read itself.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

import cocoindex as coco
from mdchunks.heading_index import DocumentDecodeError, decode_document
from mdchunks.importers.base import ConversionFailed
from mdchunks.importers.registry import importer_for, importer_versions


class DocumentProblem(Exception):
    """A document that cannot be ingested as it is (the message says why).

    Deterministic in the file's bytes: the document declares no chunk rows, its
    document row carries the message, and the memo keeps that until the file
    (or the recipe) changes, so it is reported again on every run meanwhile.
    """


_BOM = "\ufeff"


def document_text(data: bytes, invalid_utf8: str = "skip", *, rel_path: str | None = None) -> str:
    """The document's text (UTF-8, one leading BOM removed); raises `DocumentProblem`,
    whose message starts with `rel_path: ` when it is given (cocoindex reports
    a failed component by its message alone).

    Binary content: a NUL byte anywhere (PNG, JPEG, PDF, zip, UTF-16 text all
    have them) is a `DocumentProblem`; Postgres text cannot hold NUL, and
    cocoindex would strip it silently and shift every offset after it. Other
    binary data is, in practice, not valid UTF-8 either.

    Invalid UTF-8: a `DocumentProblem` naming the byte offset; with
    `invalid_utf8="replace"` each maximal invalid sequence becomes one U+FFFD
    instead (Python's decoder), and that text is the document: it is what the
    rows store and what `char_start`/`char_end` count in.
    """
    named = f"{rel_path}: " if rel_path is not None else ""
    nul = data.find(b"\x00")
    if nul >= 0:
        raise DocumentProblem(
            f"{named}binary content: NUL byte at byte offset {nul} (Postgres text cannot hold it)"
        )
    if invalid_utf8 == "replace":
        return data.decode("utf-8", errors="replace").removeprefix(_BOM)
    try:
        return decode_document(data)
    except DocumentDecodeError as exc:
        raise DocumentProblem(f"{named}{exc}") from None


@dataclass(frozen=True, slots=True)
class DocumentContent:
    """A document's text and where it came from."""

    text: str
    source_format: str  # "markdown" (or plain text), else the importer's name
    headings: int | None = None  # converted documents: headings recovered
    note: str | None = None  # the importer's note (a PDF without outline)


def read_document(data: bytes, name: str, invalid_utf8: str = "skip") -> DocumentContent:
    """The document of a file's bytes: converted by the importer of its suffix
    (`name` is a file name or a suffix), else decoded (`document_text`).
    A file its importer cannot convert is a `DocumentProblem` naming the
    format and the cause."""
    importer = importer_for(name)
    if importer is None:
        return DocumentContent(document_text(data, invalid_utf8), "markdown")
    try:
        converted = importer.convert(data)
    except ConversionFailed as exc:
        raise DocumentProblem(f"{importer.name}: {exc}") from None
    except RecursionError:
        # Elements nested past the interpreter's stack (a thousand `<div>`s):
        # a problem of these bytes, kept on the document's row until they
        # change, not a bug retried on every run (issue 42).
        raise DocumentProblem(
            f"{importer.name}: nested too deeply to convert (past Python's recursion "
            f"limit of {sys.getrecursionlimit():,})"
        ) from None
    text, note = converted.text, converted.note
    text, mended = _LONE_SURROGATE.subn("\ufffd", text)
    if mended:
        note = f"{note}; {MENDED}" if note else MENDED
    if not _WORD.search(text):
        raise DocumentProblem(f"{importer.name}: {NO_TEXT}")
    return DocumentContent(text, importer.name, converted.headings, note)


# A code point no UTF-8 can hold (half of a UTF-16 pair): a PDF's broken
# ToUnicode map gives them. cocoindex refuses such a text at ingest, after
# the conversion said nothing; mended here, said in the note.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
MENDED = "lone surrogates (no UTF-8 holds them) in its text replaced by U+FFFD"
_WORD = re.compile(r"[^\W_]")
NO_TEXT = "no text: it converts to no words (a scan, or images only?)"


@coco.fn(deps=importer_versions())
def document_markdown(data: bytes, suffix: str, *, rel_path: str | None = None) -> str:
    """The markdown a host app chunks (`split_markdown`) for a file: the same
    importers the `mdchunks` command runs, for `.html`, `.htm`, `.docx`,
    `.pdf` (needs the `formats` extra); other suffixes are decoded as UTF-8
    (`document_text`). Offsets of the chunks then count in this text.
    Raises `DocumentProblem`, whose message starts with `rel_path: ` when it
    is given (as `document_text`'s: cocoindex reports a failed component by
    its message alone). The importers' versions are in its deps: a new
    importer version re-runs a host's memoized function that calls it."""
    try:
        return read_document(data, suffix).text
    except DocumentProblem as exc:
        if rel_path is None:
            raise
        raise DocumentProblem(f"{rel_path}: {exc}") from None
