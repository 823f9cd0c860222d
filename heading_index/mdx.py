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
unindenting rounds (a few parses at most).

Here: the dialects, the block scan (which lines are ESM, flow constructs or
fenced code) and the masks it makes, and a heading's inline source. Where a
line's JavaScript and tags end: heading_index/mdx_syntax.py. The unindenting
rounds over the parse: heading_index/mdx_unindent.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from mdchunks.heading_index.mdx_syntax import (
    constructs_in_line,
    end_of_line,
    script_end,
    start_of_next_line,
)
from mdchunks.heading_index.searchable import front_matter

Dialect = Literal["commonmark", "mdx"]
DIALECTS: tuple[Dialect, ...] = ("commonmark", "mdx")

_NOT_LINE_END = re.compile(r"[^\r\n]")
# ESM: `import` or `export` at column 0, then a space, a tab, `{` or `*`.
_ESM = re.compile(r"(?:import|export)(?=[ \t{*])")
# Block quote markers and list markers before a line's content.
_CONTAINER = re.compile(r"[ \t]*(?:>|(?:[-+*]|[0-9]{1,9}[.)])(?=[ \t]|$))")
_MAY_PREFIX = frozenset(" \t>-+*0123456789")
_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})(.*)")


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
        eol = end_of_line(text, position)
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
            position = start_of_next_line(text, eol)
            continue
        if not line.strip(" \t"):
            block_start = True
            position = start_of_next_line(text, eol)
            continue
        content = position + _container_prefix(line)
        opened = _FENCE.fullmatch(text, content, eol)
        if opened and not (opened.group(1)[0] == "`" and "`" in opened.group(2)):
            fence = (opened.group(1)[0], len(opened.group(1)), len(line) - len(line.lstrip(" \t")))
            block_start = False
            position = code_start = start_of_next_line(text, eol)
            continue
        if block_start and not broken and _ESM.match(text, position):
            end = script_end(text, position, esm=True)
            found.append((position, end, "E"))  # ESM: masked as spaces
            position = start_of_next_line(text, end)
            block_start = True
            continue
        line_constructs, line_end, broken = constructs_in_line(text, content, eol, broken)
        flow = bool(line_constructs) and _only_space_between(
            text, content, line_end, line_constructs
        )
        fill = " " if flow else "x"
        found.extend((start, end, fill) for start, end in line_constructs)
        block_start = flow
        position = start_of_next_line(text, line_end)
    if fence is not None and n > code_start:
        found.append((code_start, n, "F"))
    return found, moves


def _only_space_between(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    position = start
    for span_start, span_end in spans:
        if text[position:span_start].strip(" \t\r\n"):
            return False
        position = span_end
    return not text[position:end].strip(" \t\r\n")


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
        end = end_of_line(text, start)
        pieces.append(text[position:start])
        pieces.append(text[start + width : end] + text[start : start + width])
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


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


def heading_source(content: str) -> str:
    """A heading's inline source as remark-mdx reads it: JSX tags left out,
    an expression's JavaScript kept without its braces (a comment: nothing)."""
    if "{" not in content and "<" not in content:
        return content
    spans, _, _ = constructs_in_line(content, 0, len(content), False)
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
