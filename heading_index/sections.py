"""Sections: the heading index as spans a chunk can name (docs/sections.md).

A section is a heading's span in three nested parts: its heading line(s)
`[start, heading_end)`, its own body `[heading_end, body_end)` up to the next
heading of any level, and its whole section `[start, end)` up to
`section_end` (the next heading of its level or shallower). A document's
content before its first heading, front matter left out, is one more section
when it holds anything but whitespace: the preamble, with an empty path.

The own spans `[own_start, body_end)` tile the document after the front
matter, so each chunk holds the sections whose own span meets a character of
the chunk that is not whitespace (`sections_held`), in document order; and
whatever of a section's own span no chunk covers (whitespace the splitter
trimmed, heading lines the structure chunker leaves out) is kept as the
section's `gaps`, so its text can be rebuilt exactly from stored rows alone.

Plain data over code-point offsets; ordinals are positions in the document's
section list (the preamble, when there is one, is 0).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import replace

from mdchunks.heading_index.blocks import content_start as content_start_of
from mdchunks.heading_index.breadcrumb import DEFAULT_BREADCRUMB_BUDGET, render
from mdchunks.heading_index.chunk import Chunking, LineNumbers
from mdchunks.heading_index.model import HeadingIndex, Section
from mdchunks.heading_index.searchable import unsearched_spans, within


def document_sections(
    text: str,
    index: HeadingIndex,
    *,
    breadcrumb_budget: int = DEFAULT_BREADCRUMB_BUDGET,
    lines: LineNumbers | None = None,
) -> tuple[Section, ...]:
    """Every section of `text` (its `build_index`), in document order."""
    lines = lines if lines is not None else LineNumbers(text)
    headings = index.headings
    first_heading = headings[0].start if headings else len(text)
    found: list[Section] = []
    content_start = content_start_of(text, index, first_heading)
    if text[content_start:first_heading].strip():
        last = lines.of(max(content_start, first_heading - 1))
        found.append(
            Section(
                ordinal=0,
                heading_text=None,
                heading_level=None,
                heading_path=(),
                # The preamble is named by the document's title, if it has one.
                breadcrumb=render((), breadcrumb_budget, title=index.title)[0] or None,
                start=content_start,
                heading_end=content_start,
                body_end=first_heading,
                end=first_heading,
                start_line=lines.of(content_start),
                heading_end_line=lines.of(content_start),
                body_end_line=last,
                end_line=last,
                parent=None,
                title=index.title,
            )
        )
    offset = len(found)
    for number, heading in enumerate(headings):
        body_end = headings[number + 1].start if number + 1 < len(headings) else len(text)
        heading_end_line = lines.of(max(heading.start, heading.end - 1))
        found.append(
            Section(
                ordinal=number + offset,
                heading_text=heading.text,
                heading_level=heading.level,
                heading_path=heading.path,
                breadcrumb=render(heading.path, breadcrumb_budget, title=index.title)[0] or None,
                start=heading.start,
                heading_end=heading.end,
                body_end=body_end,
                end=heading.section_end,
                start_line=lines.of(heading.start),
                heading_end_line=heading_end_line,
                body_end_line=max(heading_end_line, lines.of(max(heading.start, body_end - 1))),
                end_line=lines.of(max(heading.start, heading.section_end - 1)),
                parent=None if heading.parent is None else heading.parent + offset,
                title=index.title,
            )
        )
    return tuple(found)


def sections_held(
    text: str, sections: Sequence[Section], starts: Sequence[int], start: int, end: int
) -> tuple[int, ...]:
    """Ordinals of the sections whose own span meets a character of
    `text[start:end]` that is not whitespace. `starts` is `[s.start for s in
    sections]` (computed once per document)."""
    held: list[int] = []
    at = max(bisect_right(starts, start) - 1, 0)
    while at < len(sections) and sections[at].start < end:
        section = sections[at]
        low, high = max(start, section.start), min(end, section.body_end)
        if low < high and not text[low:high].isspace():
            held.append(section.ordinal)
        at += 1
    return tuple(held)


def with_gaps(
    text: str, sections: Sequence[Section], spans: Sequence[tuple[int, int]]
) -> tuple[Section, ...]:
    """`sections` with their `gaps`: the parts of each own span that none of
    the chunk spans (in document order, starts non-decreasing) covers."""
    uncovered: list[tuple[int, int]] = []
    reached = 0
    for start, end in spans:
        if start > reached:
            uncovered.append((reached, start))
        reached = max(reached, end)
    if reached < len(text):
        uncovered.append((reached, len(text)))
    filled: list[Section] = []
    at = 0
    for section in sections:
        while at < len(uncovered) and uncovered[at][1] <= section.start:
            at += 1
        gaps: list[tuple[int, str]] = []
        scan = at
        while scan < len(uncovered) and uncovered[scan][0] < section.body_end:
            low = max(uncovered[scan][0], section.start)
            high = min(uncovered[scan][1], section.body_end)
            if low < high:
                gaps.append((low, text[low:high]))
            scan += 1
        filled.append(replace(section, gaps=tuple(gaps)) if gaps else section)
    return tuple(filled)


def rebuild(
    start: int,
    end: int,
    pieces: Sequence[tuple[int, str]],
) -> str:
    """`document[start:end]` from stored pieces `(offset, text)`: chunk texts
    and section gaps, in any order, together covering the span (overlaps are
    taken once). Raises ValueError where the pieces leave a hole."""
    parts: list[str] = []
    reached = start
    for offset, piece in sorted(pieces, key=lambda p: (p[0], -len(p[1]))):
        piece_end = offset + len(piece)
        if piece_end <= reached or offset >= end:
            continue
        if offset > reached:
            raise ValueError(f"no stored text for offsets {reached}-{offset}")
        parts.append(piece[reached - offset : min(piece_end, end) - offset])
        reached = min(piece_end, end)
        if reached >= end:
            break
    if reached < end:
        raise ValueError(f"no stored text for offsets {reached}-{end}")
    return "".join(parts)


def attach_sections(
    text: str,
    index: HeadingIndex,
    chunking: Chunking,
    *,
    breadcrumb_budget: int = DEFAULT_BREADCRUMB_BUDGET,
) -> Chunking:
    """`chunking` with the document's sections (their gaps filled) and each
    chunk's `sections`: the ordinals it holds; and what the document says of
    every chunk: its `title` and its `unsearched` spans
    (heading_index/searchable.py). Either chunker's answer."""
    sections = document_sections(text, index, breadcrumb_budget=breadcrumb_budget)
    hidden = unsearched_spans(text, index)
    if not sections and not hidden and index.title is None:
        return chunking
    starts = [section.start for section in sections]
    hidden_starts = [start for start, _ in hidden]
    chunks = tuple(
        replace(
            chunk,
            sections=sections_held(text, sections, starts, chunk.start, chunk.end),
            title=index.title,
            unsearched=within(hidden, hidden_starts, chunk.start, chunk.end) if hidden else (),
        )
        for chunk in chunking.chunks
    )
    if not sections:
        return replace(chunking, chunks=chunks, title=index.title)
    spans = [(chunk.start, chunk.end) for chunk in chunks]
    return replace(
        chunking, chunks=chunks, sections=with_gaps(text, sections, spans), title=index.title
    )
