"""`mdchunks` as a user meets it: help, output, one-line errors, exit codes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Ingest, RunCli
from flow_checks import fetch
from mdchunks.cli import commands
from mdchunks.db import migrate

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = ["ingest", "backfill", "status", "search", "migrate", "drop", "stop"]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_explains_itself(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        commands.main([command, "--help"])
    out = capsys.readouterr().out
    assert exited.value.code == 0
    assert f"Usage: mdchunks {command}" in out and len(out.splitlines()) > 5


def test_ctrl_c_in_a_command_is_interrupted_exit_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """click turns a KeyboardInterrupt into its Abort: still "interrupted",
    exit status 130 (docs/cli.md), not "aborted" and 1, which means failures.
    (A batch run's Ctrl-C is tested in tests/reliability/test_crashes.py.)"""

    def interrupted(**_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(commands.api, "status", interrupted)
    with pytest.raises(SystemExit) as exited:
        commands.main(["status"])
    assert exited.value.code == 130
    assert capsys.readouterr().err.strip() == "error: interrupted"


def test_a_reader_that_stops_reading_is_status_141_and_no_word(
    ingest: Ingest, docs: Path, database_url: str, data_dir: Path
) -> None:
    """`mdchunks search ... | head`: rich would leave with 1, which means
    failed documents; 141 is what `git log | head` leaves."""
    assert ingest(docs).ok
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "mdchunks", "search", "value", "-k", "20"),
            *("--database-url", database_url, "--data-dir", str(data_dir)),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # before the first hit is written
    error = process.stderr.read()
    assert process.wait(timeout=120) == 141, error
    assert error == ""


def test_search_finds_a_known_phrase_with_its_breadcrumb(run_cli: RunCli, docs: Path) -> None:
    assert run_cli("ingest", str(docs), "--source", "docs").code == 0

    # Web-search syntax (a quoted phrase) is what `--match all` reads.
    result = run_cli("search", '"aim of lifetimes"', "-k", "3", "--match", "all")

    assert result.code == 0, result.err
    location, breadcrumb, snippet = result.out.splitlines()[:3]
    assert location.split()[1] == "docs:generics/ch10-03-lifetime-syntax.md#0"
    # The chunk starts in the chapter's section; the phrase is in the next one.
    assert breadcrumb.strip() == (
        "Validating References with Lifetimes > Dangling References (+1 more section in this chunk)"
    )
    assert "The main aim of lifetimes is to prevent dangling references" in snippet


def test_search_prints_preamble_for_a_chunk_before_any_heading(
    run_cli: RunCli, tmp_path: Path
) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "a.md").write_text("Zebras graze before the first heading.\n\n# Later\n\nText.\n")
    assert run_cli("ingest", str(root), "--source", "notes").code == 0

    result = run_cli("search", "zebras")

    assert result.code == 0
    # The chunk holds the preamble and the heading after it; the word is in the first.
    assert result.out.splitlines()[1].strip() == "(preamble) (+1 more section in this chunk)"


def test_ingest_prints_a_summary_and_status_shows_the_source(run_cli: RunCli, docs: Path) -> None:
    result = run_cli("ingest", str(docs), "--source", "docs", "--chunk-size", "1200")

    assert result.code == 0, result.err
    assert "documents: 8 processed, 0 unchanged, 0 failed" in result.out
    assert "rows:" in result.out and "written, 0 deleted" in result.out
    assert "MB/s" in result.out

    status = run_cli("status")
    assert status.code == 0, status.err
    assert "docs" in status.out and "documents 8 (0 failed)" in status.out
    assert "current" in status.out and "chunk 1200/1000/200 bytes" in status.out

    run_cli("ingest", str(docs), "--source", "docs", "--chunk-size", "2000")  # the defaults
    status = run_cli("status")
    assert "stale" not in status.out  # the run left no row of the old recipe


def test_drop_deletes_the_rows_of_one_source(
    run_cli: RunCli, docs: Path, tmp_path: Path, database_url: str
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "x.md").write_text("# X\n\nkept\n")
    assert run_cli("ingest", str(docs), "--source", "docs").code == 0
    assert run_cli("ingest", str(other), "--source", "other").code == 0

    refused = run_cli("drop", "--source", "docs")  # not a terminal, no --yes
    assert refused.code == 2 and "--yes" in refused.err

    result = run_cli("drop", "--source", "docs", "--yes")

    assert result.code == 0, result.err
    assert re.search(
        r"dropped source docs: \d+ chunk rows, \d+ section rows, 8 document rows deleted",
        result.out,
    ), result.out
    sources = fetch(database_url, "SELECT DISTINCT source FROM content_chunks")
    assert sources == [{"source": "other"}]
    unknown = run_cli("drop", "--source", "docs", "--yes")  # unknown now
    assert unknown.code == 2
    assert "unknown source 'docs': nothing to drop (known sources: other)" in unknown.err


def test_migrate_twice(run_cli: RunCli) -> None:
    first = run_cli("migrate")
    second = run_cli("migrate")

    assert first.code == second.code == 0
    assert first.out.startswith(f"applied {len(migrate.migration_ids())} migrations")
    assert second.out.startswith("schema up to date")


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["ingest", "/no/such/folder"], 2, "error: no such folder: /no/such/folder"),
        (["ingest", "--chunk-size", "many", "x"], 2, "error: Invalid value for '--chunk-size'"),
        (["ingest", "--bogus", "x"], 2, "error: No such option '--bogus'"),
        (["search", "x", "-k", "0"], 2, "error: -k must be at least 1"),
        (["ingest", "x", "--lock-wait", "-5"], 2, "error: Invalid value for '--lock-wait'"),
        (
            ["ingest", str(ROOT / "sample"), f"{ROOT / 'sample'}/../sample"],
            2,
            f"error: the folder {ROOT / 'sample'}/../sample is given twice",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    run_cli: RunCli, args: list[str], code: int, message: str
) -> None:
    result = run_cli(*args, database=False)

    assert result.code == code
    assert result.err.startswith(message)
    assert len(result.err.strip().splitlines()) == 1, result.err


