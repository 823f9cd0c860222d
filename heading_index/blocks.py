"""Block facts the structure chunker needs from the parser: front matter, pipe tables.

Same parser (created once, reused) and same UTF-8 encoding as the heading
index, so the parser alone decides what front matter and tables are. Only
the slices that need it are parsed: the text before the first heading (front
matter) and oversized sections (tables), never the whole document twice.
"""

from __future__ import annotations

from dataclasses import dataclass

from mdchunks.heading_index.model import HeadingIndex
from mdchunks.heading_index.offsets import code_point_offsets
from mdchunks.heading_index.parse import (
    encode,
    front_matter_end_byte,
    line_end,
    line_start,
    parse,
)
from tree_sitter import Node

_FRONT_MATTER_FENCES = ("---", "+++")
# A table inside a list item or block quote carries continuation prefixes on
# every row; it is left to the budget splitter like any other nested block.
_STRUCTURAL_CONTAINERS = frozenset({"document", "section"})


@dataclass(frozen=True, slots=True)
class PipeTable:
    """A top-level pipe table, in code-point offsets of the whole document."""

    start: int  # start of the header row's line
    header_end: int  # just past the delimiter row (its line ending excluded)
    rows: tuple[tuple[int, int], ...]  # body rows, line endings excluded
    end: int  # just past the last row (its line ending excluded)


def front_matter_end(text: str, limit: int) -> int:
    """End of the YAML (`---`) or TOML (`+++`) front matter at the top, else 0.

    Only `text[:limit]` is parsed (callers pass the first heading's start: no
    front matter reaches past it).
    """
    if not text.startswith(_FRONT_MATTER_FENCES):
        return 0
    source = encode(text[:limit])
    end = front_matter_end_byte(parse(source))
    return _to_code_points(source, [end])[0] if end else 0


def content_start(text: str, index: HeadingIndex, limit: int) -> int:
    """Where the document's content starts: past its front matter and, in MDX,
    past the ESM blocks and comments at its top (with the blank lines between
    them). What lies before is no preamble (docs/heading-index.md, "MDX")."""
    start = front_matter_end(text, limit)
    for hidden_start, hidden_end in index.hidden:
        if hidden_end <= start:
            continue
        if hidden_start >= limit or text[start:hidden_start].strip():
            break
        start = hidden_end
    return start


def pipe_tables(text: str, start: int, end: int) -> list[PipeTable]:
    """Top-level pipe tables of `text[start:end]`, which must start at a line start."""
    source = encode(text[start:end])
    byte_tables = [
        table
        for node in _top_level_tables(parse(source).root_node)
        if (table := _byte_table(source, node)) is not None
    ]
    byte_offsets = sorted(
        {o for t in byte_tables for o in (t.start, t.header_end, t.end, *_flat(t.rows))}
    )
    point = dict(zip(byte_offsets, _to_code_points(source, byte_offsets), strict=True))
    return [
        PipeTable(
            start=start + point[t.start],
            header_end=start + point[t.header_end],
            rows=tuple((start + point[a], start + point[b]) for a, b in t.rows),
            end=start + point[t.end],
        )
        for t in byte_tables
    ]


def _byte_table(source: bytes, node: Node) -> PipeTable | None:
    """The table in byte offsets of `source`, or None unless it is one row a line.

    tree-sitter-markdown's error recovery can return a "table" whose header
    or delimiter lies lines away (seen with rows of empty cells): such a node
    is left to the budget splitter as plain text.
    """
    header = next((c for c in node.children if c.type == "pipe_table_header"), None)
    delimiter = next((c for c in node.children if c.type == "pipe_table_delimiter_row"), None)
    if node.has_error or header is None or delimiter is None:
        return None
    rows = [c for c in node.children if c.type == "pipe_table_row"]
    lines = [header, delimiter, *rows]
    if not _one_line_each_in_sequence(source, lines):
        return None
    return PipeTable(
        start=line_start(source, header.start_byte),
        header_end=delimiter.end_byte,
        rows=tuple((line_start(source, row.start_byte), row.end_byte) for row in rows),
        end=lines[-1].end_byte,
    )


def _one_line_each_in_sequence(source: bytes, nodes: list[Node]) -> bool:
    previous_end: int | None = None
    for node in nodes:
        if any(brk in source[node.start_byte : node.end_byte] for brk in (b"\n", b"\r")):
            return False
        if previous_end is not None and line_start(source, node.start_byte) != line_end(
            source, previous_end
        ):
            return False
        previous_end = node.end_byte
    return True


def _flat(spans: tuple[tuple[int, int], ...]) -> list[int]:
    return [offset for span in spans for offset in span]


def _top_level_tables(root: Node) -> list[Node]:
    found: list[Node] = []
    pending = [root]
    while pending:
        node = pending.pop()
        if node.type == "pipe_table":
            found.append(node)
        elif node.type in _STRUCTURAL_CONTAINERS:
            pending.extend(reversed(node.children))
    return found


def _to_code_points(source: bytes, byte_offsets: list[int]) -> list[int]:
    if source.isascii():
        return byte_offsets
    return code_point_offsets(source, byte_offsets)
