"""`mdchunks.search` and what the faces ask beside it: why a search found
nothing, and the embedding models loaded before the first query. The search
itself is a pipeline of steps (flow/retrieval/pipeline.py); this module
checks its arguments, opens the session and notes sources a run left
half-written."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from mdchunks.api.sources import resume_command
from mdchunks.db import database
from mdchunks.db.connection import Connection
from mdchunks.errors import UsageError
from mdchunks.plugin.rows import section_id
from mdchunks.retrieval import embedder, embedding, hits, lexical_terms, pipeline, rankings
from mdchunks.retrieval.hits import SearchHit
from mdchunks.retrieval.search_steps import SearchRequest
from mdchunks.retrieval.section_source import section_source
from mdchunks.retrieval.session import reading
from mdchunks.retrieval.tables import chunk_table
from mdchunks.source import catalog, state

NoteFn = Callable[[str], None]  # one line about a search's rows (`search`'s on_note)

log = logging.getLogger("mdchunks")

# A query longer than this is refused up front: parsed in every searched
# language, its terms cost seconds to minutes before PostgreSQL's text search
# gives up ("statement too complex"), and no embedding model reads so much.
MAX_QUERY_WORDS = 1_000
MAX_QUERY_CHARACTERS = 10_000  # a CJK query has no spaces to count words by


def _check_query_size(query: str) -> None:
    words = len(query.split())
    if words > MAX_QUERY_WORDS or len(query) > MAX_QUERY_CHARACTERS:
        raise UsageError(
            f"the query is too long ({words:,} words, {len(query):,} characters; at most "
            f"{MAX_QUERY_WORDS:,} words and {MAX_QUERY_CHARACTERS:,} characters): "
            "search with fewer words"
        )


def search(
    query: str,
    *,
    k: int = 10,
    source: str | None = None,
    method: str | None = rankings.DEFAULT_METHOD,
    match: str = rankings.DEFAULT_MATCH,
    database_url: str | None = None,
    data_dir: Path | None = None,
    expand: str = hits.DEFAULT_EXPANSION,
    embed_model: str | None = None,
    table: str | None = None,
    pg_schema: str | None = None,
    path_prefix: str | None = None,
    on_note: NoteFn | None = None,
) -> list[SearchHit]:
    """Search the chunks (flow/retrieval/rankings.py): `bm25`, BM25 over heading path
    and text (English stemming), chunks with any word (`match="any"`) or every
    word (`"all"`); `semantic`, cosine similarity of all-MiniLM-L6-v2 vectors
    (needs the embed extra and `ingest --embed`; `embed_model` names the model
    whose vectors to compare, a folder or a package as `ingest` takes it, by
    default the one the searched chunks have vectors of); `hybrid`, reciprocal-rank
    fusion of the two; None (the default): hybrid when every searched source
    has vectors (of `embed_model` when named), else bm25. Hybrid finds nothing
    for a query of stop words only, as bm25. `rank` is the method's score. `expand`:
    `section` adds each hit's section rebuilt from its stored chunks,
    `parent` its parent chunk's row (flow/retrieval/hits.py). `table` (and
    `pg_schema`): a host's own table made by `chunk_table_sql` instead of
    ours, searched by BM25 with statistics counted live (flow/retrieval/tables.py).
    `path_prefix`: only documents whose rel_path starts with it. `on_note`
    is given each line about the searched rows (a source whose last run did
    not finish: they may be stale); None logs them as warnings."""
    if not query.strip():
        raise UsageError("the search query is empty")
    _check_query_size(query)
    if k < 1:
        raise UsageError(f"-k must be at least 1 (got {k})")
    rankings.check_method(method, match)
    if expand not in hits.EXPANSIONS:
        raise UsageError(f"unknown expansion {expand!r} (known: {', '.join(hits.EXPANSIONS)})")
    model = None if embed_model is None else embedder.model_key(embed_model)
    searched = chunk_table(table, pg_schema)
    if method not in (None, "bm25") and searched.managed:
        embedder.require_extra(model or embedder.DEFAULT_MODEL)
    request = SearchRequest(query, k, source, method, match, expand, model, searched, path_prefix)
    with reading(searched, database_url, data_dir, source) as (conn, db):
        if searched.managed:
            _note_unfinished(conn, db, source, on_note)
        return pipeline.search(conn, request, section_source(conn, searched, section_id))


def _note_unfinished(
    conn: Connection, db: database.Database, source: str | None, on_note: NoteFn | None
) -> None:
    """One line per searched source whose rows a run left half-written
    (docs/reliability.md), to `on_note` (None: the `mdchunks` logger, which
    the CLI prints on stderr): the hits are shown all the same."""
    for name, run in state.unfinished(conn, source).items():
        if run == state.WATCHING:
            continue  # caught up, and following each change as it is saved
        if run == state.RUNNING:
            note = f"source {name!r} is being ingested now: its rows may be incomplete"
        else:
            record = catalog.lookup(conn, name)
            resume = resume_command(name, None if record is None else str(record.root), db)
            note = (
                f"source {name!r}: its last run did not finish, so its rows may be "
                f"incomplete or stale; run `{resume}` again"
            )
        if on_note is None:
            log.warning("%s", note)
        else:
            on_note(note)


def warm_up(
    *,
    table: str | None = None,
    pg_schema: str | None = None,
    database_url: str | None = None,
    data_dir: Path | None = None,
) -> tuple[str, ...]:
    """Load the embedding models of the stored vectors (once per process:
    flow/retrieval/embedder.py caches them), so that the first semantic or
    hybrid search costs what the search costs. The keys loaded; none when the
    chunks have no vectors or the embed extra is missing."""
    searched = chunk_table(table, pg_schema)
    if not searched.managed:
        return ()
    with reading(searched, database_url, data_dir) as (conn, _db):
        models = sorted({model for _, model in embedding.models_of(conn, None)})
    usable = [model for model in models if embedder.extra_problem(model) is None]
    for model in usable:
        embedder.load(model)
    return tuple(usable)


def words_without_terms(
    query: str, *, database_url: str | None = None, data_dir: Path | None = None
) -> tuple[str, ...]:
    """The query's words when not one of them is a search term (stop words
    only: `the of a`), so that "no match" can say why; else ()."""
    db = database.resolve(database_url, data_dir, create=False)
    with database.connect(db.url) as conn:
        if lexical_terms.keeps_terms(conn, query):
            return ()
    return tuple(query.split())


def no_match_reason(
    query: str,
    *,
    method: str | None = None,
    source: str | None = None,
    database_url: str | None = None,
    data_dir: Path | None = None,
    table: str | None = None,
    pg_schema: str | None = None,
) -> str | None:
    """Why a search found nothing when the query itself is the reason, in one
    line: it keeps no search term (stop words, punctuation and symbols are
    left out), naming the words dropped; or none of its terms stands in any
    searched document (of `source`, or all), naming its words. None otherwise
    (semantic search reads every word). The CLI prints it after "no match: ",
    the MCP server returns it beside the empty hits. `table` and `pg_schema`
    are taken as `search` takes them."""
    if method == "semantic":
        return None
    dropped = words_without_terms(query, database_url=database_url, data_dir=data_dir)
    if dropped:
        kind = (
            "only stop words"
            if all(any(ch.isalnum() for ch in word) for word in dropped)
            else "no word search can use (stop words, punctuation and symbols)"
        )
        return f"the query has {kind}, which search leaves out (dropped: {', '.join(dropped)})"
    searched = chunk_table(table, pg_schema)
    db = database.resolve(database_url, data_dir, create=False)
    with database.connect(db.url) as conn:
        terms = lexical_terms.query_terms(conn, query, source=source, table=searched)
    if any(term.df > 0 for term in terms.terms):
        return None
    return f"no searched document holds any of the query's words ({', '.join(query.split())})"
