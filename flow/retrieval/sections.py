"""Sections on the read side (docs/sections.md): which section a hit names,
a section's exact text, and a document's outline, all from stored rows.

- **The matched section** of a hit: among the sections its chunk holds
  (`content_chunks.section_ids`), the one whose slice of the chunk carries
  the most of the query by BM25's own weights (flow/retrieval/lexical_terms.py:
  the same idf, k1, b and heading weight; a slice's terms are its part of the
  chunk's searchable text, MDX's ESM and front matter left out as the chunk's
  own search vector leaves them, plus the section's whole heading path,
  weighted as a chunk's heading path is).
  For a semantic hit (or a hybrid one no query term reaches), the slice
  nearest the query by the embedding model; the governing section (the one
  the chunk's heading columns name) wins every tie, and stands when nothing
  tells the slices apart.
- **A section's text**: `document[char_start:char_end]` exactly, rebuilt from
  the chunk texts that overlap it and the gaps the section rows keep of what
  no chunk holds; no file is read.
- **The outline**: a document's sections in order, with their levels, lines,
  parents and how many chunks hold each.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mdchunks.db.connection import Connection
from mdchunks.db.queries import QUERIES
from mdchunks.heading_index.sections import rebuild
from mdchunks.retrieval import lexical, lexical_terms
from mdchunks.retrieval.tables import MANAGED, ChunkTable


@dataclass(frozen=True, slots=True)
class SectionRef:
    """A section as a hit or an outline names it: the whole section's span."""

    id: uuid.UUID
    ordinal: int
    heading_text: str | None
    heading_level: int | None
    heading_path: tuple[str, ...]
    breadcrumb: str | None  # None for the preamble
    char_start: int
    char_end: int
    start_line: int
    end_line: int

    @property
    def shown(self) -> str:
        """The breadcrumb a person is shown; before the first heading, the
        document's title, else `(preamble)`."""
        return self.breadcrumb if self.breadcrumb is not None else "(preamble)"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": str(self.id),
            "heading_path": list(self.heading_path),
            "breadcrumb": self.breadcrumb,
            "char_start": self.char_start,
            "char_end": self.char_end,
            "start_line": self.start_line,
            "end_line": self.end_line,
        }


@dataclass(frozen=True, slots=True)
class MatchedSection:
    section: SectionRef
    held: int  # how many sections the hit's chunk holds (this one included)


@dataclass(frozen=True, slots=True)
class Slice:
    """One held section's part of a hit's chunk, as `hit_sections` returns it."""

    section: SectionRef
    governing: bool
    text: str  # the chunk's text within the section's own span
    text_vector: str | None  # the vector of the text's searchable part, as text
    heading_vector: str | None  # the vector of its heading path, as text


def hit_slices(conn: Connection, ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, list[Slice]]:
    """The held sections of each chunk in `ids`, in document order."""
    found: dict[uuid.UUID, list[Slice]] = {}
    for row in conn.execute(QUERIES["hit_sections"], {"ids": list(ids)}):
        chunk_id, governing, text, text_vector, heading_vector, *section = row
        found.setdefault(chunk_id, []).append(
            Slice(_ref(section), bool(governing), str(text), text_vector, heading_vector)
        )
    return found


def slices_of(
    conn: Connection, held: Sequence[tuple[SectionRef, bool, str, str, str | None]]
) -> list[Slice]:
    """Slices made outside the sections table (a host's table rebuilds its
    sections from its chunks): each (section, governing, the chunk's text in
    the section's own span, the same part of the searchable text, the chunk's
    language), with its vectors parsed as `hit_sections` parses them (in that
    language: migration 0018), in one statement."""
    if not held:
        return []
    vectors = conn.execute(
        QUERIES["slice_vectors"],
        {
            "texts": [searched for _, _, _, searched, _ in held],
            "headings": [" ".join(ref.heading_path) for ref, *_ in held],
            "languages": [language for *_, language in held],
        },
    )
    return [
        Slice(ref, governing, text, text_vector, heading_vector if ref.heading_text else None)
        for (ref, governing, text, *_), (text_vector, heading_vector) in zip(
            held, vectors.fetchall(), strict=True
        )
    ]


