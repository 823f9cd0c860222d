"""cocoindex's splitter, never handed a markdown text that would abort the
process or stall it.

Two shapes are guarded before they fire:

- **Deep nesting.** `RecursiveSplitter(language="markdown")` aborts (SIGABRT,
  no exception) on a text whose blocks nest 255 deep
  (mdchunks.heading_index.nesting has the measurements). `GuardedSplitter`
  measures the nesting first, from our own parse when the line prefixes
  could nest that deep, and splits such a text as plain text
  (`language=None`) instead: its chunks keep the heading columns our index
  gives them, only their boundaries ignore markdown syntax.
- **Large pipe tables.** The markdown splitter spends about 150-230 us per
  table cell once rows hold tens of cells (measured on 100-200 KB tables of
  one-character cells: 9-14 KB/s, linear in size; 10 cells a row: 3 us a
  cell), so a 500 KB table took 34 s and a 24 MB one would take half an
  hour. Plain splitting reads the same table at 20-50 MB/s. When the text's
  table lines hold more than `TABLE_CELLS_AT_MOST` cell separators in all,
  each run of table lines is split as plain text on its own (it breaks at
  row ends, as markdown would) and the text between them as markdown; a
  chunk then never spans a table's edge. So the markdown splitter reads at
  most that many cells of one text: well under a second.

Both chunkers go through it: the recursive chunker for whole documents, the
structure chunker for oversized sections.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cocoindex.ops.text import RecursiveSplitter
from mdchunks.heading_index.nesting import SAFE_NESTING, markdown_split_is_safe
from mdchunks.plugin import memory

# A split of this much text or more is followed by a trim of the freed
# memory: at least 10 MB of its parse's (a trim takes about a millisecond).
TRIM_FROM_CHARS = 256 * 1024

# Cell separators of table lines the markdown splitter may be given in one
# text: at the slowest measured rate (230 us a cell), about half a second.
TABLE_CELLS_AT_MOST = 2000

# A run of consecutive lines that each hold a `|`: where a pipe table can be
# (a table has no blank line inside). One linear scan: a line without `|`
# fails at its end, and the next attempt starts at the next line.
_TABLE_LINES = re.compile(r"(?:^[^|\n]*\|[^\n]*(?:\n|\Z))+", re.MULTILINE)


@dataclass(frozen=True)
class _Offset:
    char_offset: int


@dataclass(frozen=True)
class _Span:
    """A chunk's span, in the shape of cocoindex's chunks (`.start.char_offset`)."""

    start: _Offset
    end: _Offset


def table_runs(text: str) -> list[tuple[int, int]]:
    """The spans of `text` to split as plain text: its runs of table lines,
    when they hold more than TABLE_CELLS_AT_MOST `|` in all; else none."""
    if text.count("|") <= TABLE_CELLS_AT_MOST:
        # The runs cannot hold more `|` than the text: no scan (the regex tries
        # every position of the text, 4% of a rust-book ingest's chunking).
        return []
    runs = [found.span() for found in _TABLE_LINES.finditer(text)]
    cells = sum(text.count("|", start, end) for start, end in runs)
    return runs if cells > TABLE_CELLS_AT_MOST else []


class GuardedSplitter:
    """`RecursiveSplitter.split`, with markdown downgraded to plain text past
    SAFE_NESTING and for the runs of table lines past TABLE_CELLS_AT_MOST."""

    def __init__(self, inner: RecursiveSplitter, *, max_nesting: int = SAFE_NESTING) -> None:
        self._inner = inner
        self._max_nesting = max_nesting

    def split(
        self,
        text: str,
        chunk_size: int,
        *,
        min_chunk_size: int | None = None,
        chunk_overlap: int | None = None,
        language: str | None = None,
    ) -> Sequence[Any]:
        if language == "markdown" and not markdown_split_is_safe(text, self._max_nesting):
            language = None
        runs = table_runs(text) if language == "markdown" else []
        if not runs:
            return self._split(text, chunk_size, min_chunk_size, chunk_overlap, language)
        # The text in pieces: between the runs as markdown, each run as plain text.
        pieces: list[tuple[int, int, str | None]] = []
        at = 0
        for start, end in runs:
            pieces += [(at, start, language), (start, end, None)]
            at = end
        pieces.append((at, len(text), language))
        spans: list[Any] = []
        for start, end, kind in pieces:
            piece = text[start:end]
            if piece.strip():
                found = self._split(piece, chunk_size, min_chunk_size, chunk_overlap, kind)
                spans += [
                    _Span(_Offset(start + c.start.char_offset), _Offset(start + c.end.char_offset))
                    for c in found
                ]
        return spans

    def _split(
        self,
        text: str,
        chunk_size: int,
        min_chunk_size: int | None,
        chunk_overlap: int | None,
        language: str | None,
    ) -> Sequence[Any]:
        chunks = self._inner.split(
            text,
            chunk_size,
            min_chunk_size=min_chunk_size,
            chunk_overlap=chunk_overlap,
            language=language,
        )
        if len(text) >= TRIM_FROM_CHARS:
            # Its parse's 40-230 bytes a byte, freed, handed back before the
            # rows are built on top of them (flow/plugin/memory.py).
            memory.trim()
        return chunks
