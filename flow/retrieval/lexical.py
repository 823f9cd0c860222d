"""BM25 in PostgreSQL, over the stored `search_vector` (`mdchunks search --method bm25`).

The formula (Robertson and Zaragoza's BM25, Lucene's idf), per query term t
and chunk d, summed over the query's terms (a term the query repeats counts
that many times, as in bm25s):

    idf(t)   = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))        (never negative)
    score    = qtf(t) * idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * |d| / avgdl))

- Terms: the lexemes of the query parsed as the chunks' vectors were
  (`to_tsvector(mdchunks_search_config(language), mdchunks_search_words(query))`,
  migration 0018), once for each language of the searched chunks
  (`searched_languages`: an English source gets English stemming and stop
  words, a French one French, and CJK text becomes character bigrams on both
  sides), so both sides have the same tokens. A chunk is scored with the
  terms of its own language's parse (`Term.languages`): English stop words
  kept by 'simple', or French stems, add nothing to an English chunk. A
  lexeme two languages share is one term. Except that a
  hyphenated word counts as its parts only: PostgreSQL's parser also emits
  the whole compound ("reference-count" beside "refer" and "count"), which
  would count the word twice (measured: one more rust-book question found
  within 5, whatever k1 and the heading weight).
- tf: occurrences of t in the chunk's stored `search_vector`, from its
  positions: text occurrences (weight B) count 1, heading-path occurrences
  (weight A) count `heading_weight` (a simplified BM25F: one field of weighted
  counts). |d| is the same weighted count over all its lexemes (stored at
  ingest by the trigger that makes the vector, migrations 0008 and 0009);
  avgdl the mean |d| of the searched chunks.
- N, df(t), avgdl: over the searched chunks (one source, or all), from the
  statistics every write moves by its documents' share (`change_statements`,
  in the write's transaction: a batch run's and a watch's alike), recounted
  (`refresh_stats`, under the source's lock) where a move cannot be trusted
  (flow/source/run.py `_stats_distrusted`). A source that has rows but no
  statistics (written by a host's own app, or before migration 0008 ran) is
  counted live, exact but slower; so is a host's own table (`table`,
  flow/retrieval/tables.py), which has no statistics tables beside it.
- Candidates come from the GIN index (`search_vector @@ tsquery`). `match`:
  `any` (the default) is the usual BM25, a chunk needs one of the terms;
  `all` keeps only chunks holding every term, scored the same way.
- Scoring: SQL cuts each candidate's query lexemes out of its vector with
  their positions (search_candidates); Python counts them and sums the
  terms, in the vector's order of lexemes (docs/search.md: a quarter of the
  cost of scoring in SQL).
- Top k without scoring every chunk that holds a common term (MaxScore,
  Turtle and Flood 1995): terms by weight (idf times occurrences in the
  query), heaviest first. A chunk gets less than a term's ceiling from it
  (`ceiling_of`: weight(t) * (k1 + 1), tighter at the largest tf and the
  shortest chunk the statistics know). Score the chunks holding one of the
  first j terms, one term a round, until k are in hand; then a chunk holding
  none of those can enter the top k only if it holds a set of the other
  terms whose ceilings reach the k-th score: one last round fetches just
  those (`could_enter`), and the answer is exact. A common term of a large
  source has top chunks (migration 0019, `top_lists`): its round scores
  them a segment at a time, and a chunk not scored gets at most its floor's
  share from it instead of nothing (docs/search.md, "BM25 query cost").
- Ties: source, rel_path, position (code-point order), so every ranking is
  deterministic.

k1 = 1.5 and b = 0.75 are those of the textbook reference the evaluation
prints beside it (bm25s' defaults); heading_weight = 3 was the best of 1, 2
and 3 on the rust-book golden set (docs/search.md).
"""

from __future__ import annotations

import json
import math
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import asyncpg
from mdchunks.db.connection import Connection
from mdchunks.db.queries import QUERIES
from mdchunks.retrieval.tables import MANAGED, ChunkTable

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


