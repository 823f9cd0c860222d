"""A run's progress off a terminal: a line every few seconds on stderr, none
with --quiet (flow/cli/progress.py)."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import Ingest, RunCli
from mdchunks import api
from mdchunks.cli.progress import ProgressLines, progress_line

LINE = re.compile(r"^ingesting docs: [\d,]+ of [\d,]+ documents, \d+\.\d MB/s, \d+ s$")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_one_line_per_interval_and_none_for_a_short_run() -> None:
    clock, lines = Clock(), list[str]()
    report = ProgressLines("ingesting docs", lines.append, interval=5.0, clock=clock)
    report(api.Progress(0, 10, 0))
    clock.now += 4.9
    report(api.Progress(3, 10, 1_000_000))
    assert lines == []  # under the interval: a short run prints nothing
    clock.now += 0.2
    report(api.Progress(4, 10, 2_550_000))
    clock.now += 1.0
    report(api.Progress(5, 10, 3_000_000))
    assert lines == ["ingesting docs: 4 of 10 documents, 0.5 MB/s, 5 s"]
    clock.now += 10.0
    report(api.Progress(10, 10, 9_000_000))
    assert len(lines) == 1  # done: the summary follows, no last line


def test_the_line_counts_thousands_and_megabytes_per_second() -> None:
    line = progress_line("ingesting vue", api.Progress(1200, 5000, 31_000_000), 10.0)
    assert line == "ingesting vue: 1,200 of 5,000 documents, 3.1 MB/s, 10 s"


def test_a_run_reports_documents_and_bytes_as_it_goes(ingest: Ingest, docs: Path) -> None:
    seen: list[api.Progress] = []
    lines: list[str] = []
    lines_of = ProgressLines("ingesting docs", lines.append, interval=0.0)

    def progress(done: api.Progress) -> None:
        seen.append(done)
        lines_of(done)

    report = ingest(docs, progress=progress)
    assert report.ok
    assert seen[-1] == api.Progress(8, 8, report.bytes_processed) and report.bytes_processed > 0
    assert [p.done for p in seen] == sorted(p.done for p in seen)
    assert lines and all(LINE.match(line) for line in lines), lines


def test_quiet_prints_no_progress_and_the_summary(run_cli: RunCli, docs: Path) -> None:
    result = run_cli("ingest", str(docs), "--source", "docs", "--quiet")
    assert result.code == 0, result.err
    assert result.err == ""
    assert "documents: 8 processed" in result.out
    again = run_cli("backfill", "--source", "docs", "-q", "--chunk-size", "1500")
    assert again.code == 0 and again.err == ""


def test_while_the_chunks_are_embedded_the_line_counts_vectors() -> None:
    line = progress_line("ingesting vue", api.Progress(256, 688, 0, unit="vectors"), 40.0)
    assert line == "ingesting vue: 256 of 688 vectors, 40 s"


def test_the_line_names_a_large_document_while_it_is_chunked() -> None:
    busy = api.Progress(4, 5, 10_000, chunking=("sub/huge\x1b[2J.md", 5_200_000))
    line = progress_line("ingesting docs", busy, 5.0)
    # The name made safe for a terminal, as every printed name is (flow/names.py).
    assert line == (
        "ingesting docs: 4 of 5 documents, 0.0 MB/s, 5 s; chunking sub/huge\\x1b[2J.md (5.2 MB)"
    )


def test_a_run_names_the_large_document_it_is_chunking(ingest: Ingest, tmp_path: Path) -> None:
    # Chunked in a child process (2 MB of prose takes a second or two): the
    # progress the run reports while it waits names that document.
    root = tmp_path / "big"
    root.mkdir()
    (root / "small.md").write_text("# Small\n\nA page.\n")
    paragraph = "Words of a long page, one sentence after another. " * 20 + "\n\n"
    (root / "huge.md").write_text("# Huge\n\n" + paragraph * (2_000_000 // len(paragraph)))
    size = (root / "huge.md").stat().st_size
    seen: list[api.Progress] = []
    assert ingest(root, progress=seen.append).ok
    assert ("huge.md", size) in {p.chunking for p in seen}, seen[-3:]
    assert seen[-1].chunking is None
