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
  (flow/source/bm25_stats.py `distrusted`). A source that has rows but no
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

Where it lives: the parameters and the query's terms (N, df, idf, avgdl) in
flow/retrieval/lexical_terms.py; the statistics every write keeps, the top
chunks' lists and the GIN index in flow/retrieval/lexical_stats.py; here the
ranking itself, MaxScore's rounds and their bounds.
"""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Sequence

from mdchunks.db.connection import Connection
from mdchunks.retrieval.lexical_stats import top_lists
from mdchunks.retrieval.lexical_terms import (
    DEFAULT_PARAMS,
    FIRST_ROUND_CHUNKS,
    Bm25Params,
    QueryTerms,
    Term,
    query_terms,
    tsquery_literal,
)
from mdchunks.retrieval.tables import MANAGED, ChunkTable

MATCHES = ("all", "any")


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
