"""Search rankings: BM25, semantic and hybrid (`mdchunks search --method`).

- `bm25`: real BM25 in PostgreSQL over the stored `search_vector` (the
  heading path weighted A plus the chunk text weighted B; flow/retrieval/lexical.py has
  the formula: k1 = 1.5, b = 0.75, heading occurrences counting 3 times). The
  candidates come from the GIN index; `match` says which:
  - `any` (the default): chunks holding any of the query's lexemes (BM25 as
    usual: rare words weigh more, long chunks are normalised);
  - `all`: only chunks holding every lexeme, scored the same way.
- `semantic`: cosine distance (`<=>`) between the query's vector and the
  chunks' stored vectors of one model (flow/retrieval/embedding.py: the model asked
  for, else the one the searched chunks have vectors of), by that model's
  HNSW index, exact when the index returns fewer than k.
- `hybrid`: weighted reciprocal-rank fusion (flow/retrieval/fusion.py, k = 5, BM25
  weighted 2, semantic 1) of the first `HYBRID_DEPTH` chunks of each.
- the default (`method=None`): hybrid when every searched source has vectors
  and the embed extra can encode the query, else bm25 (`choose_method`).
  Hybrid (default or asked) finds nothing for a query of stop words only.
A host's own table (flow/retrieval/tables.py) has no stored vectors: it is
ranked by BM25 alone (the default picks it; semantic and hybrid say so).
Ties are broken by source, path and position, so every ranking is
deterministic. The retrieval evaluation (`python -m spikes.retrieval_eval`)
ranks with these same functions.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from mdchunks.db.connection import Connection
from mdchunks.db.queries import QUERIES
from mdchunks.errors import UsageError
from mdchunks.retrieval import embedder, embedding, lexical, lexical_terms, snippets
from mdchunks.retrieval.fusion import rrf_scores
from mdchunks.retrieval.tables import MANAGED, ChunkTable

METHODS = ("bm25", "semantic", "hybrid")
MATCHES = ("all", "any")
DEFAULT_METHOD: str | None = None  # hybrid where every searched source has vectors, else bm25
DEFAULT_MATCH = "any"
log = logging.getLogger("mdchunks")
HYBRID_DEPTH = 50  # candidates taken from each ranking before fusion
# Weighted RRF of [bm25, semantic]: k = 5 and BM25 counting twice. Measured on
# the rust-book golden set (markdown chunker; docs/search.md): plain RRF
# (k = 60, equal weights) fell below BM25 alone (recall@5 0.667 against 0.750),
# because all-MiniLM-L6-v2 alone is much weaker there (0.611); k = 5 lets the
# top ranks decide, and the double weight keeps BM25's first hit first.
HYBRID_RRF_K = 5
HYBRID_WEIGHTS = (2, 1)

# The query side of the snippet's highlighting, by match rule (placeholder %(query)s):
# the query's lexemes, all of them or any, parsed as the chunks' vectors are,
# in the chunk's language (migrations/0018_languages.sql).
_CONFIG = "mdchunks_search_config(c.language)"
_QUERY_TEXT = "mdchunks_search_words(%(query)s)"
TSQUERIES = {
    "all": f"plainto_tsquery({_CONFIG}, {_QUERY_TEXT})",
    "any": f"replace(plainto_tsquery({_CONFIG}, {_QUERY_TEXT})::text, ' & ', ' | ')::tsquery",
}


@dataclass(frozen=True, slots=True)
class Ranked:
    id: uuid.UUID
    score: float  # ts_rank_cd, cosine similarity, or the RRF score


def check_method(method: str | None, match: str) -> None:
    if method is not None and method not in METHODS:
        raise UsageError(f"unknown search method {method!r} (known: {', '.join(METHODS)})")
    if match not in MATCHES:
        raise UsageError(f"unknown match rule {match!r} (known: {', '.join(MATCHES)})")


def bm25(
    conn: Connection,
    query: str,
    *,
    k: int,
    source: str | None = None,
    match: str = DEFAULT_MATCH,
    params: lexical_terms.Bm25Params = lexical_terms.DEFAULT_PARAMS,
    table: ChunkTable = MANAGED,
    path_prefix: str | None = None,
    terms: lexical_terms.QueryTerms | None = None,
) -> list[Ranked]:
    return [
        Ranked(chunk_id, score)
        for chunk_id, score in lexical.bm25(
            conn,
            query,
            k=k,
            source=source,
            match=match,
            params=params,
            table=table,
            path_prefix=path_prefix,
            terms=terms,
        )
    ]


def semantic(
    conn: Connection,
    query_vector: Sequence[float],
    *,
    k: int,
    source: str | None = None,
    model: str = embedder.DEFAULT_MODEL,
    path_prefix: str | None = None,
) -> list[Ranked]:
    """The k chunks whose vectors of `model` are nearest the query's (cosine)."""
    return [
        Ranked(chunk_id, score)
        for chunk_id, score in embedding.nearest(
            conn, query_vector, k=k, model=model, source=source, path_prefix=path_prefix
        )
    ]


