"""heading_index/skeleton.py: the block parser reads the document's skeleton,
and finds the same headings as in the whole text."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_budget import examples
from markdown_strategies import ANY_TEXT, markdown_documents
from mdchunks.heading_index import index
from mdchunks.heading_index.model import HeadingIndex
from mdchunks.heading_index.parse import encode
from mdchunks.heading_index.skeleton import Skeleton, skeleton

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
SPEC = json.loads((CORPORA / "commonmark" / "spec.json").read_text(encoding="utf-8"))
SETTINGS = settings(
    max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def _whole(source: bytes) -> Skeleton:
    return Skeleton(source, source)


def index_of_whole_text(text: str, monkeypatch: pytest.MonkeyPatch) -> HeadingIndex:
    """The index as it was before the skeleton: the parser reads every byte."""
    with monkeypatch.context() as patched:
        patched.setattr(index, "skeleton", _whole)
        return index.build_index(text)


def _variants(text: str) -> Iterator[str]:
    """The text, with other line endings, in containers, after front matter."""
    yield text
    yield text.replace("\n", "\r\n")
    yield text.replace("\n", "\r")
    yield "---\ntitle: a page of things\n---\n" + text
    yield "> " + text.replace("\n", "\n> ")
    yield "- " + text.replace("\n", "\n  ")


# Lines of every kind the skeleton treats apart, with tails of every kind.
PREFIXES = st.sampled_from(["", " ", "   ", "    ", "> ", "- ", "1. ", "  - ", "\t", "* ", "> > "])
BODIES = st.sampled_from(
    [
        "plain prose that goes on",
        "prose with `code` and *emphasis* and a [link](url)",
        "prose | with a pipe",
        "prose with <b>html</b> inline",
        "prose with a > sign",
        "prose\twith a tab",
        "# An ATX heading with words",
        "## Closed heading ##",
        "Setext text",
        "===",
        "---",
        "- - -",
        "* * * words",
        "```rust",
        "```",
        "~~~ info words",
        "``` a`b",
        '<div class="note">',
        "<div class words",
        "<script type words",
        "</div>",
        "<!-- a comment",
        "still in the comment -->",
        "<span>",
        "[ref]: /target",
        "[ref]:",
        "/url with spaces",
        "'a title'",
        "| a | b |",
        "||",
        "|",
        "Name |",
        "-",
        "|---|---|",
        "a | b",
        "cell text",
        "[ ] task words",
        "- [x] done words",
        "12. numbered words",
        "1) numbered words",
        "",
        "   ",
        "+++",
        "title = words",
        "Ünïcödé words ’quoted’",
        "\\# escaped words",
    ]
)


# Where the skeleton could go wrong, a heading is found or lost: so headings
# and underlines are drawn often, and lines at the top level half the time.
HEADINGS = st.sampled_from(["# A heading", "## Another one", "Words", "===", "---"])
LINES = st.tuples(st.one_of(st.just(""), PREFIXES), st.one_of(BODIES, HEADINGS))


@st.composite
def line_soup(draw: st.DrawFn) -> str:
    lines = draw(st.lists(LINES, max_size=16))
    ending = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    text = ending.join(prefix + body for prefix, body in lines)
    return text + (ending if draw(st.booleans()) else "")


@SETTINGS
@given(st.one_of(line_soup(), markdown_documents(), ANY_TEXT))
def test_the_skeleton_finds_the_headings_of_the_whole_text(text: str) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert index.build_index(text) == index_of_whole_text(text, monkeypatch)


# Malformed pipe tables that tree-sitter-markdown parses into error nodes,
# where shorter lines tipped its error recovery to other headings (found by a
# cold review's fuzzer): such a document is parsed whole.
ERROR_RECOVERY = [
    "> ||\n> -\nsome text\n# Next\n",
    "# Intro\n* ||\n  -\n#oops no\n",
    "# Intro\n\n> ||\n> -\nsome text\n\n# Next\n",
    "Name |\n---\nsome text\n|\n# Next\n",
    "| Name |\n-\nsome text\n|\n# Next\n",
    "# Intro\n\nKey |\n-\nvalue one\n|\n\n# Next\n",
    "#\n* ||\n  -\n#o n",
    "a|\n-\ne x\n|\n#",
]


@pytest.mark.parametrize("text", ERROR_RECOVERY)
def test_a_parse_with_errors_is_done_on_the_whole_text(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert index.build_index(text) == index_of_whole_text(text, monkeypatch)


def test_the_commonmark_examples_index_alike_in_every_variant(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    differ = [
        (example["example"], variant[:60])
        for example in SPEC
        for variant in _variants(example["markdown"])
        if index.build_index(variant) != index_of_whole_text(variant, monkeypatch)
    ]
    assert differ == []


@pytest.mark.parametrize("corpus", ["rust-book", "tldr"])
def test_the_bundled_corpora_index_alike(corpus: str, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = sorted((CORPORA / corpus).rglob("*.md"))
    assert len(paths) > 100
    differ = [
        path.name
        for path in paths
        for text in [path.read_text(encoding="utf-8")]
        if index.build_index(text) != index_of_whole_text(text, monkeypatch)
    ]
    assert differ == []


def test_prose_is_cut_after_its_first_letter_the_exceptions_stay_whole() -> None:
    lines = [
        b"Prose goes on and on.",  # cut
        b"- A list item, words",  # cut
        b"## A heading [with a link](x)",  # cut
        b"a | b",  # a table row: whole
        b"<div class=x>",  # an HTML block's start: whole
        b"words then --> an end",  # an HTML block's end condition: whole
        b"```rust",  # a fence: whole
        b"tab\there",  # whole
        b"---",  # letter-free: whole
        b"",
        b"[ref]:",  # a definition...
        b"/url with spaces",  # ...and its continuation: whole
        b"",
        b"After the blank line, cut again.",
    ]
    source = b"\n".join(lines) + b"\n"
    cut = skeleton(source)
    assert cut.source.split(b"\n") == [
        b"P",
        b"- A",
        b"## A",
        *lines[3:13],
        b"A",
        b"",
    ]
    # Line starts and ends map back to the document's.
    starts = [i for i in range(len(cut.source)) if i == 0 or cut.source[i - 1] == ord("\n")]
    originals = [i for i in range(len(source)) if i == 0 or source[i - 1] == ord("\n")]
    assert [cut.original(start) for start in starts] == originals
    assert cut.original(len(cut.source)) == len(source)


def test_the_skeleton_of_the_rust_book_is_a_fraction_of_it() -> None:
    sources = [
        encode(path.read_text(encoding="utf-8")) for path in (CORPORA / "rust-book").glob("*.md")
    ]
    whole = sum(len(source) for source in sources)
    assert sum(len(skeleton(source).source) for source in sources) < whole * 0.4
