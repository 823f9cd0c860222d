"""assign (DESIGN section 3) on hand-worked examples."""

from __future__ import annotations

import itertools

from mdchunks.heading_index import ChunkHeadings, HeadingIndex, assign, build_index

PREAMBLE = ChunkHeadings(None, None, (), None)

#      0         1         2         3         4         5         6
#      0123456789012345678901234567890123456789012345678901234567890123
DOC = "intro\n# A\nalpha text\n### B\nbeta\n## C\ngamma\n# D\ndelta\n"
A, B, C, D = (DOC.index(marker) for marker in ("# A", "### B", "## C", "# D"))


def index() -> HeadingIndex:
    return build_index(DOC)


def test_headings_of_the_worked_document() -> None:
    assert [(h.text, h.start, h.section_end, h.path) for h in index().headings] == [
        ("A", A, D, ("A",)),
        ("B", B, C, ("A", "B")),
        ("C", C, D, ("A", "C")),
        ("D", D, len(DOC), ("D",)),
    ]


def test_preamble_chunks_get_null_columns() -> None:
    assert assign(index(), [(0, 3), (3, A)]) == [PREAMBLE, PREAMBLE]


def test_a_chunk_starting_on_a_heading_is_governed_by_it() -> None:
    (chunk,) = assign(index(), [(A, B)])
    assert chunk == ChunkHeadings("A", 1, ("A",), None)  # a root heading: no parent


def test_parent_is_the_first_chunk_overlapping_the_ancestor_section() -> None:
    spans = [(0, 4), (4, B + 2), (B + 2, C + 1), (C + 1, len(DOC))]
    assert assign(index(), spans) == [
        PREAMBLE,  # "intro" before the first heading
        # starts at offset 4, in the preamble: still no heading
        PREAMBLE,
        # starts inside B (skipped level: H1 -> H3); B's ancestor A's section
        # [A, D) is first overlapped by chunk 1 (which ends past A)
        ChunkHeadings("B", 3, ("A", "B"), 1),
        # starts inside C; ancestor A again -> chunk 1
        ChunkHeadings("C", 2, ("A", "C"), 1),
    ]


def test_overlapping_chunks_pick_the_first_overlap() -> None:
    spans = [(0, A + 3), (A, B + 3), (B, len(DOC))]  # overlaps, as a splitter with overlap
    assert [c.parent_position for c in assign(index(), spans)] == [None, None, 0]


def test_never_its_own_parent() -> None:
    # A chunker that leaves the headings' lines out (the structure-first
    # chunker does): A's body is empty here, so the first chunk overlapping
    # A's section is B's own body chunk, and B gets no parent.
    text = "# A\n## B\nbody\n"
    built = build_index(text)
    body = text.index("body")
    assert assign(built, [(body, len(text))]) == [ChunkHeadings("B", 2, ("A", "B"), None)]


def test_chunk_starting_before_the_section_end_but_after_a_sibling() -> None:
    spans = [(A, C), (C, D), (D, len(DOC))]
    assert assign(index(), spans) == [
        ChunkHeadings("A", 1, ("A",), None),
        ChunkHeadings("C", 2, ("A", "C"), 0),
        ChunkHeadings("D", 1, ("D",), None),
    ]


def test_no_headings_and_no_spans() -> None:
    assert assign(build_index("just text\n"), [(0, 4), (4, 10)]) == [PREAMBLE, PREAMBLE]
    assert assign(index(), []) == []
    assert assign(build_index(""), [(0, 0)]) == [PREAMBLE]


def test_bisect_not_scan_per_chunk() -> None:
    # 5,000 headings and chunks: a scan per chunk would be 2.5e7 steps.
    text = "".join(f"{'#' * (i % 6 + 1)} h{i}\nbody\n" for i in range(5_000))
    built = build_index(text)
    starts = [h.start for h in built.headings]
    spans = list(itertools.pairwise([*starts, len(text)]))
    assigned = assign(built, spans)
    assert assigned[7].heading_path == ("h6", "h7")
    assert assigned[7].parent_position == 6


