"""Writing markdown from a document's parts: the one place the importers
turn headings, paragraphs, lists, tables and code into markdown text.

Text from a document is escaped so that only what the importer means as
structure is structure: a paragraph line that starts with `#`, `>`, `-`,
`1.` or `===` stays a paragraph line (else a PDF's "# of bidders" would be a
heading), and inline markers (`*`, `` ` ``, `<`, `[`, `_` at a word's edge,
entities) stay literal. The heading index resolves these escapes, so a
heading's `heading_text` is the document's own title.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

_INLINE = re.compile(r"[\\`*<\[]|(?<!\w)_|_(?!\w)|&(?=#?\w+;)")
# A line that would open a block (or underline the line before as a setext
# heading) if written as it is.
_BLOCK_OPENER = re.compile(r"[#>+=~|-]|\d{1,9}[.)](?:\s|$)")
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SPACES = re.compile(r"[ \t\u00a0\u2000-\u200b\u3000]+")
_CLOSING_HASHES = re.compile(r"(\s)(#+)$")
_INFO_STRING = re.compile(r"[^\w+#.-]")


def clean(text: str) -> str:
    """Text as a document gave it, fit to store: no NUL or other control
    characters (PostgreSQL text cannot hold NUL), line ends as `\\n`."""
    return _CONTROLS.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def one_line(text: str) -> str:
    """Whitespace runs (line breaks too) collapsed to one space, trimmed."""
    return " ".join(clean(text).split())


def escape_inline(text: str) -> str:
    return _INLINE.sub(lambda found: "\\" + found.group(0), text)


def escape_line(line: str) -> str:
    """One line of plain text as a paragraph line: inline markers escaped, then
    `guard_line`."""
    return guard_line(escape_inline(_SPACES.sub(" ", line).strip()))


def guard_line(line: str) -> str:
    """One line of inline markdown as a paragraph line: no leading indentation
    (indented code), no block opener at its start."""
    line = _SPACES.sub(" ", line).strip()
    if _BLOCK_OPENER.match(line):
        digits = len(line) - len(line.lstrip("0123456789"))
        line = line[:digits] + "\\" + line[digits:]
    return line


def heading(level: int, text: str) -> str:
    """An ATX heading; levels past 6 are kept as 6 (markdown has six)."""
    title = escape_inline(one_line(text))
    title = _CLOSING_HASHES.sub(r"\1\\\2", title)  # "Section #" is no closing sequence
    return f"{'#' * max(1, min(level, 6))} {title}"


def paragraph(text: str) -> str:
    """Lines kept as they are (soft breaks), each escaped; blank lines dropped."""
    lines = (escape_line(line) for line in clean(text).split("\n"))
    return "\n".join(line for line in lines if line)


def inline_block(markdown: str) -> str:
    """A paragraph of inline markdown already escaped (code spans kept)."""
    lines = (guard_line(line) for line in markdown.split("\n"))
    return "\n".join(line for line in lines if line)


def paragraphs(text: str) -> list[str]:
    """A run of text with blank lines between its paragraphs (a PDF page)."""
    blocks = re.split(r"\n[ \t]*\n", clean(text))
    return [block for block in (paragraph(part) for part in blocks) if block]


def fenced(code: str, language: str = "") -> str:
    """A fenced code block, its fence longer than any backtick run inside."""
    body = clean(code).strip("\n")
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    info = _INFO_STRING.sub("", language)
    return f"{fence}{info}\n{body}\n{fence}"


def code_span(code: str) -> str:
    body = one_line(code)
    if not body:
        return ""
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if body.startswith("`") or body.endswith("`") else ""
    return f"{ticks}{pad}{body}{pad}{ticks}"


def pipe_table(rows: Sequence[Sequence[str]]) -> str:
    """A pipe table: the first row is the header; rows padded to one width."""
    cells = [[_cell(cell) for cell in row] for row in rows if row]
    if not cells:
        return ""
    width = max(len(row) for row in cells)
    padded = [row + [""] * (width - len(row)) for row in cells]
    lines = [_row(padded[0]), _row(["---"] * width), *(_row(row) for row in padded[1:])]
    return "\n".join(lines)


def _cell(text: str) -> str:
    return escape_inline(one_line(text)).replace("|", "\\|")


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


@dataclass(frozen=True, slots=True)
class ListItem:
    depth: int  # 0: the outermost list
    ordered: bool
    text: str  # inline markdown, escaped already (`escape_inline`, `code_span`)
    start: int | None = None  # an ordered list's first number, when it is not 1


def render_list(items: Iterable[ListItem]) -> str:
    """Items in document order as nested markdown lists: each level indented to
    its parent's content column (what CommonMark needs to nest it); a level
    deeper than the one before plus one is kept at that one plus one. An
    ordered list starts at its first item's `start`. An empty item is left
    out: right under an item's text, a bare `-` would underline that text as
    a setext heading to every CommonMark reader (an empty item cannot
    interrupt a paragraph), and it holds no word."""
    lines: list[str] = []
    columns: list[int] = []  # content column of the open item at each depth
    numbers: list[int] = []
    kinds: list[bool] = []
    for item in items:
        if not item.text.strip():
            continue
        depth = min(max(item.depth, 0), len(columns))
        if depth < len(columns) and kinds[depth] != item.ordered:
            del columns[depth:], numbers[depth:], kinds[depth:]
            depth = len(columns)
        if depth < len(columns):
            number = numbers[depth] + 1
            del columns[depth:], numbers[depth:], kinds[depth:]
        else:
            number = item.start if item.start is not None else 1
        indent = columns[-1] if columns else 0
        marker = f"{min(max(number, 0), 999_999_999)}." if item.ordered else "-"
        text_lines = [line for line in map(guard_line, item.text.split("\n")) if line] or [""]
        lines.append(f"{' ' * indent}{marker} {text_lines[0]}".rstrip())
        content = indent + len(marker) + 1
        lines.extend(f"{' ' * content}{line}" for line in text_lines[1:])
        columns.append(content)
        numbers.append(number)
        kinds.append(item.ordered)
    return "\n".join(lines)


def quoted(blocks: Sequence[str]) -> str:
    text = "\n\n".join(block for block in blocks if block)
    return "\n".join(f"> {line}".rstrip() for line in text.split("\n"))


def document(blocks: Iterable[str]) -> str:
    """The blocks, a blank line between each: the converted document."""
    text = "\n\n".join(block for block in blocks if block.strip())
    return text + "\n" if text else ""
