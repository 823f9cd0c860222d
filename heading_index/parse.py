"""tree-sitter-markdown block parse -> the document's structural headings.

Only the parser decides what is a heading: fences, indented code, HTML blocks
and front matter are its business, never a regex's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import tree_sitter_markdown
from tree_sitter import Language, Node, Parser, Query, QueryCursor, Tree

_PARSER: Parser | None = None
_SURROGATE = re.compile("[\ud800-\udfff]")
_DEFINITION_QUERY: Query | None = None

# Node types that may enclose a structural heading: anything else (block
# quote, list item, ...) makes a heading content, not structure.
_STRUCTURAL_CONTAINERS = frozenset({"document", "section"})
_HEADING_TYPES = frozenset({"atx_heading", "setext_heading"})
_FRONT_MATTER_TYPES = frozenset({"minus_metadata", "plus_metadata"})
_LEVEL_OF_MARKER = {
    "atx_h1_marker": 1,
    "atx_h2_marker": 2,
    "atx_h3_marker": 3,
    "atx_h4_marker": 4,
    "atx_h5_marker": 5,
    "atx_h6_marker": 6,
    "setext_h1_underline": 1,
    "setext_h2_underline": 2,
}


# A line that could end a top-level heading (an ATX line or a setext underline)
# or close TOML front matter (`+++`; YAML's `---` is an underline already).
# A generous superset: it only bounds what gets parsed, the parser decides.
_CANDIDATE = rb"[ \t]*(?:#|(?:=+|-+|\+{3})[ \t]*(?=[\r\n]|\Z))"
_FIRST_LINE_CANDIDATE = re.compile(_CANDIDATE)
_LATER_LINE_CANDIDATE = re.compile(rb"[\r\n]" + _CANDIDATE)


@dataclass(frozen=True, slots=True)
class RawHeading:
    """A heading as the parser reports it, in UTF-8 byte offsets of whole lines."""

    level: int
    start: int  # start of its first line
    end: int  # just past its last line's line ending (or the end of the document)
    setext: bool


@dataclass(frozen=True, slots=True)
class DefinitionSites:
    """Where link reference definitions are, or may be, in byte offsets."""

    labels: list[tuple[int, int]]  # `[label]` of each definition the parser found
    paragraphs: list[tuple[int, int]]  # paragraphs starting with `[` (it misses some)


def encode(text: str) -> bytes:
    """UTF-8 for the parser, one code point -> one code point, offsets preserved.

    NUL (as CommonMark prescribes) and lone surrogates (which have no UTF-8
    form) become U+FFFD, which is no markdown syntax; the code-point count is
    unchanged, so the byte -> code-point mapping stays exact for `text`.
    """
    text = text.replace("\0", "\ufffd")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text).encode("utf-8")


def _parser() -> Parser:
    """The block-grammar parser, created once and reused (creation is not free)."""
    global _PARSER
    if _PARSER is None:
        _PARSER = Parser(Language(tree_sitter_markdown.language()))
    return _PARSER


def _definition_query() -> Query:
    global _DEFINITION_QUERY
    if _DEFINITION_QUERY is None:
        _DEFINITION_QUERY = Query(
            Language(tree_sitter_markdown.language()),
            "(link_reference_definition (link_label) @label) (paragraph) @paragraph",
        )
    return _DEFINITION_QUERY


def parse(source: bytes) -> Tree:
    """The block parse of `source`, given a final line ending if it lacks one.

    tree-sitter-markdown 0.5 mis-parses an unterminated last line (`# a` at
    the very end is an ERROR, `a\n===` no heading); the extra byte lies past
    every offset the caller reads, so it shifts nothing.
    """
    if not source.endswith((b"\n", b"\r")):
        source += b"\n"
    return _parser().parse(source)


def heading_prefix_length(source: bytes) -> int:
    """Length of the shortest prefix of `source` that holds every possible heading.

    CommonMark decides a line's block structure from that line and the ones
    before it, never from later lines, so parsing stops after the last line
    that could end a heading: the parse of the prefix has the same headings as
    the parse of the whole. Most documents put their last heading well before
    their end (a tldr page has one, on its first line), so this skips most of
    the parsing work. Zero means no heading is possible at all.
    """
    last_line_start = 0 if _FIRST_LINE_CANDIDATE.match(source) else -1
    for match in _LATER_LINE_CANDIDATE.finditer(source):
        last_line_start = match.start() + 1
    return 0 if last_line_start < 0 else line_end(source, last_line_start)


def line_start(source: bytes, pos: int) -> int:
    """Byte offset of the start of the line holding `pos` (\\n, \\r\\n or \\r endings)."""
    if pos == 0 or source[pos - 1] in b"\r\n":  # the usual case: a block starts a line
        return pos
    newline = source.rfind(b"\n", 0, pos)
    # Bounded by the \n found, so a document without \r is never rescanned.
    carriage = source.rfind(b"\r", newline + 1, pos)
    return max(newline, carriage) + 1


def line_end(source: bytes, pos: int) -> int:
    """Byte offset just past the line ending of the line holding `pos`."""
    newline = source.find(b"\n", pos)
    limit = len(source) if newline < 0 else newline
    carriage = source.find(b"\r", pos, limit)
    if carriage >= 0:
        # \r\n is one line ending; a lone \r is one too.
        return carriage + (2 if source[carriage + 1 : carriage + 2] == b"\n" else 1)
    return limit if newline < 0 else newline + 1


def _raw_heading(source: bytes, node: Node) -> RawHeading | None:
    # The level marker is the first child of an ATX heading, the underline
    # the last child of a setext heading.
    setext = node.type == "setext_heading"
    marker = node.child(node.child_count - 1) if setext else node.child(0)
    level = _LEVEL_OF_MARKER.get(marker.type) if marker is not None else None
    if marker is None or level is None:
        return None  # pragma: no cover - the grammar always gives a marker
    return RawHeading(
        level=level,
        start=line_start(source, node.start_byte),
        end=line_end(source, marker.start_byte),
        setext=setext,
    )


def structural_headings(tree: Tree, source: bytes) -> list[RawHeading]:
    """Headings whose ancestors are only the document and sections, in order."""
    found: list[RawHeading] = []
    # Descend only into document/section nodes: any other block is skipped
    # whole, so the Python-side walk touches top-level blocks only.
    pending: list[Node] = [tree.root_node]
    while pending:
        node = pending.pop()
        if node.type in _HEADING_TYPES:
            raw = _raw_heading(source, node)
            if raw is not None:
                found.append(raw)
        elif node.type in _STRUCTURAL_CONTAINERS:
            pending.extend(reversed(node.children))
    return found


def front_matter_end_byte(tree: Tree) -> int:
    """Byte offset just past the YAML (`---`) or TOML (`+++`) front matter that
    opens the parsed document, 0 if it has none."""
    first = tree.root_node.child(0)
    if first is None or first.type not in _FRONT_MATTER_TYPES:
        return 0
    return first.end_byte


def definition_sites(tree: Tree, source: bytes) -> DefinitionSites:
    """Definition labels and candidate paragraphs, anywhere in the document.

    Run by a query inside tree-sitter (no Python walk), and only when some
    heading could hold a reference link.
    """
    captures = QueryCursor(_definition_query()).captures(tree.root_node)
    labels = [(node.start_byte, node.end_byte) for node in captures.get("label", [])]
    paragraphs = [
        (node.start_byte, node.end_byte)
        for node in captures.get("paragraph", [])
        if source[node.start_byte : node.start_byte + 1] == b"["
    ]
    return DefinitionSites(labels=labels, paragraphs=paragraphs)
