"""Helpers of the reliability tests: corpora, the CLI in a process of its own,
and the table read back row for row.

Everything here talks to a real PostgreSQL and runs the real `mdchunks`
entry point; nothing is mocked.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg

ROOT = Path(__file__).resolve().parents[2]
# The bundled corpora (corpora/README.md): 600 tldr pages, the whole rust-book.
TLDR = ROOT / "corpora" / "tldr"
RUST_BOOK = ROOT / "corpora" / "rust-book"
TLDR_PAGES = 600

# `mdchunks` exactly as the console script runs it (flow.cli:main).
MDCHUNKS = [sys.executable, "-m", "mdchunks"]
# The header of the CLI's list of failed documents (on stderr).
FAILED_HEADER = re.compile(r"\d+ documents? failed")

# Two recipes for crash, backfill and concurrency tests. All three budgets are
# given, so `ingest` and `backfill` mean the same recipe whatever was stored.
RECIPE_A = ("600", "300", "60")
RECIPE_B = ("900", "450", "90")


def recipe_args(budgets: Sequence[str]) -> list[str]:
    size, minimum, overlap = budgets
    return ["--chunk-size", size, "--min-chunk-size", minimum, "--chunk-overlap", overlap]


def recipe_of(budgets: Sequence[str]) -> Any:
    from mdchunks import Recipe

    size, minimum, overlap = (int(value) for value in budgets)
    return Recipe(chunk_size=size, min_chunk_size=minimum, chunk_overlap=overlap)


# -- corpora ------------------------------------------------------------------------


def copy_corpus(
    target: Path, *, tldr_pages: int, book_chapters: int = 0, offset: int = 0, copies: int = 1
) -> Path:
    """A writable copy of `tldr_pages` tldr pages (from `common/`, in name order,
    starting at `offset`) and `book_chapters` rust-book chapters (in `book/`).
    `copies` > 1 puts the pages in that many folders (`pages/`, `pages-2/`, ...):
    as many more documents, each its own rows (a row's id names its path).
    The bundled corpora are only read."""
    if offset + tldr_pages > TLDR_PAGES:
        raise ValueError(
            f"{offset + tldr_pages} tldr pages asked for; corpora/tldr bundles {TLDR_PAGES}"
        )
    pages = sorted((TLDR / "common").glob("*.md"))[offset : offset + tldr_pages]
    for copy in range(1, copies + 1):
        folder = target / ("pages" if copy == 1 else f"pages-{copy}")
        folder.mkdir(parents=True)
        for page in pages:
            shutil.copyfile(page, folder / page.name)
    if book_chapters:
        (target / "book").mkdir()
        chapters = sorted(RUST_BOOK.glob("ch*.md"))[:book_chapters]
        for chapter in chapters:
            shutil.copyfile(chapter, target / "book" / chapter.name)
    return target


# -- the CLI in a process of its own ------------------------------------------------------


def cli_env(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env["COCOINDEX_DISABLE_USAGE_TRACKING"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra)
    return env


@dataclass(frozen=True)
class Done:
    code: int
    out: str
    err: str
    seconds: float

    @property
    def text(self) -> str:
        return self.out + self.err


def run_cli(
    *args: str, env: dict[str, str] | None = None, timeout: float = 300, prefix: Sequence[str] = ()
) -> Done:
    started = time.monotonic()
    done = subprocess.run(
        [*prefix, *MDCHUNKS, *args],
        cwd=ROOT,
        env=env or cli_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return Done(done.returncode, done.stdout, done.stderr, time.monotonic() - started)


def start_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*MDCHUNKS, *args],
        cwd=ROOT,
        env=env or cli_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def finish(process: subprocess.Popen[str], timeout: float = 300) -> Done:
    started = time.monotonic()
    out, err = process.communicate(timeout=timeout)
    return Done(process.returncode, out, err, time.monotonic() - started)


def kill(process: subprocess.Popen[str]) -> int:
    """SIGKILL (no chance to clean up), then reap. Returns the exit status."""
    if process.poll() is None:
        process.send_signal(signal.SIGKILL)
    process.communicate(timeout=60)
    return process.returncode


def wait_until(condition: Callable[[], bool], *, timeout: float, every: float = 0.01) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(every)
    return False


# -- the database, read back --------------------------------------------------------------


def query(url: str, sql: str, params: Any = None) -> list[tuple[Any, ...]]:
    """Rows of a statement (none for a statement that returns none)."""
    with psycopg.connect(url, autocommit=True) as conn:
        cursor = conn.execute(sql, params)
        return list(cursor) if cursor.description is not None else []


def count_rows(url: str, source: str, recipe: str | None = None) -> int:
    """Chunk rows of a source (of one recipe); 0 while the schema is not there yet."""
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:
            exists = conn.execute("SELECT to_regclass('content_chunks') IS NOT NULL").fetchone()
            if not exists or not exists[0]:
                return 0
            row = conn.execute(
                "SELECT count(*) FROM content_chunks WHERE source = %s "
                "AND (%s::text IS NULL OR recipe = %s::text)",
                [source, recipe, recipe],
            ).fetchone()
            return int(row[0]) if row else 0
    except psycopg.Error:
        return 0


def table(url: str, source: str) -> list[tuple[Any, ...]]:
    """Every column of every chunk row of a source, ordered by id: the whole
    row (id, text, offsets, heading columns, parent, recipe and whatever
    columns the schema has grown), so two tables compare row for row."""
    with psycopg.connect(url, autocommit=True) as conn:
        cursor = conn.execute(
            "SELECT * FROM content_chunks WHERE source = %s ORDER BY id", [source]
        )
        return [tuple(row) for row in cursor]


def documents(url: str, source: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        cursor = conn.execute(
            "SELECT * FROM mdchunks_documents WHERE source = %s ORDER BY rel_path", [source]
        )
        return [tuple(row) for row in cursor]


def assert_invariants(url: str, source: str) -> None:
    """No duplicates, no gaps in positions, no parent that points at a missing
    row or outside its document, every row of the source's current recipe."""
    duplicates = query(
        url,
        "SELECT rel_path, position FROM content_chunks WHERE source = %s "
        "GROUP BY 1, 2 HAVING count(*) > 1",
        [source],
    )
    assert duplicates == []
    gaps = query(
        url,
        "SELECT rel_path FROM content_chunks WHERE source = %s "
        "GROUP BY 1 HAVING max(position) + 1 <> count(*)",
        [source],
    )
    assert gaps == []
    orphans = query(
        url,
        """
        SELECT c.rel_path, c.position FROM content_chunks c
        LEFT JOIN content_chunks p ON p.id = c.parent_chunk_id
        WHERE c.source = %s AND c.parent_chunk_id IS NOT NULL
          AND (p.id IS NULL OR p.source <> c.source OR p.rel_path <> c.rel_path)
        """,
        [source],
    )
    assert orphans == []
    recipes = query(url, "SELECT DISTINCT recipe FROM content_chunks WHERE source = %s", [source])
    assert len(recipes) <= 1, recipes


def with_credentials(url: str, user: str, password: str, dbname: str | None = None) -> str:
    """The same server as `url`, as another role (and database)."""
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    path = f"/{dbname}" if dbname else parts.path
    return urlunsplit((parts.scheme, f"{user}:{password}@{host}", path, parts.query, ""))


def one_line_error(done: Done) -> str:
    """The CLI's error contract: exactly one line on stderr, no traceback."""
    assert "Traceback" not in done.text, done.text
    lines = [line for line in done.err.splitlines() if line.strip()]
    assert len(lines) == 1, done.err
    return lines[0]
