"""Two runs on one source never interleave; runs on different sources do not wait."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from conftest import Ingest
from mdchunks.errors import SourceBusy
from mdchunks.source import lock


def test_a_second_run_on_a_busy_source_waits_then_refuses(
    ingest: Ingest, docs: Path, database_url: str
) -> None:
    with lock.source_lock(database_url, "docs"):
        started = time.monotonic()
        with pytest.raises(SourceBusy) as refused:
            ingest(docs, lock_wait=0.6)
        waited = time.monotonic() - started

    assert waited >= 0.6
    message = str(refused.value)
    assert f"is being ingested by another run (`mdchunks ingest`, process {os.getpid()})" in message
    assert "--lock-wait" in message
    assert refused.value.exit_code == 4


def test_runs_on_other_sources_are_not_held_up(
    ingest: Ingest, docs: Path, database_url: str
) -> None:
    with lock.source_lock(database_url, "another source"):
        report = ingest(docs, lock_wait=0)

    assert report.ok and report.processed == 8


def test_the_lock_is_free_again_after_a_run(ingest: Ingest, docs: Path, database_url: str) -> None:
    ingest(docs)
    with lock.source_lock(database_url, "docs", wait_seconds=0):
        pass


def test_a_watch_holding_the_lock_is_named_by_its_command(
    ingest: Ingest, docs: Path, database_url: str
) -> None:
    """Issue 42: the holder was named `mdchunks watch`, which is no command."""
    with (
        lock.source_lock(database_url, "docs", purpose="watch"),
        pytest.raises(SourceBusy) as refused,
    ):
        ingest(docs, lock_wait=0)
    assert f"another run (`mdchunks ingest --live`, process {os.getpid()})" in str(refused.value)