# MaxScore's bounds (per-lexeme maxima) are kept for sources of this many
# chunks or more: reading every position costs the refresh about twice as
# much as the document frequencies alone (docs/search.md), and below this a
# query scores a few thousand chunks at most anyway. Exact either way.
BOUNDS_MIN_CHUNKS = 10_000


# Top chunks per common lexeme (migration 0019, docs/search.md): kept for
# the lexemes of at least TOP_MIN_DF chunks (a rarer one is scored whole in
# one round), TOP_CHUNKS of them each, with the sources that keep bounds.
TOP_MIN_DF = FIRST_ROUND_CHUNKS
TOP_CHUNKS = 1000
TOP_SEGMENT = 250  # read this many at a time


def refresh_stats(conn: Connection, source: str) -> None:
    """Recompute the source's BM25 statistics from its rows, in one transaction."""
    values = {"source": source}
    with conn.transaction():
        row = conn.execute(QUERIES["search_stats_refresh"], values).fetchone()
        assert row is not None  # an aggregate always returns a row
        conn.execute(QUERIES["search_terms_clear"], values)
        conn.execute(QUERIES["search_top_clear"], values)
        chunks, heading_length, text_length, min_heading, min_text = row
        if chunks < BOUNDS_MIN_CHUNKS:
            conn.execute(QUERIES["search_terms_refresh_df"], values)
            return
        conn.execute(QUERIES["search_terms_refresh"], values)
        params = DEFAULT_PARAMS
        w, k1, b = params.heading_weight, params.k1, params.b
        avgdl = (w * heading_length + text_length) / chunks
        shortest = k1 * (1 - b + b * (w * min_heading + min_text) / avgdl)
        conn.execute(
            QUERIES["search_top_refresh"],
            {
                **values,
                "avgdl": avgdl,
                "size": TOP_CHUNKS,
                "segment": TOP_SEGMENT,
                "min_df": TOP_MIN_DF,
                "single": 1 / (1 + shortest),
                "k1": k1,
                "b": b,
                "w": w,
            },
        )


@dataclass(frozen=True, slots=True)
class DocumentsShare:
    """What some chunk rows add to their source's BM25 statistics: (chunks,
    heading length, text length, shortest heading, shortest text), and each
    lexeme's (df, most positions in one chunk, most in one heading)."""

    totals: tuple[int, int, int, int | None, int | None]
    terms: dict[str, tuple[int, int, int]]
    languages: tuple[str | None, ...] = ()
    # The documents whose rows these are (none: rows deleted, counted as they went).
    rel_paths: tuple[str, ...] = ()


NO_ROWS = DocumentsShare((0, 0, 0, None, None), {})

# A statement and its parameters, for our connection or the engine's pool.
Statement = tuple[str, Mapping[str, object]]


def share_statement(rows: str, params: Mapping[str, object]) -> Statement:
    """The statement counting the share of the rows `rows` yields (a SELECT
    of some chunk rows, or a DELETE that returns them): `share_of` reads its row."""
    return f"WITH shared AS ({rows})\n{QUERIES['search_share']}", params


def documents_statement(source: str, rel_paths: Sequence[str]) -> Statement:
    """The statement counting the share of `rel_paths`' rows."""
    return share_statement(
        QUERIES["search_rows_of_documents"], {"source": source, "rel_paths": list(rel_paths)}
    )


def deleting(delete: str, params: Mapping[str, object]) -> Statement:
    """`delete` (a DELETE of chunk rows) counting the share of the rows it
    deletes: that share leaves the statistics (`change_statements(..., gone,
    NO_ROWS)`), and its first total is the rows deleted."""
    return share_statement(
        f"{delete}\nRETURNING search_vector, search_heading_length, search_text_length, language",
        params,
    )


def share_of(row: Sequence[object] | None, rel_paths: Sequence[str] = ()) -> DocumentsShare:
    """The share a `share_statement` counted (its one row: three JSON texts),
    of the rows of `rel_paths` if it counted documents' rows."""
    assert row is not None  # an aggregate always returns a row
    totals, languages, terms = (json.loads(str(value)) for value in row)
    chunks, heading, text, shortest_heading, shortest_text = totals
    return DocumentsShare(
        (int(chunks), int(heading), int(text), shortest_heading, shortest_text),
        {
            str(lexeme): (int(df), int(most), int(most_in_heading))
            for lexeme, df, most, most_in_heading in terms
        },
        tuple(None if tag is None else str(tag) for tag in languages),
        tuple(rel_paths),
    )


