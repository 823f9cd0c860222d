"""Every CommonMark spec example: the headings found equal markdown-it-py's.

Two runs per example: the example as written (which lines are headings), and
its setext variant (every top-level paragraph underlined with `===`), which
puts the spec's inline examples into heading text. Compared: line of the
first line, level and text of every top-level heading.
"""

from __future__ import annotations

import pytest
from mdchunks.heading_index import build_index

from spikes.commonmark_reference import (
    ReferenceHeading,
    line_of,
    reference_headings,
    setext_variant,
    spec_examples,
)

# The one list of deviations from the reference, by test id, each with its reason.
# A listed test that starts agreeing fails (strict), so the list cannot go stale.
DEVIATIONS: dict[str, str] = {
    "example-096": (
        "front matter: the document opens with `---`, a line, `---`; docs/heading-index.md "
        "makes that YAML front matter (tree-sitter-markdown's "
        "minus_metadata), which never yields headings; CommonMark has no front "
        "matter and sees a thematic break and a setext H2"
    ),
    "example-096-setext": "front matter, as example-096",
    "example-201-setext": (
        "markdown-it takes the setext underline in `[foo]:\\n===` as the link "
        "destination of a definition; cmark resolves definitions in the "
        "paragraph above the underline, where `[foo]:` alone is no definition, "
        "so it is a heading `[foo]:` (what we report)"
    ),
    "example-554-setext": (
        "tree-sitter-markdown 0.5 accepts the blank label in `[\\n ]: /uri` as a "
        "link reference definition (CommonMark requires a non-blank label), so "
        "the lines never form the paragraph that `===` would turn into a heading"
    ),
}

EXAMPLES = spec_examples()


def _found(markdown: str) -> list[ReferenceHeading]:
    return [
        ReferenceHeading(line=line_of(markdown, h.start), level=h.level, text=h.text)
        for h in build_index(markdown).headings
    ]


def _check(test_id: str, markdown: str) -> None:
    found, expected = _found(markdown), reference_headings(markdown)
    if test_id in DEVIATIONS:
        assert found != expected, f"{test_id} now agrees with the reference: drop its deviation"
        pytest.xfail(DEVIATIONS[test_id])
    assert found == expected


@pytest.mark.parametrize("example", EXAMPLES, ids=[f"example-{e['example']:03d}" for e in EXAMPLES])
def test_headings_match_commonmark(example: dict[str, object]) -> None:
    _check(f"example-{example['example']:03d}", str(example["markdown"]))


SETEXT_EXAMPLES = [e for e in EXAMPLES if setext_variant(str(e["markdown"])) != e["markdown"]]


@pytest.mark.parametrize(
    "example", SETEXT_EXAMPLES, ids=[f"example-{e['example']:03d}-setext" for e in SETEXT_EXAMPLES]
)
def test_heading_text_matches_commonmark_inline(example: dict[str, object]) -> None:
    _check(f"example-{example['example']:03d}-setext", setext_variant(str(example["markdown"])))


def test_every_example_is_run() -> None:
    assert len(EXAMPLES) == 655
    assert {int(str(e["example"])) for e in EXAMPLES} == set(range(1, 656))


def test_deviations_name_real_tests() -> None:
    ids = {f"example-{e['example']:03d}" for e in EXAMPLES}
    ids |= {f"example-{e['example']:03d}-setext" for e in SETEXT_EXAMPLES}
    assert set(DEVIATIONS) <= ids
