"""PDF -> markdown: the text in reading order, headings from the outline,
else from what the pages show (docs/importers.md, "PDF headings from the page").

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
put after the heading before it. An outline of one entry (a paper's title)
and no outline at all: the headings the pages show (`pdf_layout`, fed by
the text visitor in the same pass), under that title; running headers and
footers on every page are left out of the text. A PDF with no heading
found either way is text, and its `note` says so (the summary counts them).
Encrypted PDFs are read when the empty password opens them.
"""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from mdchunks.importers import markdown as md
from mdchunks.importers import pdf_layout as layout
from mdchunks.importers.base import ConversionFailed, Converted, Importer, library_missing

VERSION = "2"

NO_HEADINGS = "no outline (bookmarks), no headings on its pages: text without headings"


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
        pages: list[str] = []
        shown: list[layout.Page] = []
        for page in reader.pages:
            pieces: list[layout.Piece] = []
            visitor = _Visitor(_fonts_of(page), pieces)
            text = page.extract_text(
                visitor_text=visitor.text,
                visitor_operand_before=visitor.before,
                visitor_operand_after=visitor.after,
            )
            pages.append(md.clean(text or ""))
            box = page.mediabox
            shown.append(layout.Page(layout.lines_of(pieces), float(box.top), float(box.bottom)))
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
    pages, starts = _without_running(pages, shown)
    if len(entries) > 1:
        blocks, headings = place_headings(pages, entries)
        return Converted(md.document(blocks), headings)
    # No outline, or one entry (a paper's title): the headings the pages show,
    # under that title when there is one.
    below = 1 if entries else 0
    placed = [
        _Placed(found.text, found.page, found.level + below, required=False)
        for found in layout.headings(shown)
        if not entries or md.one_line(found.text).lower() != entries[0].title.lower()
    ]
    if entries:
        title_page = min(entries[0].page or 0, max(len(shown) - 1, 0))
        # Searched for only where the page shows it as a line of the body's
        # size or larger outside the margins: a paper's title repeats in the
        # small running header of every page, which is no place for its H1.
        shows = bool(shown) and layout.shows_title(shown, title_page, entries[0].title)
        placed.insert(0, _Placed(entries[0].title, title_page, 1, required=True, search=shows))
        placed.sort(key=lambda item: item.page)  # stable: the title first on its page
    blocks, headings = _place(pages, starts, placed)
    note = None if headings else NO_HEADINGS
    return Converted(md.document(blocks), headings, note=note)


class _Visitor:
    """pypdf's text visitors that keep each piece's position, size and weight.

    The font is followed here, from the operators: the font pypdf hands the
    text visitor is the one current when it flushes, which after a `Q` (a
    restored graphics state) or a `Tf` is not the font the text was shown in.
    """

    def __init__(self, fonts: Any, pieces: list[layout.Piece]) -> None:
        self._fonts = fonts  # the page's /Font resources
        self._pieces = pieces
        self._current: Any = None  # the font name set by the last `Tf`
        self._stack: list[Any] = []
        self._pending: Any = None  # the font of the text not yet flushed
        self._styles: dict[Any, layout.Style] = {}

    def before(self, operator: bytes, operands: Any, cm: Any, tm: Any) -> None:
        if operator == b"Tf" and operands:
            self._current = operands[0]
        elif operator == b"q":
            self._stack.append(self._current)
        elif operator == b"Q" and self._stack:
            self._current = self._stack.pop()
        elif operator in _SHOWING and self._pending is None:
            self._pending = self._current

    def after(self, operator: bytes, operands: Any, cm: Any, tm: Any) -> None:
        if operator in _SHOWING and self._pending is None:
            self._pending = self._current

    def text(self, text: str, cm: Any, tm: Any, font: Any, size: float) -> None:
        name, self._pending = self._pending, None
        if not text.strip():
            return
        # The text matrix then the current transformation: the piece's origin
        # and its vertical scale (the font size as shown).
        x = tm[4] * cm[0] + tm[5] * cm[2] + cm[4]
        y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
        scale_x = tm[2] * cm[0] + tm[3] * cm[2]
        scale_y = tm[2] * cm[1] + tm[3] * cm[3]
        shown_size = abs(size) * (scale_x * scale_x + scale_y * scale_y) ** 0.5
        key = name if name is not None else id(font)
        style = self._styles.get(key)
        if style is None:
            own = None
            with contextlib.suppress(Exception):  # a damaged resource: the flushed font
                own = self._fonts[name].get_object() if name is not None else None
            style = self._styles[key] = _style(own if own is not None else font)
        self._pieces.append(
            layout.Piece(text, x, y, round(shown_size, 1), style.bold, style.italic, style.mono)
        )


