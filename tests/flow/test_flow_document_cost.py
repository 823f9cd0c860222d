"""Bounded cost per document (issue 26): the shapes known to be slow are
guarded before they reach the markdown splitter (flow/plugin/splitting.py).
Counted, not timed: what the markdown splitter is given."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from cocoindex.ops.text import RecursiveSplitter
from mdchunks.heading_index.options import ChunkOptions
from mdchunks.plugin.chunking import chunk_markdown
from mdchunks.plugin.splitting import TABLE_CELLS_AT_MOST, GuardedSplitter, table_runs


class Recording:
    """The real splitter, recording each text and language it is given."""

    def __init__(self) -> None:
        self.inner = RecursiveSplitter()
        self.calls: list[tuple[str, str | None]] = []

    def split(self, text: str, chunk_size: int, **options: Any) -> Sequence[Any]:
        self.calls.append((text, options.get("language")))
        return self.inner.split(text, chunk_size, **options)


def wide_table(rows: int, columns: int = 100) -> str:
    row = "|" + "|".join("1" for _ in range(columns)) + "|\n"
    return row.replace("1", "h") + row.replace("1", "-") + row * rows


DOCUMENT = (
    "# Report\n\nSome prose before the table, with `a | pipe` in code.\n\n"
    + wide_table(40)
    + "\nProse between.\n\n## Second\n\n"
    + wide_table(10, columns=5)
    + "\nProse after the tables.\n"
)


def test_a_large_table_is_split_as_plain_text_and_the_rest_as_markdown() -> None:
    recording = Recording()
    spans = GuardedSplitter(recording).split(  # type: ignore[arg-type]
        DOCUMENT, 500, min_chunk_size=200, chunk_overlap=0, language="markdown"
    )
    markdown = [text for text, language in recording.calls if language == "markdown"]
    plain = [text for text, language in recording.calls if language is None]
    assert markdown and plain
    assert all(text.count("|") <= TABLE_CELLS_AT_MOST for text in markdown)
    assert sum(text.count("|") for text in plain) > TABLE_CELLS_AT_MOST
    assert "Prose between." in "".join(markdown)
    # The spans are the document's, in order, and cover every character but whitespace.
    found = [(c.start.char_offset, c.end.char_offset) for c in spans]
    assert found == sorted(found)
    assert_covered(DOCUMENT, found)


def assert_covered(text: str, spans: list[tuple[int, int]]) -> None:
    covered = set().union(*(range(start, end) for start, end in spans))
    assert all(i in covered for i, char in enumerate(text) if not char.isspace())


def test_small_tables_stay_with_the_markdown_splitter() -> None:
    text = "# Small\n\n" + wide_table(3, columns=5) * 20
    assert table_runs(text) == []
    recording = Recording()
    GuardedSplitter(recording).split(text, 500, language="markdown")  # type: ignore[arg-type]
    assert recording.calls == [(text, "markdown")]


@pytest.mark.parametrize("chunker", ["recursive", "structure"])
def test_both_chunkers_keep_every_row_of_a_large_table(chunker: str) -> None:
    text = "# Data\n\n" + wide_table(200)
    chunks = chunk_markdown(text, ChunkOptions(chunker=chunker)).chunks
    assert all(chunk.heading_text == "Data" for chunk in chunks)
    # Every cell is in a chunk (the structure chunker leaves a heading line
    # that only opens a table to the breadcrumb).
    table_at = text.index("|")
    assert_covered(text[table_at:], [(c.start - table_at, c.end - table_at) for c in chunks])
    assert max(len(chunk.text) for chunk in chunks) <= ChunkOptions().chunk_size
