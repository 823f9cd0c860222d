"""`HeadingChunk`, the one chunk type every chunker returns, and the chunker protocol.

A chunker is a plain function over text returning chunks, in the spirit of
cocoindex's `ops.text`: `chunk(text, index, budget_split, options)`, where
`index` is `build_index(text)` (None: no heading columns, as for plain text or
headings off) and `budget_split` is the injected budget splitter (cocoindex's
`RecursiveSplitter` in the app; this package never imports cocoindex). The
registry of chunkers is `mdchunks.heading_index.chunkers` (docs/chunkers.md).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate, count
from operator import add
from typing import Protocol

from mdchunks.heading_index.model import HeadingIndex, Section
from mdchunks.heading_index.oversized import BudgetSplit


@dataclass(frozen=True, slots=True)
class HeadingChunk:
    """One chunk; its position is its index in the list of its document's chunks."""

    start: int  # code points: text == document[start:end]
    end: int
    start_line: int  # 1-based line of its first character
    end_line: int  # 1-based line of its last character
    text: str
    heading_text: str | None  # the three heading fields are None/() together
    heading_level: int | None
    heading_path: tuple[str, ...]
    parent_index: int | None  # position of the chunk opening the parent section
    # `Title > A > B` within the budget; None exactly when the path is empty
    # and the document has no title.
    breadcrumb: str | None
    embed_text: str  # what to embed: the breadcrumb, a blank line, the text
    heading_start: int | None = None  # where the heading the columns name starts
    # A table piece's header and delimiter rows, which embed_text puts before
    # the text (structure chunker, a table split between rows); else None.
    table_header: str | None = None
    # Ordinals of the document's sections this chunk holds (docs/sections.md):
    # each whose own span meets a character of the text that is not
    # whitespace, in document order; () without a heading index.
    sections: tuple[int, ...] = ()
    # The document's title from its front matter (HeadingIndex.title), the
    # root of `breadcrumb`; None without one, or with titles off.
    title: str | None = None
    # What of the text is no words to search (front matter, MDX's ESM and
    # comments: heading_index/searchable.py), as offsets into `text`, flat
    # start/end pairs in order; () when all of it is searchable.
    unsearched: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Chunking:
    """A chunker's answer for one document."""

    chunks: tuple[HeadingChunk, ...]
    merges: int = 0  # sections folded into an earlier section's chunk (structure chunker)
    breadcrumb_truncations: int = 0  # chunks whose breadcrumb was cut to the budget
    sections: tuple[Section, ...] = ()  # the document's, when the chunks were given them
    title: str | None = None  # the document's front-matter title (HeadingIndex.title)


class ChunkSettings(Protocol):
    """What a chunker reads of the options. `ChunkOptions` has them all; chunkers
    depend on this rather than on the options module, which asks the registry
    for the chunkers' names (so the two never import each other)."""

    @property
    def chunk_size(self) -> int: ...  # UTF-8 bytes, as every budget here

    @property
    def min_chunk_size(self) -> int: ...

    @property
    def chunk_overlap(self) -> int: ...

    @property
    def breadcrumb_budget(self) -> int: ...

    @property
    def split_levels(self) -> int: ...  # the structure chunker's

    @property
    def merged_path(self) -> str: ...  # the structure chunker's: "first" or "common"


class Chunker(Protocol):
    """One way of placing chunk boundaries (docs/chunkers.md)."""

    @property
    def name(self) -> str: ...  # what `--chunker` and the recipe call it

    @property
    def version(self) -> str | None: ...  # bump on any change that can change a chunk

    @property
    def description(self) -> str: ...

    # Whether chunk text starts after a heading's lines (the heading is in the
    # breadcrumb instead): the harness's `aligned` counts body starts for it.
    @property
    def leaves_heading_lines_out(self) -> bool: ...

    # Harness variants: (mode name, option changes) the evaluation compares.
    @property
    def modes(self) -> Sequence[tuple[str, dict[str, object]]]: ...

    def chunk(
        self,
        text: str,
        index: HeadingIndex | None,
        budget_split: BudgetSplit,
        options: ChunkSettings,
    ) -> Chunking: ...


_LINE_END = re.compile(r"\r\n?|\n")  # as the heading index ends lines (CommonMark)


class LineNumbers:
    """1-based line numbers of code-point offsets, by bisect over the line starts."""

    def __init__(self, text: str) -> None:
        if "\r" in text:
            self._starts = [0, *(found.end() for found in _LINE_END.finditer(text))]
        else:
            # The usual text, at C speed (a Python loop over the lines was a
            # tenth of a long document's chunking): a line starts after the
            # lines before it and their line endings.
            lengths = accumulate(map(len, text.split("\n")[:-1]))
            self._starts = [0, *map(add, lengths, count(1))]

    def of(self, offset: int) -> int:
        return bisect_right(self._starts, offset)

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Lines of the first and the last character of `[start, end)`."""
        return self.of(start), self.of(max(start, end - 1))
