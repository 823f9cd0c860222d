"""Labels, escapes, entities, link destinations and titles."""

from __future__ import annotations

import pytest
from mdchunks.heading_index.inline_syntax import (
    is_punctuation,
    last_backtick_runs,
    link_destination,
    link_title_end,
    normalize_label,
    unescape,
    valid_link,
)


def test_normalize_label() -> None:
    assert normalize_label("  Foo \n  BAR ") == "FOO BAR"
    assert normalize_label("ẞ") == normalize_label("ss")


def test_unescape_and_valid_link() -> None:
    assert unescape("\\*a&amp;&#65;&bogus;") == "*a&A&bogus;"
    assert not valid_link("JavaScript:x")
    assert valid_link("data:image/png;base64,AAA")
    assert valid_link("/relative")


@pytest.mark.parametrize(
    ("source", "end", "value"),
    [
        ("/url rest", 4, "/url"),
        ("<a b> rest", 5, "a b"),
        ("a(b(c))d) x", 8, "a(b(c))d"),
        ("\\)x) y", 3, ")x"),
        ("<a\nb>", -1, ""),
        ("(unbalanced", -1, ""),
        ("", -1, ""),
        ("/%C3&amp;", 9, "/%C3&"),
    ],
)
def test_link_destination(source: str, end: int, value: str) -> None:
    found = link_destination(source, 0, len(source))
    assert (found.pos if found.ok else -1, found.value) == (end, value)


@pytest.mark.parametrize(
    ("source", "end"),
    [('"t" x', 3), ("'t'", 3), ("(t)", 3), ("(a(b)", -1), ('"a\\"b"', 6), ('"open', -1), ("t", -1)],
)
def test_link_title_end(source: str, end: int) -> None:
    assert link_title_end(source, 0, len(source)) == end


def test_character_classes_and_backtick_runs() -> None:
    assert is_punctuation("!") and is_punctuation("€") and is_punctuation("。")
    assert not is_punctuation("a") and not is_punctuation(" ")
    assert last_backtick_runs("`a``b`c```") == {1: 5, 2: 2, 3: 7}