def fuse(rankings: Sequence[Sequence[Ranked]], k: int) -> list[Ranked]:
    """Hybrid's fusion of [bm25, semantic]: weighted RRF (`HYBRID_RRF_K`,
    `HYBRID_WEIGHTS`), its first k, scored by the fused score."""
    fused = rrf_scores(
        [[hit.id for hit in ranking] for ranking in rankings],
        HYBRID_RRF_K,
        HYBRID_WEIGHTS[: len(rankings)],
    )
    return [Ranked(item, float(score)) for item, score in fused[:k]]


def choose_method(
    conn: Connection, source: str | None, table: ChunkTable = MANAGED, model: str | None = None
) -> str:
    """The default method: hybrid when every searched source that has rows has
    vectors (of `model`, when named) and the embed extra can encode the query
    with their model, else bm25. (Over sources of which only some have
    vectors, a fused ranking would put the others' chunks below theirs for want
    of a semantic vote: BM25 ranks them all alike; `method="hybrid"` fuses
    where there are vectors.)"""
    if not table.managed:
        return "bm25"
    pairs = [(name, key) for name, key in embedding.models_of(conn, source) if model in (None, key)]
    models = {key for _, key in pairs}
    if not models or any(embedder.extra_problem(key) is not None for key in models):
        return "bm25"
    present = conn.execute(QUERIES["sources_with_rows"], {"source": source})
    searched = {str(row[0]) for row in present}
    without = sorted(searched - {name for name, _ in pairs})
    if without:
        log.warning(
            "searching by BM25 alone: source %s has no vectors (--method hybrid fuses "
            "vectors where there are)",
            ", ".join(repr(name) for name in without),
        )
        return "bm25"
    return "hybrid"


def rank(
    conn: Connection,
    query: str,
    *,
    k: int,
    source: str | None = None,
    method: str | None = DEFAULT_METHOD,
    match: str = DEFAULT_MATCH,
    model: str | None = None,
    query_vector: Sequence[float] | None = None,
    table: ChunkTable = MANAGED,
    path_prefix: str | None = None,
    terms: lexical_terms.QueryTerms | None = None,
) -> list[Ranked]:
    """The first k chunks for `query` by `method` (None: `choose_method`), best
    first. `model`: the embedding model's key (None: the one the searched
    chunks have vectors of; flow/retrieval/embedding.py `search_model`); `query_vector`:
    the query's embedding by that model when the caller has it already; `terms`:
    its BM25 terms, likewise (`lexical_terms.query_terms` over the same source and table)."""
    check_method(method, match)
    if method is None:
        method = choose_method(conn, source, table)
    if method == "bm25":
        return bm25(
            conn,
            query,
            k=k,
            source=source,
            match=match,
            table=table,
            path_prefix=path_prefix,
            terms=terms,
        )
    if not table.managed:
        raise embedder.EmbeddingsUnavailable(
            f"--method {method} compares stored vectors, and a host's table "
            f"({table.shown}) has none: search it with --method bm25"
        )
    if (
        method == "hybrid"
        and query_vector is None
        and not lexical_terms.keeps_terms(conn, query, source=source, table=table)
    ):
        # Stop words only: what a vector of them is near is noise, not an
        # answer (an explicit semantic search still reads them). A caller that
        # brings the query's vector has checked it (search_steps.analyse).
        return []
    key = embedding.search_model(conn, source, model)
    if query_vector is None:
        embedder.require_extra(key)
        query_vector = embedder.encode_query(query, key)
    if method == "semantic":
        return semantic(conn, query_vector, k=k, source=source, model=key, path_prefix=path_prefix)
    depth = max(k, HYBRID_DEPTH)
    return fuse(
        [
            bm25(
                conn,
                query,
                k=depth,
                source=source,
                match=match,
                path_prefix=path_prefix,
                terms=terms,
            ),
            semantic(
                conn, query_vector, k=depth, source=source, model=key, path_prefix=path_prefix
            ),
        ],
        k,
    )


def hits_sql(match: str, table: ChunkTable = MANAGED) -> str:
    """What `mdchunks search` shows of ranked chunks: parameters ids, headline_options.
    The breadcrumb is the stored column (rendered at ingest by the one shared
    renderer, within the recipe's budget; NULL for an empty heading path). The
    snippet highlights the query's words (by `match`'s query; a query without
    words shows the chunk's start); tags are kept (flow/retrieval/snippets.py)."""
    return f"""
        SELECT c.id, c.source, c.rel_path, c.position, c.heading_path, c.breadcrumb,
               {snippets.SNIPPET_SQL} AS snippet,
               c.char_start, c.char_end, c.text, c.start_line, c.end_line, c.unsearched, c.title,
               c.language
        FROM {table.identifier} c
        CROSS JOIN LATERAL (SELECT {TSQUERIES[match]} AS query) q
        WHERE c.id = ANY(%(ids)s::uuid[])
        """
