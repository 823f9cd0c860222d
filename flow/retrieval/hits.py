"""What a search returns of each ranked chunk, and its section or parent
(`mdchunks search --expand section|parent|none`, `--json`).

- `section`: the hit's governing section, from its heading line, rebuilt
  from the stored chunks, never from the file; it ends where its last chunk
  ends, which may be a little past the section's end (a chunk belongs to the
  section it starts in, and may run on into the next heading): the run
  of the document's chunks, around the hit, whose heading path starts with
  the hit's (a chunk deeper in the section has a longer path; the first
  chunk outside it has another). Consecutive chunks are stitched by their
  offsets: an overlap is kept once; where the splitter dropped whitespace
  between two chunks (a gap between char_end and the next char_start), one
  or two newlines stand in for it, so the text may differ from the file in
  that whitespace only. Its span is the first chunk's char_start to the last
  chunk's char_end; where the splitter placed no boundary at the heading (its
  line sits at the end of the chunk before the run), the section starts at
  that line, found by the heading index over that chunk's text. A preamble
  hit (empty path) names the document root: the whole document.
- `parent`: the row `parent_chunk_id` points at (the first chunk of the
  parent section; docs/assign.md), or none for a top-level hit.

A ranked chunk's row as the search reads it is a `HitRow`; what the search
returns of it is a `SearchHit` (`mdchunks.SearchHit`), which holds its
`Section` or `ParentChunk`; `to_json` is one hit as `search --json` prints it
(JSON Lines, one object per hit). The search's steps: flow/retrieval/pipeline.py.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mdchunks.db.connection import Connection
from mdchunks.heading_index import build_index, render_breadcrumb
from mdchunks.retrieval import snippets
from mdchunks.retrieval.sections import MatchedSection
from mdchunks.retrieval.tables import MANAGED, ChunkTable

EXPANSIONS = ("none", "section", "parent")
DEFAULT_EXPANSION = "none"
# What a face shows of an expanded section unless asked for more: about 5,000
# tokens for an agent, a few screens on a terminal (a 5 MB preamble is one
# section too).
SECTION_SHOWN_CHARS = 20_000


@dataclass(frozen=True, slots=True)
class Piece:
    position: int
    char_start: int
    char_end: int
    text: str
    # 1-based line of its first character, when the row has it (stitch then
    # fills a gap with exactly the line breaks it held).
    start_line: int | None = None


@dataclass(frozen=True, slots=True)
class Section:
    char_start: int
    char_end: int
    heading_path: tuple[str, ...]
    text: str
    chunks: int  # how many stored chunks it was rebuilt from


@dataclass(frozen=True, slots=True)
class ParentChunk:
    id: uuid.UUID
    position: int
    char_start: int
    char_end: int
    heading_path: tuple[str, ...]
    breadcrumb: str | None
    text: str


@dataclass(frozen=True, slots=True)
class HitRow:
    """A ranked chunk's row as `rankings.hits_sql` reads it."""

    id: uuid.UUID
    source: str
    rel_path: str
    position: int
    heading_path: tuple[str, ...]
    breadcrumb: str | None  # the stored one; None for an empty heading path
    snippet: str  # PostgreSQL's headline, before `snippets.shown`
    char_start: int
    char_end: int
    text: str
    start_line: int | None
    end_line: int | None
    unsearched: tuple[int, ...]  # the spans BM25 leaves out, as flat pairs of offsets
    title: str | None
    language: str | None

    @classmethod
    def of(cls, row: Sequence[Any]) -> HitRow:
        id_, src, rel_path, position, path, crumb, snippet, start, end, text, *rest = row
        first, last, unsearched, title, language = rest
        return cls(
            id_,
            src,
            rel_path,
            int(position),
            tuple(path or ()),
            crumb,
            str(snippet),
            int(start),
            int(end),
            text,
            first,
            last,
            tuple(unsearched or ()),
            title,
            language,
        )


