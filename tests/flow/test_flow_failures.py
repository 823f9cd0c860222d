"""A bad document costs that document alone, is named with its cause, keeps
no rows, and makes the exit status non-zero, on every run until it is fixed."""

from __future__ import annotations

from pathlib import Path

from conftest import Ingest, RunCli
from flow_checks import assert_rows_match_files, fetch, rows_by_document

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
