"""BM25's parameters and the query's terms (`mdchunks search --method bm25`).

What the ranking (flow/retrieval/lexical.py) scores with: k1, b and the
heading weight, MaxScore's first round size, and the query parsed into its
terms once for each language of the searched chunks, each with its df and
idf, and N, avgdl and the shortest chunk of the searched chunks, from the
stored statistics (flow/retrieval/lexical_stats.py keeps them) or counted
live from the rows where there are none (a host's table, a source written
before migration 0008).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mdchunks.db.connection import Connection
from mdchunks.db.queries import QUERIES
from mdchunks.retrieval.tables import MANAGED, ChunkTable

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
    # The most positions of the lexeme in one searched chunk, in all and in the
    # heading path (None: not known, statistics counted live or predating 0009).
    max_occurrences: int | None = None
    max_heading_occurrences: int | None = None
    # The language tags whose parse of the query gave the lexeme: it scores
    # only chunks of those languages (None: chunks of every language).
    languages: frozenset[str | None] | None = None

    @property
    def weight(self) -> float:
        return self.idf * self.occurrences

    def counts_for(self, language: str | None) -> bool:
        return self.languages is None or language in self.languages


@dataclass(frozen=True, slots=True)
class QueryTerms:
    terms: tuple[Term, ...]  # every distinct lexeme of the query, sorted
    chunks: int  # N
    avgdl: float  # mean weighted length of the searched chunks
    stored: bool  # statistics came from the stats tables (False: counted live)
    # The shortest searched chunk's lengths (heading path, text), None if unknown.
    shortest: tuple[int, int] | None = None


def idf(df: int, chunks: int) -> float:
    """Lucene's (and bm25s') BM25 idf: ln(1 + (N - df + 0.5) / (df + 0.5))."""
    return math.log(1.0 + (chunks - df + 0.5) / (df + 0.5))


def tsquery_literal(lexeme: str) -> str:
    """A lexeme as a tsquery operand: quoted, `'` doubled, `\\` escaped."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def keeps_terms(
    conn: Connection, query: str, *, source: str | None = None, table: ChunkTable = MANAGED
) -> bool:
    """Whether any word of the query is a search term (not a stop word) in
    one of the searched chunks' languages."""
    languages = searched_languages(conn, source=source, table=table)
    row = conn.execute(
        QUERIES["search_query_keeps_terms"], {"query": query, "languages": languages}
    ).fetchone()
    return bool(row and row[0])


def searched_languages(
    conn: Connection,
    *,
    source: str | None,
    table: ChunkTable = MANAGED,
    stored: bool | None = None,
) -> list[str | None]:
    """The language tags of the searched chunks (None: none stated, read as
    English): from the statistics where every searched source has them
    (`stored`; None: look it up), else counted from the rows. [None] when
    there are none."""
    values = {"source": source}
    if table.managed and stored is None:
        collection = conn.execute(QUERIES["search_collection"], values).fetchone()
        stored = bool(collection and collection[5])
    name = "search_languages" if table.managed and stored else "search_languages_live"
    found = {row[0] for row in conn.execute(table.query(name), values)}
    return sorted(found, key=lambda tag: tag or "") or [None]


def query_terms(
    conn: Connection,
    query: str,
    *,
    source: str | None,
    params: Bm25Params = DEFAULT_PARAMS,
    table: ChunkTable = MANAGED,
) -> QueryTerms:
    """The query's terms with their df and idf, N and avgdl of the searched chunks."""
    values: dict[str, object] = {"query": query, "source": source}
    if table.managed:
        collection = conn.execute(QUERIES["search_collection"], values).fetchone()
        assert collection is not None  # an aggregate always returns a row
        values["languages"] = searched_languages(conn, source=source, stored=bool(collection[5]))
        rows = conn.execute(QUERIES["search_query_terms"], values).fetchall()
    else:  # a host's table: nothing stored, everything counted below
        collection = (0, 0, 0, None, None, False)
        values["languages"] = searched_languages(conn, source=source, table=table)
        rows = conn.execute(QUERIES["search_query_lexemes"], values).fetchall()
    chunks, heading_length, text_length, min_heading, min_text, stored = collection
    occurrences = {str(row[0]): int(row[1]) for row in rows}
    dfs = {str(row[0]): int(row[2]) for row in rows}
    maxima = {str(row[0]): (row[3], row[4]) for row in rows}
    languages = {str(row[0]): frozenset(row[5]) for row in rows}
    shortest = None if min_heading is None or min_text is None else (min_heading, min_text)
    if not stored:
        maxima, shortest = {}, None
        live = conn.execute(table.query("search_collection_live"), values).fetchone()
        assert live is not None
        chunks, heading_length, text_length = live
        dfs = {
            str(lexeme): int(df)
            for lexeme, df in conn.execute(
                table.query("search_df_live"), {"lexemes": list(dfs), "source": source}
            )
        }
    chunks = int(chunks)
    total = params.heading_weight * float(heading_length) + float(text_length)
    avgdl = total / chunks if chunks else 0.0
    terms = tuple(
        Term(
            lexeme,
            df,
            idf(df, chunks),
            occurrences[lexeme],
            *maxima.get(lexeme, (None, None)),
            languages=languages[lexeme],
        )
        for lexeme, df in sorted(dfs.items())
    )
    return QueryTerms(
        terms=terms, chunks=chunks, avgdl=avgdl, stored=bool(stored), shortest=shortest
    )
