"""The reference for which lines are headings and what their text is.

markdown-it-py's CommonMark parse (with GFM pipe tables, `tables=True`),
reduced the way docs/heading-index.md defines a heading's text. For the tests
and the harness (`spikes.heading_scan`): the product never imports
markdown-it-py.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token

# The bundled data (corpora/README.md says where each comes from).
CORPORA = Path(__file__).resolve().parents[1] / "corpora"
SPEC_JSON = CORPORA / "commonmark" / "spec.json"
RUST_BOOK = CORPORA / "rust-book"

_MARKDOWN = MarkdownIt("commonmark")
_MARKDOWN_WITH_TABLES = MarkdownIt("commonmark").enable("table")
# Pandoc / kramdown / MkDocs attribute block at the very end of a heading.
_ATTRIBUTE_BLOCK = re.compile(r"(?:^|\s)\{\s*:?\s*(?:[#.][^{}]*|-\s*)\}\s*$")
_LINE_ENDING = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class ReferenceHeading:
    line: int  # 0-based line of its first line
    level: int
    text: str


def _plain(children: Sequence[Token]) -> str:
    parts: list[str] = []
    for token in children:
        if token.type in ("text", "text_special", "code_inline"):
            parts.append(token.content)
        elif token.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif token.type == "image":
            parts.append(_plain(token.children or ()))
        # link_open/close, em/strong markers, html_inline: no text of their own
    return "".join(parts)


def normalise(text: str) -> str:
    text = " ".join(text.split())
    return " ".join(_ATTRIBUTE_BLOCK.sub("", text).split())


def reference_headings(markdown: str, *, tables: bool = False) -> list[ReferenceHeading]:
    """Top-level headings (not inside block quotes or list items); CommonMark,
    with GFM pipe tables when `tables`."""
    tokens = (_MARKDOWN_WITH_TABLES if tables else _MARKDOWN).parse(markdown)
    found: list[ReferenceHeading] = []
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.level == 0:
            assert token.map is not None
            inline = tokens[i + 1]
            found.append(
                ReferenceHeading(
                    line=token.map[0],
                    level=int(token.tag[1]),
                    text=normalise(_plain(inline.children or ())),
                )
            )
    return found


def line_of(text: str, offset: int) -> int:
    """0-based line number of `offset`, counting CommonMark line endings."""
    return len(_LINE_ENDING.findall(text[:offset]))


def spec_examples() -> list[dict[str, object]]:
    """The CommonMark spec examples: markdown, html, example (number), section."""
    return json.loads(SPEC_JSON.read_text(encoding="utf-8"))


def setext_variant(markdown: str) -> str:
    """`markdown` with a `===` underline after every top-level paragraph.

    Both parsers then see each paragraph as a setext heading, which puts the
    spec's inline examples (emphasis, links, entities, ...) into heading text.
    """
    lines = markdown.split("\n")
    ends = [
        token.map[1]
        for token in _MARKDOWN.parse(markdown)
        if token.type == "paragraph_open" and token.level == 0 and token.map is not None
    ]
    for end in sorted(ends, reverse=True):
        lines.insert(end, "===")
    return "\n".join(lines)
