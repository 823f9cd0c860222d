"""The benchmark command runs and prints what it should (quick mode, cheapest
stages). Its figures are not judged here: nothing in this file is timed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.__main__ import main
from benchmarks.stages import exponent


def test_exponent_of_a_linear_and_a_quadratic_cost() -> None:
    assert exponent([1, 4, 16], [2, 8, 32]) == pytest.approx(1.0)
    assert exponent([1, 4, 16], [1, 16, 256]) == pytest.approx(2.0)


def test_quick_index_and_memory_stages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], postgres_server: Any
) -> None:
    admin_url: str = postgres_server.admin_url
    code = main(
        [
            "--quick",
            "--only",
            "index,memory",
            "--out",
            str(tmp_path / "results"),
            "--work-dir",
            str(tmp_path / "work"),
            "--admin-url",
            admin_url,
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "| stage" in printed and "versions: mdchunks" in printed
    # Every registered chunker is timed (the registry is the one list).
    from mdchunks.heading_index.chunkers import CHUNKERS

    assert all(f"chunker {name}" in printed for name in CHUNKERS)

    results = json.loads((tmp_path / "results" / "quick.json").read_text())
    figures = results["figures"]
    stages = [figure["stage"] for figure in figures]
    # rust-book, tldr, the big document; then each chunker on rust-book
    assert stages.count("1 index") == 3 + len(CHUNKERS)
    assert stages.count("6 memory") == 3  # big document, many files, many files' ingest
    for figure in figures:
        assert figure["ours"] > 0 and figure["baseline"] > 0, figure
        assert figure["ratio"] > 0, figure
        assert figure["met"] in (True, False) or not figure["target"], figure
    assert (tmp_path / "results" / "quick.txt").read_text().startswith("mdchunks benchmarks")
    assert results["environment"]["versions"]["cocoindex"]


def test_row_cost_inserts_the_rows_into_each_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], postgres_server: Any
) -> None:
    from benchmarks import row_cost

    out = tmp_path / "row-cost.json"
    code = row_cost.main(
        ["--trials", "1", "--admin-url", postgres_server.admin_url, "--json", str(out)]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert all(f"| {name} |" in printed for name in row_cost.SCHEMAS)
    figures = json.loads(out.read_text())
    assert figures["rows"] > 0
    assert all(len(figures["seconds"][name]) == 1 for name in row_cost.SCHEMAS)


def test_document_cost_prints_every_shape(capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks import document_cost

    assert document_cost.main(["--mb", "0.02"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:4] == ["shape", "MB", "s", "s/MB"]
    assert [line.split()[0] for line in lines[1:]] == list(document_cost.SHAPES)


def test_memory_shapes_prints_the_base_beside_this_checkout(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from benchmarks import memory_shapes

    assert memory_shapes.main(["--mb", "0.01", "--shapes", "table,docx"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "base bdf4231" in lines[0]
    assert lines[1].split() == [
        "shape", "disk", "MB", "text", "MB", "base", "MB", "x", "text", "base", "s",
        "after", "MB", "x", "text", "after", "s",
    ]  # fmt: skip
    assert [line.split()[0] for line in lines[2:]] == ["table", "docx"]
    assert all(line.count("x") >= 2 for line in lines[2:])
