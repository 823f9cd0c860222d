"""The tree-sitter side: structural headings in bytes, line bounds, the parsed prefix."""

from __future__ import annotations

import pytest
from mdchunks.heading_index import parse as parse_module
from mdchunks.heading_index.parse import (
    RawHeading,
    heading_prefix_length,
    line_end,
    line_start,
    parse,
    structural_headings,
)


def raw(text: str) -> list[RawHeading]:
    source = text.encode()
    return structural_headings(parse(source), source)


def test_atx_and_setext_in_bytes() -> None:
    text = "é\n# Ä\nSetext\n---\n"
    assert raw(text) == [
        RawHeading(level=1, start=3, end=8, setext=False),
        RawHeading(level=2, start=8, end=19, setext=True),
    ]


def test_container_headings_are_skipped() -> None:
    assert raw("> # q\n\n- # l\n\n1. # o\n\n# top\n") == [RawHeading(1, 22, 28, False)]


def test_front_matter_nodes() -> None:
    # tree-sitter-markdown 0.5 ships with its front matter extension on.
    yaml = parse(b"---\na: 1\n---\n").root_node
    toml = parse(b"+++\na = 1\n+++\n").root_node
    assert yaml.children[0].type == "minus_metadata"
    assert toml.children[0].type == "plus_metadata"


def test_parser_is_created_once() -> None:
    parse(b"# a\n")
    first = parse_module._PARSER
    parse(b"# b\n")
    assert parse_module._PARSER is first is not None


@pytest.mark.parametrize(
    ("source", "pos", "start", "end"),
    [
        (b"ab\ncd\nef", 4, 3, 6),
        (b"ab\r\ncd\r\nef", 5, 4, 8),
        (b"ab\rcd\ref", 4, 3, 6),
        (b"abc", 1, 0, 3),
        (b"ab\n", 0, 0, 3),
    ],
)
def test_line_bounds(source: bytes, pos: int, start: int, end: int) -> None:
    assert (line_start(source, pos), line_end(source, pos)) == (start, end)


@pytest.mark.parametrize(
    ("source", "length"),
    [
        (b"", 0),
        (b"no headings here\njust text\n", 0),
        (b"# only the top\nthen a long body\n", 15),
        (b"text\n  ## later\r\nbody", 17),
        (b"para\n---\nbody\n", 9),
        (b"+++\na = 1\n+++\nbody\n", 14),  # TOML front matter closes in the prefix
        (b"x\n\t#\n", 5),
    ],
)
def test_heading_prefix_length(source: bytes, length: int) -> None:
    assert heading_prefix_length(source) == length
