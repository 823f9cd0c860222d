"""The plain data the index deals in: frozen dataclasses, offsets in code points."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Heading:
    """One structural heading; offsets are code points of the indexed text."""

    level: int  # 1..6
    text: str  # plain inline text (docs/heading-index.md)
    start: int  # start of its first line (indentation included)
    end: int  # just past its last line and that line's ending (the underline, for setext)
    section_end: int  # start of the next heading of level <= own, else len(doc)
    path: tuple[str, ...]  # ancestors' texts, root first, self last
    parent: int | None = None  # index in HeadingIndex.headings of the nearest ancestor
    # Code points right before `start` that are only blank lines (whitespace)
    # and, for the first heading, front matter: a chunk that starts there and
    # holds this heading is governed by it (docs/assign.md: front matter and
    # blank lines are not content). 0: none.
    lead_in: int = 0


@dataclass(frozen=True, slots=True)
class Section:
    """One section of a document; offsets are code points, lines 1-based."""

    ordinal: int  # position in the document's sections (the preamble is 0)
    heading_text: str | None  # None (and level None, path ()) for the preamble
    heading_level: int | None
    heading_path: tuple[str, ...]
    # The path rendered within the budget under the title; None for the
    # preamble of a document without a title.
    breadcrumb: str | None
    start: int  # the heading line's start (the preamble's: the end of the front matter)
    heading_end: int  # just past the heading's last line (== start for the preamble)
    body_end: int  # the next heading of any level, else the document's end
    end: int  # section_end: the next heading of this level or shallower
    start_line: int
    heading_end_line: int  # last line of the heading (== start_line for the preamble)
    body_end_line: int  # last line of the own span (the heading's, if the body is empty)
    end_line: int  # last line of the whole section
    parent: int | None  # ordinal of the enclosing section (None: top level or preamble)
    # What of the own span [start, body_end) no chunk holds: (offset, text),
    # in order; filled in by `with_gaps` once the chunks are known.
    gaps: tuple[tuple[int, str], ...] = ()
    title: str | None = None  # the document's (HeadingIndex.title)


@dataclass(frozen=True, slots=True)
class HeadingIndex:
    """Every structural heading of one document, in document order."""

    headings: tuple[Heading, ...]
    length: int  # len() of the indexed text, in code points
    # Spans of the text that are no content, in order: in MDX, ESM blocks and
    # flow comments (`{/* ... */}`); () for CommonMark (front matter is found
    # by the parser where needed: blocks.front_matter_end).
    hidden: tuple[tuple[int, int], ...] = ()
    # The document's title from its front matter, set by the caller that read
    # it (the flow: mdchunks.plugin.titles); the root of every breadcrumb
    # (heading_index/breadcrumb.py `rooted`), never a heading. None: no title.
    title: str | None = None


@dataclass(frozen=True, slots=True)
class ChunkHeadings:
    """One chunk's heading columns; the three heading fields are None/() together."""

    heading_text: str | None
    heading_level: int | None
    heading_path: tuple[str, ...]
    parent_position: int | None
