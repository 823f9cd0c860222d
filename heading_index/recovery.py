"""Headings that tree-sitter-markdown's error recovery swallows, found again.

A pipe table whose rows tree-sitter-markdown 0.5 cannot parse (rows of empty
or whitespace-only cells after a filled one, a `|||` row, rows of escaped
pipes: shapes common in documents converted from PDF or DOCX) becomes an
ERROR node, and the error recovery can run that node over the blank line
that ends the table and over the headings after it. CommonMark with tables
(GFM) ends a table at its first blank line, or at the first line that begins
another block (an ATX heading, a fence, a block quote, a list, a thematic
break, an HTML block, indented code), and nothing inside a table is a
heading.

So when the parse has a top-level error, the headings before the error's
first line are kept and the rest of the document is parsed again, on its
own, from where the broken table ends: the first line, from the error's
line on, that is blank or that, parsed alone, is a block other than a
paragraph (the parser decides what begins a block, never a regex). That
parse is guarded the same way, so each broken table costs one more parse of
what follows it (and one tiny parse per row of it).
"""

from __future__ import annotations

from dataclasses import dataclass

from mdchunks.heading_index.parse import (
    RawHeading,
    line_end,
    line_start,
    parse,
    structural_headings,
)
from tree_sitter import Node, Tree

_STRUCTURAL_CONTAINERS = frozenset({"document", "section"})
# What a table row is when read alone: a line of text. A reference definition
# alone (`[a]: b`) ends no table either (CommonMark+tables).
_ROW_LIKE = frozenset({"paragraph", "link_reference_definition"})
# Blank lines hold spaces and tabs only (CommonMark).
_BLANK = b" \t\r\n"


def recovered_headings(tree: Tree, source: bytes) -> list[RawHeading]:
    """`structural_headings(tree, source)`, with the headings that a top-level
    error node swallowed found again (module docstring)."""
    return recovered_headings_taking([tree], source)


def recovered_headings_taking(trees: list[Tree], source: bytes) -> list[RawHeading]:
    """`recovered_headings` of the one tree in `trees`, which it takes out:
    when the caller keeps no other reference, the tree is freed before the
    tail after an error is parsed, so the two parses are not held at once
    (a tree is about 45 bytes a byte of markdown; issue 42: memory per
    document)."""
    tree = trees.pop()
    found: list[RawHeading] = []
    offset = 0  # of `source` in the document
    content_start = 0  # where `source`'s own text starts (a tail's is after its "\n")
    while True:
        headings = structural_headings(tree, source)
        error = _first_error(tree.root_node)
        if error is None:
            return found + _shifted(headings, offset)
        error_line = line_start(source, error.node.start_byte)
        # Each round starts past the last one's first line: the loop ends.
        earliest = max(error_line, line_end(source, content_start))
        if error.container is None:
            restart = _table_end(source, earliest)
        else:
            restart = _container_end(source, earliest, quote=error.container == "block_quote")
        found += _shifted([h for h in headings if h.start < error_line], offset)
        if restart >= len(source):
            return found
        # A leading line ending: the tail's first line is no document's first
        # line, so `---` there is a thematic break, never front matter.
        source = b"\n" + source[restart:]
        offset += restart - 1
        content_start = 1
        del tree, headings, error  # the error node keeps its tree alive
        tree = parse(source)


def _table_end(source: bytes, position: int) -> int:
    """Start of the first line from `position` on that ends a table: blank, or
    a block other than a paragraph when parsed alone; else the end of `source`."""
    while position < len(source):
        end = line_end(source, position)
        line = source[position:end]
        if not line.strip(_BLANK) or _begins_a_block(line):
            return position
        position = end
    return len(source)


def _begins_a_block(line: bytes) -> bool:
    first = _first_block(parse(b"\n" + line).root_node)
    return first is not None and first.type not in _ROW_LIKE


def _first_block(root: Node) -> Node | None:
    # The first node that is no document or section (a leading blank line
    # makes an empty section).
    pending = [root]
    while pending:
        node = pending.pop()
        if node.type not in _STRUCTURAL_CONTAINERS:
            return node
        pending.extend(reversed(node.named_children))
    return None


def _container_end(source: bytes, position: int, quote: bool) -> int:
    """Start of the first line from `position` on that the top-level list or
    block quote (`quote`) holding a broken table cannot hold: not blank, and
    not starting with `>` after up to three spaces (a quote), or indented by
    less than two columns, a list item's narrowest content (a list); else
    the end of `source`. (A table has no lazy continuation lines.)"""
    while position < len(source):
        end = line_end(source, position)
        line = source[position:end]
        held = line.lstrip(b" ")[:1] == b">" if quote else line.startswith((b"  ", b"\t"))
        if line.strip(_BLANK) and not held:
            return position
        position = end
    return len(source)


@dataclass(frozen=True, slots=True)
class _Error:
    node: Node  # an error node, or the pipe table holding one
    container: str | None  # the top-level list or block quote holding it


def _first_error(root: Node) -> _Error | None:
    """The first error node, or pipe table holding one, whose ancestors are
    only the document and sections; or, inside a top-level list or block
    quote (whose broken table the error recovery extends over what follows),
    the first error node within it."""
    pending = [root] if root.has_error else []
    while pending:
        node = pending.pop()
        if node.is_error or node.is_missing or (node.type == "pipe_table" and node.has_error):
            return _Error(node, container=None)
        if node.type in _STRUCTURAL_CONTAINERS and node.has_error:
            pending.extend(reversed(node.children))
        elif node.has_error:
            return _Error(_first_error_within(node), container=node.type)
    return None


def _first_error_within(node: Node) -> Node:
    while not (node.is_error or node.is_missing):
        node = next(child for child in node.children if child.has_error or child.is_missing)
    return node


def _shifted(headings: list[RawHeading], offset: int) -> list[RawHeading]:
    if offset == 0:
        return headings
    return [RawHeading(h.level, h.start + offset, h.end + offset, h.setext) for h in headings]
