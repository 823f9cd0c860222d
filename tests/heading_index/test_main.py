"""`python -m mdchunks.heading_index FILE...`: one JSON object per heading."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from mdchunks.heading_index.__main__ import main


def test_prints_one_json_object_per_heading(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    doc = tmp_path / "doc.md"
    doc.write_bytes("\ufeff# Café\n\nbody\n\n## Sub *x*\n".encode())
    assert main([str(doc)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line) for line in lines] == [
        {
            "file": str(doc),
            "level": 1,
            "text": "Café",
            "start": 0,
            "end": 7,
            "section_end": 25,
            "path": ["Café"],
        },
        {
            "file": str(doc),
            "level": 2,
            "text": "Sub x",
            "start": 14,
            "end": 25,
            "section_end": 25,
            "path": ["Café", "Sub x"],
        },
    ]


def test_bad_files_are_reported_and_the_others_still_printed(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"# ok\n\xff\n")
    good = tmp_path / "good.md"
    good.write_text("# Good\n")
    assert main([str(bad), str(tmp_path / "missing.md"), str(good)]) == 1
    captured = capsys.readouterr()
    assert [json.loads(line)["text"] for line in captured.out.splitlines()] == ["Good"]
    assert "byte offset 5" in captured.err
    assert "missing.md" in captured.err


def test_usage_without_arguments(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main([]) == 2
    assert "usage" in capsys.readouterr().err


def test_runs_as_a_module(tmp_path: Path) -> None:
    doc = tmp_path / "d.md"
    doc.write_text("# One\n")
    result = subprocess.run(
        [sys.executable, "-m", "mdchunks.heading_index", str(doc)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert json.loads(result.stdout)["path"] == ["One"]


def test_a_reader_that_stops_reading_gets_no_traceback() -> None:
    # `... | head -1`: the pipe closes while headings are still being written.
    book = sorted((Path(__file__).resolve().parents[2] / "corpora" / "rust-book").glob("ch*.md"))
    process = subprocess.Popen(
        [sys.executable, "-m", "mdchunks.heading_index", *map(str, book)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.readline().startswith(b'{"file": ')
    process.stdout.close()
    error = process.stderr.read().decode()
    assert process.wait(timeout=60) == 141
    assert error == ""
