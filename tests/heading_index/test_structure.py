"""The structure-first chunker (DESIGN section 10) on hand-written documents.

One test (or a few) per rule. Oversized sections go to a fake budget
splitter that records what it was given and cuts at blank lines, so every
expected span here can be worked out by hand; the real cocoindex splitter is
exercised by the property tests.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from mdchunks.heading_index import build_index
from mdchunks.heading_index.structure import (
    StructureChunk,
    StructureOptions,
    StructureResult,
    budget_split_from,
    splitting_index,
    structure_chunks,
)


class ParagraphSplitter:
    """A fake `BudgetSplit`: whole paragraphs packed up to chunk_size, no overlap.

    It records every text it is handed, to show that a section goes alone.
    """

    def __init__(self) -> None:
        self.calls: list[str] = []

    def __call__(
        self, text: str, /, *, chunk_size: int, min_chunk_size: int, chunk_overlap: int
    ) -> list[tuple[int, int]]:
        self.calls.append(text)
        spans: list[tuple[int, int]] = []
        start = 0
        for end in _paragraph_ends(text):
            if spans and len(text[spans[-1][0] : end].encode()) <= chunk_size:
                spans[-1] = (spans[-1][0], end)
            else:
                spans.append((start, end))
            start = end
        return spans


def _paragraph_ends(text: str) -> list[int]:
    ends = [i for i in range(len(text)) if text.startswith("\n\n", i)]
    return [*ends, len(text)]


def chunk(
    text: str, splitter: ParagraphSplitter | None = None, **options: object
) -> StructureResult:
    return structure_chunks(
        text,
        build_index(text),
        StructureOptions(**options),  # type: ignore[arg-type]
        splitter or ParagraphSplitter(),
    )


def texts(result: StructureResult) -> list[str]:
    return [c.text for c in result.chunks]


def assert_verbatim(text: str, chunks: Sequence[StructureChunk]) -> None:
    for c in chunks:
        assert c.text == text[c.start : c.end]


# --- rules 1-3: sections, excluded headings, the preamble ---------------------


def test_each_splitting_heading_starts_a_chunk_that_excludes_the_heading_line() -> None:
    doc = "# Guide\n\nWelcome.\n\n## Install\n\nRun it.\n"
    result = chunk(doc, min_chunk_size=0)
    assert texts(result) == ["Welcome.", "Run it."]
    guide, install = result.chunks
    assert (guide.heading_text, guide.heading_level, guide.heading_path) == ("Guide", 1, ("Guide",))
    assert guide.breadcrumb == "Guide"
    assert guide.embed_text == "Guide\n\nWelcome."
    assert install.heading_path == ("Guide", "Install")
    assert install.embed_text == "Guide > Install\n\nRun it."
    assert install.parent_position == 0
    assert_verbatim(doc, result.chunks)


def test_h1_directly_followed_by_h2_makes_no_empty_chunk() -> None:
    doc = "# Guide\n## Install\n\nRun it.\n"
    result = chunk(doc)
    assert texts(result) == ["Run it."]
    (only,) = result.chunks
    # The H1 has no text of its own: the breadcrumb still names it, and the
    # first chunk of its section is this one, which is never its own parent.
    assert only.heading_path == ("Guide", "Install")
    assert only.breadcrumb == "Guide > Install"
    assert only.parent_position is None


def test_h4_right_after_h2_stays_in_the_body() -> None:
    doc = "## Config\n#### Advanced\n\nTune it.\n"
    (only,) = chunk(doc).chunks
    assert only.text == "#### Advanced\n\nTune it."
    assert (only.heading_text, only.heading_level) == ("Config", 2)
    assert only.embed_text == "Config\n\n#### Advanced\n\nTune it."


def test_split_levels_makes_deeper_headings_split_too() -> None:
    doc = "## Config\n#### Advanced\n\nTune it.\n"
    result = chunk(doc, split_levels=4)
    assert texts(result) == ["Tune it."]
    assert result.chunks[0].heading_path == ("Config", "Advanced")


def test_split_levels_one_keeps_h2_in_the_body() -> None:
    doc = "# A\n\naa\n\n## B\n\nbb\n"
    result = chunk(doc, split_levels=1)
    assert texts(result) == ["aa\n\n## B\n\nbb"]
    assert result.merges == 0


def test_setext_headings_are_excluded_through_their_underline() -> None:
    doc = "Guide\n=====\n\nWelcome.\n\nInstall\n-------\nRun it.\n"
    result = chunk(doc, min_chunk_size=0)
    assert texts(result) == ["Welcome.", "Run it."]
    assert result.chunks[1].heading_path == ("Guide", "Install")


def test_a_heading_inside_a_fence_is_content() -> None:
    doc = "# Shell\n\n```sh\n# comment, not a heading\n```\n"
    (only,) = chunk(doc).chunks
    assert only.text == "```sh\n# comment, not a heading\n```"


def test_preamble_is_a_chunk_with_null_columns() -> None:
    doc = "Intro line.\n\n# Guide\n\nWelcome.\n"
    preamble, guide = chunk(doc).chunks
    assert preamble.text == "Intro line."
    assert (preamble.heading_text, preamble.heading_level, preamble.heading_path) == (
        None,
        None,
        (),
    )
    assert (preamble.breadcrumb, preamble.heading, preamble.parent_position) == (None, None, None)
    assert preamble.embed_text == "Intro line."
    assert guide.text == "Welcome."


def test_whitespace_only_preamble_makes_no_chunk() -> None:
    assert texts(chunk("\n  \n\t\n# Guide\n\nWelcome.\n")) == ["Welcome."]


def test_a_document_of_only_front_matter_has_no_chunks() -> None:
    assert chunk("---\ntitle: Guide\ntags: [a, b]\n---\n").chunks == ()
    assert chunk("+++\ntitle = 'Guide'\n+++\n\n").chunks == ()


def test_front_matter_is_left_out_of_the_preamble() -> None:
    doc = "---\ntitle: Guide\n---\n\nIntro line.\n\n# Guide\n\nWelcome.\n"
    preamble, _ = chunk(doc).chunks
    assert preamble.text == "Intro line."
    assert preamble.start == doc.index("Intro")


def test_a_thematic_break_later_on_is_not_front_matter() -> None:
    doc = "Intro.\n\n---\n\nMore intro.\n"
    assert texts(chunk(doc)) == ["Intro.\n\n---\n\nMore intro."]


def test_document_without_headings_is_one_preamble() -> None:
    doc = "Just text.\n\nMore text.\n"
    (only,) = chunk(doc).chunks
    assert only.text == "Just text.\n\nMore text."
    assert only.heading_path == ()


def test_empty_and_blank_documents_have_no_chunks() -> None:
    assert chunk("").chunks == ()
    assert chunk(" \n\n\t\n").chunks == ()


def test_chunk_spans_are_trimmed_but_keep_the_first_line_indentation() -> None:
    doc = "# Code\n\n\n    indented code\n    more   \n\n\n"
    (only,) = chunk(doc).chunks
    assert only.text == "    indented code\n    more"


def test_crlf_line_endings() -> None:
    doc = "# A\r\n\r\naa\r\n\r\n## B\r\nbb\r\n"
    result = chunk(doc, min_chunk_size=0)
    assert texts(result) == ["aa", "bb"]
    assert_verbatim(doc, result.chunks)


# --- rule 4: oversized sections ---------------------------------------------------


def five_kb_section() -> tuple[str, list[str]]:
    paragraphs = [f"Paragraph {i}: " + "word " * 98 + "end." for i in range(10)]
    doc = "# Big\n\n" + "\n\n".join(paragraphs) + "\n\n# Next\n\nSmall.\n"
    return doc, paragraphs


def test_a_5_kb_section_is_split_alone_and_every_piece_names_its_heading() -> None:
    doc, paragraphs = five_kb_section()
    splitter = ParagraphSplitter()
    result = chunk(doc, splitter, chunk_size=2000, min_chunk_size=0)
    body = "\n\n".join(paragraphs)
    assert len(body.encode()) > 5000
    # The splitter saw the section body alone, not the document.
    assert splitter.calls == [body]
    big = [c for c in result.chunks if c.heading_text == "Big"]
    assert len(big) == 4  # 10 paragraphs of ~510 bytes: 3 + 3 + 3 + 1
    assert {(c.heading_text, c.heading_level, c.heading_path, c.breadcrumb) for c in big} == {
        ("Big", 1, ("Big",), "Big")
    }
    assert all(c.embed_text == f"Big\n\n{c.text}" for c in big)
    assert big[0].text == "\n\n".join(paragraphs[:3])
    assert all(len(c.text.encode()) <= 2000 for c in big)
    assert result.chunks[-1].text == "Small."
    assert result.oversized_sections == 1
    assert_verbatim(doc, result.chunks)


def test_the_splitters_overlap_is_kept() -> None:
    def overlapping(
        text: str, /, *, chunk_size: int, min_chunk_size: int, chunk_overlap: int
    ) -> list[tuple[int, int]]:
        half = len(text) // 2
        return [(0, half + chunk_overlap), (half - chunk_overlap, len(text))]

    doc = "# Big\n\n" + "x" * 300 + "\n"
    result = structure_chunks(doc, build_index(doc), StructureOptions(100, 50, 10), overlapping)
    first, second = result.chunks
    assert (first.start, first.end) == (7, 7 + 160)
    assert (second.start, second.end) == (7 + 140, 7 + 300)


def test_a_splitter_span_outside_its_text_is_an_error() -> None:
    def broken(
        text: str, /, *, chunk_size: int, min_chunk_size: int, chunk_overlap: int
    ) -> list[tuple[int, int]]:
        return [(0, len(text) + 1)]

    doc = "# Big\n\n" + "x" * 300 + "\n"
    with pytest.raises(ValueError, match="outside its text"):
        structure_chunks(doc, build_index(doc), StructureOptions(100, 50, 10), broken)


def test_content_the_splitter_leaves_out_is_folded_into_a_neighbour() -> None:
    def lossy(
        text: str, /, *, chunk_size: int, min_chunk_size: int, chunk_overlap: int
    ) -> list[tuple[int, int]]:
        # Like cocoindex with a tiny min_chunk_size: a list marker goes missing,
        # and here the tail too.
        return [(2, 50), (52, len(text) - 3)]

    doc = "# Big\n\n- " + "x" * 48 + "\n\n" + "y" * 100 + "zzz\n"
    result = structure_chunks(doc, build_index(doc), StructureOptions(100, 0, 0), lossy)
    assert texts(result) == ["- " + "x" * 48, "y" * 100 + "zzz"]


def test_an_oversized_preamble_is_split_too_and_keeps_null_columns() -> None:
    doc = "\n\n".join("p" * 90 for _ in range(5)) + "\n\n# A\n\naa\n"
    result = chunk(doc, chunk_size=200, min_chunk_size=0, chunk_overlap=0)
    assert texts(result)[:3] == ["p" * 90 + "\n\n" + "p" * 90] * 2 + ["p" * 90]
    assert all(c.heading is None for c in result.chunks[:3])


def test_budgets_count_utf8_bytes() -> None:
    # 600 characters, 1200 bytes: over a 1000-byte budget.
    doc = "# É\n\n" + "é" * 300 + "\n\n" + "é" * 300 + "\n"
    result = chunk(doc, chunk_size=1000, min_chunk_size=0, chunk_overlap=0)
    assert texts(result) == ["é" * 300, "é" * 300]


# --- rule 5: merging ------------------------------------------------------------------


def ten_tiny_sections() -> str:
    return "# Topics\n\n" + "".join(f"## Topic {i}\n\nText {i}.\n\n" for i in range(10))


def test_ten_tiny_sections_merge_forward_into_one_chunk() -> None:
    doc = ten_tiny_sections()
    result = chunk(doc)
    (merged,) = result.chunks
    assert merged.start == doc.index("Text 0.")
    assert merged.text == doc[merged.start :].rstrip()
    assert "## Topic 9" in merged.text  # headings inside a merged chunk stay in its text
    assert result.merges == 9
    # The classic rule: the path at the start.
    assert merged.heading_path == ("Topics", "Topic 0")
    assert merged.parent_position is None


def test_common_rule_names_the_deepest_common_ancestor() -> None:
    result = chunk(ten_tiny_sections(), merged_path="common")
    (merged,) = result.chunks
    assert (merged.heading_text, merged.heading_level, merged.heading_path) == (
        "Topics",
        1,
        ("Topics",),
    )
    assert merged.breadcrumb == "Topics"


def test_common_rule_over_top_level_sections_names_the_root() -> None:
    doc = "# A\n\naa\n\n# B\n\nbb\n"
    (merged,) = chunk(doc, merged_path="common").chunks
    assert merged.text == "aa\n\n# B\n\nbb"
    assert (merged.heading_text, merged.heading_level, merged.heading_path) == (None, None, ())
    assert (merged.breadcrumb, merged.embed_text) == (None, merged.text)


def test_common_rule_keeps_a_parent_that_holds_its_children() -> None:
    doc = "## A\n\naa\n\n### A.1\n\nbb\n"
    for rule in ("first", "common"):
        (merged,) = chunk(doc, merged_path=rule).chunks
        assert merged.heading_path == ("A",)


def test_a_merge_stops_at_a_shallower_section() -> None:
    doc = "# R\n\nr\n\n## A\n\naa\n\n### A.1\n\nbb\n\n## B\n\ncc\n"
    result = chunk(doc, min_chunk_size=1000, merged_path="common")
    # R absorbs everything (all deeper); restart at a level-3 run to see the stop:
    assert texts(result) == ["r\n\n## A\n\naa\n\n### A.1\n\nbb\n\n## B\n\ncc"]
    doc = "### A.1\n\naa\n\n### A.2\n\nbb\n\n## B\n\ncc\n"
    result = chunk(doc)
    assert texts(result) == ["aa\n\n### A.2\n\nbb", "cc"]
    assert result.merges == 1


def test_a_merge_stops_before_exceeding_chunk_size() -> None:
    doc = "## A\n\n" + "a" * 40 + "\n\n## B\n\n" + "b" * 40 + "\n\n## C\n\n" + "c" * 40 + "\n"
    result = chunk(doc, chunk_size=100, min_chunk_size=90, chunk_overlap=0)
    # A + B is 40 + 2 + 5 + 2 + 40 = 89 bytes (< 90, keeps going); + C would be 138.
    assert texts(result) == ["a" * 40 + "\n\n## B\n\n" + "b" * 40, "c" * 40]


def test_a_run_stops_once_it_reaches_min_chunk_size() -> None:
    doc = "## A\n\n" + "a" * 60 + "\n\n## B\n\n" + "b" * 60 + "\n\n## C\n\n" + "c" * 10 + "\n"
    result = chunk(doc, chunk_size=1000, min_chunk_size=100)
    assert texts(result) == ["a" * 60 + "\n\n## B\n\n" + "b" * 60, "c" * 10]


def test_a_merge_does_not_end_on_a_heading_only_section() -> None:
    doc = "## A\n\naa\n\n### Empty\n\n# Next\n\n" + "n" * 50 + "\n"
    result = chunk(doc)
    assert texts(result) == ["aa", "n" * 50]
    assert result.merges == 0


def test_a_heading_only_section_between_merged_ones_is_carried_along() -> None:
    doc = "## A\n\naa\n\n### Empty\n\n### C\n\ncc\n"
    result = chunk(doc)
    assert texts(result) == ["aa\n\n### Empty\n\n### C\n\ncc"]
    assert result.merges == 2


def test_the_preamble_never_merges() -> None:
    doc = "Intro.\n\n# A\n\naa\n"
    assert texts(chunk(doc)) == ["Intro.", "aa"]


def test_min_chunk_size_zero_never_merges() -> None:
    result = chunk(ten_tiny_sections(), min_chunk_size=0)
    assert len(result.chunks) == 10
    assert result.merges == 0


# --- parents (DESIGN section 3 over splitting headings) ---------------------------------


def test_parents_point_at_the_first_chunk_of_the_parent_section() -> None:
    doc = "# A\n\naa\n\n## B\n\nbb\n\n### C\n\ncc\n\n## D\n\ndd\n\n# E\n\nee\n"
    result = chunk(doc, min_chunk_size=0)
    assert texts(result) == ["aa", "bb", "cc", "dd", "ee"]
    assert [c.parent_position for c in result.chunks] == [None, 0, 1, 0, None]


def test_first_rule_columns_equal_assign_over_the_splitting_headings() -> None:
    from mdchunks.heading_index import assign

    doc = "Intro.\n\n# A\n\naa\n\n## B\n\nbb\n\n#### deep\n\n## C\n\ncc\n\n# D\n\ndd\n"
    result = chunk(doc)
    expected = assign(
        splitting_index(build_index(doc), 3), [(c.start, c.end) for c in result.chunks]
    )
    actual = [
        (c.heading_text, c.heading_level, c.heading_path, c.parent_position) for c in result.chunks
    ]
    assert actual == [
        (e.heading_text, e.heading_level, e.heading_path, e.parent_position) for e in expected
    ]


def test_splitting_index_keeps_section_ends_and_paths_and_renumbers_parents() -> None:
    index = build_index("# A\n#### x\n## B\n##### y\n### C\n")
    kept = splitting_index(index, 3)
    assert [h.text for h in kept.headings] == ["A", "B", "C"]
    assert [h.parent for h in kept.headings] == [None, 0, 1]
    full = {h.text: h for h in index.headings}
    assert all(
        (h.section_end, h.path) == (full[h.text].section_end, full[h.text].path)
        for h in kept.headings
    )


# --- rule 7 through the chunker --------------------------------------------------------


def test_a_breadcrumb_of_six_long_headings_is_truncated_from_the_left() -> None:
    names = [f"Level {n} " + "heading words " * 6 for n in range(1, 7)]
    doc = "".join(f"{'#' * n} {name}\n\n" for n, name in enumerate(names, 1)) + "Deep text.\n"
    result = chunk(doc, split_levels=6, breadcrumb_budget=256)
    (only,) = result.chunks
    assert only.heading_path == tuple(name.strip() for name in names)
    assert only.breadcrumb is not None
    assert only.breadcrumb.startswith("… > ")
    assert only.breadcrumb.endswith(names[-1].strip())
    assert len(only.breadcrumb.encode()) <= 256
    assert only.embed_text == f"{only.breadcrumb}\n\nDeep text."
    assert result.breadcrumb_truncations == 1


def test_breadcrumb_parts_are_sanitised() -> None:
    doc = "# Tabs\tand  spaces\n\ntext\n"
    (only,) = chunk(doc).chunks
    assert only.breadcrumb == "Tabs and spaces"


# --- the API around it -----------------------------------------------------------------


def test_budget_split_from_adapts_a_cocoindex_like_splitter() -> None:
    class Position:
        def __init__(self, offset: int) -> None:
            self.char_offset = offset

    class Piece:
        def __init__(self, start: int, end: int) -> None:
            self.start, self.end = Position(start), Position(end)

    seen: dict[str, object] = {}

    class Splitter:
        def split(
            self,
            text: str,
            chunk_size: int,
            *,
            min_chunk_size: int | None = None,
            chunk_overlap: int | None = None,
            language: str | None = None,
        ) -> list[Piece]:
            seen.update(size=chunk_size, min=min_chunk_size, overlap=chunk_overlap, lang=language)
            return [Piece(0, 3), Piece(2, len(text))]

    split = budget_split_from(Splitter())
    assert split("abcdef", chunk_size=10, min_chunk_size=5, chunk_overlap=1) == [(0, 3), (2, 6)]
    assert seen == {"size": 10, "min": 5, "overlap": 1, "lang": "markdown"}


@pytest.mark.parametrize(
    "options",
    [
        {"chunk_size": 0},
        {"min_chunk_size": 3000},
        {"chunk_overlap": 2000},
        {"split_levels": 0},
        {"split_levels": 7},
        {"merged_path": "last"},
        {"breadcrumb_budget": 2},
    ],
)
def test_invalid_options_are_refused(options: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        StructureOptions(**options)  # type: ignore[arg-type]


def test_an_index_of_another_text_is_refused() -> None:
    with pytest.raises(ValueError, match="code points"):
        structure_chunks("# A\n", build_index("# AB\n"), StructureOptions(), ParagraphSplitter())


def test_a_vitepress_page_opens_with_its_first_heading_not_a_preamble() -> None:
    # Front matter, then H1, H2, H3 sections small enough to merge into one
    # chunk: no preamble chunk (front matter is not content), and the merged
    # chunk takes the H1's columns, as `assign` gives the budget splitter's
    # chunk that spans the same text.
    doc = (
        "---\ntitle: Teleport\nlayout: doc\n---\n\n"
        "# Built-in Components\n\nIntro.\n\n## Teleport\n\nMoves content.\n\n"
        "### Props\n\nto, disabled\n"
    )
    (only,) = chunk(doc).chunks
    assert only.text.startswith("Intro.") and only.text.endswith("to, disabled")
    assert (only.heading_text, only.heading_level, only.heading_path) == (
        "Built-in Components",
        1,
        ("Built-in Components",),
    )
    assert only.breadcrumb == "Built-in Components"
