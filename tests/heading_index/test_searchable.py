"""Which spans are text to search (heading_index/searchable.py, docs/search.md)."""

from __future__ import annotations

import pytest
from mdchunks.heading_index import build_index
from mdchunks.heading_index.searchable import (
    front_matter,
    searchable_text,
    unsearched_spans,
    within,
)

PAGE = "---\ntitle: Middleware\n---\nimport X from 'x';\n\n# Middleware\n\nBody.\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("---\ntitle: A\n---\nbody", (4, 13, 17)),
        ("+++\ntitle = 'A'\n+++\r\nbody", (4, 16, 21)),
        ("---\ntitle: A\n...\nbody", (4, 13, 17)),  # YAML's document end closes it too
        ("\ufeff---\ntitle: A\n---\n", None),  # a decoded document has no BOM: text
        ("---\ntitle: A\nno closing fence", None),
        ("# No front matter\n---\n", None),
        ("", None),
    ],
)
def test_front_matter_is_the_fenced_block_on_the_first_line(
    text: str, expected: tuple[int, int, int] | None
) -> None:
    assert front_matter(text) == expected


def test_front_matter_and_mdx_esm_are_unsearched_and_nothing_else() -> None:
    esm = PAGE.index("import")
    assert unsearched_spans(PAGE, build_index(PAGE, "mdx")) == (
        (0, esm),
        (esm, esm + len("import X from 'x';")),
    )
    # CommonMark has no ESM: the import line is text there.
    assert unsearched_spans(PAGE, build_index(PAGE)) == ((0, esm),)
    assert unsearched_spans("# Plain\n\ntext\n", build_index("# Plain\n\ntext\n")) == ()


def test_a_chunks_spans_are_offsets_into_its_text() -> None:
    spans = ((0, 10), (20, 30))
    starts = [0, 20]
    assert within(spans, starts, 5, 25) == (0, 5, 15, 20)
    assert within(spans, starts, 10, 20) == ()
    assert within(spans, starts, 25, 40) == (0, 5)


def test_the_searchable_text_has_the_same_length_and_offsets() -> None:
    text = "---\nkey: word\n---\nBody words."
    searched = searchable_text(text, (0, 18))
    assert len(searched) == len(text)
    assert searched == " " * 18 + "Body words."
    assert searchable_text(text, ()) is text
