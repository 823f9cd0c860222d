"""Hostile folders (issue "no document can take a source down, no text or row is
silently lost"): each class of failure, through the real `mdchunks` command
against a real PostgreSQL. Documents here are the tests' own.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mdchunks.quarantine import JOURNAL_SUFFIX
from reliability_support import Done, assert_invariants, cli_env, query

NATIVE_CRASH = Path(__file__).with_name("native_crash.py")
SOURCE = "docs"
# The trigger found in a released build: 266 bytes.
DEEP_QUOTES = "# T\n\n" + ">" * 255 + " word\n"
DEEP_LIST = "# Lists\n\n" + "".join("  " * depth + "- item\n" for depth in range(300))
FINE = "# Fine\n\nA document like any other, with a paragraph.\n\n## More\n\nAnd more text.\n"


def _mdchunks(*args: str, crash: str | None = None, timeout: float = 600) -> Done:
    command = (
        [sys.executable, "-m", "mdchunks"]
        if crash is None
        else [
            sys.executable,
            str(NATIVE_CRASH),
            crash,
        ]
    )
    started = time.monotonic()
    done = subprocess.run(
        [*command, *args], env=cli_env(), capture_output=True, text=True, timeout=timeout
    )
    return Done(done.returncode, done.stdout, done.stderr, time.monotonic() - started)


def _ingest(root: Path, url: str, data_dir: Path, *extra: str, crash: str | None = None) -> Done:
    return _mdchunks(
        "ingest",
        str(root),
        "--source",
        SOURCE,
        "--database-url",
        url,
        "--data-dir",
        str(data_dir),
        *extra,
        crash=crash,
    )


def _failures_listed(done: Done) -> dict[str, str]:
    lines = done.err.splitlines()
    header = next((i for i, line in enumerate(lines) if "documents failed" in line), None)
    if header is None:
        return {}
    listed: dict[str, str] = {}
    for line in lines[header + 1 :]:
        if not line.startswith("  "):
            break
        rel_path, _, cause = line.strip().partition(": ")
        listed[rel_path] = cause
    return listed


def _rows_by_document(url: str) -> dict[str, int]:
    return dict(
        query(
            url,
            "SELECT rel_path, count(*) FROM content_chunks WHERE source = %s GROUP BY 1",
            [SOURCE],
        )
    )


# -- 1. a document that kills the process -------------------------------------------------


def test_the_known_trigger_really_aborts_the_bare_splitter() -> None:
    """The guard below guards something real: cocoindex's splitter, unguarded,
    kills its process (SIGABRT) on the 266-byte document."""
    assert len(DEEP_QUOTES.encode()) == 266
    program = (
        "import sys\n"
        "from cocoindex.ops.text import RecursiveSplitter\n"
        "RecursiveSplitter().split(sys.stdin.read(), 2000, min_chunk_size=1000,"
        " chunk_overlap=200, language='markdown')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program],
        input=DEEP_QUOTES,
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == -6, done.stderr  # SIGABRT
    assert "length <= 1024" in done.stderr


@pytest.mark.parametrize("chunker", ["recursive", "structure"])
def test_known_triggers_are_guarded_and_keep_their_headings(
    chunker: str, tmp_path: Path, database_url: str
) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    (root / "quotes.md").write_text(DEEP_QUOTES)
    # Large enough that the structure chunker hands the section to the splitter.
    (root / "lists.md").write_text(DEEP_LIST)
    (root / "fine.md").write_text(FINE)
    done = _ingest(
        root, database_url, tmp_path / "data", "--chunker", chunker, "--chunk-size", "1000"
    )
    assert done.code == 0, done.text
    rows = _rows_by_document(database_url)
    assert set(rows) == {"quotes.md", "lists.md", "fine.md"}
    headings = query(
        database_url,
        "SELECT DISTINCT rel_path, heading_text FROM content_chunks WHERE rel_path <> 'fine.md'",
    )
    assert sorted(headings) == [("lists.md", "Lists"), ("quotes.md", "T")]
    assert_invariants(database_url, SOURCE)


def test_a_document_that_kills_the_process_is_quarantined_and_the_rest_ingests(
    tmp_path: Path, database_url: str
) -> None:
    """An injected native crash (os.abort() in the splitter, on one document):
    the run dies; the next run finds the document, proves it in a process of
    its own, reports it failed and ingests the rest; it stays quarantined
    until it changes."""
    root = tmp_path / "docs"
    root.mkdir()
    for i in range(6):
        (root / f"fine-{i}.md").write_text(FINE + f"\nDocument {i}.\n")
    bad = root / "bad.md"
    bad.write_text("# Bad\n\nTHIS DOCUMENT KILLS THE PROCESS\n")
    data_dir = tmp_path / "data"

    first = _ingest(root, database_url, data_dir, crash="marker")
    assert first.code == -6, first.text  # the whole process died

    second = _ingest(root, database_url, data_dir, crash="marker")
    assert second.code == 1, second.text
    assert _failures_listed(second) == {
        "bad.md": "the process died while chunking this document (SIGABRT)"
    }
    rows = _rows_by_document(database_url)
    assert set(rows) == {f"fine-{i}.md" for i in range(6)}
    assert_invariants(database_url, SOURCE)
    error = query(database_url, "SELECT error FROM mdchunks_documents WHERE rel_path = 'bad.md'")
    assert error == [("the process died while chunking this document (SIGABRT)",)]

    # Quarantined: not tried again (the run survives), still reported, exit 1.
    third = _ingest(root, database_url, data_dir, crash="marker")
    assert third.code == 1, third.text
    assert list(_failures_listed(third)) == ["bad.md"]
    # Even when the engine state is gone (every document processed again).
    third_full = _ingest(root, database_url, data_dir, "--full-reprocess", crash="marker")
    assert third_full.code == 1, third_full.text
    assert "quarantined" in _failures_listed(third_full)["bad.md"]

    # Changed: tried again, and ingested.
    bad.write_text("# Bad\n\nNothing wrong with it any more.\n")
    fourth = _ingest(root, database_url, data_dir, crash="marker")
    assert fourth.code == 0, fourth.text
    assert set(_rows_by_document(database_url)) == {"bad.md"} | {f"fine-{i}.md" for i in range(6)}
    assert_invariants(database_url, SOURCE)


def test_a_real_splitter_abort_is_quarantined_when_the_guard_is_off(
    tmp_path: Path, database_url: str
) -> None:
    """The real abort (tree-sitter's assertion), with the nesting guard lifted
    in the test's process: the quarantine catches what the guard would."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "quotes.md").write_text(DEEP_QUOTES)
    (root / "fine.md").write_text(FINE)
    data_dir = tmp_path / "data"
    first = _ingest(root, database_url, data_dir, crash="unguarded")
    assert first.code == -6, first.text
    second = _ingest(root, database_url, data_dir, crash="unguarded")
    assert second.code == 1, second.text
    assert _failures_listed(second) == {
        "quotes.md": "the process died while chunking this document (SIGABRT)"
    }
    assert set(_rows_by_document(database_url)) == {"fine.md"}


def test_a_document_in_flight_when_a_run_was_killed_is_not_quarantined(
    tmp_path: Path, database_url: str
) -> None:
    """A run killed from outside (kill -9) also leaves documents in flight: the
    next run tries each in a process of its own, and ingests those that survive."""
    root = tmp_path / "docs"
    root.mkdir()
    (root / "fine.md").write_text(FINE)
    (root / "other.md").write_text(FINE + "\nOther.\n")
    data_dir = tmp_path / "data"
    assert _ingest(root, database_url, data_dir).code == 0
    (root / "fine.md").write_text(FINE + "\nEdited.\n")
    # What a run killed while chunking fine.md leaves next to the state.
    (journal,) = [
        folder.with_name(folder.name + JOURNAL_SUFFIX)
        for folder in (data_dir / "state").iterdir()
        if folder.is_dir()
    ]
    journal.write_text(f'+{json.dumps("other.md")}\n+{json.dumps("fine.md")}\n-"other.md"\n')
    done = _ingest(root, database_url, data_dir)
    assert done.code == 0, done.text
    assert set(_rows_by_document(database_url)) == {"fine.md", "other.md"}
    assert not journal.exists()  # a run that ends leaves no mark
