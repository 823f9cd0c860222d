"""Heading-truthfulness metrics of DESIGN section 7: pure functions, no I/O.

Every metric takes a document's `HeadingIndex` and its chunks' code-point
spans `[start, end)` and returns a `Ratio` (hits over a total), so that
per-corpus totals are plain sums of numerators over sums of denominators:

- `aligned`: headings whose `start` equals some chunk's start / headings.
- `pure`: chunks with no heading start strictly inside them
  (`start < h.start < end`) / chunks.
- `truthful`: characters of each chunk inside `[g.start, next heading start
  of any level)` of its governing heading `g` (the last heading with
  `g.start <= chunk.start`) / chunk characters. A chunk with no governing
  heading (the preamble) counts its characters inside `[0, first heading
  start)`, which is the whole document when there are no headings.
- `truthful_nested`: the same with `[g.start, g.section_end)`; a chunk with
  no governing heading names the document root, so all its characters count.

Edge cases, chosen explicitly:
- No headings: `aligned` is 0/0 (undefined: `Ratio.value` is None, shown as
  n/a); every chunk is pure, truthful and truthful-nested (it claims the
  document root and lies in it).
- Zero chunks (empty or whitespace-only document): `pure`, `truthful` and
  `truthful_nested` are 0/0 (undefined); `aligned` is 0/headings.
- A zero-length span adds a chunk (pure, since nothing is strictly inside it)
  and no characters.
- Overlapping chunks are counted as they are: characters of an overlap count
  once per chunk that holds them (the weights are the chunks' own lengths).

Mapping chunks to headings is a bisect over the sorted heading starts, never
a scan of all headings per chunk.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from heading_index import Heading, HeadingIndex


@dataclass(frozen=True, slots=True)
class Span:
    """A chunk's code-point span `[start, end)` in its document."""

    start: int
    end: int

    def __post_init__(self) -> None:
        if not 0 <= self.start <= self.end:
            raise ValueError(f"invalid span [{self.start}, {self.end})")

    @property
    def length(self) -> int:
        return self.end - self.start


@dataclass(frozen=True, slots=True)
class Ratio:
    """`hits` out of `total`; undefined (None) when `total` is 0."""

    hits: int
    total: int

    @property
    def value(self) -> float | None:
        return None if self.total == 0 else self.hits / self.total

    def __add__(self, other: Ratio) -> Ratio:
        return Ratio(self.hits + other.hits, self.total + other.total)


ZERO = Ratio(0, 0)


@dataclass(frozen=True, slots=True)
class Scores:
    """All metrics of one document (or, summed, of one corpus) for one chunker."""

    chars: int  # characters of the document(s), not of the chunks
    headings: int
    chunks: int
    aligned: Ratio  # over headings
    pure: Ratio  # over chunks
    truthful: Ratio  # over chunk characters
    truthful_nested: Ratio  # over chunk characters

    def __add__(self, other: Scores) -> Scores:
        return Scores(
            chars=self.chars + other.chars,
            headings=self.headings + other.headings,
            chunks=self.chunks + other.chunks,
            aligned=self.aligned + other.aligned,
            pure=self.pure + other.pure,
            truthful=self.truthful + other.truthful,
            truthful_nested=self.truthful_nested + other.truthful_nested,
        )


EMPTY_SCORES = Scores(0, 0, 0, ZERO, ZERO, ZERO, ZERO)


def _starts(index: HeadingIndex) -> list[int]:
    starts = [heading.start for heading in index.headings]
    if any(a >= b for a, b in pairwise(starts)):
        raise ValueError("headings must be in document order with distinct starts")
    return starts


def _check(index: HeadingIndex, spans: Sequence[Span]) -> None:
    for span in spans:
        if span.end > index.length:
            raise ValueError(
                f"span [{span.start}, {span.end}) ends past the document ({index.length})"
            )


def _governing(starts: Sequence[int], span: Span) -> int:
    """Index of the last heading with start <= span.start, or -1 (preamble)."""
    return bisect_right(starts, span.start) - 1


def governing(index: HeadingIndex, spans: Sequence[Span]) -> list[Heading | None]:
    """Each chunk's governing heading (the last with start <= chunk.start), or None.

    The same rule as `heading_index.assign` (DESIGN section 3): the breadcrumb
    the flow stores for the chunk is this heading's path.
    """
    _check(index, spans)
    starts = _starts(index)
    found = (_governing(starts, span) for span in spans)
    return [index.headings[g] if g >= 0 else None for g in found]


def aligned(index: HeadingIndex, spans: Sequence[Span]) -> Ratio:
    """Headings whose start equals some chunk's start, over headings."""
    _check(index, spans)
    chunk_starts = {span.start for span in spans}
    hits = sum(1 for heading in index.headings if heading.start in chunk_starts)
    return Ratio(hits, len(index.headings))


def pure(index: HeadingIndex, spans: Sequence[Span]) -> Ratio:
    """Chunks with no heading start strictly inside them, over chunks."""
    _check(index, spans)
    starts = _starts(index)
    hits = sum(
        1 for span in spans if bisect_left(starts, span.end) <= bisect_right(starts, span.start)
    )
    return Ratio(hits, len(spans))


def truthful(index: HeadingIndex, spans: Sequence[Span]) -> Ratio:
    """Chunk characters inside their governing heading's own text span.

    The span of heading i is `[start_i, start_{i+1})` (the next heading of any
    level, else the document end); the preamble's is `[0, start_0)`.
    """
    _check(index, spans)
    starts = _starts(index)
    hits = 0
    for span in spans:
        g = _governing(starts, span)
        section_end = starts[g + 1] if g + 1 < len(starts) else index.length
        hits += max(0, min(span.end, section_end) - span.start)
    return Ratio(hits, sum(span.length for span in spans))


def truthful_nested(index: HeadingIndex, spans: Sequence[Span]) -> Ratio:
    """Chunk characters inside their governing heading's whole section.

    The section of heading g is `[g.start, g.section_end)`, subsections
    included; a preamble chunk names the document root and counts whole.
    """
    _check(index, spans)
    starts = _starts(index)
    hits = 0
    for span in spans:
        g = _governing(starts, span)
        section_end = index.headings[g].section_end if g >= 0 else index.length
        hits += max(0, min(span.end, section_end) - span.start)
    return Ratio(hits, sum(span.length for span in spans))


def score(index: HeadingIndex, spans: Sequence[Span]) -> Scores:
    """Every metric of one document split into `spans`."""
    return Scores(
        chars=index.length,
        headings=len(index.headings),
        chunks=len(spans),
        aligned=aligned(index, spans),
        pure=pure(index, spans),
        truthful=truthful(index, spans),
        truthful_nested=truthful_nested(index, spans),
    )


def total(scores: Iterable[Scores]) -> Scores:
    """Corpus totals: summed counts and character-weighted (summed) fractions."""
    result = EMPTY_SCORES
    for item in scores:
        result += item
    return result
