"""`split_markdown`: markdown text -> `HeadingChunk`s, as a cocoindex function.

The plugin face's chunker (docs/plugin.md), and the one the `mdchunks`
command runs. A plain function over text returning chunks, like
`cocoindex.ops.text`'s splitters, decorated with `@coco.fn` so that its logic
is part of any memoized function that calls it: `deps` carries the heading
index's and the chunkers' versions, so when a new mdchunks changes what they
produce, a host's memoized per-file function re-runs (cocoindex propagates
logic fingerprints through `@coco.fn` calls; code outside them is invisible
to its memo). Not memoized itself: chunking is cheap next to what the
caller's memo saves.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache

import cocoindex as coco
from cocoindex.ops.text import RecursiveSplitter
from mdchunks.heading_index import HEADING_INDEX_VERSION, Dialect, build_index
from mdchunks.heading_index.chunk import Chunking, HeadingChunk
from mdchunks.heading_index.chunkers import CHUNKERS, chunker_versions, get_chunker
from mdchunks.heading_index.options import ChunkOptions
from mdchunks.heading_index.oversized import BudgetSplit
from mdchunks.heading_index.sections import attach_sections
from mdchunks.heading_index.structure import budget_split_from
from mdchunks.plugin.rows import ROWS_VERSION
from mdchunks.plugin.splitting import GuardedSplitter
from mdchunks.plugin.titles import document_title

_DEFAULT = ChunkOptions()

# What a host's memo sees of our logic besides this module's code: the heading
# index's and the chunkers' versions, the rows' (a new column to fill), and the
# default options (a default argument is no part of a memo key, so new
# defaults must show here).
LOGIC_VERSIONS = {
    "heading_index": HEADING_INDEX_VERSION,
    "chunkers": chunker_versions(),
    "rows": ROWS_VERSION,
    "defaults": _DEFAULT,
}


@cache
def _budget_split(language: str | None) -> BudgetSplit:
    # Guarded: a markdown text nested deep enough to abort the splitter is
    # split as plain text instead (flow/plugin/splitting.py).
    return budget_split_from(GuardedSplitter(RecursiveSplitter()), language)


@coco.fn(logic_tracking="self", deps=LOGIC_VERSIONS)
def chunk_markdown(
    text: str,
    options: ChunkOptions = _DEFAULT,
    *,
    language: str | None = "markdown",
    dialect: Dialect = "commonmark",
) -> Chunking:
    """`split_markdown` with the document's counts (merges, truncated breadcrumbs).

    `language` is the budget splitter's: `"markdown"` (the default) or None,
    to split blind to markdown syntax. `dialect` is the heading index's:
    `"mdx"` for MDX (`mdchunks.heading_index.dialect_for(path)` tells by the
    file's name). Heading columns come from the heading
    index unless `options.headings` is off; the structure chunker needs them
    (without, the budget splitter chunks alone). With `options.titles` (the
    default) the front matter's title roots every breadcrumb.
    """
    # The index before the split: each parse peaks at about 50 bytes of memory
    # per byte of markdown and frees it all when done, but the splitter's freed
    # memory is not reused by the parse after it (the peaks would add up:
    # 5.0 GB instead of 2.8 GB for a 50 MB document; benchmarks stage 6).
    index = build_index(text, dialect) if options.headings else None
    if index is not None and options.titles:
        # The page title roots the breadcrumbs (docs/heading-index.md, "The page title").
        index = replace(index, title=document_title(text))
    chunker = get_chunker(options.chunker)
    chunking = chunker.chunk(text, index, _budget_split(language), options)
    if index is None:
        return chunking
    # Every chunk names the sections it holds, whichever chunker cut it.
    return attach_sections(text, index, chunking, breadcrumb_budget=options.breadcrumb_budget)


@coco.fn(deps=LOGIC_VERSIONS)  # full tracking: chunk_markdown's code counts too
def split_markdown(
    text: str, options: ChunkOptions = _DEFAULT, *, dialect: Dialect = "commonmark"
) -> list[HeadingChunk]:
    """The chunks of one markdown document, in document order, each with its
    heading columns, breadcrumb, embed text, lines and parent's position.

    `text` is the document as a `str` (offsets count code points of it; decode
    files with `mdchunks.heading_index.decode_document` for the same text the
    `mdchunks` command stores; `mdchunks.document_text` also refuses NUL).
    Import it at the top of your module (`from mdchunks import split_markdown`):
    cocoindex knows a function's logic once its module is imported, and a memo
    checked before that import re-runs. `dialect="mdx"` reads an MDX page's
    blocks as MDX does (JSX components, ESM, expressions; docs/heading-index.md).
    """
    return list(chunk_markdown(text, options, dialect=dialect).chunks)


__all__ = [
    "CHUNKERS",
    "ChunkOptions",
    "Chunking",
    "HeadingChunk",
    "chunk_markdown",
    "split_markdown",
]
