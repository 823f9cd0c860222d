"""Sections (docs/sections.md) and the sections each chunk holds, checked
against independent computations: on every bundled file, for both chunkers,
and on generated documents."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis_budget import examples
from markdown_strategies import markdown_documents
from mdchunks.heading_index import ChunkOptions, build_index
from mdchunks.heading_index.blocks import front_matter_end
from mdchunks.heading_index.chunk import Chunking
from mdchunks.heading_index.chunkers import CHUNKERS
from mdchunks.heading_index.model import Section
from mdchunks.heading_index.sections import document_sections, rebuild
from mdchunks.plugin.chunking import chunk_markdown

CORPORA = Path(__file__).resolve().parents[2] / "corpora"
SAMPLE = Path(__file__).resolve().parents[2] / "sample"
# Every bundled markdown file but most of tldr's 7,000 one-section pages.
BUNDLED = sorted(
    [
        *CORPORA.glob("rust-book/*.md"),
        *SAMPLE.rglob("*.md"),
        *sorted(CORPORA.glob("tldr/**/*.md"))[:300],
    ]
)


def owner_of(sections: tuple[Section, ...], offset: int) -> int | None:
    """The section whose own span holds `offset`, by a plain scan."""
    for section in sections:
        if section.start <= offset < section.body_end:
            return section.ordinal
    return None


def held_by_scan(text: str, sections: tuple[Section, ...], start: int, end: int) -> list[int]:
    """Every section a character of text[start:end] that is not whitespace is in."""
    found: list[int] = []
    for offset in range(start, end):
        if text[offset].isspace():
            continue
        owner = owner_of(sections, offset)
        if owner is not None and owner not in found:
            found.append(owner)
    return found


def check_sections(text: str, chunking: Chunking) -> None:
    index = build_index(text)
    sections = chunking.sections
    headings = index.headings
    preamble = [s for s in sections if s.heading_text is None]
    # One section per heading, in order, plus a non-empty preamble first.
    assert [s.ordinal for s in sections] == list(range(len(sections)))
    assert len(sections) == len(headings) + len(preamble)
    assert all(s.ordinal == 0 for s in preamble)
    first = headings[0].start if headings else len(text)
    content = front_matter_end(text, first) if text[:3] in ("---", "+++") else 0
    assert bool(preamble) == bool(text[content:first].strip())
    for section, heading in zip(sections[len(preamble) :], headings, strict=True):
        assert (section.heading_text, section.heading_level, section.heading_path) == (
            heading.text,
            heading.level,
            heading.path,
        )
        assert (section.start, section.heading_end, section.end) == (
            heading.start,
            heading.end,
            heading.section_end,
        )
        parent = None if heading.parent is None else heading.parent + len(preamble)
        assert section.parent == parent
    # Own spans tile the document after the front matter.
    if sections:
        assert sections[0].start == (content if preamble else first)
        assert sections[-1].body_end == len(text)
    for before, after in itertools.pairwise(sections):
        assert before.body_end == after.start
    for section in sections:
        assert section.start <= section.heading_end <= section.body_end <= section.end
        assert section.start_line <= section.heading_end_line <= section.body_end_line
        assert section.body_end_line <= section.end_line
        assert section.start_line == text.count("\n", 0, section.start) + 1
        assert section.end_line == text.count("\n", 0, max(section.start, section.end - 1)) + 1
    # Each chunk's list is exactly the sections its non-whitespace text is in.
    for chunk in chunking.chunks:
        assert list(chunk.sections) == held_by_scan(text, sections, chunk.start, chunk.end)
    # Every section's text is rebuilt exactly from chunk texts and gaps.
    pieces = [(c.start, c.text) for c in chunking.chunks]
    pieces += [gap for s in sections for gap in s.gaps]
    for section in sections:
        assert rebuild(section.start, section.end, pieces) == text[section.start : section.end]
        for offset, gap in section.gaps:
            assert text[offset : offset + len(gap)] == gap
            assert section.start <= offset and offset + len(gap) <= section.body_end


@pytest.mark.parametrize("chunker", sorted(CHUNKERS))
def test_sections_equal_the_heading_index_on_every_bundled_file(chunker: str) -> None:
    options = ChunkOptions(chunker=chunker)
    assert len(BUNDLED) > 300
    for path in BUNDLED:
        text = path.read_text(encoding="utf-8")
        check_sections(text, chunk_markdown(text, options))


@pytest.mark.parametrize("chunker", sorted(CHUNKERS))
@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=markdown_documents())
def test_sections_hold_on_generated_documents(chunker: str, text: str) -> None:
    check_sections(
        text,
        chunk_markdown(
            text, ChunkOptions(chunker=chunker, chunk_size=120, min_chunk_size=60, chunk_overlap=20)
        ),
    )


@pytest.mark.parametrize(
    ("text", "paths"),
    [
        # A page that opens with a script block: its own preamble, then the H1.
        ("<script setup>\nimport X\n</script>\n\n# Title\n\nBody\n", [(), ("Title",)]),
        # An MDX import before the H1.
        ("import Tabs from '@theme/Tabs';\n\n# Guide\n\ntext\n", [(), ("Guide",)]),
        # Front matter and blank lines only: no preamble.
        ("---\ntitle: x\n---\n\n\n# Title\n\nBody\n", [("Title",)]),
        # No heading at all: the whole text is the preamble.
        ("just text\n\nmore text\n", [()]),
        # Whitespace only: no section.
        ("  \n\n\t\n", []),
    ],
)
def test_the_preamble_is_what_comes_before_the_first_heading(
    text: str, paths: list[tuple[str, ...]]
) -> None:
    sections = document_sections(text, build_index(text))
    assert [s.heading_path for s in sections] == paths
    for chunker in CHUNKERS:
        check_sections(text, chunk_markdown(text, ChunkOptions(chunker=chunker)))


def test_a_chunk_holding_the_next_heading_names_both_sections() -> None:
    text = "# Watchers\n\nBasic text.\n\n## Deep Watchers\n\nDeep watch text.\n"
    (chunk,) = chunk_markdown(text).chunks
    assert chunk.heading_path == ("Watchers",)  # the spec's rule: where it starts
    assert chunk.sections == (0, 1)  # ...and it holds both


def test_a_heading_line_alone_in_a_chunk_counts_as_held() -> None:
    # The heading's own body is empty, its line is in the chunk: held.
    text = "# A\n\ntext\n\n## B\n\n## C\n\nmore\n"
    (chunk,) = chunk_markdown(text).chunks
    assert chunk.sections == (0, 1, 2)


def test_rebuild_refuses_a_hole() -> None:
    with pytest.raises(ValueError, match="no stored text for offsets 3-5"):
        rebuild(0, 8, [(0, "abc"), (5, "fgh")])
