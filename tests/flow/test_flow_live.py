"""`mdchunks ingest --live`: after catching up, changes are ingested as they
happen (found by cocoindex's live walk, their rows written by the watch), and
a watch stopped with Ctrl-C leaves a state the next ingest trusts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import mdchunks
import pytest
from flow_checks import fetch, recounted_stats, stored_stats

ROOT = Path(__file__).resolve().parents[2]
SOURCE = "live"
# Ctrl-C is SIGINT, which a process started in the background by a
# non-interactive shell (as CI may run the tests) inherits as ignored, and
# Python keeps ignoring: the watch gets Python's own handler back explicitly.
CLI = (
    "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from mdchunks.__main__ import main; main()"
)


def _wait_for(what: str, check: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def _chunks(url: str, rel_path: str) -> list[str]:
    rows = fetch(
        url,
        "SELECT text FROM content_chunks WHERE source = %s AND rel_path = %s ORDER BY position",
        [SOURCE, rel_path],
    )
    return [str(row["text"]) for row in rows]


def _document(url: str, rel_path: str) -> tuple[object, ...] | None:
    rows = fetch(
        url,
        "SELECT chunks, error FROM mdchunks_documents WHERE source = %s AND rel_path = %s",
        [SOURCE, rel_path],
    )
    return (rows[0]["chunks"], rows[0]["error"]) if rows else None


def _sections(url: str, rel_path: str) -> list[str | None]:
    """The heading texts of a document's section rows, by ordinal."""
    rows = fetch(
        url,
        "SELECT heading_text FROM content_sections WHERE source = %s AND rel_path = %s "
        "ORDER BY ordinal",
        [SOURCE, rel_path],
    )
    return [row["heading_text"] for row in rows]


