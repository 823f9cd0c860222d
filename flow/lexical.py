"""BM25 in PostgreSQL, over the stored `search_vector` (`mdchunks search --method bm25`).

The formula (Robertson and Zaragoza's BM25, Lucene's idf), per query term t
and chunk d, summed over the query's terms (a term the query repeats counts
that many times, as in bm25s):

    idf(t)   = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))        (never negative)
    score    = qtf(t) * idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * |d| / avgdl))

- Terms: the lexemes of `to_tsvector('english', query)`, the very
  function that made the chunks' vectors (English Snowball stemmer, English
  stop words dropped), so both sides have the same tokens; except that a
  hyphenated word counts as its parts only: PostgreSQL's parser also emits
  the whole compound ("reference-count" beside "refer" and "count"), which
  would count the word twice (measured: one more rust-book question found
  within 5, whatever k1 and the heading weight).
- tf: occurrences of t in the chunk's stored `search_vector`, from its
  positions: text occurrences (weight B) count 1, heading-path occurrences
  (weight A) count `heading_weight` (a simplified BM25F: one field of weighted
  counts). |d| is the same weighted count over all its lexemes (stored at
  ingest, migration 0008); avgdl the mean |d| of the searched chunks.
- N, df(t), avgdl: over the searched chunks (one source, or all), from the
  statistics every ingest run that changed a source's rows refreshes
  (`refresh_stats`, under the source's lock). A source that has rows but no
  statistics (written by a host's own app, or before migration 0008 ran) is
  counted live, exact but slower.
- Candidates come from the GIN index (`search_vector @@ tsquery`). `match`:
  `any` (the default) is the usual BM25, a chunk needs one of the terms;
  `all` keeps only chunks holding every term, scored the same way.
- Top k without scoring every chunk that holds a common term (MaxScore,
  Turtle and Flood 1995): terms by weight (idf times occurrences in the
  query), heaviest first. A chunk holding none of the first j terms scores at
  most the sum of weight(t) * (k1 + 1) over the others (tf / (tf + K) < 1).
  So score only the chunks holding one of the first j terms; when the k-th
  best of them beats that bound, no other chunk can enter the top k and the
  answer is exact; else take j + 1.
- Ties: source, rel_path, position, so every ranking is deterministic.

k1 = 1.5 and b = 0.75 are those of the textbook reference the evaluation
prints beside it (bm25s' defaults); heading_weight = 3 was the best of 1, 2
and 3 on the rust-book golden set (README, "Search").
"""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

import psycopg
from mdchunks.queries import QUERIES

MATCHES = ("all", "any")
FIRST_ROUND_CHUNKS = 2000  # MaxScore's first round scores up to this many chunks at once


@dataclass(frozen=True, slots=True)
class Bm25Params:
    k1: float = 1.5
    b: float = 0.75
    heading_weight: float = 3.0


DEFAULT_PARAMS = Bm25Params()


@dataclass(frozen=True, slots=True)
class Term:
    lexeme: str
    df: int
    idf: float
    occurrences: int = 1  # in the query: a repeated word weighs that many times

    @property
    def weight(self) -> float:
        return self.idf * self.occurrences


@dataclass(frozen=True, slots=True)
class QueryTerms:
    terms: tuple[Term, ...]  # every distinct lexeme of the query, sorted
    chunks: int  # N
    avgdl: float  # mean weighted length of the searched chunks
    stored: bool  # statistics came from the stats tables (False: counted live)


def idf(df: int, chunks: int) -> float:
    """Lucene's (and bm25s') BM25 idf: ln(1 + (N - df + 0.5) / (df + 0.5))."""
    return math.log(1.0 + (chunks - df + 0.5) / (df + 0.5))


def tsquery_literal(lexeme: str) -> str:
    """A lexeme as a tsquery operand: quoted, `'` doubled, `\\` escaped."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def refresh_stats(conn: psycopg.Connection, source: str) -> None:
    """Recompute the source's BM25 statistics from its rows, in one transaction."""
    with conn.transaction():
        conn.execute(QUERIES["search_stats_refresh"], {"source": source})
        conn.execute(QUERIES["search_terms_clear"], {"source": source})
        conn.execute(QUERIES["search_terms_refresh"], {"source": source})


def has_stats(conn: psycopg.Connection, source: str) -> bool:
    row = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM mdchunks_search_stats WHERE source = %s)", [source]
    ).fetchone()
    return bool(row and row[0])


def query_terms(
    conn: psycopg.Connection,
    query: str,
    *,
    source: str | None,
    params: Bm25Params = DEFAULT_PARAMS,
) -> QueryTerms:
    """The query's terms with their df and idf, N and avgdl of the searched chunks."""
    values = {"query": query, "source": source}
    collection = conn.execute(QUERIES["search_collection"], values).fetchone()
    assert collection is not None  # an aggregate always returns a row
    chunks, heading_length, text_length, stored = collection
    rows = conn.execute(QUERIES["search_query_terms"], values).fetchall()
    occurrences = {str(lexeme): int(count) for lexeme, count, _df in rows}
    dfs = {str(lexeme): int(df) for lexeme, _count, df in rows}
    if not stored:
        live = conn.execute(QUERIES["search_collection_live"], values).fetchone()
        assert live is not None
        chunks, heading_length, text_length = live
        dfs = {
            str(lexeme): int(df)
            for lexeme, df in conn.execute(
                QUERIES["search_df_live"], {"lexemes": list(dfs), "source": source}
            )
        }
    chunks = int(chunks)
    total = params.heading_weight * float(heading_length) + float(text_length)
    avgdl = total / chunks if chunks else 0.0
    terms = tuple(
        Term(lexeme, df, idf(df, chunks), occurrences[lexeme]) for lexeme, df in sorted(dfs.items())
    )
    return QueryTerms(terms=terms, chunks=chunks, avgdl=avgdl, stored=bool(stored))


