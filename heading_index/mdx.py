"""MDX's block structure for the heading index: the text the parser sees.

remark-mdx, the parser MDX sites build with, is CommonMark with four changes
that decide headings (docs/heading-index.md, "MDX"):

- a JSX tag on a line of its own (or several tags, or one spread over lines)
  is a flow element whose children are markdown, not an HTML block that runs
  to the next blank line; it may interrupt a paragraph;
- ESM (`import` / `export` at the start of a line that begins a block, to the
  blank line where its JavaScript is complete) and `{expressions}` are
  JavaScript, not markdown;
- there is no indented code: a heading, fence, list or setext underline may
  be indented any amount;
- there are no HTML blocks at all (every tag is JSX).

tree-sitter keeps deciding what is a heading. It parses a masked copy of the
text: same code points, same lines, in which ESM, expressions and tags that
stand alone on their lines are spaces, other tags and expressions are `x`s
(paragraph text, as they are inline), and a line that CommonMark would read as
top-level indented code, or as an indented continuation of a paragraph, has
its indentation moved to the end of the line. Fenced code is left alone, as
is front matter. Every scan moves forward: linear in the text, except the
unindenting rounds (at most `_UNINDENT_ROUNDS` parses).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from mdchunks.heading_index.searchable import front_matter
from mdchunks.heading_index.skeleton import Skeleton
from tree_sitter import Node, Tree

Dialect = Literal["commonmark", "mdx"]
DIALECTS: tuple[Dialect, ...] = ("commonmark", "mdx")

_LINE_END = re.compile(r"\r\n|\r|\n")
_NOT_LINE_END = re.compile(r"[^\r\n]")
# What may start a construct inside a line (a code span, an escape, an
# expression, a tag): lines with none of these are skipped at C speed.
_INTERESTING = re.compile(r"[`\\{<]")
# ESM: `import` or `export` at column 0, then a space, a tab, `{` or `*`.
_ESM = re.compile(r"(?:import|export)(?=[ \t{*])")
# Block quote markers and list markers before a line's content.
_CONTAINER = re.compile(r"[ \t]*(?:>|(?:[-+*]|[0-9]{1,9}[.)])(?=[ \t]|$))")
_MAY_PREFIX = frozenset(" \t>-+*0123456789")
_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})(.*)")
_TAG_NAME = re.compile(r"(?:[^\W\d]|\$)[\w$.:-]*")
_SPACE = re.compile(r"[ \t\r\n]*")
# A tag longer than this is no tag (MDX would have refused the page): the scan
# of a stray `<` stays bounded.
_MAX_TAG = 20_000
_UNINDENT_ROUNDS = 8


def dialect_for(rel_path: str) -> Dialect:
    """The dialect of a document by its name: `.mdx` is MDX, the rest CommonMark."""
    return "mdx" if rel_path.lower().endswith(".mdx") else "commonmark"


@dataclass(frozen=True, slots=True)
class MdxScan:
    """What the parser reads of an MDX document, and what of it is no content."""

    masked: str  # same code points and lines as the text (before unindenting)
    blank: str  # the same with every flow construct blank (what is blank for a lead-in)
    # ESM blocks and flow comments (`{/* ... */}` alone on their lines), in order.
    hidden: tuple[tuple[int, int], ...]


def scan(text: str) -> MdxScan:
    """The masked text (see the module docstring) and the spans that are no content."""
    constructs, moves = _constructs(text)
    hidden = tuple(
        (start, end)
        for start, end, fill in constructs
        if fill == "E" or (fill == " " and text[start] == "{" and _is_comment(text[start:end]))
    )
    parser, blank = _masks(text, constructs)
    return MdxScan(_move_indentation(parser, moves), blank, hidden)


def mask(text: str) -> str:
    """The masked text alone."""
    return scan(text).masked


def _is_comment(expression: str) -> bool:
    inner = expression[1:-1].strip()
    return inner.startswith("/*") and inner.endswith("*/") and "*/" not in inner[2:-2]


def _constructs(text: str) -> tuple[list[tuple[int, int, str]], list[tuple[int, int]]]:
    """(start, end, fill) of every ESM block, expression and tag outside
    fenced code and front matter, and of the lines of fenced code, in order:
    fill "E" for ESM, " " for flow, "x" inline, "F" for code;
    and (start, width) of the indentation to move to the end of its line on
    closing fences indented deeper than their opening fence (MDX closes a
    fence at any indentation, CommonMark at most 3 columns in)."""
    found: list[tuple[int, int, str]] = []
    moves: list[tuple[int, int]] = []
    n = len(text)
    position = _front_matter_end(text)
    fence: tuple[str, int, int] | None = None  # its character, length and indentation
    code_start = -1  # where the open fence's code starts
    block_start = True  # the line begins a block (after a blank line or a flow construct)
    broken = False  # an expression ran to the end: MDX refuses the page; the rest is text
    while position < n:
        eol = _line_end(text, position)
        line = text[position:eol]
        if fence is not None:
            if _closes(line, fence):
                # Code is never a heading: blank, a line of code at column 0
                # inside a fence indented under a tag cannot end the indented
                # block CommonMark may first take the fence for.
                if position > code_start:
                    found.append((code_start, position, "F"))
                indentation = len(line) - len(line.lstrip(" \t"))
                if indentation > fence[2]:
                    moves.append((position + fence[2], indentation - fence[2]))
                fence = None
            position = _next_line(text, eol)
            continue
        if not line.strip(" \t"):
            block_start = True
            position = _next_line(text, eol)
            continue
        content = position + _container_prefix(line)
        opened = _FENCE.fullmatch(text, content, eol)
        if opened and not (opened.group(1)[0] == "`" and "`" in opened.group(2)):
            fence = (opened.group(1)[0], len(opened.group(1)), len(line) - len(line.lstrip(" \t")))
            block_start = False
            position = code_start = _next_line(text, eol)
            continue
        if block_start and not broken and _ESM.match(text, position):
            end = _script_end(text, position, esm=True)
            found.append((position, end, "E"))  # ESM: masked as spaces
            position = _next_line(text, end)
            block_start = True
            continue
        line_constructs, line_end, broken = _line_constructs(text, content, eol, broken)
        flow = bool(line_constructs) and _only_space_between(
            text, content, line_end, line_constructs
        )
        fill = " " if flow else "x"
        found.extend((start, end, fill) for start, end in line_constructs)
        block_start = flow
        position = _next_line(text, line_end)
    if fence is not None and n > code_start:
        found.append((code_start, n, "F"))
    return found, moves


def _line_constructs(
    text: str, start: int, eol: int, broken: bool
) -> tuple[list[tuple[int, int]], int, bool]:
    """The expressions and tags of the line `[start, eol)`, and where that line
    ends: a construct that runs over line endings takes the lines it covers."""
    found: list[tuple[int, int]] = []
    i = start
    while not broken:
        match = _INTERESTING.search(text, i, eol)
        if match is None:
            break
        i = match.start()
        char = text[i]
        if char == "\\":
            i += 2
        elif char == "`":
            run = _run_length(text, i, "`")
            close = text.find("`" * run, i + run, eol)
            while close != -1 and _run_length(text, close, "`") != run:
                close = text.find("`" * run, close + _run_length(text, close, "`"), eol)
            i = i + run if close == -1 else close + run
        elif char == "{":
            end = _script_end(text, i, esm=False)
            if end < 0:
                broken = True
                break
            found.append((i, end))
            i = end
        else:  # "<"
            end = _tag_end(text, i)
            if end < 0:
                i += 1
                continue
            found.append((i, end))
            i = end
        if i > eol:
            eol = _line_end(text, i)
    return found, eol, broken


def _only_space_between(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    position = start
    for span_start, span_end in spans:
        if text[position:span_start].strip(" \t\r\n"):
            return False
        position = span_end
    return not text[position:end].strip(" \t\r\n")


def _script_end(text: str, start: int, *, esm: bool) -> int:
    """End of the JavaScript at `start`: for an expression (`{` at `start`) just
    past its matching `}`, -1 if the text ends first; for ESM the end of the
    line before the first blank line (or the end of the text) reached with
    every bracket, string, template and comment closed."""
    n = len(text)
    stack: list[str] = []
    i = start
    while i < n:
        char = text[i]
        top = stack[-1] if stack else ""
        if top == "`":
            if char == "\\":
                i += 2
            elif char == "`":
                stack.pop()
                i += 1
            elif char == "$" and text.startswith("{", i + 1):
                stack.append("${")
                i += 2
            else:
                i += 1
            continue
        if char in "\"'":
            i = _string_end(text, i)
        elif char == "/" and text.startswith("/", i + 1):
            i = _line_end(text, i)
        elif char == "/" and text.startswith("*", i + 1):
            close = text.find("*/", i + 2)
            if close < 0:
                return n if esm else -1
            i = close + 2
        elif char == "`":
            stack.append("`")
            i += 1
        elif char in "{([":
            stack.append(char)
            i += 1
        elif char in "})]":
            if stack:
                stack.pop()
            i += 1
            if not esm and not stack:
                return i
        elif esm and char in "\r\n" and not stack:
            after = _next_line(text, i)
            following = text[after : _line_end(text, after)]
            if after >= n or not following.strip(" \t"):
                return i
            i = after
        else:
            i += 1
    return n if esm else -1


def _string_end(text: str, start: int) -> int:
    """Past the closing quote of the JavaScript string at `start` (a string
    ends at its line's end if unclosed)."""
    quote = text[start]
    i = start + 1
    n = len(text)
    while i < n:
        char = text[i]
        if char == "\\":
            i += 2
        elif char == quote:
            return i + 1
        elif char in "\r\n":
            return i
        else:
            i += 1
    return n


def _tag_end(text: str, start: int) -> int:
    """Just past the JSX tag at `start` (`<Name ...>`, `</Name>`, `<Name />`,
    `<>`, `</>`), -1 if there is none."""
    limit = min(len(text), start + _MAX_TAG)
    i = start + 1
    if i < limit and text[i] == "/":
        i += 1
    i = _SPACE.match(text, i, limit).end()  # type: ignore[union-attr]
    if i < limit and text[i] == ">":
        return i + 1
    name = _TAG_NAME.match(text, i, limit)
    if name is None or name.start() != start + 1 + (text[start + 1] == "/"):
        return -1
    i = name.end()
    while i < limit:
        i = _SPACE.match(text, i, limit).end()  # type: ignore[union-attr]
        if i >= limit:
            return -1
        char = text[i]
        if char == ">":
            return i + 1
        if text.startswith("/>", i):
            return i + 2
        if char == "{":
            i = _script_end(text, i, esm=False)
            if i < 0 or i > limit:
                return -1
            continue
        attribute = _TAG_NAME.match(text, i, limit)
        if attribute is None:
            return -1
        i = _SPACE.match(text, attribute.end(), limit).end()  # type: ignore[union-attr]
        if i < limit and text[i] == "=":
            i = _SPACE.match(text, i + 1, limit).end()  # type: ignore[union-attr]
            if i >= limit:
                return -1
            if text[i] in "\"'":
                close = text.find(text[i], i + 1, limit)
                if close < 0:
                    return -1
                i = close + 1
            elif text[i] == "{":
                i = _script_end(text, i, esm=False)
                if i < 0 or i > limit:
                    return -1
            else:
                return -1
    return -1


def _masks(text: str, constructs: list[tuple[int, int, str]]) -> tuple[str, str]:
    """`text` with each construct's characters but line endings replaced: an
    inline one's by `x`s, a flow one's by spaces. Two views: in the parser's,
    a flow construct (not code) that opens its line starts with `***` instead,
    a thematic break: like the JSX or ESM there, it closes the lists and
    quotes before it that it is not indented into, and it ends a paragraph
    (never a setext underline); in the other every flow construct is blank."""
    parser: list[str] = []
    blank: list[str] = []
    position = 0
    broken_line = -1  # the start of the last line given a break
    for start, end, fill in constructs:
        if start < position:
            continue
        before = text[position:start]
        parser.append(before)
        blank.append(before)
        segment = text[start:end]
        char = "x" if fill == "x" else " "
        if "\n" in segment or "\r" in segment:
            masked = _NOT_LINE_END.sub(char, segment)
        else:
            masked = char * len(segment)
        blank.append(masked)
        line = _line_start(text, start)
        if fill in " E" and line != broken_line and masked.startswith("   "):
            masked = "***" + masked[3:]
            broken_line = line
        parser.append(masked)
        position = end
    parser.append(text[position:])
    blank.append(text[position:])
    return "".join(parser), "".join(blank)


def _line_start(text: str, position: int) -> int:
    return max(text.rfind("\n", 0, position), text.rfind("\r", 0, position)) + 1


def _move_indentation(text: str, moves: list[tuple[int, int]]) -> str:
    """Each move's indentation taken to the end of its line."""
    pieces: list[str] = []
    position = 0
    for start, width in moves:
        end = _line_end(text, start)
        pieces.append(text[position:start])
        pieces.append(text[start + width : end] + text[start : start + width])
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


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


def _front_matter_end(text: str) -> int:
    """Past the closing fence of YAML (`---`) or TOML (`+++`) front matter on
    the first line, else 0 (unclosed: none, as remark-frontmatter reads it)."""
    found = front_matter(text)
    return 0 if found is None else found[2]


def _container_prefix(line: str) -> int:
    if line[:1] not in _MAY_PREFIX:
        return 0
    position = 0
    while True:
        marker = _CONTAINER.match(line, position)
        if marker is None or marker.end() == position:
            break
        position = marker.end()
    return position + len(line[position:]) - len(line[position:].lstrip(" \t"))


def _closes(line: str, fence: tuple[str, int, int]) -> bool:
    stripped = line.strip(" \t")
    return (
        len(stripped) >= fence[1] and stripped == fence[0] * len(stripped)
    ) or _closes_in_container(line, fence)


def _closes_in_container(line: str, fence: tuple[str, int, int]) -> bool:
    stripped = line[_container_prefix(line) :].rstrip(" \t")
    return len(stripped) >= fence[1] and stripped == fence[0] * len(stripped)


def _run_length(text: str, start: int, char: str) -> int:
    end = start
    while end < len(text) and text[end] == char:
        end += 1
    return end - start


def _line_end(text: str, start: int) -> int:
    newline = text.find("\n", start)
    end = len(text) if newline < 0 else newline
    carriage = text.find("\r", start, end)
    return end if carriage < 0 else carriage


def _next_line(text: str, eol: int) -> int:
    if text.startswith("\r\n", eol):
        return eol + 2
    return eol + 1 if eol < len(text) else eol


def heading_source(content: str) -> str:
    """A heading's inline source as remark-mdx reads it: JSX tags left out,
    an expression's JavaScript kept without its braces (a comment: nothing)."""
    if "{" not in content and "<" not in content:
        return content
    spans, _, _ = _line_constructs(content, 0, len(content), False)
    pieces: list[str] = []
    position = 0
    for start, end in spans:
        pieces.append(content[position:start])
        if content[start] == "{":
            inner = content[start + 1 : end - 1]
            if not (inner.strip().startswith("/*") and inner.strip().endswith("*/")):
                pieces.append(inner)
        position = end
    pieces.append(content[position:])
    return "".join(pieces)
