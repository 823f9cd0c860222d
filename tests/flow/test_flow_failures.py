"""A bad document costs that document alone, is named with its cause, keeps
no rows, and makes the exit status non-zero, on every run until it is fixed."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Ingest, RunCli
from flow_checks import assert_rows_match_files, documents_on_disk, fetch, rows_by_document
from mdchunks import Recipe
from mdchunks.source import writes

OWNERSHIP = "ch04-01-what-is-ownership.md"


def _failures(report: object) -> dict[str, str]:
    return {f.rel_path: f.cause for f in report.failures}  # type: ignore[attr-defined]


def test_bad_documents_are_reported_and_the_others_ingested(
    ingest: Ingest, docs: Path, database_url: str
) -> None:
    (docs / "latin1.md").write_bytes(b"# Caf\xe9\n\nNot UTF-8.\n")
    (docs / "binary.md").write_bytes(b"# Looks like markdown\n\x00\x01\x02")
    (docs / "huge.md").write_text("# Big\n\n" + "word " * 40_000)
    (docs / "empty.md").write_text("")

    report = ingest(docs, max_doc_bytes=150_000)  # the chapters are smaller

    causes = _failures(report)
    assert set(causes) == {"latin1.md", "binary.md", "huge.md"}
    assert "invalid UTF-8 at byte offset 5" in causes["latin1.md"]
    assert "NUL byte at byte offset 22" in causes["binary.md"]
    assert "too large: 200,007 bytes, over the limit of 150,000" in causes["huge.md"]
    assert report.processed == 9  # the 8 chapters and the empty file (no rows, no error)
    grouped = rows_by_document(database_url)
    assert not {"latin1.md", "binary.md", "huge.md", "empty.md"} & set(grouped)
    assert len(grouped) == 8


def test_a_document_that_goes_bad_loses_its_rows_and_stays_reported_until_fixed(
    ingest: Ingest, docs: Path, database_url: str
) -> None:
    ingest(docs)
    good = (docs / OWNERSHIP).read_bytes()
    (docs / OWNERSHIP).write_bytes(good[:100] + b"\xff\xfe" + good[100:])

    broken = ingest(docs)

    assert set(_failures(broken)) == {OWNERSHIP}
    assert OWNERSHIP not in rows_by_document(database_url)
    assert broken.rows_deleted > 0

    unchanged = ingest(docs)  # nothing changed: still failed, still said so
    assert unchanged.processed == 0
    assert "unchanged since an earlier run" in _failures(unchanged)[OWNERSHIP]
    assert OWNERSHIP not in rows_by_document(database_url)

    (docs / OWNERSHIP).write_bytes(good)
    fixed = ingest(docs)
    assert fixed.ok and fixed.processed == 1
    assert_rows_match_files(database_url, docs)
    errors = fetch(database_url, "SELECT rel_path FROM mdchunks_documents WHERE error IS NOT NULL")
    assert errors == []


def test_a_file_that_vanishes_after_the_walk_is_a_failure_of_its_own(
    ingest: Ingest, docs: Path, database_url: str, monkeypatch: object
) -> None:
    """The walk lists a file that is gone by the time it is read."""
    from mdchunks.source import listing

    walk = listing.walk

    def walk_then_delete(*args: object, **kwargs: object) -> listing.Listing:
        found = walk(*args, **kwargs)  # type: ignore[arg-type]
        (docs / OWNERSHIP).unlink()
        return found

    monkeypatch.setattr(listing, "walk", walk_then_delete)  # type: ignore[attr-defined]
    report = ingest(docs)

    assert set(_failures(report)) == {OWNERSHIP}
    assert "vanished" in _failures(report)[OWNERSHIP]
    assert report.processed == 7
    assert OWNERSHIP not in rows_by_document(database_url)


def test_the_cli_lists_failures_and_exits_non_zero(run_cli: RunCli, docs: Path) -> None:
    (docs / "latin1.md").write_bytes(b"# Caf\xe9\n")

    result = run_cli("ingest", str(docs), "--source", "docs")

    assert result.code == 1
    assert "1 failed" in result.out
    assert "latin1.md: invalid UTF-8 at byte offset 5" in result.err
    assert "Traceback" not in result.out + result.err

    again = run_cli("ingest", str(docs), "--source", "docs")
    assert again.code == 1 and "latin1.md" in again.err


def _refused_page() -> str:
    # One chunk whose search vector PostgreSQL refuses (over 1 MB of lexemes).
    paragraphs = (
        "\n".join(" ".join(f"w{i:06d}{j:03d}q{k}" for j in range(10)) for k in range(10))
        for i in range(700)
    )
    return "# Big\n\n" + "\n\n".join(paragraphs) + "\n"


@pytest.mark.parametrize("batch_rows", [1, 100_000], ids=["as-the-engine-runs", "at-the-end"])
def test_a_document_whose_rows_the_database_refuses_fails_alone(
    ingest: Ingest,
    docs: Path,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    batch_rows: int,
) -> None:
    # Rows are written in batches while the engine runs, or by the
    # reconciliation (flow/source/writes.py): either way the refused document
    # fails alone, with the database's cause, and the batch's others land.
    monkeypatch.setattr(writes, "BATCH_ROWS", batch_rows)
    (docs / "big.md").write_text(_refused_page())
    recipe = Recipe(chunk_size=2_000_000, min_chunk_size=1_000_000)

    report = ingest(docs, recipe=recipe)

    cause = _failures(report)["big.md"]
    assert cause.startswith("the database refused its rows: string is too long for tsvector")
    assert set(_failures(report)) == {"big.md"}
    assert set(rows_by_document(database_url)) == documents_on_disk(docs) - {"big.md"}
    # Reported again from its document row while it stays as it is.
    big = docs / "big.md"
    again = ingest(docs, recipe=recipe)
    assert set(_failures(again)) == {"big.md"} and again.processed == 0
    big.write_text("# Big\n\nNow small.\n")
    fixed = ingest(docs, recipe=recipe)
    assert fixed.ok and fixed.processed == 1
    assert_rows_match_files(database_url, docs, recipe=recipe)