def test_an_unreachable_database_is_one_line_without_the_password(tmp_path: Path) -> None:
    """The real console entry point, in a process of its own."""
    env = dict(os.environ, DATABASE_URL="postgresql://someone:s3cret-pw@127.0.0.1:9/nowhere")
    result = subprocess.run(
        [sys.executable, "-m", "mdchunks", "ingest", str(tmp_path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 3
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: cannot connect to the database at postgresql://someone:***@")
    assert "s3cret-pw" not in result.stdout + result.stderr


def test_search_shows_the_stored_breadcrumb_truncated_to_the_budget(
    run_cli: RunCli, tmp_path: Path, database_url: str
) -> None:
    """The breadcrumb shown is the stored column, cut at ingest to
    --breadcrumb-budget: rendering the path again would show all of it."""
    root = tmp_path / "deep"
    root.mkdir()
    filler = "Some words that fill a section well past the smallest chunk size. " * 3
    (root / "a.md").write_text(
        f"# Alpha chapter\n\n{filler}\n\n## Beta section\n\n{filler}\n\n"
        f"### Gamma subsection\n\nQuokkas live here. {filler}\n"
    )
    budget = ["--chunker", "structure", "--chunk-size", "300", "--breadcrumb-budget", "30"]
    ingested = run_cli("ingest", str(root), "--source", "deep", *budget)
    assert ingested.code == 0, ingested.err

    result = run_cli("search", "quokkas")

    assert result.code == 0, result.err
    location, shown = result.out.splitlines()[:2]
    [row] = fetch(
        database_url,
        "SELECT position, heading_path, breadcrumb FROM content_chunks "
        "WHERE source = 'deep' AND text LIKE 'Quokkas%'",
    )
    assert location.split()[1] == f"deep:a.md#{row['position']}"
    assert row["heading_path"] == ["Alpha chapter", "Beta section", "Gamma subsection"]
    assert row["breadcrumb"] == "… > Gamma subsection"
    assert shown.strip() == row["breadcrumb"]


# Run in a process of its own, then asked what that process imported.
_DRIVERS_SEEN = """
import atexit, json, sys
def _report():
    seen = sorted({m.split(".")[0] for m in sys.modules} & {"psycopg", "psycopg_binary", "yoyo"})
    print("DRIVERS=" + json.dumps(seen))
atexit.register(_report)
from mdchunks.__main__ import main
sys.argv = ["mdchunks", *sys.argv[1:]]
main()
"""


def test_ingest_status_and_search_load_one_database_driver(
    database_url: str, data_dir: Path, docs: Path
) -> None:
    """cocoindex writes the rows over asyncpg; our own statements (migrations,
    the lock, the catalog, reconciliation, status, search) go over it too
    (flow/db/connection.py): a second driver cost every run 0.12-0.25 s and 11 MB."""
    where = ["--database-url", database_url, "--data-dir", str(data_dir)]
    env = {**os.environ, "COCOINDEX_DISABLE_USAGE_TRACKING": "1"}
    env.pop("DATABASE_URL", None)
    for args in (
        ["ingest", str(docs), "--source", "docs"],  # a fresh database: the migrations too
        ["ingest", str(docs), "--source", "docs"],  # nothing changed
        ["status"],
        ["search", "lifetimes", "-k", "2"],
    ):
        done = subprocess.run(
            [sys.executable, "-c", _DRIVERS_SEEN, *args, *where],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert done.returncode == 0, (args, done.stderr)
        assert "DRIVERS=[]" in done.stdout.splitlines(), (args, done.stdout[-500:])


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("--max-doc-bytes", str(2**63)), "--max-doc-bytes must be at most"),
        (("--lock-wait", "nan"), "--lock-wait': nan is not a number of seconds"),
        (("--source", ""), "the source name is empty"),
    ],
    ids=["max-doc-bytes-past-int64", "lock-wait-nan", "source-empty"],
)
def test_option_values_that_cannot_work_are_refused_in_one_line(
    run_cli: RunCli, docs: Path, database_url: str, args: tuple[str, ...], said: str
) -> None:
    """Issue 42: `--max-doc-bytes` past int64 exited 5 after the run, `--lock-wait
    nan` waited for ever on a busy source, `--source ''` took the folder's name."""
    refused = run_cli("ingest", str(docs), *args)
    assert refused.code == 2, refused
    assert refused.err.count("\n") == 1 and said in refused.err, refused.err
    assert "Traceback" not in refused.err
    # Refused before any work: no source was recorded.
    assert fetch(database_url, "SELECT to_regclass('content_chunks') AS t") == [{"t": None}]


def test_lock_wait_nan_is_refused_by_every_command(run_cli: RunCli) -> None:
    refused = run_cli("drop", "--source", "docs", "--yes", "--lock-wait", "nan")
    assert refused.code == 2, refused
    assert "--lock-wait': nan is not a number of seconds" in refused.err, refused.err