# --- front matter and blank lines before a chunk's first heading (DESIGN section 3) ---

VITEPRESS = (
    "---\ntitle: Teleport\nlayout: doc\n---\n\n"
    "# Built-in Components\n\nIntro.\n\n## Teleport\n\nMoves content.\n\n"
    "### Props\n\nto, disabled\n"
)


def test_a_chunk_of_front_matter_then_headings_is_governed_by_its_first_heading() -> None:
    # The first chunk of a VitePress page often spans the front matter, the
    # H1, an H2 and an H3: it starts in the front matter, but nothing but
    # front matter and a blank line comes before the H1, so it is the H1's.
    built = build_index(VITEPRESS)
    h1 = built.headings[0]
    assert (h1.text, h1.lead_in) == ("Built-in Components", h1.start)  # lead-in: all of [0, h1)
    assert assign(built, [(0, len(VITEPRESS))]) == [
        ChunkHeadings("Built-in Components", 1, ("Built-in Components",), None)
    ]
    # Starting anywhere in the front matter or the blank line after it.
    for start in (1, VITEPRESS.index("layout"), h1.start - 1):
        assert assign(built, [(start, len(VITEPRESS))])[0].heading_text == "Built-in Components"


def test_toml_front_matter_and_crlf_too() -> None:
    text = "+++\r\ntitle = 'x'\r\n+++\r\n\r\n\r\n## Install\r\nbody\r\n"
    (columns,) = assign(build_index(text), [(0, len(text))])
    assert (columns.heading_text, columns.heading_level) == ("Install", 2)


def test_content_after_the_front_matter_is_still_the_preamble() -> None:
    text = "---\ntitle: x\n---\n\nAn intro paragraph.\n\n# Guide\n\nbody\n"
    built = build_index(text)
    assert built.headings[0].lead_in == len("\n\n")  # the blank line before it only
    assert assign(built, [(0, len(text))]) == [PREAMBLE]
    assert assign(built, [(text.index("An intro"), len(text))]) == [PREAMBLE]
    after_intro = text.index("\n\n# Guide")
    assert assign(built, [(after_intro, len(text))])[0].heading_text == "Guide"


def test_a_chunk_of_front_matter_alone_holds_no_heading() -> None:
    built = build_index(VITEPRESS)
    first = built.headings[0].start
    assert assign(built, [(0, first - 1), (first - 1, first), (first, len(VITEPRESS))]) == [
        PREAMBLE,
        PREAMBLE,
        ChunkHeadings("Built-in Components", 1, ("Built-in Components",), None),
    ]


def test_blank_lines_before_any_heading_are_not_content_either() -> None:
    # Without front matter: blank lines at the top, and between sections. A
    # chunk that starts on the blank line before `## B` is B's, not A's.
    text = "\n\n# A\nalpha\n\n\n## B\nbeta\n"
    built = build_index(text)
    a, b = built.headings
    assert (a.lead_in, b.lead_in) == (2, 3)  # "\n\n"; "\n\n\n" after "alpha"
    blank_before_b = text.index("alpha") + len("alpha")
    assert assign(built, [(0, blank_before_b), (blank_before_b, len(text))]) == [
        ChunkHeadings("A", 1, ("A",), None),
        ChunkHeadings("B", 2, ("A", "B"), 0),
    ]
    # Text before the heading that is not blank: governed by A, as before.
    assert assign(built, [(text.index("pha"), len(text))])[0].heading_text == "A"


def test_a_front_matter_fence_later_on_is_a_thematic_break() -> None:
    # `---` that does not open the document is no front matter: the text
    # before the heading is content, the chunk the preamble's.
    text = "Intro.\n\n---\n\n# Guide\nbody\n"
    assert assign(build_index(text), [(0, len(text))]) == [PREAMBLE]
