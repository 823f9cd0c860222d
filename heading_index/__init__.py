"""Markdown text -> headings -> per-chunk heading columns.

A pure library: it imports tree-sitter and tree-sitter-markdown only (no
cocoindex, no database driver), so any cocoindex app can use it:

    from heading_index import build_index, assign, decode_document
"""

from heading_index.model import ChunkHeadings, Heading, HeadingIndex

# Part of every recipe fingerprint: bump it whenever a change here can change
# any heading column, so the flow re-processes every document (a backfill).
HEADING_INDEX_VERSION = "1"

__all__ = [
    "HEADING_INDEX_VERSION",
    "ChunkHeadings",
    "DocumentDecodeError",
    "Heading",
    "HeadingIndex",
    "assign",
    "build_index",
    "decode_document",
]
