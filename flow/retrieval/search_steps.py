"""The steps a search query goes through, each a small function over plain
data (composed by flow/retrieval/pipeline.py; docs/layout.md draws them):

1. `analyse`: the method (the default picks one), the query's vector by the
   stored vectors' model (semantic, hybrid) and its BM25 terms, counted once
   for the ranking and the matched sections; None for a hybrid query of stop
   words only, which finds nothing.
2. `rank`: the first k chunks by the method (flow/retrieval/rankings.py).
3. `fetch_hits`: the ranked chunks' rows and snippets (`HitRow`).
4. `name_sections`: each hit's matched section among those its chunk holds
   (flow/retrieval/sections.py).
5. `expand`: what `expand` asks for, the matched section whole or the parent
   chunk (flow/retrieval/hits.py).
6. `hits_of`: the `SearchHit`s, in the ranking's order.

What differs between our table and a host's is behind the `SectionSource`
(flow/retrieval/section_source.py) and `ChunkTable` (which table the SQL
reads); no step asks which table it is, except to skip what a host's table
cannot have (stored vectors).
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import asyncpg
from mdchunks.db.connection import Connection
from mdchunks.errors import UsageError
from mdchunks.heading_index.searchable import searchable_text
from mdchunks.retrieval import (
    embedder,
    embedding,
    hits,
    lexical_terms,
    rankings,
    sections,
    snippets,
)
from mdchunks.retrieval.hits import HitRow, ParentChunk, SearchHit, Section
from mdchunks.retrieval.section_source import SectionSource
from mdchunks.retrieval.tables import ChunkTable

# How PostgreSQL's headline marks a snippet's matches (flow/retrieval/snippets.py).
HEADLINE_OPTIONS = (
    f"StartSel={snippets.HIGHLIGHT_START}, StopSel={snippets.HIGHLIGHT_STOP}, MaxWords=28, "
    f'MinWords=10, MaxFragments=2, FragmentDelimiter="{snippets.FRAGMENT_DELIMITER}"'
)


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """A search as the API checked it."""

    query: str
    k: int
    source: str | None
    method: str | None  # None: the default (rankings.choose_method)
    match: str
    expand: str
    model: str | None  # the embedding model's key asked for; None: the stored vectors'
    table: ChunkTable
    path_prefix: str | None  # None or "": every document


@dataclass(frozen=True, slots=True)
class AnalysedQuery:
    method: str  # the method chosen
    model: str | None  # the key of the model whose vectors are compared (None: none are)
    vector: Any | None  # the query's vector by that model
    terms: lexical_terms.QueryTerms | None  # its BM25 terms (None: the method reads no terms)


@dataclass(frozen=True, slots=True)
class Expansions:
    sections: Mapping[uuid.UUID, Section]
    parents: Mapping[uuid.UUID, ParentChunk]


@contextlib.contextmanager
def refused_when_too_complex(query: str) -> Iterator[None]:
    """PostgreSQL's "statement too complex" about a query's text search, as a
    one-line UsageError naming the query's size."""
    try:
        yield
    except asyncpg.exceptions.StatementTooComplexError:
        raise UsageError(
            f"the query is too long for PostgreSQL's text search "
            f"({len(query.split()):,} words); search with fewer words"
        ) from None


def analyse(conn: Connection, request: SearchRequest) -> AnalysedQuery | None:
    method = request.method
    if method is None:
        method = rankings.choose_method(conn, request.source, request.table, request.model)
    if method == "hybrid" and not lexical_terms.keeps_terms(
        conn, request.query, source=request.source, table=request.table
    ):
        return None  # stop words only: no model loaded for a vector of them
    key: str | None = None
    vector = None
    if method != "bm25" and request.table.managed:  # for the ranking and the matched sections
        key = embedding.search_model(conn, request.source, request.model)
        embedder.require_extra(key)
        vector = embedder.encode_query(request.query, key)
    terms = None
    # The query's BM25 terms, counted once for the ranking and the matched
    # sections (a host's table counts them over all its rows). Not over a
    # host's table that `rank` will refuse: semantic or hybrid.
    if method == "bm25" or (method != "semantic" and request.table.managed):
        with refused_when_too_complex(request.query):
            terms = lexical_terms.query_terms(
                conn, request.query, source=request.source, table=request.table
            )
    return AnalysedQuery(method, key, vector, terms)


