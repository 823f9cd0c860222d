"""The recursive chunker: the budget splitter places boundaries, blind to
sections; each chunk gets the heading columns of where it starts (docs/assign.md).

The splitter is injected (`budget_split`): cocoindex's
`RecursiveSplitter(language="markdown")` in the app, `language=None` for plain
text. With no index (plain text, headings off) every chunk has NULL columns.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from mdchunks.heading_index.assign import assign
from mdchunks.heading_index.breadcrumb import embed_text, render
from mdchunks.heading_index.chunk import Chunking, ChunkSettings, HeadingChunk, LineNumbers
from mdchunks.heading_index.model import ChunkHeadings, HeadingIndex
from mdchunks.heading_index.oversized import BudgetSplit

_NO_HEADINGS = ChunkHeadings(
    heading_text=None, heading_level=None, heading_path=(), parent_position=None
)


@dataclass(frozen=True, slots=True)
class RecursiveChunker:
    name: str = "recursive"
    # None: the chunker has no version of its own; what it does is the budget
    # splitter's (cocoindex's version) and the heading index's (its version).
    version: str | None = None
    description: str = 'RecursiveSplitter(language="markdown"), headings by position'
    modes: Sequence[tuple[str, dict[str, object]]] = (("markdown", {}),)
    leaves_heading_lines_out: bool = False

    def chunk(
        self,
        text: str,
        index: HeadingIndex | None,
        budget_split: BudgetSplit,
        options: ChunkSettings,
    ) -> Chunking:
        spans = budget_split(
            text,
            chunk_size=options.chunk_size,
            min_chunk_size=options.min_chunk_size,
            chunk_overlap=options.chunk_overlap,
        )
        columns: Sequence[ChunkHeadings]
        starts: Sequence[int | None]
        if index is not None and index.headings:
            columns = assign(index, spans)
            starts = _named_starts(index, spans, columns)
        else:
            columns = [_NO_HEADINGS] * len(spans)
            starts = [None] * len(spans)
        lines = LineNumbers(text)
        # The document's title roots every breadcrumb, and is the whole one of
        # a chunk before the first heading (heading_index/breadcrumb.py).
        title = index.title if index is not None else None
        rendered: dict[tuple[str, ...], tuple[str, bool]] = {}  # chunks of a section share it
        truncations = 0
        chunks: list[HeadingChunk] = []
        for (start, end), column, heading_start in zip(spans, columns, starts, strict=True):
            breadcrumb: str | None = None
            if column.heading_path or title:
                if column.heading_path not in rendered:
                    rendered[column.heading_path] = render(
                        column.heading_path, options.breadcrumb_budget, title=title
                    )
                breadcrumb, truncated = rendered[column.heading_path]
                truncations += truncated
                breadcrumb = breadcrumb or None
            chunk_text = text[start:end]
            first_line, last_line = lines.span(start, end)
            chunks.append(
                HeadingChunk(
                    start=start,
                    end=end,
                    start_line=first_line,
                    end_line=last_line,
                    text=chunk_text,
                    heading_text=column.heading_text,
                    heading_level=column.heading_level,
                    heading_path=column.heading_path,
                    parent_index=column.parent_position,
                    breadcrumb=breadcrumb,
                    embed_text=embed_text(breadcrumb, chunk_text),
                    heading_start=heading_start,
                )
            )
        return Chunking(tuple(chunks), breadcrumb_truncations=truncations)


def _named_starts(
    index: HeadingIndex, spans: Sequence[tuple[int, int]], columns: Sequence[ChunkHeadings]
) -> list[int | None]:
    """Per chunk, the start of the heading its columns name: of the headings with
    that path, the last one starting at or before the chunk (else the first one:
    a chunk that starts in front matter is named by the heading after it)."""
    by_path: dict[tuple[str, ...], list[int]] = {}
    for heading in index.headings:
        by_path.setdefault(heading.path, []).append(heading.start)
    found: list[int | None] = []
    for (start, _), column in zip(spans, columns, strict=True):
        candidates = by_path.get(column.heading_path) if column.heading_path else None
        if not candidates:
            found.append(None)
            continue
        at = bisect_right(candidates, start) - 1
        found.append(candidates[max(at, 0)])
    return found


CHUNKER = RecursiveChunker()
