"""Chunk spans -> heading columns and parent chunk (DESIGN section 3).

Every look-up is a bisect over sorted offsets: O((chunks + headings) log n),
never a scan of the headings per chunk.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import accumulate

from mdchunks.heading_index.model import ChunkHeadings, Heading, HeadingIndex

_PREAMBLE = ChunkHeadings(
    heading_text=None, heading_level=None, heading_path=(), parent_position=None
)


class _FirstOverlap:
    """First chunk overlapping a section, by bisect; built on first use.

    Chunk starts are non-decreasing (document order) and prefix maxima of the
    ends are too, so "the first chunk ending after x" is a bisect even if a
    splitter with overlap emits a chunk ending before its predecessor.
    """

    def __init__(self, spans: Sequence[tuple[int, int]]) -> None:
        self._starts = [start for start, _ in spans]
        self._reach = list(accumulate((end for _, end in spans), max))
        self._found: dict[int, int | None] = {}  # section start -> chunk position

    def of(self, section: Heading) -> int | None:
        if section.start not in self._found:
            first = bisect_right(self._reach, section.start)  # first chunk with end > start
            starting_inside = bisect_left(self._starts, section.section_end)
            self._found[section.start] = first if first < starting_inside else None
        return self._found[section.start]


def assign(index: HeadingIndex, spans: Sequence[tuple[int, int]]) -> list[ChunkHeadings]:
    """Heading columns for chunks given as `(start, end)` code-point spans.

    `spans` must be in document order (starts non-decreasing), as a splitter
    emits them; position i is the i-th span. Never raises on odd spans.

    - governing heading: the last heading with `start <= chunk.start`, where
      a chunk whose text before its first heading is only front matter and
      blank lines counts as starting at that heading (`Heading.lead_in`);
      none (the preamble) gives NULL columns and an empty path;
    - parent: the first chunk overlapping the section of the governing
      heading's nearest ancestor. It is NULL when the heading has no ancestor,
      or when that first chunk is the chunk itself (or a later one: only
      possible if the spans leave text uncovered), since a chunk is never its
      own parent.
    """
    headings = index.headings
    if not headings:
        return [_PREAMBLE] * len(spans)
    heading_starts = [heading.start for heading in headings]
    lead_starts = [heading.start - heading.lead_in for heading in headings]
    overlaps: _FirstOverlap | None = None
    # Equal columns are one shared (immutable) value: cheaper than rebuilding.
    shared: dict[tuple[int, int | None], ChunkHeadings] = {}
    result: list[ChunkHeadings] = []
    append = result.append  # a hot loop: one chunk of a small page costs ~1.5 us
    last = len(headings) - 1
    for position, (start, end) in enumerate(spans):
        governing = bisect_right(heading_starts, start) - 1
        following = governing + 1  # the first heading after the chunk's start
        if (
            following <= last
            and lead_starts[following] <= start
            and heading_starts[following] < end
        ):
            governing = following  # the chunk holds it, after only front matter and blank lines
        if governing < 0:
            append(_PREAMBLE)
            continue
        heading = headings[governing]
        parent_position = None
        if heading.parent is not None:
            if overlaps is None:
                overlaps = _FirstOverlap(spans)
            candidate = overlaps.of(headings[heading.parent])
            if candidate is not None and candidate < position:
                parent_position = candidate
        key = (governing, parent_position)
        columns = shared.get(key)
        if columns is None:
            # Positional: the field order is heading_text, heading_level,
            # heading_path, parent_position.
            columns = shared[key] = ChunkHeadings(
                heading.text, heading.level, heading.path, parent_position
            )
        append(columns)
    return result
