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
  store. They start a section's chunk after its heading line(s);
  `hdg-aligned` counts that as aligned (the body start,
  see `spikes.metrics`).

The modes are the baseline and every chunker of the registry
(mdchunks.heading_index.chunkers) with the variants it declares
(`Chunker.modes`): a new chunker shows up here by itself.

Budgets count UTF-8 bytes, as cocoindex counts them. (Importing this module
first runs `spikes/__init__`, which sets COCOINDEX_DISABLE_USAGE_TRACKING.)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

from cocoindex.ops.text import RecursiveSplitter
from mdchunks.heading_index import budget_split_from, build_index
from mdchunks.heading_index.chunk import Chunker as RegisteredChunker
from mdchunks.heading_index.chunkers import CHUNKERS
from mdchunks.heading_index.options import ChunkOptions

from spikes.metrics import ROOT, Span

# The harness's recipe: budgets (UTF-8 bytes) and the chunkers' options.
Budgets = ChunkOptions

Chunker = Callable[[str, Budgets], Sequence[Span]]


@dataclass(frozen=True, slots=True)
class Mode:
    name: str
    description: str
    chunk: Chunker
    # The chunker leaves heading lines out of chunk text (the structure
    # chunker): `aligned` then also counts a chunk starting at a heading's body.
    leaves_heading_lines_out: bool = False


@cache
def _splitter() -> RecursiveSplitter:
    return RecursiveSplitter()


def _plain_split(text: str, budgets: Budgets) -> list[Span]:
    """The spike's baseline: RecursiveSplitter(language=None), no chunker of ours."""
    pieces = _splitter().split(
        text,
        chunk_size=budgets.chunk_size,
        min_chunk_size=budgets.min_chunk_size,
        chunk_overlap=budgets.chunk_overlap,
        language=None,
    )
    return [Span(piece.start.char_offset, piece.end.char_offset) for piece in pieces]


def _registered(chunker: RegisteredChunker, changes: dict[str, object]) -> Chunker:
    def chunk(text: str, budgets: Budgets) -> list[Span]:
        options = dataclasses.replace(budgets, chunker=chunker.name, **changes)  # type: ignore[arg-type]
        index = build_index(text)
        split = budget_split_from(_splitter())
        result = chunker.chunk(text, index, split, options)
        # The heading a chunk's columns name, as an index into the full index.
        position = {heading.start: i for i, heading in enumerate(index.headings)}
        return [
            Span(c.start, c.end, ROOT if c.heading_start is None else position[c.heading_start])
            for c in result.chunks
        ]

    return chunk


def _modes() -> dict[str, Mode]:
    modes = [Mode("none", "RecursiveSplitter(language=None)", _plain_split)]
    for chunker in CHUNKERS.values():
        for name, changes in chunker.modes:
            described = ", ".join(f"{k} {v}" for k, v in changes.items())
            modes.append(
                Mode(
                    name,
                    f"{chunker.description}{f' ({described})' if described else ''}",
                    _registered(chunker, changes),
                    leaves_heading_lines_out=chunker.leaves_heading_lines_out,
                )
            )
    return {mode.name: mode for mode in modes}


# The baseline and every registered chunker's harness variants.
MODES: dict[str, Mode] = _modes()

# Every mode: the structure modes cost about what the markdown split costs.
DEFAULT_MODES: tuple[str, ...] = tuple(MODES)


def get_mode(name: str) -> Mode:
    try:
        return MODES[name]
    except KeyError:
        known = ", ".join(MODES)
        raise ValueError(f"unknown mode {name!r} (known: {known})") from None
