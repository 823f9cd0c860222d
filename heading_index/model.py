"""The plain data the index deals in: frozen dataclasses, offsets in code points."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Heading:
    """One structural heading; offsets are code points of the indexed text."""

    level: int  # 1..6
    text: str  # plain inline text (DESIGN section 2)
    start: int  # start of its first line (indentation included)
    end: int  # just past its last line and that line's ending (the underline, for setext)
    section_end: int  # start of the next heading of level <= own, else len(doc)
    path: tuple[str, ...]  # ancestors' texts, root first, self last
    parent: int | None = None  # index in HeadingIndex.headings of the nearest ancestor
    # Code points right before `start` that are only blank lines (whitespace)
    # and, for the first heading, front matter: a chunk that starts there and
    # holds this heading is governed by it (DESIGN section 3: front matter and
    # blank lines are not content). 0: none.
    lead_in: int = 0


@dataclass(frozen=True, slots=True)
class HeadingIndex:
    """Every structural heading of one document, in document order."""

    headings: tuple[Heading, ...]
    length: int  # len() of the indexed text, in code points


@dataclass(frozen=True, slots=True)
class ChunkHeadings:
    """One chunk's heading columns; the three heading fields are None/() together."""

    heading_text: str | None
    heading_level: int | None
    heading_path: tuple[str, ...]
    parent_position: int | None
