"""MDX has no indented code: the lines CommonMark would read as such, moved.

In MDX a heading, fence, list or setext underline may be indented any
amount. tree-sitter (CommonMark) reads a line indented 4 columns or more as
top-level indented code, or as a paragraph's continuation; `unindent` moves
the indentation of such lines to their ends, over the block parse, and parses
again, until no such line is left (at most `_UNINDENT_ROUNDS` parses). The
masked text it starts from is heading_index/mdx.py's.
"""

from __future__ import annotations

from collections.abc import Callable

from mdchunks.heading_index.skeleton import Skeleton
from tree_sitter import Node, Tree

_UNINDENT_ROUNDS = 8


def unindent(
    source: bytes, parse_blocks: Callable[[bytes], tuple[Skeleton, Tree]]
) -> tuple[bytes, Skeleton, Tree]:
    """Move the indentation of lines CommonMark reads as top-level indented
    code, or as indented continuation lines of a paragraph, to their ends:
    MDX has no indented code, so such a line is a block of its own kind there.
    `parse_blocks` is the index's block parse (a skeleton and its tree).
    Rounds until no such line is left, at most `_UNINDENT_ROUNDS` parses;
    returns the final source with its parse, which the index then reads."""
    blocks, tree = parse_blocks(source)
    for _ in range(_UNINDENT_ROUNDS):
        moves: list[tuple[int, int]] = []  # (line start, bytes of indentation to move)
        _collect_moves(tree.root_node, source, blocks, moves, top_level=True)
        if not moves:
            break
        source = _apply_moves(source, moves)
        blocks, tree = parse_blocks(source)
    return source, blocks, tree


def _collect_moves(
    node: Node,
    source: bytes,
    blocks: Skeleton,
    moves: list[tuple[int, int]],
    *,
    top_level: bool,
    quoted: bool = False,
) -> None:
    for child in node.children:
        kind = child.type
        if kind == "section":
            _collect_moves(child, source, blocks, moves, top_level=top_level, quoted=quoted)
        elif kind == "indented_code_block" and top_level:
            lines = _line_starts(source, *_span(blocks, child))
            widths = [
                _indentation(source, line)
                for line in lines
                if source[line : _byte_line_end(source, line)].strip(b" \t")
            ]
            if widths:
                least = min(widths)
                moves.extend((line, min(least, _indentation(source, line))) for line in lines)
        elif kind == "paragraph":
            for line in _line_starts(source, *_span(blocks, child))[1:]:
                width = _indentation(source, line)
                column = child.start_point.column
                if quoted and source[line + width : line + width + 1] != b">":
                    column = 0  # a lazy line of a quote: MDX reads it on its own
                if _columns(source, line, width) >= column + 4:
                    moves.append((line + min(column, width), width - min(column, width)))
        elif kind in ("list", "list_item", "block_quote"):
            _collect_moves(
                child,
                source,
                blocks,
                moves,
                top_level=False,
                quoted=quoted or kind == "block_quote",
            )


def _span(blocks: Skeleton, node: Node) -> tuple[int, int]:
    """A node's bytes in the parsed document (the skeleton keeps every line start)."""
    return blocks.original(node.start_byte), blocks.original(node.end_byte)


def _apply_moves(source: bytes, moves: list[tuple[int, int]]) -> bytes:
    pieces: list[bytes] = []
    position = 0
    for start, width in sorted(set(moves)):
        if width <= 0 or start < position:
            continue
        end = _byte_line_end(source, start)
        pieces.append(source[position:start])
        pieces.append(source[start + width : end] + source[start : start + width])
        position = end
    pieces.append(source[position:])
    return b"".join(pieces)


def _line_starts(source: bytes, start: int, end: int) -> list[int]:
    starts = [source.rfind(b"\n", 0, start) + 1]
    position = starts[0]
    while True:
        position = _byte_line_end(source, position)
        if position >= len(source):
            break
        position += 2 if source.startswith(b"\r\n", position) else 1
        if position >= end:
            break
        starts.append(position)
    return starts


def _byte_line_end(source: bytes, start: int) -> int:
    newline = source.find(b"\n", start)
    end = len(source) if newline < 0 else newline
    carriage = source.find(b"\r", start, end)
    return end if carriage < 0 else carriage


def _indentation(source: bytes, line: int) -> int:
    """Bytes of spaces and tabs at the start of the line."""
    i = line
    while i < len(source) and source[i] in b" \t":
        i += 1
    return i - line


def _columns(source: bytes, line: int, width: int) -> int:
    column = 0
    for byte in source[line : line + width]:
        column = column + 4 - column % 4 if byte == 9 else column + 1
    return column
