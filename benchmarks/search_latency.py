"""`python -m benchmarks.search_latency`: BM25 query latency at 10k and 100k chunks.

    .venv/bin/python -m benchmarks.search_latency [--sizes 10000,100000] [--queries 100]
        [--admin-url URL] [--json OUT]

A generated corpus (no files, no engine: rows COPYed straight into a
migrated `content_chunks`, so PostgreSQL computes search_vector and the
lengths as on ingest): chunks of about 300 words (2 KB, the default budget)
under a two- or three-level heading path, words drawn from a Zipf
distribution (s = 1) over 50,000 made-up words, three in ten words an English
stop word. Queries are 2-6 words drawn from the same distribution, so most
hold a common word (the hard case for BM25's top k: many candidates).

Per size it prints, over the same queries: the product's BM25
(`flow.lexical.bm25`, k = 10) latency p50 / p95 / max, the old ranking's
(`ts_rank_cd` over every matching chunk) for comparison, the statistics
refresh that every changing ingest run pays (`lexical.refresh_stats`), and
the generation time. The corpus grows in place: the 100k figures are over
the 10k chunks plus 90k more. Wall-clock on a shared machine: read ratios,
not absolutes.
"""

from __future__ import annotations

import argparse
import json
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
from mdchunks.retrieval import lexical

from benchmarks import postgres

SOURCE = "bench"
VOCABULARY = 50_000
WORDS_PER_CHUNK = 300
STOP_WORDS = ("the", "of", "and", "to", "a", "in", "is", "it", "that", "with", "for", "as")
_SYLLABLE_TEXT = "ka lo rin te mu sa vi nor pe qua zu dri fen gal hor ix jol mar ost"
SYLLABLES = tuple(_SYLLABLE_TEXT.split())
OLD_RANKING = """
SELECT c.id, ts_rank_cd(c.search_vector, q) AS score
FROM content_chunks c,
     CAST(replace(plainto_tsquery('english', %(query)s)::text, ' & ', ' | ') AS tsquery) AS q
WHERE c.search_vector @@ q AND c.source = %(source)s
ORDER BY score DESC, c.rel_path, c.position
LIMIT 10
"""


@dataclass(frozen=True, slots=True)
class SizeResult:
    chunks: int
    generate_seconds: float
    refresh_seconds: float
    bm25_ms_p50: float
    bm25_ms_p95: float
    bm25_ms_max: float
    old_ms_p50: float
    old_ms_p95: float
    old_ms_max: float


class Corpus:
    """Deterministic made-up words with Zipf weights; chunks and queries from them."""

    def __init__(self, seed: int = 15) -> None:
        self.rng = random.Random(seed)
        words: set[str] = set()
        while len(words) < VOCABULARY:
            words.add("".join(self.rng.choices(SYLLABLES, k=self.rng.randint(2, 4))))
        self.words = sorted(words)
        self.rng.shuffle(self.words)  # rank order: the first is the most common
        self.cumulative = list(accumulate(1.0 / (rank + 1) for rank in range(VOCABULARY)))

    def draw(self, count: int) -> list[str]:
        return self.rng.choices(self.words, cum_weights=self.cumulative, k=count)

    def chunk_row(self, index: int) -> tuple[object, ...]:
        path = [" ".join(self.draw(self.rng.randint(1, 3))) for _ in range(self.rng.randint(2, 3))]
        words = [
            word if self.rng.random() > 0.3 else self.rng.choice(STOP_WORDS)
            for word in self.draw(WORDS_PER_CHUNK)
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
    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        with (
            conn.cursor() as cursor,
            cursor.copy(f"COPY content_chunks ({COLUMNS}) FROM STDIN") as copy,
        ):
            for index in range(start, stop):
                copy.write_row(corpus.chunk_row(index))
        conn.execute("VACUUM ANALYZE content_chunks")
    return time.perf_counter() - started


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def measure(url: str, queries: Sequence[str], chunks: int, generate_seconds: float) -> SizeResult:
    with database.connect(url) as conn:  # the product's own connection, as search uses it
        started = time.perf_counter()
        lexical.refresh_stats(conn, SOURCE)
        refresh = time.perf_counter() - started
        for query in queries[:5]:  # warm the caches once
            lexical.bm25(conn, query, k=10, source=SOURCE)
        bm25_ms, old_ms = [], []
        for query in queries:
            started = time.perf_counter()
            lexical.bm25(conn, query, k=10, source=SOURCE)
            bm25_ms.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            conn.execute(OLD_RANKING, {"query": query, "source": SOURCE}).fetchall()
            old_ms.append((time.perf_counter() - started) * 1000)
    return SizeResult(
        chunks=chunks,
        generate_seconds=round(generate_seconds, 1),
        refresh_seconds=round(refresh, 2),
        bm25_ms_p50=round(statistics.median(bm25_ms), 1),
        bm25_ms_p95=round(percentile(bm25_ms, 0.95), 1),
        bm25_ms_max=round(max(bm25_ms), 1),
        old_ms_p50=round(statistics.median(old_ms), 1),
        old_ms_p95=round(percentile(old_ms, 0.95), 1),
        old_ms_max=round(max(old_ms), 1),
    )


def format_results(results: Sequence[SizeResult]) -> str:
    lines = [
        "| chunks | generate s | stats refresh s | bm25 p50 ms | bm25 p95 ms | bm25 max ms "
        "| ts_rank_cd p50 ms | ts_rank_cd p95 ms | ts_rank_cd max ms |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r.chunks} | {r.generate_seconds} | {r.refresh_seconds} | {r.bm25_ms_p50} "
            f"| {r.bm25_ms_p95} | {r.bm25_ms_max} | {r.old_ms_p50} | {r.old_ms_p95} "
            f"| {r.old_ms_max} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.search_latency")
    parser.add_argument("--sizes", default="10000,100000", help="chunk counts, ascending")
    parser.add_argument("--queries", type=int, default=100, help="queries per size")
    parser.add_argument("--admin-url", help="a PostgreSQL role that may CREATE DATABASE")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    sizes = sorted(int(size) for size in args.sizes.split(",") if size.strip())
    corpus = Corpus()
    queries = [corpus.query() for _ in range(args.queries)]
    results: list[SizeResult] = []
    with (
        tempfile.TemporaryDirectory(prefix="mdchunks-search-bench-") as folder,
        postgres.server(Path(folder), args.admin_url) as server,
    ):
        url = server.create("mdchunks_search_bench")
        migrate.apply(url)
        done = 0
        for size in sizes:
            print(f"search_latency: generating {size - done} chunks", file=sys.stderr)
            seconds = grow(url, corpus, done, size)
            done = size
            print(f"search_latency: measuring {len(queries)} queries", file=sys.stderr)
            results.append(measure(url, queries, size, seconds))
            print(format_results(results[-1:]).splitlines()[-1], file=sys.stderr)
        server.drop("mdchunks_search_bench")
    print(format_results(results))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
