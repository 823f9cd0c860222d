"""A fresh clone stands alone: the data the tests, the harness and the
benchmarks read is in the repository (corpora/), and nothing reads a folder
beside the checkout (the reference folder beside it was one)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The sibling folder's name, spelt in parts so this file names no path into it.
SIBLING = "sha" + "red"
CORPORA = ROOT / "corpora"
# A path out of the checkout into the sibling folder, however spelt.
OUTSIDE = re.compile(rf"""\.\./{SIBLING}|["']{SIBLING}["']|{SIBLING}/(?:corpora|commonmark)""")
SCANNED = [ROOT / "tests", ROOT / "spikes", ROOT / "benchmarks", ROOT / ".ci", ROOT / "dev.py"]
# Recorded outputs (a measurement's provenance names the folder it read then),
# not readers.
RECORDS = [ROOT / "spikes" / "results", ROOT / "benchmarks" / "results"]


def _scanned_files() -> list[Path]:
    files: list[Path] = []
    for place in SCANNED:
        candidates = [place] if place.is_file() else sorted(place.rglob("*"))
        for path in candidates:
            if not path.is_file() or "__pycache__" in path.parts or path == Path(__file__):
                continue
            if any(path.is_relative_to(record) for record in RECORDS):
                continue
            files.append(path)
    return files


def test_nothing_reads_a_folder_beside_the_checkout() -> None:
    files = _scanned_files()
    readers = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in files
        for number, line in enumerate(
            path.read_text(encoding="utf-8", errors="replace").splitlines(), 1
        )
        if OUTSIDE.search(line)
    ]

    assert len(files) > 50  # the scan saw the suites, the harness and the benchmarks
    assert readers == []


def test_the_scan_would_catch_a_reader() -> None:
    for line in (
        f'SHARED = ROOT / ".." / "{SIBLING}"',
        f"python -m spikes.heading_eval ../{SIBLING}/corpora/rust-book",
        f"Path('/work/{SIBLING}/commonmark/spec.json')",
    ):
        assert OUTSIDE.search(line), line


def test_the_bundled_corpora_are_complete_and_say_where_they_come_from() -> None:
    assert len(list((CORPORA / "rust-book").glob("*.md"))) == 112
    assert len(list((CORPORA / "tldr" / "common").glob("*.md"))) == 600
    assert len(list((CORPORA / "fastapi-docs").rglob("*.md"))) == 45
    assert len([p for p in (CORPORA / "starlight-docs").rglob("*.md*") if p.is_file()]) == 338
    examples = json.loads((CORPORA / "commonmark" / "spec.json").read_text(encoding="utf-8"))
    assert len(examples) == 655
    licences = {
        "rust-book": "MIT",
        "tldr": "CC BY 4.0",
        "commonmark": "CC BY-SA 4.0",
        "fastapi-docs": "MIT",
        "starlight-docs": "MIT",
    }
    for folder, licence in licences.items():
        notice = (CORPORA / folder / "NOTICE").read_text(encoding="utf-8")
        assert "Source: https://github.com/" in notice and licence in notice, folder
    size = sum(path.stat().st_size for path in CORPORA.rglob("*") if path.is_file())
    assert size < 6_000_000  # compact: the repository stays small


def test_the_console_script_works_outside_the_checkout(database_url: str, tmp_path: Path) -> None:
    """From a folder that is not the checkout, only the installed package is
    importable (pytest puts the checkout on its own sys.path, and `python -m`
    the current folder): the migrations must be found as `mdchunks.migrations`."""
    corpus = tmp_path / "notes"
    corpus.mkdir()
    (corpus / "a.md").write_text("# Ownership\n\n## Rules\n\nEach value has an owner.\n")
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env["COCOINDEX_DISABLE_USAGE_TRACKING"] = "1"
    where = ["--database-url", database_url, "--data-dir", str(tmp_path / "data")]

    def mdchunks(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mdchunks", *args, *where],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    ingested = mdchunks("ingest", "notes")
    found = mdchunks("search", "owner")

    assert ingested.returncode == 0, ingested.stderr
    assert "documents: 1 processed" in ingested.stdout
    assert found.returncode == 0, found.stderr
    assert found.stdout.split()[1:3] == ["notes:a.md#0", "Ownership"]
