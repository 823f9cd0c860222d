"""Fixtures of the flow's integration tests: corpora copies, a data dir, an
`ingest` bound to this test's database, and the CLI run in-process."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mdchunks
import pytest
from mdchunks.cli import commands

RUST_BOOK = Path(__file__).resolve().parents[2] / "corpora" / "rust-book"

# A slice of the rust-book with deep heading trees, code fences, a SUMMARY
# full of links, and two folders, for the tests that need no full corpus.
SUBSET = {
    "SUMMARY.md": "SUMMARY.md",
    "ch04-01-what-is-ownership.md": "ch04-01-what-is-ownership.md",
    "ch08-02-strings.md": "ch08-02-strings.md",
    "ch10-02-traits.md": "generics/ch10-02-traits.md",
    "ch10-03-lifetime-syntax.md": "generics/ch10-03-lifetime-syntax.md",
    "appendix-01-keywords.md": "appendix/appendix-01-keywords.md",
    "appendix-02-operators.md": "appendix/appendix-02-operators.md",
    "ch01-01-installation.md": "ch01-01-installation.md",
}


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "mdchunks-data"


@pytest.fixture
def rust_book(tmp_path: Path) -> Path:
    """A copy of the whole rust-book corpus (112 chapters; its NOTICE is no document)."""
    return _writable(Path(shutil.copytree(RUST_BOOK, tmp_path / "rust-book")))


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """A copy of 8 rust-book chapters in three folders."""
    root = tmp_path / "docs"
    for name, target in SUBSET.items():
        destination = root / target
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(RUST_BOOK / name, destination)
    return _writable(root)


def _writable(root: Path) -> Path:
    """Tests edit their copies, never the bundled corpus (which may be read-only)."""
    for path in root.rglob("*"):
        if path.is_file():
            path.chmod(0o644)
    return root


Ingest = Callable[..., mdchunks.IngestReport]


@pytest.fixture
def ingest(database_url: str, data_dir: Path) -> Ingest:
    """`flow.ingest` against this test's database and data dir."""

    def run(root: Path, **options: Any) -> mdchunks.IngestReport:
        options.setdefault("source", "docs")
        return mdchunks.ingest(root, database_url=database_url, data_dir=data_dir, **options)

    return run


@dataclass(frozen=True)
class CliResult:
    code: int
    out: str
    err: str


RunCli = Callable[..., CliResult]


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str], database_url: str, data_dir: Path) -> RunCli:
    """`mdchunks ARGS...` in this process, as the console script runs it."""

    def run(*args: str, database: bool = True) -> CliResult:
        argv = list(args)
        if database:
            argv += ["--database-url", database_url, "--data-dir", str(data_dir)]
        capsys.readouterr()
        with pytest.raises(SystemExit) as exited:
            commands.main(argv)
        captured = capsys.readouterr()
        code = exited.value.code
        return CliResult(code if isinstance(code, int) else 1, captured.out, captured.err)

    return run
