"""Search rankings: full-text, semantic and hybrid (`mdchunks search --method`).

- `bm25`: PostgreSQL full-text search, English stemming. Despite the name
  (the usual name of the lexical method) the ranking is Postgres's
  `ts_rank_cd` (cover density), not BM25: no inverse document frequency, no
  length normalisation. The document side is `content_chunks.search_vector`:
  the heading path weighted A plus the chunk text weighted B. The query side
  depends on `match`:
  - `all`: `websearch_to_tsquery`: every word must occur (web-search syntax:
    "exact phrase", -exclude, or);
  - `any` (the default): the query's lexemes joined with OR (`plainto_tsquery`
    with `&` turned into `|`): a chunk needs one of them; ts_rank_cd then
    prefers chunks where more of them occur, close together. Chosen from the
    retrieval evaluation (spikes/results/retrieval-rust-book.txt): on 72
    natural-language questions `all` finds 6 answers within 10 hits, `any` 43.
- `semantic`: cosine distance (`<=>`) between the query's all-MiniLM-L6-v2
  vector and the chunks' stored vectors (flow/embedding.py), exact scan.
- `hybrid`: reciprocal-rank fusion (flow/fusion.py, k = 60) of the first
  `HYBRID_DEPTH` chunks of each of the two.
Ties are broken by source, path and position, so every ranking is
deterministic.

The retrieval evaluation (`python -m spikes.retrieval_eval`) ranks with these
same functions; it also ranks over a tsvector of the bare `text` or of
`embed_text` (computed at query time), hence `DOCUMENT_VECTORS`.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import psycopg
from mdchunks import embedding, snippets
from mdchunks.errors import UsageError
from mdchunks.fusion import rrf_scores
from psycopg import sql

METHODS = ("bm25", "semantic", "hybrid")
MATCHES = ("all", "any")
DEFAULT_METHOD = "bm25"
DEFAULT_MATCH = "any"
HYBRID_DEPTH = 50  # candidates taken from each ranking before fusion

# The query side, by match rule (psycopg placeholder %(query)s).
TSQUERIES = {
    "all": "websearch_to_tsquery('english', %(query)s)",
    "any": "replace(plainto_tsquery('english', %(query)s)::text, ' & ', ' | ')::tsquery",
}

# The document side: the product's column, or the evaluation's alternatives.
DOCUMENT_VECTORS = {
    "search_vector": "c.search_vector",
    "text": "to_tsvector('english', c.text)",
    "embed_text": "to_tsvector('english', c.embed_text)",
}


@dataclass(frozen=True, slots=True)
class Ranked:
    id: uuid.UUID
    score: float  # ts_rank_cd, cosine similarity, or the RRF score


def check_method(method: str, match: str) -> None:
    if method not in METHODS:
        raise UsageError(f"unknown search method {method!r} (known: {', '.join(METHODS)})")
    if match not in MATCHES:
        raise UsageError(f"unknown match rule {match!r} (known: {', '.join(MATCHES)})")


def bm25_sql(match: str = DEFAULT_MATCH, document_vector: str = "search_vector") -> sql.Composed:
    """The full-text ranking query: parameters query, source (or NULL), k."""
    vector = sql.SQL(DOCUMENT_VECTORS[document_vector])
    return sql.SQL(
        """
        WITH q AS (SELECT {tsquery} AS query)
        SELECT c.id, ts_rank_cd({vector}, q.query) AS score
        FROM content_chunks c, q
        WHERE {vector} @@ q.query
          AND (%(source)s::text IS NULL OR c.source = %(source)s::text)
        ORDER BY score DESC, c.source, c.rel_path, c.position
        LIMIT %(k)s
        """
    ).format(tsquery=sql.SQL(TSQUERIES[match]), vector=vector)


SEMANTIC_SQL = sql.SQL(
    f"""
    SELECT e.id, 1 - (e.embedding <=> %(vector)s::vector) AS score
    FROM {embedding.TABLE} e
    JOIN content_chunks c ON c.id = e.id
    WHERE e.model = %(model)s
      AND (%(source)s::text IS NULL OR e.source = %(source)s::text)
    ORDER BY e.embedding <=> %(vector)s::vector, c.source, c.rel_path, c.position
    LIMIT %(k)s
    """
)


def bm25(
    conn: psycopg.Connection,
    query: str,
    *,
    k: int,
    source: str | None = None,
    match: str = DEFAULT_MATCH,
    document_vector: str = "search_vector",
) -> list[Ranked]:
    rows = conn.execute(
        bm25_sql(match, document_vector), {"query": query, "source": source, "k": k}
    ).fetchall()
    return [Ranked(row[0], float(row[1])) for row in rows]


def semantic(
    conn: psycopg.Connection,
    query_vector: Sequence[float],
    *,
    k: int,
    source: str | None = None,
    model: str = embedding.MODEL_NAME,
) -> list[Ranked]:
    rows = conn.execute(
        SEMANTIC_SQL,
        {
            "vector": embedding.vector_literal(query_vector),
            "model": model,
            "source": source,
            "k": k,
        },
    ).fetchall()
    return [Ranked(row[0], float(row[1])) for row in rows]


def fuse(rankings: Sequence[Sequence[Ranked]], k: int) -> list[Ranked]:
    """RRF of rankings, its first k, scored by the fused score."""
    fused = rrf_scores([[hit.id for hit in ranking] for ranking in rankings])
    return [Ranked(item, float(score)) for item, score in fused[:k]]


def rank(
    conn: psycopg.Connection,
    query: str,
    *,
    k: int,
    source: str | None = None,
    method: str = DEFAULT_METHOD,
    match: str = DEFAULT_MATCH,
    query_vector: Sequence[float] | None = None,
) -> list[Ranked]:
    """The first k chunks for `query` by `method`, best first (`query_vector`:
    the query's embedding when the caller has it already)."""
    check_method(method, match)
    if method == "bm25":
        return bm25(conn, query, k=k, source=source, match=match)
    if query_vector is None:
        embedding.require_extra()
    embedding.require_vectors(conn, source)
    vector = embedding.encode([query])[0] if query_vector is None else query_vector
    if method == "semantic":
        return semantic(conn, vector, k=k, source=source)
    depth = max(k, HYBRID_DEPTH)
    return fuse(
        [
            bm25(conn, query, k=depth, source=source, match=match),
            semantic(conn, vector, k=depth, source=source),
        ],
        k,
    )


def hits_sql(match: str) -> sql.Composed:
    """What `mdchunks search` shows of ranked chunks: parameters ids, headline_options.
    The breadcrumb is the stored column (rendered at ingest by the one shared
    renderer, within the recipe's budget; NULL for an empty heading path). The
    snippet highlights the query's words (by `match`'s query; a query without
    words shows the chunk's start); tags are kept (flow/snippets.py)."""
    return sql.SQL(
        """
        WITH q AS (SELECT {tsquery} AS query)
        SELECT c.id, c.source, c.rel_path, c.position, c.heading_path, c.breadcrumb,
               {snippet} AS snippet
        FROM content_chunks c, q
        WHERE c.id = ANY(%(ids)s::uuid[])
        """
    ).format(tsquery=sql.SQL(TSQUERIES[match]), snippet=sql.SQL(snippets.SNIPPET_SQL))
