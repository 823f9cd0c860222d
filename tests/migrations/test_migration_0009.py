"""Migration 0009 (one text-search parse per row, chunk lines, MaxScore's
bounds): a database at 0008 with rows upgrades in place, keeps every search
value, and then computes new ones exactly as the generated columns did."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import mdchunks
import psycopg
import pytest
from mdchunks.db import database, migrate
from mdchunks.retrieval import lexical, lexical_stats

from benchmarks.row_cost import migrate_through

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample"

# What the generated columns of 0002 and 0008 computed.
_EXPECTED = """
SELECT setweight(to_tsvector('english', array_to_string(heading_path, ' ')), 'A')
       || setweight(to_tsvector('english', text), 'B'),
       mdchunks_lexeme_occurrences(to_tsvector('english', array_to_string(heading_path, ' '))),
       mdchunks_lexeme_occurrences(to_tsvector('english', text))
FROM content_chunks WHERE id = %s
"""
_STORED = (
    "SELECT search_vector, search_heading_length, search_text_length FROM content_chunks "
    "WHERE id = %s"
)
_ROWS = [
    ("a.md", 0, "# Strings\n\nStrings are stored on the heap.", "Strings", 1, ["Strings"]),
    (
        "a.md",
        1,
        "Memory is owned; the owner frees it.",
        "Memory notes",
        2,
        ["Strings", "Memory notes"],
    ),
    ("b.md", 0, "A preamble about the heap and memory.", None, None, []),
]


def _insert(conn: psycopg.Connection, rows: list[tuple[object, ...]]) -> list[object]:
    ids = []
    for rel_path, position, text, heading, level, path in rows:
        (row_id,) = conn.execute(
            "INSERT INTO content_chunks (id, source, rel_path, position, char_start, char_end, "
            "text, heading_text, heading_level, heading_path, breadcrumb, recipe) VALUES "
            "(gen_random_uuid(), 'docs', %s, %s, 0, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
            [
                rel_path,
                position,
                len(text),
                text,
                heading,
                level,
                path,
                " > ".join(path) or None,
                "r",
            ],
        ).fetchone() or (None,)
        ids.append(row_id)
    return ids


def test_a_database_at_0008_with_rows_upgrades_in_place(
    database_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    migrate_through(database_url, "0008")
    with psycopg.connect(database_url, autocommit=True) as conn:
        old_ids = _insert(conn, _ROWS)
        stored = {i: conn.execute(_STORED, [i]).fetchone() for i in old_ids}
        # Statistics as 0008 refreshed them: no bounds for MaxScore.
        conn.execute(
            "INSERT INTO mdchunks_search_stats (source, chunks, heading_length, text_length) "
            "SELECT 'docs', count(*), sum(search_heading_length), sum(search_text_length) "
            "FROM content_chunks"
        )
        conn.execute(
            "INSERT INTO mdchunks_search_terms (source, lexeme, df) SELECT 'docs', t, count(*) "
            "FROM content_chunks, unnest(tsvector_to_array(search_vector)) t GROUP BY t"
        )

    assert [m for m in migrate.apply(database_url).applied if m.startswith("0009")]

    with psycopg.connect(database_url, autocommit=True) as conn:
        # The old rows: same values, no rewrite; lines unknown until re-processed.
        for i in old_ids:
            assert conn.execute(_STORED, [i]).fetchone() == stored[i]
            assert conn.execute(_EXPECTED, [i]).fetchone() == stored[i]
        assert conn.execute(
            "SELECT count(*) FROM content_chunks WHERE start_line IS NULL"
        ).fetchone() == (3,)
        generated = conn.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_name = 'content_chunks' AND is_generated = 'ALWAYS'"
        ).fetchall()
        assert generated == []
        # Search over the old statistics (no bounds for MaxScore) is what it
        # is over refreshed ones (with bounds).
        with database.connect(database_url) as ours:
            before = lexical.bm25(ours, "strings heap memory", k=3, source="docs")
            assert len(before) == 3
            bounds_sql = (
                "SELECT bool_and(max_occurrences >= 1 AND max_heading_occurrences >= 0) "
                "FROM mdchunks_search_terms WHERE source = 'docs'"
            )
            lexical_stats.refresh_stats(ours, "docs")  # too small a source for the bounds
            assert conn.execute(bounds_sql).fetchone() == (None,)
            assert lexical.bm25(ours, "strings heap memory", k=3, source="docs") == before
            monkeypatch.setattr(lexical_stats, "BOUNDS_MIN_CHUNKS", 3)
            lexical_stats.refresh_stats(ours, "docs")
            assert conn.execute(bounds_sql).fetchone() == (True,)
            assert lexical.bm25(ours, "strings heap memory", k=3, source="docs") == before

        # New rows get from the trigger what the generated columns gave.
        new_ids = _insert(conn, [(f"c{r[0]}", *r[1:]) for r in _ROWS])
        for i in new_ids:
            assert conn.execute(_STORED, [i]).fetchone() == conn.execute(_EXPECTED, [i]).fetchone()
        # A writer's own values are overwritten; an update of the text
        # recomputes them; one that leaves text and path alone keeps them.
        conn.execute(
            "UPDATE content_chunks SET search_vector = 'bogus', search_text_length = 0, "
            "text = 'Zebras graze on the heap' WHERE id = %s",
            [new_ids[0]],
        )
        assert (
            conn.execute(_STORED, [new_ids[0]]).fetchone()
            == conn.execute(_EXPECTED, [new_ids[0]]).fetchone()
        )
        kept = conn.execute(_STORED, [new_ids[1]]).fetchone()
        conn.execute(
            "UPDATE content_chunks SET search_vector = 'bogus', start_line = 3, end_line = 4 "
            "WHERE id = %s",
            [new_ids[1]],
        )
        assert conn.execute(_STORED, [new_ids[1]]).fetchone() == kept


_OLD_VERSION_INGEST = """
import dataclasses, sys
from pathlib import Path
import mdchunks.plugin.rows as rows
# An mdchunks before 0009: another rows version in the engine's memo, rows
# without lines.
rows.ROWS_VERSION = "1"
_chunk_rows = rows.chunk_rows
rows.chunk_rows = lambda *a, **k: [
    dataclasses.replace(row, start_line=None, end_line=None) for row in _chunk_rows(*a, **k)
]
import mdchunks
report = mdchunks.ingest(
    Path(sys.argv[1]), source="docs", database_url=sys.argv[2], data_dir=Path(sys.argv[3])
)
assert report.ok
"""


def test_the_first_ingest_after_the_upgrade_fills_the_lines(
    database_url: str, tmp_path: Path
) -> None:
    root = tmp_path / "docs"
    root.mkdir()
    for name in ("ch08-02-strings.md", "guide"):
        source = SAMPLE / name
        if source.is_dir():
            subprocess.run(["cp", "-r", str(source), str(root / name)], check=True)
        else:
            (root / name).write_bytes(source.read_bytes())
    data_dir = tmp_path / "data"
    subprocess.run(
        [sys.executable, "-c", _OLD_VERSION_INGEST, str(root), database_url, str(data_dir)],
        check=True,
        cwd=ROOT,
        env=dict(os.environ),
        capture_output=True,
    )
    with psycopg.connect(database_url) as conn:
        assert conn.execute(
            "SELECT count(*) > 0 AND bool_and(start_line IS NULL) FROM content_chunks"
        ).fetchone() == (True,)

    report = mdchunks.ingest(root, source="docs", database_url=database_url, data_dir=data_dir)

    assert report.ok and report.processed == report.documents > 1
    with psycopg.connect(database_url) as conn:
        missing = conn.execute(
            "SELECT count(*) FROM content_chunks WHERE start_line IS NULL OR end_line IS NULL"
        ).fetchone()
    assert missing == (0,)
    again = mdchunks.ingest(root, source="docs", database_url=database_url, data_dir=data_dir)
    assert again.processed == 0  # once only
