"""Speed of the heading index next to the splitter it rides along with.

Not a test: run it and read the figures.

    COCOINDEX_DISABLE_USAGE_TRACKING=1 .venv/bin/python benchmarks/bench_heading_index.py

For each corpus (rust-book, tldr; and one ~50 MB document made of rust-book
chapters) it prints the MB/s of `build_index` and of
`RecursiveSplitter().split(..., language="markdown")` at the recipe's budgets
on the same texts (medians of a few runs), their time ratio (target <= 1.0,
stretch <= 0.5), and `assign`'s time over the splitter's chunks as a share of
`build_index`'s (target < 5%).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

os.environ.setdefault("COCOINDEX_DISABLE_USAGE_TRACKING", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cocoindex.ops.text import RecursiveSplitter  # noqa: E402
from mdchunks.heading_index import assign, build_index, decode_document  # noqa: E402

CORPORA = ROOT / "corpora"  # bundled (corpora/README.md); --rust-book / --tldr name others
BUDGETS = {"chunk_size": 2000, "min_chunk_size": 1000, "chunk_overlap": 200}


@dataclass(frozen=True)
class Figures:
    corpus: str
    documents: int
    megabytes: float
    index_mb_per_s: float
    split_mb_per_s: float
    index_over_split: float  # time ratio: target <= 1.0, stretch <= 0.5
    assign_share_of_index: float  # target < 0.05


def _seconds(run: Callable[[], object]) -> float:
    """Wall time of one run, without a stray full garbage collection in it
    (as timeit does): on the 50 MB document one would dwarf `assign`."""
    gc.collect()
    gc.disable()
    try:
        started = time.perf_counter()
        run()
        return time.perf_counter() - started
    finally:
        gc.enable()


def measure(name: str, texts: Sequence[str], repeats: int) -> Figures:
    splitter = RecursiveSplitter()
    megabytes = sum(len(text.encode("utf-8", "surrogatepass")) for text in texts) / 1e6

    def split_all() -> list[list[tuple[int, int]]]:
        return [
            [
                (chunk.start.char_offset, chunk.end.char_offset)
                for chunk in splitter.split(text, language="markdown", **BUDGETS)
            ]
            for text in texts
        ]

    def index_all() -> list[object]:
        return [build_index(text) for text in texts]

    spans = split_all()
    indexes = [build_index(text) for text in texts]

    def assign_all() -> None:
        for index, chunk_spans in zip(indexes, spans, strict=True):
            assign(index, chunk_spans)

    # Interleaved runs, so a change of machine load hits both sides alike.
    split_times, index_times, assign_times = [], [], []
    for _ in range(repeats):
        split_times.append(_seconds(split_all))
        index_times.append(_seconds(index_all))
        assign_times.append(_seconds(assign_all))
    split_seconds = statistics.median(split_times)
    index_seconds = statistics.median(index_times)
    assign_seconds = statistics.median(assign_times)
    return Figures(
        corpus=name,
        documents=len(texts),
        megabytes=round(megabytes, 2),
        index_mb_per_s=round(megabytes / index_seconds, 2),
        split_mb_per_s=round(megabytes / split_seconds, 2),
        index_over_split=round(index_seconds / split_seconds, 3),
        assign_share_of_index=round(assign_seconds / index_seconds, 4),
    )


def _read_corpus(folder: Path) -> list[str]:
    texts = [decode_document(path.read_bytes()) for path in sorted(folder.rglob("*.md"))]
    if not texts:
        raise SystemExit(f"no markdown files in the corpus folder {folder}")
    return texts


def _big_document(chapters: Sequence[str], megabytes: int) -> str:
    book = "\n\n".join(chapters)
    copies = max(1, megabytes * 1_000_000 // len(book.encode()))
    return "\n\n".join([book] * copies)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="runs per median (default 5)")
    parser.add_argument("--big-mb", type=int, default=50, help="size of the big document (MB)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--rust-book", type=Path, default=CORPORA / "rust-book", metavar="DIR")
    parser.add_argument("--tldr", type=Path, default=CORPORA / "tldr", metavar="DIR")
    args = parser.parse_args(argv)

    rust_book = _read_corpus(args.rust_book)
    results = [
        measure("rust-book", rust_book, args.repeats),
        measure("tldr", _read_corpus(args.tldr), args.repeats),
        measure(f"{args.big_mb} MB document", [_big_document(rust_book, args.big_mb)], 3),
    ]
    if args.json:
        print(json.dumps([asdict(figures) for figures in results], indent=2))
        return 0
    header = (
        f"{'corpus':<16} {'docs':>6} {'MB':>7} {'index MB/s':>11} {'split MB/s':>11} "
        f"{'index/split':>12} {'assign/index':>13}"
    )
    print(header)
    print("-" * len(header))
    for f in results:
        print(
            f"{f.corpus:<16} {f.documents:>6} {f.megabytes:>7.2f} {f.index_mb_per_s:>11.2f} "
            f"{f.split_mb_per_s:>11.2f} {f.index_over_split:>11.2f}x "
            f"{f.assign_share_of_index:>12.2%}"
        )
    print("\ntargets: index/split <= 1.00x (stretch 0.50x); assign/index < 5%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
