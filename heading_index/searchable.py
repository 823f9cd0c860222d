"""Which spans of a document, and of each chunk, are text to search.

The one place that says it (docs/search.md, "What is searched"): front
matter at the top of the document (YAML `---` or TOML `+++`, to its closing
fence) and, in MDX, what the heading index hides (ESM blocks and
`{/* comments */}`: `HeadingIndex.hidden`) are no words for BM25 and never
open a snippet. They stay in the stored text: offsets never move. A chunk
carries its unsearched spans as offsets into its own text
(`HeadingChunk.unsearched`, the `unsearched` column); the database reads
them as spaces before it analyses the text (the chunk table's trigger,
migration 0017, and the snippet: flow/retrieval/snippets.py), as
`searchable_text` does here. Anything that analyses a chunk's words builds
on these spans.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence

from mdchunks.heading_index.model import HeadingIndex

# An opening fence on the first line (remark-frontmatter's rule, which the
# MDX scan follows too: heading_index/mdx.py reads front matter here).
_OPENING = re.compile(r"(---|\+\+\+)[ \t]*(?:\r\n|\r|\n)")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")


def front_matter(text: str) -> tuple[int, int, int] | None:
    """`(body_start, body_end, end)` of the front matter at the top of `text`:
    its content lies in `text[body_start:body_end]`, the block (fences
    included) in `text[:end]`. None without, or when it is never closed
    (decoded documents have no BOM: one before the fence is text)."""
    opened = _OPENING.match(text)
    if opened is None:
        return None
    fence = opened.group(1)
    closers = (fence, "...") if fence == "---" else (fence,)
    position = opened.end()
    while position < len(text):
        line = _LINE.match(text, position)
        assert line is not None  # matches the empty string at worst
        if line.group().rstrip("\r\n").rstrip(" \t") in closers:
            return opened.end(), position, line.end()
        if line.end() == position:
            break
        position = line.end()
    return None


def unsearched_spans(text: str, index: HeadingIndex | None) -> tuple[tuple[int, int], ...]:
    """The document's spans that are no text to search, in order, not overlapping."""
    spans: list[tuple[int, int]] = []
    found = front_matter(text)
    if found is not None:
        spans.append((0, found[2]))
    for start, end in index.hidden if index is not None else ():
        if spans and start < spans[-1][1]:
            start = spans[-1][1]
            if start >= end:
                continue
        spans.append((start, end))
    return tuple(spans)


def within(
    spans: Sequence[tuple[int, int]], starts: Sequence[int], start: int, end: int
) -> tuple[int, ...]:
    """The parts of `spans` (with `starts`, their starts) inside `[start, end)`,
    as offsets from `start`, flat start/end pairs."""
    found: list[int] = []
    at = max(bisect_right(starts, start) - 1, 0)
    while at < len(spans) and spans[at][0] < end:
        low, high = max(spans[at][0], start), min(spans[at][1], end)
        if low < high:
            found += (low - start, high - start)
        at += 1
    return tuple(found)


def searchable_text(text: str, unsearched: Sequence[int]) -> str:
    """`text` with its unsearched spans (flat pairs) as spaces, same length
    (what `mdchunks_searchable_text` makes of it in the database)."""
    if not unsearched:
        return text
    parts: list[str] = []
    reached = 0
    for at in range(0, len(unsearched), 2):
        low, high = unsearched[at], unsearched[at + 1]
        parts += (text[reached:low], " " * (high - low))
        reached = high
    parts.append(text[reached:])
    return "".join(parts)