def _ref(row: Sequence[Any]) -> SectionRef:
    id_, ordinal, text, level, path, breadcrumb, start, end, first, last = row
    return SectionRef(
        id=id_,
        ordinal=int(ordinal),
        heading_text=text,
        heading_level=None if level is None else int(level),
        heading_path=tuple(path or ()),
        breadcrumb=breadcrumb,
        char_start=int(start),
        char_end=int(end),
        start_line=int(first),
        end_line=int(last),
    )


def lexical_scores(
    slices: Sequence[Slice],
    terms: lexical_terms.QueryTerms,
    params: lexical_terms.Bm25Params = lexical_terms.DEFAULT_PARAMS,
) -> list[float]:
    """Each slice's BM25 score for the query's terms (see the module docstring)."""
    weights = {term.lexeme: term.weight for term in terms.terms if term.df > 0}
    k1, b, w = params.k1, params.b, params.heading_weight
    mean = terms.avgdl if terms.avgdl > 0 else 1.0
    scores = []
    for piece in slices:
        in_text = dict(lexical.positions_per_lexeme(piece.text_vector))
        in_heading = dict(lexical.positions_per_lexeme(piece.heading_vector))
        length = sum(in_text.values()) + w * sum(in_heading.values())
        norm = k1 * (1 - b + b * length / mean)
        score = 0.0
        for lexeme, weight in weights.items():
            tf = in_text.get(lexeme, 0) + w * in_heading.get(lexeme, 0)
            if tf:
                score += weight * tf * (k1 + 1) / (tf + norm)
        scores.append(score)
    return scores


def best(slices: Sequence[Slice], scores: Sequence[float]) -> Slice | None:
    """The slice of the highest score, the governing one on a tie; None when no
    score tells them apart (all equal)."""
    if not slices or max(scores) == min(scores):
        return None
    top = max(scores)
    tied = [piece for piece, score in zip(slices, scores, strict=True) if score == top]
    return next((piece for piece in tied if piece.governing), tied[0])


def governing(slices: Sequence[Slice]) -> Slice:
    return next((piece for piece in slices if piece.governing), slices[0])


def section_text(conn: Connection, section_id: uuid.UUID) -> tuple[SectionRef, str, int] | None:
    """A section, its text `document[char_start:char_end]` from stored rows, and
    how many chunks it was rebuilt from (None: no such section). Raises
    ValueError if the rows leave a hole (chunk rows changed behind its back)."""
    rows = conn.execute(QUERIES["section_pieces"], {"id": section_id}).fetchall()
    if not rows:
        return None
    ref = _ref(rows[0][3:])
    pieces = [(int(offset), str(text)) for offset, text, _, *_ in rows if text is not None]
    chunks = sum(1 for _, text, is_chunk, *_ in rows if text is not None and is_chunk)
    return ref, rebuild(ref.char_start, ref.char_end, pieces), chunks


@dataclass(frozen=True, slots=True)
class OutlineEntry:
    section: SectionRef
    parent: uuid.UUID | None
    chunks: int  # how many chunks hold the section


@dataclass(frozen=True, slots=True)
class DocumentOutline:
    source: str
    rel_path: str
    sections: tuple[OutlineEntry, ...]  # in document order; () for a document without any
    # Why the document has no rows, when its last run failed it (its cause, as
    # the run's summary named it); None for a document that was ingested.
    error: str | None = None
    # What its importer said of a converted document ("no outline
    # (bookmarks): text without headings"); None for markdown.
    note: str | None = None
    title: str | None = None  # from its front matter (docs/heading-index.md)


