"""`python -m benchmarks.mcp_latency`: search through `mdchunks mcp` (the model
kept warm) beside `mdchunks search` (one process, and one model load, a query).

    .venv/bin/python -m benchmarks.mcp_latency [--sizes 10000,100000] [--queries 30]
        [--cli-runs 3] [--admin-url URL] [--json OUT]

The corpus is search_latency's (generated chunks COPYed into a migrated
`content_chunks`, the BM25 statistics refreshed), plus one random unit
vector per chunk under the default model's key, with its HNSW index: what a
semantic search costs does not depend on what the vectors mean, and
embedding 100k generated chunks would take hours on a laptop CPU. Queries are
encoded by the real model, in the server as in the CLI.

Per size and method (bm25, semantic, hybrid) it prints the server's warm
latency p50 / p95 (the SDK's client over stdio, `search` with k = 10: the
round trip an agent pays) and the CLI's per-process wall time (median of
`--cli-runs` runs of `mdchunks search`, start-up and model load included).
Wall-clock on a shared machine: read the ratios, not the absolutes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import psycopg
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mdchunks.db import database, migrate
from mdchunks.retrieval import embedder, embedding, lexical_stats
from psycopg import sql

from benchmarks import postgres
from benchmarks.search_latency import SOURCE, Corpus, grow, percentile

METHODS = ("bm25", "semantic", "hybrid")
DIMENSIONS = 384  # all-MiniLM-L6-v2's


@dataclass(frozen=True, slots=True)
class MethodResult:
    chunks: int
    method: str
    warm_ms_p50: float
    warm_ms_p95: float
    cli_ms_median: float

    @property
    def ratio(self) -> float:
        return self.cli_ms_median / self.warm_ms_p50 if self.warm_ms_p50 else 0.0


def add_vectors(url: str, start: int, stop: int, seed: int = 7) -> None:
    """Random unit vectors for the chunks [start, stop) in id order of generation."""
    rng = random.Random(seed + start)
    with database.connect(url) as conn:
        embedding.ensure_schema(conn)
    with psycopg.connect(url, autocommit=True) as conn:
        # Rows COPYed into an HNSW index each pay an insertion into the graph
        # (90k rows did not finish in 15 minutes); built after, it takes one pass.
        name = embedding.index_name(embedder.DEFAULT_MODEL, DIMENSIONS)
        conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(sql.Identifier(name)))
        ids = conn.execute(
            "SELECT id, rel_path FROM content_chunks ORDER BY rel_path, position "
            "OFFSET %s LIMIT %s",
            [start, stop - start],
        ).fetchall()
        with (
            conn.cursor() as cursor,
            cursor.copy(
                "COPY content_chunk_embeddings (id, source, rel_path, model, input_md5, embedding)"
                " FROM STDIN"
            ) as copy,
        ):
            for chunk_id, rel_path in ids:
                vector = [rng.gauss(0.0, 1.0) for _ in range(DIMENSIONS)]
                norm = sum(x * x for x in vector) ** 0.5
                literal = "[" + ",".join(f"{x / norm:.6f}" for x in vector) + "]"
                copy.write_row((chunk_id, SOURCE, rel_path, embedder.DEFAULT_MODEL, "", literal))
    with database.connect(url) as conn:
        embedding.ensure_index(conn, embedder.DEFAULT_MODEL, DIMENSIONS)
        conn.execute("ANALYZE content_chunk_embeddings")


def _env() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env["COCOINDEX_DISABLE_USAGE_TRACKING"] = "1"
    return env


async def warm(url: str, data_dir: Path, queries: Sequence[str]) -> dict[str, list[float]]:
    args = ["-m", "mdchunks", "mcp", "--database-url", url, "--data-dir", str(data_dir)]
    params = StdioServerParameters(command=sys.executable, args=args, env=_env())
    timings: dict[str, list[float]] = {method: [] for method in METHODS}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for method in METHODS:  # the first calls load the model and warm the caches
            await session.call_tool("search", {"query": queries[0], "method": method})
        for query in queries:
            for method in METHODS:
                started = time.perf_counter()
                result = await session.call_tool(
                    "search", {"query": query, "method": method, "k": 10}
                )
                timings[method].append((time.perf_counter() - started) * 1000)
                assert not result.is_error, result.content
    return timings


def cli(url: str, data_dir: Path, query: str, method: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "mdchunks",
                "search",
                query,
                "--method",
                method,
                "-k",
                "10",
                "--database-url",
                url,
                "--data-dir",
                str(data_dir),
            ],
            env=_env(),
            check=True,
            capture_output=True,
        )
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def format_results(results: Sequence[MethodResult]) -> str:
    lines = [
        "| chunks | method | mcp warm p50 ms | mcp warm p95 ms | CLI per process ms "
        "| CLI / warm p50 |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r.chunks} | {r.method} | {r.warm_ms_p50} | {r.warm_ms_p95} "
            f"| {r.cli_ms_median:.0f} | {r.ratio:.0f}x |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.mcp_latency")
    parser.add_argument("--sizes", default="10000,100000", help="chunk counts, ascending")
    parser.add_argument("--queries", type=int, default=30, help="queries per size and method")
    parser.add_argument("--cli-runs", type=int, default=3, help="CLI processes per method")
    parser.add_argument("--admin-url", help="a PostgreSQL role that may CREATE DATABASE")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    sizes = sorted(int(size) for size in args.sizes.split(",") if size.strip())
    corpus = Corpus()
    queries = [corpus.query() for _ in range(args.queries)]
    results: list[MethodResult] = []
    with (
        tempfile.TemporaryDirectory(prefix="mdchunks-mcp-bench-") as folder,
        postgres.server(Path(folder), args.admin_url) as server,
    ):
        url = server.create("mdchunks_mcp_bench")
        migrate.apply(url)
        done = 0
        for size in sizes:
            started = time.perf_counter()
            print(f"mcp_latency: generating {size - done} chunks and vectors", file=sys.stderr)
            grow(url, corpus, done, size)
            add_vectors(url, done, size)
            with database.connect(url) as conn:
                lexical_stats.refresh_stats(conn, SOURCE)
            print(f"mcp_latency: ready in {time.perf_counter() - started:.0f} s", file=sys.stderr)
            done = size
            timings = asyncio.run(warm(url, Path(folder), queries))
            for method in METHODS:
                results.append(
                    MethodResult(
                        chunks=size,
                        method=method,
                        warm_ms_p50=round(statistics.median(timings[method]), 1),
                        warm_ms_p95=round(percentile(timings[method], 0.95), 1),
                        cli_ms_median=cli(url, Path(folder), queries[0], method, args.cli_runs),
                    )
                )
                print(format_results(results[-1:]).splitlines()[-1], file=sys.stderr)
        server.drop("mdchunks_mcp_bench")
    print(format_results(results))
    if args.json:
        args.json.write_text(json.dumps([asdict(r) for r in results], indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
