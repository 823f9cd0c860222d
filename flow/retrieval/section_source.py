"""Where a read's sections come from: the one place that tells our tables
from a host's (docs/sections.md).

- `StoredSections`: our tables, whose sections are rows of their own
  (`content_sections`, flow/retrieval/sections.py), exactly as the ingest cut them.
- `RebuiltSections`: a host's chunk table (`--table`), which has no sections
  table: each document is rebuilt from its chunks and the heading index run
  over it (flow/retrieval/rebuilt.py), once a read, and its sections named as
  the sections table would name them (the same ids and breadcrumbs).

Both answer the same four questions: the slices of the sections a hit's chunk
holds (for its matched section), a matched section's whole text (`--expand
section`), a document's outline, and one section by heading path or id
(`read_section`). The search's steps (flow/retrieval/pipeline.py) and the
API's reads ask a `SectionSource` and never which table it is.

A section's id is the plugin face's `section_id` (flow/plugin/rows.py),
handed in as `SectionIdOf`: retrieval and the plugin face are rooms that
import neither (docs/layout.md).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from mdchunks.db.connection import Connection
from mdchunks.errors import UsageError
from mdchunks.heading_index import render_breadcrumb
from mdchunks.retrieval import rebuilt, sections
from mdchunks.retrieval.hits import HitRow, Section
from mdchunks.retrieval.tables import ChunkTable

# The id of the section at an ordinal of a document: (source, rel_path, ordinal).
SectionIdOf = Callable[[str, str, int], uuid.UUID]


@dataclass(frozen=True, slots=True)
class SectionRead:
    source: str
    rel_path: str
    section_id: uuid.UUID
    heading_path: tuple[str, ...]  # () for the preamble
    start_line: int
    end_line: int
    char_start: int
    char_end: int
    text: str  # the whole section, or its first max_chars characters
    omitted_chars: int  # what max_chars left out (0: the text is whole)
    # Its breadcrumb, rooted at the page title (None: a preamble without one).
    breadcrumb: str | None = None


def section_read(
    source: str, rel_path: str, ref: sections.SectionRef, text: str, max_chars: int | None
) -> SectionRead:
    """A section and its text, cut at `max_chars` (None: whole)."""
    shown_text = text if max_chars is None else text[:max_chars]
    return SectionRead(
        source,
        rel_path,
        ref.id,
        ref.heading_path,
        ref.start_line,
        ref.end_line,
        ref.char_start,
        ref.char_end,
        shown_text,
        len(text) - len(shown_text),
        ref.breadcrumb,
    )


class SectionSource(Protocol):
    """What a search and the API's reads ask of a table's sections."""

    def held(self, rows: Mapping[uuid.UUID, HitRow]) -> dict[uuid.UUID, list[sections.Slice]]:
        """The slices of the sections each hit's chunk holds, in document order."""
        ...

    def section(self, row: HitRow, ref: sections.SectionRef) -> Section | None:
        """The whole section `ref` of the hit's document (None: not there now)."""
        ...

    def outline(self, source: str | None, rel_path: str | None) -> list[sections.DocumentOutline]:
        """The outlines of a document, of a source's documents, or of all."""
        ...

    def find(
        self,
        source: str,
        rel_path: str,
        heading_path: Sequence[str] | None,
        section_id: uuid.UUID | None,
    ) -> tuple[sections.SectionRef, str]:
        """One section, by heading path or else by id, and its text; a
        `UsageError` naming what is not there."""
        ...


def section_source(conn: Connection, table: ChunkTable, ids: SectionIdOf) -> SectionSource:
    """The sections of `table`: its stored rows when it is ours, else rebuilt."""
    if table.managed:
        return StoredSections(conn, ids)
    return RebuiltSections(conn, table, ids)


@dataclass(frozen=True, slots=True)
class StoredSections:
    """Our tables: the sections table's rows."""

    conn: Connection
    ids: SectionIdOf

    def held(self, rows: Mapping[uuid.UUID, HitRow]) -> dict[uuid.UUID, list[sections.Slice]]:
        return sections.hit_slices(self.conn, list(rows))

    def section(self, row: HitRow, ref: sections.SectionRef) -> Section | None:
        found = sections.section_text(self.conn, ref.id)
        if found is None:
            return None
        stored, text, chunks = found
        return Section(stored.char_start, stored.char_end, stored.heading_path, text, chunks)

    def outline(self, source: str | None, rel_path: str | None) -> list[sections.DocumentOutline]:
        return sections.outline(self.conn, source=source, rel_path=rel_path)

    def find(
        self,
        source: str,
        rel_path: str,
        heading_path: Sequence[str] | None,
        section_id: uuid.UUID | None,
    ) -> tuple[sections.SectionRef, str]:
        if heading_path is not None:
            candidates = sections.find_section(self.conn, source, rel_path, heading_path)
            if not candidates:
                if not sections.outline(self.conn, source=source, rel_path=rel_path):
                    raise UsageError(
                        f"no document {rel_path[:200]!r} in source {source!r} "
                        "(search hits name their rel_path)"
                    )
                raise UsageError(
                    f"{rel_path}: no section with heading path {list(heading_path)!r} "
                    "(`outline` lists them)"
                )
            wanted = candidates[0].id
        else:
            wanted = uuid.UUID(str(section_id))  # a uuid: read_section checked it
        found = sections.section_text(self.conn, wanted)
        # An id of another document's section is no section of this one.
        if found is None or self.ids(source, rel_path, found[0].ordinal) != found[0].id:
            raise UsageError(f"{rel_path}: no section with id {str(section_id)[:80]!r}")
        ref, text, _chunks = found
        return ref, text