def outline(
    conn: Connection, *, source: str | None = None, rel_path: str | None = None
) -> list[DocumentOutline]:
    """The outlines of one document, of a source's documents, or of every
    source's (None for either: all), by source and path."""
    grouped: dict[tuple[str, str], list[OutlineEntry]] = {}
    said: dict[tuple[str, str], tuple[str | None, str | None, str | None]] = {}
    for row in conn.execute(QUERIES["document_outline"], {"source": source, "rel_path": rel_path}):
        document = (str(row[0]), str(row[1]))
        entries = grouped.setdefault(document, [])
        said[document] = (row[14], row[15], row[16])  # error, note, title
        if row[2] is not None:
            entries.append(OutlineEntry(_ref(row[2:12]), row[12], int(row[13])))
    return [
        DocumentOutline(src, rel, tuple(entries), *said[(src, rel)])
        for (src, rel), entries in grouped.items()
    ]


def find_section(
    conn: Connection, source: str, rel_path: str, heading_path: Sequence[str]
) -> list[SectionRef]:
    """The sections of a document with exactly this heading path (in order)."""
    return [
        _ref(row)
        for row in conn.execute(
            QUERIES["find_section"],
            {"source": source, "rel_path": rel_path, "heading_path": list(heading_path)},
        )
    ]


def vector_scores(
    slices: Sequence[Slice], query_vector: Sequence[float], model: str
) -> list[float]:
    """Each slice's cosine to the query: the slice embedded as a chunk is (its
    section's breadcrumb, a blank line, its text) by the hits' model."""
    from mdchunks.heading_index import embed_text
    from mdchunks.retrieval import embedder

    if not slices:
        return []
    texts = [embed_text(piece.section.breadcrumb, piece.text) for piece in slices]
    vectors = embedder.encode(texts, model).vectors
    return [float(score) for score in vectors @ query_vector]


def matched_sections(
    conn: Connection,
    ids: Sequence[uuid.UUID],
    *,
    query: str,
    source: str | None,
    lexical_first: bool,
    query_vector: Sequence[float] | None = None,
    model: str | None = None,
    held: dict[uuid.UUID, list[Slice]] | None = None,
    table: ChunkTable = MANAGED,
    terms: lexical_terms.QueryTerms | None = None,
) -> dict[uuid.UUID, MatchedSection]:
    """Each hit's matched section (the module docstring). `lexical_first`: try
    the query's BM25 terms first (bm25, hybrid); `query_vector` and `model`:
    then the nearest slice (semantic, hybrid). Chunks without section rows
    (written before migration 0011, or no heading index) are absent. `held`:
    the hits' slices made elsewhere (`slices_of`; a host's `table`, whose
    statistics BM25 counts live), instead of the sections table's; `terms`:
    the query's BM25 terms when the ranking counted them already."""
    slices = hit_slices(conn, ids) if held is None else held
    undecided = {chunk: pieces for chunk, pieces in slices.items() if len(pieces) > 1}
    chosen = {chunk: pieces[0] for chunk, pieces in slices.items() if len(pieces) == 1}
    if undecided and lexical_first:
        if terms is None:
            terms = lexical_terms.query_terms(conn, query, source=source, table=table)
        for chunk, pieces in list(undecided.items()):
            found = best(pieces, lexical_scores(pieces, terms))
            if found is not None:
                chosen[chunk] = found
                del undecided[chunk]
    if undecided and query_vector is not None and model is not None:
        flat = [piece for pieces in undecided.values() for piece in pieces]
        scores = iter(vector_scores(flat, query_vector, model))
        for chunk, pieces in list(undecided.items()):
            found = best(pieces, [next(scores) for _ in pieces])
            if found is not None:
                chosen[chunk] = found
                del undecided[chunk]
    for chunk, pieces in undecided.items():
        chosen[chunk] = governing(pieces)
    return {
        chunk: MatchedSection(piece.section, len(slices[chunk])) for chunk, piece in chosen.items()
    }
