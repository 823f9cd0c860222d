"""`python -m benchmarks.search_latency`: BM25 at 100k to 1M chunks, before and after.

    .venv/bin/python -m benchmarks.search_latency [--sizes 100000,300000,1000000]
        [--queries 100] [--keep DIR] [--build-only] [--admin-url URL] [--json OUT]

A generated corpus (no files, no engine: rows COPYed straight into a
migrated `content_chunks`, so PostgreSQL computes search_vector and the
lengths as on ingest, then the GIN index built once): chunks of about 300
words (2 KB, the default budget) under a two- or three-level heading path,
words drawn from a Zipf distribution (s = 1) over 50,000 made-up words,
three in ten words an English stop word. Queries are 2-6 words drawn from
the same distribution, so most hold a common word (the hard case for BM25's
top k: many candidates). Each size is a database of its own holding the
first chunks of the corpus (built once with `--keep DIR`, an embedded
server's folder kept between runs; `--build-only` to build them ahead).

Per size it prints, over the same queries, interleaved: the query path as
at bdf4231 (MaxScore alone, `top_chunks=False`, exact) beside today's (with
the top chunks of common words, migration 0019) at k = 10, p50 / p95 / max,
and how much of the exact top 10 today's returns (overlap@10, and whether
every score is the same); the build, the sizes of the table, the GIN index,
the statistics and the top chunks; the recount as at bdf4231 and today's;
and what a batch run that rewrites one document spends on the statistics
(bdf4231: the recount; today: its share moved). Wall-clock on a shared
machine: read ratios, not absolutes. It also prints which BM25 index
extensions the server offers (`lexical_stats.index_engines`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from itertools import accumulate
from pathlib import Path

import psycopg
from mdchunks.db import database, migrate
from mdchunks.db.connection import Connection
from mdchunks.db.embedded import start_server
from mdchunks.db.queries import QUERIES
from mdchunks.retrieval import lexical, lexical_stats
from psycopg import sql

from benchmarks import postgres

SOURCE = "bench"
VOCABULARY = 50_000
WORDS_PER_CHUNK = 300
STOP_WORDS = ("the", "of", "and", "to", "a", "in", "is", "it", "that", "with", "for", "as")
_SYLLABLE_TEXT = "ka lo rin te mu sa vi nor pe qua zu dri fen gal hor ix jol mar ost"
SYLLABLES = tuple(_SYLLABLE_TEXT.split())


@dataclass(frozen=True, slots=True)
class SizeResult:
    chunks: int
    build_seconds: float  # rows COPYed and the GIN index built (cumulated, `built`)
    table_mb: float  # content_chunks with its TOAST, no index
    gin_mb: float  # the search vectors' GIN index
    stats_mb: float  # mdchunks_search_stats and _terms, with their indexes
    top_mb: float  # mdchunks_search_top (migration 0019), with its index
    recount_before_s: float | None  # bdf4231's recount: totals, df and bounds
    recount_after_s: float  # the same plus the top chunks
    one_document_before_s: float | None  # bdf4231: every changing run recounted
    one_document_after_s: float  # one document rewritten: its share moved
    before_ms_p50: float  # bdf4231's query path: MaxScore alone
    before_ms_p95: float
    before_ms_max: float
    after_ms_p50: float  # with the top chunks
    after_ms_p95: float
    after_ms_max: float
    overlap_at_10: float  # mean share of the exact top 10 the new path returns
    same_scores: bool  # every rank's score equal to the exact one (1e-9)


class Corpus:
    """Deterministic made-up words with Zipf weights; chunks and queries from them."""

    def __init__(self, seed: int = 15) -> None:
        self.rng = random.Random(seed)
        # The chunks draw from a generator of their own: a corpus of n chunks
        # is the first n of any larger one, whatever queries were drawn.
        self.rows = random.Random(seed + 1)
        words: set[str] = set()
        while len(words) < VOCABULARY:
            words.add("".join(self.rng.choices(SYLLABLES, k=self.rng.randint(2, 4))))
        self.words = sorted(words)
        self.rng.shuffle(self.words)  # rank order: the first is the most common
        self.cumulative = list(accumulate(1.0 / (rank + 1) for rank in range(VOCABULARY)))

    def draw(self, count: int, rng: random.Random | None = None) -> list[str]:
        return (rng or self.rng).choices(self.words, cum_weights=self.cumulative, k=count)

    def chunk_row(self, index: int) -> tuple[object, ...]:
        rng = self.rows
        path = [" ".join(self.draw(rng.randint(1, 3), rng)) for _ in range(rng.randint(2, 3))]
        words = [
            word if rng.random() > 0.3 else rng.choice(STOP_WORDS)
            for word in self.draw(WORDS_PER_CHUNK, rng)
        ]
        text = " ".join(words)
        rel_path, position = f"doc{index // 8:06}.md", index % 8
        breadcrumb = " > ".join(path)
        return (
            uuid.uuid5(uuid.NAMESPACE_URL, f"{rel_path}#{position}"),
            SOURCE,
            rel_path,
            position,
            0,
            len(text),
            text,
            path[-1],
            len(path),
            path,
            "bench",
            breadcrumb,
        )

    def query(self) -> str:
        return " ".join(self.draw(self.rng.randint(2, 6)))


COLUMNS = (
    "id, source, rel_path, position, char_start, char_end, text, heading_text, "
    "heading_level, heading_path, recipe, breadcrumb"
)


def grow(url: str, corpus: Corpus, start: int, stop: int) -> float:
    """COPY chunks start..stop into the table, then the search vectors' GIN
    index built in one pass, as a first ingest ends (`lexical_stats.rebuild_index`):
    dropped during the COPY, which would otherwise fill it row by row first."""
    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP INDEX IF EXISTS {SEARCH_INDEX}")
        with (
            conn.cursor() as cursor,
            cursor.copy(f"COPY content_chunks ({COLUMNS}) FROM STDIN") as copy,
        ):
            for index in range(start, stop):
                copy.write_row(corpus.chunk_row(index))
        conn.execute("SET maintenance_work_mem = '256MB'")
        conn.execute(f"CREATE INDEX {SEARCH_INDEX} ON content_chunks USING gin (search_vector)")
        conn.execute("VACUUM ANALYZE content_chunks")
    return time.perf_counter() - started


SEARCH_INDEX = "content_chunks_search_vector_idx"  # migrations/0002
BUILDS = "bench_builds"  # in each size's database: (chunks, seconds) of its build


def database_name(size: int) -> str:
    return f"mdchunks_search_bench_{size}"


def built(server: postgres.Server, sizes: Sequence[int]) -> dict[int, tuple[str, float]]:
    """A database per size holding the first `size` chunks of the corpus, and
    the seconds its rows took (COPY and the index, cumulated over the sizes
    below it: the corpus grows in place and each size is a copy of it). A
    size whose database exists already (a kept server, `--keep`) is reused."""
    found: dict[int, tuple[str, float]] = {}
    missing = []
    for size in sizes:
        url = server.url_for(database_name(size))
        try:
            with psycopg.connect(url, autocommit=True) as conn:
                row = conn.execute(f"SELECT chunks, seconds FROM {BUILDS}").fetchone()
        except psycopg.Error:
            row = None
        if row is not None and int(row[0]) == size:
            found[size] = (url, float(row[1]))
        else:
            missing.append(size)
    if not missing:
        return found
    growing = "mdchunks_search_bench_growing"
    url = server.create(growing)
    migrate.apply(url)
    corpus, done, seconds = Corpus(), 0, 0.0
    for size in sorted(missing):
        print(f"search_latency: generating {size - done} chunks", file=sys.stderr)
        seconds += grow(url, corpus, done, size)
        done = size
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"CREATE TABLE IF NOT EXISTS {BUILDS} (chunks integer, seconds real)")
            conn.execute(f"DELETE FROM {BUILDS}")
            conn.execute(f"INSERT INTO {BUILDS} VALUES (%s, %s)", [size, seconds])
        server.drop(database_name(size))
        with psycopg.connect(server.admin_url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                    sql.Identifier(database_name(size)), sql.Identifier(growing)
                )
            )
        found[size] = (server.url_for(database_name(size)), seconds)
    server.drop(growing)
    return found


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def _recount_before(conn: Connection) -> float:
    """bdf4231's `refresh_stats` of a large source (no top chunks), timed."""
    values = {"source": SOURCE}
    started = time.perf_counter()
    with conn.transaction():
        conn.execute(QUERIES["search_stats_refresh"], values)
        conn.execute(QUERIES["search_terms_clear"], values)
        conn.execute(QUERIES["search_terms_refresh"], values)
    return time.perf_counter() - started


