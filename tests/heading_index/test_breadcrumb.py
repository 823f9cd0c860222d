"""Breadcrumb rendering (docs/structure-chunker.md, rule 7): one place for both chunkers."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples
from mdchunks.heading_index.breadcrumb import (
    ELLIPSIS,
    MIN_BREADCRUMB_BUDGET,
    SEPARATOR,
    embed_text,
    render,
    sanitize_part,
)


def test_renders_the_path_root_first() -> None:
    assert render(("Guide", "Install", "Linux")) == ("Guide > Install > Linux", False)


def test_an_empty_path_renders_empty() -> None:
    assert render(()) == ("", False)


@pytest.mark.parametrize(
    ("part", "expected"),
    [
        ("  Install \t now  ", "Install now"),
        ("line\nbreak", "line break"),
        ("bell\x07 and\x1b[31m escape", "bell and[31m escape"),
        ("nul\x00byte", "nulbyte"),
        ("del\x7f char", "del char"),
        ("c1\x85 next-line", "c1 next-line"),  # NEL is whitespace
        ("non\u00a0breaking", "non breaking"),
        ("\u2028", ""),
    ],
)
def test_parts_are_sanitised(part: str, expected: str) -> None:
    assert sanitize_part(part) == expected


@settings(max_examples=examples(500), deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=40))
def test_sanitising_drops_the_control_characters_and_collapses_whitespace(part: str) -> None:
    # The definition; sanitize_part skips the scan when the part is printable.
    kept = "".join(c for c in part if c.isspace() or unicodedata.category(c) != "Cc")
    assert sanitize_part(part) == " ".join(kept.split())


def test_parts_that_sanitise_to_nothing_are_left_out() -> None:
    assert render(("Guide", " \x01 ", "Linux")) == ("Guide > Linux", False)


def test_exactly_at_the_budget_is_not_truncated() -> None:
    path = ("ab", "cd")  # "ab > cd": 7 bytes
    assert render(path, 8) == ("ab > cd", False)
    assert render(("abcdefgh",), 8) == ("abcdefgh", False)


def test_over_budget_drops_whole_leading_parts_first() -> None:
    path = ("Alpha", "Beta", "Gamma", "Delta")
    # "… > Gamma > Delta" is 3 + 3 + 5 + 3 + 5 = 19 bytes.
    assert render(path, 19) == ("… > Gamma > Delta", True)
    assert render(path, 18) == ("… > Delta", True)


def test_a_deepest_part_alone_over_budget_loses_its_beginning() -> None:
    assert render(("Root", "abcdefghijklmnop"), 10) == ("…jklmnop", True)
    assert render(("abcdefghijklmnop",), 10) == ("…jklmnop", True)


def test_truncation_cuts_on_character_boundaries() -> None:
    rendered, truncated = render(("日本語のテキスト",), 10)  # 3 bytes a character
    assert truncated
    assert rendered == "…スト"  # 3 + 6 bytes; a third character would not fit


def test_truncation_never_starts_with_a_combining_mark_or_space() -> None:
    accented = "e\u0301" * 10  # e + combining acute, 3 bytes a pair
    rendered, _ = render((accented,), 8)
    assert not unicodedata.category(rendered[1]).startswith("M")
    rendered, _ = render(("abcde hijk",), 8)  # the 5-byte tail is " hijk"
    assert rendered == "…hijk"


def test_six_long_headings_keep_the_deepest() -> None:
    path = [f"Level {n} " + "long heading words " * 5 for n in range(1, 7)]
    rendered, truncated = render(path, 256)
    assert truncated
    assert rendered.startswith(ELLIPSIS + SEPARATOR)
    assert rendered.endswith(sanitize_part(path[-1]))
    assert len(rendered.encode()) <= 256


def test_a_budget_below_the_minimum_is_refused() -> None:
    with pytest.raises(ValueError):
        render(("A",), MIN_BREADCRUMB_BUDGET - 1)


def test_embed_text() -> None:
    assert embed_text("A > B", "body") == "A > B\n\nbody"
    assert embed_text(None, "body") == "body"
    assert embed_text("", "body") == "body"
    assert embed_text("A", "| 3 |", "| h |\n|---|") == "A\n\n| h |\n|---|\n| 3 |"
    assert embed_text(None, "| 3 |", "| h |\n|---|") == "| h |\n|---|\n| 3 |"


@settings(max_examples=examples(300), deadline=None)
@given(
    path=st.lists(st.text(max_size=80), max_size=8),
    budget=st.integers(min_value=MIN_BREADCRUMB_BUDGET, max_value=300),
)
def test_render_properties(path: list[str], budget: int) -> None:
    rendered, truncated = render(path, budget)
    full, _ = render(path, 10**9)
    assert len(rendered.encode("utf-8", "surrogatepass")) <= budget
    assert truncated == (len(full.encode("utf-8", "surrogatepass")) > budget)
    assert not any(unicodedata.category(c) == "Cc" for c in rendered)
    assert "\n" not in rendered
    if truncated:
        assert rendered.startswith(ELLIPSIS)
        # What is kept is a tail of the full rendering: the deepest parts survive.
        assert full.endswith(rendered[len(ELLIPSIS) :].removeprefix(SEPARATOR))
    else:
        assert rendered == full


# -- the page title (docs/heading-index.md, "The page title") -----------------


def test_the_title_roots_the_path() -> None:
    assert render(("Basic usage", "Chaining"), title="Middleware") == (
        "Middleware > Basic usage > Chaining",
        False,
    )


@pytest.mark.parametrize("root", ["Middleware", "middleware", "  Middleware "])
def test_a_path_that_starts_with_the_title_is_not_rooted_twice(root: str) -> None:
    # A body `# Middleware` under `title: Middleware`: case and spacing aside.
    assert render((root, "Basic usage"), title="Middleware")[0] == f"{root.strip()} > Basic usage"


def test_a_preamble_under_a_title_is_named_by_it() -> None:
    assert render((), title="Middleware") == ("Middleware", False)
    assert render((), title=None) == ("", False)
    assert render((), title=" \t") == ("", False)  # a blank title is none


def test_truncation_drops_the_title_first() -> None:
    path = ("Install", "Linux")
    assert render(path, 24, title="A long page title") == (f"{ELLIPSIS} > Install > Linux", True)


def test_the_title_is_sanitised_as_a_part() -> None:
    assert render(("B",), title="Two\nlines\x07") == ("Two lines > B", False)
