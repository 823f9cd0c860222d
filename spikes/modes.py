"""Chunkers the harness compares: a mode name -> (text, budgets) -> spans.

- `none` and `markdown`: cocoindex's `RecursiveSplitter` with `language=None`
  and `language="markdown"` (the flow's recursive chunker). Their spans name
  no heading: the metrics derive the governing heading from each start, as
  `heading_index.assign` does.
- `structure-first` and `structure-common`: the structure-first chunker of
  DESIGN section 10 (`heading_index.structure_chunks`; splitting levels 1-3
  by default, `Budgets.split_levels`; oversized sections split by the same
  `RecursiveSplitter(language="markdown")`), with the classic merge rule (a
  merged chunk takes its first section's heading) and with the
  deepest-common-ancestor rule. Their spans carry the heading each chunk's
  breadcrumb names (`Span.named`), so the metrics score what the flow would
  store. They start a section's chunk after its heading line(s)
  (`heading_lines_in_chunks=False`), so `hdg-aligned` counts a chunk at a
  heading's body start as aligned for them, and for them only (see
  `spikes.metrics`).

Another chunker is one more entry in `MODES`: a function from the document
text and the budgets to its chunks' spans, in document order.

Budgets count UTF-8 bytes, as cocoindex counts them. (Importing this module
first runs `spikes/__init__`, which sets COCOINDEX_DISABLE_USAGE_TRACKING.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

from cocoindex.ops.text import RecursiveSplitter
from mdchunks.heading_index import (
    StructureOptions,
    budget_split_from,
    build_index,
    structure_chunks,
)
from mdchunks.heading_index.structure import MergedPath

from spikes.metrics import ROOT, Span


@dataclass(frozen=True, slots=True)
class Budgets:
    """The splitter budgets of a recipe, in UTF-8 bytes (DESIGN section 5 defaults),
    and the structure chunker's splitting levels (the budget modes ignore them)."""

    chunk_size: int = 2000
    min_chunk_size: int = 1000
    chunk_overlap: int = 200
    split_levels: int = 3  # structure modes: headings of levels 1..split_levels start sections

    def __post_init__(self) -> None:
        if self.chunk_size < 1:
            raise ValueError("chunk_size must be at least 1")
        if not 0 <= self.min_chunk_size <= self.chunk_size:
            raise ValueError("min_chunk_size must be between 0 and chunk_size")
        if not 0 <= self.chunk_overlap < self.chunk_size:
            raise ValueError("chunk_overlap must be at least 0 and below chunk_size")
        if not 1 <= self.split_levels <= 6:
            raise ValueError("split_levels must be between 1 and 6")


Chunker = Callable[[str, Budgets], Sequence[Span]]


@dataclass(frozen=True, slots=True)
class Mode:
    name: str
    description: str
    chunk: Chunker
    # False for a chunker that leaves heading lines out of chunk text: a chunk
    # at a heading's body start is then aligned with it (spikes.metrics).
    heading_lines_in_chunks: bool = True


@cache
def _splitter() -> RecursiveSplitter:
    return RecursiveSplitter()


def _budget_split(language: str | None) -> Chunker:
    def chunk(text: str, budgets: Budgets) -> list[Span]:
        pieces = _splitter().split(
            text,
            chunk_size=budgets.chunk_size,
            min_chunk_size=budgets.min_chunk_size,
            chunk_overlap=budgets.chunk_overlap,
            language=language,
        )
        return [Span(piece.start.char_offset, piece.end.char_offset) for piece in pieces]

    return chunk


def _structure(merged_path: MergedPath) -> Chunker:
    def chunk(text: str, budgets: Budgets) -> list[Span]:
        index = build_index(text)
        options = StructureOptions(
            chunk_size=budgets.chunk_size,
            min_chunk_size=budgets.min_chunk_size,
            chunk_overlap=budgets.chunk_overlap,
            split_levels=budgets.split_levels,
            merged_path=merged_path,
        )
        result = structure_chunks(text, index, options, budget_split_from(_splitter()))
        # A chunk's heading comes from the splitting index: find it in the full one.
        position = {heading.start: i for i, heading in enumerate(index.headings)}
        return [
            Span(c.start, c.end, ROOT if c.heading is None else position[c.heading.start])
            for c in result.chunks
        ]

    return chunk


MODES: dict[str, Mode] = {
    mode.name: mode
    for mode in (
        Mode("none", "RecursiveSplitter(language=None)", _budget_split(None)),
        Mode("markdown", 'RecursiveSplitter(language="markdown")', _budget_split("markdown")),
        Mode(
            "structure-first",
            "structure-first chunker, a merged chunk names its first section",
            _structure("first"),
            heading_lines_in_chunks=False,
        ),
        Mode(
            "structure-common",
            "structure-first chunker, a merged chunk names the deepest common ancestor",
            _structure("common"),
            heading_lines_in_chunks=False,
        ),
    )
}

# Every mode: the structure modes cost about what the markdown split costs.
DEFAULT_MODES: tuple[str, ...] = tuple(MODES)


def get_mode(name: str) -> Mode:
    try:
        return MODES[name]
    except KeyError:
        known = ", ".join(MODES)
        raise ValueError(f"unknown mode {name!r} (known: {known})") from None
