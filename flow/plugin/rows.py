"""The rows the flow writes, and their ids.

`ChunkRow` is the row type of `content_chunks`, `SectionRow` of
`content_sections`, `DocumentRow` of `mdchunks_documents`. The migrations own
the tables (cocoindex never creates, alters or drops them); a test compares
these dataclasses with the columns the migrations create, so the two cannot
drift apart.

Ids are uuid5 over one namespace, computed inline, so the same chunk gets the
same id in every run, on every machine, whatever happened to the engine state:

    id = uuid5(NAMESPACE, f"chunk:{source}:{rel_path}:{position}")

and `parent_chunk_id` is the same formula with the parent's position; a
section's id is `uuid5(NAMESPACE, f"section:{source}:{rel_path}:{ordinal}")`,
`parent_section_id` and a chunk's `section_ids` the same formula.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar, overload

from cocoindex.connectors.postgres import PgType
from mdchunks.heading_index.chunk import HeadingChunk
from mdchunks.heading_index.model import Section

NAMESPACE = uuid.UUID("fb8159f0-c42d-4e50-8a16-a15733f9b164")

CHUNKS_TABLE = "content_chunks"
SECTIONS_TABLE = "content_sections"
DOCUMENTS_TABLE = "mdchunks_documents"
# Columns of a chunk table that no writer sets: its trigger computes them, the
# search columns from text and heading_path (migration 0009), embed_text from
# breadcrumb, table_header and text (migration 0010: the engine then carries
# each text once, not twice). content_chunks stores no embed_text since
# migration 0014: `embed_text(content_chunks)` computes it where it is read.
TRIGGER_COLUMNS = ("search_vector", "search_heading_length", "search_text_length", "embed_text")
# What a row of a chunk holds, as part of the logic a memo sees (flow/plugin/chunking.py):
# 2 added start_line and end_line, so an upgrade processes every document again
# and rows written before get their lines; 3 sends table_header, not embed_text;
# 4 adds section_ids and the section rows (docs/sections.md); 5 the page
# title and the unsearched spans (migration 0017).
ROWS_VERSION = "5"


def chunk_id(source: str, rel_path: str, position: int) -> uuid.UUID:
    """The id of the chunk at `position` of a document (also its children's parent id)."""
    return uuid.uuid5(NAMESPACE, f"chunk:{source}:{rel_path}:{position}")


def section_id(source: str, rel_path: str, ordinal: int) -> uuid.UUID:
    """The id of the section at `ordinal` of a document (docs/sections.md)."""
    return uuid.uuid5(NAMESPACE, f"section:{source}:{rel_path}:{ordinal}")


@dataclass(frozen=True, slots=True)
class ChunkRow:
    """One chunk: `text == document[char_start:char_end]` (code-point offsets)."""

    id: uuid.UUID
    source: str
    rel_path: str
    position: Annotated[int, PgType("integer")]
    char_start: Annotated[int, PgType("integer")]
    char_end: Annotated[int, PgType("integer")]
    text: str
    heading_text: str | None
    heading_level: Annotated[int, PgType("smallint")] | None
    heading_path: Annotated[list[str], PgType("text[]")]
    parent_chunk_id: uuid.UUID | None
    # The heading path rendered `A > B > C` within the recipe's byte budget
    # (truncated from the left, `… > C`); NULL exactly when the path is empty.
    breadcrumb: str | None
    # For a piece of a table split between rows: the table's header rows, which
    # the table's embed_text (set by its trigger: the breadcrumb, a blank line,
    # then the text) puts before the text. NULL for every other chunk.
    table_header: str | None
    recipe: str
    # 1-based lines of the chunk's first and last character (HeadingChunk's).
    start_line: Annotated[int, PgType("integer")] | None
    end_line: Annotated[int, PgType("integer")] | None
    # The sections the chunk holds (HeadingChunk.sections), as section ids.
    section_ids: Annotated[list[uuid.UUID], PgType("uuid[]")]
    # The document's title from its front matter (docs/heading-index.md, "The
    # page title"): the root of `breadcrumb`, searched with the heading path.
    title: str | None
    # What of `text` is no words to search (front matter, MDX's ESM and
    # comments): flat start/end pairs of code-point offsets into `text`, which
    # the trigger blanks before analysing it (heading_index/searchable.py).
    unsearched: Annotated[list[int], PgType("integer[]")]

    def __reduce__(self) -> tuple[Any, ...]:
        return _by_fields(self)


@dataclass(frozen=True, slots=True)
class SectionRow:
    """One section (docs/sections.md): a heading's span, or the preamble's.

    `char_start`..`heading_end` is the heading line(s), `heading_end`..`body_end`
    its own body, `char_start`..`char_end` the whole section; lines are the
    1-based last lines of each part. `gap_starts`/`gap_texts`: what of the own
    span no chunk holds, so the section's text is rebuilt from rows alone.
    """

    id: uuid.UUID
    source: str
    rel_path: str
    ordinal: Annotated[int, PgType("integer")]
    heading_text: str | None
    heading_level: Annotated[int, PgType("smallint")] | None
    heading_path: Annotated[list[str], PgType("text[]")]
    breadcrumb: str | None
    char_start: Annotated[int, PgType("integer")]
    heading_end: Annotated[int, PgType("integer")]
    body_end: Annotated[int, PgType("integer")]
    char_end: Annotated[int, PgType("integer")]
    start_line: Annotated[int, PgType("integer")]
    heading_end_line: Annotated[int, PgType("integer")]
    body_end_line: Annotated[int, PgType("integer")]
    end_line: Annotated[int, PgType("integer")]
    parent_section_id: uuid.UUID | None
    gap_starts: Annotated[list[int], PgType("integer[]")]
    gap_texts: Annotated[list[str], PgType("text[]")]
    recipe: str
    title: str | None  # the document's, the root of `breadcrumb`

    def __reduce__(self) -> tuple[Any, ...]:
        return _by_fields(self)


def _by_fields(row: Any) -> tuple[Any, ...]:
    # Pickled as the class and its fields in order: a large document's rows
    # come back from its child process (flow/source/bounded.py), and a slots
    # dataclass's default state costs about twice the time to load (measured:
    # 50,000 sections, 2.3 s -> 1.3 s).
    kind = type(row)
    names = _FIELD_NAMES.get(kind)
    if names is None:
        names = _FIELD_NAMES[kind] = tuple(f.name for f in dataclasses.fields(kind))
    return kind, tuple(map(row.__getattribute__, names))


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


class SectionIds:
    """`section_id` of one document, each id made once: a section's id is also
    its children's `parent_section_id` and in its chunks' `section_ids`, and
    one shared UUID object instead of three halves the rows' memory and time
    on heading-dense text (issue 26: 100 bytes and 20 us an id, and a
    document with a heading every few bytes has a section for each)."""

    __slots__ = ("_ids", "_rel_path", "_source")

    def __init__(self, source: str, rel_path: str) -> None:
        self._source = source
        self._rel_path = rel_path
        self._ids: dict[int, uuid.UUID] = {}

    def __call__(self, ordinal: int) -> uuid.UUID:
        found = self._ids.get(ordinal)
        if found is None:
            found = self._ids[ordinal] = section_id(self._source, self._rel_path, ordinal)
        return found


def section_rows(
    sections: Iterable[Section],
    *,
    source: str,
    rel_path: str,
    recipe: str = "",
    ids: SectionIds | None = None,
) -> list[SectionRow]:
    """The rows of one document's sections (`Chunking.sections`, in order);
    `ids`: the document's `SectionIds`, to share with its `chunk_rows`."""
    id_of = ids or SectionIds(source, rel_path)
    return [
        SectionRow(
            id=id_of(section.ordinal),
            source=source,
            rel_path=rel_path,
            ordinal=section.ordinal,
            heading_text=section.heading_text,
            heading_level=section.heading_level,
            heading_path=list(section.heading_path),
            breadcrumb=section.breadcrumb,
            char_start=section.start,
            heading_end=section.heading_end,
            body_end=section.body_end,
            char_end=section.end,
            start_line=section.start_line,
            heading_end_line=section.heading_end_line,
            body_end_line=section.body_end_line,
            end_line=section.end_line,
            parent_section_id=None if section.parent is None else id_of(section.parent),
            gap_starts=[start for start, _ in section.gaps],
            gap_texts=[text for _, text in section.gaps],
            recipe=recipe,
            title=section.title,
        )
        for section in sections
    ]


R = TypeVar("R")


# Without `row_type` the rows are ChunkRows; with it, whatever it makes.
@overload
def chunk_rows(
    chunks: Iterable[HeadingChunk],
    *,
    source: str,
    rel_path: str,
    recipe: str = "",
    extra: Callable[[HeadingChunk], Mapping[str, Any]] | None = None,
    ids: SectionIds | None = None,
) -> list[ChunkRow]: ...
@overload
def chunk_rows(
    chunks: Iterable[HeadingChunk],
    *,
    source: str,
    rel_path: str,
    recipe: str = "",
    row_type: Callable[..., R],
    extra: Callable[[HeadingChunk], Mapping[str, Any]] | None = None,
    ids: SectionIds | None = None,
) -> list[R]: ...
def chunk_rows(
    chunks: Iterable[HeadingChunk],
    *,
    source: str,
    rel_path: str,
    recipe: str = "",
    row_type: Callable[..., Any] = ChunkRow,
    extra: Callable[[HeadingChunk], Mapping[str, Any]] | None = None,
    ids: SectionIds | None = None,
) -> list[Any]:
    """The rows of one document's chunks (`split_markdown`'s list, in order),
    with our uuid5 ids: `id` from the chunk's position, `parent_chunk_id` from
    its parent's. A host with columns of its own passes its own row type (a
    dataclass with ChunkRow's fields and its own) and `extra`, the values of
    its columns for a chunk. `recipe` is stored on every row: what made it.
    `ids`: the document's `SectionIds`, shared with its `section_rows`."""
    id_of = ids or SectionIds(source, rel_path)
    made: list[Any] = []
    for position, chunk in enumerate(chunks):
        parent = chunk.parent_index
        fields: dict[str, Any] = {
            "id": chunk_id(source, rel_path, position),
            "source": source,
            "rel_path": rel_path,
            "position": position,
            "char_start": chunk.start,
            "char_end": chunk.end,
            "text": chunk.text,
            "heading_text": chunk.heading_text,
            "heading_level": chunk.heading_level,
            "heading_path": list(chunk.heading_path),
            "parent_chunk_id": None if parent is None else chunk_id(source, rel_path, parent),
            "breadcrumb": chunk.breadcrumb,
            "table_header": chunk.table_header,
            "recipe": recipe,
            "start_line": chunk.start_line,
            "end_line": chunk.end_line,
            "section_ids": [id_of(o) for o in chunk.sections],
            "title": chunk.title,
            "unsearched": list(chunk.unsearched),
        }
        if extra is not None:
            fields.update(extra(chunk))
        made.append(row_type(**fields))
    return made


@dataclass(frozen=True, slots=True)
class DocumentRow:
    """One document of a source, as the last run that processed it saw it.

    Every document the walk hands to cocoindex gets exactly one such row, also
    when it failed (`error` set, `chunks` 0) or is empty; the reconciliation
    writes it from the run's ledger (flow/source/reconcile.py `record_documents`),
    not cocoindex. It is what the
    reconciliation checks the chunk rows against, and how a failure of a
    document that has not changed since is reported again on every run.
    """

    source: str
    rel_path: str
    recipe: str
    content_hash: str  # sha256 of the file's bytes, hex
    size_bytes: int
    chunks: Annotated[int, PgType("integer")]
    error: str | None
    # Structure chunker: sections folded into an earlier section's chunk. Both
    # chunkers: chunks whose breadcrumb was truncated to the budget. Kept per
    # document because unchanged documents are not processed on a re-run.
    merges: Annotated[int, PgType("integer")] = 0
    breadcrumb_truncations: Annotated[int, PgType("integer")] = 0
    sections: Annotated[int, PgType("integer")] = 0  # its content_sections rows
    # What the file was: "markdown", "text" or the importer's name (html, docx,
    # pdf), and the importer's note (docs/importers.md).
    source_format: str = "markdown"
    import_note: str | None = None
    title: str | None = None  # from its front matter (docs/heading-index.md)
