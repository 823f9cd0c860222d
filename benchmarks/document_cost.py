"""Time and peak memory per MB of one document, by shape (issue 26: bounded cost).

    python -m benchmarks.document_cost [--mb 2] [--shapes prose,table,headings] [--child]

With `--child`, each document is also chunked the way a run chunks one of
1 MiB or more, in a child process of the fork server (flow/source/bounded.py),
and that time printed beside: the child's cost is the difference.

Each shape is a generated document of about `--mb` MB, chunked by the
managed source's per-document work (`mdchunks.source.app.chunk_document`:
split, heading index, sections, rows) in a fresh process of its own
(`benchmarks.worker` style), so the peak is that document's. Printed per
shape: seconds per MB, and the peak resident memory above the process's
resident memory before the document (the interpreter, cocoindex, the
text itself) as a multiple of the document's size. The shapes are the ones
the issue measured: prose (rust-book chapters repeated), a pipe table of
100 one-character cells a row (the markdown splitter's slowest shape), a
single 10 MB-style line, and heading-dense text (`# a` lines).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

os.environ.setdefault("COCOINDEX_DISABLE_USAGE_TRACKING", "1")

RUST_BOOK = Path(__file__).resolve().parents[1] / "corpora" / "rust-book"


def prose(size: int) -> str:
    chapters = [path.read_text() for path in sorted(RUST_BOOK.glob("*.md"))]
    text, i = [], 0
    while sum(map(len, text)) < size:
        text.append(chapters[i % len(chapters)])
        i += 1
    return "\n\n".join(text)[:size]


def table(size: int, columns: int = 100) -> str:
    row = "|" + "|".join("1" for _ in range(columns)) + "|\n"
    head = "# Data\n\n" + row.replace("1", "h") + row.replace("1", "-")
    return head + row * max(1, (size - len(head)) // len(row))


def one_line(size: int) -> str:
    words = "lorem ipsum dolor sit amet "
    return "# One line\n\n" + (words * (size // len(words) + 1))[:size]


def headings(size: int) -> str:
    return "# a\n" * (size // 4)


SHAPES: dict[str, Callable[[int], str]] = {
    "prose": prose,
    "table": table,
    "line": one_line,
    "headings": headings,
}


def _peak_and_current_mb() -> tuple[float, float]:
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return int(fields["VmHWM"].split()[0]) / 1024, int(fields["VmRSS"].split()[0]) / 1024


def measure_one(shape: str, megabytes: float, child: bool = False) -> dict[str, float]:
    """In this process: one document of `shape`, chunked once (and, with
    `child`, once more in a child process, after the peak is read)."""
    from mdchunks.plugin.recipe import Recipe
    from mdchunks.source.app import chunk_document

    text = SHAPES[shape](int(megabytes * 1e6))
    chunk_document("# warm\n\nup\n", source="bench", rel_path="warm.md", recipe=Recipe())
    _, before = _peak_and_current_mb()
    started = time.perf_counter()
    done = chunk_document(text, source="bench", rel_path="doc.md", recipe=Recipe())
    seconds = time.perf_counter() - started
    peak, _ = _peak_and_current_mb()
    size_mb = len(text.encode()) / 1e6
    return {
        "mb": size_mb,
        "seconds": seconds,
        "rows": len(done.rows),
        "peak_above_mb": peak - before,
        "child_seconds": _in_child(text) if child else 0.0,
    }


def _in_child(text: str) -> float:
    """The same document as a run chunks one of 1 MiB or more: read, chunked
    and hashed in a child process of the fork server (flow/source/bounded.py),
    its rows sent back. The server is started first, on a small document: a
    run pays that once (about 1.6 s), not per document."""
    from mdchunks.plugin.recipe import Recipe
    from mdchunks.source.app import _read_chunk_and_hash
    from mdchunks.source.bounded import DocumentLimits, run_in_child

    limits = DocumentLimits(seconds=3600, memory_bytes=2**40)
    options = {"source": "bench", "rel_path": "doc.md", "recipe": Recipe()}
    run_in_child(_read_chunk_and_hash, (b"# warm\n",), options, limits)
    started = time.perf_counter()
    run_in_child(_read_chunk_and_hash, (text.encode(),), options, limits)
    return time.perf_counter() - started


def run(shape: str, megabytes: float, child: bool) -> dict[str, float]:
    """`measure_one` in a fresh process: its peak is this document's alone."""
    one = ["--one", shape, "--mb", str(megabytes)] + (["--child"] if child else [])
    found = subprocess.run(
        [sys.executable, "-m", "benchmarks.document_cost", *one],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    result: dict[str, float] = json.loads(found.stdout.splitlines()[-1])
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.document_cost")
    parser.add_argument("--mb", type=float, default=2.0, help="document size, MB [2]")
    parser.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated")
    parser.add_argument(
        "--child",
        action="store_true",
        help="also time each document in a child process, as a run chunks one of 1 MiB or more",
    )
    parser.add_argument("--one", choices=SHAPES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(measure_one(args.one, args.mb, args.child)))
        return 0
    header = f"{'shape':<10}{'MB':>7}{'s':>9}{'s/MB':>9}{'peak MB':>9}{'peak/size':>11}{'rows':>9}"
    print(header + (f"{'child s':>9}" if args.child else ""))
    for shape in args.shapes.split(","):
        r = run(shape, args.mb, args.child)
        print(
            f"{shape:<10}{r['mb']:>7.2f}{r['seconds']:>9.2f}{r['seconds'] / r['mb']:>9.2f}"
            f"{r['peak_above_mb']:>9.0f}{r['peak_above_mb'] / r['mb']:>10.0f}x{r['rows']:>9.0f}"
            + (f"{r['child_seconds']:>9.2f}" if args.child else ""),
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
