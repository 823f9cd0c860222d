"""ATX markers, closing sequences, setext lines and attribute blocks."""

from __future__ import annotations

import pytest
from mdchunks.heading_index.markers import (
    atx_content,
    lines_with_offsets,
    setext_content,
    strip_attribute_block,
)


@pytest.mark.parametrize(
    ("line", "content"),
    [
        ("# Title", "Title"),
        ("   ###   Title   ", "Title"),
        ("## Title ##", "Title"),
        ("## Title #####   ", "Title"),
        ("## Title#", "Title#"),
        ("# foo \\#", "foo \\#"),
        ("### ###", ""),
        ("#", ""),
        ("# #", ""),
        ("#\tTab\t#", "Tab"),
        ("# Title {#id}", "Title"),
        ("# Title ## {#id}", "Title"),
        ("# Title {#id} ##", "Title"),
        ("# *em* `code`", "*em* `code`"),
    ],
)
def test_atx_content(line: str, content: str) -> None:
    assert atx_content(line) == content


def test_setext_content_joins_lines_and_drops_indentation() -> None:
    assert setext_content(["  First", "\tsecond  "]) == "First\nsecond"
    assert setext_content(["Title {#t}"]) == "Title"


@pytest.mark.parametrize(
    ("content", "kept"),
    [
        ("Title {#id}", "Title"),
        ("Title {.class}", "Title"),
        ("Title {#id .a .b key=value}", "Title"),
        ("Title {: #id }", "Title"),
        ("Title {-}", "Title"),
        ("{#only}", ""),
        ("Title {x}", "Title {x}"),
        ("Title{#glued}", "Title{#glued}"),
        ("Title \\{#escaped}", "Title \\{#escaped}"),
        ("Title {#a} more", "Title {#a} more"),
    ],
)
def test_strip_attribute_block(content: str, kept: str) -> None:
    assert strip_attribute_block(content) == kept


def test_lines_with_offsets_knows_only_commonmark_line_endings() -> None:
    text = "a\r\nb\rc\n\nd\x0be\u2028f"
    assert lines_with_offsets(text) == [(0, "a"), (3, "b"), (5, "c"), (7, ""), (8, "d\x0be\u2028f")]
    assert lines_with_offsets("") == []
    assert lines_with_offsets("x\n") == [(0, "x")]