def documents_share(conn: Connection, source: str, rel_paths: Sequence[str]) -> DocumentsShare:
    """The share of `rel_paths`' rows, counted as `refresh_stats` counts all."""
    return share_of(conn.execute(*documents_statement(source, rel_paths)).fetchone(), rel_paths)


def change_statements(
    source: str, before: DocumentsShare, after: DocumentsShare
) -> list[Statement]:
    """The statements that move the source's statistics from `before` to
    `after` (some rows' shares, taken around their writes in the caller's
    transaction): df, N and the lengths stay exact; the per-lexeme maxima and
    the shortest lengths are bounds that loosen, never tighten (MaxScore stays
    exact), until the next `refresh_stats`. A change costs its rows, not the
    source's."""
    if (before.totals, before.terms) == (after.totals, after.terms) and set(after.languages) <= set(
        before.languages
    ):
        return []  # rows that say the same (a no-op run's deletes find none)
    (n0, h0, t0, _, _), (n1, h1, t1, shortest_heading, shortest_text) = before.totals, after.totals
    statements: list[Statement] = [
        (
            QUERIES["search_stats_add"],
            {
                "source": source,
                "chunks": n1 - n0,
                "heading_length": h1 - h0,
                "text_length": t1 - t0,
                "min_heading_length": shortest_heading,
                "min_text_length": shortest_text,
                "languages": list(after.languages),
            },
        )
    ]
    deltas = []
    for lexeme in before.terms.keys() | after.terms.keys():
        df0 = before.terms.get(lexeme, (0, 0, 0))[0]
        df1, most, most_in_heading = after.terms.get(lexeme, (0, 0, 0))
        if df1 != df0 or lexeme in after.terms:
            deltas.append(
                {
                    "lexeme": lexeme,
                    "df": df1 - df0,
                    "most": most,
                    "most_in_heading": most_in_heading,
                }
            )
    if deltas:
        values: dict[str, object] = {"source": source, "deltas": json.dumps(deltas)}
        statements.append((QUERIES["search_terms_drop"], values))
        statements.append((QUERIES["search_terms_add"], values))
    if after.rel_paths and after.totals[0]:
        params = DEFAULT_PARAMS
        top = {"k1": params.k1, "b": params.b, "w": params.heading_weight}
        statements.append(
            (QUERIES["search_top_add"], {**top, "source": source, "rel_paths": [*after.rel_paths]})
        )
    return statements


def change_stats(
    conn: Connection, source: str, before: DocumentsShare, after: DocumentsShare
) -> None:
    """Run `change_statements` on `conn` (in the caller's transaction)."""
    for statement, params in change_statements(source, before, after):
        conn.execute(statement, params)


# A run that wrote at least this many chunk rows, and at least half of the
# table's, rebuilds the search vectors' GIN index (`rebuild_index`).
REBUILD_MIN_ROWS = 5000


def rebuild_index(conn: Connection, written: int) -> bool:
    """After a run that wrote most of the table (a first ingest, a backfill):
    the GIN index built again in one pass. Filled through its pending list,
    it keeps the pages each flush left: 9.8 MB for the rust-book x36's
    29,520 chunks, 8.4 MB rebuilt, in 0.65 s (docs/benchmarks.md, Disk).
    A plain REINDEX: rolled back whole if the run is killed (a concurrent
    one would leave an invalid index behind); searches wait for it. It
    needs the table's owner: a role with DML rights only keeps the index
    as it is, and so does a server that refuses it (a lock or statement
    timeout of yours): it is only smaller rebuilt. Returns whether it was."""
    if written < REBUILD_MIN_ROWS:
        return False
    row = conn.execute(QUERIES["chunk_rows_total"]).fetchone()
    if row is None or written * 2 < int(row[0]):
        return False
    try:
        conn.execute(QUERIES["search_index_rebuild"])
    except (
        asyncpg.exceptions.InsufficientPrivilegeError,
        asyncpg.exceptions.LockNotAvailableError,
        asyncpg.exceptions.QueryCanceledError,
        asyncpg.exceptions.DeadlockDetectedError,
    ):
        return False
    return True


