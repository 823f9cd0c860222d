"""`python -m benchmarks.ab` times two checkouts' whole ingests side by side
and prints a row per corpus and checkout. Figures are not judged here."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import ab

REPO = Path(__file__).resolve().parents[2]


def test_the_ab_benchmark_prints_each_checkout_against_the_first(
    tiny_corpora: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    corpus = tiny_corpora / "tldr"
    ab.main(["--base", str(REPO), "--other", str(REPO), "--corpus", str(corpus), "--trials", "1"])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| tldr |")]
    assert len(rows) == 2, rows
    cells = [cell.strip() for cell in rows[0].strip("|").split("|")]
    assert cells[3] == cells[5] == cells[7] == "1.00x", cells  # the base against itself
    assert all(float(cells[k]) > 0 for k in (2, 4, 8, 10)), cells


def test_a_failing_ingest_names_the_checkout(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match=r"ingest of .*missing.* failed"):
        ab.main(["--base", str(REPO), "--corpus", str(tmp_path / "missing"), "--trials", "1"])
