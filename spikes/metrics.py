"""Heading-truthfulness metrics of DESIGN section 7: pure functions, no I/O.

Every metric takes a document's `HeadingIndex` and its chunks' code-point
spans `[start, end)` and returns a `Ratio` (hits over a total), so that
per-corpus totals are plain sums of numerators over sums of denominators:

- `aligned`: headings that start a chunk / headings (the spike's
  "heading-aligned chunk starts"): some chunk starts at the heading's
  `start`. For a chunker that leaves heading lines out of chunk text (the
  structure-first chunker, `leaves_heading_lines_out=True`, given the
  document text) a chunk at the heading's **body start** counts too: the
  start of the first line after the heading's own line(s) (`h.end`) that is
  not blank (whitespace only), if that line comes before the next heading of
  any level; that chunker starts a section's chunk exactly there. For no
  other chunker: a budget splitter's chunk starting at a body start has left
  the heading line at the end of the previous chunk, the very failure the
  metric exists to catch. A heading followed by nothing but blank lines up to
  the next heading has no body start: only a chunk at its own start aligns it.
- `pure`: chunks with no heading start strictly inside them
  (`start < h.start < end`) / chunks.
- `truthful`: characters of each chunk inside `[g.start, next heading start
  of any level)` of the heading `g` its breadcrumb names / chunk characters.
  A chunk that names the document root (an empty path: the preamble) counts
  its characters inside `[0, first heading start)`, which is the whole
  document when there are no headings.
- `truthful_nested`: the same with `[g.start, g.section_end)`; a chunk
  naming the document root counts all its characters.

**The named heading** `g`: a chunker that decides what each chunk's
breadcrumb names (the structure-first chunker: a merged chunk names its first
section or, with the common-ancestor rule, an ancestor) gives it in
`Span.named`, as an index into the document's full `HeadingIndex` (`ROOT`, -1,
for the document root). Otherwise (`named` is None: the budget splitter) it is
the governing heading of DESIGN section 3, which is exactly what
`heading_index.assign` stores: the last heading with `g.start <= chunk.start`,
where a chunk whose text before its first heading is only front matter and
blank lines (`Heading.lead_in`) counts as starting at that heading. Either
way the metrics score what the stored breadcrumb claims, and characters count
where they overlap the claimed span (a chunk may start after `g.start` or,
for an ancestor, even before a deeper heading: only the overlap counts).

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
- `leaves_heading_lines_out=True` needs the document text (ValueError
  without it).

Mapping chunks to headings is a bisect over the sorted heading starts, never
a scan of all headings per chunk.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from mdchunks.heading_index import Heading, HeadingIndex

ROOT = -1  # `Span.named` of a chunk whose breadcrumb names the document root


@dataclass(frozen=True, slots=True)
class Span:
    """A chunk's code-point span `[start, end)` in its document, and optionally
    the heading its breadcrumb names (an index into the document's full
    `HeadingIndex`, `ROOT` for the document root; None: the governing heading,
    derived from `start`)."""

    start: int
    end: int
    named: int | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.start <= self.end:
            raise ValueError(f"invalid span [{self.start}, {self.end})")
        if self.named is not None and self.named < ROOT:
            raise ValueError(f"invalid named heading {self.named}")

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
        if span.named is not None and span.named >= len(index.headings):
            raise ValueError(
                f"span [{span.start}, {span.end}) names heading {span.named}, "
                f"but the document has {len(index.headings)}"
            )


class _Named:
    """Which heading each chunk names: `Span.named`, or the governing heading."""

    def __init__(self, index: HeadingIndex) -> None:
        self.starts = _starts(index)
        self._lead_starts = [heading.start - heading.lead_in for heading in index.headings]

    def of(self, span: Span) -> int:
        """Index of the heading the chunk names, or -1 (the document root).

        Given (`span.named`), or else the governing heading: the last heading
        with start <= span.start, or the first heading inside the chunk if only
        front matter and blank lines precede it there; -1 for a chunk before
        the first heading (preamble).
        """
        if span.named is not None:
            return span.named
        found = bisect_right(self.starts, span.start) - 1
        following = found + 1
        if (
            following < len(self.starts)
            and self._lead_starts[following] <= span.start
            and self.starts[following] < span.end
        ):
            return following
        return found


def _overlap(span: Span, low: int, high: int) -> int:
    return max(0, min(span.end, high) - max(span.start, low))


def governing(index: HeadingIndex, spans: Sequence[Span]) -> list[Heading | None]:
    """Each chunk's named heading, or None for the document root.

    For a span without `named`: the governing heading, the same rule as
    `heading_index.assign` (DESIGN section 3), so the breadcrumb the flow
    stores for the chunk is this heading's path.
    """
    _check(index, spans)
    named = _Named(index)
    return [index.headings[g] if g >= 0 else None for g in map(named.of, spans)]


def body_starts(text: str, index: HeadingIndex) -> list[int | None]:
    """Per heading: its body start, or None when it has none (see the module doc).

    The start of the first line in `[h.end, next heading start)` holding
    something other than whitespace (its indentation included).
    """
    if len(text) != index.length:
        raise ValueError(f"text of {len(text)} code points for an index of {index.length}")
    starts = _starts(index)
    found: list[int | None] = []
    for i, heading in enumerate(index.headings):
        limit = starts[i + 1] if i + 1 < len(starts) else len(text)
        found.append(_first_content_line(text, heading.end, limit))
    return found


def _first_content_line(text: str, start: int, limit: int) -> int | None:
    position = start
    while position < limit:
        newline = text.find("\n", position, limit)
        line_end = limit if newline < 0 else newline + 1
        if text[position:line_end].strip():
            return position
        position = line_end
    return None


def aligned(
    index: HeadingIndex,
    spans: Sequence[Span],
    text: str | None = None,
    *,
    leaves_heading_lines_out: bool = False,
) -> Ratio:
    """Headings that start a chunk, over headings: a chunk starts at the
    heading or, for a chunker that leaves heading lines out of its chunks
    (`leaves_heading_lines_out=True`, `text` given), at its body start."""
    _check(index, spans)
    chunk_starts = {span.start for span in spans}
    if not leaves_heading_lines_out:
        bodies: list[int | None] = [None] * len(index.headings)
    elif text is None:
        raise ValueError("body starts need the document text")
    else:
        bodies = body_starts(text, index)
    hits = sum(
        1
        for heading, body in zip(index.headings, bodies, strict=True)
        if heading.start in chunk_starts or (body is not None and body in chunk_starts)
    )
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
    """Chunk characters inside their named heading's own text span.

    The span of heading i is `[start_i, start_{i+1})` (the next heading of any
    level, else the document end); the document root's is `[0, start_0)`.
    """
    _check(index, spans)
    named = _Named(index)
    starts = named.starts
    hits = 0
    for span in spans:
        g = named.of(span)
        low = starts[g] if g >= 0 else 0
        high = starts[g + 1] if g + 1 < len(starts) else index.length
        hits += _overlap(span, low, high)
    return Ratio(hits, sum(span.length for span in spans))


def truthful_nested(index: HeadingIndex, spans: Sequence[Span]) -> Ratio:
    """Chunk characters inside their named heading's whole section.

    The section of heading g is `[g.start, g.section_end)`, subsections
    included; a chunk naming the document root counts whole.
    """
    _check(index, spans)
    named = _Named(index)
    hits = 0
    for span in spans:
        g = named.of(span)
        if g < 0:
            hits += span.length
            continue
        heading = index.headings[g]
        hits += _overlap(span, heading.start, heading.section_end)
    return Ratio(hits, sum(span.length for span in spans))


def score(
    index: HeadingIndex,
    spans: Sequence[Span],
    text: str | None = None,
    *,
    leaves_heading_lines_out: bool = False,
) -> Scores:
    """Every metric of one document split into `spans` (`text` and
    `leaves_heading_lines_out`: for `aligned`)."""
    return Scores(
        chars=index.length,
        headings=len(index.headings),
        chunks=len(spans),
        aligned=aligned(index, spans, text, leaves_heading_lines_out=leaves_heading_lines_out),
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