# Server BM25 index engines (docs/search.md, "Which engine at which size"):
# ParadeDB's pg_search, Tiger Data's pg_textsearch, VectorChord-BM25.
INDEX_ENGINES = ("pg_search", "pg_textsearch", "vchord_bm25")


def index_engines(conn: Connection) -> dict[str, bool]:
    """The BM25 index engines this server offers: extension -> installed in
    this database. Detection only: search uses our BM25 whatever it finds
    (none was on a server we could measure; docs/search.md)."""
    rows = conn.execute(QUERIES["search_index_engines"], {"names": list(INDEX_ENGINES)})
    return {str(name): bool(installed) for name, installed in rows}


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


def stored_chunks(conn: Connection, source: str) -> int | None:
    """N of the source's stored statistics, None if it has none."""
    row = conn.execute(
        "SELECT chunks FROM mdchunks_search_stats WHERE source = %s", [source]
    ).fetchone()
    return None if row is None else int(row[0])


def has_stats(conn: Connection, source: str) -> bool:
    row = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM mdchunks_search_stats WHERE source = %s)", [source]
    ).fetchone()
    return bool(row and row[0])


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


# A scored chunk: (score, source, rel_path, position, id); sorting (-score, ...)
# is the ranking's order, so rankings of disjoint sets of chunks merge exactly.
Scored = tuple[float, str, str, int, str]  # the id as text until the answer

# One lexeme of a tsvector's text form: quoted (' and \\ doubled inside), then
# its positions after a colon (none for a stripped vector).
_TSVECTOR_ENTRY = re.compile(r"'((?:[^']|'')*)'(?::([0-9A-D,]+))?")


def positions_per_lexeme(vector_text: str | None) -> list[tuple[str, int]]:
    """(lexeme, number of positions) of a tsvector's text form, in its order."""
    if not vector_text:
        return []
    found = []
    for lexeme, positions in _TSVECTOR_ENTRY.findall(vector_text):
        if "'" in lexeme or "\\" in lexeme:
            lexeme = lexeme.replace("''", "'").replace("\\\\", "\\")
        found.append((lexeme, positions.count(",") + 1 if positions else 0))
    return found


def _score(
    conn: Connection,
    terms: Sequence[Term],
    candidates: str,
    seen: list[str],
    *,
    source: str | None,
    avgdl: float,
    params: Bm25Params,
    table: ChunkTable,
    path_prefix: str | None,
    every: bool = False,
    ids: Sequence[str] = (),
) -> list[Scored]:
    """Every chunk matching `candidates` or among `ids` and not in `seen`
    (ids as text; the chunks scored are added to it), scored over the `terms`
    of its language; a chunk that holds none of those is no hit, nor one that
    lacks one of them when `every` (`--match all`)."""
    weights = {term.lexeme: term.weight for term in terms}
    of_language: dict[str | None, dict[str, float]] = {}
    rows = conn.execute(
        table.query("search_candidates"),
        {
            "lexemes": list(weights),
            "candidates": candidates,
            "ids": list(ids),
            "heading_query": " | ".join(f"{tsquery_literal(lexeme)}:A" for lexeme in weights),
            "seen": seen,
            "source": source,
            "path_prefix": path_prefix,
        },
    ).fetchall()
    k1, b, w = params.k1, params.b, params.heading_weight
    # A collection of empty chunks has avgdl 0; no candidate can match then.
    mean = avgdl if avgdl > 0 else 1.0
    scored: list[Scored] = []
    for row in rows:
        id_, src, rel_path, position, heading_length, text_length, language, matched, heading = row
        own = of_language.get(language)
        if own is None:
            own = of_language[language] = {
                term.lexeme: term.weight for term in terms if term.counts_for(language)
            }
        norm = k1 * (1 - b + b * (w * heading_length + text_length) / mean)
        in_heading = dict(positions_per_lexeme(heading)) if heading else {}
        held = positions_per_lexeme(matched)
        seen.append(id_)
        if every and not own.keys() <= {lexeme for lexeme, _ in held}:
            continue
        score = 0.0
        # tf: text occurrences count 1, heading-path ones heading_weight (the
        # matched count holds both, so the heading's count once more with w - 1).
        for lexeme, count in held:
            weight = own.get(lexeme)
            if weight is not None:
                tf = count + (w - 1) * in_heading.get(lexeme, 0)
                score += weight * tf * (k1 + 1) / (tf + norm)
        if score > 0:
            scored.append((score, src, rel_path, position, id_))
    return scored


