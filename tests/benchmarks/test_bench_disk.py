"""`python -m benchmarks.disk` prints what the data dir holds, and the
embedded server it measures keeps its WAL bounded (flow/db/database.py).
Figures are not judged here: nothing in this file is timed or sized."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mdchunks.db import database

from benchmarks import disk


def test_the_disk_benchmark_prints_each_part_and_the_ratio(
    tiny_corpora: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    out = tmp_path / "disk.json"
    assert disk.main(["--corpus", str(tiny_corpora / "rust-book"), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    for part in (
        "content_chunks heap",
        "content_chunks indexes",
        "WAL (pg_wal)",
        "server: catalogs, templates, logs",
        "engine state (cocoindex)",
        "data dir in all",
    ):
        assert part in printed, printed
    figures = json.loads(out.read_text())
    corpus = tiny_corpora / "rust-book"
    assert figures["markdown"] == sum(p.stat().st_size for p in corpus.rglob("*.md"))
    chunks = next(t for t in figures["tables"] if t["name"] == "content_chunks")
    assert chunks["heap"] > 0 and chunks["indexes"] > 0
    # Every part measured is there: the server's own files and the engine state too.
    assert figures["wal"] > 0 and figures["server_rest"] > 0 and figures["engine_state"] > 0
    assert figures["ratio"] == pytest.approx(figures["total"] / figures["markdown"])


def test_the_embedded_server_keeps_its_wal_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    data_dir = tmp_path / "data"
    try:
        db = database.resolve(None, data_dir)
        with database.connect(db.url) as conn:
            shown = [conn.execute(f"SHOW {name}").fetchone() for name in database.EMBEDDED_WAL]
        assert shown == [("32MB",), ("32MB",), ("pglz",)]
        database.resolve(None, data_dir)  # a second start finds them set
    finally:
        database.stop_embedded(data_dir)
