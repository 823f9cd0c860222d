"""`python -m benchmarks.disk` prints what the data dir holds, and the
embedded server it measures keeps its WAL bounded (flow/db/embedded.py).
Figures are not judged here: nothing in this file is timed or sized."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import mdchunks
import pytest
from mdchunks.db import database, embedded

from benchmarks import disk


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A data dir for an embedded server of its own, stopped after the test."""
    monkeypatch.delenv("DATABASE_URL", raising=False)
    folder = tmp_path / "data"
    try:
        yield folder
    finally:
        database.stop_embedded(folder)


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


def test_the_embedded_server_keeps_its_wal_bounded(data_dir: Path) -> None:
    names = ("wal_segment_size", "wal_level", "max_wal_senders", *embedded.embedded_wal(1))
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


def test_a_server_made_with_16_mb_segments_keeps_two_of_them() -> None:
    # min_wal_size below two segments would stop the server from starting.
    wanted = embedded.embedded_wal(16)
    assert wanted == {
        "max_wal_size": "32",
        "min_wal_size": "32",
        "wal_compression": "pglz",
        "wal_recycle": "off",
    }
    # Such a server bounded by the release before: 32 MB, but segments recycled.
    before = {"max_wal_size": "32", "min_wal_size": "32", "wal_compression": "on"}
    assert not embedded.wal_settled({**before, "wal_recycle": "on"}, wanted)
    assert embedded.wal_settled({**before, "wal_recycle": "off"}, wanted)


def test_an_ingest_leaves_no_wal_behind_on_the_embedded_server(
    tiny_corpora: Path, data_dir: Path
) -> None:
    # A run that wrote ends with a checkpoint (embedded.settle_wal): the WAL
    # it filled is removed then, not left in pg_wal until the next automatic
    # checkpoint, up to max_wal_size later.
    written, after_checkpoint = _wal_of_an_ingest(tiny_corpora / "rust-book", data_dir)
    # The run wrote WAL (about 780 KB for this corpus); since the last
    # checkpoint only a little (room left for an autovacuum meanwhile).
    assert written > 512 * 1024, written
    assert after_checkpoint < 128 * 1024, (written, after_checkpoint)
    segments = list((data_dir / "pg" / "pg_wal").glob("0*"))
    assert len(segments) <= 2, segments


def test_a_first_ingest_of_an_empty_folder_leaves_no_migration_wal(
    tmp_path: Path, data_dir: Path
) -> None:
    # The migrations write too (a new database's tables): the run that
    # applied them checkpoints even when it wrote no row.
    empty = tmp_path / "empty"
    empty.mkdir()
    written, after_checkpoint = _wal_of_an_ingest(empty, data_dir)
    assert written > 256 * 1024, written
    assert after_checkpoint < 128 * 1024, (written, after_checkpoint)


def test_a_first_start_stopped_before_the_drops_is_finished_by_the_next(data_dir: Path) -> None:
    # The marker stays from initdb until initdb's databases are gone: a first
    # command killed in between leaves it, and the next start drops them. A
    # server without the marker (ours done, or made before it) keeps every
    # database it holds: one of yours named `postgres` too.
    marker = data_dir / database.UNFINISHED_SETUP_FILE
    listed = "SELECT datname FROM pg_database ORDER BY 1"
    db = database.resolve(None, data_dir)
    assert not marker.exists()
    with database.connect(db.url) as conn:
        conn.execute("CREATE DATABASE postgres")
    database.resolve(None, data_dir)  # no marker: a database of yours
    with database.connect(db.url) as conn:
        assert conn.execute(listed).fetchall() == [("mdchunks",), ("postgres",), ("template1",)]
    marker.touch()  # as a first start killed after initdb leaves it
    database.resolve(None, data_dir)
    with database.connect(db.url) as conn:
        assert conn.execute(listed).fetchall() == [("mdchunks",), ("template1",)]
    assert not marker.exists()


def _wal_of_an_ingest(folder: Path, data_dir: Path) -> tuple[int, int]:
    """The WAL a first ingest of `folder` wrote (from the server's start), and
    the WAL written since the last checkpoint after it, in bytes."""
    since_checkpoint = "SELECT pg_current_wal_lsn() - redo_lsn FROM pg_control_checkpoint()"
    db = database.resolve(None, data_dir)
    with database.connect(db.url) as conn:
        start = conn.execute("SELECT pg_current_wal_lsn()").fetchone()
    assert start is not None
    assert mdchunks.ingest(folder, source="s", data_dir=data_dir).ok
    with database.connect(db.url) as conn:
        row = conn.execute(
            f"SELECT pg_current_wal_lsn() - %s::pg_lsn, ({since_checkpoint})", [start[0]]
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])