def _order(hit: Scored) -> tuple[float, str, str, int]:
    return (-hit[0], hit[1], hit[2], hit[3])


def bm25(
    conn: Connection,
    query: str,
    *,
    k: int,
    source: str | None = None,
    match: str = "any",
    params: Bm25Params = DEFAULT_PARAMS,
    budget: int = FIRST_ROUND_CHUNKS,
    table: ChunkTable = MANAGED,
    path_prefix: str | None = None,
    terms: QueryTerms | None = None,
    top_chunks: bool = True,
) -> list[tuple[uuid.UUID, float]]:
    """The first k chunks by BM25 (see the module docstring), best first.
    `path_prefix`: only chunks of documents whose rel_path starts with it (a
    filter: N, df and avgdl stay those of the searched sources). `terms`: the
    query's, when the caller counted them already (`query_terms` with these
    source, params and table; a host's table counts them over all its rows).
    `top_chunks`: False leaves the common terms' top chunks unused (MaxScore
    alone, as before migration 0019: benchmarks.search_latency compares)."""
    found = (
        terms
        if terms is not None
        else query_terms(conn, query, source=source, params=params, table=table)
    )
    present = [term for term in found.terms if term.df > 0]
    if not present:
        return []

    def score_tsquery(tsquery: str, ids: Sequence[str] = (), every: bool = False) -> list[Scored]:
        return _score(
            conn,
            present,
            tsquery,
            seen,
            source=source,
            avgdl=found.avgdl,
            params=params,
            table=table,
            path_prefix=path_prefix,
            every=every,
            ids=ids,
        )

    def score(candidates: Sequence[Term], operator: str = " | ") -> list[Scored]:
        return score_tsquery(operator.join(tsquery_literal(term.lexeme) for term in candidates))

    def ids(hits: Sequence[Scored]) -> list[tuple[uuid.UUID, float]]:
        return [(uuid.UUID(hit[4]), hit[0]) for hit in sorted(hits, key=_order)[:k]]

    def could_enter_tsquery(rest: Sequence[Term], subsets: Sequence[tuple[int, ...]]) -> str:
        return " | ".join(
            "(" + " & ".join(tsquery_literal(rest[i].lexeme) for i in subset) + ")"
            for subset in subsets
        )

    seen: list[str] = []
    if match == "all":
        # Every term of one language's parse, in a chunk of that language.
        clauses = []
        for language in sorted(_languages_of(found.terms), key=lambda tag: tag or ""):
            own = [term for term in found.terms if term.counts_for(language)]
            if own and all(term.df > 0 for term in own):
                clauses.append("(" + " & ".join(tsquery_literal(t.lexeme) for t in own) + ")")
        if not clauses:
            return []
        return ids(score_tsquery(" | ".join(clauses), every=True))
    # MaxScore: heaviest terms first, one round each, until k chunks are in
    # hand; then one last round of the only chunks that can still enter the
    # top k (see `could_enter`), unless there are too many ways to do so. A
    # common term's round scores its top chunks alone when it has them
    # (migration 0019): a chunk not scored then gets less than its floor's
    # bound from it, not nothing, and stays in the last round's reckoning.
    tops = (
        top_lists(conn, present, source=source, avgdl=found.avgdl)
        if top_chunks and table.managed and found.stored and params == DEFAULT_PARAMS
        else {}
    )
    order = sorted(present, key=lambda term: (-term.weight, term.lexeme))
    # The most a chunk not scored yet can get from each term: its ceiling
    # before the term's round, nothing after a round of all its chunks, its
    # floor's share after a round of its top chunks (`read` segments of them).
    bound = [ceiling_of(term, params, found) for term in order]
    listed = [term.lexeme in tops and term.df > budget for term in order]
    read = [0] * len(order)

    def next_segment(i: int) -> list[Scored]:
        term, top = order[i], tops[order[i].lexeme]
        scored = set(seen)
        chunks = [chunk for chunk in top.segments[read[i]] if chunk not in scored]
        most = term.weight * (params.k1 + 1) * top.floors[read[i]] * (1 + CEILING_SLACK)
        bound[i] = min(bound[i], most)
        read[i] += 1
        return score_tsquery("", chunks)

    essential = 0 if listed[0] else first_round(order, budget)
    hits = sorted(score(order[:essential]), key=_order)[:k] if essential else []
    bound[:essential] = [0.0] * essential
    while True:
        deeper = [
            i
            for i in range(essential)
            if listed[i] and read[i] < len(tops[order[i].lexeme].segments)
        ]
        if len(hits) >= k:
            open_terms = sorted(
                (i for i, most in enumerate(bound) if most > 0), key=lambda i: -bound[i]
            )
            subsets = could_enter([bound[i] for i in open_terms], hits[k - 1][0])
            rest = [order[i] for i in open_terms]
            # The last round now, or more top chunks first (they lower the
            # bounds): whichever holds fewer chunks, the round's estimated
            # from the terms' df as if they were independent.
            unread = sum(
                len(segment)
                for i, term in enumerate(order)
                if listed[i]
                for segment in tops[term.lexeme].segments[read[i] :]
            )
            if subsets == [] or (
                subsets is not None
                and (not unread or last_round_chunks(rest, subsets, found.chunks) <= unread)
            ):
                if subsets:
                    more = score_tsquery(could_enter_tsquery(rest, subsets))
                    hits = sorted(hits + more, key=_order)[:k]
                return ids(hits)
        if essential < len(order):
            if listed[essential]:
                more = next_segment(essential)
            else:
                more = score([order[essential]])
                bound[essential] = 0.0
            essential += 1
        elif deeper:
            more = next_segment(max(deeper, key=lambda i: bound[i]))
        else:
            break
        hits = sorted(hits + more, key=_order)[:k]
    # Every term had its rounds, and still too few chunks or too many ways
    # in: every chunk of the terms scored by their top chunks alone.
    rest = [order[i] for i, most in enumerate(bound) if most > 0]
    if rest:
        hits = sorted(hits + score(rest), key=_order)[:k]
    return ids(hits)


