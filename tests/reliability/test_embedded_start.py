"""The embedded server starts whatever postmaster.pid it finds (issue 42,
item 10): pgserver reads that file before it starts a server and fails on
one that is not a running server's, 8 lines. Under load the suite met one of
7 lines with a negative pid (a single-user backend's, as initdb runs them):
three starts 2 s apart all failed on it ("cannot start the embedded
PostgreSQL ... _lines"). A start now waits for such a file to be finished,
or removes it once its process is gone, as PostgreSQL itself would.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from reliability_support import run_cli


def _gone_pid() -> int:
    """The pid of a process that has ended."""
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(done.stdout)


def test_a_stale_single_user_lock_file_does_not_stop_the_start(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    where = ["--data-dir", str(data_dir)]
    try:
        made = run_cli("migrate", *where)  # made and started, then stopped
        assert made.code == 0, made.text
        assert run_cli("stop", *where).code == 0
        pgdata = data_dir / "pg"
        # What a single-user backend killed before its exit leaves: its pid
        # negative, no status line.
        (pgdata / "postmaster.pid").write_text(
            f"-{_gone_pid()}\n{pgdata}\n1796457725\n5432\n\n\n        1     65548\n"
        )
        started = run_cli("migrate", *where)
        assert started.code == 0, started.text
    finally:
        run_cli("stop", *where)
