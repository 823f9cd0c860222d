"""Which fusion for `hybrid`? Recall of weighted RRF variants over the product's
own BM25 and semantic rankings (docs/search.md; issue #12).

    python -m spikes.hybrid_fusion --corpus PATH --golden FILE [--no-cache]
        [--long-input windows|truncate]

Ingests the corpus with the markdown chunker into a throwaway embedded
PostgreSQL, stores vectors with `ingest --embed`'s code, ranks every golden
query once by `rankings.bm25` and `rankings.semantic` (first
`HYBRID_DEPTH` each), then fuses them with `flow.fusion.rrf_scores` for each
(k, weights) of the grid and prints recall@1/5/10 per variant.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from mdchunks import api
from mdchunks.db import database
from mdchunks.retrieval import embedder, embedding, rankings
from mdchunks.retrieval.fusion import rrf_scores

from spikes import retrieval_eval
from spikes.recall import first_hit_rank, recall_at_k

GRID = (
    (60, (1, 1)),
    (60, (2, 1)),
    (20, (2, 1)),
    (10, (2, 1)),
    (5, (1, 1)),
    (5, (3, 2)),
    (5, (2, 1)),
    (2, (2, 1)),
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spikes.hybrid_fusion")
    parser.add_argument("--corpus", required=True, type=Path)
    parser.add_argument("--golden", required=True, type=Path)
    parser.add_argument("--no-cache", action="store_true", help="embed without the eval's cache")
    parser.add_argument(
        "--long-input", choices=embedder.LONG_INPUTS, default=embedder.DEFAULT_LONG_INPUT
    )
    args = parser.parse_args(argv)
    queries, _ = retrieval_eval.load_and_verify(args.golden, args.corpus)
    folder = Path(tempfile.mkdtemp(prefix="mdchunks-hybrid-fusion-"))
    depth = rankings.HYBRID_DEPTH
    try:
        url = retrieval_eval._throwaway_database(folder)
        recipe = retrieval_eval.CHUNKERS["markdown"].recipe
        api.ingest(args.corpus, source="markdown", recipe=recipe, database_url=url, data_dir=folder)
        with database.connect(url) as conn:
            embedding.ensure_schema(conn)
            # The eval's vector cache: a run after `spikes.retrieval_eval` encodes nothing.
            cache = retrieval_eval.VectorCache(
                lambda line: print(line, file=sys.stderr),
                long_input=args.long_input,
                folder=None if args.no_cache else retrieval_eval.default_cache_dir(),
            )
            embedding.sync(
                conn,
                "markdown",
                embedder.DEFAULT_MODEL,
                encoder=cache.encode,
                long_input=args.long_input,
            )
            texts = dict(conn.execute("SELECT id, text FROM content_chunks").fetchall())
            vectors = cache.encode([query.query for query in queries]).vectors
            lexical = [
                [hit.id for hit in rankings.bm25(conn, q.query, k=depth, source="markdown")]
                for q in queries
            ]
            semantic = [
                [hit.id for hit in rankings.semantic(conn, v, k=depth, source="markdown")]
                for v in vectors
            ]
    finally:
        database.stop_embedded(folder)
        shutil.rmtree(folder, ignore_errors=True)

    def recall(rankings: Sequence[Sequence[object]]) -> str:
        ranks = [
            first_hit_rank(q.fact, (texts[i] for i in ranking[:10]))
            for q, ranking in zip(queries, rankings, strict=True)
        ]
        return " ".join(f"{recall_at_k(ranks, k):.3f}" for k in (1, 5, 10))

    print(f"bm25 alone               {recall(lexical)}")
    print(f"semantic alone           {recall(semantic)}")
    for k, weights in GRID:
        fused = [
            [item for item, _ in rrf_scores([a, b], k, weights)]
            for a, b in zip(lexical, semantic, strict=True)
        ]
        print(f"rrf k={k:<3} weights {weights}  {recall(fused)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
