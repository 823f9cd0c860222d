"""Issue 26, item 3: a full disk is one line and exit 3, and a run it stopped
is shown as unfinished (docs/reliability.md, "A full disk").

Real filesystems that fill: a tmpfs mounted (as root: CI runs as root) under
the engine state's folder, or under the embedded PostgreSQL's data, filled
by a file of our own to just above the free space a run keeps
(flow/source/space.py), then a generated corpus whose rows and state need
more. Filling with a file rather than mounting a tmpfs smaller than the
corpus keeps each run to a few MB of markdown (seconds, not minutes), and
deleting it is how space comes back; or filled to the last block while the
engine writes, as another program would. The run must stop with one line naming
the filesystem, and `status` and `search` must say the source is unfinished;
after the file is gone the next run must give exactly a clean run's rows.
The same for `ingest --live`: a disk that fills while it watches ends the
watch, its lock given back.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import mdchunks
import pytest
from mdchunks.errors import DiskFull
from mdchunks.source import space
from reliability_support import (
    Done,
    count_rows,
    finish,
    kill,
    query,
    run_cli,
    start_cli,
    wait_until,
)

from tests.flow.flow_checks import assert_rows_match_files

RUN_TIMEOUT = 120  # seconds; a run that met a full disk used to retry forever
MB = 1024 * 1024


def _corpus(root: Path, megabytes: float) -> Path:
    """Markdown documents of headings and prose, `megabytes` in all."""
    rng = random.Random(26)
    words = [f"w{i}x{rng.randrange(10**6)}" for i in range(3000)]
    root.mkdir(parents=True)
    total, n = 0, 0
    while total < megabytes * MB:
        sections = "".join(
            f"## Section {s}\n\n" + " ".join(rng.choice(words) for _ in range(300)) + "\n\n"
            for s in range(40)
        )
        text = f"# Document {n}\n\n{sections}"
        (root / f"doc{n:03d}.md").write_text(text)
        total, n = total + len(text), n + 1
    return root


@contextlib.contextmanager
def _tmpfs(where: Path, megabytes: int) -> Iterator[Path]:
    """A tmpfs of `megabytes` mounted at `where` for the block. Not mountable
    here is a failure, not a skip: the test would prove nothing."""
    where.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={megabytes}m", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.fail(
            f"these tests need a real small filesystem: `mount -t tmpfs` failed "
            f"({mounted.stderr.strip() or mounted.returncode}); run them as root (CI does)"
        )
    try:
        yield where
    finally:
        if subprocess.run(["umount", str(where)], check=False).returncode != 0:
            subprocess.run(["umount", "-l", str(where)], check=False)


def _fill(mount: Path, leave: int) -> Path:
    """A file that leaves `space.RESERVE_BYTES + leave` bytes free on `mount`."""
    stats = os.statvfs(mount)
    free = stats.f_bavail * stats.f_frsize
    filler = mount / "filler"
    descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        os.posix_fallocate(descriptor, 0, free - space.RESERVE_BYTES - leave)
    finally:
        os.close(descriptor)
    return filler


def _assert_stopped_by_full_disk(done: Done, names: str, mount: Path) -> None:
    """Exit 3, one error line naming the filesystem and what to do, no
    engine log or backtrace anywhere (the progress lines apart, with -q none)."""
    assert done.code == 3, done.text
    for noise in ("Traceback", "backtrace", "ERROR", "os error"):
        assert noise not in done.text, done.text
    lines = [line for line in done.err.splitlines() if line.strip()]
    assert len(lines) == 1, done.err
    assert done.out == "", done.out
    line = lines[0]
    assert line.startswith("error: the filesystem of "), line
    assert "run the same command again" in line, line
    assert names in line, line
    assert str(mount) in line and "free space there" in line, line


def _assert_unfinished(where: list[str], source: str) -> None:
    status = run_cli("status", *where, timeout=RUN_TIMEOUT)
    assert status.code == 0, status.text
    assert "last run did not finish" in status.out, status.out
    # Both say what completes it: the source's folder ingested again, by name.
    # (against the same database: its data dir, or "--database-url URL")
    again = re.compile(
        rf"run `mdchunks ingest \S+ --source {source} --(data-dir|database-url) \S+` again"
    )
    assert again.search(" ".join(status.out.split())), status.out
    found = run_cli("search", "Section", "-k", "1", *where, timeout=RUN_TIMEOUT)
    assert found.code == 0 and f"{source}:doc" in found.out, found.text
    warned = [line for line in found.err.splitlines() if line.strip()]
    assert len(warned) == 1 and "its last run did not finish" in warned[0], found.err
    assert repr(source) in warned[0] and again.search(warned[0]), found.err


def _recover(where: list[str], root: Path, source: str, url: str) -> None:
    # Not waiting for the lock: the stopped run gave it back.
    again = run_cli("ingest", str(root), "-q", "--lock-wait", "0", *where, timeout=RUN_TIMEOUT)
    assert again.code == 0, again.text
    assert "last run of this source did not finish" in again.out, again.out
    assert_rows_match_files(url, root, source=source)
    status = run_cli("status", *where, timeout=RUN_TIMEOUT)
    assert status.code == 0 and "did not finish" not in status.out, status.text
    found = run_cli("search", "Section", "-k", "1", *where, timeout=RUN_TIMEOUT)
    assert found.code == 0 and found.err == "", found.text


def _given_url(tmp_path: Path, database_url: str, megabytes: float) -> tuple[Path, Path, list[str]]:
    """A corpus, a data dir for the engine state, and the session's database."""
    data_dir = tmp_path / "data"
    where = ["--database-url", database_url, "--data-dir", str(data_dir)]
    return _corpus(tmp_path / "notes", megabytes), data_dir, where