_SHOWING = frozenset({b"Tj", b"TJ", b"'", b'"'})


def _fonts_of(page: Any) -> Any:
    try:
        return page["/Resources"].get_object()["/Font"].get_object()
    except Exception:  # no resources, or damaged ones
        return {}


def _style(font: Any) -> layout.Style:
    """A font's style: by its name and its descriptor."""
    if not font:
        return layout.Style()
    try:
        name = str(font.get("/BaseFont", ""))
        descriptor = font.get("/FontDescriptor")
        if descriptor is None and "/DescendantFonts" in font:  # a composite (Type0) font
            descriptor = font["/DescendantFonts"][0].get_object().get("/FontDescriptor")
        descriptor = descriptor.get_object() if descriptor is not None else {}
        return layout.style_of(
            name,
            float(descriptor.get("/FontWeight", 0) or 0),
            int(descriptor.get("/Flags", 0) or 0),
            float(descriptor.get("/ItalicAngle", 0) or 0),
        )
    except (AttributeError, TypeError, ValueError, KeyError, IndexError):
        return layout.Style()


def _without_running(pages: list[str], shown: list[layout.Page]) -> tuple[list[str], list[int]]:
    """Each page's text without the running headers and footers that repeat on
    every page, and where its own text starts after the running lines left
    at its top (a title search starts there, not on the running header)."""
    keys, every = layout.running(shown)
    texts: list[str] = []
    starts: list[int] = []
    for text, page in zip(pages, shown, strict=True):
        band = {
            layout.running_key(line.text)
            for line in page.lines
            if layout.is_running(line, page, keys)
        }
        lines = text.split("\n")
        edge = [i for i in range(len(lines)) if i < 3 or i >= len(lines) - 3]
        drop = {
            i
            for i in edge
            if (key := layout.running_key(lines[i])) in every and key in band and key
        }
        kept = [line for i, line in enumerate(lines) if i not in drop]
        start = 0
        for line in kept:
            key = layout.running_key(line)
            if not line.strip() or (key in band and key):
                start += len(line) + 1
                continue
            break
        texts.append("\n".join(kept))
        starts.append(min(start, len(texts[-1])))
    return texts, starts


@dataclass(frozen=True, slots=True)
class _Placed:
    text: str
    page: int
    level: int
    required: bool  # a bookmark: placed where the search started when not found
    search: bool = True  # False: a heading of its own, before the page's text


def _place(pages: list[str], starts: list[int], items: list[_Placed]) -> tuple[list[str], int]:
    """The blocks of the document with each heading at its line on its page;
    a heading the page shows is always in its text (else it is dropped)."""
    by_page: dict[int, list[_Placed]] = {}
    for item in items:
        by_page.setdefault(min(item.page, max(len(pages) - 1, 0)), []).append(item)
    blocks: list[str] = []
    placed = 0
    for number, text in enumerate(pages):
        waiting = by_page.get(number, [])
        cursor = starts[number] if waiting and waiting[0].search else 0
        blocks.extend(md.paragraphs(text[:cursor]))
        for item in by_page.get(number, []):
            found = _find_line(text, item.text, cursor) if item.search else None
            if found is None and not item.required:
                continue
            start, end = found if found is not None else (cursor, cursor)
            blocks.extend(md.paragraphs(text[cursor:start]))
            title = md.one_line(text[start:end]) if found is not None else item.text
            blocks.append(md.heading(item.level, title))
            placed += 1
            cursor = end
        blocks.extend(md.paragraphs(text[cursor:]))
    if not pages:  # no page to place a bookmark on: kept rather than lost
        blocks.extend(md.heading(item.level, item.text) for item in items if item.required)
        placed += sum(1 for item in items if item.required)
    return blocks, placed


def _find_line(text: str, title: str, start: int) -> tuple[int, int] | None:
    """Where a line's text is in the page text, whitespace aside (the visitor's
    pieces and the extracted text may space a line differently), at a line's
    start first."""
    chars = [re.escape(char) for char in title if not char.isspace()]
    if not chars:
        return None
    pattern = r"\s*".join(chars)
    for anchored in (r"(?m)^[ \t]*(" + pattern + ")", "(" + pattern + ")"):
        found = re.compile(anchored).search(text, start)
        if found:
            return found.start(1), found.end(1)
    return None


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