class _Undone(Exception):
    """Raised to roll back a measured change."""


def _one_document(conn: Connection) -> float:
    """The statistics' share of a batch run that rewrites one document (its
    8 chunks, a word added to each): its share before and after the write,
    and the move, as writes.write does; rolled back after."""
    rel_path = "doc000004.md"
    seconds = 0.0
    with contextlib.suppress(_Undone), conn.transaction():
        started = time.perf_counter()
        before = lexical_stats.documents_share(conn, SOURCE, [rel_path])
        seconds += time.perf_counter() - started
        conn.execute(
            "UPDATE content_chunks SET text = text || ' zebra' WHERE source = %s AND rel_path = %s",
            [SOURCE, rel_path],
        )
        started = time.perf_counter()
        after = lexical_stats.documents_share(conn, SOURCE, [rel_path])
        lexical_stats.change_stats(conn, SOURCE, before, after)
        seconds += time.perf_counter() - started
        raise _Undone
    return seconds


def _megabytes(conn: Connection, expression: str) -> float:
    row = conn.execute(f"SELECT {expression}").fetchone()
    return round(float(row[0]) / 1e6, 1) if row else 0.0


def measure(
    url: str,
    queries: Sequence[str],
    chunks: int,
    build_seconds: float,
    recount_before: bool = True,
) -> SizeResult:
    with database.connect(url) as conn:  # the product's own connection, as search uses it
        before = _recount_before(conn) if recount_before else None
        started = time.perf_counter()
        lexical_stats.refresh_stats(conn, SOURCE)
        recount_after = time.perf_counter() - started
        conn.execute("VACUUM ANALYZE mdchunks_search_terms")
        conn.execute("VACUUM ANALYZE mdchunks_search_top")
        one_document = statistics.median(_one_document(conn) for _ in range(3))
        for query in queries[:5]:  # warm the caches once
            lexical.bm25(conn, query, k=10, source=SOURCE)
        before_ms, after_ms, overlaps, same = [], [], [], True
        for query in queries:  # interleaved: the same load on both
            started = time.perf_counter()
            exact = lexical.bm25(conn, query, k=10, source=SOURCE, top_chunks=False)
            before_ms.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            got = lexical.bm25(conn, query, k=10, source=SOURCE)
            after_ms.append((time.perf_counter() - started) * 1000)
            wanted = {chunk for chunk, _ in exact}
            overlaps.append(
                len(wanted & {chunk for chunk, _ in got}) / len(wanted) if wanted else 1
            )
            same = (
                same
                and len(got) == len(exact)
                and all(
                    math.isclose(a, b, rel_tol=1e-9)
                    for (_, a), (_, b) in zip(got, exact, strict=False)
                )
            )
        sizes = {
            "table_mb": _megabytes(conn, "pg_table_size('content_chunks')"),
            "gin_mb": _megabytes(conn, "pg_relation_size('content_chunks_search_vector_idx')"),
            "stats_mb": _megabytes(
                conn,
                "pg_total_relation_size('mdchunks_search_stats')"
                " + pg_total_relation_size('mdchunks_search_terms')",
            ),
            "top_mb": _megabytes(conn, "pg_total_relation_size('mdchunks_search_top')"),
        }
    return SizeResult(
        chunks=chunks,
        build_seconds=round(build_seconds, 1),
        **sizes,
        recount_before_s=None if before is None else round(before, 2),
        recount_after_s=round(recount_after, 2),
        one_document_before_s=None if before is None else round(before, 2),
        one_document_after_s=round(one_document, 3),
        before_ms_p50=round(statistics.median(before_ms), 1),
        before_ms_p95=round(percentile(before_ms, 0.95), 1),
        before_ms_max=round(max(before_ms), 1),
        after_ms_p50=round(statistics.median(after_ms), 1),
        after_ms_p95=round(percentile(after_ms, 0.95), 1),
        after_ms_max=round(max(after_ms), 1),
        overlap_at_10=round(statistics.mean(overlaps), 3),
        same_scores=same,
    )


