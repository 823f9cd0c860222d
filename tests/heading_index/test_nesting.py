"""heading_index/nesting.py: the bound that decides which documents are parsed
to measure their nesting before the markdown splitter sees them."""

from __future__ import annotations

import pytest
from mdchunks.heading_index.nesting import (
    SAFE_NESTING,
    block_nesting_depth,
    markdown_split_is_safe,
    nesting_bound,
)

ENDINGS = ["\n", "\r\n", "\r"]


def _documents(ending: str, depth: int) -> list[str]:
    """Documents nesting `depth` blocks deep, after an ordinary first line."""
    return [
        ending.join(["# Intro", "> " * depth + "quoted"]),
        ending.join(["Intro", *(" " * (2 * level) + "- item" for level in range(depth))]),
        ending.join(["Intro", ">" * depth + " ```", "code", "```"]),
    ]


@pytest.mark.parametrize("ending", ENDINGS)
@pytest.mark.parametrize("depth", [1, 7, 60])
def test_the_bound_is_never_below_the_depth(ending: str, depth: int) -> None:
    for text in _documents(ending, depth):
        exact = block_nesting_depth(text)
        assert exact >= depth
        assert nesting_bound(text) >= exact, repr(text[:40])


@pytest.mark.parametrize("ending", ENDINGS)
def test_a_document_nested_past_the_limit_is_not_safe(ending: str) -> None:
    # Also where lines end with a lone CR: the deep line is not the first one.
    for text in _documents(ending, SAFE_NESTING + 30):
        assert nesting_bound(text, at_least=SAFE_NESTING + 1) > SAFE_NESTING
        assert not markdown_split_is_safe(text)
    for text in _documents(ending, 40):
        assert markdown_split_is_safe(text)


def test_an_empty_document_nests_nothing_one_line_of_text_one_block() -> None:
    assert nesting_bound("") == 0
    assert nesting_bound("text") == 1
