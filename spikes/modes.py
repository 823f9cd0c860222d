"""Chunkers the harness compares: a mode name -> (text, budgets) -> spans.

`none` and `markdown` are cocoindex's `RecursiveSplitter` with
`language=None` and `language="markdown"`. Another chunker (the
structure-first one of DESIGN section 10) is one more entry in `MODES`: a
function from the document text and the budgets to its chunks' code-point
spans, in document order.

Two details to settle when that chunker arrives: it starts a chunk after its
heading's last line (so `hdg-aligned`, which asks for a chunk starting at the
heading's first character, would read 0% and should compare against the body
start), and its merge option may name the deepest common ancestor rather than
the positional governing heading (the metrics would then take the heading each
chunk claims as an input, instead of deriving it from the chunk's start).

Budgets count UTF-8 bytes, as cocoindex counts them. (Importing this module
first runs `spikes/__init__`, which sets COCOINDEX_DISABLE_USAGE_TRACKING.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

from cocoindex.ops.text import RecursiveSplitter

from spikes.metrics import Span


@dataclass(frozen=True, slots=True)
class Budgets:
    """The splitter budgets of a recipe, in UTF-8 bytes (DESIGN section 5 defaults)."""

    chunk_size: int = 2000
    min_chunk_size: int = 1000
    chunk_overlap: int = 200

    def __post_init__(self) -> None:
        if self.chunk_size < 1:
            raise ValueError("chunk_size must be at least 1")
        if not 0 <= self.min_chunk_size <= self.chunk_size:
            raise ValueError("min_chunk_size must be between 0 and chunk_size")
        if not 0 <= self.chunk_overlap < self.chunk_size:
            raise ValueError("chunk_overlap must be at least 0 and below chunk_size")


Chunker = Callable[[str, Budgets], Sequence[Span]]


@dataclass(frozen=True, slots=True)
class Mode:
    name: str
    description: str
    chunk: Chunker


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


MODES: dict[str, Mode] = {
    mode.name: mode
    for mode in (
        Mode("none", "RecursiveSplitter(language=None)", _budget_split(None)),
        Mode("markdown", 'RecursiveSplitter(language="markdown")', _budget_split("markdown")),
    )
}

DEFAULT_MODES: tuple[str, ...] = ("none", "markdown")


def get_mode(name: str) -> Mode:
    try:
        return MODES[name]
    except KeyError:
        known = ", ".join(MODES)
        raise ValueError(f"unknown mode {name!r} (known: {known})") from None