def _shown(value: float | None) -> str:
    return "not measured" if value is None else str(value)


def format_results(results: Sequence[SizeResult]) -> str:
    lines = [
        "| chunks | build s | table MB | GIN MB | stats MB | top MB "
        "| recount s before / after | one-document run: statistics s before / after "
        "| p50 ms before / after | p95 ms before / after | max ms before / after "
        "| overlap@10 | same scores |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:--|",
    ]
    for r in results:
        lines.append(
            f"| {r.chunks} | {r.build_seconds} | {r.table_mb} | {r.gin_mb} | {r.stats_mb} "
            f"| {r.top_mb} | {_shown(r.recount_before_s)} / {r.recount_after_s} "
            f"| {_shown(r.one_document_before_s)} / {r.one_document_after_s} "
            f"| {r.before_ms_p50} / {r.after_ms_p50} | {r.before_ms_p95} / {r.after_ms_p95} "
            f"| {r.before_ms_max} / {r.after_ms_max} | {r.overlap_at_10} | {r.same_scores} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.search_latency")
    parser.add_argument("--sizes", default="10000,100000", help="chunk counts, ascending")
    parser.add_argument("--queries", type=int, default=100, help="queries per size")
    parser.add_argument("--admin-url", help="a PostgreSQL role that may CREATE DATABASE")
    parser.add_argument(
        "--keep",
        type=Path,
        help="an embedded server's folder kept between runs (its corpora are built once)",
    )
    parser.add_argument("--build-only", action="store_true", help="build the corpora, measure none")
    parser.add_argument(
        "--no-recount-before",
        action="store_true",
        help="skip timing bdf4231's recount (the slowest step at 1M chunks)",
    )
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    sizes = sorted(int(size) for size in args.sizes.split(",") if size.strip())
    corpus = Corpus()
    queries = [corpus.query() for _ in range(args.queries)]
    results: list[SizeResult] = []
    with contextlib.ExitStack() as stack:
        if args.keep and not args.admin_url:
            args.keep.mkdir(parents=True, exist_ok=True)
            embedded = start_server(args.keep.resolve() / "pg")
            server = postgres.Server(admin_url=embedded.get_uri("postgres"), kind="embedded")
        else:
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="mdchunks-bench-"))
            server = stack.enter_context(postgres.server(Path(folder), args.admin_url))
        databases = built(server, sizes)
        if args.build_only:
            return 0
        with database.connect(databases[sizes[0]][0]) as conn:
            engines = lexical_stats.index_engines(conn)
        offered = ", ".join(
            f"{name} ({'installed' if on else 'available'})" for name, on in engines.items()
        )
        engines_line = "BM25 index engines on this server: " + (
            offered or f"none of {', '.join(lexical_stats.INDEX_ENGINES)} (ours alone measured)"
        )
        for size in sizes:
            url, seconds = databases[size]
            migrate.apply(url)  # a corpus built by an earlier release: this one's schema
            print(f"search_latency: measuring {len(queries)} queries", file=sys.stderr)
            results.append(
                measure(url, queries, size, seconds, recount_before=not args.no_recount_before)
            )
            print(format_results(results[-1:]).splitlines()[-1], file=sys.stderr)
    print(engines_line)
    print(format_results(results))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
