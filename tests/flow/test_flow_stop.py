"""A stop request (SIGTERM, Ctrl-C) ends `ingest --live` within seconds in
every state, exit 0, its lock given back, no engine backtraces; the next run
converges to a fresh ingest's rows. Tested where it hung (tracker issue 26):
while the watch works through bursts of appends to one file and atomic
(write-temp-then-rename) replaces of another. And a batch `ingest` stopped
mid-run ends within seconds too, its lock given back."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import mdchunks
import psycopg
import pytest
from flow_checks import fetch

ROOT = Path(__file__).resolve().parents[2]
# As tests/flow/test_flow_live.py: Python's own SIGINT handler back, as in a
# terminal (a background job of a non-interactive shell inherits SIGINT ignored).
CLI = (
    "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from mdchunks.__main__ import main; main()"
)
# Generous: the watch gives itself 6 s at most (flow/cli/stops.py), a few
# more on a loaded machine; a hang (the bug) outlived 10 minutes.
STOP_LIMIT_SECONDS = 60.0
ENGINE_NOISE = ("environment is closed", "backtrace", "Traceback", "panicked")


def _tree(root: Path) -> None:
    root.mkdir()
    for i in range(12):
        (root / f"page{i}.md").write_text(f"# Page {i}\n\n" + "Some words here. " * 150 + "\n")
    # Big enough that each append keeps the engine (and a chunking thread) busy.
    (root / "log.md").write_text(
        "# Log\n\n" + "".join(f"## Entry {j}\n\n" + "text " * 80 + "\n\n" for j in range(300))
    )
    (root / "swap.md").write_text("# Swap\n\nversion 0\n")


def _many(root: Path) -> Path:
    """150 documents of 21 sections: some 3,700 rows, written in batches of 500."""
    root.mkdir()
    for i in range(150):
        (root / f"doc{i:03}.md").write_text(
            f"# Document {i}\n\n"
            + "".join(f"## Part {j}\n\n" + "prose " * 60 + "\n\n" for j in range(20))
        )
    return root


def _watch(root: Path, source: str, database_url: str, data_dir: Path) -> list[str]:
    return [
        *("ingest", str(root), "--source", source, "--live"),
        *("--database-url", database_url, "--data-dir", str(data_dir)),
    ]


def _wait_for_rows(process: subprocess.Popen[str], database_url: str, source: str) -> None:
    """Until the run has written its first rows (a pause between two looks:
    a loop of connections would take a core from the run it waits for)."""
    deadline = time.monotonic() + 120
    while not _has_rows(database_url, source):
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.05)


def _burst(root: Path, tag: str) -> None:
    """200 appends to one file, 50 write-temp-then-rename replaces of another."""
    with open(root / "log.md", "a") as log:
        for i in range(200):
            log.write(f"\n## Burst {tag} {i}\n\nline {i} of the burst\n")
            log.flush()
            time.sleep(0.002)
    for i in range(50):
        temporary = root / f".swap.{i}.tmp"
        temporary.write_text(f"# Swap\n\nversion {tag} {i}\n\n" + "more " * i + "\n")
        os.replace(temporary, root / "swap.md")
        time.sleep(0.005)


def _start(args: list[str], cli: str = CLI) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update(COCOINDEX_DISABLE_USAGE_TRACKING="1", PYTHONUNBUFFERED="1")
    return subprocess.Popen(
        [sys.executable, "-c", cli, *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _stopped(process: subprocess.Popen[str], stop: signal.Signals) -> tuple[int, str, str, float]:
    """Send `stop`; the exit status, the output and how long it took."""
    sent = time.monotonic()
    process.send_signal(stop)
    try:
        out, err = process.communicate(timeout=STOP_LIMIT_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        raise AssertionError(
            f"still running {STOP_LIMIT_SECONDS:g} s after {stop.name}:\n"
            f"{out[-3000:]}\n{err[-3000:]}"
        ) from None
    return process.returncode, out, err, time.monotonic() - sent


def _has_rows(url: str, source: str) -> bool:
    try:
        found = fetch(url, "SELECT 1 FROM content_chunks WHERE source = %s LIMIT 1", [source])
    except psycopg.errors.UndefinedTable:  # the first run's migrations are not applied yet
        return False
    return bool(found)


def _rows(url: str, source: str) -> list[tuple[Any, ...]]:
    rows = fetch(
        url,
        "SELECT rel_path, position, char_start, char_end, text, heading_text, heading_path "
        "FROM content_chunks WHERE source = %s ORDER BY rel_path, position",
        [source],
    )
    return [tuple(row.values()) for row in rows]


# A watch that left at its bound dropped its lock's session (flow/source/lock.py,
# give_back_at_once): the server ends that session when its process next
# runs, which on a loaded machine can be a while after ours has gone.
LOCK_GONE_SECONDS = 30.0


def _lock_given_back(url: str) -> None:
    """No session of this test's database holds an advisory lock (a source's
    lock: flow/source/lock.py) within LOCK_GONE_SECONDS."""
    held = (
        "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' "
        "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    )
    deadline = time.monotonic() + LOCK_GONE_SECONDS
    while fetch(url, held)[0]["n"]:
        assert time.monotonic() < deadline, "the stopped watch's lock was never given back"
        time.sleep(0.05)


def _converges(url: str, data_dir: Path, root: Path, source: str, fresh: str) -> None:
    """The lock is free (a run that does not wait is not refused) and that
    run leaves the rows a fresh ingest of the same folder makes."""
    _lock_given_back(url)
    again = mdchunks.ingest(root, source=source, database_url=url, data_dir=data_dir, lock_wait=0)
    assert again.ok, again.failures
    mdchunks.ingest(root, source=fresh, database_url=url, data_dir=data_dir, move=True)
    assert _rows(url, source) == _rows(url, fresh) != []
    documents = fetch(
        url,
        "SELECT rel_path, chunks, error FROM mdchunks_documents WHERE source = %s ORDER BY 1",
        [source],
    )
    fresh_documents = fetch(
        url,
        "SELECT rel_path, chunks, error FROM mdchunks_documents WHERE source = %s ORDER BY 1",
        [fresh],
    )
    assert documents == fresh_documents


# (signal, seconds of the burst before it; None: no burst, the watch idle).
# Each round restarts the watch on the state the last one left.
ROUNDS = [(signal.SIGTERM, 0.3), (signal.SIGINT, 1.5), (signal.SIGTERM, 3.0), (signal.SIGINT, None)]


def test_live_stops_within_seconds_in_every_state(
    database_url: str, data_dir: Path, tmp_path: Path
) -> None:
    # While it catches up (its first run: every document to process), as
    # soon as the engine has written rows. Rows are written in batches of
    # 500 (flow/source/writes.py): this folder's first batch lands an eighth
    # of the way through its catch-up, so the stop comes while most of it
    # is still to do, however slow the machine (the small tree below is
    # written in one batch, at the end: a stop there raced the watch's start).
    catching_up = _many(tmp_path / "many")
    source = "stop-catch-up"
    process = _start(_watch(catching_up, source, database_url, data_dir))
    _wait_for_rows(process, database_url, source)
    code, out, err, _ = _stopped(process, signal.SIGTERM)
    assert code == 0, (out[-3000:], err[-3000:])
    assert "watching " not in out, out  # it was still catching up
    assert err.strip().splitlines()[-1] == (
        "stopped before the watch began; running the same command again completes the work"
    ), err
    _quiet(out, err)
    _converges(database_url, data_dir, catching_up, source, "fresh-catch-up")

    root = tmp_path / "notes"
    _tree(root)
    source = "stop-live"
    watch = _watch(root, source, database_url, data_dir)
    for number, (stop, delay) in enumerate(ROUNDS):
        process = _start(watch)
        assert process.stdout is not None
        for line in process.stdout:
            if line.startswith("watching "):
                break
        else:
            process.kill()
            raise AssertionError(f"the watch did not start: {process.communicate()}")
        burst = threading.Thread(target=_burst, args=(root, str(number)))
        if delay is not None:
            burst.start()
            time.sleep(delay)
        else:
            time.sleep(1.0)
        code, out, err, _ = _stopped(process, stop)
        if delay is not None:
            burst.join()
        assert code == 0, (stop.name, out[-3000:], err[-3000:])
        _quiet(out, err)
        _converges(database_url, data_dir, root, source, f"fresh-{number}")


# An engine that never winds down once asked to stop (cocoindex gives no
# promise that it does): the CLI's bound must end the process anyway.
STUCK_CLI = (
    "import asyncio, mdchunks.source.engine as engine\n"
    "async def never(update, seconds=0): await asyncio.sleep(3600)\n"
    "engine._wind_down = never\n" + CLI.replace("; ", "\n")
)


def test_live_leaves_within_its_bound_when_the_engine_does_not_stop(
    database_url: str, data_dir: Path, tmp_path: Path
) -> None:
    root = tmp_path / "notes"
    _tree(root)
    source = "stop-stuck"
    process = _start(_watch(root, source, database_url, data_dir), STUCK_CLI)
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith("watching "):
            break
    else:
        process.kill()
        raise AssertionError(f"the watch did not start: {process.communicate()}")
    burst = threading.Thread(target=_burst, args=(root, "stuck"))
    burst.start()
    time.sleep(0.5)
    code, out, err, took = _stopped(process, signal.SIGTERM)
    burst.join()
    assert code == 0, (out[-3000:], err[-3000:])
    assert "did not end within 6 s of the stop request" in err, err
    assert took >= 5.0, took  # it was the bound that ended it, not a clean stop
    _quiet(out, err)
    # The state was never stamped: the next run re-checks every document.
    _converges(database_url, data_dir, root, source, "fresh-stuck")


def _quiet(out: str, err: str) -> None:
    """No engine error or backtrace reached the output."""
    noise = [line for line in (out + err).splitlines() if any(n in line for n in ENGINE_NOISE)]
    assert noise == [], noise[:5]


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
def test_batch_ingest_stops_within_seconds_mid_run(
    database_url: str, data_dir: Path, tmp_path: Path, stop: signal.Signals
) -> None:
    root = _many(tmp_path / "many")
    source = f"stop-batch-{stop.name.lower()}"
    process = _start(
        [
            *("ingest", str(root), "--source", source),
            *("--database-url", database_url, "--data-dir", str(data_dir)),
        ]
    )
    # Mid-run: once the engine has written some of the documents' rows.
    _wait_for_rows(process, database_url, source)
    code, out, err, _ = _stopped(process, stop)
    assert code == 130, (out, err)
    assert err.strip().splitlines()[-1] == (
        "error: interrupted; running the same command again completes the work"
    ), err
    _converges(database_url, data_dir, root, source, f"fresh-{source}")