def rank(
    conn: Connection, request: SearchRequest, analysed: AnalysedQuery
) -> list[rankings.Ranked]:
    with refused_when_too_complex(request.query):
        return rankings.rank(
            conn,
            request.query,
            k=request.k,
            source=request.source,
            method=analysed.method,
            match=request.match,
            model=analysed.model or request.model,
            query_vector=analysed.vector,
            table=request.table,
            path_prefix=request.path_prefix or None,
            terms=analysed.terms,
        )


def fetch_hits(
    conn: Connection, request: SearchRequest, ranked: Sequence[rankings.Ranked]
) -> dict[uuid.UUID, HitRow]:
    """The ranked chunks' rows, in the ranking's order."""
    with refused_when_too_complex(request.query):
        found = {
            row.id: row
            for row in map(
                HitRow.of,
                conn.execute(
                    rankings.hits_sql(request.match, request.table),
                    {
                        "query": request.query,
                        "ids": [hit.id for hit in ranked],
                        "headline_options": HEADLINE_OPTIONS,
                    },
                ),
            )
        }
    return {hit.id: found[hit.id] for hit in ranked if hit.id in found}


def name_sections(
    conn: Connection,
    request: SearchRequest,
    analysed: AnalysedQuery,
    rows: Mapping[uuid.UUID, HitRow],
    source: SectionSource,
) -> dict[uuid.UUID, sections.MatchedSection]:
    """Each hit's matched section (docs/sections.md)."""
    return sections.matched_sections(
        conn,
        list(rows),
        query=request.query,
        source=request.source,
        lexical_first=analysed.method != "semantic",
        query_vector=analysed.vector,
        model=analysed.model,
        held=source.held(rows),
        table=request.table,
        terms=analysed.terms,
    )


def expand(
    conn: Connection,
    request: SearchRequest,
    rows: Mapping[uuid.UUID, HitRow],
    matched: Mapping[uuid.UUID, sections.MatchedSection],
    source: SectionSource,
) -> Expansions:
    """The sections or parents `request.expand` asks for. A hit with a matched
    section is expanded to that section, exactly, from `source`; the others
    (rows from before sections existed) to the run of chunks of their heading."""
    by_section = request.expand == "section"
    expanded, parents = hits.expansions(
        conn,
        {
            chunk_id: (row.position, row.heading_path)
            for chunk_id, row in rows.items()
            if not (by_section and chunk_id in matched)
        },
        request.expand,
        request.table,
    )
    if by_section:
        for chunk_id, match_of in matched.items():
            found = source.section(rows[chunk_id], match_of.section)
            if found is not None:
                expanded[chunk_id] = found
    return Expansions(expanded, parents)


def hits_of(
    request: SearchRequest,
    ranked: Sequence[rankings.Ranked],
    rows: Mapping[uuid.UUID, HitRow],
    matched: Mapping[uuid.UUID, sections.MatchedSection],
    expansions: Expansions,
) -> list[SearchHit]:
    found = []
    for hit in ranked:
        row = rows.get(hit.id)
        if row is None:  # gone since it was ranked (fetch_hits left it out)
            continue
        found.append(
            SearchHit(
                rank=hit.score,
                source=row.source,
                rel_path=row.rel_path,
                position=row.position,
                heading_path=row.heading_path,
                snippet=snippets.shown(row.snippet, searchable_text(row.text, row.unsearched)),
                stored_breadcrumb=row.breadcrumb,
                id=hit.id,
                char_start=row.char_start,
                char_end=row.char_end,
                start_line=row.start_line,
                end_line=row.end_line,
                text=row.text,
                expand=request.expand,
                section=expansions.sections.get(hit.id),
                parent=expansions.parents.get(hit.id),
                matched_section=matched.get(hit.id),
                title=row.title,
            )
        )
    return found