def _watch(root: Path, database_url: str, data_dir: Path) -> subprocess.Popen[str]:
    """`mdchunks ingest ROOT --live` in a process of its own, its output piped."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update(COCOINDEX_DISABLE_USAGE_TRACKING="1", PYTHONUNBUFFERED="1")
    return subprocess.Popen(
        [
            *(sys.executable, "-c", CLI, "ingest", str(root)),
            *("--source", SOURCE, "--live", "--database-url", database_url),
            *("--data-dir", str(data_dir)),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_live_ingests_changes_as_they_happen(
    database_url: str,
    data_dir: Path,
    tmp_path: Path,
    stop: signal.Signals,
    caplog: pytest.LogCaptureFixture,
) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "keep.md").write_text("# Keep\n\nThis page stays as it is.\n")
    # Two sections, one of which the edit removes: the watch deletes its row.
    (root / "edit.md").write_text("# Edit\n\nThe first version.\n\n## Details\n\nMore.\n")
    (root / "gone.md").write_text("# Gone\n\nThis page will be deleted.\n")
    process = _watch(root, database_url, data_dir)
    try:
        assert process.stdout is not None
        for line in process.stdout:
            if line.startswith("watching "):
                break
        else:
            raise AssertionError(f"the watch did not start: {process.stderr.read()}")  # type: ignore[union-attr]
        assert _document(database_url, "gone.md") == (1, None)
        # A search while the watch holds the source is not warned about
        # half-written rows: the watch has caught up and follows each change.
        _wait_for(
            "the watch to hold the source",
            lambda: bool(
                fetch(
                    database_url,
                    "SELECT 1 FROM pg_stat_activity WHERE application_name = %s",
                    [f"mdchunks watch pid {process.pid} {SOURCE}"],
                )
            ),
        )
        where = {"database_url": database_url, "data_dir": data_dir}
        with caplog.at_level("WARNING", logger="mdchunks"):
            assert mdchunks.search("page", source=SOURCE, **where)
        assert not [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
        watched = next(s for s in mdchunks.status(**where).sources if s.source == SOURCE)
        assert watched.running and watched.watching and not watched.unfinished
        assert _sections(database_url, "edit.md") == ["Edit", "Details"]
        assert _sections(database_url, "gone.md") == ["Gone"]

        (root / "new.md").write_text("# New\n\nA page added while watching.\n")
        (root / "edit.md").write_text("# Edit\n\nThe second version.\n")
        (root / "gone.md").unlink()
        (root / "bad.md").write_bytes(b"# Bad\n\nnot \xff utf-8\n")
        secret = tmp_path / "outside" / "secret.md"
        secret.parent.mkdir()
        secret.write_text("# Secret\n\nnot under the watched folder\n")
        (root / "leak.md").symlink_to(secret)

        _wait_for(
            "the new page's rows",
            lambda: (
                _document(database_url, "new.md") == (1, None)
                and _chunks(database_url, "new.md") == ["# New\n\nA page added while watching."]
            ),
        )
        _wait_for(
            "the edited page's rows",
            lambda: _chunks(database_url, "edit.md") == ["# Edit\n\nThe second version."],
        )
        _wait_for(
            "the deleted page's rows to go",
            lambda: (
                not _chunks(database_url, "gone.md") and _document(database_url, "gone.md") is None
            ),
        )
        _wait_for(
            "the bad page's failure",
            lambda: (_document(database_url, "bad.md") or (None, None))[1] is not None,
        )
        _wait_for(
            "the link out of the folder refused",
            lambda: (
                "outside the source root" in str((_document(database_url, "leak.md") or (0, ""))[1])
            ),
        )
        assert _chunks(database_url, "leak.md") == []
        # Section rows follow each change (written by the watch, not cocoindex).
        _wait_for(
            "the section rows of the change",
            lambda: (
                _sections(database_url, "new.md") == ["New"]
                and _sections(database_url, "edit.md") == ["Edit"]
                and _sections(database_url, "gone.md") == []
            ),
        )
        assert _sections(database_url, "bad.md") == []
        # A failed page deleted: no longer counted among the failing.
        (root / "bad.md").unlink()
        _wait_for("the bad page's row to go", lambda: _document(database_url, "bad.md") is None)
    except BaseException:
        process.kill()
        out, err = process.communicate()
        print(f"the watch's output:\n{out}\n{err}")
        raise
    process.send_signal(stop)  # Ctrl-C, or a service manager stopping the watch
    try:
        out, err = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        raise AssertionError(f"the watch did not stop on {stop.name}:\n{out}\n{err}") from None
    assert process.returncode == 0, (out, err)
    assert "failed: bad.md: invalid UTF-8" in out, (out, err)
    # Only what changed: the watch shares the batch run's memos (the pages
    # ingested before it started are not processed again).
    live = [line for line in out.splitlines() if line.startswith("live: ")]
    # Of the three added, bad.md failed and leak.md (a link out of the
    # folder) was skipped, as the batch walk skips it, and the count said so
    # until bad.md was deleted.
    failing = "live: 3 added, 1 changed, 1 removed since the watch began (1 failed, 1 skipped)"
    assert failing in live, out
    assert live[-1] == "live: 3 added, 1 changed, 2 removed since the watch began (1 skipped)", out
    assert "skipped: leak.md: a link that leads outside the source root" in out, out
    assert "failed: leak.md" not in out, out

    # BM25's statistics followed each change by its documents' share alone:
    # df, N and the lengths as a recount gives them, the bounds no tighter.
    assert stored_stats(database_url, SOURCE) == recounted_stats(database_url, SOURCE)

    # The watch ended cleanly: its state is trusted, nothing is left to do.
    again = mdchunks.ingest(root, source=SOURCE, database_url=database_url, data_dir=data_dir)
    assert not again.state_reset and again.processed == 0, again
    assert [f.rel_path for f in again.failures] == ["leak.md"]
    paths = fetch(
        database_url,
        "SELECT DISTINCT rel_path FROM content_chunks WHERE source = %s ORDER BY 1",
        [SOURCE],
    )
    assert [row["rel_path"] for row in paths] == ["edit.md", "keep.md", "new.md"]


def test_a_link_out_of_the_folder_is_skipped_and_a_stopped_watch_exits_0(
    database_url: str, data_dir: Path, tmp_path: Path
) -> None:
    """Issue 42: a link out of the root, there before the watch or made while
    it runs, was a failed document of the watch, and Ctrl-C then exited 1
    (the README says 0). It is skipped, as the batch walk skips it."""
    root = tmp_path / "notes"
    root.mkdir()
    (root / "page.md").write_text("# Page\n\nA page.\n")
    secret = tmp_path / "outside" / "secret.md"
    secret.parent.mkdir()
    secret.write_text("# Secret\n\nnot under the watched folder\n")
    (root / "early.md").symlink_to(secret)
    process = _watch(root, database_url, data_dir)
    killer = threading.Timer(120, process.kill)  # a watch that never says it: no hang
    killer.start()
    seen: list[str] = []
    try:
        assert process.stdout is not None
        for line in process.stdout:
            seen.append(line)
            if line.startswith("watching "):
                (root / "late.md").symlink_to(secret)
            if line.startswith(("skipped: late.md", "failed: late.md")):
                break
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        killer.cancel()
        if process.poll() is None:
            process.kill()
            process.communicate()
    out = "".join(seen) + out
    assert process.returncode == 0, (out, err)
    assert "skipped: late.md: a link that leads outside the source root" in out, out
    assert "failed:" not in out and "failed)" not in out, out
    # The catch-up listed the early one as skipped (not read), on stderr.
    assert "early.md: symlink to" in err and "not followed" in err, err
