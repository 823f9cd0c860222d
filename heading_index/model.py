"""The plain data the index deals in: frozen dataclasses, offsets in code points."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Heading:
    level: int  # 1..6
    text: str  # plain inline text (DESIGN section 2)
    start: int  # first character of its first line
    end: int  # just past its last line (the underline, for setext)
    section_end: int  # start of the next heading of level <= own, else len(doc)
    path: tuple[str, ...]  # ancestors' texts, root first, self last


@dataclass(frozen=True, slots=True)
class HeadingIndex:
    headings: tuple[Heading, ...]
    length: int  # len() of the indexed text, in code points


@dataclass(frozen=True, slots=True)
class ChunkHeadings:
    heading_text: str | None
    heading_level: int | None
    heading_path: tuple[str, ...]
    parent_position: int | None
