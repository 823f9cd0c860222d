"""Markdown text -> headings -> per-chunk heading columns.

A pure library: it imports tree-sitter and tree-sitter-markdown only (no
cocoindex, no database driver), so any cocoindex app can use it:

    from mdchunks.heading_index import build_index, assign, decode_document

    text = decode_document(path.read_bytes())   # UTF-8, one leading BOM removed
    index = build_index(text)                   # never raises, for any str
    columns = assign(index, [(c.start, c.end) for c in chunks])

Choices beyond docs/heading-index.md and docs/assign.md:
- `Heading.end` is just past the heading's last line *including* its line
  ending, so `text[h.start:h.end]` is the heading's lines and the body starts
  at `h.end`; `start` is the start of the first line (indentation included).
- Front matter (`---` YAML, `+++` TOML, first line of the document) and GFM
  pipe tables are what tree-sitter-markdown makes of them: a line right after a
  pipe table is a table row, as on GitHub, not a setext heading.
- Heading text collapses every Unicode whitespace run (`str.split()`) to one
  space; NUL becomes U+FFFD. `[text][label]` is a link only if the document
  defines `label` anywhere. Attribute blocks: `{#id}`, `{.class}`,
  `{#id .class key=value}`, `{: #id }`, `{-}`, after whitespace, at the end of
  the heading (before or after an ATX closing sequence).
- `assign`: spans in document order (starts non-decreasing). If the first
  chunk overlapping the ancestor's section is the chunk itself (only when the
  spans leave text uncovered, as a chunker that drops heading lines does),
  `parent_position` is None: a chunk is never its own parent.
- Front matter and blank lines before a chunk's first heading
  (docs/assign.md): "blank" is spaces, tabs and line endings; a heading's
  `lead_in` runs back from its start over such text, and only the first
  heading's reaches over the front matter (to offset 0 when only blank lines
  separate the two). A chunk starting inside a heading's lead-in and reaching
  past its start is governed by it; one that ends before (only front matter
  or blank lines) keeps the columns of what precedes it.
"""

from mdchunks.heading_index.assign import assign
from mdchunks.heading_index.breadcrumb import DEFAULT_BREADCRUMB_BUDGET, embed_text
from mdchunks.heading_index.breadcrumb import render as render_breadcrumb
from mdchunks.heading_index.chunk import Chunker, Chunking, HeadingChunk
from mdchunks.heading_index.chunkers import CHUNKERS, get_chunker
from mdchunks.heading_index.decode import DocumentDecodeError, decode_document
from mdchunks.heading_index.index import build_index
from mdchunks.heading_index.mdx import DIALECTS, Dialect, dialect_for
from mdchunks.heading_index.model import ChunkHeadings, Heading, HeadingIndex
from mdchunks.heading_index.options import ChunkOptions
from mdchunks.heading_index.structure import (
    STRUCTURE_CHUNKER_VERSION,
    BudgetSplit,
    StructureChunk,
    StructureOptions,
    StructureResult,
    budget_split_from,
    splitting_index,
    structure_chunks,
)

# Part of every recipe fingerprint: bump it whenever a change here can change
# any heading column, so the flow re-processes every document (a backfill).
HEADING_INDEX_VERSION = "4"

__all__ = [
    "CHUNKERS",
    "DEFAULT_BREADCRUMB_BUDGET",
    "DIALECTS",
    "HEADING_INDEX_VERSION",
    "STRUCTURE_CHUNKER_VERSION",
    "BudgetSplit",
    "ChunkHeadings",
    "ChunkOptions",
    "Chunker",
    "Chunking",
    "Dialect",
    "DocumentDecodeError",
    "Heading",
    "HeadingChunk",
    "HeadingIndex",
    "StructureChunk",
    "StructureOptions",
    "StructureResult",
    "assign",
    "budget_split_from",
    "build_index",
    "decode_document",
    "dialect_for",
    "embed_text",
    "get_chunker",
    "render_breadcrumb",
    "splitting_index",
    "structure_chunks",
]