def _languages_of(terms: Sequence[Term]) -> set[str | None]:
    """The languages the terms were parsed in ({None}, every language, when
    one term does not say)."""
    if any(term.languages is None for term in terms):
        return {None}
    return set().union(*(term.languages or () for term in terms))


def last_round_chunks(rest: Sequence[Term], subsets: Sequence[tuple[int, ...]], n: int) -> float:
    """How many chunks a last round of `subsets` (of `rest`) should fetch,
    were the terms independent: N times the product of their shares, summed."""
    return sum(n * math.prod(rest[i].df / max(n, 1) for i in subset) for subset in subsets)


CEILING_SLACK = 1e-9  # relative: a bound rounded down by a float must still bound


@dataclass(frozen=True, slots=True)
class TopChunks:
    """A term's top chunks over the searched sources (ids as text), best
    first, in segments; `floors[j]`: the most tf / (tf + K) any chunk not in
    segments 0..j can have, at the searched mean length."""

    segments: tuple[tuple[str, ...], ...]
    floors: tuple[float, ...]


def top_lists(
    conn: Connection, terms: Sequence[Term], *, source: str | None, avgdl: float
) -> dict[str, TopChunks]:
    """The top chunks of the terms every searched source that holds them
    keeps a list of (migration 0019): the sources' segments side by side, the
    largest of their floors, each raised by its drift (search_top_lists)."""
    rows: dict[str, list[tuple[Any, ...]]] = {}
    for row in conn.execute(
        QUERIES["search_top_lists"],
        {"lexemes": [term.lexeme for term in terms], "source": source, "avgdl": avgdl},
    ):
        rows.setdefault(str(row[0]), []).append(tuple(row[1:]))
    found = {}
    for lexeme, lists in rows.items():
        if any(chunks is None for chunks, *_ in lists):
            continue  # a source keeps no list of it: no top chunks
        count = max([1] + [-(-len(chunks) // TOP_SEGMENT) for chunks, *_ in lists])
        segments, floors = [], []
        for j in range(count):
            segment: list[str] = []
            for chunks, _, _, added, _ in lists:
                segment += map(str, chunks[j * TOP_SEGMENT : (j + 1) * TOP_SEGMENT])
                if j == 0:
                    segment += map(str, added)
            segments.append(tuple(segment))
            floors.append(
                max(
                    (float(steps[j]) if j < len(steps) else float(floor)) * float(drift)
                    for _, steps, floor, _, drift in lists
                )
            )
        found[lexeme] = TopChunks(tuple(segments), tuple(floors))
    return found


def ceiling_of(term: Term, params: Bm25Params, found: QueryTerms) -> float:
    """The most one chunk can get from `term`. Always weight * (k1 + 1), as
    tf / (tf + K) < 1; tighter from the statistics when they are known: tf is
    at most the most positions of the term in one chunk plus (heading weight
    - 1) times its most in one heading path, K at least that of the shortest
    chunk, and tf / (tf + K) grows with tf and falls with K."""
    loose = term.weight * (params.k1 + 1)
    most, most_in_heading = term.max_occurrences, term.max_heading_occurrences
    if most is None or most_in_heading is None or found.shortest is None or found.avgdl <= 0:
        return loose
    w = params.heading_weight
    tf = most + max(w - 1, 0.0) * most_in_heading
    shortest = max(w, 0.0) * found.shortest[0] + found.shortest[1]
    norm = params.k1 * (1 - params.b + params.b * shortest / found.avgdl)
    if tf + norm <= 0:
        return loose
    return min(loose, loose * tf / (tf + norm)) * (1 + CEILING_SLACK)


MAX_SUBSETS = 64  # clauses of the last round's tsquery; more: one term a round


def could_enter(ceilings: Sequence[float], threshold: float) -> list[tuple[int, ...]] | None:
    """The sets of terms a chunk must hold all of to possibly score at least
    `threshold`, when it holds none of the terms scored already: the minimal
    subsets of the remaining terms (indexes into `ceilings`, sorted heaviest
    first) whose ceilings add up to `threshold` or more. A chunk's share of a
    term is below its ceiling, so a chunk holding no such subset scores below
    the k-th best in hand and cannot enter the top k, not even on a tie. None
    when there are more than MAX_SUBSETS of them."""
    found: list[tuple[int, ...]] = []
    suffix = [0.0] * (len(ceilings) + 1)
    for i in range(len(ceilings) - 1, -1, -1):
        suffix[i] = suffix[i + 1] + ceilings[i]

    def extend(start: int, taken: tuple[int, ...], total: float) -> bool:
        for i in range(start, len(ceilings)):
            if total + suffix[i] < threshold:
                return True  # the lighter terms cannot make up the rest
            if total + ceilings[i] >= threshold:
                found.append((*taken, i))
                if len(found) > MAX_SUBSETS:
                    return False
            elif not extend(i + 1, (*taken, i), total + ceilings[i]):
                return False
        return True

    return found if extend(0, (), 0.0) else None


def first_round(order: Sequence[Term], budget: int) -> int:
    """How many of the heaviest terms the first MaxScore round takes: at least
    one, then more while their chunks add up to at most `budget` (each round
    is a query of its own; scoring a few hundred chunks more costs less)."""
    taken, chunks = 1, order[0].df
    while taken < len(order) and chunks + order[taken].df <= budget:
        chunks += order[taken].df
        taken += 1
    return taken
