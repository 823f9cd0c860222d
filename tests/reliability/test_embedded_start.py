"""A new embedded server starts whatever its first start met (issue 42,
item 10). Under load the suite met two things: an initdb that did not finish
(killed, with its single-user backend), after which the retry started the
half-made cluster (`"base/1" is not a valid data directory`); and a
postmaster.pid of 7 lines with a negative pid (a single-user backend's),
which pgserver reads before it starts a server and fails on: three starts
2 s apart all failed ("cannot start the embedded PostgreSQL ... _lines"). A
start now runs initdb again over what a failed one left, waits for a
postmaster.pid still being written, and removes one whose process is gone,
as PostgreSQL itself would.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
from reliability_support import run_cli, wait_until


def _gone_pid() -> int:
    """The pid of a process that has ended."""
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(done.stdout)


def _server_running(pgdata: Path) -> bool:
    try:
        pid = int((pgdata / "postmaster.pid").read_text().splitlines()[0])
    except (OSError, ValueError, IndexError):
        return False
    return psutil.pid_exists(abs(pid))


def test_a_stale_single_user_lock_file_does_not_stop_the_start(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    where = ["--data-dir", str(data_dir)]
    try:
        made = run_cli("migrate", *where)  # made and started, then stopped
        assert made.code == 0, made.text
        run_cli("stop", *where)
        pgdata = data_dir / "pg"
        # Stopped (by `stop`, or gone by itself on a loaded machine): no
        # server's lock file is left to overwrite.
        assert wait_until(lambda: not _server_running(pgdata), timeout=60)
        # What a single-user backend killed before its exit leaves: its pid
        # negative, no status line.
        (pgdata / "postmaster.pid").write_text(
            f"-{_gone_pid()}\n{pgdata}\n1796457725\n5432\n\n\n        1     65548\n"
        )
        started = run_cli("migrate", *where)
        assert started.code == 0, started.text
    finally:
        run_cli("stop", *where)


def _kill_initdb_midway(pgdata: Path, done: threading.Event, killed: list[int]) -> None:
    """SIGKILL the first initdb run on `pgdata` (and its backend) once it has
    written PG_VERSION and template1's folder: what the suite's runs met."""
    while not done.is_set():
        for process in psutil.process_iter(["name", "cmdline"]):
            cmdline = process.info["cmdline"] or []
            if process.info["name"] != "initdb" or str(pgdata) not in cmdline:
                continue
            while not (pgdata / "base" / "1").is_dir() and process.is_running():
                time.sleep(0.005)
            with contextlib.suppress(psutil.Error):
                children = process.children(recursive=True)
                process.kill()
                for child in children:
                    child.kill()
                killed.append(process.pid)
            return
        time.sleep(0.01)


def test_an_initdb_killed_midway_is_run_again(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    where = ["--data-dir", str(data_dir)]
    done, killed = threading.Event(), []
    killer = threading.Thread(
        target=_kill_initdb_midway, args=(data_dir.resolve() / "pg", done, killed), daemon=True
    )
    killer.start()
    try:
        made = run_cli("migrate", *where)
        done.set()
        killer.join(timeout=10)
        assert killed, "initdb was never seen"
        assert made.code == 0, made.text
        assert run_cli("status", *where).code == 0
    finally:
        done.set()
        run_cli("stop", *where)


def test_what_initdb_did_not_write_is_never_removed(tmp_path: Path) -> None:
    """Only a folder holding nothing but initdb's names is cleared."""
    from mdchunks.db import embedded

    pgdata = tmp_path / "pg"
    (pgdata / "base").mkdir(parents=True)
    (pgdata / "notes.md").write_text("mine")
    embedded._clear_half_made(pgdata)
    assert sorted(p.name for p in pgdata.iterdir()) == ["base", "notes.md"]
    (pgdata / "notes.md").unlink()
    (pgdata / "PG_VERSION").write_text("16\n")
    embedded._clear_half_made(pgdata)
    assert list(pgdata.iterdir()) == []