@dataclass(frozen=True, slots=True)
class RebuiltSections:
    """A host's chunk table: each document rebuilt from its chunks."""

    conn: Connection
    table: ChunkTable
    ids: SectionIdOf
    # Each document rebuilt once a read (a search's hits share their documents).
    documents: dict[tuple[str, str], rebuilt.Document] = field(default_factory=dict)

    def document(self, source: str, rel_path: str) -> rebuilt.Document:
        found = self.documents.get((source, rel_path))
        if found is None:
            found = rebuilt.document(self.conn, self.table, source, rel_path)
            if found is None:
                raise UsageError(
                    f"no document {rel_path[:200]!r} in source {source!r} "
                    "(search hits name their rel_path)"
                )
            self.documents[(source, rel_path)] = found
        return found

    def ref(
        self, source: str, rel_path: str, span: rebuilt.SectionSpan, title: str | None
    ) -> sections.SectionRef:
        """A rebuilt section as the sections table would name it: the same id
        (by its ordinal: two sections of one heading path are two) and
        breadcrumb (under the document's `title`, as its rows keep it)."""
        return sections.SectionRef(
            id=self.ids(source, rel_path, span.ordinal),
            ordinal=span.ordinal,
            heading_text=span.heading_path[-1] if span.heading_path else None,
            heading_level=span.level or None,
            heading_path=span.heading_path,
            breadcrumb=render_breadcrumb(span.heading_path, title=title)[0] or None,
            char_start=span.char_start,
            char_end=span.char_end,
            start_line=span.start_line,
            end_line=span.end_line,
        )

    def held(self, rows: Mapping[uuid.UUID, HitRow]) -> dict[uuid.UUID, list[sections.Slice]]:
        # Each hit's pieces, then every piece's vectors parsed in one statement.
        pieces: dict[uuid.UUID, list[tuple[sections.SectionRef, bool, str, str, str | None]]] = {}
        for chunk_id, row in rows.items():
            document = self.document(row.source, row.rel_path)
            pieces[chunk_id] = [
                (
                    self.ref(row.source, row.rel_path, span, document.title),
                    span.heading_path == row.heading_path,
                    part,
                    searched,
                    row.language,
                )
                for span, part, searched in document.held(row.char_start, row.char_end)
            ]
        flat = sections.slices_of(self.conn, [piece for each in pieces.values() for piece in each])
        slices: dict[uuid.UUID, list[sections.Slice]] = {}
        at = 0
        for chunk_id, each in pieces.items():
            slices[chunk_id] = flat[at : at + len(each)]
            at += len(each)
        return slices

    def section(self, row: HitRow, ref: sections.SectionRef) -> Section | None:
        document = self.document(row.source, row.rel_path)
        span = document.sections[ref.ordinal]
        return Section(
            ref.char_start,
            ref.char_end,
            ref.heading_path,
            document.section_text(span),
            document.chunks_overlapping(span),
        )

    def outline(self, source: str | None, rel_path: str | None) -> list[sections.DocumentOutline]:
        # A host's table is outlined a document at a time: the API asks for
        # both names before it reads (`outline`).
        assert source is not None and rel_path is not None
        document = self.document(source, rel_path)
        entries = []
        for span in document.sections:
            parent = document.parent(span)
            entries.append(
                sections.OutlineEntry(
                    self.ref(source, rel_path, span, document.title),
                    None if parent is None else self.ids(source, rel_path, parent.ordinal),
                    chunks=document.chunks_holding(span),
                )
            )
        return [sections.DocumentOutline(source, rel_path, tuple(entries), title=document.title)]

    def find(
        self,
        source: str,
        rel_path: str,
        heading_path: Sequence[str] | None,
        section_id: uuid.UUID | None,
    ) -> tuple[sections.SectionRef, str]:
        document = self.document(source, rel_path)
        if heading_path is not None:
            span = rebuilt.find(document.sections, heading_path)
            if span is None:
                known = [" > ".join(s.heading_path) for s in document.sections if s.heading_path]
                raise UsageError(
                    f"{rel_path}: no section with heading path {list(heading_path)!r} "
                    f"({len(known)} headings; `outline` lists them)"
                )
        else:
            by_id = {str(self.ids(source, rel_path, s.ordinal)): s for s in document.sections}
            found = by_id.get(str(section_id).strip().lower())
            if found is None:
                raise UsageError(f"{rel_path}: no section with id {str(section_id)[:80]!r}")
            span = found
        return self.ref(source, rel_path, span, document.title), document.section_text(span)