def test_engine_state_filling_up_stops_the_run_in_one_line(
    tmp_path: Path, database_url: str
) -> None:
    root, data_dir, where = _given_url(tmp_path, database_url, 2)
    with _tmpfs(data_dir / "state", space.RESERVE_BYTES // MB + 16) as mount:
        run = start_cli("ingest", str(root), "-q", *where)
        # Another program takes the disk below the reserve while the engine
        # writes (its first rows are in). To the last block in one step, the
        # engine can meet the full disk in the half second between two checks
        # and log its retry on stdout before the check stops it (docs/reliability.md).
        assert wait_until(lambda: count_rows(database_url, "notes") > 0, timeout=RUN_TIMEOUT)
        filler = _fill(mount, leave=-16 * MB)
        try:
            done = finish(run, timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            kill(run)
            pytest.fail(f"the run did not stop within {RUN_TIMEOUT} s of its disk filling up")
        _assert_stopped_by_full_disk(done, "the engine state is nearly full", mount)
        assert "the source is marked unfinished" in done.err
        _assert_unfinished(where, "notes")
        filler.unlink()  # space comes back
        _recover(where, root, "notes", database_url)


def test_a_disk_filled_as_the_engine_ends_stops_the_run(tmp_path: Path, database_url: str) -> None:
    """The watchdog looks twice a second while the engine runs; a disk that
    fills after its last look (here: as the run reports its last document
    done) stops the run before the reconciliation writes on it, the source
    marked unfinished, instead of a run that ends as if the disk were fine.
    (2 MB: the engine writes batches of rows as it goes, which search finds.)"""
    root, data_dir, where = _given_url(tmp_path, database_url, 2)
    with _tmpfs(data_dir / "state", space.RESERVE_BYTES // MB + 16) as mount:
        filled: list[Path] = []

        def fill_when_done(progress: mdchunks.Progress) -> None:
            if progress.done == progress.total and not filled:
                filled.append(_fill(mount, leave=-16 * MB))

        with pytest.raises(DiskFull, match="the engine state is nearly full") as stopped:
            mdchunks.ingest(
                root,
                source="notes",
                database_url=database_url,
                data_dir=data_dir,
                progress=fill_when_done,
            )
        assert "the run stopped, and the source is marked unfinished" in str(stopped.value)
        _assert_unfinished(where, "notes")
        filled[0].unlink()
        _recover(where, root, "notes", database_url)


def test_database_filling_up_stops_the_run_in_one_line(tmp_path: Path) -> None:
    root = _corpus(tmp_path / "notes", 2)
    data_dir = tmp_path / "data"
    pgdata = data_dir / "pg"
    where = ["--data-dir", str(data_dir)]
    # The embedded server's own files take some 45 MB.
    with _tmpfs(pgdata, space.RESERVE_BYTES // MB + 96) as mount:
        try:
            # A first run of one document, to its end: the source has rows
            # whenever the disk stops the next one (which may be before that
            # one writes a row: search finds the source either way).
            later = tmp_path / "later"
            later.mkdir()
            for document in sorted(root.glob("*.md"))[1:]:
                document.rename(later / document.name)
            made = run_cli("ingest", str(root), "-q", *where, timeout=RUN_TIMEOUT)
            assert made.code == 0, made.text
            for document in later.iterdir():
                document.rename(root / document.name)
            # Room for the server's own writes meanwhile (a WAL segment is
            # 1 MB), not for the run's (some 8 MB a MB of markdown).
            filler = _fill(mount, leave=4 * MB)
            done = run_cli("ingest", str(root), "-q", *where, timeout=RUN_TIMEOUT)
            _assert_stopped_by_full_disk(done, "the embedded PostgreSQL's data", mount)
            _assert_unfinished(where, "notes")
            filler.unlink()
            _recover(where, root, "notes", f"postgresql://postgres:@/mdchunks?host={pgdata}")
        finally:
            run_cli("stop", *where, timeout=RUN_TIMEOUT)


def test_a_disk_already_full_refuses_the_run_and_changes_nothing(
    tmp_path: Path, database_url: str
) -> None:
    root, data_dir, where = _given_url(tmp_path, database_url, 0.1)
    with _tmpfs(data_dir / "state", 16) as mount:
        for live in ((), ("--live",)):  # the watch's start is the same catch-up ingest
            done = run_cli("ingest", str(root), "-q", *live, *where, timeout=RUN_TIMEOUT)
            _assert_stopped_by_full_disk(done, "the engine state is nearly full", mount)
            assert "nothing was changed" in done.err
        status = run_cli("status", *where, timeout=RUN_TIMEOUT)
        assert status.code == 0 and "did not finish" not in status.out, status.text


# A watch stopped by a full disk leaves within this (its engine gets 3 s to
# wind down, flow/source/engine.py); it used to retry its writes forever.
WATCH_STOP_LIMIT = 30


def _append(document: Path, heading: str) -> None:
    with document.open("a") as out:
        out.write(f"\n## {heading}\n\nsome words to chunk\n")


def _has_text(url: str, words: str) -> bool:
    found = query(url, "SELECT 1 FROM content_chunks WHERE text LIKE %s LIMIT 1", [f"%{words}%"])
    return bool(found)


def test_engine_state_filling_up_under_a_watch_stops_it_in_one_line(
    tmp_path: Path, database_url: str
) -> None:
    root, data_dir, where = _given_url(tmp_path, database_url, 0.2)
    with _tmpfs(data_dir / "state", space.RESERVE_BYTES // MB + 16) as mount:
        watch = start_cli("ingest", str(root), "-q", "--live", *where)
        assert watch.stdout is not None
        out: list[str] = []
        began = threading.Event()

        def read() -> None:  # stdout as it comes: the watch says when it began
            assert watch.stdout is not None
            for line in watch.stdout:
                out.append(line)
                if line.startswith("watching "):
                    began.set()

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            assert began.wait(RUN_TIMEOUT), "the watch did not begin"
            # The watch is running once it has chunked a change.
            _append(root / "doc000.md", "Appended while watched")
            assert wait_until(
                lambda: _has_text(database_url, "Appended while watched"), timeout=RUN_TIMEOUT
            )
            # Another program takes the disk below the reserve while it watches
            # (to the last block instead, the engine can meet the full disk in the
            # half second between two checks and log its retry: docs/reliability.md).
            filler = _fill(mount, leave=-16 * MB)
            filled = time.monotonic()
            _append(root / "doc000.md", "Appended while full")
            (root / "doc001.md").touch()
            code = watch.wait(timeout=WATCH_STOP_LIMIT)
            seconds = time.monotonic() - filled
        except subprocess.TimeoutExpired:
            kill(watch)
            pytest.fail(f"the watch did not stop within {WATCH_STOP_LIMIT} s of its disk filling")
        finally:
            if watch.poll() is None:
                kill(watch)
        reader.join(timeout=10)
        assert watch.stderr is not None
        done = Done(code, "".join(out), watch.stderr.read(), seconds)
        watch.stderr.close()
        # After the catch-up's report, stdout has the watch's own lines, nothing else.
        watched = done.out.split(f"watching {root} for changes (Ctrl-C to stop)\n", 1)[1]
        assert all(line.startswith("live: ") for line in watched.splitlines()), done.out
        for noise in ("Traceback", "backtrace", "ERROR", "os error", "error:"):
            assert noise not in done.out, done.out
        _assert_stopped_by_full_disk(
            Done(done.code, "", done.err, done.seconds), "the engine state is nearly full", mount
        )
        assert "the watch stopped, and the source is marked unfinished" in done.err, done.err
        _assert_unfinished(where, "notes")
        filler.unlink()
        _recover(where, root, "notes", database_url)
