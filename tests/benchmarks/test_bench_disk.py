"""`python -m benchmarks.disk` prints what the data dir holds, and the
embedded server it measures keeps its WAL bounded (flow/db/database.py).
Figures are not judged here: nothing in this file is timed or sized."""

from __future__ import annotations

import json
from pathlib import Path

import mdchunks
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
    # The fixed part and the part per MB of markdown add up to the whole.
    assert figures["fixed"] == figures["wal"] + figures["server_rest"]
    assert figures["fixed"] + figures["proportional"] == figures["total"]
    assert figures["per_mb"] == pytest.approx(figures["proportional"] / figures["markdown"])
    assert f"the rest, per MB of markdown: {figures['per_mb']:.2f}x" in printed


def test_the_embedded_server_keeps_its_wal_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    data_dir = tmp_path / "data"
    names = ("wal_segment_size", "wal_level", "max_wal_senders", *database.embedded_wal(1))
    try:
        db = database.resolve(None, data_dir)
        with database.connect(db.url) as conn:
            shown = [conn.execute(f"SHOW {name}").fetchone() for name in names]
            databases = conn.execute("SELECT datname FROM pg_database ORDER BY 1").fetchall()
        # Ours and template1: initdb's `postgres` database and template0 went (7 MB each).
        assert databases == [("mdchunks",), ("template1",)]
        # A new server: 1 MB segments and minimal WAL from initdb, then the bounds.
        assert shown == [("1MB",), ("minimal",), ("0",), ("8MB",), ("2MB",), ("pglz",), ("off",)]
        database.resolve(None, data_dir)  # a second start finds them set
        segments = list((data_dir / "pg" / "pg_wal").glob("0*"))
        assert segments and all(s.stat().st_size == 1024 * 1024 for s in segments)
    finally:
        database.stop_embedded(data_dir)


def test_a_server_made_with_16_mb_segments_keeps_two_of_them() -> None:
    # min_wal_size below two segments would stop the server from starting.
    wanted = database.embedded_wal(16)
    assert wanted == {
        "max_wal_size": "32",
        "min_wal_size": "32",
        "wal_compression": "pglz",
        "wal_recycle": "off",
    }
    # Such a server bounded by the release before: 32 MB, but segments recycled.
    before = {"max_wal_size": "32", "min_wal_size": "32", "wal_compression": "on"}
    assert not database.wal_settled({**before, "wal_recycle": "on"}, wanted)
    assert database.wal_settled({**before, "wal_recycle": "off"}, wanted)


def test_an_ingest_leaves_no_wal_behind_on_the_embedded_server(
    tiny_corpora: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A run that wrote ends with a checkpoint (database.settle_wal): the WAL
    # it filled is removed then, not left in pg_wal until the next automatic
    # checkpoint, up to max_wal_size later.
    monkeypatch.delenv("DATABASE_URL", raising=False)
    data_dir = tmp_path / "data"
    since_checkpoint = "SELECT pg_current_wal_lsn() - redo_lsn FROM pg_control_checkpoint()"
    try:
        db = database.resolve(None, data_dir)
        with database.connect(db.url) as conn:
            start = conn.execute("SELECT pg_current_wal_lsn()").fetchone()
        assert mdchunks.ingest(tiny_corpora / "rust-book", source="s", data_dir=data_dir).ok
        with database.connect(db.url) as conn:
            row = conn.execute(
                f"SELECT pg_current_wal_lsn() - %s::pg_lsn, ({since_checkpoint})", [start[0]]
            ).fetchone()
        written, after_checkpoint = int(row[0]), int(row[1])
        # The run wrote WAL (about 780 KB for this corpus); since the last
        # checkpoint only a little (room left for an autovacuum meanwhile).
        assert written > 512 * 1024, written
        assert after_checkpoint < 128 * 1024, (written, after_checkpoint)
        segments = list((data_dir / "pg" / "pg_wal").glob("0*"))
        assert len(segments) <= 2, segments
    finally:
        database.stop_embedded(data_dir)
