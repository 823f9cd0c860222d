"""PDF -> markdown: the text in reading order, headings from the outline.

Read by pypdf (pure Python, no network). The text is each page's text as
pypdf extracts it (content order, which is reading order for the PDFs
word processors and typesetters write), pages separated by a blank line.

A PDF carries no headings in its text; its outline (the bookmarks) is the
structure its author gave it. Each outline entry becomes a heading at its
nesting depth (level 1 at the top, past 6 kept as 6), placed where its
title starts on its destination page: searched from the previous heading
on that page onwards, whitespace and case aside, at a line's start first;
the matched title becomes the heading line. A title not found on its page
is put at the place searched from (the page's start, or just after the
previous heading there); an entry whose destination cannot be resolved is
put after the heading before it. A PDF without an outline is text without
headings, and its `note` says so (the ingest summary counts them).
Encrypted PDFs are read when the empty password opens them.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from mdchunks.importers import markdown as md
from mdchunks.importers.base import ConversionFailed, Converted, Importer, library_missing

VERSION = "1"

NO_OUTLINE = "no outline (bookmarks): text without headings"


@dataclass(frozen=True, slots=True)
class OutlineEntry:
    title: str
    level: int  # 1..
    page: int | None  # 0-based; None: unresolved


# Where a PDF's "%PDF-" header may sit (readers accept junk before it, to 1 KiB):
# a file pypdf cannot read and that has none there is said to be no PDF.
HEADER_WITHIN = 1024


def convert(data: bytes) -> Converted:
    try:
        from pypdf import PdfReader
    except ImportError:
        raise library_missing("pdf") from None
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise ConversionFailed("encrypted PDF: a password is needed to read it")
        pages = [md.clean(page.extract_text() or "") for page in reader.pages]
        entries = list(_outline(reader))
    except ConversionFailed:
        raise
    except Exception as exc:  # pypdf's errors (PdfReadError and others): this file's alone
        if b"%PDF-" not in data[:HEADER_WITHIN]:
            # pypdf's cause for a text file named .pdf ("Stream has ended
            # unexpectedly") reads as a damaged PDF. Asked only of a file it
            # could not read: what it reads stays read, whatever its header.
            raise ConversionFailed(
                f"not a PDF: no %PDF- header in its first {HEADER_WITHIN:,} bytes"
            ) from None
        cause = md.one_line(str(exc)) or type(exc).__name__
        raise ConversionFailed(f"cannot read this PDF: {cause}") from None
    if not entries:
        blocks = [block for page in pages for block in md.paragraphs(page)]
        return Converted(md.document(blocks), 0, note=NO_OUTLINE)
    blocks, headings = place_headings(pages, entries)
    return Converted(md.document(blocks), headings)


def _outline(reader: Any) -> Iterator[OutlineEntry]:
    """The outline's entries in order, with their depth and page."""
    from pypdf.generic import Destination

    def walk(items: list[Any], depth: int) -> Iterator[OutlineEntry]:
        for item in items:
            if isinstance(item, list):
                if depth < 64:  # a hostile outline can nest without end
                    yield from walk(item, depth + 1)
            elif isinstance(item, Destination):
                title = md.one_line(str(item.title or ""))
                if title:
                    yield OutlineEntry(title, depth + 1, _page_of(reader, item))

    yield from walk(reader.outline, 0)


def _page_of(reader: Any, destination: Any) -> int | None:
    try:
        page = reader.get_destination_page_number(destination)
    except Exception:  # a broken destination: placed after the heading before it
        return None
    return page if isinstance(page, int) and 0 <= page < len(reader.pages) else None


def place_headings(pages: list[str], entries: list[OutlineEntry]) -> tuple[list[str], int]:
    """The blocks of the document: each page's text with the outline's headings
    placed where their titles start (module docstring). A title found not on
    its destination page but at the next one's is placed there (a heading
    that a page break carried over). Pure: text and entries in, blocks out."""
    by_page: dict[int, list[OutlineEntry]] = {}
    last_page = 0
    for entry in entries:
        page = entry.page if entry.page is not None else last_page
        by_page.setdefault(page, []).append(entry)
        last_page = page
    blocks: list[str] = []
    carried: list[OutlineEntry] = []
    grams = _Grams(pages)
    for number, text in enumerate(pages):
        cursor = 0
        waiting = carried + by_page.get(number, [])
        carried = []
        for index, entry in enumerate(waiting):
            found = _find_title(text, entry.title, cursor, grams.of(number))
            following = pages[number + 1] if number + 1 < len(pages) else ""
            if (
                found is None
                and _find_title(following, entry.title, 0, grams.of(number + 1)) is not None
            ):
                carried = waiting[index:]  # the rest follow it, in order
                break
            start, end = found if found is not None else (cursor, cursor)
            blocks.extend(md.paragraphs(text[cursor:start]))
            blocks.append(md.heading(entry.level, entry.title))
            cursor = end
        blocks.extend(md.paragraphs(text[cursor:]))
    for entry in carried:  # never reached: kept at the end rather than lost
        blocks.append(md.heading(entry.level, entry.title))
    for page in sorted(p for p in by_page if p >= len(pages)):
        blocks.extend(md.heading(entry.level, entry.title) for entry in by_page[page])
    return blocks, len(entries)


class _Grams:
    """Each page's pieces of 1-3 characters (folded), made once per page: a
    title with a word not made of them is not on the page, known without a
    search. Searching every title through its page was quadratic (issue 42:
    a 617 KB PDF whose bookmark titles are not on its pages took 130 s)."""

    def __init__(self, pages: list[str]) -> None:
        self._pages = pages
        self._made: dict[int, frozenset[str]] = {}

    def of(self, number: int) -> frozenset[str]:
        if number not in self._made:
            text = _fold(self._pages[number]) if number < len(self._pages) else ""
            self._made[number] = frozenset(
                text[i : i + n] for n in (1, 2, 3) for i in range(len(text) - n + 1)
            )
        return self._made[number]


def _fold(text: str) -> str:
    # Case-folded, with the two pairs `re.IGNORECASE` matches that folding
    # keeps apart (dotless i; the dot of a capital I folded) made one.
    return text.casefold().replace("\u0131", "i").replace("\u0307", "")


def _may_hold(grams: frozenset[str], title: str) -> bool:
    """False when a word of `title` cannot be in the page of `grams`."""
    for word in _fold(title).split():
        pieces = [word] if len(word) <= 3 else [word[i : i + 3] for i in range(len(word) - 2)]
        if any(piece not in grams for piece in pieces):
            return False
    return True


def _find_title(
    text: str, title: str, start: int, grams: frozenset[str] | None = None
) -> tuple[int, int] | None:
    if grams is not None and not _may_hold(grams, title):
        return None
    words = [re.escape(word) for word in title.split()]
    pattern = r"\s+".join(words)
    for anchored in (r"(?m)^[ \t]*(" + pattern + ")", "(" + pattern + ")"):
        found = re.compile(anchored, re.IGNORECASE).search(text, start)
        if found:
            return found.start(1), found.end(1)
    return None


IMPORTER = Importer(
    name="pdf",
    version=VERSION,
    suffixes=(".pdf",),
    libraries=("pypdf",),
    convert=convert,
)
