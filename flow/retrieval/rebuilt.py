"""A document's outline and its sections rebuilt from its stored chunks alone
(never from the file), for a chunk table without a sections table: a host's
table made by `chunk_table_sql` (`--table`). Our own tables read
`content_sections` instead (flow/retrieval/sections.py).

The document is rebuilt from its chunks (`hits.stitch`: overlaps kept once,
a gap between two chunks filled to its length with the line breaks it held,
so offsets and line numbers are the document's; only the whitespace in such
gaps may differ from the file). The heading index then runs over that text,
so the outline holds every heading, also those that govern no chunk (a short
section inside a chunk that starts before it). The sections are those the
ingest makes of the same text (heading_index/sections.py,
`document_sections`: a section is a heading's span, `[heading start,
section_end)`; a non-empty preamble after any front matter is a section with
an empty path), so their ordinals, and the section ids the API makes of
them, are those of a sections table; which sections a chunk holds is
`sections_held`'s rule too.

Documents that are not markdown (`.txt`, split with `language=None`) have no
headings: their outline is empty and their one section is the whole text.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from mdchunks.db.connection import Connection
from mdchunks.heading_index import build_index, dialect_for
from mdchunks.heading_index.chunk import LineNumbers
from mdchunks.heading_index.searchable import searchable_text, unsearched_spans
from mdchunks.heading_index.sections import document_sections
from mdchunks.retrieval.hits import Piece, stitch
from mdchunks.retrieval.tables import ChunkTable

MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdx")


@dataclass(frozen=True, slots=True)
class SectionSpan:
    ordinal: int  # in document order, the preamble (when not blank) first
    level: int  # 1..6; 0 for the preamble
    heading_path: tuple[str, ...]  # root first, its own heading last; () for the preamble
    char_start: int  # the heading line's start
    char_end: int  # section_end: the next heading of its level or shallower
    start_line: int  # 1-based, the heading's line
    end_line: int  # the section's last line
    body_end: int = -1  # where its own span ends: the next heading of any level


@dataclass(frozen=True, slots=True)
class Document:
    """One document rebuilt from its chunks, and its sections."""

    text: str
    lines: int
    sections: tuple[SectionSpan, ...]
    chunks: tuple[tuple[int, int], ...] = ()  # each stored chunk's [char_start, char_end)
    # The sections' starts, in order (for `held`'s bisect; one list a document).
    starts: tuple[int, ...] = ()
    title: str | None = None  # from its front matter, as its chunk rows keep it
    # The text with its unsearched spans (front matter, MDX's ESM and comments)
    # as spaces, as a chunk's BM25 reads it (heading_index/searchable.py);
    # "" when it has none.
    searchable: str = ""

    def section_text(self, section: SectionSpan) -> str:
        return self.text[section.char_start : section.char_end]

    def parent(self, section: SectionSpan) -> SectionSpan | None:
        """The section that encloses `section`: the nearest before it of a
        shallower level (None at the top level and for the preamble)."""
        if section.level == 0:
            return None
        before = self.sections[: section.ordinal]
        return next((s for s in reversed(before) if 0 < s.level < section.level), None)

    def own_end(self, section: SectionSpan) -> int:
        """Where the section's own span (its heading line and body) ends: at
        the next heading of any level."""
        return section.body_end if section.body_end >= 0 else len(self.text)

    def held(self, start: int, end: int) -> list[tuple[SectionSpan, str, str]]:
        """The sections the text `[start, end)` holds, each with its part of
        that text in the section's own span (`sections_held`: those it meets a
        character of that is not whitespace, as a chunk row's `section_ids`)
        and the same part of the searchable text."""
        found = []
        searchable = self.searchable or self.text
        at = max(bisect_right(self.starts, start) - 1, 0)
        while at < len(self.sections) and self.sections[at].char_start < end:
            section = self.sections[at]
            low, high = max(start, section.char_start), min(end, self.own_end(section))
            part = self.text[low:high]
            if part and not part.isspace():
                found.append((section, part, searchable[low:high]))
            at += 1
        return found

    def chunks_overlapping(self, section: SectionSpan) -> int:
        """How many chunks a whole section's text is rebuilt from."""
        return sum(
            1 for start, end in self.chunks if start < section.char_end and end > section.char_start
        )

    def chunks_holding(self, section: SectionSpan) -> int:
        """How many chunks hold the section (as `held` counts it)."""
        own_end = self.own_end(section)
        return sum(
            1
            for start, end in self.chunks
            if start < own_end
            and end > section.char_start
            and self.text[max(start, section.char_start) : min(end, own_end)].strip()
        )


def document(conn: Connection, table: ChunkTable, source: str, rel_path: str) -> Document | None:
    """The document's text and sections; None when the table holds no chunk of it."""
    rows = conn.execute(
        table.query("document_chunks"), {"source": source, "rel_path": rel_path}
    ).fetchall()
    pieces = [
        Piece(int(position), int(start), int(end), text, first)
        for position, start, end, first, _last, text, _title in rows
    ]
    if not pieces:
        return None
    # From offset 0 and line 1: blank lines the first chunk does not hold count too.
    _, _, text = stitch([Piece(-1, 0, 0, "", 1), *pieces])
    found, searchable = spans(text, rel_path)
    return Document(
        text,
        LineNumbers(text).of(max(len(text) - 1, 0)),
        found,
        tuple((piece.char_start, piece.char_end) for piece in pieces),
        tuple(section.char_start for section in found),
        rows[0][6],
        searchable,
    )


def spans(text: str, rel_path: str) -> tuple[tuple[SectionSpan, ...], str]:
    """The sections of a document's text (see the module docstring) and its
    searchable text ("" when all of it is searched)."""
    lines = LineNumbers(text)
    if not rel_path.lower().endswith(MARKDOWN_SUFFIXES):  # no headings: the text, whole
        if not text.strip():
            return (), ""
        return (SectionSpan(0, 0, (), 0, len(text), *lines.span(0, len(text)), len(text)),), ""
    index = build_index(text, dialect_for(rel_path))
    hidden = [offset for span in unsearched_spans(text, index) for offset in span]
    found = tuple(
        SectionSpan(
            section.ordinal,
            section.heading_level or 0,
            section.heading_path,
            section.start,
            section.end,
            section.start_line,
            section.end_line,
            section.body_end,
        )
        for section in document_sections(text, index, lines=lines)
    )
    return found, searchable_text(text, hidden) if hidden else ""


def find(sections: Sequence[SectionSpan], heading_path: Sequence[str]) -> SectionSpan | None:
    """The first section whose path is `heading_path` (the preamble for `()`)."""
    wanted = tuple(heading_path)
    return next((s for s in sections if s.heading_path == wanted), None)
