"""The importers measured: headings recovered per format and conversion
throughput (MB/s of input) per format. `python -m spikes.formats [--repeat N]`.

Documents: the tender of spikes/format_documents.py (levels 1-9), the stored
samples (tests/importers/data: a rust-book chapter) and, for throughput, the
chapter's spec repeated `--repeat` times (default 20) in one file of each
format. Headings recovered: the heading index's headings of the converted
markdown equal to the expected (level, text), position by position, over
the expected count. One run, one process; the times are best of three.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from mdchunks.heading_index import build_index
from mdchunks.importers.registry import IMPORTERS

from spikes import format_documents as documents

ROOT = Path(__file__).resolve().parents[1]
CHAPTER = ROOT / "corpora" / "rust-book" / "ch03-02-data-types.md"
WRITERS = {"html": documents.html_of, "docx": documents.docx_of, "pdf": documents.pdf_of}


def _expected(spec: documents.Spec, fmt: str) -> list[tuple[int, str]]:
    return documents.pdf_levels(spec) if fmt == "pdf" else documents.expected_headings(spec, fmt)


def _recovered(data: bytes, fmt: str, expected: list[tuple[int, str]]) -> int:
    text = IMPORTERS[fmt].convert(data).text
    got = [(h.level, h.text) for h in build_index(text).headings]
    return sum(1 for a, b in zip(got, expected, strict=False) if a == b)


def _seconds(data: bytes, fmt: str) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        IMPORTERS[fmt].convert(data)
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=20, help="chapter copies in the big file")
    args = parser.parse_args()
    chapter = documents.spec_from_markdown("Data Types", CHAPTER.read_text())
    specs = [documents.tender(deep=True), chapter]
    big = documents.Spec("big", chapter.blocks * args.repeat)
    print(f"{'format':<7}{'headings recovered':>20}{'big file':>12}{'seconds':>9}{'MB/s':>8}")
    for fmt, write in WRITERS.items():
        found = expected = 0
        for spec in specs:
            want = _expected(spec, fmt)
            found += _recovered(write(spec), fmt, want)
            expected += len(want)
        data = write(big)
        seconds = _seconds(data, fmt)
        print(
            f"{fmt:<7}{f'{found}/{expected}':>20}{len(data) / 1e6:>10.2f}MB"
            f"{seconds:>9.2f}{len(data) / 1e6 / seconds:>8.2f}"
        )


if __name__ == "__main__":
    main()