@dataclass(frozen=True, slots=True)
class SearchHit:
    rank: float
    source: str
    rel_path: str
    position: int
    heading_path: tuple[str, ...]
    snippet: str  # matches between HIGHLIGHT_START and HIGHLIGHT_STOP
    # The stored `breadcrumb` column: rendered at ingest within the recipe's
    # budget (a truncated one starts with `…`); None for an empty heading path.
    stored_breadcrumb: str | None = None
    # The chunk itself, and what `expand` asked for (the module docstring).
    id: uuid.UUID | None = None
    char_start: int = 0
    char_end: int = 0
    # 1-based lines of its first and last character; None for a row written
    # before migration 0009 whose document was not processed since.
    start_line: int | None = None
    end_line: int | None = None
    text: str = ""
    expand: str = DEFAULT_EXPANSION
    section: Section | None = None
    parent: ParentChunk | None = None
    # The section among those the chunk holds where the match lies
    # (docs/sections.md); None for rows written before sections existed.
    matched_section: MatchedSection | None = None
    # The document's title from its front matter (the root of the breadcrumb).
    title: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The hit as `search --json` prints it (one JSON object per line)."""
        return to_json(self)

    @property
    def breadcrumb(self) -> str:
        """What `mdchunks search` shows: the matched section's breadcrumb, else
        the stored one (the section the chunk starts in; both rooted at the
        document's title), `(preamble)` before the first heading of a document
        without a title. Rows written before migration 0006 have no stored
        breadcrumb: theirs is rendered from the path."""
        if self.matched_section is not None:
            return self.matched_section.section.shown
        if self.stored_breadcrumb is not None:
            return self.stored_breadcrumb
        return render_breadcrumb(self.heading_path)[0] if self.heading_path else "(preamble)"

    @property
    def plain_snippet(self) -> str:
        return self.snippet.replace(snippets.HIGHLIGHT_START, "").replace(
            snippets.HIGHLIGHT_STOP, ""
        )


def stitch(pieces: Sequence[Piece]) -> tuple[int, int, str]:
    """(char_start, char_end, text) of consecutive chunks (see the module
    docstring). Where every piece knows its start line, a gap is filled to its
    exact length, with the line breaks it held after spaces, so offsets and
    lines in the text are the document's (flow/retrieval/rebuilt.py)."""
    if not pieces:
        raise ValueError("a section needs at least one chunk")
    start, end, parts = pieces[0].char_start, pieces[0].char_end, [pieces[0].text]
    line = pieces[0].start_line  # the line at `end`, while every piece knows its own
    if line is not None:
        line += pieces[0].text.count("\n")
    for piece in pieces[1:]:
        added = ""
        if piece.char_start >= end:
            gap = piece.char_start - end
            if line is not None and piece.start_line is not None:
                breaks = max(0, min(gap, piece.start_line - line))
                added = " " * (gap - breaks) + "\n" * breaks + piece.text
            else:
                added = "\n" * min(gap, 2) + piece.text
        elif piece.char_end > end:  # overlap: only what is new
            added = piece.text[end - piece.char_start :]
        parts.append(added)
        line = None if line is None or piece.start_line is None else line + added.count("\n")
        end = max(end, piece.char_end)
    return start, end, "".join(parts)


def section_run(pieces: Sequence[Piece], position: int) -> list[Piece]:
    """The contiguous run of positions around `position` (pieces sorted by position)."""
    index = next(i for i, piece in enumerate(pieces) if piece.position == position)
    first = last = index
    while first > 0 and pieces[first - 1].position == pieces[first].position - 1:
        first -= 1
    while last + 1 < len(pieces) and pieces[last + 1].position == pieces[last].position + 1:
        last += 1
    return list(pieces[first : last + 1])


def sections(
    conn: Connection,
    hits: Mapping[uuid.UUID, tuple[int, tuple[str, ...]]],
    table: ChunkTable = MANAGED,
) -> dict[uuid.UUID, Section]:
    """Each hit's section: hits maps chunk id -> (position, heading path)."""
    grouped: dict[uuid.UUID, list[tuple[Piece, bool]]] = {}
    for hit_id, position, char_start, char_end, text, in_section in conn.execute(
        table.query("search_section_chunks"), {"ids": list(hits)}
    ):
        piece = Piece(position, char_start, char_end, text)
        grouped.setdefault(hit_id, []).append((piece, bool(in_section)))
    found = {}
    for hit_id, pieces in grouped.items():
        position, path = hits[hit_id]
        run = section_run([piece for piece, inside in pieces if inside], position)
        before = [piece for piece, _ in pieces if piece.position == run[0].position - 1]
        if path and before:
            run = heading_lead(before[0], path[-1]) + run
        start, end, text = stitch(run)
        found[hit_id] = Section(start, end, path, text, len(run))
    return found


def heading_lead(before: Piece, heading: str) -> list[Piece]:
    """The tail of the chunk before a section's run, from the section's heading
    line on, when the splitter left that line there; else nothing. The heading
    is found by the heading index over that chunk's text (its last heading of
    that text)."""
    found = [h for h in build_index(before.text).headings if h.text == heading]
    if not found:
        return []
    offset = found[-1].start
    return [
        Piece(before.position, before.char_start + offset, before.char_end, before.text[offset:])
    ]


def parents(
    conn: Connection, ids: Sequence[uuid.UUID], table: ChunkTable = MANAGED
) -> dict[uuid.UUID, ParentChunk]:
    """Each hit's parent chunk (hits without one are absent)."""
    return {
        hit_id: ParentChunk(
            parent_id, position, char_start, char_end, tuple(path or ()), breadcrumb, text
        )
        for hit_id, parent_id, position, char_start, char_end, path, breadcrumb, text in (
            conn.execute(table.query("search_parents"), {"ids": list(ids)})
        )
    }


def expansions(
    conn: Connection,
    hits: Mapping[uuid.UUID, tuple[int, tuple[str, ...]]],
    expand: str,
    table: ChunkTable = MANAGED,
) -> tuple[dict[uuid.UUID, Section], dict[uuid.UUID, ParentChunk]]:
    """What `expand` asks for of the hits (chunk id -> (position, heading path))."""
    if expand == "section":
        return sections(conn, hits, table), {}
    if expand == "parent":
        return {}, parents(conn, list(hits), table)
    return {}, {}


def to_json(hit: SearchHit) -> dict[str, Any]:
    """One `SearchHit` as `search --json` prints it."""
    record: dict[str, Any] = {
        "id": str(hit.id),
        "source": hit.source,
        "rel_path": hit.rel_path,
        "position": hit.position,
        "char_start": hit.char_start,
        "char_end": hit.char_end,
        "start_line": hit.start_line,
        "end_line": hit.end_line,
        "heading_path": list(hit.heading_path),
        "breadcrumb": hit.stored_breadcrumb,
        "title": hit.title,
        "score": hit.rank,
        "text": hit.text,
        "matched_section": (
            None if hit.matched_section is None else hit.matched_section.section.to_json()
        ),
    }
    if hit.section is not None:
        section = hit.section
        record["section"] = {
            "char_start": section.char_start,
            "char_end": section.char_end,
            "heading_path": list(section.heading_path),
            "text": section.text,
        }
    if hit.expand == "parent":
        parent = hit.parent
        record["parent"] = (
            None
            if parent is None
            else {
                "id": str(parent.id),
                "position": parent.position,
                "char_start": parent.char_start,
                "char_end": parent.char_end,
                "heading_path": list(parent.heading_path),
                "breadcrumb": parent.breadcrumb,
                "text": parent.text,
            }
        )
    return record