# A scored chunk: (score, source, rel_path, position, id); sorting (-score, ...)
# is the ranking's order, so rankings of disjoint sets of chunks merge exactly.
Scored = tuple[float, str, str, int, uuid.UUID]

# One lexeme of a tsvector's text form: quoted (' and \\ doubled inside), then
# its positions after a colon (none for a stripped vector).
_TSVECTOR_ENTRY = re.compile(r"'((?:[^']|'')*)'(?::([0-9A-D,]+))?")


def occurrences(vector_text: str | None) -> dict[str, int]:
    """lexeme -> number of positions, from a tsvector's text form."""
    if not vector_text:
        return {}
    return {
        lexeme.replace("''", "'").replace("\\\\", "\\"): positions.count(",") + 1
        if positions
        else 0
        for lexeme, positions in _TSVECTOR_ENTRY.findall(vector_text)
    }


def _score(
    conn: psycopg.Connection,
    terms: Sequence[Term],
    candidates: str,
    seen: Sequence[uuid.UUID],
    *,
    source: str | None,
    avgdl: float,
    params: Bm25Params,
) -> list[Scored]:
    """Every chunk matching `candidates` and not in `seen`, scored over all `terms`."""
    weights = {term.lexeme: term.weight for term in terms}
    rows = conn.execute(
        QUERIES["search_candidates"],
        {
            "lexemes": list(weights),
            "candidates": candidates,
            "heading_query": " | ".join(f"{tsquery_literal(lexeme)}:A" for lexeme in weights),
            "seen": list(seen),
            "source": source,
        },
    ).fetchall()
    k1, b, w = params.k1, params.b, params.heading_weight
    # A collection of empty chunks has avgdl 0; no candidate can match then.
    mean = avgdl if avgdl > 0 else 1.0
    scored: list[Scored] = []
    for id_, src, rel_path, position, heading_length, text_length, matched, heading in rows:
        norm = k1 * (1 - b + b * (w * heading_length + text_length) / mean)
        in_heading = occurrences(heading)
        score = 0.0
        # tf: text occurrences count 1, heading-path ones heading_weight (the
        # matched count holds both, so the heading's count once more with w - 1).
        for lexeme, count in occurrences(matched).items():
            tf = count + (w - 1) * in_heading.get(lexeme, 0)
            score += weights[lexeme] * tf * (k1 + 1) / (tf + norm)
        scored.append((score, src, rel_path, int(position), id_))
    return scored


def _order(hit: Scored) -> tuple[float, str, str, int]:
    return (-hit[0], hit[1], hit[2], hit[3])


def bm25(
    conn: psycopg.Connection,
    query: str,
    *,
    k: int,
    source: str | None = None,
    match: str = "any",
    params: Bm25Params = DEFAULT_PARAMS,
    budget: int = FIRST_ROUND_CHUNKS,
) -> list[tuple[uuid.UUID, float]]:
    """The first k chunks by BM25 (see the module docstring), best first."""
    found = query_terms(conn, query, source=source, params=params)
    present = [term for term in found.terms if term.df > 0]
    if not present or (match == "all" and len(present) < len(found.terms)):
        return []

    def score(candidates: Sequence[Term], operator: str = " | ") -> list[Scored]:
        tsquery = operator.join(tsquery_literal(term.lexeme) for term in candidates)
        hits = _score(conn, present, tsquery, seen, source=source, avgdl=found.avgdl, params=params)
        seen.extend(hit[4] for hit in hits)
        return hits

    def ids(hits: Sequence[Scored]) -> list[tuple[uuid.UUID, float]]:
        return [(hit[4], hit[0]) for hit in sorted(hits, key=_order)[:k]]

    seen: list[uuid.UUID] = []
    if match == "all":
        return ids(score(present, " & "))
    # MaxScore: heaviest terms first; stop once no chunk outside can reach the
    # top k. Each later round scores only the chunks holding its term and none
    # of the earlier ones (disjoint sets), and merges their top k in.
    order = sorted(present, key=lambda term: (-term.weight, term.lexeme))
    ceiling = [term.weight * (params.k1 + 1) for term in order]
    essential = first_round(order, budget)
    hits = sorted(score(order[:essential]), key=_order)[:k]
    while True:
        outside = sum(ceiling[essential:])
        if essential == len(order) or (len(hits) >= k and hits[k - 1][0] > outside):
            return ids(hits)
        hits = sorted(hits + score(order[essential : essential + 1]), key=_order)[:k]
        essential += 1


def first_round(order: Sequence[Term], budget: int) -> int:
    """How many of the heaviest terms the first MaxScore round takes: at least
    one, then more while their chunks add up to at most `budget` (each round
    is a query of its own; scoring a few hundred chunks more costs less)."""
    taken, chunks = 1, order[0].df
    while taken < len(order) and chunks + order[taken].df <= budget:
        chunks += order[taken].df
        taken += 1
    return taken
