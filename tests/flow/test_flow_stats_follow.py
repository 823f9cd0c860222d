"""BM25's statistics follow a batch run by the documents it touches
(docs/search.md): each write moves them by its documents' share, taken
before and after in its transaction, and each delete by the share of the
rows it deletes; the whole recount runs only where a move cannot be
trusted, and the run says which. After every kind of change the moved
statistics are a recount's (df, N, lengths exact; bounds no tighter)."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import mdchunks
import pytest
from flow_checks import recounted_stats, stored_stats
from mdchunks.db import database
from mdchunks.retrieval import lexical_stats
from mdchunks.source import bm25_stats, reconcile, state, writes

Ingest = Callable[..., mdchunks.IngestReport]

_VOCABULARY = (
    "ownership borrow lifetime trait closure iterator vector string slice module crate macro "
    "pattern enum struct generic thread channel mutex arc box cell"
)
WORDS = _VOCABULARY.split()


def _document(rng: random.Random, sections: int) -> str:
    parts = []
    for n in range(sections):
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 40)))
        parts.append(f"## {rng.choice(WORDS)} {n}\n\n{words}.\n")
    return f"# {rng.choice(WORDS).title()}\n\n" + "\n".join(parts)


def _corpus(root: Path, documents: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    for n in range(documents):
        (root / f"doc{n:02}.md").write_text(_document(rng, rng.randint(1, 6)))


def _ingested(ingest: Ingest, tmp_path: Path, documents: int) -> Path:
    """A corpus of `documents` ingested (its statistics recounted): its root."""
    root = tmp_path / "docs"
    _corpus(root, documents)
    assert ingest(root).stats_update == "recounted (no statistics yet)"
    return root


def _exact(database_url: str) -> None:
    assert stored_stats(database_url) == recounted_stats(database_url)


@pytest.fixture(autouse=True)
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches of a few rows: a run of a few documents writes several of them
    while the engine runs, each in its own transaction."""
    monkeypatch.setattr(writes, "BATCH_ROWS", 3)


def test_adds_edits_deletes_and_failures_move_the_statistics_exactly(
    ingest: Ingest, database_url: str, tmp_path: Path
) -> None:
    root = _ingested(ingest, tmp_path, 40)
    rng = random.Random(11)
    changes = [
        # an edit, an add and a delete in one run
        lambda: (
            (root / "doc03.md").write_text(_document(rng, 4)),
            (root / "new.md").write_text(_document(rng, 3) + "\nzebra quagga\n"),
            (root / "doc05.md").unlink(),
        ),
        # a document shrinks (its last positions go) and another grows
        lambda: (
            (root / "doc07.md").write_text("# Short\n\nborrow.\n"),
            (root / "doc08.md").write_text(_document(rng, 12)),
        ),
        # a document fails (its rows go) and a heading-only one appears
        lambda: (
            (root / "doc09.md").write_bytes(b"# Bad\n\n\xff\xfe not utf-8\n"),
            (root / "only.md").write_text("# Lifetime\n"),
        ),
        # the failed document is repaired, and every word of one is new
        lambda: (
            (root / "doc09.md").write_text(_document(rng, 2)),
            (root / "doc10.md").write_text("# Okapi\n\nokapi tapir tapir.\n"),
        ),
    ]
    for change in changes:
        change()
        report = ingest(root)
        assert report.stats_update == "moved by the documents the run touched", report
        _exact(database_url)
    hits = mdchunks.search("zebra", source="docs", database_url=database_url, method="bm25")
    assert [hit.rel_path for hit in hits] == ["new.md"]
    # A run that changes nothing leaves them as they are.
    before = stored_stats(database_url)
    assert ingest(root).stats_update == ""
    assert stored_stats(database_url) == before


def test_a_run_that_changes_most_rows_recounts(
    ingest: Ingest, database_url: str, tmp_path: Path
) -> None:
    root = _ingested(ingest, tmp_path, 12)
    _corpus(root, 12, seed=8)  # every document anew
    report = ingest(root)
    assert (
        report.stats_update
        == f"recounted (more than 1/{bm25_stats.MOVE_SHARE} of the rows changed)"
    )
    _exact(database_url)


@pytest.mark.parametrize("where", ["reconcile", "stamp"])
def test_a_run_stopped_midway_leaves_the_next_one_a_recount(
    ingest: Ingest, database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """Stopped after some batches moved the statistics (before its
    reconciliation), or after all its rows and statistics (before its state
    was trusted again): the next run does not trust them to count the rows
    and recounts, so they are exact whatever the stopped run did."""
    root = _ingested(ingest, tmp_path, 20)
    rng = random.Random(5)
    for n in range(4):
        (root / f"doc{n:02}.md").write_text(_document(rng, 3))
    (root / "doc15.md").unlink()

    def stopped(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    with monkeypatch.context() as patched:
        patched.setattr(reconcile if where == "reconcile" else state, where, stopped)
        with pytest.raises(KeyboardInterrupt):
            ingest(root)
    again = ingest(root)
    assert again.stats_update == "recounted (the last run did not finish)", again
    _exact(database_url)


def test_statistics_deleted_by_hand_are_recounted_by_the_next_change(
    ingest: Ingest, database_url: str, tmp_path: Path
) -> None:
    root = _ingested(ingest, tmp_path, 6)
    with database.connect(database_url) as conn:
        conn.execute("DELETE FROM mdchunks_search_terms WHERE source = 'docs'")
        conn.execute("DELETE FROM mdchunks_search_stats WHERE source = 'docs'")
    (root / "doc01.md").write_text("# Tapir\n\ntapir.\n")
    assert ingest(root).stats_update == "recounted (no statistics yet)"
    _exact(database_url)


def test_a_source_growing_past_the_bounds_size_is_recounted_once(
    ingest: Ingest, database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Moves keep the bounds a source has; one that grows to the size that
    keeps MaxScore's bounds (and the top chunks) gets them from a recount."""
    root = tmp_path / "docs"
    _corpus(root, 12)
    first = ingest(root)
    chunks = first.rows_total
    monkeypatch.setattr(lexical_stats, "BOUNDS_MIN_CHUNKS", chunks + 1)
    (root / "more.md").write_text("# More\n\nborrow.\n")
    report = ingest(root)
    assert report.stats_update == f"recounted (the source reached {chunks + 1} chunks)", report
    with database.connect(database_url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM mdchunks_search_terms "
            "WHERE source = 'docs' AND max_occurrences IS NULL"
        ).fetchone()
    assert row == (0,)  # every lexeme has its bound now
    (root / "more.md").write_text("# More\n\nborrow lifetime.\n")
    assert ingest(root).stats_update == "moved by the documents the run touched"
