"""A document's text: the bytes of a file turned into the text every offset
refers to, or a `DocumentProblem` that says why it cannot be (docs/plugin.md).

The managed source reads its files defensively first (flow/source/files.py);
a host app hands in the bytes it read itself.
"""

from __future__ import annotations

from mdchunks.heading_index import DocumentDecodeError, decode_document


class DocumentProblem(Exception):
    """A document that cannot be ingested as it is (the message says why).

    Deterministic in the file's bytes: the document declares no chunk rows, its
    document row carries the message, and the memo keeps that until the file
    (or the recipe) changes, so it is reported again on every run meanwhile.
    """


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
