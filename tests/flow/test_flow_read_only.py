"""Read-only commands create nothing: `status`, `search` and `drop` on a new or
mistyped data dir say there is nothing there (exit 2) and leave no data dir
and no server behind; `search` where nothing was ingested says so in one line.

Every run is the real console script in a process of its own, without
DATABASE_URL, so the embedded server is what it would reach for.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from mdchunks.cli import commands
from mdchunks.db import migrate

ROOT = Path(__file__).resolve().parents[2]
READ_ONLY = [
    ["status"],
    ["search", "ownership"],
    ["search", "ownership", "--source", "docs"],
    ["drop", "--source", "docs", "--yes"],
]


def _mdchunks(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env["COCOINDEX_DISABLE_USAGE_TRACKING"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "mdchunks", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _processes_naming(path: Path) -> list[str]:
    """Command lines of running processes that mention `path` (a postgres
    started in it would: `postgres -D <data dir>/pg`)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:  # the process ended meanwhile
            continue
        if str(path) in command:
            found.append(command)
    return found


def _one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in done.stdout + done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    return lines[0]


@pytest.mark.parametrize("args", READ_ONLY, ids=lambda args: " ".join(args))
def test_a_read_only_command_on_a_new_data_dir_creates_nothing(
    args: list[str], tmp_path: Path
) -> None:
    data_dir = tmp_path / "mistyped"

    done = _mdchunks(*args, "--data-dir", str(data_dir))

    assert done.returncode == 2, done.stdout + done.stderr
    line = _one_line(done)
    assert line.startswith(f"error: nothing here: no embedded PostgreSQL in {data_dir} "), line
    assert not data_dir.exists()
    assert _processes_naming(data_dir) == []


def test_status_in_a_folder_without_a_data_dir_creates_no_mdchunks_folder(
    tmp_path: Path,
) -> None:
    done = _mdchunks("status", cwd=tmp_path)

    assert done.returncode == 2, done.stdout + done.stderr
    assert str(tmp_path / ".mdchunks") in _one_line(done)
    assert list(tmp_path.iterdir()) == []
    assert _processes_naming(tmp_path) == []


def test_an_existing_empty_folder_as_data_dir_stays_empty(tmp_path: Path) -> None:
    data_dir = tmp_path / "empty"
    data_dir.mkdir()

    done = _mdchunks("search", "ownership", "--data-dir", str(data_dir))

    assert done.returncode == 2, done.stdout + done.stderr
    assert "nothing here" in _one_line(done)
    assert list(data_dir.iterdir()) == []
    assert _processes_naming(data_dir) == []


def test_status_uses_an_embedded_server_that_exists(embedded) -> None:  # type: ignore[no-untyped-def]
    """The control: where a server was made, `status` reaches it (exit 0)."""
    embedded.url()  # made and running (the session's reliability server)

    done = _mdchunks("status", "--data-dir", str(embedded.data_dir))

    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("database: embedded PostgreSQL postgresql://")


def test_search_on_a_database_never_migrated_says_nothing_was_ingested(
    database_url: str,
) -> None:
    done = _mdchunks("search", "ownership", "--database-url", database_url)

    assert done.returncode == 2, done.stdout + done.stderr
    line = _one_line(done)
    assert line.startswith("error: nothing ingested yet in postgresql://"), line
    assert not any(name in line for name in migrate.migration_ids())
    assert migrate.pending(database_url) == migrate.migration_ids()  # search migrated nothing


def test_search_on_a_migrated_empty_database_says_nothing_was_ingested(
    database_url: str, tmp_path: Path
) -> None:
    assert _mdchunks("migrate", "--database-url", database_url).returncode == 0

    done = _mdchunks("search", "ownership", "--database-url", database_url)

    assert done.returncode == 2, done.stdout + done.stderr
    assert _one_line(done).startswith("error: nothing ingested yet in postgresql://")


def test_search_of_a_source_with_no_rows_names_it(database_url: str, tmp_path: Path) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "a.md").write_text("# Ownership\n\nRules.\n")
    url = ["--database-url", database_url, "--data-dir", str(tmp_path / "data")]
    assert _mdchunks("ingest", str(root), "--source", "notes", *url).returncode == 0

    found = _mdchunks("search", "ownership", *url)
    missing = _mdchunks("search", "ownership", "--source", "nots", *url)

    assert found.returncode == 0 and "notes:a.md#0" in found.stdout, found.stderr
    assert missing.returncode == 2, missing.stdout + missing.stderr
    assert _one_line(missing).startswith("error: unknown source 'nots' (known sources: notes)")


def test_help_says_which_commands_start_the_server_and_how_to_stop_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        commands.main(["--help"])
    shown = " ".join(capsys.readouterr().out.split())

    assert "`ingest`, `backfill` and `migrate` create it on first use" in shown
    assert "`mdchunks stop` stops it" in shown
    assert "(`status`, `search`, `outline`, `mcp`, `drop`) start it when it is stopped" in shown
    assert "`status`, `search`, `outline`, `mcp` and `drop` never create one" in shown
